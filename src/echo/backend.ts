/**
 * The sample backend behind the proxy: the Node/express echo sample
 * (`express.json()`, `res.json`, NODE_ENV=production), answered as express 4
 * answers — compact JSON with a weak ETag and `X-Powered-By: Express`, and
 * finalhandler's HTML page for body-parser's errors.
 */
import * as crypto from "node:crypto";
import { gunzipSync, inflateSync } from "node:zlib";
import { bufferedResponse } from "../http/respond.js";
import { knownRequestBody, noteResponseHeaders, requestHeaderRecord } from "../http/known-bodies.js";
import { sameBytes } from "../core/repeats.js";

/** body-parser's default `limit: "100kb"`. */
export const JSON_BODY_LIMIT = 100 * 1024;

const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 413: "Payload Too Large", 415: "Unsupported Media Type", 500: "Internal Server Error" };

/** `res.json(value)`, including express's freshness check for conditional GETs. */
export function expressJson(value: unknown, request: Request): Response {
  let body: string;
  try {
    body = JSON.stringify(value) ?? "";
  } catch (error) {
    // A value nested deeper than V8's JSON.stringify can go makes res.json throw; express's error handler answers 500.
    if (error instanceof RangeError) return expressErrorPage(500);
    throw error;
  }
  return expressJsonText(body, request);
}

/** `res.json` of a value already written as JSON (`body`, what `JSON.stringify` gave). */
export function expressJsonText(body: string, request: Request): Response {
  const etag = weakEtagOf(body);
  const method = request.method;
  if (
    (method === "GET" || method === "HEAD") &&
    request.headers
      .get("If-None-Match")
      ?.split(/\s*,\s*/)
      .includes(etag)
  ) {
    return bufferedResponse(null, { status: 304, headers: new Headers({ "X-Powered-By": "Express", ETag: etag }) });
  }
  // One final record, lower case in the order a Headers object lists them (what goes on the wire either way):
  // no Headers object is built on the way, and the port's observers read the record.
  const headers = { "content-type": "application/json; charset=utf-8", etag, "x-powered-by": "Express" };
  return noteResponseHeaders(bufferedResponse(body, { status: 200, headers: { ...headers } }), headers);
}

/** The last body's tag: a client sending the same message again and again gets the same answer, hashed once. */
let lastTagged: { body: string; etag: string } | undefined;

function weakEtagOf(body: string): string {
  if (lastTagged?.body === body) return lastTagged.etag;
  const etag = weakEtag(body);
  lastTagged = { body, etag };
  return etag;
}

/** The `etag` package's weak tag: byte length in hex and the first 27 characters of the base64 SHA-1. */
function weakEtag(body: string): string {
  const bytes = Buffer.byteLength(body, "utf8");
  const digest = sha1Base64(body).slice(0, 27);
  return `W/"${bytes.toString(16)}-${digest}"`;
}

/** Node's one-shot `crypto.hash` (20.12+) where there is one: it spares a Hash object per answer. */
const sha1Base64: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) => (crypto as unknown as { hash(algorithm: string, data: string, encoding: string): string }).hash("sha1", text, "base64")
    : (text) => crypto.createHash("sha1").update(text, "utf8").digest("base64");

/** finalhandler's production error page. */
export function expressErrorPage(status: 400 | 413 | 415 | 500): Response {
  const page =
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n' + `<pre>${STATUS_TEXT[status]}</pre>\n</body>\n</html>\n`;
  return bufferedResponse(page, {
    status,
    headers: {
      "X-Powered-By": "Express",
      "Content-Security-Policy": "default-src 'none'",
      "X-Content-Type-Options": "nosniff",
      "Content-Type": "text/html; charset=utf-8",
    },
  });
}

export type ParsedBody = { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly status: 400 | 413 | 415 };

/**
 * `express.json()` (body-parser): only `application/json` bodies are parsed
 * (anything else leaves `{}`); utf-* charsets only (415); identity, gzip or
 * deflate encoding (else 415); at most 100 kB (413); `strict`, so the JSON
 * must start with `{` or `[` (400); a leading BOM is dropped; an empty body is `{}`.
 */
export function parseJsonBody(request: Request, readBody: () => Promise<ArrayBuffer>): ParsedBody | Promise<ParsedBody> {
  const headers = requestHeaderRecord(request);
  const type = headers["content-type"] ?? null;
  if (!hasBody(request) || !isJsonType(type)) return { ok: true, body: {} };
  const charset = type === "application/json" ? "utf-8" : (/;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(type!)?.[1]?.toLowerCase() ?? "utf-8");
  if (!charset.startsWith("utf-")) return { ok: false, status: 415 };
  const encoding = (headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip" && encoding !== "deflate") return { ok: false, status: 415 };
  const declared = Number(headers["content-length"] ?? NaN);
  if (encoding === "identity" && declared > JSON_BODY_LIMIT) return { ok: false, status: 413 };
  // Over HTTP the port has read the body already (http/known-bodies): parsed at once, without a turn.
  const known = knownRequestBody(request);
  if (known !== undefined) return parseKnownBytes(known, encoding, charset);
  return readBody().then((buffer) => parseBytes(new Uint8Array(buffer), encoding, charset));
}

/**
 * The last small body parsed and what it gave: a client sending the same
 * body again (as clients do) gets the same result, decoded and parsed once.
 * Results are read, never changed (their users only read them).
 */
let lastParsed: { body: Uint8Array; encoding: string; charset: string; parsed: ParsedBody } | undefined;
/** Bodies up to this long are compared with the last one's before being parsed. */
const REPEATED_BODY_BYTES = 4 * 1024;

function parseKnownBytes(body: Uint8Array, encoding: string, charset: string): ParsedBody {
  const last = lastParsed;
  if (last !== undefined && last.encoding === encoding && last.charset === charset && sameBytes(last.body, body)) return last.parsed;
  const parsed = parseBytes(body, encoding, charset);
  if (body.length <= REPEATED_BODY_BYTES) lastParsed = { body, encoding, charset, parsed };
  return parsed;
}

function parseBytes(body: Uint8Array, encoding: string, charset: string): ParsedBody {
  let raw = body;
  try {
    if (encoding === "gzip") raw = gunzipSync(raw);
    else if (encoding === "deflate") raw = inflateSync(raw);
  } catch {
    return { ok: false, status: 400 };
  }
  if (raw.length > JSON_BODY_LIMIT) return { ok: false, status: 413 };
  let text: string;
  try {
    text = decoderFor(charset).decode(raw);
  } catch {
    return { ok: false, status: 415 }; // a utf-* label the decoder does not know
  }
  if (text.length === 0) return { ok: true, body: {} };
  const first = firstNonBlank(text);
  if (first !== "{" && first !== "[") return { ok: false, status: 400 };
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch {
    return { ok: false, status: 400 };
  }
}

/** The first character after JSON's insignificant whitespace (body-parser's strict check). */
function firstNonBlank(text: string): string | undefined {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return text[i];
  }
  return undefined;
}

/** One decoder per charset label (decoding a whole body at once keeps no state between calls). */
const decoders = new Map<string, TextDecoder>();

/** Throws for a label the decoder does not know (nothing is kept for it). */
function decoderFor(charset: string): TextDecoder {
  let decoder = decoders.get(charset);
  if (!decoder) {
    decoder = new TextDecoder(charset === "utf-16" ? "utf-16le" : charset, { ignoreBOM: false });
    decoders.set(charset, decoder);
  }
  return decoder;
}

/**
 * Whether the request carries a body. A stated length means one (over HTTP, @hono/node-server gives every such
 * request a body), and checking it first spares the full web Request that asking for `request.body` builds there.
 */
function hasBody(request: Request): boolean {
  if (request.method === "GET" || request.method === "HEAD") return false;
  return requestHeaderRecord(request)["content-length"] !== undefined || request.body !== null;
}

/** type-is' match for `application/json` (media type only, parameters ignored, case-insensitive). */
function isJsonType(type: string | null): boolean {
  if (type === "application/json") return true;
  return type !== null && type.split(";")[0]!.trim().toLowerCase() === "application/json";
}

/** The ESP user-info object (X-Endpoint-API-UserInfo), which the sample returns as it is. */
export function espUserInfo(payload: Record<string, unknown>): Record<string, unknown> {
  // ESP hands grpc a copy of the claims with a list-valued aud blanked.
  const claims = Array.isArray(payload.aud) ? { ...payload, aud: "" } : payload;
  const audiences = typeof payload.aud === "string" ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  const info: Record<string, unknown> = { claims: JSON.stringify(claims) };
  // Keys in ESP's order; empty strings are left out.
  for (const [key, value] of [
    ["issuer", payload.iss],
    ["id", payload.sub],
    ["email", payload.email],
  ] as const) {
    if (typeof value === "string" && value !== "") info[key] = value;
  }
  info.audiences = audiences;
  return info;
}

/** ESPv2 forwards the payload segment as sent; the sample decodes and returns it. */
export function espv2UserInfo(payloadSegment: string): unknown {
  return JSON.parse(Buffer.from(payloadSegment, "base64url").toString("utf8"));
}
