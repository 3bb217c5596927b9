/**
 * Building responses the way the real products write them.
 *
 * Errors from both products are plain text with no trailing newline; Go sniffs
 * the type as `text/plain; charset=utf-8`, so that is what we send. JSON goes
 * through core/json so key order, pretty-printing and escaping match the
 * product that is being stood in for.
 */
import { encodeJSON, type EncodeOptions } from "../core/json.js";
import { noteResponseBody, type KnownBody } from "./known-bodies.js";
import { slicedResponse } from "./large-body.js";

export const TEXT_PLAIN = "text/plain; charset=utf-8";
export const APPLICATION_JSON = "application/json";

export function textResponse(status: number, body: string, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  if (body !== "" && !h.has("Content-Type")) h.set("Content-Type", TEXT_PLAIN);
  return bufferedResponse(body === "" ? null : body, { status, headers: h });
}

export function jsonResponse(value: unknown, options: EncodeOptions & { status?: number; headers?: HeadersInit } = {}): Response {
  const h = new Headers(options.headers);
  h.set("Content-Type", APPLICATION_JSON);
  return bufferedResponse(encodeJSON(value, options), { status: options.status ?? 200, headers: h });
}

/** An empty-bodied response (e.g. the products' 404 for unknown routes). */
export function emptyResponse(status: number, headers?: HeadersInit): Response {
  return bufferedResponse(null, { status, headers });
}

/**
 * A response whose whole body is in hand. Every service answer that is not a
 * stream is built here, so observers can see the body without reading it
 * (see http/known-bodies).
 */
export function bufferedResponse(body: KnownBody, init: ResponseInit): Response {
  // A large body goes out a slice at a time (http/large-body); it stays noted as in hand.
  const sliced = body === null ? undefined : slicedResponse(body, init);
  return noteResponseBody(sliced ?? new Response(body as BodyInit | null, init), body);
}
