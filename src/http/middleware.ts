/**
 * Middleware every service port shares: body size limit, gzip, the request
 * journal, and keeping a realtime clock's due timers fired before a request
 * reads the state.
 */
import type { Context, MiddlewareHandler, Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { compress, COMPRESSIBLE_CONTENT_TYPE_REGEX } from "hono/compress";
import type { Clock } from "../core/clock.js";
import type { RecordedRequest } from "../core/journal.js";
import type { Store } from "../core/store.js";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { parseAccept } from "hono/utils/accept";
import { knownResponseBody, knownResponseHeaders, noteRequestBody, noteResponseHeaders, requestHeader, requestHeaderRecord, requestUrlText } from "./known-bodies.js";
import { bufferedResponse, textResponse } from "./respond.js";
import { pathAndQuery } from "./routing.js";
import type { Redactor } from "./redact.js";
import { LastMade, sameBytes } from "../core/repeats.js";

export const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Request bodies longer than this are journaled truncated. */
export const JOURNAL_BODY_BYTES = 64 * 1024;
/** A rejected request's body (answered 4xx or 5xx) longer than this is kept by the journal and the tape as its hash only. */
export const REJECTED_BODY_BYTES = 4 * 1024;

/**
 * What comes after a step of the service-request work: Hono's `next`, or
 * (on a port whose service answers every request with one function) that
 * function, which settles at once when it answers at once: no promise, and
 * no turn, for what was done in the same turn.
 */
export type Proceed = () => Promise<void> | void;

/** 413 for bodies over 16 MiB, in Go's words for an over-long body. */
function limitBody(maxBytes = MAX_BODY_BYTES): (c: Context, next: Proceed) => Promise<Response | void> | void {
  const limit = bodyLimit({ maxSize: maxBytes, onError: () => textResponse(413, "http: request body too large") });
  // A GET or HEAD has no body, and a stated length within the limit passes whether or not a body follows
  // (what bodyLimit decides too). Asking for the body (`request.body`), as bodyLimit does first, would make
  // @hono/node-server build the full web Request it otherwise skips, which costs more than a small request's handling.
  return (c, next) => {
    if (hasNoBody(c.req.method)) return next();
    const length = requestHeader(c.req.raw, "content-length");
    if (length !== undefined && requestHeader(c.req.raw, "transfer-encoding") === undefined && parseInt(length || "0", 10) <= maxBytes) return next();
    // bodyLimit returns what `next` returns from an async function of its own: a `next` that settled at once is as good.
    return limit(c, next as Next);
  };
}

/** Methods whose requests never carry a body (the Fetch API refuses one). */
function hasNoBody(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/**
 * gzip when the client accepts it and the body reaches `threshold` bytes,
 * under the conditions of Hono's compress middleware (status, type,
 * no-transform, an existing encoding, HEAD, the q-values of Accept-Encoding).
 *
 * Streams go through Hono's compress here. An answer whose whole body is in
 * hand (http/known-bodies: every service answer but a stream) is let through
 * untouched and compressed at the port by `gzipKnownBody` once answered, into
 * a buffered response that states its length, as Go's gzip handlers do for a
 * body written at once. (Replacing `c.res` here would make Hono rebuild the
 * response around a body stream, and the body would no longer be in hand.)
 */
function gzip(threshold: number): (c: Context, next: Proceed, then: () => void) => Promise<void> | void {
  const streaming = compress({ encoding: "gzip", threshold });
  // `then` runs once the answer is final (in the same turn: a chained callback would be a turn more per request).
  return (c, next, then) => {
    // Without Accept-Encoding nothing is compressed: only the Vary header is added, as compress would.
    if (requestHeader(c.req.raw, "accept-encoding") === undefined) {
      const answering = next();
      if (answering instanceof Promise) {
        return answering.then(() => {
          varyAcceptEncoding(c, threshold);
          then();
        });
      }
      varyAcceptEncoding(c, threshold);
      then();
      return;
    }
    return compressing(streaming, c, next).then(then);
  };
}

async function compressing(streaming: MiddlewareHandler, c: Context, next: Proceed): Promise<void> {
  let passing = false;
  await streaming(c, async () => {
    await next();
    // compress leaves alone a response that already has an encoding: mark a body in hand so while it passes.
    if (knownResponseBody(c.res) !== undefined && !c.res.headers.has("Content-Encoding")) {
      c.res.headers.set("Content-Encoding", PASSING);
      passing = true;
    }
  });
  if (passing) c.res.headers.delete("Content-Encoding");
}

const PASSING = "standin-passing";

/**
 * The answer as sent to a client that sent Accept-Encoding: gzipped when the
 * body is in hand and compress would have compressed it (see `gzip`).
 */
export function gzipKnownBody(request: Request, res: Response, threshold: number): Response {
  const accepted = requestHeader(request, "accept-encoding");
  if (accepted === undefined) return res;
  return compressKnown(request.method, res, threshold, accepted);
}

function compressKnown(method: string, res: Response, threshold: number, accepted: string): Response {
  const body = knownResponseBody(res);
  if (body === undefined || body === null) return res;
  // The size first: a small answer is left alone without a look at its headers (asking for them may build a Headers object).
  if (byteLength(body) < threshold) return res;
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const headers = res.headers;
  if (res.status === 206 || headers.has("Content-Encoding") || headers.has("Transfer-Encoding") || method === "HEAD") return res;
  const type = headers.get("Content-Type");
  if (!type || !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(type)) return res;
  const cacheControl = headers.get("Cache-Control");
  if (cacheControl && NO_TRANSFORM.test(cacheControl)) return res;
  const out = new Headers(headers);
  const vary = out.get("Vary");
  if (vary !== "*" && !(vary && VARY_ACCEPT_ENCODING.test(vary))) out.set("Vary", vary ? `${vary}, Accept-Encoding` : "Accept-Encoding");
  if (!acceptsGzip(accepted)) return bufferedResponse(body, { status: res.status, statusText: res.statusText, headers: out });
  out.delete("Content-Length");
  out.set("Content-Encoding", "gzip");
  const etag = out.get("ETag");
  if (etag && !etag.startsWith("W/")) out.set("ETag", `W/${etag}`);
  return bufferedResponse(gzipSync(bytes), { status: res.status, statusText: res.statusText, headers: out });
}

function byteLength(body: string | Uint8Array): number {
  return typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.byteLength;
}

/** Whether Accept-Encoding gives gzip (or `*`) a q-value above zero, as compress decides. */
function acceptsGzip(header: string): boolean {
  const accepts = parseAccept(header);
  const explicit = accepts.find((a) => a.type.toLowerCase() === "gzip");
  const q = explicit ? explicit.q : (accepts.find((a) => a.type === "*")?.q ?? 0);
  return q > 0;
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
  // A final record that already varies on the encoding (the scheduler's reads): nothing to add, and no Headers to build.
  const known = knownResponseHeaders(res);
  if (known && known.vary !== undefined && (known.vary === "Accept-Encoding" || known.vary === "*" || VARY_ACCEPT_ENCODING.test(known.vary))) return;
  // A final record with a body in hand too small to compress: nothing to add either (the record stays final).
  const body = knownResponseBody(res);
  if (known && body !== undefined && (body === null || byteLength(body) < threshold)) return;
  const headers = res.headers;
  // Already varying on it (the registry's answers, the scheduler's reads): nothing to add, whatever the rest says.
  const current = headers.get("Vary");
  if (current === "*" || (current && VARY_ACCEPT_ENCODING.test(current))) return;
  const contentLength = headers.get("Content-Length");
  if (res.status === 206 || headers.has("Content-Encoding") || headers.has("Transfer-Encoding") || c.req.method === "HEAD") return;
  if (contentLength && Number(contentLength) < threshold) return;
  const type = headers.get("Content-Type");
  if (!type || !COMPRESSIBLE_CONTENT_TYPE_REGEX.test(type)) return;
  const cacheControl = headers.get("Cache-Control");
  if (cacheControl && NO_TRANSFORM.test(cacheControl)) return;
  const value = current ? `${current}, Accept-Encoding` : "Accept-Encoding";
  try {
    headers.set("Vary", value);
  } catch {
    c.header("Vary", value); // immutable headers (a fetched response): let Hono copy it
  }
  // A final record read by the observers must say what is sent.
  if (known) noteResponseHeaders(c.res, withHeader(known, "vary", value));
}

/** A lower-case header record with one more header, in the order a Headers object lists them. */
function withHeader(record: Readonly<Record<string, string>>, name: string, value: string): Record<string, string> {
  const entries = Object.entries({ ...record, [name]: value }).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries);
}

const UTF8 = new TextDecoder();

/** URL's `pathname` and `search` of a request's (already normalised) URL, without parsing it again. */
function pathAndSearch(url: string): { path: string; query: string } {
  const whole = pathAndQuery(url);
  const mark = whole.indexOf("?");
  if (mark < 0) return { path: whole, query: "" };
  return { path: whole.slice(0, mark), query: mark === whole.length - 1 ? "" : whole.slice(mark) };
}

/**
 * Over HTTP, @hono/node-server hands the Node request (`c.env.incoming`) beside
 * a web Request that turns it into a web stream only when its body is asked
 * for: a ReadableStream, a transferable, an abort signal and a copy per
 * request, several times the cost of answering a small POST. A body that
 * states its length (and that nothing has read yet) is read here straight
 * from the Node request instead, and Hono's body cache is filled with it, so
 * every `c.req.arrayBuffer()`, `text()` and `json()` after reads the same bytes.
 */
function unreadIncoming(c: Context): IncomingMessage | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming || typeof incoming.on !== "function" || incoming.readableDidRead || incoming.readableEnded) return undefined;
  if (requestHeader(c.req.raw, "transfer-encoding") !== undefined) return undefined;
  return incoming;
}

/** The client closed its connection before its whole body came: nobody to answer, nothing to report. */
export class ClientGoneError extends Error {
  constructor() {
    super("the client closed the connection before sending the whole body");
    this.name = "ClientGoneError";
  }
}

/**
 * Reads the body of `incoming` to its end, then goes on with `then(body)` at
 * once, in the turn the body ends in (a promise of the body would cost a
 * turn to hand it over, and another to adopt what `then` returns); settles as
 * what `then` returns does.
 */
function readIncoming(incoming: IncomingMessage, then: (body: Uint8Array) => Promise<void> | void): Promise<void> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    incoming.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
    });
    // `on`, not `once`: each comes at most once per request, and `once` wraps every listener in a closure of its own.
    incoming.on("end", () => {
      ended = true;
      let answered: Promise<void> | void;
      try {
        answered = then(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      } catch (error) {
        reject(error);
        return;
      }
      if (answered instanceof Promise) answered.then(resolve, reject);
      else resolve();
    });
    // A client gone mid-body: no "end" will come. (Gone after it, its request is answered as any other.)
    const gone = () => {
      if (!ended) reject(new ClientGoneError());
    };
    incoming.on("error", gone);
    incoming.on("close", gone);
  });
}

/**
 * Hono's per-request body cache (HonoRequest.bodyCache), replaced by one that
 * holds the bytes, so no body method reads the web Request: `arrayBuffer`,
 * `text` and `json` are made on first use (most handlers ask for none of
 * them: an ArrayBuffer of its own is an allocation the garbage collector
 * sweeps). Hono looks a key up, and for any other key falls back to the
 * first enumerable one (`for…in`, which lists the prototype's too):
 * `arrayBuffer` is made enumerable below so that it is that key. (One Hono
 * adds itself, parseBody's `formData`, is an own key and comes before it;
 * no service route reads a body through parseBody or a validator.)
 */
class FilledBodyCache {
  readonly #bytes: Uint8Array;
  #buffer: Promise<ArrayBuffer> | undefined;
  #decoded: Promise<string> | undefined;
  #parsed: Promise<unknown> | undefined;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  get arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#buffer) return this.#buffer;
    const bytes = this.#bytes;
    // Its own ArrayBuffer: a small Buffer is a view into a shared pool.
    const buffer = bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    return (this.#buffer = Promise.resolve(buffer as ArrayBuffer));
  }

  get text(): Promise<string> {
    return (this.#decoded ??= Promise.resolve(UTF8.decode(this.#bytes)));
  }

  get json(): Promise<unknown> {
    return (this.#parsed ??= this.text.then((t) => JSON.parse(t) as unknown));
  }
}
Object.defineProperty(FilledBodyCache.prototype, "arrayBuffer", { enumerable: true });

function fillBodyCache(c: Context, bytes: Uint8Array): void {
  (c.req as unknown as { bodyCache: unknown }).bodyCache = new FilledBodyCache(bytes);
}

export interface ServiceRequestOptions {
  service: string;
  /** Where each answered request goes (core/request-journal). */
  journal: { append(entry: RecordedRequest): unknown };
  clock: Clock;
  store: Store;
  redact: Redactor;
  compressThreshold: number;
  /** Told of each request before anything else (the coverage tracker). */
  arrived(method: string, url: string): void;
}

/**
 * Everything a service port does around each service request, in one
 * middleware: note the route (coverage), refuse an over-long body, read the
 * body and journal the request, compress the answer. As four Hono
 * middlewares each was an async frame, a promise and a dispatch of its own
 * on every request, a fair part of a small request's cost; here the
 * limit's and the compression's common cases (a stated length within the
 * limit, no Accept-Encoding) add none.
 */
export function serviceRequests(options: ServiceRequestOptions): MiddlewareHandler {
  const work = serviceRequestWork(options);
  // With Hono's `next`, a promise: the work settles as `next` does.
  return (c, next) => work(c, next) as Promise<Response | void>;
}

/**
 * The work of `serviceRequests` with any `next`: with one that answers at
 * once (see Proceed), a request whose body is in hand is answered and
 * journaled in the same turn, without a promise (what it returns is then
 * undefined, or the body limit's 413).
 */
export function serviceRequestWork(options: ServiceRequestOptions): (c: Context, next: Proceed) => Promise<Response | void> | void {
  const { service, journal, clock, store, redact, compressThreshold } = options;
  const limit = limitBody();
  const zip = gzip(compressThreshold);
  // Promise chains rather than async functions: each async frame is an object and a turn more per request.
  const journaled = (c: Context, next: Proceed): Promise<void> | void => {
    const at = clock.now();
    // Read as bytes: Hono caches the body, and handlers that want bytes (a gzip body) must get them unaltered.
    // A stated length means a body over HTTP (@hono/node-server gives every such request one); checking it first
    // spares building the full web Request that `raw.body` asks for. In process, `raw.body` says.
    if (hasNoBody(c.req.method) || (requestHeader(c.req.raw, "content-length") === undefined && !c.req.raw.body)) return answered(c, next, at, null);
    const incoming = unreadIncoming(c);
    if (incoming) {
      return readIncoming(incoming, (body) => {
        fillBodyCache(c, body);
        noteRequestBody(c.req.raw, body);
        return answered(c, next, at, body);
      });
    }
    return c.req.arrayBuffer().then((buffer) => {
      const body = new Uint8Array(buffer);
      noteRequestBody(c.req.raw, body);
      return answered(c, next, at, body);
    });
  };
  /** The handler's answer (compressed as it applies), then the request's journal entry (`body` as read, null without one). */
  const answered = (c: Context, next: Proceed, at: number, body: Uint8Array | null): Promise<void> | void =>
    zip(c, next, () => {
      journal.append(journalEntry(service, at, c.req.raw, body, c.res.status, store.index, redact));
    });
  return (c, next) => {
    options.arrived(c.req.method, c.req.url);
    return limit(c, () => journaled(c, next));
  };
}

/**
 * What the journal keeps of one answered request (`body` as read, null when
 * it had none). The body is decoded from at most its first
 * JOURNAL_BODY_BYTES bytes, so the entry holds a string of its own, never a
 * slice that would keep the whole body alive; a rejected request's body
 * (4xx, 5xx) over REJECTED_BODY_BYTES is kept as its SHA-256 alone (the small
 * ones, the ones worth reading while debugging a refusal, are kept whole).
 * Credentials in headers and `?token=` are written as references (http/redact).
 */
export function journalEntry(service: string, at: number, request: Request, body: Uint8Array | null, status: number, index: number, redact: Redactor): RecordedRequest {
  const headers = redact.headers(requestHeaderRecord(request));
  const { path, query } = pathsAndSearches.get(requestUrlText(request));
  const method = request.method;
  // One object literal per shape (this runs on every request): no spreads.
  // `seq: 0` first: the journal numbers the entry in place (core/journal).
  if (body === null) return { seq: 0, at, service, method, path, query: redact.query(query), headers, body: null, bodyTruncated: false, status, index };
  if (status >= 400 && body.length > REJECTED_BODY_BYTES) {
    const bodyDigest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    return { seq: 0, at, service, method, path, query: redact.query(query), headers, body: null, bodyTruncated: false, status, index, bodyBytes: body.length, bodyDigest };
  }
  const truncated = body.length > JOURNAL_BODY_BYTES;
  const text = truncated ? UTF8.decode(body.subarray(0, JOURNAL_BODY_BYTES)) : body.length <= REPEATED_BODY_BYTES ? bodyTexts.get(body) : UTF8.decode(body);
  return { seq: 0, at, service, method, path, query: redact.query(query), headers, body: text, bodyTruncated: truncated, status, index, bodyBytes: body.length };
}

// A client sending the same request again gets an entry sharing the last one's strings (core/repeats).
const pathsAndSearches = new LastMade((a: string, b: string) => a === b, pathAndSearch);
/** Bodies up to this long are compared with the last one's before being decoded. */
const REPEATED_BODY_BYTES = 4 * 1024;
const bodyTexts = new LastMade(sameBytes, (body: Uint8Array) => UTF8.decode(body));

/** What a journal entry holds, roughly, in bytes: its strings (a character a byte, as V8 keeps ASCII) and a fixed overhead. */
export function journalEntrySize(entry: RecordedRequest): number {
  return 160 + entry.path.length + entry.query.length + (entry.body?.length ?? 0) + headerSizes.get(entry.headers);
}

/** Entries share their header record with the last one's when it is the same (see requestHeaderRecord): sized once. */
const headerSizes = new LastMade(
  (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) => a === b,
  (headers: Readonly<Record<string, string>>) => {
    let size = 0;
    for (const name in headers) size += name.length + headers[name]!.length + 16;
    return size;
  },
);
