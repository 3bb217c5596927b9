/**
 * Forwards a request that asks to switch protocols (`Connection: Upgrade`,
 * as `nomad alloc exec` opens its WebSocket) to its upstream unchanged, and
 * then, once the upstream switches (101), passes the bytes of both
 * directions through as they come until either side closes. An upstream
 * that answers without switching has its answer passed back as it is. The
 * exchange's record gets the request and the answer's head; the bytes of the
 * switched protocol are not recorded (they are no HTTP exchange to compare).
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ExchangeRecord } from "./exchange.js";
import { forwardedRawHeaders } from "./hop-by-hop.js";
import { type Upstream, upstreamRequest } from "./proxy.js";

export function forwardUpgrade(incoming: IncomingMessage, client: Duplex, head: Buffer, upstream: Upstream, path: string, record: ExchangeRecord | undefined): void {
  const base = upstream.url;
  // The upgrade's own connection headers travel on: they are what asks the upstream to switch. A switched connection is never handed back to a pool.
  const request = upstreamRequest(incoming, upstream, path, ["Connection", "Upgrade", "Upgrade", String(incoming.headers.upgrade)], false);
  client.on("error", () => request.destroy());
  client.on("close", () => {
    request.destroy();
    void record?.finish({ cut: true });
  });
  // What follows the head on the client's connection belongs to the protocol switched to (`head`, then the socket), never to this request.
  request.end();

  request.on("error", (error: NodeJS.ErrnoException) => {
    const reason = `${error.code ?? "error"}: ${error.message}`;
    const text = `standin record: cannot reach the upstream ${base.origin}: ${reason}\n`;
    client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
    void record?.finish({ error: `no answer from the upstream (${reason})` });
  });

  request.on("upgrade", (answer: IncomingMessage, server: Duplex, serverHead: Buffer) => {
    record?.answered(answer.statusCode!, answer.headers);
    record?.switchedProtocols();
    client.write(statusHead(answer));
    if (serverHead.length > 0) {
      record?.switchedChunk("toClient", serverHead);
      client.write(serverHead);
    }
    if (head.length > 0) {
      record?.switchedChunk("toUpstream", head);
      server.write(head);
    }
    // Listened to beside the pipes, which pace them: each chunk as it passes.
    server.on("data", (chunk: Buffer) => record?.switchedChunk("toClient", chunk));
    client.on("data", (chunk: Buffer) => record?.switchedChunk("toUpstream", chunk));
    server.pipe(client).pipe(server);
    // Either side gone, the other goes too: the switched connection is one conversation.
    server.on("error", () => client.destroy());
    client.on("close", () => server.destroy());
    server.on("close", () => {
      client.destroy();
      void record?.finish();
    });
  });

  // The upstream did not switch: its answer goes back as it is, and the connection ends with it.
  request.on("response", (answer: IncomingMessage) => {
    record?.answered(answer.statusCode!, answer.headers);
    client.write(statusHead(answer, ["Connection", "close"]));
    answer.on("data", (chunk: Buffer) => record?.responseChunk(chunk));
    answer.pipe(client);
    answer.on("end", () => void record?.finish());
  });
}

/** The answer's status line and headers as they came (`extra` appended), ready for a raw socket. */
function statusHead(answer: IncomingMessage, extra: readonly string[] = []): string {
  const raw = answer.statusCode === 101 ? answer.rawHeaders : [...forwardedRawHeaders(answer.rawHeaders, new Set(["content-length"])), ...lengthOf(answer)];
  const pairs = [...raw, ...extra];
  let text = `HTTP/1.1 ${answer.statusCode} ${answer.statusMessage ?? ""}\r\n`;
  for (let i = 0; i < pairs.length; i += 2) text += `${pairs[i]}: ${pairs[i + 1]}\r\n`;
  return `${text}\r\n`;
}

/** A non-switching answer passed to a raw socket keeps its length if it had one (else the connection's end marks its end). */
function lengthOf(answer: IncomingMessage): string[] {
  const length = answer.headers["content-length"];
  return length === undefined ? [] : ["Content-Length", length];
}
