/**
 * Variables (`/v1/vars`, `/v1/var/:path`; command/agent/variable_endpoint.go
 * and the Variables RPC): list, read, set, check-and-set, delete, and the lock
 * operations `?lock-acquire`, `?lock-renew`, `?lock-release` (reference §1).
 * The state rules live in ../variables/variables.ts.
 */
import { DurationError, parseGoDuration } from "../../core/durations.js";
import { encodeJSON } from "../../core/json.js";
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { bufferedResponse, emptyResponse, TEXT_PLAIN } from "../../http/respond.js";
import { wantsPretty } from "../../http/pretty.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, field, invalidMethod, jsonBody, NomadError, ReadError, typedField, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import type { Tokenizer } from "./paging.js";
import {
  filterDatum,
  metadataView,
  validateForSet,
  VariableConflict,
  VariableInvalid,
  VariableLockError,
  variableView,
  variablesOf,
  VARIABLES_TABLE,
  type VariableLockRow,
  type VariableRequest,
  type VariableRow,
} from "../variables/variables.js";
import type { RouteKit } from "./kit.js";

const LOCK_OPERATIONS = ["lock-acquire", "lock-renew", "lock-release"] as const;
type LockOperation = (typeof LOCK_OPERATIONS)[number];

/** `<Namespace>.<Path>`: the StructsTokenizer with namespace and ID (paths may hold no dots, so the first dot splits). */
const namespacePathTokenizer: Tokenizer<VariableRow> = {
  token: (row) => `${row.Namespace}.${row.Path}`,
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
};

export function registerVariableRoutes(router: NomadRouter, { state, ctx, readList, read }: RouteKit): void {
  const variables = variablesOf(state);

  router.exact("/v1/vars", (rc) => {
    if (rc.method !== "GET") throw invalidMethod();
    const namespace = rc.options.namespace;
    const prefix = rc.options.prefix;
    return readList(
      rc,
      [VARIABLES_TABLE],
      // Entries the token may not list are dropped silently, as Nomad's list does.
      () => variables.sorted().filter((v) => (namespace === "*" || v.Namespace === namespace) && v.Path.startsWith(prefix) && rc.acl.allowVariable(v.Namespace, v.Path, "list")),
      namespacePathTokenizer,
      (row) => metadataView(row, rc.acl.management),
      filterDatum,
    );
  });

  router.prefix("/v1/var/", async (rc) => {
    const path = rc.rest;
    // Nomad's handler switch: no HEAD case (CORS lets it through), and an unknown method is a 400 here.
    if (!["GET", "PUT", "POST", "DELETE"].includes(rc.method)) throw badRequest("Invalid method");
    if (path === "") throw badRequest("missing variable path");
    if (rc.method === "GET") return readVariable(rc, path);
    if (rc.method === "DELETE") return deleteVariable(rc, path);
    return writeVariable(rc, path);
  });

  function readVariable(rc: RequestContext, path: string) {
    const namespace = rc.options.namespace;
    if (!rc.acl.allowVariable(namespace, path, "read")) throw permissionDenied();
    return read(
      rc,
      [VARIABLES_TABLE],
      () => {
        const row = variables.get(namespace, path);
        if (!row) throw new ReadError(404, "variable not found", state.index(VARIABLES_TABLE));
        // The Lock is shown to management callers only (every caller, with ACLs off).
        return variableView(row, rc.acl.management);
      },
      () => variables.get(namespace, path)?.ModifyIndex ?? state.index(VARIABLES_TABLE),
    );
  }

  async function writeVariable(rc: RequestContext, path: string) {
    const operations = LOCK_OPERATIONS.filter((op) => rc.query.has(op));
    if (operations.length > 1) throw badRequest("multiple lock operations");
    const operation: LockOperation | undefined = operations[0];
    if (operation && rc.query.has("cas")) throw badRequest("CAS can't be used with lock operations");
    const body = await jsonBody(rc);
    const request = decodeVariable(body, rc, path);
    if (operation === undefined && Object.keys(request.items).length === 0) throw badRequest("variable missing required Items object");
    const cas = parseCas(rc);
    if (!rc.acl.allowVariable(request.namespace, path, "write")) throw permissionDenied();
    switch (operation) {
      case "lock-renew":
        return renew(rc, request);
      case "lock-release":
        return release(rc, request);
      case "lock-acquire":
        return acquire(rc, request);
      default:
        return set(rc, request, cas);
    }
  }

  function set(rc: RequestContext, request: VariableRequest, cas: number | undefined) {
    invalid(() => validateForSet(request));
    try {
      const row = ctx.store.write(() => variables.set(request, cas));
      return new Write(variableView(row, showsLock(rc, row, request), request.items), row.ModifyIndex);
    } catch (error) {
      if (error instanceof VariableConflict) return conflict(rc, error.conflict, true);
      throw error;
    }
  }

  function acquire(rc: RequestContext, request: VariableRequest) {
    try {
      const row = ctx.store.write(() => invalid(() => variables.acquire(request)));
      return new Write(variableView(row, true, request.items), row.ModifyIndex);
    } catch (error) {
      if (error instanceof VariableConflict) return conflict(rc, error.conflict, false);
      throw error;
    }
  }

  function renew(rc: RequestContext, request: VariableRequest) {
    try {
      const row = variables.renew(request.namespace, request.path, request.lock?.ID ?? "");
      // Not a raft write: the handler sets no index.
      return bufferedResponse(encodeJSON(metadataView(row, true), { sortKeys: true, pretty: wantsPretty(rc.c.req.url, "scheduler") }), {
        status: 200,
        headers: { "Content-Type": "application/json" },
      });
    } catch (error) {
      if (error instanceof VariableLockError) throw new NomadError(error.status, error.message);
      throw error;
    }
  }

  function release(rc: RequestContext, request: VariableRequest) {
    if (!request.lock?.ID) throw badRequest("RPC Error:: 400,missing lock information");
    if (Object.keys(request.items).length > 0) throw badRequest("RPC Error:: 400,lock release operation doesn't take variable items");
    try {
      const row = ctx.store.write(() => variables.release(request.namespace, request.path, request.lock!.ID!));
      return new Write(metadataView(row, false), row.ModifyIndex);
    } catch (error) {
      if (error instanceof VariableConflict) return conflict(rc, error.conflict, false);
      if (error instanceof VariableLockError) throw new NomadError(error.status, error.message);
      throw error;
    }
  }

  function deleteVariable(rc: RequestContext, path: string) {
    const cas = parseCas(rc);
    const namespace = rc.options.namespace;
    if (!rc.acl.allowVariable(namespace, path, "destroy")) throw permissionDenied();
    try {
      const index = ctx.store.write(() => {
        variables.delete(namespace, path, cas);
        return ctx.store.writeIndex();
      });
      const response = emptyResponse(204);
      router.names.set(response.headers, "Index", String(index));
      return response;
    } catch (error) {
      if (error instanceof VariableConflict) return conflict(rc, error.conflict, true);
      throw error;
    }
  }

  /**
   * The 409: the variable in the way, with Items only when the caller may
   * read it. The handler writes the status before the body, so the JSON goes
   * out as sniffed text; a set's conflict carries the conflict's index, a lock
   * operation's none (reference §0.4, §1.5, §1.8).
   */
  function conflict(rc: RequestContext, row: VariableRow, withIndex: boolean): Response {
    const readable = rc.acl.allowVariable(row.Namespace, row.Path, "read");
    const view = readable ? variableView(row, rc.acl.management) : metadataView(row, rc.acl.management);
    const response = bufferedResponse(encodeJSON(view, { sortKeys: true, pretty: wantsPretty(rc.c.req.url, "scheduler") }), {
      status: 409,
      headers: { "Content-Type": TEXT_PLAIN },
    });
    if (withIndex) router.names.set(response.headers, "Index", String(row.ModifyIndex));
    return response;
  }
}

/** makeVariablesApplyResponse › isCallerOwner: the Lock is echoed to its holder, or to management. */
function showsLock(rc: RequestContext, row: VariableRow, request: VariableRequest): boolean {
  return rc.acl.management || (row.Lock !== null && request.lock?.ID === row.Lock.ID);
}

/** Validation failures are 400s with the RPC layer's text. */
function invalid<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof VariableInvalid) throw badRequest(error.message);
    throw error;
  }
}

/** `?cas=`: strconv.ParseUint's words when it is not a uint64. */
function parseCas(rc: RequestContext): number | undefined {
  if (!rc.query.has("cas")) return undefined;
  const raw = rc.query.get("cas") ?? "";
  if (!/^\d+$/.test(raw)) throw badRequest(`can not parse cas: strconv.ParseUint: parsing "${raw}": invalid syntax`);
  const value = BigInt(raw);
  if (value > 2n ** 64n - 1n) throw badRequest(`can not parse cas: strconv.ParseUint: parsing "${raw}": value out of range`);
  return Number(value);
}

/**
 * The body as structs.VariableDecrypted: the URL's path wins over the body's;
 * the body's Namespace wins over `?namespace=` (Variables.Apply's targetNS).
 */
function decodeVariable(body: unknown, rc: RequestContext, path: string): VariableRequest {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw badRequest(unmarshalTypeError(jsonKind(body), "structs.VariableDecrypted"));
  const namespace = typedField(body, "VariableDecrypted", "Namespace", "string") || rc.options.namespace;
  typedField(body, "VariableDecrypted", "Path", "string");
  const items = typedField(body, "VariableDecrypted", "Items", "map[string]string") ?? {};
  return { namespace, path, items, lock: decodeLock(field(body, "Lock")) };
}

/** VariableLock.UnmarshalJSON: TTL and LockDelay as duration strings or nanoseconds. */
function decodeLock(value: unknown): Partial<VariableLockRow> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) throw badRequest(unmarshalTypeError(jsonKind(value), "structs.VariableLock"));
  const duration = (name: string): number | undefined => {
    const raw = field(value, name);
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw === "number") return Math.trunc(raw);
    // The official client sends "" for an unset duration (its VariableLock has string fields): Nomad takes it as zero.
    if (raw === "") return undefined;
    if (typeof raw === "string") {
      try {
        return Number(parseGoDuration(raw));
      } catch (error) {
        if (error instanceof DurationError) throw badRequest(error.message);
        throw error;
      }
    }
    return undefined;
  };
  const id = typedField(value, "VariableLock", "ID", "string");
  return { ID: id ?? "", TTL: duration("TTL"), LockDelay: duration("LockDelay") };
}
