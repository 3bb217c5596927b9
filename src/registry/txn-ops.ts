/**
 * What each transaction op does (Consul's agent/consul/txn_endpoint.go
 * preCheck and agent/consul/state/txn.go txnKVS/txnNode/txnService/
 * txnCheck): the pre-checks (validation, ACLs, the lock-delay), then each
 * verb against the registry state with Consul's error texts. Every op runs
 * and every failure is collected with its index; the caller runs the
 * dispatch inside one store write and throws it away when anything failed.
 */
import { goQuote } from "../core/go/strconv.js";
import type { Uint64 } from "../core/uint64.js";
import type { Access, Authorizer, Resource } from "./acl.js";
import { RegistryError } from "./http.js";
import { toWire, type WireKVRow } from "./kv.js";
import { metaError } from "./service-definition.js";
import type { CheckRow, KVRow, NodeRow, RegistryState, ServiceRow } from "./state.js";

export type KVOp = { kind: "KV"; verb: string; key: string; value: string | null; flags: Uint64; index: number; session: string };
export type NodeOp = { kind: "Node"; verb: string; node: NodeInput };
export type ServiceOp = { kind: "Service"; verb: string; node: string; service: ServiceInput };
export type CheckOp = { kind: "Check"; verb: string; check: CheckInput };
export type TxnOp = KVOp | NodeOp | ServiceOp | CheckOp;

export type NodeInput = Omit<NodeRow, "CreateIndex" | "ModifyIndex"> & { ModifyIndex: number };
export type ServiceInput = Omit<ServiceRow, "Node" | "CreateIndex" | "ModifyIndex"> & { ModifyIndex: number };
export type CheckInput = Pick<CheckRow, "Node" | "CheckID" | "Name" | "Status" | "Notes" | "Output" | "ServiceID" | "ServiceName" | "ServiceTags" | "ExposedPort"> & {
  ModifyIndex: number;
};

export interface TxnError {
  OpIndex: number;
  What: string;
}

/** One result: exactly one key set (Consul's TxnResult, every field omitempty). */
export type TxnResult = { KV: WireKVRow } | { Node: NodeRow } | { Service: NodeServiceView } | { Check: CheckRow };

/** The KV verbs that write (agent/txn_endpoint.go isWrite); any other KV verb, unknown ones too, makes a read. */
const KV_WRITE_VERBS = new Set(["set", "delete", "delete-cas", "delete-tree", "cas", "lock", "unlock"]);

export function isWrite(op: TxnOp): boolean {
  return op.kind === "KV" ? KV_WRITE_VERBS.has(op.verb) : op.verb !== "get";
}

/**
 * Txn.preCheck: validation and ACLs per op, before anything runs. Fills the
 * defaults Consul's pre-apply fills (a service's ID from its name, a
 * check's ID from its name and its status `critical`).
 */
export function preCheck(state: RegistryState, authz: Authorizer, ops: TxnOp[]): TxnError[] {
  const errors: TxnError[] = [];
  ops.forEach((op, i) => {
    const what = preCheckOne(state, authz, op);
    if (what !== undefined) errors.push({ OpIndex: i, What: what });
  });
  return errors;
}

function preCheckOne(state: RegistryState, authz: Authorizer, op: TxnOp): string | undefined {
  switch (op.kind) {
    case "KV": {
      // kvsPreApply: every verb but delete-tree needs a key; reads are filtered on the way out.
      if (op.key === "" && op.verb !== "delete-tree") return "Must provide key";
      if (op.verb === "get" || op.verb === "get-tree" || op.verb === "get-or-empty") return undefined;
      const access: Access = op.verb === "check-session" || op.verb === "check-index" ? "read" : "write";
      const denied = denial(authz, "key", op.key, access);
      if (denied) return denied;
      if (op.verb === "lock" && state.lockDelayed(op.key)) return `failed to lock key ${goQuoted(op.key)} due to lock delay`;
      return undefined;
    }
    case "Node": {
      if (op.verb === "get") return undefined;
      // nodePreApply.
      if (op.node.Node === "") return "Must provide node";
      if (op.node.ID !== "") {
        const invalid = uuidError(op.node.ID);
        if (invalid) return `Invalid node ID: ${invalid}`;
      }
      const metaProblem = storedMetaError("Node", op.verb, op.node.Meta);
      if (metaProblem) return metaProblem;
      return denial(authz, "node", op.node.Node, "write");
    }
    case "Service": {
      if (op.verb === "get") return undefined;
      // servicePreApply, for a typical service (NodeService.Validate has nothing to say of one).
      const service = op.service;
      if (service.ID === "" && service.Service !== "") service.ID = service.Service;
      if (service.ID !== "" && service.Service === "") return "Must provide service name with ID";
      if (isAnyAddress(service.Address)) return "Invalid service address";
      const metaProblem = storedMetaError("Service", op.verb, service.Meta);
      if (metaProblem) return metaProblem;
      return service.Service === "consul" ? undefined : denial(authz, "service", service.Service, "write");
    }
    case "Check": {
      if (op.verb === "get") return undefined;
      // checkPreApply, then vetCheckTxnOp: a node check needs node:write, a service check service:write on the name it gives.
      const check = op.check;
      if (check.CheckID === "" && check.Name !== "") check.CheckID = check.Name;
      if (check.Status === "") check.Status = "critical";
      return check.ServiceID === "" ? denial(authz, "node", check.Node, "write") : denial(authz, "service", check.ServiceName, "write");
    }
  }
}

/**
 * The catalog's metadata bound (catalog.ts refuseOversizedMeta, with the one
 * shared validator) on the ops that store what they carry: Consul's txn
 * checks no metadata, so without it a transaction would be the one way
 * around the catalog's limits. A delete stores nothing, so its meta is not
 * looked at. The text is the catalog's 400 message, as a 409 entry.
 */
function storedMetaError(kind: "Node" | "Service", verb: string, meta: Record<string, string> | null): string | undefined {
  if (!meta || verb === "delete" || verb === "delete-cas") return undefined;
  const problem = metaError(meta, true);
  return problem === undefined ? undefined : `Invalid ${kind} Meta: ${problem}`;
}

/** The denial's text (acl.PermissionDeniedError), or undefined when allowed. */
function denial(authz: Authorizer, resource: Resource, name: string, access: Access): string | undefined {
  try {
    authz.require(resource, name, access);
    return undefined;
  } catch (error) {
    if (error instanceof RegistryError) return error.message;
    throw error;
  }
}

/** Runs every op (txnDispatch): the results of all, the failures of each. Writes join the caller's store write. */
export function dispatch(state: RegistryState, ops: TxnOp[]): { results: TxnResult[]; errors: TxnError[] } {
  const results: TxnResult[] = [];
  const errors: TxnError[] = [];
  ops.forEach((op, i) => {
    try {
      results.push(...dispatchOne(state, op));
    } catch (error) {
      if (!(error instanceof OpFailed)) throw error;
      errors.push({ OpIndex: i, What: error.message });
    }
  });
  return { results, errors };
}

class OpFailed extends Error {}
const fail = (what: string): never => {
  throw new OpFailed(what);
};

function dispatchOne(state: RegistryState, op: TxnOp): TxnResult[] {
  switch (op.kind) {
    case "KV":
      return kvOp(state, op);
    case "Node":
      return nodeOp(state, op);
    case "Service":
      return serviceOp(state, op);
    case "Check":
      return checkOp(state, op);
  }
}

/** Results of KV writes carry the entry without its value; gets keep it. */
const withoutValue = (entry: KVRow): TxnResult => ({ KV: toWire({ ...entry, Value: null }) });
const withValue = (entry: KVRow): TxnResult => ({ KV: toWire(entry) });

function kvOp(state: RegistryState, op: KVOp): TxnResult[] {
  const key = op.key;
  const quoted = goQuoted(key);
  const existing = state.kv.get(key);
  const stored = () => state.kv.get(key)!;
  switch (op.verb) {
    case "set":
      // kvsSetTxn: the LockIndex is the request's (none, so 0); the holder stays.
      state.setKey({ LockIndex: 0, Key: key, Flags: op.flags, Value: op.value, ...(existing?.Session !== undefined ? { Session: existing.Session } : {}) });
      return [withoutValue(stored())];
    case "cas":
      if (op.index === 0 ? existing !== undefined : existing?.ModifyIndex !== op.index) fail(`failed to set key ${quoted}, index is stale`);
      state.setKey({ LockIndex: 0, Key: key, Flags: op.flags, Value: op.value, ...(existing?.Session !== undefined ? { Session: existing.Session } : {}) });
      return [withoutValue(stored())];
    case "lock": {
      if (op.session === "") fail("missing session");
      const session = state.findSession(op.session) ?? fail(`invalid session ${goQuoted(op.session)}`);
      if (!state.lockKey({ Key: key, Flags: op.flags, Value: op.value }, session)) fail(`failed to lock key ${quoted}, lock is already held`);
      return [withoutValue(stored())];
    }
    case "unlock":
      if (op.session === "") fail("missing session");
      if (!state.unlockKey({ Key: key, Flags: op.flags, Value: op.value }, op.session)) {
        fail(`failed to unlock key ${quoted}, lock isn't held, or is held by another session`);
      }
      return [withoutValue(stored())];
    case "get":
      return [withValue(existing ?? fail(`key ${quoted} doesn't exist`))];
    case "get-or-empty":
      // An absent key answers with the request's own entry, without a value.
      return [
        withValue(
          existing ?? { LockIndex: 0, Key: key, Flags: op.flags, Value: null, ...(op.session !== "" ? { Session: op.session } : {}), CreateIndex: 0, ModifyIndex: op.index },
        ),
      ];
    case "get-tree":
      return state.kv.withPrefix(key).map(withValue);
    case "check-session": {
      const entry = existing ?? fail(`failed to check session, key ${quoted} doesn't exist`);
      if ((entry.Session ?? "") !== op.session) fail(`failed session check for key ${quoted}, current session ${goQuoted(entry.Session ?? "")} != ${goQuoted(op.session)}`);
      return [withoutValue(entry)];
    }
    case "check-index": {
      const entry = existing ?? fail(`failed to check index, key ${quoted} doesn't exist`);
      if (entry.ModifyIndex !== op.index) fail(`failed index check for key ${quoted}, current modify index ${entry.ModifyIndex} != ${op.index}`);
      return [withoutValue(entry)];
    }
    case "check-not-exists":
      if (existing) fail(`key ${quoted} exists`);
      return [];
    case "delete":
      state.deleteKey(key);
      return [];
    case "delete-cas":
      // A missing key counts as deleted (kvsDeleteCASTxn).
      if (existing && existing.ModifyIndex !== op.index) fail(`failed to delete key ${quoted}, index is stale`);
      if (existing) state.deleteKey(key);
      return [];
    case "delete-tree":
      state.deleteTree(key);
      return [];
    default:
      return fail(`unknown KV verb ${goQuoted(op.verb)}`);
  }
}

function nodeOp(state: RegistryState, op: NodeOp): TxnResult[] {
  const input = op.node;
  const quoted = goQuoted(input.Node);
  // txnNode's getNode: by ID when one is given, else by name.
  const find = () => (input.ID !== "" ? [...state.nodes.values()].find((n) => n.ID.toLowerCase() === input.ID.toLowerCase()) : state.findNode(input.Node));
  const existing = state.findNode(input.Node);
  const set = () => {
    const { ModifyIndex: _cas, ...fields } = input;
    // ensureNodeTxn writes nothing for a node that is the same already.
    if (!existing || !sameNode(existing, fields)) state.putNode(fields);
    return [{ Node: find() ?? fail(`node ${quoted} doesn't exist`) }];
  };
  switch (op.verb) {
    case "get":
      return [{ Node: find() ?? fail(`node ${quoted} doesn't exist`) }];
    case "set":
      return set();
    case "cas":
      if (!casMatches(input.ModifyIndex, existing)) fail(`failed to set node ${quoted}, index is stale`);
      return set();
    case "delete":
      state.removeNode(input.Node);
      return [];
    case "delete-cas":
      if (!existing || existing.ModifyIndex !== input.ModifyIndex) fail(`failed to delete node ${quoted}, index is stale`);
      state.removeNode(input.Node);
      return [];
    default:
      return fail(`unknown Node verb ${goQuoted(op.verb)}`);
  }
}

function serviceOp(state: RegistryState, op: ServiceOp): TxnResult[] {
  const { ModifyIndex: casIndex, ...fields } = op.service;
  const id = fields.ID;
  const where = `service ${goQuoted(id)} on node ${goQuoted(op.node)}`;
  const existing = state.findService(op.node, id);
  const set = () => {
    // ensureServiceTxn: the node must be registered; an unchanged service is not written.
    if (!state.findNode(op.node)) fail("Missing node registration");
    const row = { ...fields, Node: existing?.Node ?? state.findNode(op.node)!.Node };
    if (!existing || !sameService(existing, row)) state.putService(row);
    return [{ Service: nodeServiceView(state.findService(op.node, id)!) }];
  };
  switch (op.verb) {
    case "get":
      return [{ Service: nodeServiceView(existing ?? fail(`${where} doesn't exist`)) }];
    case "set":
      return set();
    case "cas":
      if (!casMatches(casIndex, existing)) fail(`failed to set ${where}, index is stale`);
      return set();
    case "delete":
      state.removeService(op.node, id);
      return [];
    case "delete-cas":
      if (!existing || existing.ModifyIndex !== casIndex) fail(`failed to delete ${where}, index is stale`);
      state.removeService(op.node, id);
      return [];
    default:
      return fail(`unknown Service verb ${goQuoted(op.verb)}`);
  }
}

function checkOp(state: RegistryState, op: CheckOp): TxnResult[] {
  const { ModifyIndex: casIndex, ...input } = op.check;
  const where = `check ${goQuoted(input.CheckID)} on node ${goQuoted(input.Node)}`;
  const find = () => state.findCheck(input.Node, input.CheckID);
  const existing = find();
  const set = () => {
    // ensureCheckTxn: the node (and a service check's service) must be registered.
    if (!state.findNode(input.Node)) fail("Missing node registration");
    if (input.ServiceID !== "" && !state.findService(input.Node, input.ServiceID)) fail("Missing service registration");
    // In structs.HealthCheck's order; the catalog keeps no check definition.
    const row: Omit<CheckRow, "CreateIndex" | "ModifyIndex"> = {
      Node: input.Node,
      CheckID: input.CheckID,
      Name: input.Name,
      Status: input.Status,
      Notes: input.Notes,
      Output: input.Output,
      ServiceID: input.ServiceID,
      ServiceName: input.ServiceName,
      ServiceTags: input.ServiceTags,
      Type: "",
      Interval: "",
      Timeout: "",
      ExposedPort: input.ExposedPort,
      Definition: {},
    };
    if (!existing || !sameCheck(existing, row)) state.putCheck(row);
    return [{ Check: find()! }];
  };
  switch (op.verb) {
    case "get":
      return [{ Check: existing ?? fail(`${where} doesn't exist`) }];
    case "set":
      return set();
    case "cas":
      if (!casMatches(casIndex, existing)) fail(`failed to set ${where}, index is stale`);
      return set();
    case "delete":
      state.removeCheck(input.Node, input.CheckID);
      return [];
    case "delete-cas":
      if (!existing || existing.ModifyIndex !== casIndex) fail(`failed to delete ${where}, index is stale`);
      state.removeCheck(input.Node, input.CheckID);
      return [];
    default:
      return fail(`unknown Check verb ${goQuoted(op.verb)}`);
  }
}

/** The CAS rule of every catalog *CASTxn: 0 creates only, anything else must equal the existing ModifyIndex. */
function casMatches(index: number, existing: { ModifyIndex: number } | undefined): boolean {
  return index === 0 ? existing === undefined : existing?.ModifyIndex === index;
}

/**
 * Consul's structs.NodeService as a transaction result carries it (field
 * order, omitempty). Proxy and Connect are a typical service's zero values.
 */
export type NodeServiceView = Record<string, unknown>;

export function nodeServiceView(row: ServiceRow): NodeServiceView {
  return {
    ...(row.Kind !== "" ? { Kind: row.Kind } : {}),
    ID: row.ID,
    Service: row.Service,
    Tags: row.Tags,
    Address: row.Address,
    ...(row.TaggedAddresses && Object.keys(row.TaggedAddresses).length > 0 ? { TaggedAddresses: row.TaggedAddresses } : {}),
    Meta: row.Meta,
    ...(row.Port !== 0 ? { Port: row.Port } : {}),
    ...(row.SocketPath !== "" ? { SocketPath: row.SocketPath } : {}),
    Weights: row.Weights,
    EnableTagOverride: row.EnableTagOverride,
    // UNVERIFIED: the zero ConnectProxyConfig's encoding (reference §3.2).
    Proxy: { Mode: "", MeshGateway: {}, Expose: {} },
    Connect: {},
    CreateIndex: row.CreateIndex,
    ModifyIndex: row.ModifyIndex,
  };
}

function sameNode(a: NodeRow, b: Omit<NodeRow, "CreateIndex" | "ModifyIndex">): boolean {
  return (
    a.ID === b.ID &&
    a.Node.toLowerCase() === b.Node.toLowerCase() &&
    a.Address === b.Address &&
    a.Datacenter === b.Datacenter &&
    sameJSON(a.TaggedAddresses, b.TaggedAddresses) &&
    sameJSON(a.Meta, b.Meta)
  );
}

function sameService(a: ServiceRow, b: Omit<ServiceRow, "CreateIndex" | "ModifyIndex">): boolean {
  const { CreateIndex: _c, ModifyIndex: _m, ...rest } = a;
  return sameJSON(rest, b);
}

function sameCheck(a: CheckRow, b: Omit<CheckRow, "CreateIndex" | "ModifyIndex">): boolean {
  const { CreateIndex: _c, ModifyIndex: _m, ServiceName: _n, ServiceTags: _t, ...rest } = a;
  const { ServiceName: _bn, ServiceTags: _bt, ...other } = b;
  // A service check's name and tags come from its service (putCheck), so only the rest can differ.
  return sameJSON(rest, other) && (a.ServiceID !== "" || (a.ServiceName === b.ServiceName && sameJSON(a.ServiceTags, b.ServiceTags)));
}

function sameJSON(a: unknown, b: unknown): boolean {
  return JSON.stringify(a, sortedKeys) === JSON.stringify(b, sortedKeys);
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
}

/** Go's %q, as the state store's errors quote keys, IDs and names. */
const goQuoted = goQuote;

/** hashicorp/go-uuid ParseUUID's errors. */
function uuidError(id: string): string | undefined {
  if (id.length !== 36) return "uuid string is wrong length";
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(id)) return "uuid is improperly formatted";
  return undefined;
}

/** ipaddr.IsAny: the unspecified IPv4 or IPv6 address. */
function isAnyAddress(address: string): boolean {
  return address === "0.0.0.0" || address === "::" || address === "[::]";
}
