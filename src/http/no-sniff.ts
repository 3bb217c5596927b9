/**
 * Every control answer (the control API's JSON, the dashboard's pages, JSON
 * and assets) says `X-Content-Type-Options: nosniff`: a browser then never
 * reads one as another type (the JSON echoes what requests sent), and a
 * cross-origin page cannot load one as a script or style (the browsers'
 * cross-origin read blocking keys on it). The service routes answer as the
 * products do, without it.
 */
import { knownResponseHeaders, noteResponseHeaders } from "./known-bodies.js";
import { bufferedResponse } from "./respond.js";

const NO_SNIFF = "nosniff";

export function noSniff<T extends Response | Promise<Response>>(answer: T): T {
  if (answer instanceof Promise) return answer.then(noSniff) as T;
  // Built saying it already (controlJson): its headers stay the record they were built with.
  if (knownResponseHeaders(answer)?.["x-content-type-options"] === NO_SNIFF) return answer;
  try {
    answer.headers.set("X-Content-Type-Options", NO_SNIFF);
    return answer;
  } catch {
    // A response with immutable headers (none of the control routes make one today): a copy carries it.
    const copy = new Response(answer.body, answer);
    copy.headers.set("X-Content-Type-Options", NO_SNIFF);
    return copy as T;
  }
}

/** The headers of a control route's JSON answer, as a Headers object would list them (lower case, in order). */
const CONTROL_JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "content-type": "application/json", "x-content-type-options": NO_SNIFF });

/**
 * A control route's JSON answer (what Hono's `c.json` sends), built saying
 * nosniff, for the routes clients poll (`GET /_standin/clock`). Setting the
 * header afterwards, as `noSniff` must for any other answer, turns the
 * response's header record into a Headers object, which the server then
 * turns back into a record to send: on a small answer that costs as much as
 * the route's own work. Same bytes on the wire either way.
 */
export function controlJson(value: unknown, status = 200): Response {
  return noteResponseHeaders(bufferedResponse(JSON.stringify(value), { status, headers: CONTROL_JSON_HEADERS }), CONTROL_JSON_HEADERS);
}
