/**
 * The DNS-rebinding guard of the control API and the dashboard: a page in a
 * developer's browser can point a name it owns at 127.0.0.1 and then talk to
 * `/_standin` as a "same-origin" site, but its requests still carry its own
 * name in `Host`. So control requests are answered only when `Host` names
 * this machine's loopback (`localhost`, `*.localhost`), an IP address, the
 * address standin listens on, or a name the user allowed (`--allowed-host`).
 *
 * IP addresses pass whatever they are, as in Vite's and webpack-dev-server's
 * host checks: rebinding needs a DNS name, and a page whose origin is an IP
 * address is served by that address itself. The products' own routes
 * (`/v1/…`) are not guarded: their clients reach them by service names.
 */
import { isIP } from "node:net";
import { LastMade } from "../core/repeats.js";
import { requestHeader } from "./known-bodies.js";
import { noSniff } from "./no-sniff.js";

export class HostGuard {
  private readonly allowed: ReadonlySet<string>;
  /**
   * The verdict on the last `Host` judged: a client polling the control API
   * sends the same one every time, and judging it (parsing, lower-casing,
   * an address check) costs a fair part of answering `GET /_standin/clock`.
   */
  private readonly verdicts = new LastMade(
    (a: string, b: string) => a === b,
    (host: string) => this.judge(host),
  );
  /** How many `Host` values have been judged (not read from the last verdict); tests count it. */
  judged = 0;

  /** `names`: the listen address and the `--allowed-host` names (case and a trailing dot do not matter). */
  constructor(names: readonly string[] = []) {
    this.allowed = new Set(names.map(normalName));
  }

  /**
   * Why `request` may not reach the control API, or undefined when it may.
   * In process there is no `Host` header: the URL's host (`localhost` for
   * `app.request("/_standin/…")`) stands for it.
   */
  refusal(request: Request): string | undefined {
    // Read from the request's header record (http/known-bodies): over HTTP, the web Request's headers would be built for it.
    return this.verdicts.get(requestHeader(request, "host") ?? authority(request.url));
  }

  private judge(host: string): string | undefined {
    this.judged++;
    const name = hostName(host);
    if (name !== undefined && (isLoopbackName(name) || isIP(name) !== 0 || this.allowed.has(name))) return undefined;
    return `the control API and the dashboard answer only requests whose Host names this machine (localhost, an IP address, the address standin listens on) or a name given with --allowed-host; Host ${JSON.stringify(host)} is none of these (a guard against DNS rebinding)`;
  }
}

/** The control API's 403 for a request the guard refuses, or undefined when it may pass. */
export function refusedHost(guard: HostGuard, request: Request): Response | undefined {
  const refusal = guard.refusal(request);
  if (refusal === undefined) return undefined;
  return noSniff(new Response(JSON.stringify({ error: refusal }), { status: 403, headers: { "Content-Type": "application/json" } }));
}

function isLoopbackName(name: string): boolean {
  return name === "localhost" || name.endsWith(".localhost");
}

/** `example.com:4646` → `example.com`, `[::1]:4646` → `::1`; undefined when it is no host at all. */
function hostName(host: string): string | undefined {
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end < 0) return undefined;
    const rest = host.slice(end + 1);
    if (rest !== "" && !/^:\d*$/.test(rest)) return undefined;
    return host.slice(1, end).toLowerCase();
  }
  const colon = host.indexOf(":");
  const name = colon < 0 ? host : host.slice(0, colon);
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return undefined;
  return name === "" ? undefined : normalName(name);
}

function normalName(name: string): string {
  const bare = name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
  return bare.toLowerCase().replace(/\.$/, "");
}

/** The `host[:port]` of an absolute URL, without building a URL object. */
function authority(url: string): string {
  const start = url.indexOf("://");
  if (start < 0) return "";
  const rest = url.slice(start + 3);
  const end = rest.search(/[/?#]/);
  return end < 0 ? rest : rest.slice(0, end);
}
