/**
 * Consul's catalog service reads: `/v1/catalog/services` (each name with the
 * union of its instances' tags), `/v1/catalog/service/:name` (the instances
 * as `structs.ServiceNode`), `/v1/catalog/node/:node` (a node with its
 * services by ID) and `/v1/catalog/node-services/:node` (the same as a
 * list). All block Consul's way; results are filtered by `node:read` and
 * `service:read` as Consul's ACL filter does.
 */
import type { RegistryApi } from "./api.js";
import { badRequest, type RequestContext, type Router } from "./http.js";
import { canRead, consistencyLevel, hasTags, nodeMetaFilter, nodeServiceView, nodeView, satisfiesMeta, serviceNodeView, tagFilter, withConsistency } from "./service-views.js";
import { TABLES, type ServiceRow } from "./state.js";
import { registryFilter } from "./filter.js";
import { NODE_SERVICE_FILTER, SERVICE_NODE_FILTER } from "./filter-schemas.js";

type ServiceNodeView = ReturnType<typeof serviceNodeView>;
type NodeServiceView = ReturnType<typeof nodeServiceView>;

/** What a read of one service name depends on: its own index, the extinction index and (before either exists) the catalog's. */
export const SERVICE_READ_TABLES = [TABLES.serviceIndexes, TABLES.serviceExtinction, TABLES.nodes, TABLES.services, TABLES.checks] as const;

export function registerCatalogServiceRoutes(router: Router, api: RegistryApi): void {
  const { state } = api;

  /** The common start of a read: parse(), the namespace refusal, the datacenter, the token. */
  const begin = (rc: RequestContext) => {
    const options = rc.parse();
    api.acceptEnterpriseMeta(rc);
    return { options, level: consistencyLevel(options, rc.query) };
  };

  router.register("/v1/catalog/services", ["GET"], async (rc) => {
    const { options, level } = begin(rc);
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    const keep = registryFilter<ServiceNodeView>(rc, SERVICE_NODE_FILTER);
    const meta = nodeMetaFilter(rc.query);
    // Consul's state.Services answers with the services table's index; ServicesByNodeMeta with the catalog's (nodes too).
    const tables = meta.size > 0 ? [TABLES.nodes, TABLES.services] : [TABLES.services];
    const answer = await api.blockingRead(rc, options, tables, () => {
      const instances = state.allServices().filter((s) => meta.size === 0 || satisfiesMeta(state.findNode(s.Node)?.Meta ?? null, meta));
      // Consul's ListServices runs the expression over the instances as structs.ServiceNode, before grouping them by name (ACLs after).
      const kept = keep ? instances.filter((s) => keep(serviceNodeView(s, state.findNode(s.Node)!))) : instances;
      const byName = tagsByName(kept);
      const names = [...byName.keys()].sort(goOrder);
      const readable = names.filter((name) => authz.allowed("service", name, "read"));
      return { value: Object.fromEntries(readable.map((name) => [name, byName.get(name)!])), filtered: readable.length < names.length };
    });
    return withConsistency(answer, level);
  });

  router.register("/v1/catalog/service/", ["GET"], async (rc) => {
    const { options, level } = begin(rc);
    const name = rc.rest;
    if (name === "") throw badRequest("Missing service name");
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    const keep = registryFilter<ServiceNodeView>(rc, SERVICE_NODE_FILTER);
    const tags = tagFilter(rc.query);
    const meta = nodeMetaFilter(rc.query);
    // `near=` sorts by round-trip time in Consul; with no coordinates here the order stays Consul's own (node, then ID).
    const answer = await api.blockingRead(rc, options, SERVICE_READ_TABLES, () => {
      const matching = state
        .instancesOf(name)
        .filter((s) => hasTags(s, tags))
        .flatMap((s) => {
          const node = state.findNode(s.Node);
          return node && satisfiesMeta(node.Meta, meta) ? [{ service: s, node, view: serviceNodeView(s, node) }] : [];
        })
        // Consul's ServiceNodes: tags, node-meta, the expression over structs.ServiceNode, then ACLs.
        .filter(({ view }) => !keep || keep(view));
      const readable = matching.filter(({ service, node }) => canRead(authz, node.Node, service));
      return { value: readable.map(({ view }) => view), filtered: readable.length < matching.length, index: state.serviceIndex(name) };
    });
    return withConsistency(answer, level);
  });

  /**
   * A node with its services: null for an unknown node, or one the token
   * may not read (Consul's filterNodeServices drops the whole answer then).
   * UNVERIFIED which index modern Consul answers with (a per-node index is
   * believed); here the catalog's nodes and services tables, as older
   * Consul's catalogMaxIndex.
   */
  const nodeServices = async (rc: RequestContext, shape: (node: NonNullable<ReturnType<typeof state.findNode>>, services: ServiceRow[]) => unknown, missing: unknown) => {
    const { options, level } = begin(rc);
    if (rc.rest === "") throw badRequest("Missing node name");
    api.requireDatacenterForRead(options);
    // Consul's NodeServices and NodeServiceList create the filter (over structs.NodeService) before resolving the token.
    const keep = registryFilter<NodeServiceView>(rc, NODE_SERVICE_FILTER);
    const authz = api.authorize(rc);
    const answer = await api.blockingRead(rc, options, [TABLES.nodes, TABLES.services], () => {
      const node = state.findNode(rc.rest);
      if (!node) return { value: missing };
      // The expression runs first, then the ACL filter (which drops the whole answer for a node the token may not read).
      const services = state.servicesOf(node.Node).filter((s) => !keep || keep(nodeServiceView(s)));
      if (!authz.allowed("node", node.Node, "read")) return { value: missing, filtered: true };
      const readable = services.filter((s) => authz.allowed("service", s.Service, "read"));
      return { value: shape(node, readable), filtered: readable.length < services.length };
    });
    return withConsistency(answer, level);
  };

  router.register("/v1/catalog/node/", ["GET"], (rc) =>
    nodeServices(rc, (node, services) => ({ Node: nodeView(node), Services: Object.fromEntries(services.map((s) => [s.ID, nodeServiceView(s)])) }), null),
  );

  // UNVERIFIED: an unknown node. Consul's RPC leaves IndexedNodeServiceList's value zero, which marshals as two nulls.
  router.register("/v1/catalog/node-services/", ["GET"], (rc) =>
    nodeServices(rc, (node, services) => ({ Node: nodeView(node), Services: services.map(nodeServiceView) }), { Node: null, Services: null }),
  );
}

/**
 * Consul's servicesTagsByName: each name (as registered; names differing in
 * case stay apart, as a Go map keeps them) with the union of its instances'
 * tags. Go walks a set there, so its tag order is random; here it is the
 * order the tags are first seen in (instances by node, then ID).
 */
function tagsByName(instances: readonly ServiceRow[]): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const instance of instances) {
    let tags = byName.get(instance.Service);
    if (!tags) byName.set(instance.Service, (tags = []));
    for (const tag of instance.Tags) if (!tags.includes(tag)) tags.push(tag);
  }
  return byName;
}

/** Go's encoding/json writes a map's keys sorted bytewise. */
export function goOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
