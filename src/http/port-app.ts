/**
 * The app behind one service port: control requests (`/_standin…`) go to the
 * control app, everything else to the service's app, chosen by path before
 * Hono routes. Splitting here (instead of mounting both in one app) keeps
 * each request's handler chain to what applies to it, so a control route is
 * a single handler and takes Hono's synchronous fast path.
 *
 * It is still a Hono app: `request()` and `fetch()` work as on any other.
 */
import { Hono } from "hono";
import { capBody, DEFAULT_CONTROL_BODY_LIMIT } from "./body-cap.js";
import { HostGuard, refusedHost } from "./host-check.js";
import { noSniff } from "./no-sniff.js";
import { noteIncoming, noteRequestUrl } from "./known-bodies.js";

export class PortApp extends Hono {
  constructor(
    private readonly controlPrefix: string,
    private readonly control: Hono,
    private readonly service: Hono,
    private readonly beforeEach: () => void,
    /**
     * Told when each request starts; what it returns is called with the
     * answer once the response is ready (undefined when the handler threw),
     * and may hand back a replacement to send instead (the tape reads the
     * body once and passes on a buffered copy).
     * Idle skipping counts running requests; the tape records them.
     */
    private readonly observe: (request: Request, control: boolean) => (response: Response | undefined) => Response | Promise<Response> | void = () => () => {},
    /** A service request's remembered answer (http/answer-replay), tried before routing; undefined to route it. */
    private readonly replay: (request: Request) => Response | undefined = () => undefined,
    /** Control bodies past this many bytes are refused with 413 (service routes have their own limit). */
    private readonly controlBodyLimit = DEFAULT_CONTROL_BODY_LIMIT,
    /** Which `Host` names may reach the control API (DNS-rebinding guard). */
    private readonly hostGuard = new HostGuard(),
    /**
     * What a request must wait for before anything of it runs (a document being applied in slices
     * holds back what may write); undefined to run it now. Waiting comes first, so the clock's
     * catch-up, the tape and the journal see the request when it runs, in the order requests arrived.
     */
    private readonly heldBack: (request: Request) => Promise<void> | undefined = () => undefined,
  ) {
    super();
    // Hono's fetch is an instance property (and request() calls this.fetch), so replace it here.
    this.fetch = (request, ...rest) => {
      const waitFor = this.heldBack(request);
      if (waitFor) return waitFor.then(() => this.fetch(request, ...rest));
      // Over HTTP, @hono/node-server passes the Node request: headers are read from it (http/known-bodies).
      noteIncoming(request, (rest[0] as { incoming?: { rawHeaders: string[] } } | undefined)?.incoming);
      this.beforeEach();
      const url = request.url;
      noteRequestUrl(request, url);
      const control = isUnder(pathOf(url), this.controlPrefix);
      if (control) {
        // Refused before it is read (it changes nothing, so nothing observes it).
        const refused = refusedHost(this.hostGuard, request);
        if (refused) return refused;
        const capped = capBody(request, this.controlBodyLimit);
        if (capped instanceof Response) return noSniff(capped);
        request = capped;
      }
      const done = this.observe(request, control);
      let answer: Response | Promise<Response>;
      try {
        answer = control ? noSniff(this.control.fetch(request, ...rest)) : (this.replay(request) ?? this.service.fetch(request, ...rest));
      } catch (error) {
        done(undefined);
        throw error;
      }
      if (answer instanceof Promise) {
        return answer.then(
          (response) => done(response) ?? response,
          (error: unknown) => {
            done(undefined);
            throw error;
          },
        );
      }
      return done(answer) ?? answer;
    };
  }
}

/** The path of an absolute URL without building a URL object (this runs on every request). */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

function isUnder(path: string, prefix: string): boolean {
  return path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === "/");
}
