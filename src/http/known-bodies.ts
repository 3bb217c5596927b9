/**
 * Bodies already in hand, so observers (the request journal, the tape) need
 * not read them back out of web streams.
 *
 * Reading a response's body, or cloning a request to read its body, makes
 * @hono/node-server build the full web Request/Response and tee streams,
 * which costs more than answering a small request. The helpers that build
 * responses (http/respond) note the body they were given; the journal notes
 * the request body it reads. Anything not noted is read the slow way.
 *
 * The notes are symbol-keyed properties of the Request and Response objects
 * themselves, not WeakMap entries: every answer carries some, and weak
 * collections cost the garbage collector extra work on every young object.
 */

import { LastMade, sameStrings } from "../core/repeats.js";

/** A body as it was handed over: text, bytes, or none. */
export type KnownBody = string | Uint8Array | null;

const BODY = Symbol("standin.body");
const REQUEST_BODY = Symbol("standin.request-body");
const HEADERS = Symbol("standin.headers");
const REPLAYABLE = Symbol("standin.replayable");
const REPLAYED = Symbol("standin.replayed");
const REQUEST_HEADERS = Symbol("standin.request-headers");

interface Noted {
  [BODY]?: KnownBody;
  [REQUEST_BODY]?: Uint8Array;
  [HEADERS]?: Readonly<Record<string, string>>;
  [REPLAYABLE]?: true;
  [REPLAYED]?: true;
  [REQUEST_HEADERS]?: Readonly<Record<string, string>>;
}

function noted(message: Request | Response): Noted {
  return message as unknown as Noted;
}

export function noteResponseBody<R extends Response>(response: R, body: KnownBody): R {
  noted(response)[BODY] = body;
  return response;
}

/** The body `response` was built with, or undefined when it was not noted (then read it). */
export function knownResponseBody(response: Response): KnownBody | undefined {
  return noted(response)[BODY];
}

/**
 * The headers a response was built with, as a record of lower-case names in
 * the order they are sent, for a response whose headers nothing changes
 * afterwards (a read's answer, an answer replayed as sent): observers read
 * the record instead of `response.headers`, which would turn the record the
 * response holds into a Headers object that @hono/node-server then has to
 * turn back into a record to send.
 */
export function noteResponseHeaders<R extends Response>(response: R, headers: Readonly<Record<string, string>>): R {
  noted(response)[HEADERS] = headers;
  return response;
}

export function knownResponseHeaders(response: Response): Readonly<Record<string, string>> | undefined {
  return noted(response)[HEADERS];
}

export function noteRequestBody(request: Request, bytes: Uint8Array): void {
  noted(request)[REQUEST_BODY] = bytes;
}

export function knownRequestBody(request: Request): Uint8Array | undefined {
  return noted(request)[REQUEST_BODY];
}

/** Marks a read's answer that depends only on its request's replay key, the state and the clock (see http/answer-replay). */
export function markReplayable<R extends Response>(response: R): R {
  noted(response)[REPLAYABLE] = true;
  return response;
}

export function isReplayable(response: Response): boolean {
  return noted(response)[REPLAYABLE] === true;
}

/** Marks an answer replayed at the port (final: not compressed or remembered again). */
export function markReplayed<R extends Response>(response: R): R {
  noted(response)[REPLAYED] = true;
  return response;
}

export function isReplayed(response: Response): boolean {
  return noted(response)[REPLAYED] === true;
}

const URL_TEXT = Symbol("standin.url");

/**
 * A request's URL as the port first read it. An in-process Request (the
 * undici class) serialises its URL again on every read of `url`; the port
 * reads it once on arrival and the journal, long after (a parked query is
 * journaled when it answers), reads this.
 */
export function noteRequestUrl(request: Request, url: string): void {
  (request as unknown as { [URL_TEXT]?: string })[URL_TEXT] = url;
}

/** The URL noted on arrival, else read from the request. */
export function requestUrlText(request: Request): string {
  return (request as unknown as { [URL_TEXT]?: string })[URL_TEXT] ?? request.url;
}

const INCOMING = Symbol("standin.incoming");

/** The Node request a request came in on (over HTTP): its raw headers are read instead of building a web Headers object. */
export function noteIncoming(request: Request, incoming: { rawHeaders: string[] } | undefined): void {
  if (incoming && Array.isArray(incoming.rawHeaders)) (request as unknown as { [INCOMING]?: { rawHeaders: string[] } })[INCOMING] = incoming;
}

const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * A request's headers as a record (lower-case names in the order a Headers
 * object lists them, repeated headers joined with ", ", as Headers joins
 * them), made once per request: the journal, the tape and the hot paths
 * read it. Over HTTP it is made from the Node request's raw headers: asking
 * the web Request for its headers would build a Headers object (validating
 * and sorting every header), a good part of a small request's cost.
 * Requests that came with the same raw headers share one frozen record.
 */
export function requestHeaderRecord(request: Request): Readonly<Record<string, string>> {
  const held = noted(request)[REQUEST_HEADERS];
  if (held) return held;
  const incoming = (request as unknown as { [INCOMING]?: { rawHeaders: string[] } })[INCOMING];
  let record: Record<string, string>;
  if (incoming) record = recordsOfRawHeaders.get(incoming.rawHeaders);
  else {
    record = {};
    request.headers.forEach((value, name) => {
      record[name] = value;
    });
  }
  return (noted(request)[REQUEST_HEADERS] = record);
}

function recordOfRawHeaders(raw: readonly string[]): Record<string, string> {
  let record: Record<string, string> = {};
  let sorted = true;
  let last = "";
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    let value = raw[i + 1]!;
    if (value.length > 0 && (value.charCodeAt(0) <= 32 || value.charCodeAt(value.length - 1) <= 32)) value = value.replace(EDGE_WHITESPACE, "");
    const previous = record[name];
    record[name] = previous === undefined ? value : `${previous}, ${value}`;
    if (previous === undefined) {
      if (name < last) sorted = false;
      last = name;
    }
  }
  if (!sorted) {
    const unsorted = record;
    record = {};
    for (const name of Object.keys(unsorted).sort()) record[name] = unsorted[name]!;
  }
  return Object.freeze(record);
}

// A client sends the same headers request after request: one record serves them all, and the journal and
// the tape, which keep it, hold one record instead of one per request.
const recordsOfRawHeaders = new LastMade(sameStrings, recordOfRawHeaders);

/** One request header by its lower-case name (see requestHeaderRecord). */
export function requestHeader(request: Request, lowerCaseName: string): string | undefined {
  return requestHeaderRecord(request)[lowerCaseName];
}

/** What reading a request's headers needs: `get` by any-case name, null when absent (a Headers object's `get`). */
export interface HeaderReader {
  get(name: string): string | null;
}

const READER = Symbol("standin.header-reader");

/** A request's headers read through its record (see requestHeaderRecord), as a Headers-like reader. */
export function requestHeaders(request: Request): HeaderReader {
  const held = (request as unknown as { [READER]?: HeaderReader })[READER];
  if (held) return held;
  const record = requestHeaderRecord(request);
  const reader: HeaderReader = { get: (name) => record[name.toLowerCase()] ?? null };
  (request as unknown as { [READER]?: HeaderReader })[READER] = reader;
  return reader;
}
