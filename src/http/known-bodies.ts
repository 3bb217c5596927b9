/**
 * Bodies already in hand, so observers (the request journal, the tape) need
 * not read them back out of web streams.
 *
 * Reading a response's body, or cloning a request to read its body, makes
 * @hono/node-server build the full web Request/Response and tee streams,
 * which costs more than answering a small request. The helpers that build
 * responses (http/respond) note the body they were given; the journal notes
 * the request body it reads. Anything not noted is read the slow way.
 */

/** A body as it was handed over: text, bytes, or none. */
export type KnownBody = string | Uint8Array | null;

const responseBodies = new WeakMap<Response, KnownBody>();
const responseHeaders = new WeakMap<Response, Readonly<Record<string, string>>>();
const requestBodies = new WeakMap<Request, Uint8Array>();

export function noteResponseBody<R extends Response>(response: R, body: KnownBody): R {
  responseBodies.set(response, body);
  return response;
}

/** The body `response` was built with, or undefined when it was not noted (then read it). */
export function knownResponseBody(response: Response): KnownBody | undefined {
  return responseBodies.get(response);
}

/**
 * The headers a response was built with, as a record of lower-case names,
 * for a response whose headers are final (an answer replayed as sent):
 * reading `response.headers` would turn the record into a Headers object,
 * which @hono/node-server then has to turn back into a record to send.
 */
export function noteResponseHeaders<R extends Response>(response: R, headers: Readonly<Record<string, string>>): R {
  responseHeaders.set(response, headers);
  return response;
}

export function knownResponseHeaders(response: Response): Readonly<Record<string, string>> | undefined {
  return responseHeaders.get(response);
}

export function noteRequestBody(request: Request, bytes: Uint8Array): void {
  requestBodies.set(request, bytes);
}

export function knownRequestBody(request: Request): Uint8Array | undefined {
  return requestBodies.get(request);
}

const replayable = new WeakSet<Response>();

/** Marks a read's answer that depends only on its request's replay key, the state and the clock (see http/answer-replay). */
export function markReplayable<R extends Response>(response: R): R {
  replayable.add(response);
  return response;
}

export function isReplayable(response: Response): boolean {
  return replayable.has(response);
}
