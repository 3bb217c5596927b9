/**
 * The agent's service endpoints (Consul's agent/agent_endpoint.go):
 * register, deregister and maintenance of the agent's own services, the
 * list and the single view (hash-based blocking), the local health views
 * (200/429/503 with `X-Consul-Reason`), and node maintenance. The services
 * live on the agent's node in the shared catalog; the agent-local part of
 * their checks is agent-local.ts.
 *
 * Health checks of any kind are accepted and stored with their Type; only
 * TTL checks change by themselves (on the virtual clock). HTTP, TCP, gRPC,
 * script and other checks are never run: their status stays as registered
 * until the control API (or a TTL-style update) sets it.
 */
import { formatGoDuration } from "../core/durations.js";
import { blockingTimeoutMs, runBlockingQuery, SPEC_BLOCKING_LIMITS } from "../core/blocking.js";
import { parseBlockingParams } from "../http/blocking-params.js";
import { textResponse } from "../http/respond.js";
import { checkRow } from "./catalog.js";
import { decodingRequest, parseGoJSON } from "./decode.js";
import { badRequest, RegistryError, serverError, type RequestContext, type Router } from "./http.js";
import type { RegistryApi } from "./api.js";
import { NODE_MAINTENANCE_CHECK, SERVICE_MAINTENANCE_PREFIX, type AgentLocal, type CheckFields } from "./agent-local.js";
import { agentJson, agentServiceView, aggregatedStatus, apiHealthCheckView, contentHash, emptyOk, enableParam } from "./agent-views.js";
import { checkTypeName, decodeServiceDefinition, isAnyAddress, metaError, taggedAddressError, validateCheckType, weightsError, type CheckType } from "./service-definition.js";
import { TABLES, type ServiceAddress, type ServiceRow } from "./state.js";
import { registryFilter } from "./filter.js";
import { AGENT_SERVICE_FILTER } from "./filter-schemas.js";

const CHECK_STATUSES = ["passing", "warning", "critical"];
const SERVICE_MAINTENANCE_NOTES = "Maintenance mode is enabled for this service, but no reason was provided. This is a default message.";
const NODE_MAINTENANCE_NOTES = "Maintenance mode is enabled for this node, but no reason was provided. This is a default message.";

export function registerAgentServiceRoutes(router: Router, api: RegistryApi, local: AgentLocal): void {
  const { ctx } = api;
  const datacenter = () => api.config().datacenter;

  router.register("/v1/agent/service/register", ["PUT"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const text = await rc.c.req.text();
    const def = decodingRequest(() => decodeServiceDefinition(parseGoJSON(text, rc.c.req.raw)));
    if (def.Name === "") throw badRequest("Missing service name");
    if (isAnyAddress(def.Address)) throw badRequest("Invalid service address");
    const authz = api.authorize(rc);
    const weightsProblem = def.Weights && weightsError(def.Weights);
    if (weightsProblem) throw badRequest(`Invalid Weights: ${weightsProblem}`);
    const metaProblem = metaError(def.Meta);
    if (metaProblem) throw badRequest(`Invalid Service Meta: ${metaProblem}`);
    if (def.ConnectNative && def.Port === 0 && def.SocketPath === "") {
      throw badRequest("Validation failed: 1 error occurred:\n\t* Port or SocketPath must be set for a Connect native service.\n\n");
    }
    const checkTypes = [...(def.Check && !def.Check.empty ? [def.Check] : []), ...def.Checks];
    for (const check of checkTypes) {
      const problem = validateCheckType(check);
      if (problem) throw badRequest(`Invalid check: ${problem}`);
    }
    if (checkTypes.some((c) => c.Status !== "" && !CHECK_STATUSES.includes(c.Status))) throw badRequest("Status for checks must 'passing', 'warning', 'critical'");
    authz.require("service", def.Name, "write");

    const id = def.ID || def.Name;
    const tagged = withDefaultTaggedAddresses(def.TaggedAddresses, def.Address, def.Port);
    const taggedProblem = taggedAddressError(tagged);
    if (taggedProblem) throw serverError(taggedProblem);
    const node = local.node();
    if (!api.state.findNode(node)) throw serverError(`agent node "${node}" is not in the catalog`);
    const replaceChecks = rc.query.has("replace-existing-checks") && ["", "true"].includes(rc.query.get("replace-existing-checks")!);

    ctx.store.write(() => {
      api.state.putService({
        Node: node,
        Kind: def.Kind,
        ID: id,
        Service: def.Name,
        Tags: def.Tags,
        Address: def.Address,
        TaggedAddresses: tagged,
        Meta: def.Meta,
        Port: def.Port,
        SocketPath: def.SocketPath,
        Weights: def.Weights ?? { Passing: 1, Warning: 1 },
        EnableTagOverride: def.EnableTagOverride,
      });
      const kept = new Set<string>();
      checkTypes.forEach((check, i) => {
        const checkId = check.CheckID || (checkTypes.length > 1 ? `service:${id}:${i + 1}` : `service:${id}`);
        kept.add(checkId);
        // A check registered again keeps its status and output (Consul's checkStateSnapshot).
        const previous = local.findCheck(checkId);
        const row = serviceCheckRow(node, id, def.Name, checkId, check);
        local.putCheck(previous ? { ...row, Status: previous.Status, Output: previous.Output } : row, {
          Type: row.Type,
          ttlMs: nanosToMs(check.TTL),
          deregisterAfterMs: nanosToMs(check.DeregisterCriticalServiceAfter),
        });
      });
      if (replaceChecks) {
        for (const check of local.checksOfServiceId(id)) if (!kept.has(check.CheckID)) local.removeCheck(check.CheckID);
      }
    });
    return emptyOk();
  });

  router.register("/v1/agent/service/deregister/", ["PUT"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const service = vetServiceUpdate(rc, api, local, rc.rest);
    ctx.store.write(() => local.removeService(service.ID));
    return emptyOk();
  });

  router.register("/v1/agent/service/maintenance/", ["PUT"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    if (rc.rest === "") throw badRequest("Missing service ID");
    const enable = enableParam(rc);
    const reason = rc.query.get("reason") ?? "";
    const authz = api.authorize(rc);
    const service = local.findService(rc.rest);
    if (!service) throw new RegistryError(404, `No service registered with ID ${JSON.stringify(rc.rest)}`);
    authz.require("service", service.Service, "write");
    const checkId = `${SERVICE_MAINTENANCE_PREFIX}${service.ID}`;
    ctx.store.write(() => {
      if (!enable) {
        if (local.findCheck(checkId)) local.removeCheck(checkId);
        return;
      }
      // Already in maintenance: nothing changes, not even the reason.
      if (local.findCheck(checkId)) return;
      const row = checkRow({
        Node: local.node(),
        CheckID: checkId,
        Name: "Service Maintenance Mode",
        Notes: reason || SERVICE_MAINTENANCE_NOTES,
        Status: "critical",
        ServiceID: service.ID,
        ServiceName: service.Service,
      });
      local.putCheck({ ...row, Type: "maintenance" }, { Type: "maintenance", ttlMs: 0, deregisterAfterMs: 0 });
    });
    return emptyOk();
  });

  router.register("/v1/agent/maintenance", ["PUT"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const enable = enableParam(rc);
    const reason = rc.query.get("reason") ?? "";
    api.authorize(rc).require("node", local.node(), "write");
    ctx.store.write(() => {
      if (!enable) {
        if (local.findCheck(NODE_MAINTENANCE_CHECK)) local.removeCheck(NODE_MAINTENANCE_CHECK);
        return;
      }
      if (local.findCheck(NODE_MAINTENANCE_CHECK)) return;
      const row = checkRow({ Node: local.node(), CheckID: NODE_MAINTENANCE_CHECK, Name: "Node Maintenance Mode", Notes: reason || NODE_MAINTENANCE_NOTES, Status: "critical" });
      local.putCheck({ ...row, Type: "maintenance" }, { Type: "maintenance", ttlMs: 0, deregisterAfterMs: 0 });
    });
    return emptyOk();
  });

  // Consul 1.20.2+ (#21950): ACLs first (the header counts what they removed), then the expression over
  // api.AgentService, the map's values; the filter itself is created (and a bad one refused) before either.
  router.register("/v1/agent/services", ["GET"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const authz = api.authorize(rc);
    const keep = registryFilter<Record<string, unknown>>(rc, AGENT_SERVICE_FILTER);
    const all = sortById(local.services());
    const visible = all.filter((s) => authz.allowed("service", s.Service, "read"));
    const headers: Record<string, string> = {};
    if (visible.length < all.length && authz.presented) rc.names.put(headers, "Results-Filtered-By-ACLs", "true");
    const entries = visible.map((s) => [s.ID, agentServiceView(s, datacenter())] as const);
    return agentJson(rc, Object.fromEntries(keep ? entries.filter(([, view]) => keep(view)) : entries), 200, headers);
  });

  router.register("/v1/agent/service/", ["GET"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const blocking = parseBlockingParams(rc.query);
    if (typeof blocking === "string") throw badRequest(blocking);
    const id = rc.rest;
    const authz = api.authorize(rc);
    const hash = rc.query.get("hash") ?? "";
    const look = () => {
      const service = local.findService(id);
      if (!service) return undefined;
      const view = agentServiceView(service, datacenter());
      return { service, view, hash: contentHash(view) };
    };
    // Consul's LocalBlockingQuery: with a hash, wait until the service's hash differs from it (or
    // it goes), or the wait ends. As a blocking query: index 2 = "differs", 1 = "same as asked".
    const result = await runBlockingQuery({
      watchers: ctx.watchers,
      clock: ctx.clock,
      tables: [TABLES.services],
      minIndex: hash === "" ? 0 : 1,
      timeoutMs: hash === "" ? 0 : blockingTimeoutMs(blocking.waitMs, SPEC_BLOCKING_LIMITS, ctx.ids),
      signal: () => rc.c.req.raw.signal,
      run: () => {
        const found = look();
        return { index: found && found.hash === hash ? 1 : 2, value: found };
      },
    });
    const found = result.value;
    if (!found) throw new RegistryError(404, `unknown service ID: ${id}`);
    authz.require("service", found.service.Service, "read");
    return agentJson(rc, agentServiceView(found.service, datacenter(), found.hash), 200, contentHashHeader(rc, found.hash));
  });

  router.register("/v1/agent/health/service/id/", ["GET"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const id = rc.rest;
    if (id === "") throw badRequest("Missing serviceID");
    const text = wantsText(rc);
    const authz = api.authorize(rc);
    const service = local.findService(id);
    if (!service) {
      const reason = `ServiceId ${id} not found`;
      return healthAnswer(rc, text, 404, reason, text ? reason : { AggregatedStatus: "critical", Service: null, Checks: null });
    }
    authz.require("service", service.Service, "read");
    const info = healthInfo(service);
    return healthAnswer(rc, text, info.code, info.status, text ? info.status : info.body);
  });

  router.register("/v1/agent/health/service/name/", ["GET"], (rc) => {
    api.acceptEnterpriseMeta(rc);
    const name = rc.rest;
    if (name === "") throw badRequest("Missing service Name");
    const text = wantsText(rc);
    api.authorize(rc).require("service", name, "read");
    const instances = sortById(local.services().filter((s) => s.Service === name));
    if (instances.length === 0) {
      const reason = `ServiceName ${name} Not Found`;
      return healthAnswer(rc, text, 404, reason, text ? reason : []);
    }
    const infos = instances.map(healthInfo);
    // The worst instance decides (200 < 429 < 503).
    const worst = infos.reduce((a, b) => (b.code > a.code ? b : a));
    return healthAnswer(rc, text, worst.code, worst.status, text ? worst.status : infos.map((i) => i.body));
  });

  function healthInfo(service: ServiceRow) {
    const checks = local.checksForService(service.ID);
    const status = aggregatedStatus(checks);
    const code = status === "passing" ? 200 : status === "warning" ? 429 : 503;
    return { code, status, body: { AggregatedStatus: status, Service: agentServiceView(service, datacenter()), Checks: checks.map(apiHealthCheckView) } };
  }
}

/** The header carrying the service's hash, under every name the registry answers with. */
function contentHashHeader(rc: RequestContext, hash: string): Record<string, string> {
  const headers: Record<string, string> = {};
  rc.names.put(headers, "ContentHash", hash);
  return headers;
}

/** Consul's CodeWithPayloadError: the status, `X-Consul-Reason`, and a text or JSON body. */
function healthAnswer(rc: RequestContext, text: boolean, code: number, reason: string, body: unknown): Response {
  const headers: Record<string, string> = {};
  rc.names.put(headers, "Reason", reason);
  if (text) return textResponse(code, body as string, { ...headers, "Content-Type": "text/plain" });
  return agentJson(rc, body, code, headers);
}

/** returnTextPlain: `?format=text`, or (with no format) an Accept header starting with text/plain. */
function wantsText(rc: RequestContext): boolean {
  const format = rc.query.get("format");
  if (format) return format === "text";
  return (rc.c.req.header("Accept") ?? "").startsWith("text/plain");
}

/**
 * vetServiceUpdateWithAuthorizer: the service must exist (404, Consul's
 * text), and the token may write it. From Consul 1.11's agent endpoint, as
 * remembered, not re-read: UNVERIFIED for 1.17 (the reference's open
 * question 1; the docs say an unknown ID is ignored).
 */
function vetServiceUpdate(rc: RequestContext, api: RegistryApi, local: AgentLocal, id: string): ServiceRow {
  const authz = api.authorize(rc);
  const service = local.findService(id);
  if (!service) throw new RegistryError(404, `Unknown service ID ${JSON.stringify(id)}. Ensure that the service ID is passed, not the service name.`);
  authz.require("service", service.Service, "write");
  return service;
}

/** addServiceInternal's default tagged addresses: lan_ipv4/wan_ipv4 (or the ipv6 pair) from an IP Address, unless given. */
function withDefaultTaggedAddresses(given: Record<string, ServiceAddress> | null, address: string, port: number): Record<string, ServiceAddress> | null {
  const family = /^\d{1,3}(\.\d{1,3}){3}$/.test(address) ? "ipv4" : address.includes(":") && !address.includes("/") ? "ipv6" : undefined;
  const out = { ...(given ?? {}) };
  if (family) for (const key of [`lan_${family}`, `wan_${family}`]) out[key] ??= { Address: address, Port: port };
  return Object.keys(out).length > 0 ? out : null;
}

function serviceCheckRow(node: string, serviceId: string, serviceName: string, checkId: string, check: CheckType): CheckFields {
  const base = checkRow({
    Node: node,
    CheckID: checkId,
    Name: check.Name || `Service '${serviceName}' check`,
    Status: check.Status || "critical",
    Notes: check.Notes,
    ServiceID: serviceId,
    ServiceName: serviceName,
  });
  return {
    ...base,
    Type: checkTypeName(check),
    // A service's embedded check leaves an unset interval or timeout empty.
    Interval: check.Interval > 0 ? formatGoDuration(BigInt(check.Interval)) : "",
    Timeout: check.Timeout > 0 ? formatGoDuration(BigInt(check.Timeout)) : "",
  };
}

export function nanosToMs(ns: number): number {
  return ns > 0 ? Math.max(1, Math.floor(ns / 1_000_000)) : 0;
}

function sortById(services: ServiceRow[]): ServiceRow[] {
  return [...services].sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
}
