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

export class PortApp extends Hono {
  constructor(
    private readonly controlPrefix: string,
    private readonly control: Hono,
    private readonly service: Hono,
    private readonly beforeEach: () => void,
    /** Told when each request starts and when its response is ready (idle skipping counts running requests). */
    private readonly activity: { started(): void; ended(): void } = { started: () => {}, ended: () => {} },
  ) {
    super();
    // Hono's fetch is an instance property (and request() calls this.fetch), so replace it here.
    this.fetch = (request, ...rest) => {
      this.beforeEach();
      const target = isUnder(pathOf(request.url), this.controlPrefix) ? this.control : this.service;
      this.activity.started();
      let answer: Response | Promise<Response>;
      try {
        answer = target.fetch(request, ...rest);
      } catch (error) {
        this.activity.ended();
        throw error;
      }
      if (answer instanceof Promise) return answer.finally(() => this.activity.ended());
      this.activity.ended();
      return answer;
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
