/**
 * Route catalogs and the run's coverage.
 *
 * Each service has a catalog of its real product's HTTP routes: the ones
 * standin emulates and the ones it does not. A request is matched against
 * the catalog by path template, then by method:
 * - an emulated route goes to the service as always;
 * - a catalogued route standin does not emulate answers 501 naming the route
 *   (each service words it in its product's error style);
 * - anything else goes to the service too, which answers as the product does
 *   for an unknown path (Nomad's empty 404, Consul's texts, ESP's 404).
 *
 * Templates: literal segments, `:name` (one segment), `:name+` (one or more
 * characters, slashes included: Nomad job IDs, variable paths), `:name*` (zero
 * or more, slashes included, last: the remainder a Go ServeMux subtree
 * pattern hands to its handler). When several templates match, the one with
 * the longest literal prefix wins (Go's longest pattern), then the one with
 * the most literal characters (a handler's suffix), then the one with fewer
 * multi-segment parameters.
 *
 * The tracker counts, per service, which emulated routes the run has hit,
 * which unemulated routes were asked for and which unknown paths came in.
 * It describes the run: reset, snapshots and the state hash do not touch it.
 */
import type { ServiceName } from "./service-names.js";

export interface RouteEntry {
  /** The methods the product accepts here (`*`: any). One entry per operation: PUT and POST aliases share one. */
  readonly methods: readonly string[];
  readonly path: string;
  readonly emulated: boolean;
  /** Unemulated routes: said instead of the README pointer. */
  readonly note?: string;
  /** Unemulated routes: the product's own answer, when it has one for this route (Nomad CE's Enterprise stubs). */
  readonly productAnswer?: string;
}

export interface RouteCatalog {
  /** How the 501 names the product: `(Nomad)`. */
  readonly product: string;
  /** Match on the percent-decoded path (Go's URL.Path), as the Go products route. */
  readonly decodePath: boolean;
  readonly routes: readonly RouteEntry[];
}

/** Builds catalog entries: `route("PUT POST", "/v1/jobs")`. */
export const emulated = (methods: string, path: string): RouteEntry => ({ methods: methods.split(" "), path, emulated: true });
export const unemulated = (methods: string, path: string, extra: { note?: string; productAnswer?: string } = {}): RouteEntry => ({
  methods: methods.split(" "),
  path,
  emulated: false,
  ...extra,
});

/** `GET`, `PUT/POST`, `*`. */
export function methodLabel(entry: RouteEntry): string {
  return entry.methods.join("/");
}

export type RouteMatch =
  /** An emulated route: the service answers. */
  | { readonly kind: "emulated"; readonly entry: RouteEntry }
  /** A catalogued route standin does not emulate: 501. */
  | { readonly kind: "unemulated"; readonly entry: RouteEntry }
  /** In no catalog (or an emulated path with a method the product has no operation for): the service answers as the product does. */
  | { readonly kind: "unknown" };

const UNKNOWN: RouteMatch = { kind: "unknown" };
/** Distinct method and path pairs whose match is remembered (forgotten all at once past this). */
const MATCH_MEMO_ENTRIES = 4096;

interface Compiled {
  readonly template: string;
  readonly regex: RegExp;
  /** Characters before the first parameter (Go's ServeMux: the longest pattern wins). */
  readonly prefixChars: number;
  readonly literalChars: number;
  readonly multiParams: number;
  readonly entries: RouteEntry[];
}

/** A catalog compiled for matching: templates grouped, indexed by their first two literal segments. */
export class RouteMatcher {
  private readonly byPrefix = new Map<string, Compiled[]>();
  private readonly loose: Compiled[] = [];

  constructor(readonly catalog: RouteCatalog) {
    const groups = new Map<string, Compiled>();
    for (const entry of catalog.routes) {
      let group = groups.get(entry.path);
      if (!group) {
        group = compile(entry.path);
        groups.set(entry.path, group);
        const key = indexKey(entry.path, true);
        if (key === undefined) this.loose.push(group);
        else this.byPrefix.set(key, [...(this.byPrefix.get(key) ?? []), group]);
      }
      group.entries.push(entry);
    }
  }

  /** The route a request is for. `path` as the product sees it (see `pathOf`). */
  match(method: string, path: string): RouteMatch {
    // Every request is matched (coverage, then the 501 check): the same few paths come again and again.
    const key = `${method} ${path}`;
    let found = this.memo.get(key);
    if (found === undefined) {
      if (this.memo.size >= MATCH_MEMO_ENTRIES) this.memo.clear();
      found = this.matchNow(method, path);
      this.memo.set(key, found);
    }
    return found;
  }

  private readonly memo = new Map<string, RouteMatch>();

  private matchNow(method: string, path: string): RouteMatch {
    let best: Compiled | undefined;
    const consider = (candidates: readonly Compiled[] | undefined) => {
      for (const c of candidates ?? []) if (c.regex.test(path) && (!best || better(c, best))) best = c;
    };
    consider(this.byPrefix.get(indexKey(path, false) ?? ""));
    consider(this.loose);
    if (!best) return UNKNOWN;
    const entry = best.entries.find((e) => e.methods.includes(method) || e.methods.includes("*"));
    if (entry) return entry.emulated ? { kind: "emulated", entry } : { kind: "unemulated", entry };
    // A path standin does not emulate at all is a 501 whatever the method; on an emulated path the service answers (its 405s).
    if (best.entries.every((e) => !e.emulated)) return { kind: "unemulated", entry: best.entries[0]! };
    return UNKNOWN;
  }

  /** The path of a request URL as this catalog's product routes on it. */
  pathOf(url: string): string {
    const path = rawPathOf(url);
    if (!this.catalog.decodePath) return path;
    try {
      return decodeURIComponent(path);
    } catch {
      return path;
    }
  }
}

function better(a: Compiled, b: Compiled): boolean {
  if (a.prefixChars !== b.prefixChars) return a.prefixChars > b.prefixChars;
  if (a.literalChars !== b.literalChars) return a.literalChars > b.literalChars;
  if (a.multiParams !== b.multiParams) return a.multiParams < b.multiParams;
  return a.template < b.template;
}

function compile(template: string): Compiled {
  let literalChars = 0;
  let multiParams = 0;
  const parts = template.split("/").map((segment, i, all) => {
    const param = /^:[A-Za-z_][A-Za-z0-9_-]*([+*]?)$/.exec(segment);
    if (!param) {
      literalChars += segment.length;
      return escapeRegex(segment);
    }
    if (param[1] === "") return "[^/]+";
    multiParams++;
    if (param[1] === "+") return ".+";
    if (i !== all.length - 1) throw new Error(`route template ${template}: a ':name*' parameter must be last`);
    return ".*";
  });
  literalChars += template.split("/").length - 1; // the slashes
  const firstParam = template.indexOf("/:");
  const prefixChars = firstParam < 0 ? template.length : firstParam + 1;
  return { template, regex: new RegExp(`^${parts.join("/")}$`), prefixChars, literalChars, multiParams, entries: [] };
}

/** The first two segments when both are literal (`/v1/job`); templates without that are always considered. */
function indexKey(path: string, template: boolean): string | undefined {
  const segments = path.split("/");
  if (segments.length < 3) return undefined;
  const [, first, second] = segments as [string, string, string];
  if (template && (first.startsWith(":") || second.startsWith(":"))) return undefined;
  return `/${first}/${second}`;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The path of an absolute URL without building a URL object (this runs on every request). */
export function rawPathOf(url: string): string {
  const scheme = url.indexOf("://");
  const start = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  if (start < 0) return "/";
  let end = url.length;
  const query = url.indexOf("?", start);
  if (query >= 0) end = query;
  const hash = url.indexOf("#", start);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(start, end);
}

/** The 501 body: `standin does not emulate GET /v1/acl/roles (Nomad): see docs/known-differences.md`. */
export function unemulatedMessage(catalog: RouteCatalog, method: string, entry: RouteEntry): string {
  return `standin does not emulate ${method} ${entry.path} (${catalog.product}): ${entry.note ?? "see docs/known-differences.md"}`;
}

// ---- the run's coverage ---------------------------------------------------------------------

/** Distinct unknown (method, path) pairs kept per service; later ones are only counted. */
export const UNKNOWN_PATHS_CAP = 200;
/** Unknown paths are kept up to this length. */
const UNKNOWN_PATH_CHARS = 256;

export interface CoverageRoute {
  method: string;
  route: string;
  count: number;
}

export interface ServiceCoverage {
  product: string;
  /** Emulated routes the run has hit (an entry's methods, e.g. `PUT/POST`). */
  hit: CoverageRoute[];
  /** Emulated routes never hit. */
  notHit: Array<{ method: string; route: string }>;
  /** Catalogued routes standin does not emulate that were asked for (with the request's method); each was answered 501. */
  unemulated: CoverageRoute[];
  /** Requests for paths in no catalog (first 200 distinct method and path pairs). */
  unknown: Array<{ method: string; path: string; count: number }>;
  /** Unknown requests past the cap, counted only. */
  unknownDropped: number;
}

export interface CoverageSummary {
  /** Emulated routes in the catalog. */
  emulated: number;
  hit: number;
  percentHit: number;
  requests: number;
  unemulatedRequests: number;
  unknownRequests: number;
}

export type CoverageReport = Record<ServiceName, ServiceCoverage> & { summary: Record<ServiceName | "total", CoverageSummary> };

class ServiceTracker {
  readonly hits = new Map<RouteEntry, number>();
  readonly unemulated = new Map<string, { method: string; route: string; count: number }>();
  readonly unknown = new Map<string, { method: string; path: string; count: number }>();
  unknownDropped = 0;
  requests = 0;
  unemulatedRequests = 0;
  unknownRequests = 0;

  constructor(readonly matcher: RouteMatcher) {}

  /** The last request's method, URL and what they matched: a client sends the same request again and again. */
  private last: { method: string; url: string; path: string; match: RouteMatch } | undefined;

  /** Records one request by its absolute URL. */
  recordUrl(method: string, url: string): void {
    let last = this.last;
    if (last === undefined || last.url !== url || last.method !== method) {
      const path = this.matcher.pathOf(url);
      this.last = last = { method, url, path, match: this.matcher.match(method, path) };
    }
    this.record(method, last.path, last.match);
  }

  record(method: string, path: string, match: RouteMatch): void {
    this.requests++;
    if (match.kind === "emulated") {
      this.hits.set(match.entry, (this.hits.get(match.entry) ?? 0) + 1);
    } else if (match.kind === "unemulated") {
      this.unemulatedRequests++;
      const key = `${method} ${match.entry.path}`;
      const row = this.unemulated.get(key);
      if (row) row.count++;
      else this.unemulated.set(key, { method, route: match.entry.path, count: 1 });
    } else {
      this.unknownRequests++;
      const shown = path.length > UNKNOWN_PATH_CHARS ? `${path.slice(0, UNKNOWN_PATH_CHARS)}…` : path;
      const key = `${method} ${shown}`;
      const row = this.unknown.get(key);
      if (row) row.count++;
      else if (this.unknown.size < UNKNOWN_PATHS_CAP) this.unknown.set(key, { method, path: shown, count: 1 });
      else this.unknownDropped++;
    }
  }

  report(): { coverage: ServiceCoverage; summary: CoverageSummary } {
    const routes = this.matcher.catalog.routes.filter((r) => r.emulated);
    const hit = routes.filter((r) => this.hits.has(r)).map((r) => ({ method: methodLabel(r), route: r.path, count: this.hits.get(r)! }));
    const notHit = routes.filter((r) => !this.hits.has(r)).map((r) => ({ method: methodLabel(r), route: r.path }));
    const coverage: ServiceCoverage = {
      product: this.matcher.catalog.product,
      hit: hit.sort(byRoute),
      notHit: notHit.sort(byRoute),
      unemulated: [...this.unemulated.values()].map((r) => ({ ...r })).sort(byRoute),
      unknown: [...this.unknown.values()].map((r) => ({ ...r })).sort((a, b) => cmp(a.path, b.path) || cmp(a.method, b.method)),
      unknownDropped: this.unknownDropped,
    };
    return {
      coverage,
      summary: {
        emulated: routes.length,
        hit: hit.length,
        percentHit: percent(hit.length, routes.length),
        requests: this.requests,
        unemulatedRequests: this.unemulatedRequests,
        unknownRequests: this.unknownRequests,
      },
    };
  }
}

/**
 * One compiled matcher per catalog for the whole process. Compiling a catalog's
 * few hundred templates was half of what building an emulator cost, and every
 * emulator (each test builds its own) compiled the same static catalogs again.
 * Sharing is safe: a matcher holds no run state, only the compiled templates
 * and a memo of a pure function of (method, path).
 */
const compiledCatalogs = new WeakMap<RouteCatalog, RouteMatcher>();

export function matcherFor(catalog: RouteCatalog): RouteMatcher {
  let matcher = compiledCatalogs.get(catalog);
  if (!matcher) {
    matcher = new RouteMatcher(catalog);
    compiledCatalogs.set(catalog, matcher);
  }
  return matcher;
}

/** Counts every service request of the run against its service's catalog. */
export class CoverageTracker {
  private readonly services: Record<ServiceName, ServiceTracker>;

  constructor(catalogs: Record<ServiceName, RouteCatalog | RouteMatcher>) {
    const tracker = (c: RouteCatalog | RouteMatcher) => new ServiceTracker(c instanceof RouteMatcher ? c : matcherFor(c));
    this.services = { scheduler: tracker(catalogs.scheduler), registry: tracker(catalogs.registry), echo: tracker(catalogs.echo) };
  }

  /** Records one service request (`url` absolute, as Hono has it). */
  record(service: ServiceName, method: string, url: string): void {
    this.services[service].recordUrl(method, url);
  }

  report(): CoverageReport {
    const names: ServiceName[] = ["scheduler", "registry", "echo"];
    const parts = names.map((n) => [n, this.services[n].report()] as const);
    const summaries = parts.map(([, p]) => p.summary);
    const total: CoverageSummary = {
      emulated: sum(summaries, "emulated"),
      hit: sum(summaries, "hit"),
      percentHit: percent(sum(summaries, "hit"), sum(summaries, "emulated")),
      requests: sum(summaries, "requests"),
      unemulatedRequests: sum(summaries, "unemulatedRequests"),
      unknownRequests: sum(summaries, "unknownRequests"),
    };
    const report = Object.fromEntries(parts.map(([n, p]) => [n, p.coverage])) as Record<ServiceName, ServiceCoverage>;
    return { ...report, summary: { ...(Object.fromEntries(parts.map(([n, p]) => [n, p.summary])) as Record<ServiceName, CoverageSummary>), total } };
  }
}

function byRoute(a: { method: string; route: string }, b: { method: string; route: string }): number {
  return cmp(a.route, b.route) || cmp(a.method, b.method);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10;
}

function sum(rows: readonly CoverageSummary[], key: keyof CoverageSummary): number {
  return rows.reduce((total, row) => total + row[key], 0);
}
