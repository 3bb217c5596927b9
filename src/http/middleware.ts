/**
 * Middleware every service port shares: body size limit, gzip, the request
 * journal, and keeping a realtime clock's due timers fired before a request
 * reads the state.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress, COMPRESSIBLE_CONTENT_TYPE_REGEX } from "hono/compress";
import type { Clock } from "../core/clock.js";
import type { CappedLog, RecordedRequest } from "../core/journal.js";
import type { Store } from "../core/store.js";
import { noteRequestBody } from "./known-bodies.js";
import { textResponse } from "./respond.js";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Request bodies longer than this are journaled truncated. */
export const JOURNAL_BODY_BYTES = 64 * 1024;

/** 413 for bodies over 16 MiB, in Go's words for an over-long body. */
export function limitBody(maxBytes = MAX_BODY_BYTES): MiddlewareHandler {
  const limit = bodyLimit({ maxSize: maxBytes, onError: () => textResponse(413, "http: request body too large") });
  // A GET or HEAD has no body, and a stated length within the limit passes whether or not a body follows
  // (what bodyLimit decides too). Asking for the body (`request.body`), as bodyLimit does first, would make
  // @hono/node-server build the full web Request it otherwise skips, which costs more than a small request's handling.
  return (c, next) => {
    if (hasNoBody(c.req.method)) return next();
    const length = c.req.header("Content-Length");
    if (length !== undefined && c.req.header("Transfer-Encoding") === undefined && parseInt(length || "0", 10) <= maxBytes) return next();
    return limit(c, next);
  };
}

/** Methods whose requests never carry a body (the Fetch API refuses one). */
function hasNoBody(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/**
 * gzip when the client accepts it and the body reaches `threshold` bytes.
 * Hono's compress applies the threshold only to responses that state their
 * length, so for a non-zero threshold the length is filled in first.
 */
export function gzip(threshold: number): MiddlewareHandler {
  const compressor = compress({ encoding: "gzip", threshold });
  const compressing: MiddlewareHandler =
    threshold <= 0
      ? compressor
      : (c, next) =>
          compressor(c, async () => {
            await next();
            const res = c.res;
            if (!res.body || res.headers.has("Content-Length") || !/\bgzip\b/i.test(c.req.header("Accept-Encoding") ?? "")) return;
            const bytes = await res.arrayBuffer();
            const sized = new Response(bytes, res);
            sized.headers.set("Content-Length", String(bytes.byteLength));
            c.res = sized;
          });
  // Without Accept-Encoding nothing is compressed: only the Vary header is added, as compress would.
  return async (c, next) => {
    if (c.req.header("Accept-Encoding") !== undefined) return compressing(c, next);
    await next();
    varyAcceptEncoding(c, threshold);
  };
}

const VARY_ACCEPT_ENCODING = /(?:^|,)\s*accept-encoding\s*(?:,|$)/i;
const NO_TRANSFORM = /(?:^|,)\s*?no-transform\s*?(?:,|$)/i;

/**
 * What Hono's compress does to a response when the client accepts no
 * encoding: add `Vary: Accept-Encoding` where it would have compressed. It
 * sets the header through `c.header()`, which rebuilds the response around a
 * body stream and so takes @hono/node-server off its fast path for string
 * bodies (one buffered write) onto streaming the body, which cost every JSON
 * answer several times the floor. Setting it on the response's own headers
 * keeps the fast path; same conditions, same header.
 */
function varyAcceptEncoding(c: Context, threshold: number): void {
  const res = c.res;
  const headers = res.headers;
  const contentLength = headers.get("Content-Length");
  if (res.status === 206 || headers.has("Content-Encoding") || headers.has("Transfer-Encoding") || c.req.method === "HEAD") return;
  if (contentLength && Number(contentLength) < threshold) return;
  const type = headers.get("Content-Type");
  if (!type || !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(type)) return;
  const cacheControl = headers.get("Cache-Control");
  if (cacheControl && NO_TRANSFORM.test(cacheControl)) return;
  const current = headers.get("Vary");
  if (current === "*" || (current && VARY_ACCEPT_ENCODING.test(current))) return;
  const value = current ? `${current}, Accept-Encoding` : "Accept-Encoding";
  try {
    headers.set("Vary", value);
  } catch {
    c.header("Vary", value); // immutable headers (a fetched response): let Hono copy it
  }
}

export function journalRequests(service: string, journal: CappedLog<RecordedRequest>, clock: Clock, store: Store): MiddlewareHandler {
  return async (c, next) => {
    const at = clock.now();
    const url = new URL(c.req.url);
    let body: string | null = null;
    // Read as bytes: Hono caches the body, and handlers that want bytes (a gzip body) must get them unaltered.
    // A stated length means a body over HTTP (@hono/node-server gives every such request one); checking it first
    // spares building the full web Request that `raw.body` asks for. In process, `raw.body` says.
    if (!hasNoBody(c.req.method) && (c.req.header("Content-Length") !== undefined || c.req.raw.body)) {
      const bytes = new Uint8Array(await c.req.arrayBuffer());
      noteRequestBody(c.req.raw, bytes);
      body = new TextDecoder().decode(bytes);
    }
    await next();
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((value, name) => (headers[name] = value));
    const truncated = body !== null && body.length > JOURNAL_BODY_BYTES;
    journal.append({
      at,
      service,
      method: c.req.method,
      path: url.pathname,
      query: url.search,
      headers,
      body: truncated ? body!.slice(0, JOURNAL_BODY_BYTES) : body,
      bodyTruncated: truncated,
      status: c.res.status,
      index: store.index,
    });
  };
}
