/**
 * Consul's health reads for services: `/v1/health/service/:name` (each
 * instance with its node and checks — the node's own checks, serfHealth
 * among them, then the instance's — optionally only the passing ones),
 * `/v1/health/checks/:service` (the service's checks only) and
 * `/v1/health/state/:state`. `/v1/health/node/:node` lives in catalog.ts.
 * All block Consul's way and filter by `node:read` and `service:read`.
 */
import type { RegistryApi } from "./api.js";
import type { Authorizer } from "./acl.js";
import { SERVICE_READ_TABLES } from "./catalog-services.js";
import { badRequest, WithMetaError, type RequestContext, type Router } from "./http.js";
import {
  canRead,
  checkServiceNodeView,
  checkView,
  filterChecks,
  type ChecksExpression,
  consistencyLevel,
  hasTags,
  nodeMetaFilter,
  satisfiesMeta,
  tagFilter,
  withConsistency,
} from "./service-views.js";
import { TABLES, type CheckRow, type RegistryState } from "./state.js";
import { filterRows, registryFilter } from "./filter.js";
import { CHECK_SERVICE_NODE_FILTER, HEALTH_CHECK_FILTER } from "./filter-schemas.js";

type CheckServiceNode = ReturnType<typeof checkServiceNodeView>;

export function registerHealthRoutes(router: Router, api: RegistryApi): void {
  const { state } = api;

  const begin = (rc: RequestContext) => {
    const options = rc.parse();
    api.acceptEnterpriseMeta(rc);
    return { options, level: consistencyLevel(options, rc.query) };
  };

  router.register("/v1/health/service/", ["GET"], async (rc) => {
    const { options, level } = begin(rc);
    const name = rc.rest;
    if (name === "") throw badRequest("Missing service name");
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    const keep = registryFilter<CheckServiceNode>(rc, CHECK_SERVICE_NODE_FILTER);
    const tags = tagFilter(rc.query);
    const meta = nodeMetaFilter(rc.query);
    // `near=` sorts by round-trip time in Consul; with no coordinates here the order stays Consul's own (node, then ID).
    const answer = withConsistency(
      await api.blockingRead(rc, options, SERVICE_READ_TABLES, () => {
        const matching = state.instancesOf(name).flatMap((service) => {
          const node = state.findNode(service.Node);
          if (!node || !hasTags(service, tags) || !satisfiesMeta(node.Meta, meta)) return [];
          return [{ service, node }];
        });
        const readable = matching.filter(({ service, node }) => canRead(authz, node.Node, service));
        const views = readable.map(({ service, node }) => checkServiceNodeView(service, node, healthChecksOf(state, node.Node, service.ID)));
        // Consul 1.20.2+ (#21950) runs the expression over structs.CheckServiceNode after the ACL filter (and `passing` after both).
        return { value: filterRows(views, keep), filtered: readable.length < matching.length, index: state.serviceIndex(name) };
      }),
      level,
    );
    // Consul reads `passing` after the query has run (and its meta is set): a bad value is a 400 that still carries the meta.
    const passing = boolParam(rc.query, "passing");
    if (passing === "invalid") throw new WithMetaError(400, "Invalid value for ?passing", answer.meta);
    return passing ? answer.with(withoutNonPassing(answer.value as CheckServiceNode[])) : answer;
  });

  router.register("/v1/health/checks/", ["GET"], async (rc) => {
    const { options, level } = begin(rc);
    const name = rc.rest;
    if (name === "") throw badRequest("Missing service name");
    api.requireDatacenterForRead(options);
    // Consul's ServiceChecks creates the filter before resolving the token, and runs it before the ACL filter.
    const keep = registryFilter<CheckRow>(rc, HEALTH_CHECK_FILTER);
    const authz = api.authorize(rc);
    const meta = nodeMetaFilter(rc.query);
    const wanted = name.toLowerCase();
    // UNVERIFIED: the index; believed to be the checks table's (catalogChecksMaxIndex), the nodes' too with node-meta.
    const tables = meta.size > 0 ? [TABLES.nodes, TABLES.checks] : [TABLES.checks];
    const answer = await api.blockingRead(rc, options, tables, () =>
      readChecks(state, authz, meta, (c) => c.ServiceName.toLowerCase() === wanted, { keep, order: "expression-first" }),
    );
    return withConsistency(answer, level);
  });

  router.register("/v1/health/state/", ["GET"], async (rc) => {
    const { options, level } = begin(rc);
    const wanted = rc.rest;
    if (wanted === "") throw badRequest("Missing check state");
    api.requireDatacenterForRead(options);
    // Consul's ChecksInState creates the filter before resolving the token; since 1.20.2 (#21950) it runs after the ACL filter.
    const keep = registryFilter<CheckRow>(rc, HEALTH_CHECK_FILTER);
    const authz = api.authorize(rc);
    const meta = nodeMetaFilter(rc.query);
    const tables = meta.size > 0 ? [TABLES.nodes, TABLES.checks] : [TABLES.checks];
    // `any` (exactly) lists every check; any other word is looked up in Consul's status index, which
    // lowercases both sides. An unknown state is no error there: it matches nothing (200 `[]`).
    const matches = wanted === "any" ? () => true : (c: CheckRow) => c.Status.toLowerCase() === wanted.toLowerCase();
    const answer = await api.blockingRead(rc, options, tables, () => readChecks(state, authz, meta, matches, { keep, order: "acl-first" }));
    return withConsistency(answer, level);
  });
}

/** A health-check list read: the matching checks, by node-meta, then `filter=` and Consul's ACL filter for HealthChecks in the endpoint's order. */
function readChecks(state: RegistryState, authz: Authorizer, meta: ReadonlyMap<string, string>, matches: (check: CheckRow) => boolean, expression: ChecksExpression) {
  const matching = state.checks
    .sorted()
    .filter(matches)
    .filter((c) => meta.size === 0 || satisfiesMeta(state.findNode(c.Node)?.Meta ?? null, meta))
    .map(checkView);
  return filterChecks(authz, matching, expression);
}

/** An instance's health: its node's own checks first, then its own (Consul's parseCheckServiceNodes). */
function healthChecksOf(state: RegistryState, node: string, serviceId: string): CheckRow[] {
  return [...state.nodeChecksOf(node), ...state.checksOfService(node, serviceId)];
}

/** Consul's getBoolQueryParam: absent is false, present and empty is true, else Go's strconv.ParseBool. */
function boolParam(query: URLSearchParams, key: string): boolean | "invalid" {
  if (!query.has(key)) return false;
  const value = query.get(key)!;
  if (value === "" || ["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false;
  return "invalid";
}

/**
 * Consul's filterNonPassing, order effects included: an instance with any
 * check not passing is swapped with the last kept one and dropped, so the
 * survivors' order can change.
 */
function withoutNonPassing(nodes: readonly CheckServiceNode[]): CheckServiceNode[] {
  const out = [...nodes];
  let n = out.length;
  for (let i = 0; i < n; i++) {
    if (out[i]!.Checks.every((c) => c.Status === "passing")) continue;
    out[i] = out[n - 1]!;
    n--;
    i--;
  }
  return out.slice(0, n);
}
