/**
 * Middleware every service port shares: body size limit, gzip, the request
 * journal, and keeping a realtime clock's due timers fired before a request
 * reads the state.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress } from "hono/compress";
import type { Clock } from "../core/clock.js";
import type { CappedLog, RecordedRequest } from "../core/journal.js";
import type { Store } from "../core/store.js";
import { textResponse } from "./respond.js";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Request bodies longer than this are journaled truncated. */
export const JOURNAL_BODY_BYTES = 64 * 1024;

/** 413 for bodies over 16 MiB, in Go's words for an over-long body. */
export function limitBody(maxBytes = MAX_BODY_BYTES): MiddlewareHandler {
  return bodyLimit({ maxSize: maxBytes, onError: () => textResponse(413, "http: request body too large") });
}

/**
 * gzip when the client accepts it and the body reaches `threshold` bytes.
 * Hono's compress applies the threshold only to responses that state their
 * length, so for a non-zero threshold the length is filled in first.
 */
export function gzip(threshold: number): MiddlewareHandler {
  const compressor = compress({ encoding: "gzip", threshold });
  if (threshold <= 0) return compressor;
  return (c, next) =>
    compressor(c, async () => {
      await next();
      const res = c.res;
      if (!res.body || res.headers.has("Content-Length") || !/\bgzip\b/i.test(c.req.header("Accept-Encoding") ?? "")) return;
      const bytes = await res.arrayBuffer();
      const sized = new Response(bytes, res);
      sized.headers.set("Content-Length", String(bytes.byteLength));
      c.res = sized;
    });
}

export function journalRequests(service: string, journal: CappedLog<RecordedRequest>, clock: Clock, store: Store): MiddlewareHandler {
  return async (c, next) => {
    const at = clock.now();
    const url = new URL(c.req.url);
    let body: string | null = null;
    // Read as bytes: Hono caches the body, and handlers that want bytes (a gzip body) must get them unaltered.
    if (c.req.raw.body) body = new TextDecoder().decode(await c.req.arrayBuffer());
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
