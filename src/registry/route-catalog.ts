/**
 * Consul's HTTP routes: the ones the registry emulates (sessions.ts,
 * catalog.ts, kv.ts, index.ts) and the rest of the agent's v1 API, which
 * answers 501 naming the route (see http/coverage.ts). Not to be confused
 * with catalog.ts, Consul's `/v1/catalog` endpoints.
 *
 * Source: `agent/http_register.go` (every `registerEndpoint` pattern with
 * its methods; a pattern ending in `/` is a Go ServeMux subtree whose
 * remainder goes to the handler, written `:name*` here).
 *
 * Adding a route to the registry means marking it emulated here: a route
 * catalogued as unemulated answers 501 before the router sees it, and
 * test/http/coverage.test.ts checks every registered pattern against this list.
 */
import { emulated as e, RouteMatcher, unemulated as u, unemulatedMessage, type RouteCatalog } from "../http/coverage.js";
import { textResponse } from "../http/respond.js";

export const REGISTRY_ROUTES: RouteCatalog = {
  product: "Consul",
  decodePath: true,
  routes: [
    // ACL.
    u("PUT", "/v1/acl/bootstrap"),
    u("POST", "/v1/acl/login"),
    u("POST", "/v1/acl/logout"),
    u("GET", "/v1/acl/replication"),
    u("GET", "/v1/acl/policies"),
    u("PUT", "/v1/acl/policy"),
    u("GET PUT DELETE", "/v1/acl/policy/:policy_id*"),
    u("GET", "/v1/acl/policy/name/:name*"),
    u("GET", "/v1/acl/roles"),
    u("PUT", "/v1/acl/role"),
    u("GET", "/v1/acl/role/name/:name*"),
    u("GET PUT DELETE", "/v1/acl/role/:role_id*"),
    u("GET", "/v1/acl/binding-rules"),
    u("PUT", "/v1/acl/binding-rule"),
    u("GET PUT DELETE", "/v1/acl/binding-rule/:binding_rule_id*"),
    u("GET", "/v1/acl/auth-methods"),
    u("PUT", "/v1/acl/auth-method"),
    u("GET PUT DELETE", "/v1/acl/auth-method/:name*"),
    u("GET", "/v1/acl/tokens"),
    u("PUT", "/v1/acl/token"),
    u("GET", "/v1/acl/token/self"),
    u("GET PUT DELETE", "/v1/acl/token/:accessor_id*"),
    u("GET", "/v1/acl/templated-policies"),
    u("GET", "/v1/acl/templated-policy/name/:name*"),
    u("POST", "/v1/acl/templated-policy/preview/:name*"),

    // Agent.
    u("PUT", "/v1/agent/token/:token_type*"),
    e("GET", "/v1/agent/self"),
    u("GET", "/v1/agent/host"),
    u("GET", "/v1/agent/version"),
    e("PUT", "/v1/agent/maintenance"),
    u("PUT", "/v1/agent/reload"),
    u("GET", "/v1/agent/monitor"),
    u("GET", "/v1/agent/metrics"),
    u("GET", "/v1/agent/metrics/stream"),
    e("GET", "/v1/agent/services"),
    e("GET", "/v1/agent/service/:service_id*"),
    e("GET", "/v1/agent/checks"),
    e("GET", "/v1/agent/members"),
    u("PUT", "/v1/agent/join/:address*"),
    u("PUT", "/v1/agent/leave"),
    u("PUT", "/v1/agent/force-leave/:node*"),
    e("GET", "/v1/agent/health/service/id/:service_id*"),
    e("GET", "/v1/agent/health/service/name/:service_name*"),
    e("PUT", "/v1/agent/check/register"),
    e("PUT", "/v1/agent/check/deregister/:check_id*"),
    e("PUT", "/v1/agent/check/pass/:check_id*"),
    e("PUT", "/v1/agent/check/warn/:check_id*"),
    e("PUT", "/v1/agent/check/fail/:check_id*"),
    e("PUT", "/v1/agent/check/update/:check_id*"),
    u("POST", "/v1/agent/connect/authorize"),
    u("GET", "/v1/agent/connect/ca/roots"),
    u("GET", "/v1/agent/connect/ca/leaf/:service*"),
    e("PUT", "/v1/agent/service/register"),
    e("PUT", "/v1/agent/service/deregister/:service_id*"),
    e("PUT", "/v1/agent/service/maintenance/:service_id*"),

    // Catalog: nodes, checks and services (Connect and gateways are not emulated).
    e("PUT", "/v1/catalog/register"),
    e("PUT", "/v1/catalog/deregister"),
    e("GET", "/v1/catalog/nodes"),
    u("GET", "/v1/catalog/connect/:service*"),
    e("GET", "/v1/catalog/datacenters"),
    e("GET", "/v1/catalog/services"),
    e("GET", "/v1/catalog/service/:service*"),
    e("GET", "/v1/catalog/node/:node*"),
    e("GET", "/v1/catalog/node-services/:node*"),
    u("GET", "/v1/catalog/gateway-services/:gateway*"),

    // Config entries, Connect, coordinates, discovery chains.
    u("GET DELETE", "/v1/config/:kind_and_name*"),
    u("PUT", "/v1/config"),
    u("GET PUT", "/v1/connect/ca/configuration"),
    u("GET", "/v1/connect/ca/roots"),
    u("GET POST", "/v1/connect/intentions"),
    u("GET", "/v1/connect/intentions/match"),
    u("GET", "/v1/connect/intentions/check"),
    u("GET PUT DELETE", "/v1/connect/intentions/exact"),
    u("GET PUT DELETE", "/v1/connect/intentions/:intention_id*"),
    u("GET", "/v1/coordinate/datacenters"),
    u("GET", "/v1/coordinate/nodes"),
    u("GET", "/v1/coordinate/node/:node*"),
    u("PUT", "/v1/coordinate/update"),
    u("GET POST", "/v1/discovery-chain/:service*"),
    u("GET", "/v1/exported-services"),

    // Events.
    e("PUT", "/v1/event/fire/:name*"),
    e("GET", "/v1/event/list"),

    // Health: nodes, services, checks and states (Connect and ingress are not emulated).
    e("GET", "/v1/health/node/:node*"),
    e("GET", "/v1/health/checks/:service*"),
    e("GET", "/v1/health/state/:state*"),
    e("GET", "/v1/health/service/:service*"),
    u("GET", "/v1/health/connect/:service*"),
    u("GET", "/v1/health/ingress/:service*"),

    // Internal endpoints (the UI's and federation's).
    u("GET", "/v1/internal/federation-states"),
    u("GET", "/v1/internal/federation-states/mesh-gateways"),
    u("GET", "/v1/internal/federation-state/:datacenter*"),
    u("GET", "/v1/internal/ui/metrics-proxy/:path*"),
    u("GET", "/v1/internal/ui/nodes"),
    u("GET", "/v1/internal/ui/node/:node*"),
    u("GET", "/v1/internal/ui/services"),
    u("GET", "/v1/internal/ui/exported-services"),
    u("GET", "/v1/internal/ui/catalog-overview"),
    u("GET", "/v1/internal/ui/gateway-services-nodes/:gateway*"),
    u("GET", "/v1/internal/ui/gateway-intentions/:gateway*"),
    u("GET", "/v1/internal/ui/service-topology/:service*"),
    u("POST", "/v1/internal/acl/authorize"),
    u("PUT", "/v1/internal/service-virtual-ip"),

    // KV.
    e("GET", "/v1/kv/:key*"),
    e("PUT", "/v1/kv/:key*"),
    e("DELETE", "/v1/kv/:key*"),
    e("PUT", "/v1/txn"),

    // Operator, peering, prepared queries, snapshots.
    u("GET", "/v1/operator/raft/configuration"),
    u("POST", "/v1/operator/raft/transfer-leader"),
    u("DELETE", "/v1/operator/raft/peer"),
    u("GET POST PUT DELETE", "/v1/operator/keyring"),
    u("GET", "/v1/operator/usage"),
    u("GET", "/v1/operator/utilization"),
    u("GET PUT", "/v1/operator/autopilot/configuration"),
    u("GET", "/v1/operator/autopilot/health"),
    u("GET", "/v1/operator/autopilot/state"),
    u("POST", "/v1/peering/token"),
    u("POST", "/v1/peering/establish"),
    u("GET DELETE", "/v1/peering/:name*"),
    u("GET", "/v1/peerings"),
    u("GET POST", "/v1/query", { note: "prepared queries are not emulated; see docs/known-differences.md" }),
    u("*", "/v1/query/:query_id*", { note: "prepared queries are not emulated; see docs/known-differences.md" }),
    u("GET PUT", "/v1/snapshot"),

    // Sessions.
    e("PUT", "/v1/session/create"),
    e("PUT", "/v1/session/destroy/:session_id*"),
    e("PUT", "/v1/session/renew/:session_id*"),
    e("GET", "/v1/session/info/:session_id*"),
    e("GET", "/v1/session/node/:node*"),
    e("GET", "/v1/session/list"),

    // Status.
    e("GET", "/v1/status/leader"),
    e("GET", "/v1/status/peers"),
  ],
};

const matcher = new RouteMatcher(REGISTRY_ROUTES);

/** Consul's style for a route standin does not emulate: 501, plain text; undefined for every other request. */
export function unemulatedRegistryRoute(method: string, path: string): Response | undefined {
  const match = matcher.match(method, path);
  if (match.kind !== "unemulated") return undefined;
  return textResponse(501, match.entry.productAnswer ?? unemulatedMessage(REGISTRY_ROUTES, method, match.entry));
}
