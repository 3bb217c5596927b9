/**
 * Which upstream a request is for, and its path there. A client that talks
 * to the recorder directly sends the origin form (`GET /v1/jobs`): the
 * upstream of the port it arrived on. A client told to use the recorder as
 * its HTTP proxy (`HTTP_PROXY=http://127.0.0.1:14646`) sends the absolute
 * form (`GET http://127.0.0.1:4646/v1/jobs`), naming the product it meant:
 * that is whichever upstream has that origin, on any of the recorder's
 * ports, so one `HTTP_PROXY` serves a suite that talks to several products.
 * A request for any other origin is refused, never forwarded: the recorder
 * is no open proxy.
 */
import type { RecordedService } from "../recording.js";

export type RequestTarget =
  /** `path`: origin form, under the upstream's own path prefix (which the forward puts back). */
  | { readonly service: RecordedService; readonly path: string }
  /** Not one of the upstreams: `reason` says so in one line. */
  | { readonly refused: string };

/** An absolute-form target: a scheme, `://`, and an authority (RFC 9112 §3.2.2). */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\//i;

export function requestTarget(rawTarget: string, arrivedOn: RecordedService, upstreams: Partial<Record<RecordedService, URL>>): RequestTarget {
  if (!ABSOLUTE_FORM.test(rawTarget)) return { service: arrivedOn, path: rawTarget };
  let url: URL;
  try {
    url = new URL(rawTarget);
  } catch {
    return { refused: `${rawTarget} is not a URL` };
  }
  // The path and query as sent, not as the URL parser would re-encode them: forwarded unchanged.
  const afterScheme = rawTarget.indexOf("//") + 2;
  const pathStart = rawTarget.slice(afterScheme).search(/[/?]/);
  const sent = pathStart < 0 ? "/" : rawTarget.slice(afterScheme + pathStart);
  const pathAndQuery = sent.startsWith("?") ? `/${sent}` : sent;
  // The port's own upstream first: two upstreams could share an origin under different path prefixes.
  const candidates = [arrivedOn, ...(Object.keys(upstreams) as RecordedService[]).filter((service) => service !== arrivedOn)];
  for (const service of candidates) {
    const base = upstreams[service];
    if (!base || base.origin !== url.origin) continue;
    const prefix = base.pathname.replace(/\/$/, "");
    const rest = pathAndQuery.slice(prefix.length);
    if (!pathAndQuery.startsWith(prefix) || (rest !== "" && !rest.startsWith("/") && !rest.startsWith("?"))) continue;
    return { service, path: rest.startsWith("/") ? rest : `/${rest}` };
  }
  const known = Object.values(upstreams).map((base) => base!.href.replace(/\/$/, ""));
  return { refused: `${url.origin} is not an upstream of this recorder (it forwards only to ${known.join(", ")})` };
}
