/**
 * Documented control routes: each route is declared with its summary, its
 * request body and query schemas (valibot) and its responses. The helper
 * registers the Hono route, parses and validates the input with the declared
 * schemas before the handler runs, and records the operation for the control
 * API's OpenAPI document (src/control/openapi.ts). The document is generated
 * from the very schemas the routes validate with, so the two cannot drift.
 *
 * Input errors answer 400 `{"error": "<message>"}`:
 * `request body is empty; expected a JSON document`,
 * `request body is not valid JSON: <parser message>`,
 * `request body nests arrays and objects deeper than 1000 levels`,
 * `invalid body: <path>: <problem>; …`, `invalid query: <path>: <problem>; …`.
 */
import { Hono, type Context, type Env } from "hono";
import * as v from "valibot";
import { boundProblems, describeIssues, formatPath } from "../core/validation.js";
import { excessiveNesting, MAX_JSON_DEPTH } from "../core/json.js";
import { nextTurn } from "../core/json-stream.js";
import { type BodyPrecheck, readForPrecheck } from "./precheck.js";

/** What a control route's body may be, unless the route says otherwise: its arguments, not a document. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

export type Schema<T> = v.GenericSchema<unknown, T>;

export type HttpMethod = "get" | "post" | "put" | "delete";

export interface OperationSpec<B, Q> {
  /** One line. */
  readonly summary: string;
  readonly description?: string;
  /** The JSON request body, validated before the handler runs (the handler gets the parsed output). */
  readonly body?: Schema<B>;
  /** An empty body counts as `{}` instead of a 400. */
  readonly bodyOptional?: boolean;
  /**
   * Bodies over this many bytes get 413 before they are parsed (default
   * {@link DEFAULT_MAX_BODY_BYTES}): a route's work grows with its body, so
   * a route whose real bodies are small takes no more. `"control-limit"`:
   * only the control body limit (`--control-body-limit`, 64 MiB by default)
   * applies, for the documents a harness sends whole (fixtures, snapshots,
   * tapes, actions carrying jobs).
   */
  readonly maxBodyBytes?: number | "control-limit";
  /**
   * Checks large bodies elsewhere (the control API's document routes check
   * them in a worker thread; ./precheck.ts): their bytes go there as they
   * arrive, and the verdict's error answer is sent as it is. It checks with
   * the route's own body schema (its `schema`), so the body a passing
   * verdict hands over is taken as it is. A route body limit below the
   * control limit is kept: past it, 413 and the rest is not read.
   */
  readonly precheck?: BodyPrecheck;
  /** The query string (an object of strings), validated before the handler runs. */
  readonly query?: Schema<Q>;
  /** Path parameters' descriptions, by name (`:id` → `id`). */
  readonly params?: Readonly<Record<string, string>>;
  /** Status → what it means. */
  readonly responses: Readonly<Record<number, string>>;
  /** The OpenAPI tag; defaults to the routes' own. */
  readonly tag?: string;
}

/** One recorded operation. `path` is relative to where the routes are mounted, in OpenAPI's `{param}` syntax. */
export interface DocumentedOperation {
  readonly method: HttpMethod;
  readonly path: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly body?: Schema<unknown>;
  readonly bodyOptional: boolean;
  readonly query?: Schema<unknown>;
  readonly params: ReadonlyArray<{ name: string; description?: string }>;
  readonly responses: Readonly<Record<number, string>>;
}

export interface RouteInput<B, Q> {
  readonly body: B;
  readonly query: Q;
  /**
   * The body was parsed and checked by the route's precheck (./precheck.ts) and handed over:
   * whatever else the precheck's check ran (a document check) need not run again.
   */
  readonly handedOver?: true;
}

// The context is typed by the route's path, so `c.req.param("id")` is a string.
type Handler<P extends string, B, Q> = (c: Context<Env, P>, input: RouteInput<B, Q>) => Response | Promise<Response>;

/** A Hono app whose routes are declared with their documentation. */
export class DocumentedRoutes {
  constructor(
    /** The default tag of the operations declared here. */
    readonly tag: string,
    readonly app: Hono = new Hono(),
    /** Every operation declared (or mounted) here, in order. */
    readonly operations: DocumentedOperation[] = [],
  ) {}

  /** The same routes (same app, same operations), declaring operations under another default tag. */
  withTag(tag: string): DocumentedRoutes {
    return new DocumentedRoutes(tag, this.app, this.operations);
  }

  get<P extends string, B = undefined, Q = undefined>(path: P, spec: OperationSpec<B, Q>, handler: Handler<P, B, Q>): this {
    return this.add("get", path, spec, handler);
  }

  post<P extends string, B = undefined, Q = undefined>(path: P, spec: OperationSpec<B, Q>, handler: Handler<P, B, Q>): this {
    return this.add("post", path, spec, handler);
  }

  put<P extends string, B = undefined, Q = undefined>(path: P, spec: OperationSpec<B, Q>, handler: Handler<P, B, Q>): this {
    return this.add("put", path, spec, handler);
  }

  delete<P extends string, B = undefined, Q = undefined>(path: P, spec: OperationSpec<B, Q>, handler: Handler<P, B, Q>): this {
    return this.add("delete", path, spec, handler);
  }

  /** Mounts other documented routes under `prefix` (Hono's `route`), with their operations. */
  route(prefix: string, routes: DocumentedRoutes): this {
    this.app.route(prefix, routes.app);
    for (const operation of routes.operations) this.operations.push({ ...operation, path: joinPath(prefix, operation.path) });
    return this;
  }

  private add<P extends string, B, Q>(method: HttpMethod, path: P, spec: OperationSpec<B, Q>, handler: Handler<P, B, Q>): this {
    // A body handed over by the precheck skips the route's own check: only sound if it is the same check.
    if (spec.precheck && spec.precheck.schema !== spec.body) {
      throw new Error(`${method.toUpperCase()} ${path}: a precheck checks with the route's own body schema`);
    }
    const params = [...path.matchAll(/:([A-Za-z_][\w]*)/g)].map((m) => m[1]!);
    this.operations.push({
      method,
      path: path.replace(/:([A-Za-z_][\w]*)/g, "{$1}"),
      tag: spec.tag ?? this.tag,
      summary: spec.summary,
      description: spec.description,
      body: spec.body as Schema<unknown> | undefined,
      bodyOptional: spec.bodyOptional ?? false,
      query: spec.query as Schema<unknown> | undefined,
      params: params.map((name) => ({ name, description: spec.params?.[name] })),
      responses: spec.responses,
    });
    // Routes without a body stay synchronous (Hono's fast path); only reading a body awaits.
    const run = (c: Context<Env, P>): Response | Promise<Response> => {
      let query = undefined as Q;
      if (spec.query) {
        const checked = check(spec.query, c.req.query(), "query");
        if (!checked.ok) return c.json({ error: checked.error }, 400);
        query = checked.value;
      }
      const bodySchema = spec.body;
      if (!bodySchema) return handler(c, { body: undefined as B, query });
      const max = spec.maxBodyBytes === "control-limit" ? undefined : (spec.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      // The connection closes rather than read the rest (as the control body limit's 413 does).
      const tooLarge = () => c.json({ error: `request body too large: ${method.toUpperCase()} ${c.req.path} takes at most ${max} bytes` }, 413, { Connection: "close" });
      if (max !== undefined && Number(c.req.header("content-length") ?? 0) > max) return tooLarge();
      if (spec.precheck) {
        return readForPrecheck(c.req.raw, spec.precheck, max).then(async (read) => {
          if ("tooLarge" in read) return tooLarge();
          if ("text" in read) return handleText(read.text, false);
          const answer = await read.verdict;
          if (!answer.ok) return c.json(answer.body, answer.status);
          // A document checked ahead is large: taking it in and handling it are two holds of the event loop, not one.
          await nextTurn();
          // Parsed and checked with this very schema elsewhere (declared so above), and handed over in slices: taken as it is.
          if ("value" in answer) return handler(c, { body: answer.value as B, query, handedOver: true });
          return handleText(answer.text, true);
        });
      }
      return (max === undefined ? c.req.text() : textUpTo(c.req.raw, max)).then((text) => (text === undefined ? tooLarge() : handleText(text, false)));

      async function handleText(text: string, large: boolean): Promise<Response> {
        const parsed = spec.bodyOptional && text.trim() === "" ? ({ ok: true, value: {} } as const) : parseJSONText(text);
        if (!parsed.ok) return c.json({ error: parsed.error }, 400);
        if (large) await nextTurn();
        const checked = check(bodySchema!, parsed.value, "body");
        if (!checked.ok) return c.json({ error: checked.error }, 400);
        return handler(c, { body: checked.value, query });
      }
    };
    this.app.on(method.toUpperCase(), path, run as (c: Context) => Response | Promise<Response>);
    return this;
  }
}

/** A body's text, or undefined as soon as more than `max` bytes have arrived (the rest is not read). */
async function textUpTo(request: Request, max: number): Promise<string | undefined> {
  if (request.body === null) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  // Decoded as Request.text() decodes (a leading BOM dropped, bad bytes replaced).
  return new TextDecoder().decode(Buffer.concat(chunks));
}

type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

/** A request body's JSON document; empty and malformed bodies are errors. */
export function parseJSONText(text: string): Checked<unknown> {
  if (text.trim() === "") return { ok: false, error: "request body is empty; expected a JSON document" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `request body is not valid JSON: ${(error as Error).message}` };
  }
  if (excessiveNesting(text) >= 0) return { ok: false, error: `request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels` };
  return { ok: true, value };
}

/** A parsed request body checked as the routes check theirs (the same errors). */
export function checkBody<T>(schema: Schema<T>, value: unknown): Checked<T> {
  return check(schema, value, "body");
}

function check<T>(schema: Schema<T>, value: unknown, where: "body" | "query"): Checked<T> {
  const arrays = arraysForObjects(schema, value, []);
  if (arrays.length > 0) return { ok: false, error: `invalid ${where}: ${arrays.join("; ")}` };
  // A misspelt key would otherwise be dropped and the request "succeed" doing nothing
  // (`{"status":"down"}` on a node fault): every key of a body must be one the route knows.
  const unknown = where === "body" ? unknownKeys(schema, value, []) : [];
  if (unknown.length > 0) return { ok: false, error: `invalid ${where}: ${boundProblems(unknown).join("; ")}` };
  const result = v.safeParse(schema, value);
  if (result.success) return { ok: true, value: result.output };
  return { ok: false, error: `invalid ${where}: ${describeIssues(result.issues).join("; ")}` };
}

const OBJECT_SCHEMAS = new Set(["object", "loose_object", "strict_object", "object_with_rest", "record"]);
const WRAPPERS = new Set(["optional", "exact_optional", "nullable", "nullish", "non_optional", "non_nullable", "non_nullish"]);

/**
 * valibot's object and record schemas accept arrays (an array is an object
 * to `typeof`); JSON Schema's `"type": "object"`, which the document says,
 * does not. So an array where the schema has an object is refused here,
 * keeping the route to what the document promises.
 */
function arraysForObjects(schema: v.GenericSchema, value: unknown, path: PropertyKey[]): string[] {
  const inner = unwrap(schema);
  if (!OBJECT_SCHEMAS.has(inner.type) || value === null || typeof value !== "object") return [];
  if (Array.isArray(value)) return [`${formatPath(path) || "(root)"}: Invalid type: Expected Object but received Array`];
  const entries = value as Record<string, unknown>;
  if (inner.type === "record") {
    const item = (inner as unknown as { value: v.GenericSchema }).value;
    return Object.keys(entries).flatMap((key) => arraysForObjects(item, entries[key], [...path, key]));
  }
  const shape = (inner as unknown as { entries: Record<string, v.GenericSchema> }).entries;
  return Object.keys(shape).flatMap((key) => (Object.hasOwn(entries, key) ? arraysForObjects(shape[key]!, entries[key], [...path, key]) : []));
}

/** The schema under its pipe and its optional/nullable wrappers. */
function unwrap(schema: v.GenericSchema): v.GenericSchema {
  let inner = schema as v.GenericSchema & { pipe?: readonly [v.GenericSchema, ...unknown[]]; wrapped?: v.GenericSchema };
  for (;;) {
    if (inner.pipe) inner = inner.pipe[0] as typeof inner;
    else if (WRAPPERS.has(inner.type) && inner.wrapped) inner = inner.wrapped as typeof inner;
    else return inner;
  }
}

/**
 * Keys a plain `object` schema does not name, at any depth (loose and
 * strict objects, records and rest objects say for themselves what they take).
 */
function unknownKeys(schema: v.GenericSchema, value: unknown, path: PropertyKey[], found: UnknownKey[] = []): UnknownKey[] {
  const inner = unwrap(schema);
  if (value === null || typeof value !== "object") return found;
  if (inner.type === "array" && Array.isArray(value)) {
    const item = (inner as unknown as { item: v.GenericSchema }).item;
    for (const [i, element] of value.entries()) unknownKeys(item, element, [...path, i], found);
    return found;
  }
  if (inner.type !== "object" || Array.isArray(value)) return found;
  const shape = (inner as unknown as { entries: Record<string, v.GenericSchema> }).entries;
  const entries = value as Record<string, unknown>;
  for (const key of Object.keys(entries)) {
    // Written out only if it is among the few an error names (a body may hold a million such keys).
    if (!Object.hasOwn(shape, key)) found.push({ text: () => `${formatPath([...path, key])}: unknown key (${takes(shape)})`, unknownKey: true });
    else unknownKeys(shape[key]!, entries[key], [...path, key], found);
  }
  return found;
}

type UnknownKey = { text: () => string; unknownKey: true };

function takes(shape: Record<string, unknown>): string {
  const keys = Object.keys(shape);
  return keys.length ? `this body takes ${keys.join(", ")}` : "this body takes no keys";
}

function joinPath(prefix: string, path: string): string {
  const head = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
  return path === "/" ? head || "/" : `${head}${path}`;
}
