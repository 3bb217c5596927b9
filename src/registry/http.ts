/**
 * Consul's HTTP plumbing, as the registry answers it:
 * - routes registered with their methods (Go ServeMux semantics: exact
 *   patterns and `/…/` subtrees, the 301 to a subtree's slash, 405 with
 *   `Allow: OPTIONS,…`, OPTIONS answered with the methods);
 * - `parse()`: `dc`, token, consistency, `Cache-Control`, `wait`/`index`,
 *   each bad value a 400 with Consul's words; `ns`/`partition` refused (CE)
 *   or read (the enterprise edition, see api.ts `enterpriseMeta`);
 * - `wrap()`: JSON (Go encoding/json: HTML escaped, `?pretty` indented) or
 *   plain-text errors with no newline; `X-Consul-Default-Acl-Policy` and
 *   `Vary: Accept-Encoding` on every answer; query meta on reads.
 */
import type { Context } from "hono";
import { parseGoDuration } from "../core/durations.js";
import { HeaderNames, REGISTRY_HEADERS } from "../http/headers.js";
import { wantsPretty } from "../http/pretty.js";
import { answerKey, type AnswerCache, type StampedMemo } from "../http/answer-cache.js";
import { markReplayable, requestHeaders, type HeaderReader } from "../http/known-bodies.js";
import { APPLICATION_JSON, bufferedResponse, jsonResponse, textResponse } from "../http/respond.js";
import { encodeJSON } from "../core/json.js";
import { decodedPath, longestMatch, pathAndQuery, requestUrl } from "../http/routing.js";
import { parseBlockingParams } from "../http/blocking-params.js";
import { extractToken } from "../http/tokens.js";
import { HttpError } from "../http/errors.js";

/** An error with its status and body, as Consul's HTTPError. */
export class RegistryError extends HttpError {}

export const badRequest = (message: string) => new RegistryError(400, message);
/** Everything the RPC layer returns without a code is a 500 with the error's text. */
export const serverError = (message: string) => new RegistryError(500, message);

export interface QueryOptions {
  dc: string | undefined;
  token: string | undefined;
  /** Blocking: 0 = answer now. */
  index: number;
  waitMs: number | undefined;
  stale: boolean;
  consistent: boolean;
}

export interface RequestContext {
  readonly c: Context;
  readonly url: URL;
  /** The path remainder after a subtree pattern (percent-decoded, as Go does). */
  readonly rest: string;
  readonly query: URLSearchParams;
  readonly names: HeaderNames;
  readonly token: string | undefined;
  /** `parse()`: only the reads (and renew) call it. */
  parse(): QueryOptions;
  /** Consul CE refuses namespaces and partitions (header or query). */
  refuseEnterpriseMeta(): void;
  /** The namespace and partition the request names (the enterprise edition reads them; see api.ts). */
  enterpriseMeta(): EnterpriseMetaInput;
  /**
   * Runs a GET's query, or takes the result another request with the same
   * key computed at this very state: parked queries woken by one write all
   * re-run at once, and share one result (and so one encoding).
   */
  shared<T>(run: () => T): T;
}

/** What a handler gives back: a value to encode, or a finished Response. */
export type HandlerResult = unknown | Response;
export type Handler = (ctx: RequestContext) => HandlerResult | Promise<HandlerResult>;

interface Route {
  readonly pattern: string;
  /** A `/…/` subtree pattern matches every path below it. */
  readonly subtree: boolean;
  readonly methods: readonly string[];
  readonly handler: Handler;
}

export interface Meta {
  index: number;
  knownLeader: boolean;
  /** `…-LastContact` (0 when absent): milliseconds since the serving server heard from a leader. */
  lastContactMs?: number;
  filteredByACLs?: boolean;
  /** `…-Effective-Consistency` (catalog and health reads): `leader`, `stale` or `consistent`. */
  consistency?: string;
}

/** Query meta to attach to a read's answer: a value to encode, or a finished Response (KV's empty 404, a raw value). */
export class WithMeta {
  constructor(
    readonly value: unknown,
    readonly meta: Meta,
  ) {}

  /** The same meta on another answer. */
  with(value: unknown): WithMeta {
    return new WithMeta(value, this.meta);
  }
}

export class Router {
  private readonly routes: Route[] = [];

  constructor(
    private readonly names: HeaderNames,
    private readonly defaultPolicy: () => string,
    /** Answers a route of Consul's that standin does not emulate (501), before any route matches. */
    private readonly unemulated?: (method: string, path: string) => Response | undefined,
    /** Encoded answers of GET reads, reused while the state and the clock stay put. */
    private readonly answers?: AnswerCache<Meta>,
    /** Results of GET queries, shared the same way (see RequestContext.shared). */
    private readonly results?: StampedMemo<unknown>,
  ) {}

  /** The namespace and partition headers (which the query parsing refuses), under every accepted name. */
  private get enterpriseHeaders(): readonly string[] {
    return (this.enterpriseHeaderNames ??= [...this.names.names("Namespace"), ...this.names.names("Partition")]);
  }

  private enterpriseHeaderNames: readonly string[] | undefined;

  register(pattern: string, methods: readonly string[], handler: Handler): void {
    this.routes.push({ pattern, subtree: pattern.endsWith("/"), methods, handler });
  }

  async dispatch(c: Context): Promise<Response> {
    const url = requestUrl(c.req.url);
    const response = await this.answer(c, url, decodedPath(url));
    response.headers.set("Vary", "Accept-Encoding");
    this.names.set(response.headers, "Default-Acl-Policy", this.defaultPolicy());
    return response;
  }

  private async answer(c: Context, url: URL, path: string): Promise<Response> {
    const unemulated = this.unemulated?.(c.req.method, path);
    if (unemulated) return unemulated;
    const route = this.match(path);
    if (!route) {
      const redirect = this.routes.find((r) => r.subtree && r.pattern === `${path}/`);
      if (redirect) return movedPermanently(`${redirect.pattern}${url.search}`, c.req.method);
      return textResponse(
        404,
        path.startsWith("/v1/")
          ? "Invalid URL path: not a recognized HTTP API endpoint\n"
          : "Invalid URL path: if attempting to use the HTTP API, ensure the path starts with '/v1/'\n",
      );
    }
    const allow = ["OPTIONS", ...route.methods].join(",");
    if (c.req.method === "OPTIONS") return bufferedResponse(null, { status: 200, headers: { Allow: allow } });
    if (!route.methods.includes(c.req.method)) return textResponse(405, `method ${c.req.method} not allowed`, { Allow: allow });

    const cacheKey = this.answers ? this.readKey(c.req.raw) : undefined;
    const ctx = this.context(c, url, route.subtree ? path.slice(route.pattern.length) : "", cacheKey);
    if (cacheKey !== undefined && !url.searchParams.has("index")) {
      const cached = this.answers!.get(cacheKey);
      if (cached) return markReplayable(this.withMeta(this.jsonAnswer(cached.body), cached.meta));
    }
    try {
      return this.encode(c, await route.handler(ctx), cacheKey);
    } catch (error) {
      if (error instanceof RegistryError) return textResponse(error.status, error.message, error.headers);
      if (error instanceof WithMetaError) return this.withMeta(textResponse(error.status, error.message), error.meta);
      throw error;
    }
  }

  private match(path: string): Route | undefined {
    return longestMatch(this.routes, path, (route, p) => (route.subtree ? p.startsWith(route.pattern) : p === route.pattern));
  }

  private context(c: Context, url: URL, rest: string, cacheKey: string | undefined): RequestContext {
    const names = this.names;
    const token = extractToken(c.req.raw, { names, queryParam: "token" });
    return {
      c,
      url,
      rest,
      query: url.searchParams,
      names,
      token,
      parse: () => parseQueryOptions(url.searchParams, requestHeaders(c.req.raw), token),
      refuseEnterpriseMeta: () => refuseEnterpriseMeta(url.searchParams, requestHeaders(c.req.raw), names),
      enterpriseMeta: () => readEnterpriseMeta(url.searchParams, requestHeaders(c.req.raw), names),
      shared: (run) => (cacheKey === undefined || !this.results ? run() : (this.results.get(cacheKey, run) as ReturnType<typeof run>)),
    };
  }

  /**
   * What a GET read's answer depends on besides the state and the time: the
   * path and query as sent, the token, and the headers the query parsing
   * reads. Undefined for other methods.
   */
  readKey(request: Request): string | undefined {
    if (request.method !== "GET") return undefined;
    const headers = requestHeaders(request);
    const enterprise = this.enterpriseHeaders.map((name) => headers.get(name));
    const token = extractToken(request, { names: this.names, queryParam: "token" });
    return answerKey(pathAndQuery(request.url), token, headers.get("Cache-Control"), ...enterprise);
  }

  private encode(c: Context, result: HandlerResult, cacheKey: string | undefined): Response {
    if (result instanceof Response) return result;
    const pretty = wantsPretty(c.req.url, "registry");
    if (result instanceof WithMeta) {
      if (result.value instanceof Response) return this.withMeta(result.value, result.meta);
      if (cacheKey === undefined) return this.withMeta(this.jsonAnswer(encodeJSON(result.value, { escapeHTML: true, pretty })), result.meta);
      // Parked queries woken by one write all ask again at once: the first encodes, the rest reuse it.
      const cached = this.answers!.get(cacheKey);
      if (cached && sameMeta(cached.meta, result.meta)) return markReplayable(this.withMeta(this.jsonAnswer(cached.body), result.meta));
      const body = Buffer.from(encodeJSON(result.value, { escapeHTML: true, pretty }), "utf8");
      this.answers!.set(cacheKey, { body, meta: result.meta });
      return markReplayable(this.withMeta(this.jsonAnswer(body), result.meta));
    }
    return jsonResponse(result, { escapeHTML: true, pretty });
  }

  private jsonAnswer(body: string | Uint8Array): Response {
    return bufferedResponse(body, { status: 200, headers: { "Content-Type": APPLICATION_JSON } });
  }

  /** Consul's setMeta, in its order; the index is never 0. */
  private withMeta(response: Response, meta: Meta): Response {
    const h = response.headers;
    this.names.set(h, "LastContact", String(meta.lastContactMs ?? 0));
    this.names.set(h, "Index", String(Math.max(1, meta.index)));
    this.names.set(h, "KnownLeader", String(meta.knownLeader));
    if (meta.consistency) this.names.set(h, "Effective-Consistency", meta.consistency);
    this.names.set(h, "Query-Backend", "blocking-query");
    if (meta.filteredByACLs) this.names.set(h, "Results-Filtered-By-ACLs", "true");
    return response;
  }
}

function sameMeta(a: Meta, b: Meta): boolean {
  return (
    a.index === b.index &&
    a.knownLeader === b.knownLeader &&
    (a.lastContactMs ?? 0) === (b.lastContactMs ?? 0) &&
    Boolean(a.filteredByACLs) === Boolean(b.filteredByACLs) &&
    a.consistency === b.consistency
  );
}

/** An error that still carries query meta (Consul's deferred setMeta runs before the error is written). */
export class WithMetaError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly meta: Meta,
  ) {
    super(message);
  }
}

/** Go's http.Redirect for GET/HEAD: a small HTML body naming the new place. */
function movedPermanently(location: string, method: string): Response {
  const body = method === "GET" || method === "HEAD" ? `<a href="${location.replace(/"/g, "&#34;")}">Moved Permanently</a>.\n\n` : "";
  return bufferedResponse(body || null, {
    status: 301,
    headers: body ? { Location: location, "Content-Type": "text/html; charset=utf-8" } : { Location: location },
  });
}

/** Consul's `parse()`: consistency, Cache-Control, then wait/index, each failing with its own 400. */
export function parseQueryOptions(query: URLSearchParams, headers: HeaderReader, token: string | undefined): QueryOptions {
  const stale = query.has("stale");
  const consistent = query.has("consistent");
  if (stale && consistent) throw badRequest("Cannot specify ?stale with ?consistent, conflicting semantics.");
  if (query.has("max_stale")) {
    const value = query.get("max_stale")!;
    try {
      parseGoDuration(value);
    } catch {
      throw badRequest(`Invalid max_stale value "${value}"`);
    }
  }
  if (query.has("cached") && consistent) throw badRequest("Cannot specify ?cached with ?consistent, conflicting semantics.");
  const cacheControl = headers.get("Cache-Control");
  if (cacheControl) {
    const maxAge = /(?:^|,)\s*max-age=([^,]*)/i.exec(cacheControl)?.[1];
    if (maxAge !== undefined && !/^\d+$/.test(maxAge.trim())) throw badRequest("Invalid Cache-Control header.");
  }
  const blocking = parseBlockingParams(query);
  if (typeof blocking === "string") throw badRequest(blocking);
  const { index, waitMs } = blocking;
  return { dc: query.get("dc") || undefined, token, index, waitMs, stale, consistent };
}

/** CE's entmeta parsing: namespaces and partitions are Enterprise features (400). */
function refuseEnterpriseMeta(query: URLSearchParams, headers: HeaderReader, names: HeaderNames): void {
  for (const [suffix, what] of [
    ["Namespace", "Namespaces"],
    ["Partition", "Partitions"],
  ] as const) {
    for (const header of names.names(suffix)) {
      if (headers.get(header)) throw badRequest(`Invalid header: "${canonicalHeader(header)}" - ${what} are a Consul Enterprise feature`);
    }
  }
  if (query.get("ns")) throw badRequest('Invalid query parameter: "ns" - Namespaces are a Consul Enterprise feature');
  if (query.get("partition")) throw badRequest('Invalid query parameter: "partition" - Partitions are a Consul Enterprise feature');
}

/** What a request names (empty counts as not given); undefined: not named at all. */
export interface EnterpriseMetaInput {
  namespace: string | undefined;
  partition: string | undefined;
}

/**
 * Consul Enterprise's `parseEntMeta`, as far as the CE source shows its
 * shape (agent/http_ce.go checks the header, then the query): the header
 * `X-Consul-Namespace` (with compat names, the specification's
 * `X-Registry-Namespace` first, as for every header standin reads) and then
 * `?ns=`, so the query wins over the header; the same for `?partition=` and
 * the partition header. An empty value is no value.
 */
function readEnterpriseMeta(query: URLSearchParams, headers: HeaderReader, names: HeaderNames): EnterpriseMetaInput {
  return {
    namespace: query.get("ns") || names.read(headers, "Namespace"),
    partition: query.get("partition") || names.read(headers, "Partition"),
  };
}

function canonicalHeader(name: string): string {
  return name
    .split("-")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1).toLowerCase())
    .join("-");
}

export function registryHeaderNames(compat: boolean): HeaderNames {
  return new HeaderNames(REGISTRY_HEADERS, compat);
}
