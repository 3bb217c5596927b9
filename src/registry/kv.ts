/**
 * The KV store, enough for locks and leader election
 * (Consul agent/kvs_endpoint.go and the state store's kvs transactions):
 * get (`?recurse`, `?keys` with `?separator`, `?raw`), put (`?flags`,
 * `?cas`, `?acquire`, `?release`), delete (`?recurse`, `?cas`). Values are
 * base64 in JSON; a held key carries `Session`; acquiring bumps `LockIndex`;
 * a lock-delay after a session's invalidation refuses acquires.
 */
import { badRequest, RegistryError, serverError, type QueryOptions, type RequestContext, type Router } from "./http.js";
import type { RegistryApi } from "./api.js";
import { TABLES, type KVRow } from "./state.js";
import { bufferedResponse } from "../http/respond.js";
import { parseUint64, uint64Wire, type Uint64 } from "../core/uint64.js";

/** The tables a KV read watches: a delete also moves the graveyard. */
const KV_TABLES = [TABLES.kv, TABLES.tombstones];

/** Consul's default kv_max_value_size. */
export const KV_MAX_VALUE_SIZE = 512 * 1024;

export function registerKVRoutes(router: Router, api: RegistryApi): void {
  const { state, ctx } = api;

  router.register("/v1/kv/", ["GET", "PUT", "DELETE"], async (rc) => {
    const options = rc.parse();
    const key = rc.rest;
    switch (rc.c.req.method) {
      case "GET":
        return rc.query.has("keys") ? getKeys(rc, key, options) : get(rc, key, options);
      case "PUT":
        return put(rc, key);
      default:
        return remove(rc, key);
    }
  });

  function get(rc: RequestContext, key: string, options: QueryOptions) {
    const recurse = rc.query.has("recurse");
    if (!recurse && key === "") throw badRequest("Missing key name");
    api.acceptEnterpriseMeta(rc);
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    if (!recurse) authz.require("key", key, "read");
    return api
      .blockingRead(rc, rc.parse(), KV_TABLES, () => {
        if (!recurse) {
          // One key answers with its own ModifyIndex, so its readers sleep through other keys'
          // writes; a missing one with the KV tables' index (Consul's KVS.Get).
          const entry = state.kv.get(key);
          return entry ? { value: [toWire(entry)], index: entry.ModifyIndex } : { value: [], index: kvTablesIndex() };
        }
        const entries = state.kv.withPrefix(key);
        const value = entries.filter((e) => authz.allowed("key", e.Key, "read")).map(toWire);
        return { value, filtered: value.length < entries.length, index: listIndex(key, entries) };
      })
      .then((answer) => {
        const entries = answer.value as WireKVRow[];
        // Not found: 404 with an empty body, after the meta headers.
        if (entries.length === 0) return answer.with(bufferedResponse(null, { status: 404 }));
        if (rc.query.has("raw") && !recurse) {
          const raw = entries[0]!.Value === null ? Buffer.alloc(0) : Buffer.from(entries[0]!.Value, "base64");
          return answer.with(
            bufferedResponse(raw, { status: 200, headers: { "Content-Type": "text/plain", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox" } }),
          );
        }
        return answer;
      });
  }

  function getKeys(rc: RequestContext, prefix: string, options: QueryOptions) {
    api.acceptEnterpriseMeta(rc);
    api.requireDatacenterForRead(options);
    const separator = rc.query.has("separator") ? rc.query.get("separator")! : rc.query.has("seperator") ? rc.query.get("seperator")! : "";
    const authz = api.authorize(rc);
    return api
      .blockingRead(rc, rc.parse(), KV_TABLES, () => {
        const keys: string[] = [];
        let filtered = false;
        const entries = state.kv.withPrefix(prefix);
        for (const entry of entries) {
          if (!authz.allowed("key", entry.Key, "read")) {
            filtered = true;
            continue;
          }
          const after = entry.Key.slice(prefix.length);
          const cut = separator ? after.indexOf(separator) : -1;
          const listed = cut >= 0 ? prefix + after.slice(0, cut + separator.length) : entry.Key;
          if (keys[keys.length - 1] !== listed) keys.push(listed);
        }
        return { value: keys, filtered, index: listIndex(prefix, entries) };
      })
      .then((answer) => ((answer.value as string[]).length === 0 && prefix !== "" ? answer.with(bufferedResponse(null, { status: 404 })) : answer));
  }

  async function put(rc: RequestContext, key: string) {
    api.acceptEnterpriseMeta(rc);
    if (key === "") throw badRequest("Missing key name");
    conflictingFlags(rc, ["cas", "acquire", "release"]);
    const flags = rc.query.has("flags") ? parseUint(rc.query.get("flags")!) : 0;
    const cas = rc.query.has("cas") ? casIndex(parseUint(rc.query.get("cas")!)) : undefined;
    const acquire = rc.query.has("acquire") ? rc.query.get("acquire")! : undefined;
    const release = rc.query.has("release") ? rc.query.get("release")! : undefined;
    const body = Buffer.from(await rc.c.req.arrayBuffer());
    if (body.length > KV_MAX_VALUE_SIZE) {
      throw new RegistryError(
        413,
        `Request body(${body.length} bytes) too large, max size: ${KV_MAX_VALUE_SIZE} bytes. See https://developer.hashicorp.com/docs/agent/config/config-files#kv_max_value_size.`,
      );
    }
    api.requireDatacenter(rc.query.get("dc") || undefined);
    api.authorize(rc).require("key", key, "write");
    const value = body.length === 0 ? null : body.toString("base64");
    const existing = state.kv.get(key);

    if (acquire !== undefined) {
      // A lock-delay after the holder's invalidation refuses the acquire (Consul's kvsPreApply).
      if (state.lockDelayed(key)) return false;
      // Whatever its namespace (enterprise edition): KV is not namespaced here, and session IDs are unique.
      const session = state.findSession(acquire);
      if (!session) throw serverError(`apply failed: invalid session "${acquire}"`);
      return ctx.store.write(() => state.lockKey({ Key: key, Flags: flags, Value: value }, session));
    }
    if (release !== undefined) return ctx.store.write(() => state.unlockKey({ Key: key, Flags: flags, Value: value }, release));
    if (cas !== undefined && (cas === 0 ? existing !== undefined : existing?.ModifyIndex !== cas)) return false;
    // A plain set keeps the holder but not the lock count: Consul's kvsSetTxn takes LockIndex
    // from the request, which a plain PUT leaves at 0.
    ctx.store.write(() => state.setKey({ LockIndex: 0, Key: key, Flags: flags, Value: value, ...(existing?.Session !== undefined ? { Session: existing.Session } : {}) }));
    return true;
  }

  function remove(rc: RequestContext, key: string) {
    api.acceptEnterpriseMeta(rc);
    conflictingFlags(rc, ["recurse", "cas"]);
    const recurse = rc.query.has("recurse");
    if (!recurse && key === "") throw badRequest("Missing key name");
    const cas = rc.query.has("cas") ? casIndex(parseUint(rc.query.get("cas")!)) : undefined;
    api.requireDatacenter(rc.query.get("dc") || undefined);
    api.authorize(rc).require("key", key, "write");
    if (recurse) {
      ctx.store.write(() => state.deleteTree(key));
      return true;
    }
    const existing = state.kv.get(key);
    if (cas !== undefined && (!existing || existing.ModifyIndex !== cas)) return cas === 0 && !existing;
    ctx.store.write(() => state.deleteKey(key));
    return true;
  }

  /** Consul's kvsMaxIndex: the KV table's and the graveyard's index. */
  function kvTablesIndex(): number {
    return Math.max(ctx.store.tableIndex(TABLES.kv), ctx.store.tableIndex(TABLES.tombstones));
  }

  /**
   * Consul's kvsListTxn: the highest ModifyIndex of the entries under the
   * prefix (before ACL filtering) or of a tombstone there, else (nothing
   * there, or the empty prefix) the KV tables' index.
   */
  function listIndex(prefix: string, entries: readonly KVRow[]): number {
    if (prefix === "") return kvTablesIndex();
    let index = state.tombstoneIndexUnder(prefix);
    for (const entry of entries) if (entry.ModifyIndex > index) index = entry.ModifyIndex;
    return index !== 0 ? index : kvTablesIndex();
  }
}

export type WireKVRow = Omit<KVRow, "Flags"> & { Flags: number | bigint };

/** A KV entry as Consul encodes it: Flags as the exact uint64 integer. */
export function toWire(entry: KVRow): WireKVRow {
  return typeof entry.Flags === "number" ? (entry as WireKVRow) : { ...entry, Flags: uint64Wire(entry.Flags) };
}

/** A `?cas=` index: one past 2^53 can match no entry's ModifyIndex, so any such value stands for "no match". */
function casIndex(value: Uint64): number {
  return typeof value === "number" ? value : Number.POSITIVE_INFINITY;
}

/** Consul writes the whole encoded query back, keys sorted (Go's url.Values.Encode), plus a newline. */
function conflictingFlags(rc: RequestContext, flags: readonly string[]): void {
  if (flags.filter((f) => rc.query.has(f)).length < 2) return;
  const sorted = [...rc.query.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const encoded = sorted.map(([k, v]) => `${goQueryEscape(k)}=${goQueryEscape(v)}`).join("&");
  throw badRequest(`Conflicting flags: ${encoded}\n`);
}

function goQueryEscape(value: string): string {
  return encodeURIComponent(value)
    .replace(/%20/g, "+")
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** strconv.ParseUint(v, 10, 64); its error is a plain 500 in Consul. */
function parseUint(value: string): Uint64 {
  const parsed = parseUint64(value);
  if ("error" in parsed) throw serverError(`strconv.ParseUint: parsing "${value}": ${parsed.error}`);
  return parsed.value;
}
