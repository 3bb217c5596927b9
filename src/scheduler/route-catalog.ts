/**
 * Nomad's HTTP routes: the ones the scheduler emulates (routes/,
 * acl/acl-routes.ts, the event stream in events/) and the rest of the agent's
 * API, which answers 501 naming the route (see http/coverage.ts).
 *
 * Source: `command/agent/http.go` `registerHandlers` (every mux pattern
 * below, 1.9 through current main), `http_ce.go` (the Enterprise stubs, which
 * Nomad CE itself answers 501 `Nomad Enterprise only endpoint`), and the
 * handlers that switch on the rest of the path: `JobSpecificRequest`
 * (suffixes, `strings.HasSuffix`, so job IDs may hold slashes),
 * `NodeSpecificRequest`, `NodePoolSpecificRequest`, `AllocSpecificRequest`,
 * `ClientAllocRequest`, `FsRequest`, `EvalSpecificRequest`,
 * `DeploymentSpecificRequest`, `CSIVolumeSpecificRequest`,
 * `ACLRoleSpecificRequest`, `ServiceRegistrationRequest`,
 * `KeyringOperationRequest`, `KeyringRequest`, `OperatorRequest`. Methods
 * are the ones those handlers accept; `*` where the handler's method check
 * was not read (the route answers 501 whatever the method anyway).
 *
 * Adding a route to the scheduler means marking it emulated here: a route
 * catalogued as unemulated answers 501 before the router sees it, and
 * test/http/coverage.test.ts checks every registered pattern against this list.
 */
import { emulated as e, RouteMatcher, unemulated as u, unemulatedMessage, type RouteCatalog } from "../http/coverage.js";
import { textResponse } from "../http/respond.js";

const ENTERPRISE = { productAnswer: "Nomad Enterprise only endpoint" };

export const SCHEDULER_ROUTES: RouteCatalog = {
  product: "Nomad",
  decodePath: true,
  routes: [
    // Root: 307 to the UI; the UI itself is not served.
    e("*", "/"),
    u("GET", "/ui/:path*"),

    // Jobs.
    e("GET", "/v1/jobs"),
    e("PUT POST", "/v1/jobs"),
    e("PUT POST", "/v1/jobs/parse"),
    e("GET POST", "/v1/jobs/statuses"),
    e("GET", "/v1/job/:job_id+"),
    e("PUT POST", "/v1/job/:job_id+"),
    e("DELETE", "/v1/job/:job_id+"),
    e("GET", "/v1/job/:job_id+/summary"),
    e("GET", "/v1/job/:job_id+/allocations"),
    e("GET", "/v1/job/:job_id+/evaluations"),
    e("GET", "/v1/job/:job_id+/deployments"),
    e("GET", "/v1/job/:job_id+/deployment"),
    e("GET", "/v1/job/:job_id+/versions"),
    e("PUT POST", "/v1/job/:job_id+/plan"),
    e("PUT POST", "/v1/job/:job_id+/evaluate"),
    e("PUT POST", "/v1/job/:job_id+/revert"),
    e("PUT POST", "/v1/job/:job_id+/stable"),
    e("PUT POST", "/v1/job/:job_id+/dispatch"),
    e("PUT POST", "/v1/job/:job_id+/periodic/force"),
    e("GET", "/v1/job/:job_id+/scale"),
    e("PUT POST", "/v1/job/:job_id+/scale"),
    e("GET", "/v1/job/:job_id+/services"),
    u("GET", "/v1/job/:job_id+/submission"),
    u("GET", "/v1/job/:job_id+/actions"),
    u("GET", "/v1/job/:job_id+/action"),
    e("PUT POST", "/v1/validate/job"),

    // Evaluations.
    e("GET", "/v1/evaluations"),
    e("DELETE", "/v1/evaluations"),
    e("GET", "/v1/evaluations/count"),
    e("GET", "/v1/evaluation/:eval_id"),
    e("GET", "/v1/evaluation/:eval_id/allocations"),

    // Allocations.
    e("GET", "/v1/allocations"),
    e("GET", "/v1/allocation/:alloc_id"),
    e("PUT POST", "/v1/allocation/:alloc_id/stop"),
    e("GET", "/v1/allocation/:alloc_id/services"),
    e("*", "/v1/allocation/:alloc_id/checks"),

    // Deployments.
    e("GET", "/v1/deployments"),
    e("GET", "/v1/deployment/:deployment_id"),
    e("GET", "/v1/deployment/allocations/:deployment_id"),
    e("PUT POST", "/v1/deployment/fail/:deployment_id"),
    e("PUT POST", "/v1/deployment/pause/:deployment_id"),
    e("PUT POST", "/v1/deployment/promote/:deployment_id"),
    e("PUT POST", "/v1/deployment/allocation-health/:deployment_id"),
    u("PUT POST", "/v1/deployment/unblock/:deployment_id", { note: "multiregion deployments are not emulated" }),

    // Nodes and node pools.
    e("GET", "/v1/nodes"),
    e("GET", "/v1/node/:node_id"),
    e("GET", "/v1/node/:node_id/allocations"),
    e("PUT POST", "/v1/node/:node_id/evaluate"),
    e("PUT POST", "/v1/node/:node_id/drain"),
    e("PUT POST", "/v1/node/:node_id/eligibility"),
    e("PUT POST", "/v1/node/:node_id/purge"),
    e("GET", "/v1/node/pools"),
    e("PUT POST", "/v1/node/pools"),
    e("GET", "/v1/node/pool/:pool_name"),
    e("PUT POST", "/v1/node/pool/:pool_name"),
    e("DELETE", "/v1/node/pool/:pool_name"),
    e("GET", "/v1/node/pool/:pool_name/jobs"),
    e("GET", "/v1/node/pool/:pool_name/nodes"),

    // Volumes and plugins (CSI, host volumes).
    u("GET", "/v1/volumes"),
    u("GET", "/v1/volumes/external"),
    u("*", "/v1/volumes/snapshot"),
    u("*", "/v1/volumes/claims"),
    u("*", "/v1/volumes/claim/:claim_id+"),
    u("GET", "/v1/volume/csi/:volume_id"),
    u("PUT", "/v1/volume/csi/:volume_id"),
    u("DELETE", "/v1/volume/csi/:volume_id"),
    u("PUT", "/v1/volume/csi/:volume_id/create"),
    u("DELETE", "/v1/volume/csi/:volume_id/delete"),
    u("DELETE", "/v1/volume/csi/:volume_id/detach"),
    u("*", "/v1/volume/host/:path+"),
    u("GET", "/v1/plugins"),
    u("GET", "/v1/plugin/csi/:plugin_id"),

    // ACL.
    e("PUT POST", "/v1/acl/bootstrap"),
    e("GET", "/v1/acl/policies"),
    e("GET", "/v1/acl/policy/:policy_name"),
    e("PUT POST", "/v1/acl/policy/:policy_name"),
    e("DELETE", "/v1/acl/policy/:policy_name"),
    e("GET", "/v1/acl/tokens"),
    e("PUT POST", "/v1/acl/token"),
    e("GET", "/v1/acl/token/self"),
    e("GET", "/v1/acl/token/:accessor_id"),
    e("PUT POST", "/v1/acl/token/:accessor_id"),
    e("DELETE", "/v1/acl/token/:accessor_id"),
    u("PUT POST", "/v1/acl/token/onetime"),
    u("PUT POST", "/v1/acl/token/onetime/exchange"),
    u("GET", "/v1/acl/roles"),
    u("PUT POST", "/v1/acl/role"),
    u("*", "/v1/acl/role/:role_id"),
    u("GET", "/v1/acl/role/name/:role_name"),
    u("GET", "/v1/acl/auth-methods"),
    u("PUT POST", "/v1/acl/auth-method"),
    u("*", "/v1/acl/auth-method/:method_name"),
    u("GET", "/v1/acl/binding-rules"),
    u("PUT POST", "/v1/acl/binding-rule"),
    u("*", "/v1/acl/binding-rule/:binding_rule_id"),
    u("*", "/v1/acl/oidc/auth-url"),
    u("*", "/v1/acl/oidc/complete-auth"),
    u("*", "/v1/acl/login"),
    u("*", "/v1/acl/identity/client-introduction-token"),
    u("GET", "/.well-known/jwks.json"),
    u("GET", "/.well-known/openid-configuration"),

    // Client (the node agent: files, logs, stats, exec).
    e("GET", "/v1/client/fs/ls/:alloc_id"),
    e("GET", "/v1/client/fs/stat/:alloc_id"),
    e("GET", "/v1/client/fs/readat/:alloc_id"),
    e("GET", "/v1/client/fs/cat/:alloc_id"),
    e("GET", "/v1/client/fs/stream/:alloc_id"),
    e("GET", "/v1/client/fs/logs/:alloc_id"),
    u("*", "/v1/client/gc"),
    u("GET", "/v1/client/stats"),
    e("GET", "/v1/client/allocation/:alloc_id/stats"),
    u("GET", "/v1/client/allocation/:alloc_id/exec"),
    u("GET", "/v1/client/allocation/:alloc_id/snapshot"),
    e("*", "/v1/client/allocation/:alloc_id/restart"),
    u("*", "/v1/client/allocation/:alloc_id/gc"),
    e("*", "/v1/client/allocation/:alloc_id/checks"),
    e("PUT POST", "/v1/client/allocation/:alloc_id/signal"),
    u("*", "/v1/client/metadata"),
    u("*", "/v1/client/identity"),
    u("*", "/v1/client/identity/renew"),
    u("GET", "/v1/client/allocations/prometheus-sd"),

    // Agent.
    e("GET", "/v1/agent/self"),
    e("GET", "/v1/agent/members"),
    e("GET", "/v1/agent/health"),
    u("*", "/v1/agent/join"),
    u("*", "/v1/agent/force-leave"),
    u("*", "/v1/agent/servers"),
    u("GET", "/v1/agent/schedulers"),
    u("*", "/v1/agent/schedulers/config"),
    u("*", "/v1/agent/keyring/list"),
    u("*", "/v1/agent/keyring/install"),
    u("*", "/v1/agent/keyring/use"),
    u("*", "/v1/agent/keyring/remove"),
    u("GET", "/v1/agent/host"),
    u("*", "/v1/agent/reload"),
    u("GET", "/v1/agent/monitor"),
    u("*", "/v1/agent/monitor/export"),
    u("GET", "/v1/agent/pprof/:profile"),
    u("GET", "/v1/metrics"),

    // Native service discovery.
    e("GET", "/v1/services"),
    e("GET", "/v1/service/:service_name"),
    e("DELETE", "/v1/service/:service_name/:service_id"),

    // Variables.
    e("GET", "/v1/vars"),
    e("HEAD GET PUT POST DELETE", "/v1/var/:path+"),

    // Status, regions, namespaces, search, scaling, events.
    e("GET", "/v1/status/leader"),
    e("GET", "/v1/status/peers"),
    e("GET", "/v1/regions"),
    e("GET", "/v1/namespaces"),
    e("PUT POST", "/v1/namespace"),
    e("GET", "/v1/namespace/:namespace"),
    e("PUT POST", "/v1/namespace/:namespace"),
    e("DELETE", "/v1/namespace/:namespace"),
    e("PUT POST", "/v1/search"),
    e("PUT POST", "/v1/search/fuzzy"),
    u("GET", "/v1/scaling/policies"),
    u("GET", "/v1/scaling/policy/:policy_id"),
    e("GET", "/v1/event/stream"),

    // Operator and system.
    u("*", "/v1/operator/license"),
    u("GET", "/v1/operator/raft/configuration"),
    u("DELETE", "/v1/operator/raft/peer"),
    u("GET", "/v1/operator/keyring/keys"),
    u("DELETE", "/v1/operator/keyring/key/:key_id"),
    u("PUT POST", "/v1/operator/keyring/rotate"),
    u("*", "/v1/operator/autopilot/configuration"),
    u("*", "/v1/operator/autopilot/health"),
    u("*", "/v1/operator/snapshot"),
    u("*", "/v1/operator/upgrade-check/:check+"),
    u("*", "/v1/operator/utilization"),
    e("GET", "/v1/operator/scheduler/configuration"),
    e("PUT POST", "/v1/operator/scheduler/configuration"),
    e("*", "/v1/system/gc"),
    e("*", "/v1/system/reconcile/summaries"),

    // Enterprise only: Nomad CE answers these itself with a 501.
    u("*", "/v1/sentinel/policies", ENTERPRISE),
    u("*", "/v1/sentinel/policy/:policy_name*", ENTERPRISE),
    u("*", "/v1/quotas", ENTERPRISE),
    u("*", "/v1/quota-usages", ENTERPRISE),
    u("*", "/v1/quota", ENTERPRISE),
    u("*", "/v1/quota/:spec_name*", ENTERPRISE),
    u("*", "/v1/recommendation", ENTERPRISE),
    u("*", "/v1/recommendations", ENTERPRISE),
    u("*", "/v1/recommendations/apply", ENTERPRISE),
    u("*", "/v1/recommendation/:recommendation_id*", ENTERPRISE),
  ],
};

const matcher = new RouteMatcher(SCHEDULER_ROUTES);

/** Nomad's style for a route standin does not emulate: 501, plain text; undefined for every other request. */
export function unemulatedSchedulerRoute(method: string, path: string): Response | undefined {
  const match = matcher.match(method, path);
  if (match.kind !== "unemulated") return undefined;
  return textResponse(501, match.entry.productAnswer ?? unemulatedMessage(SCHEDULER_ROUTES, method, match.entry));
}
