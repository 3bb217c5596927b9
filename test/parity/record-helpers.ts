/**
 * What the recorder's tests share: raw HTTP exchanges (node:http, so a gzip
 * answer arrives as the bytes on the wire, not decoded as fetch would), and
 * the headers two answers must agree on.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One exchange, the whole answer read. */
export function raw(base: string, path: string, init: RawRequest = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const sent = request(new URL(path, base), { method: init.method ?? "GET", headers: init.headers, agent: false }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("end", () => resolve({ status: answer.statusCode!, headers: answer.headers, bytes: Buffer.concat(chunks) }));
      answer.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(init.body);
  });
}

/**
 * A streamed answer: resolves with the status and headers and a reader that
 * waits until the bytes so far satisfy `enough`, and a `cut` that closes the
 * connection as a client that stops reading does.
 */
export function openStream(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: RawAnswer["headers"];
  until(enough: (bytes: Buffer) => boolean): Promise<Buffer>;
  cut(): void;
}> {
  return new Promise((resolve, reject) => {
    const sent = request(new URL(path, base), { headers, agent: false }, (answer) => {
      let received = Buffer.alloc(0);
      const waiting: Array<{ enough: (bytes: Buffer) => boolean; done: (bytes: Buffer) => void }> = [];
      answer.on("data", (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        for (const waiter of waiting.splice(0)) {
          if (waiter.enough(received)) waiter.done(received);
          else waiting.push(waiter);
        }
      });
      answer.on("error", () => {});
      resolve({
        status: answer.statusCode!,
        headers: answer.headers,
        until: (enough) => (enough(received) ? Promise.resolve(received) : new Promise((done) => waiting.push({ enough, done }))),
        cut: () => sent.destroy(),
      });
    });
    sent.on("error", () => {});
    sent.on("error", reject);
    sent.end();
  });
}

/** Headers that say how this one connection went (or when), not what was answered. */
const CONNECTION_HEADERS = new Set(["date", "connection", "keep-alive", "transfer-encoding"]);

/** The answer's headers that must be the same through the recorder as directly. */
export function headersThatMatter(headers: RawAnswer["headers"]): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !CONNECTION_HEADERS.has(name)) kept[name] = String(value);
  return kept;
}

/** What a raw socket read until the other side closed it (an answer written to a connection that then ends); `endAfter`: the socket's own side ends after `text`. */
export function rawExchange(port: number, text: string, { host = "127.0.0.1", endAfter = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host, () => (endAfter ? socket.end(text) : socket.write(text)));
    let received = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("end", () => resolve(received));
    socket.on("error", reject);
  });
}

/** What a test upstream saw of one request. */
export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  rawTrailers: string[];
}

/**
 * A small upstream that answers every request with what it saw of it, as
 * JSON, and keeps what it saw; `answer` may answer instead (then its
 * `seen` is pushed all the same).
 */
export async function echoingUpstream(
  answer?: (seen: SeenRequest, res: ServerResponse) => void,
): Promise<{ url: string; port: number; seen: SeenRequest[]; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      const request: SeenRequest = { method: req.method!, url: req.url!, headers: req.headers, body, rawTrailers: req.rawTrailers };
      seen.push(request);
      if (answer) return answer(request, res);
      const text = JSON.stringify({ method: request.method, url: request.url, body });
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
