/**
 * Every control answer (the control API's JSON, the dashboard's pages, JSON
 * and assets) says `X-Content-Type-Options: nosniff`: a browser then never
 * reads one as another type (the JSON echoes what requests sent), and a
 * cross-origin page cannot load one as a script or style (the browsers'
 * cross-origin read blocking keys on it). The service routes answer as the
 * products do, without it.
 */
export function noSniff<T extends Response | Promise<Response>>(answer: T): T {
  if (answer instanceof Promise) return answer.then(noSniff) as T;
  try {
    answer.headers.set("X-Content-Type-Options", "nosniff");
    return answer;
  } catch {
    // A response with immutable headers (none of the control routes make one today): a copy carries it.
    const copy = new Response(answer.body, answer);
    copy.headers.set("X-Content-Type-Options", "nosniff");
    return copy as T;
  }
}
