/**
 * Nomad's HTTP plumbing, as the scheduler answers it (command/agent/http.go):
 * - routes registered by prefix (`/v1/job/` takes the rest of the path),
 *   unknown paths an empty 404, `/` a 307 to `/ui/`, a method a handler does
 *   not take 405 `Invalid method`;
 * - JSON with struct fields sorted byte-wise, `<>&` left as they are,
 *   `?pretty` (unless `pretty=0`) indented with a trailing newline;
 * - errors as plain text, no newline; reads carry `X-…-Index`,
 *   `-KnownLeader`, `-LastContact` even on their 404s; writes carry the index.
 */
import type { Context } from "hono";
import { HeaderNames, SCHEDULER_HEADERS } from "../../http/headers.js";
import { wantsPretty } from "../../http/pretty.js";
import { answerKey, type AnswerCache, type StampedMemo } from "../../http/answer-cache.js";
import { markReplayable, noteResponseHeaders } from "../../http/known-bodies.js";
import { APPLICATION_JSON, bufferedResponse, emptyResponse, jsonResponse, textResponse } from "../../http/respond.js";
import { decodedPath, longestMatch, pathAndQuery, requestUrl } from "../../http/routing.js";
import { parseBlockingParams } from "../../http/blocking-params.js";
import { encodeJSON, exceedsValueCount, excessiveNesting, parseBodyOnce, TOO_MANY_VALUES } from "../../core/json.js";
import { extractToken } from "../../http/tokens.js";
import { ALLOW_ALL, type Authorizer } from "./authorizer.js";
import { NO_CLUSTER_LEADER, type LeaderView } from "../../http/leader.js";
import { HttpError } from "../../http/errors.js";
import { jsonKind, maxDepthError, syntaxError, unmarshalTypeError } from "../../core/go/json-errors.js";
import { LastMade } from "../../core/repeats.js";

const LEADER_KNOWN: LeaderView = { known: true, lastContactMs: 0 };

/** Endpoints the agent answers itself, leader or not (they set no index headers either). */
const AGENT_LOCAL = /^\/v1\/(?:agent\/|status\/|regions$)/;

/** An error with the status and plain-text body Nomad's HTTP layer answers it with. */
export class NomadError extends HttpError {}

export const notFound = (message: string) => new NomadError(404, message);
export const badRequest = (message: string) => new NomadError(400, message);
/** Errors from the server side (RPC) carry no code: 500 with the text. */
export const serverError = (message: string) => new NomadError(500, message);
export const invalidMethod = () => new NomadError(405, "Invalid method");

export interface QueryOptions {
  region: string;
  /** `default` when absent; `*` means every namespace on the list endpoints that take it. */
  namespace: string;
  /** Blocking: 0 = answer now. */
  index: number;
  waitMs: number | undefined;
  stale: boolean;
  prefix: string;
}

export interface RequestContext {
  readonly c: Context;
  readonly url: URL;
  readonly method: string;
  /** The path after the route's prefix (Nomad uses the remainder, slashes included). */
  readonly rest: string;
  readonly query: URLSearchParams;
  readonly token: string | undefined;
  readonly options: QueryOptions;
  /** What the request's token may do (everything when ACLs are off). */
  readonly acl: Authorizer;
  /** Whether the cluster knows its leader (see http/leader). */
  readonly leader: LeaderView;
  /**
   * Runs a GET's query, or takes the result another request with the same
   * key computed at this very state: parked queries woken by one write all
   * re-run at once, and share one result (and so one encoding).
   */
  readonly shared: <T>(run: () => T) => T;
}

/** ACL enforcement the router applies before a route's handler. */
export interface RouteAccess {
  resolve(secret: string | undefined, pattern: string): Authorizer;
  guard(rc: RequestContext, pattern: string, acl: Authorizer): void | Promise<void>;
}

/** A read's answer with its index (sets Index, KnownLeader, LastContact, and NextToken when another page exists). */
export class Read {
  constructor(
    readonly value: unknown,
    readonly index: number,
    readonly nextToken = "",
  ) {}
}

/** A write's answer with its index (sets Index only). `value` undefined = 200 with an empty body. */
export class Write {
  constructor(
    readonly value: unknown,
    readonly index: number,
  ) {}
}

/** A 404 (or other error) raised after the read's meta was set, so it still carries the headers. */
export class ReadError extends NomadError {
  constructor(
    status: number,
    message: string,
    readonly index: number,
  ) {
    super(status, message);
  }
}

/** A header record as a Headers object would list it: lower-case names in byte order. */
function lowerCaseSorted(headers: Record<string, string>): Record<string, string> {
  const keys = Object.keys(headers);
  // A read's answer has one of a few key sets: each one's order is worked out once.
  const signature = keys.join("\n");
  let layout = HEADER_LAYOUTS.get(signature);
  if (!layout) {
    layout = keys.map((name): [string, string] => [name, name.toLowerCase()]).sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    HEADER_LAYOUTS.set(signature, layout);
  }
  const out: Record<string, string> = {};
  for (const [name, lower] of layout) out[lower] = headers[name]!;
  return out;
}

const HEADER_LAYOUTS = new Map<string, Array<[string, string]>>();

/** What a GET answer's headers are made from. */
interface ReadHeadersKey {
  readonly index: number;
  readonly nextToken: string;
  readonly leader: LeaderView;
}

/** What a read's answer sends besides its body. */
interface ReadMeta {
  readonly index: number;
  readonly nextToken: string;
}

export type Handler = (rc: RequestContext) => unknown | Promise<unknown>;

interface Route {
  readonly pattern: string;
  /** Exact path only (`/v1/jobs`), or the pattern and anything below it (`/v1/job/`). */
  readonly exact: boolean;
  readonly handler: Handler;
}

export class NomadRouter {
  private readonly routes: Route[] = [];
  readonly names: HeaderNames;

  constructor(
    compat: boolean,
    private readonly region: () => string,
    private readonly access?: RouteAccess,
    /** Answers a route of Nomad's that standin does not emulate (501), before any route matches. */
    private readonly unemulated?: (method: string, path: string) => Response | undefined,
    /** Encoded answers of GET reads, reused while the state and the clock stay put. */
    private readonly answers?: AnswerCache<ReadMeta>,
    /** Results of GET queries, shared the same way (see RequestContext.shared). */
    private readonly results?: StampedMemo<unknown>,
    /** Whether the cluster knows its leader; always, when absent. */
    private readonly leader: () => LeaderView = () => LEADER_KNOWN,
  ) {
    this.names = new HeaderNames(SCHEDULER_HEADERS, compat);
  }

  exact(path: string, handler: Handler): void {
    this.routes.push({ pattern: path, exact: true, handler });
  }

  prefix(path: string, handler: Handler): void {
    this.routes.push({ pattern: path, exact: false, handler });
  }

  async dispatch(c: Context): Promise<Response> {
    const url = requestUrl(c.req.url);
    const path = decodedPath(url);
    const unemulated = this.unemulated?.(c.req.method, path);
    if (unemulated) return unemulated;
    const route = longestMatch(this.routes, path, (r, p) => (r.exact ? p === r.pattern : p.startsWith(r.pattern)));
    if (!route) {
      if (path === "/") return bufferedResponse(null, { status: 307, headers: { Location: `/ui/${url.search}` } });
      return emptyResponse(404);
    }
    try {
      const options = parseQueryOptions(url.searchParams, this.region());
      const leader = this.leader();
      // Without a leader, only stale reads and the agent's own endpoints answer (the RPC fails before any meta is set).
      if (!leader.known && !(c.req.method === "GET" && options.stale) && !AGENT_LOCAL.test(path)) throw serverError(NO_CLUSTER_LEADER);
      const token = extractToken(c.req.raw, { names: this.names });
      // The answer depends on the URL (query included), the token, the state and the time; nothing else of the request.
      const cacheKey = this.answers ? this.readKey(c.req.raw) : undefined;
      if (cacheKey !== undefined && options.index === 0) {
        const cached = this.answers!.get(cacheKey);
        if (cached) return markReplayable(this.readAnswer(cached.body, cached.meta.index, cached.meta.nextToken, true));
      }
      const acl = this.access ? this.access.resolve(token, route.pattern) : ALLOW_ALL;
      const rc: RequestContext = {
        c,
        url,
        method: c.req.method,
        rest: path.slice(route.pattern.length),
        query: url.searchParams,
        token,
        options,
        acl,
        leader,
        shared: (run) => (cacheKey === undefined || !this.results ? run() : (this.results.get(cacheKey, run) as ReturnType<typeof run>)),
      };
      await this.access?.guard(rc, route.pattern, acl);
      return this.encode(c, await route.handler(rc), cacheKey);
    } catch (error) {
      if (error instanceof ReadError) return this.withReadMeta(textResponse(error.status, error.message), error.index);
      if (error instanceof NomadError) return textResponse(error.status, error.message);
      throw error;
    }
  }

  /**
   * What a GET read's answer depends on besides the state and the time: the
   * path and query as sent, and the token. Undefined for other methods.
   */
  readKey(request: Request): string | undefined {
    if (request.method !== "GET") return undefined;
    return answerKey(pathAndQuery(request.url), extractToken(request, { names: this.names }));
  }

  private encode(c: Context, result: unknown, cacheKey: string | undefined): Response {
    if (result instanceof Response) return result;
    // Asked only when something is encoded: an answer reused below never reads the URL again (for an
    // in-process Request, each read of `url` serialises it anew; ten thousand woken queries reuse one answer).
    const pretty = () => wantsPretty(c.req.url, "scheduler");
    if (result instanceof Read) {
      if (cacheKey === undefined) return this.readAnswer(encodeJSON(result.value, { sortKeys: true, pretty: pretty() }), result.index, result.nextToken);
      // Parked queries woken by one write all ask again at once: the first encodes, the rest reuse it.
      const cached = this.answers!.get(cacheKey);
      if (cached && cached.meta.index === result.index && cached.meta.nextToken === result.nextToken)
        return markReplayable(this.readAnswer(cached.body, result.index, result.nextToken, true));
      const body = Buffer.from(encodeJSON(result.value, { sortKeys: true, pretty: pretty() }), "utf8");
      this.answers!.set(cacheKey, { body, meta: { index: result.index, nextToken: result.nextToken } });
      return markReplayable(this.readAnswer(body, result.index, result.nextToken, true));
    }
    if (result instanceof Write) {
      const response = result.value === undefined ? bufferedResponse(null, { status: 200 }) : jsonResponse(result.value, { sortKeys: true, pretty: pretty() });
      this.names.set(response.headers, "Index", String(result.index));
      return response;
    }
    return jsonResponse(result, { sortKeys: true, pretty: pretty() });
  }

  /** A read's answer: its encoded body with the index, leader and next-page headers. */
  /**
   * A read's answer. `get`: a GET, whose JSON answer the port's gzip middleware
   * always marks `Vary: Accept-Encoding` (Nomad compresses every response):
   * set here, it spares the middleware its look at every other header.
   */
  private readAnswer(body: string | Uint8Array, index: number, nextToken: string, get = false): Response {
    // The headers as one record (setting them one by one on a Headers object costs more than the rest of a
    // cached answer), in the lower case and order a Headers object would give them; a GET's is noted as final
    // (nothing changes it afterwards), so observers read the record and the server sends it as it is.
    if (!get) return bufferedResponse(body, { status: 200, headers: { ...this.readHeaders(index, nextToken, false) } });
    // A GET's record is frozen and shared by every answer with the same headers (neither the Response, which
    // copies or only reads it, nor an observer changes it): parked queries woken by one write all answer with
    // the same index, and made one record each, ten thousand times over.
    const record = this.readHeaderRecords.get({ index, nextToken, leader: this.leader() });
    return noteResponseHeaders(bufferedResponse(body, { status: 200, headers: record }), record);
  }

  /** A read's header record; `get` adds the Vary a GET's answer always carries. */
  private readHeaders(index: number, nextToken: string, get: boolean, leader = this.leader()): Record<string, string> {
    const headers: Record<string, string> = { "Content-Type": APPLICATION_JSON };
    if (get) headers.Vary = "Accept-Encoding";
    this.readMeta(headers, index, leader);
    if (nextToken !== "") this.names.put(headers, "NextToken", nextToken);
    return lowerCaseSorted(headers);
  }

  /** The last GET answer's header record, made again only when its index, next token or leader view differs. */
  private readonly readHeaderRecords = new LastMade(
    (a: ReadHeadersKey, b: ReadHeadersKey) =>
      a.index === b.index && a.nextToken === b.nextToken && a.leader.known === b.leader.known && a.leader.lastContactMs === b.leader.lastContactMs,
    (key: ReadHeadersKey) => Object.freeze(this.readHeaders(key.index, key.nextToken, true, key.leader)),
  );

  private withReadMeta(response: Response, index: number): Response {
    const meta: Record<string, string> = {};
    this.readMeta(meta, index);
    for (const [name, value] of Object.entries(meta)) response.headers.set(name, value);
    return response;
  }

  private readMeta(headers: Record<string, string>, index: number, leader = this.leader()): void {
    this.names.put(headers, "Index", String(Math.max(1, index)));
    this.names.put(headers, "KnownLeader", leader.known ? "true" : "false");
    this.names.put(headers, "LastContact", String(leader.lastContactMs));
  }
}

/** Nomad's `parse()`: region, namespace, stale, index, wait — each bad value with its status and text. */
export function parseQueryOptions(query: URLSearchParams, agentRegion: string): QueryOptions {
  const region = query.get("region") || agentRegion;
  if (region !== agentRegion) throw serverError("No path to region");
  let stale = false;
  if (query.has("stale")) {
    const value = query.get("stale")!;
    if (value === "") stale = true;
    else {
      const parsed = parseGoBool(value);
      if (parsed === undefined) throw badRequest(`Expect \`true\` or \`false\` for \`stale\` query string parameter, got ${value}`);
      stale = parsed;
    }
  }
  const blocking = parseBlockingParams(query);
  if (typeof blocking === "string") throw badRequest(blocking);
  const { index, waitMs } = blocking;
  return { region, namespace: query.get("namespace") || "default", index, waitMs, stale, prefix: query.get("prefix") ?? "" };
}

/** Go's strconv.ParseBool. */
export function parseGoBool(value: string): boolean | undefined {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false;
  return undefined;
}

/** A bool query parameter parsed as the job endpoints do (empty = false; bad → 500 with Go's text). */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === "") return false;
  const parsed = parseGoBool(value);
  if (parsed === undefined) throw serverError(`Failed to parse value of "${name}" (${value}) as a bool: strconv.ParseBool: parsing "${value}": invalid syntax`);
  return parsed;
}

/** A request body as Nomad's decodeBody reads it, with Go's decoder texts for the common failures. */
export async function jsonBody(rc: RequestContext): Promise<unknown> {
  const text = await rc.c.req.text();
  if (text === "") throw badRequest("Request body is empty");
  if (exceedsValueCount(text)) throw new NomadError(413, TOO_MANY_VALUES);
  let value: unknown;
  try {
    value = parseBodyOnce(rc.c.req.raw, text);
  } catch (error) {
    throw badRequest(syntaxError(text, (error as Error).message));
  }
  // Go's decoder refuses a document nested too deeply in these words (its scanner's limit is 10 000 levels; ours is lower).
  const tooDeep = excessiveNesting(text);
  if (tooDeep >= 0) throw badRequest(maxDepthError(text[tooDeep]!));
  return value;
}

/** A struct field as Go's decoder finds it: exact key, else case-insensitive. */
export function field(value: unknown, name: string): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (name in record) return record[name];
  const folded = Object.keys(record).find((k) => k.toLowerCase() === name.toLowerCase());
  return folded === undefined ? undefined : record[folded];
}

export type GoFieldType = "string" | "bool" | "uint" | "uint64" | "int64" | "[]string" | "map[string]string";
type GoFieldValue = { string: string; bool: boolean; uint: number; uint64: number; int64: number; "[]string": string[]; "map[string]string": Record<string, string> };

/**
 * A request struct's field as Go's decoder reads it into `type`: undefined
 * when absent or null; a value of another JSON type (or a number the type
 * cannot hold) is a 400 with Go's UnmarshalTypeError text, e.g.
 * `json: cannot unmarshal string into Go struct field JobRevertRequest.JobVersion of type uint64`.
 * (A number is named in JavaScript's spelling, not the literal as sent.)
 */
export function typedField<T extends GoFieldType>(body: unknown, struct: string, name: string, type: T): GoFieldValue[T] | undefined {
  const value = field(body, name);
  if (value === undefined || value === null) return undefined;
  const mismatch = (what: string, goType: string = type) => badRequest(unmarshalTypeError(what, goType, `${struct}.${name}`));
  const checkString = (item: unknown) => {
    if (item !== null && typeof item !== "string") throw mismatch(jsonKind(item), "string");
    return (item ?? "") as string;
  };
  switch (type) {
    case "string":
    case "bool":
      if (typeof value !== type.replace("bool", "boolean")) throw mismatch(jsonKind(value));
      return value as GoFieldValue[T];
    case "uint":
    case "uint64":
    case "int64": {
      if (typeof value !== "number") throw mismatch(jsonKind(value));
      // Go's uint is 64 bits wide on the platforms Nomad ships for.
      const [min, max] = type === "int64" ? [-(2 ** 63), 2 ** 63 - 1] : [0, 2 ** 64 - 1];
      if (!Number.isInteger(value) || value < min || value > max) throw mismatch(`number ${String(value)}`);
      return value as GoFieldValue[T];
    }
    case "[]string":
      if (!Array.isArray(value)) throw mismatch(jsonKind(value));
      return value.map(checkString) as GoFieldValue[T];
    default:
      if (typeof value !== "object" || Array.isArray(value)) throw mismatch(jsonKind(value));
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, checkString(item)])) as GoFieldValue[T];
  }
}
