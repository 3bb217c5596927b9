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
const requestBodies = new WeakMap<Request, Uint8Array>();

export function noteResponseBody<R extends Response>(response: R, body: KnownBody): R {
  responseBodies.set(response, body);
  return response;
}

/** The body `response` was built with, or undefined when it was not noted (then read it). */
export function knownResponseBody(response: Response): KnownBody | undefined {
  return responseBodies.get(response);
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
