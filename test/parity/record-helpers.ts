/**
 * What the recorder's tests share: raw HTTP exchanges (node:http, so a gzip
 * answer arrives as the bytes on the wire, not decoded as fetch would), and
 * the headers two answers must agree on.
 */
import { request } from "node:http";

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
