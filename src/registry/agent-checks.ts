/**
 * The agent's check endpoints (Consul's agent/agent_endpoint.go):
 * register and deregister a check, the TTL updates (pass, warn, fail,
 * update) and the list of the agent's checks. The TTL clock and the reaper
 * are agent-local.ts's.
 */
import { formatGoDuration } from "../core/durations.js";
import { jsonKind, unmarshalTypeError } from "../core/go/json-errors.js";
import { checkRow } from "./catalog.js";
import { decodingRequest, parseGoJSON, DecodeError } from "./decode.js";
import { badRequest, RegistryError, serverError, type RequestContext, type Router } from "./http.js";
import type { RegistryApi } from "./api.js";
import { capOutput, type AgentLocal } from "./agent-local.js";
import { agentCheckView, agentJson, emptyOk } from "./agent-views.js";
import { nanosToMs } from "./agent-services.js";
import { filterRows, registryFilter } from "./filter.js";
import { HEALTH_CHECK_FILTER } from "./filter-schemas.js";
import { checkTypeName, decodeCheckDefinition, validateCheckType } from "./service-definition.js";
import type { CheckRow } from "./state.js";

const CHECK_STATUSES = ["passing", "warning", "critical"];

export function registerAgentCheckRoutes(router: Router, api: RegistryApi, local: AgentLocal): void {
  const { ctx } = api;

  // Consul 1.20.2+ (#21950): ACLs first (the header counts what they removed), then the expression over
  // structs.HealthCheck. AgentChecks creates its filter untyped, so only a parse error fails up front.
  router.register("/v1/agent/checks", ["GET"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const authz = api.authorize(rc);
    const keep = registryFilter<CheckRow>(rc, HEALTH_CHECK_FILTER, { validateOnFirstRow: true });
    const all = local.agentChecks();
    const visible = all.filter((c) => (c.ServiceName !== "" ? authz.allowed("service", c.ServiceName, "read") : authz.allowed("node", c.Node, "read")));
    const headers: Record<string, string> = {};
    if (visible.length < all.length && authz.presented) rc.names.put(headers, "Results-Filtered-By-ACLs", "true");
    const views = filterRows(visible.map(agentCheckView), keep);
    return agentJson(rc, Object.fromEntries(views.map((c) => [c.CheckID, c])), 200, headers);
  });

  router.register("/v1/agent/check/register", ["PUT"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const text = await rc.c.req.text();
    const def = decodingRequest(() => decodeCheckDefinition(parseGoJSON(text, rc.c.req.raw)));
    if (def.Name === "") throw badRequest("Missing check name");
    if (def.Status !== "" && !CHECK_STATUSES.includes(def.Status)) throw badRequest("Bad check status");
    const problem = validateCheckType(def);
    if (problem) throw badRequest(`Invalid check: ${problem}`);
    const service = def.ServiceID === "" ? undefined : local.findService(def.ServiceID);
    if (def.ServiceID !== "" && !service) throw new RegistryError(404, `ServiceID ${JSON.stringify(def.ServiceID)} does not exist`);
    const authz = api.authorize(rc);
    if (service) authz.require("service", service.Service, "write");
    else authz.require("node", local.node(), "write");

    const row = {
      ...checkRow({
        Node: local.node(),
        CheckID: def.CheckID || def.Name,
        Name: def.Name,
        Status: def.Status || "critical",
        Notes: def.Notes,
        ServiceID: def.ServiceID,
        ServiceName: service?.Service ?? "",
      }),
      Type: checkTypeName(def),
      // CheckDefinition.HealthCheck writes both durations with Duration.String(), "0s" when unset.
      Interval: formatGoDuration(BigInt(def.Interval)),
      Timeout: formatGoDuration(BigInt(def.Timeout)),
    };
    ctx.store.write(() =>
      local.putCheck(row, {
        Type: row.Type,
        ttlMs: nanosToMs(def.TTL),
        // Only a service's check can take its service away.
        deregisterAfterMs: service ? nanosToMs(def.DeregisterCriticalServiceAfter) : 0,
      }),
    );
    return emptyOk();
  });

  router.register("/v1/agent/check/deregister/", ["PUT"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const check = vetCheckUpdate(rc, api, local, rc.rest);
    ctx.store.write(() => local.removeCheck(check.CheckID));
    return emptyOk();
  });

  for (const [path, status] of [
    ["pass", "passing"],
    ["warn", "warning"],
    ["fail", "critical"],
  ] as const) {
    router.register(`/v1/agent/check/${path}/`, ["PUT"], (rc) => {
      api.acceptEnterpriseMeta(rc);
      updateTTL(rc, rc.rest, status, rc.query.get("note") ?? "");
      return emptyOk();
    });
  }

  router.register("/v1/agent/check/update/", ["PUT"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const text = await rc.c.req.text();
    const update = decodingRequest(() => decodeCheckUpdate(parseGoJSON(text, rc.c.req.raw)));
    if (!CHECK_STATUSES.includes(update.Status)) throw badRequest(`Invalid check status: '${update.Status}'`);
    updateTTL(rc, rc.rest, update.Status, update.Output);
    return emptyOk();
  });

  /** Agent.updateTTLCheck after the ACL vetting: only a TTL check takes an update; the output is capped. */
  function updateTTL(rc: RequestContext, checkId: string, status: string, output: string): void {
    vetCheckUpdate(rc, api, local, checkId);
    const agentCheck = local.checks.get(checkId);
    if (!agentCheck || agentCheck.ttlMs <= 0) throw serverError(`CheckID ${JSON.stringify(checkId)} does not have associated TTL`);
    ctx.store.write(() => local.setStatus(checkId, status, capOutput(output)));
  }
}

/**
 * vetCheckUpdateWithAuthorizer: the check must be the agent's (404, with
 * Consul's text as remembered from its agent endpoint: UNVERIFIED wording
 * for 1.17), and the token may write its service (or, for a node check,
 * the node).
 */
function vetCheckUpdate(rc: RequestContext, api: RegistryApi, local: AgentLocal, checkId: string): CheckRow {
  const authz = api.authorize(rc);
  const check = local.findCheck(checkId);
  if (!check) throw new RegistryError(404, `Unknown check ID ${JSON.stringify(checkId)}. Ensure that the check ID is passed, not the check name.`);
  if (check.ServiceName !== "") authz.require("service", check.ServiceName, "write");
  else authz.require("node", local.node(), "write");
  return check;
}

/** checkUpdate's body, strictly: {"Status", "Output"}. */
function decodeCheckUpdate(body: unknown): { Status: string; Output: string } {
  if (body === null) return { Status: "", Output: "" };
  if (typeof body !== "object" || Array.isArray(body)) throw new DecodeError(unmarshalTypeError(jsonKind(body), "agent.checkUpdate"));
  const out = { Status: "", Output: "" };
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    const field = key.toLowerCase() === "status" ? "Status" : key.toLowerCase() === "output" ? "Output" : undefined;
    if (!field) throw new DecodeError(`json: unknown field ${JSON.stringify(key)}`);
    if (value === null) continue;
    if (typeof value !== "string") throw new DecodeError(unmarshalTypeError(jsonKind(value), "string", `checkUpdate.${field}`));
    out[field] = value;
  }
  return out;
}
