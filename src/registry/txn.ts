/**
 * `PUT /v1/txn` (Consul agent/txn_endpoint.go, agent/consul/txn_endpoint.go,
 * agent/consul/state/txn.go): KV, Node, Service and Check ops applied all
 * or nothing.
 *
 * The limits come first (body size, then decoding, then the number of ops,
 * then each KV value's size), each a plain-text 413 or 400. Then the ops
 * are pre-checked (validation, the catalog's metadata limits on Node and
 * Service ops, ACLs, the lock-delay) and, if none fails,
 * run in one store write against the live state; if any op fails the write
 * is thrown away (Store.write rolls back everything it did, its index
 * included), so a rejected transaction changes nothing. Failures come back
 * as 409 `{"Results":null,"Errors":[{"OpIndex","What"}…]}`; success is 200
 * `{"Results":[…],"Errors":null}`.
 *
 * A transaction without write verbs is Consul's Txn.Read: it takes `stale`
 * and `consistent`, answers with `X-Consul-LastContact` and
 * `X-Consul-KnownLeader` (no index, no blocking), and its body carries the
 * RPC's QueryMeta fields after Results and Errors (structs.TxnReadResponse
 * embeds it, untagged).
 */
import { encodeJSON } from "../core/json.js";
import type { Uint64 } from "../core/uint64.js";
import { wantsPretty } from "../http/pretty.js";
import { APPLICATION_JSON, bufferedResponse } from "../http/respond.js";
import type { RegistryApi } from "./api.js";
import { DecodeError, parseGoJSON } from "./decode.js";
import { RegistryError, serverError, type RequestContext, type Router } from "./http.js";
import { NO_CLUSTER_LEADER } from "../http/leader.js";
import { KV_MAX_VALUE_SIZE } from "./kv.js";
import { decodeTxnOps, type Decoded } from "./txn-decode.js";
import { dispatch, isWrite, preCheck, type TxnError, type TxnOp, type TxnResult } from "./txn-ops.js";

/**
 * Consul 1.14 raised maxTxnOps from 64 to 128 (hashicorp/consul PR #14599;
 * agent/txn_endpoint.go). standin answers as Consul 1.17–1.20, so 128,
 * although the txn API page still says 64 (PR #22485 is about that page).
 */
export const MAX_TXN_OPS = 128;

/** txn_max_req_len's default; Consul takes the larger of it and kv_max_value_size (both 512 KiB). */
const MAX_TXN_BYTES = Math.max(512 * 1024, KV_MAX_VALUE_SIZE);
const CONFIG_DOCS = "https://www.consul.io/docs/agent/config/config-files#txn_max_req_len";

/** Thrown inside the store write to throw the transaction's changes away. */
class Rejected extends Error {
  constructor(readonly errors: TxnError[]) {
    super("transaction rejected");
  }
}

export function registerTxnRoutes(router: Router, api: RegistryApi): void {
  const { state, ctx } = api;

  router.register("/v1/txn", ["PUT"], async (rc) => {
    const ops = await readOps(rc, api.config().datacenter);
    const writes = ops.some(isWrite);
    const authz = writes ? undefined : api.authorize(rc);
    if (!writes) {
      // Txn.Read: parse() (400s for bad wait/index/consistency), then the RPC's datacenter and leader rules.
      const options = rc.parse();
      if (options.dc !== undefined && options.dc !== api.config().datacenter) throw serverError("No path to datacenter");
      // A stale read is served without a leader; the default and `consistent` modes need one.
      if (!options.stale && !api.leader().known) throw serverError(NO_CLUSTER_LEADER);
      return readOnly(rc, ops, authz!);
    }
    api.requireDatacenter(rc.query.get("dc") || undefined);
    const writer = api.authorize(rc);
    const denied = preCheck(state, writer, ops);
    if (denied.length > 0) return conflict(rc, denied);
    try {
      const results = ctx.store.write(() => {
        const outcome = dispatch(state, ops);
        if (outcome.errors.length > 0) throw new Rejected(outcome.errors);
        return outcome.results;
      });
      return answer(rc, 200, { Results: filterResults(writer, results).results, Errors: null });
    } catch (error) {
      if (error instanceof Rejected) return conflict(rc, error.errors);
      throw error;
    }
  });

  function readOnly(rc: RequestContext, ops: TxnOp[], authz: ReturnType<RegistryApi["authorize"]>): Response {
    const leader = api.leader();
    // Txn.Read returns a pre-check failure before it sets the query meta, so that answer says no leader.
    const meta = (known: { known: boolean; lastContactMs: number }, filtered: boolean) => ({
      Index: 0,
      // A time.Duration: nanoseconds.
      LastContact: known.lastContactMs * 1_000_000,
      KnownLeader: known.known,
      ConsistencyLevel: "",
      NotModified: false,
      Backend: 0,
      // Consul masks it for a request without a token (maskResultsFilteredByACLs).
      ResultsFilteredByACLs: filtered && authz.presented,
    });
    const unset = { known: false, lastContactMs: 0 };
    let response: Response;
    let shown = leader;
    const denied = preCheck(state, authz, ops);
    if (denied.length > 0) {
      shown = unset;
      response = answer(rc, 409, { Results: null, Errors: denied, ...meta(unset, false) });
    } else {
      const { results, errors } = dispatch(state, ops);
      if (errors.length > 0) {
        response = answer(rc, 409, { Results: null, Errors: errors, ...meta(leader, false) });
      } else {
        const filtered = filterResults(authz, results);
        response = answer(rc, 200, { Results: filtered.results, Errors: null, ...meta(leader, filtered.removed) });
      }
    }
    rc.names.set(response.headers, "LastContact", String(shown.lastContactMs));
    rc.names.set(response.headers, "KnownLeader", String(shown.known));
    return response;
  }
}

function conflict(rc: RequestContext, errors: TxnError[]): Response {
  return answer(rc, 409, { Results: null, Errors: errors });
}

function answer(rc: RequestContext, status: number, body: unknown): Response {
  return bufferedResponse(encodeJSON(body, { escapeHTML: true, pretty: wantsPretty(rc.c.req.url, "registry") }), {
    status,
    headers: { "Content-Type": APPLICATION_JSON },
  });
}

/** FilterTxnResults: results the token may not read are dropped (KV by key, nodes, services and checks by their node and service). */
function filterResults(authz: ReturnType<RegistryApi["authorize"]>, results: TxnResult[]): { results: TxnResult[]; removed: boolean } {
  const kept = results.filter((result) => {
    if ("KV" in result) return authz.allowed("key", result.KV.Key, "read");
    if ("Node" in result) return authz.allowed("node", result.Node.Node, "read");
    if ("Service" in result) return authz.allowed("service", result.Service.Service as string, "read");
    const check = result.Check;
    return authz.allowed("node", check.Node, "read") && (check.ServiceName === "" || authz.allowed("service", check.ServiceName, "read"));
  });
  return { results: kept, removed: kept.length < results.length };
}

/** convertOps: the body's limits and decoding, then the API ops turned into the state's. */
async function readOps(rc: RequestContext, datacenter: string): Promise<TxnOp[]> {
  const declared = rc.c.req.header("Content-Length");
  if (declared !== undefined && Number(declared) > MAX_TXN_BYTES) {
    throw new RegistryError(413, `Request body(${declared} bytes) too large, max size: ${MAX_TXN_BYTES} bytes. See ${CONFIG_DOCS}.`);
  }
  const body = Buffer.from(await rc.c.req.arrayBuffer());
  if (body.length > MAX_TXN_BYTES) throw new RegistryError(413, `Request body too large, max size: ${MAX_TXN_BYTES} bytes. See ${CONFIG_DOCS}.`);
  const text = body.toString("utf8");
  let decoded: Decoded[];
  try {
    parseGoJSON(text, rc.c.req.raw);
    decoded = decodeTxnOps(text);
  } catch (error) {
    if (error instanceof DecodeError) throw new RegistryError(400, `Failed to parse body: ${error.message}`);
    throw error;
  }
  if (decoded.length > MAX_TXN_OPS) throw new RegistryError(413, `Transaction contains too many operations (${decoded.length} > ${MAX_TXN_OPS})`);
  const ops: TxnOp[] = [];
  for (const op of decoded) {
    const converted = convertOp(op, datacenter);
    // An op that sets none of KV/Node/Service/Check is dropped, so OpIndex counts the converted ops only.
    if (converted) ops.push(converted);
  }
  return ops;
}

function convertOp(op: Decoded, datacenter: string): TxnOp | undefined {
  const str = (record: Decoded | undefined, key: string) => (record?.[key] as string | undefined) ?? "";
  const num = (record: Decoded | undefined, key: string) => indexOf((record?.[key] as Uint64 | undefined) ?? 0);
  if (op.KV) {
    const kv = op.KV as Decoded;
    const value = (kv.Value as string | null | undefined) ?? null;
    const size = value === null ? 0 : Buffer.from(value, "base64").length;
    // Unreachable with the default limits (a larger value cannot fit in the body), kept for its order and text.
    if (size > KV_MAX_VALUE_SIZE) throw new RegistryError(413, `Value for key "${str(kv, "Key")}" is too large (${size} > ${KV_MAX_VALUE_SIZE} bytes)`);
    return {
      kind: "KV",
      verb: str(kv, "Verb"),
      key: str(kv, "Key"),
      value,
      flags: (kv.Flags as Uint64 | undefined) ?? 0,
      index: num(kv, "Index"),
      session: str(kv, "Session"),
    };
  }
  if (op.Node) {
    const wrapper = op.Node as Decoded;
    const node = (wrapper.Node as Decoded | undefined) ?? {};
    return {
      kind: "Node",
      verb: str(wrapper, "Verb"),
      node: {
        ID: str(node, "ID"),
        Node: str(node, "Node"),
        Address: str(node, "Address"),
        // convertOps: a node without a datacenter is in the agent's.
        Datacenter: str(node, "Datacenter") || datacenter,
        TaggedAddresses: (node.TaggedAddresses as Record<string, string> | null | undefined) ?? null,
        Meta: (node.Meta as Record<string, string> | null | undefined) ?? null,
        ModifyIndex: num(node, "ModifyIndex"),
      },
    };
  }
  if (op.Service) {
    const wrapper = op.Service as Decoded;
    const service = (wrapper.Service as Decoded | undefined) ?? {};
    const weights = (service.Weights as Decoded | undefined) ?? {};
    return {
      kind: "Service",
      verb: str(wrapper, "Verb"),
      node: str(wrapper, "Node"),
      // convertOps copies these fields only (TaggedAddresses and SocketPath are not among them); Weights always, so {0,0} when absent.
      service: {
        Kind: str(service, "Kind"),
        ID: str(service, "ID"),
        Service: str(service, "Service"),
        Tags: (service.Tags as string[] | null | undefined) ?? [],
        Address: str(service, "Address"),
        TaggedAddresses: null,
        Meta: (service.Meta as Record<string, string> | null | undefined) ?? {},
        Port: (service.Port as number | undefined) ?? 0,
        SocketPath: "",
        Weights: { Passing: (weights.Passing as number | undefined) ?? 0, Warning: (weights.Warning as number | undefined) ?? 0 },
        EnableTagOverride: (service.EnableTagOverride as boolean | undefined) ?? false,
        ModifyIndex: num(service, "ModifyIndex"),
      },
    };
  }
  if (op.Check) {
    const wrapper = op.Check as Decoded;
    const check = (wrapper.Check as Decoded | undefined) ?? {};
    return {
      kind: "Check",
      verb: str(wrapper, "Verb"),
      check: {
        Node: str(check, "Node"),
        CheckID: str(check, "CheckID"),
        Name: str(check, "Name"),
        Status: str(check, "Status"),
        Notes: str(check, "Notes"),
        Output: str(check, "Output"),
        ServiceID: str(check, "ServiceID"),
        ServiceName: str(check, "ServiceName"),
        ServiceTags: (check.ServiceTags as string[] | null | undefined) ?? [],
        ExposedPort: (check.ExposedPort as number | undefined) ?? 0,
        ModifyIndex: num(check, "ModifyIndex"),
      },
    };
  }
  return undefined;
}

/** An index beyond 2^53 matches no row's (all are below it): it stands for "no match". */
function indexOf(value: Uint64): number {
  return typeof value === "number" ? value : Number.POSITIVE_INFINITY;
}
