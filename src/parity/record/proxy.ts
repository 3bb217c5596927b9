/**
 * Forwards one request to its upstream unchanged and streams the answer
 * back chunk by chunk as it arrives, telling the exchange's record (when it
 * is recorded) what passed. Nothing is buffered for the client: a blocking
 * query waits as long as the upstream waits, an event stream flows until
 * the client stops reading, and a large body passes with the pace of the
 * slower side (backpressure both ways).
 */
import { type Agent, type ClientRequest, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { ExchangeRecord } from "./exchange.js";
import { forwardedRawHeaders } from "./hop-by-hop.js";

export interface Upstream {
  readonly url: URL;
  readonly agent: Agent;
}

/** Not forwarded besides hop-by-hop ones: the upstream's own Host is sent, and this server has answered any `Expect: 100-continue` itself. */
const NOT_FORWARDED = new Set(["host", "expect"]);

/**
 * The request to the upstream that `incoming` becomes: the same method, path (under the
 * upstream's own path prefix) and headers but the connection's own, with the upstream's Host and
 * `extraHeaders`; through `agent` (false: a connection of its own, never pooled).
 */
export function upstreamRequest(incoming: IncomingMessage, upstream: Upstream, extraHeaders: readonly string[] = [], agent: Agent | false = upstream.agent): ClientRequest {
  const base = upstream.url;
  return (base.protocol === "https:" ? httpsRequest : httpRequest)({
    protocol: base.protocol,
    hostname: base.hostname.replace(/^\[|\]$/g, ""),
    port: base.port,
    method: incoming.method,
    // An upstream mounted under a path prefix (https://host/consul) keeps it.
    path: base.pathname.replace(/\/$/, "") + incoming.url,
    headers: [...forwardedRawHeaders(incoming.rawHeaders, NOT_FORWARDED), "Host", base.host, ...extraHeaders],
    agent,
  });
}

export function forward(incoming: IncomingMessage, outgoing: ServerResponse, upstream: Upstream, record: ExchangeRecord | undefined): void {
  const base = upstream.url;
  const request = upstreamRequest(incoming, upstream);

  incoming.on("data", (chunk: Buffer) => record?.requestBody.add(chunk));
  incoming.on("error", () => request.destroy());
  incoming.pipe(request);
  // The client went away: so does the request upstream (a parked blocking query, a stream).
  outgoing.on("close", () => {
    if (outgoing.writableFinished) return;
    request.destroy();
    void record?.finish({ cut: true });
  });

  request.on("error", (error: NodeJS.ErrnoException) => {
    const reason = `${error.code ?? "error"}: ${error.message}`;
    if (!outgoing.headersSent) {
      const text = `standin record: cannot reach the upstream ${base.origin}: ${reason}\n`;
      outgoing.writeHead(502, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text) }).end(text);
      void record?.finish({ error: `no answer from the upstream (${reason})` });
    } else {
      // Mid-answer: the client must see the answer cut, as it would have without the recorder.
      outgoing.destroy();
      void record?.finish({ error: `the upstream cut the answer (${reason})` });
    }
  });

  request.on("response", (answer: IncomingMessage) => {
    record?.answered(answer.statusCode!, answer.headers);
    outgoing.writeHead(answer.statusCode!, answer.statusMessage, forwardedRawHeaders(answer.rawHeaders));
    // The head at once: a client of a stream or a parked query may wait for it before the first byte of body.
    outgoing.flushHeaders();
    answer.on("data", (chunk: Buffer) => {
      record?.responseChunk(chunk);
      if (!outgoing.write(chunk)) {
        answer.pause();
        outgoing.once("drain", () => answer.resume());
      }
    });
    answer.on("end", () => {
      outgoing.end();
      void record?.finish();
    });
    // Cut before its end, by the upstream or because the client's going away destroyed the request.
    const cut = () => {
      outgoing.destroy();
      void record?.finish({ error: "the upstream cut the answer" });
    };
    answer.on("error", cut);
    answer.on("close", () => {
      if (!answer.complete) cut();
    });
  });
}
