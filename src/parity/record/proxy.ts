/**
 * Forwards one request to its upstream unchanged and streams the answer
 * back chunk by chunk as it arrives, telling the exchange's record (when it
 * is recorded) what passed. Nothing is buffered for the client: a blocking
 * query waits as long as the upstream waits, an event stream flows until
 * the client stops reading, and a large body passes with the pace of the
 * slower side (backpressure both ways).
 */
import { type Agent, type ClientRequest, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { ExchangeRecord } from "./exchange.js";
import { forwardedRawHeaders } from "./hop-by-hop.js";

/** What an https upstream's certificate is checked against (`--upstream-ca`, `--upstream-tls-skip-verify`); none: the system's CAs. */
export interface UpstreamTrust {
  /** The system's CAs and the PEM bundle given (node replaces its roots with `ca`, so both are listed). */
  readonly ca?: string[];
  /** False: any certificate is accepted (Nomad's `-tls-skip-verify`). */
  readonly rejectUnauthorized: boolean;
}

export interface Upstream {
  readonly url: URL;
  readonly agent: Agent;
  readonly trust?: UpstreamTrust;
}

/** Not forwarded besides hop-by-hop ones: the upstream's own Host is sent, and this server has answered any `Expect: 100-continue` itself. */
const NOT_FORWARDED = new Set(["host", "expect"]);

/**
 * The request to the upstream that `incoming` becomes: the same method, `path` (origin form, put
 * under the upstream's own path prefix) and headers but the connection's own, with the upstream's
 * Host and `extraHeaders`; through `agent` (false: a connection of its own, never pooled).
 */
export function upstreamRequest(
  incoming: IncomingMessage,
  upstream: Upstream,
  path: string,
  extraHeaders: readonly string[] = [],
  agent: Agent | false = upstream.agent,
): ClientRequest {
  const base = upstream.url;
  return (base.protocol === "https:" ? httpsRequest : httpRequest)({
    protocol: base.protocol,
    hostname: base.hostname.replace(/^\[|\]$/g, ""),
    port: base.port,
    method: incoming.method,
    // An upstream mounted under a path prefix (https://host/consul) keeps it.
    path: base.pathname.replace(/\/$/, "") + path,
    headers: [...forwardedRawHeaders(incoming.rawHeaders, NOT_FORWARDED), "Host", base.host, ...extraHeaders],
    agent,
    // Also on the request, not only on the pooled agent: a protocol switch has a connection of its own.
    ...(base.protocol === "https:" && upstream.trust && { ca: upstream.trust.ca, rejectUnauthorized: upstream.trust.rejectUnauthorized }),
  });
}

function isChunked(headers: IncomingHttpHeaders | OutgoingHttpHeaders): boolean {
  return /(?:^|,)\s*chunked\s*$/i.test(String(headers["transfer-encoding"] ?? ""));
}

/**
 * The framing headers a message keeps when it passes chunked, so that its trailers can pass too:
 * `Transfer-Encoding: chunked` (node would otherwise pick the framing itself, and a `Trailer`
 * header on a message it does not chunk is an error) and the `Trailer` header that announces them.
 * Node drops both as hop-by-hop; `Trailer` is end-to-end (RFC 9110 §6.6.2).
 */
function chunkedFraming(rawHeaders: readonly string[]): string[] {
  const kept = ["Transfer-Encoding", "chunked"];
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === "trailer") kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  return kept;
}

/** `rawTrailers` (`[name, value, name, value, …]`) as the `[name, value]` pairs `addTrailers` takes, order and case kept. */
function trailerPairs(rawTrailers: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < rawTrailers.length; i += 2) pairs.push([rawTrailers[i]!, rawTrailers[i + 1]!]);
  return pairs;
}

/** What forwarding a request adds to its headers: its chunked framing and trailers' announcement, and a client's `TE: trailers` (this proxy passes trailers on). */
function requestFraming(incoming: IncomingMessage): string[] {
  const extra = isChunked(incoming.headers) ? chunkedFraming(incoming.rawHeaders) : [];
  if (/(?:^|,)\s*trailers\s*(?:;|,|$)/i.test(String(incoming.headers.te ?? ""))) extra.push("TE", "trailers");
  return extra;
}

export function forward(incoming: IncomingMessage, outgoing: ServerResponse, upstream: Upstream, path: string, record: ExchangeRecord | undefined): void {
  const base = upstream.url;
  const request = upstreamRequest(incoming, upstream, path, requestFraming(incoming));

  incoming.on("data", (chunk: Buffer) => record?.requestBody.add(chunk));
  incoming.on("error", () => request.destroy());
  // Ended here rather than by the pipe: the request's trailers (after its last chunk) go on with it.
  incoming.pipe(request, { end: false });
  incoming.on("end", () => {
    if (incoming.rawTrailers.length > 0) {
      record?.requestTrailers(incoming.rawTrailers);
      request.addTrailers(trailerPairs(incoming.rawTrailers));
    }
    request.end();
  });
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
    // Chunked to a client that reads chunks (HTTP/1.1) stays chunked, so trailers have a way through.
    const framing = isChunked(answer.headers) && incoming.httpVersion === "1.1" ? chunkedFraming(answer.rawHeaders) : [];
    outgoing.writeHead(answer.statusCode!, answer.statusMessage, [...forwardedRawHeaders(answer.rawHeaders), ...framing]);
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
      if (answer.rawTrailers.length > 0) {
        record?.responseTrailers(answer.rawTrailers);
        if (framing.length > 0) outgoing.addTrailers(trailerPairs(answer.rawTrailers));
      }
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
