/**
 * The wire shapes of the catalog's and health's service views, built in Go
 * struct order from the state's rows (Consul 1.17+ `agent/structs`):
 * `structs.Node`, `structs.NodeService` (catalog/node), `structs.ServiceNode`
 * (catalog/service) and `structs.CheckServiceNode` (health/service); plus
 * the query filters those reads share (`tag=`, `node-meta=`) and the
 * `X-Consul-Effective-Consistency` value. The agent's own `api.AgentService`
 * is a different shape, built elsewhere.
 */
import type { Authorizer } from "./acl.js";
import { filterRows } from "./filter.js";
import { WithMeta, type QueryOptions } from "./http.js";
import type { CheckRow, NodeRow, ServiceRow } from "./state.js";

/**
 * A typical service's `ConnectProxyConfig` as Consul marshals it: every field
 * is omitempty except `Mode`, and the `MeshGateway` and `Expose` structs
 * (omitempty does not drop a struct) render as `{}`; `TransparentProxy` and
 * `AccessLogs` are hoisted pointers, dropped when zero (ConnectProxyConfig.MarshalJSON).
 */
function zeroProxy() {
  return { Mode: "", MeshGateway: {}, Expose: {} };
}

/** `structs.Node`: Partition, PeerName and Locality are omitempty and never set here. */
export function nodeView(node: NodeRow) {
  return {
    ID: node.ID,
    Node: node.Node,
    Address: node.Address,
    Datacenter: node.Datacenter,
    TaggedAddresses: node.TaggedAddresses,
    Meta: node.Meta,
    CreateIndex: node.CreateIndex,
    ModifyIndex: node.ModifyIndex,
  };
}

/**
 * `structs.NodeService`: Kind, TaggedAddresses, Port and SocketPath are
 * omitempty; `PeerName` has no omitempty tag (always `""`); Locality is omitempty and never set.
 */
export function nodeServiceView(service: ServiceRow) {
  return {
    ...(service.Kind !== "" ? { Kind: service.Kind } : {}),
    ID: service.ID,
    Service: service.Service,
    Tags: service.Tags,
    Address: service.Address,
    ...(service.TaggedAddresses && Object.keys(service.TaggedAddresses).length > 0 ? { TaggedAddresses: service.TaggedAddresses } : {}),
    Meta: service.Meta,
    ...(service.Port !== 0 ? { Port: service.Port } : {}),
    ...(service.SocketPath !== "" ? { SocketPath: service.SocketPath } : {}),
    Weights: service.Weights,
    EnableTagOverride: service.EnableTagOverride,
    Proxy: zeroProxy(),
    Connect: {},
    PeerName: "",
    CreateIndex: service.CreateIndex,
    ModifyIndex: service.ModifyIndex,
  };
}

/**
 * `structs.ServiceNode`, the node's fields filled in on the way out (Consul's
 * parseServiceNodes): ServiceTaggedAddresses and PeerName are omitempty;
 * `ServiceLocality` has no omitempty tag, so it is `null`.
 */
export function serviceNodeView(service: ServiceRow, node: NodeRow) {
  return {
    ID: node.ID,
    Node: node.Node,
    Address: node.Address,
    Datacenter: node.Datacenter,
    TaggedAddresses: node.TaggedAddresses,
    NodeMeta: node.Meta,
    ServiceKind: service.Kind,
    ServiceID: service.ID,
    ServiceName: service.Service,
    ServiceTags: service.Tags,
    ServiceAddress: service.Address,
    ...(service.TaggedAddresses && Object.keys(service.TaggedAddresses).length > 0 ? { ServiceTaggedAddresses: service.TaggedAddresses } : {}),
    ServiceWeights: service.Weights,
    ServiceMeta: service.Meta,
    ServicePort: service.Port,
    ServiceSocketPath: service.SocketPath,
    ServiceEnableTagOverride: service.EnableTagOverride,
    ServiceProxy: zeroProxy(),
    ServiceConnect: {},
    ServiceLocality: null,
    CreateIndex: service.CreateIndex,
    ModifyIndex: service.ModifyIndex,
  };
}

/** `structs.HealthCheck` as the rows hold it (their fields are in its order already); ServiceTags never null. */
export function checkView(check: CheckRow): CheckRow {
  return check.ServiceTags ? check : { ...check, ServiceTags: [] };
}

/**
 * `structs.CheckServiceNode`: the instance's node, the instance, and its
 * checks — the node's own checks (serfHealth, maintenance) first, then the
 * instance's (Consul's parseCheckServiceNodes reads them in that order).
 */
export function checkServiceNodeView(service: ServiceRow, node: NodeRow, checks: readonly CheckRow[]) {
  return {
    Node: nodeView(node),
    Service: nodeServiceView(service),
    Checks: checks.map(checkView),
  };
}

/**
 * `node-meta=key:value`, repeatable (Consul's parseMetaFilter): split at the
 * first `:`; no `:` means the value `""`. A later pair for the same key wins
 * (Go fills a map).
 */
export function nodeMetaFilter(query: URLSearchParams): Map<string, string> {
  const filters = new Map<string, string>();
  for (const pair of query.getAll("node-meta")) {
    const at = pair.indexOf(":");
    if (at < 0) filters.set(pair, "");
    else filters.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return filters;
}

/** structs.SatisfiesMetaFilters: every filter key present with exactly that value. */
export function satisfiesMeta(meta: Record<string, string> | null, filters: ReadonlyMap<string, string>): boolean {
  for (const [key, value] of filters) if (!meta || !Object.hasOwn(meta, key) || meta[key] !== value) return false;
  return true;
}

/**
 * `tag=`, repeatable: undefined when absent; else every tag given must be on
 * the instance, compared case-insensitively (Consul's serviceTagsFilter).
 */
export function tagFilter(query: URLSearchParams): string[] | undefined {
  return query.has("tag") ? query.getAll("tag") : undefined;
}

export function hasTags(service: ServiceRow, wanted: readonly string[] | undefined): boolean {
  if (!wanted) return true;
  const have = service.Tags.map((t) => t.toLowerCase());
  return wanted.every((tag) => have.includes(tag.toLowerCase()));
}

/**
 * `QueryOptions.ConsistencyLevel()`, which the catalog and health handlers
 * copy into their answer's meta (Consul sends it as
 * `X-Consul-Effective-Consistency`): `consistent`, `stale` (`?stale`, or a
 * positive `max_stale`), else `leader`.
 */
export function consistencyLevel(options: Pick<QueryOptions, "stale" | "consistent">, query: URLSearchParams): string {
  if (options.consistent) return "consistent";
  if (options.stale || positiveMaxStale(query.get("max_stale"))) return "stale";
  return "leader";
}

function positiveMaxStale(value: string | null): boolean {
  // parse() has already refused a malformed max_stale; any digit other than 0 makes it positive.
  return value !== null && /[1-9]/.test(value);
}

/** The read's answer with its effective consistency. */
export function withConsistency(answer: WithMeta, level: string): WithMeta {
  return new WithMeta(answer.value, { ...answer.meta, consistency: level });
}

/** Consul's aclfilter for ServiceNodes and CheckServiceNodes: the node and the service must both be readable. */
export function canRead(authz: Authorizer, node: string, service: ServiceRow): boolean {
  return authz.allowed("node", node, "read") && authz.allowed("service", service.Service, "read");
}

/** Consul's filterHealthChecks: the node readable, and the service too when the check names one. */
export function canReadCheck(authz: Authorizer, check: CheckRow): boolean {
  return authz.allowed("node", check.Node, "read") && (check.ServiceName === "" || authz.allowed("service", check.ServiceName, "read"));
}

/** `filter=` over structs.HealthCheck, and where it runs relative to the ACL filter (see filter.ts). */
export interface ChecksExpression {
  keep: ((check: CheckRow) => boolean) | undefined;
  order: "expression-first" | "acl-first";
}

/** Rendered checks through the expression and Consul's ACL filter for HealthChecks; `filtered` says whether the ACLs removed any. */
export function filterChecks(authz: Authorizer, checks: readonly CheckRow[], { keep, order }: ChecksExpression) {
  const candidates = order === "expression-first" ? filterRows(checks, keep) : checks;
  const readable = candidates.filter((c) => canReadCheck(authz, c));
  const value = order === "acl-first" ? filterRows(readable, keep) : readable;
  return { value, filtered: readable.length < candidates.length };
}
