/**
 * Catalog writes and node reads: `/v1/catalog/register` (a node, a service
 * instance on it, checks), `/deregister` (a service with its checks, a check,
 * or the whole node), `/nodes` and `/v1/health/node/:node`. A check turning
 * critical, a removed check, service or node invalidate the sessions bound
 * to them. The service reads are in catalog-services.ts and health.ts.
 */
import { DecodeError, decodeStruct, decodingRequest, parseGoJSON, type FieldType } from "./decode.js";
import { badRequest, RegistryError, serverError, type RequestContext, type Router } from "./http.js";
import type { RegistryApi } from "./api.js";
import { filterRows, registryFilter } from "./filter.js";
import { HEALTH_CHECK_FILTER, NODE_FILTER } from "./filter-schemas.js";
import type { Authorizer } from "./acl.js";
import { jsonKind, unmarshalTypeError } from "../core/go/json-errors.js";
import { checkView, consistencyLevel, filterChecks, nodeMetaFilter, satisfiesMeta, withConsistency } from "./service-views.js";
import { TABLES, type CheckRow, type NodeRow, type ServiceAddress, type ServiceRow } from "./state.js";
import { metaError } from "./service-definition.js";

const CHECK_STATUSES = ["passing", "warning", "critical", "maintenance"];

const REGISTER_FIELDS = {
  Datacenter: "string",
  ID: "string",
  Node: "string",
  Address: "string",
  TaggedAddresses: "map[string]string",
  NodeMeta: "map[string]string",
  Service: "object",
  Check: "object",
  Checks: "[]object",
  SkipNodeUpdate: "bool",
} as const;

/** `structs.NodeService` as a register body names it (`Service` is the name; the int, struct and map fields are checked in decodeService). */
const SERVICE_FIELDS = {
  Kind: "string",
  ID: "string",
  Service: "string",
  Tags: "[]string",
  Address: "string",
  TaggedAddresses: "any",
  Meta: "map[string]string",
  Port: "any",
  SocketPath: "string",
  Weights: "any",
  EnableTagOverride: "bool",
} as const;

/** Consul's structs.ConsulServiceName: the servers' own service, which registration never ACL-checks. */
const CONSUL_SERVICE = "consul";

const CHECK_FIELDS = {
  Node: "string",
  CheckID: "string",
  Name: "string",
  Status: "string",
  Notes: "string",
  Output: "string",
  ServiceID: "string",
  ServiceName: "string",
} as const;

export interface CheckInput {
  Node: string;
  CheckID: string;
  Name?: string;
  Status?: string;
  Notes?: string;
  Output?: string;
  ServiceID?: string;
  ServiceName?: string;
}

/** A check row with the catalog's defaults (an unset status is critical, as Consul's ensureCheckTxn makes it). */
export function checkRow(input: CheckInput): Omit<CheckRow, "CreateIndex" | "ModifyIndex"> {
  return {
    Node: input.Node,
    CheckID: input.CheckID,
    Name: input.Name ?? "",
    Status: input.Status || "critical",
    Notes: input.Notes ?? "",
    Output: input.Output ?? "",
    ServiceID: input.ServiceID ?? "",
    ServiceName: input.ServiceName ?? "",
    ServiceTags: [],
    Type: "",
    Interval: "",
    Timeout: "",
    ExposedPort: 0,
    Definition: {},
  };
}

export function nodeRow(
  api: RegistryApi,
  input: { ID?: string; Node: string; Address?: string; TaggedAddresses?: Record<string, string>; Meta?: Record<string, string> },
): Omit<NodeRow, "CreateIndex" | "ModifyIndex"> {
  const existing = api.state.findNode(input.Node);
  return {
    ID: input.ID ?? existing?.ID ?? "",
    Node: input.Node,
    Address: input.Address ?? existing?.Address ?? "",
    Datacenter: api.config().datacenter,
    TaggedAddresses: input.TaggedAddresses ?? existing?.TaggedAddresses ?? null,
    Meta: input.Meta ?? existing?.Meta ?? null,
  };
}

export function registerCatalogRoutes(router: Router, api: RegistryApi): void {
  const { state, ctx } = api;

  router.register("/v1/catalog/register", ["PUT"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const body = await decodeBody(rc, REGISTER_FIELDS, "structs.RegisterRequest");
    const service = body.Service ? decodeService(body.Service) : undefined;
    api.requireDatacenter((body.Datacenter as string) || rc.query.get("dc") || undefined);
    const authz = api.authorize(rc);
    // Consul's Catalog.Register, in its order: nodePreApply, the address, servicePreApply, the checks, vetRegisterWithACL.
    const node = (body.Node as string) ?? "";
    const address = (body.Address as string) ?? "";
    if (node === "") throw serverError("Must provide node");
    if (address === "" && !body.SkipNodeUpdate) throw serverError("Must provide address if SkipNodeUpdate is not set");
    refuseOversizedMeta(body.NodeMeta as Record<string, string> | null | undefined, service?.Meta);
    if (service) preApplyService(service, authz);
    const checks = [...(body.Check ? [body.Check] : []), ...((body.Checks as object[]) ?? [])].map((raw) => {
      const c = decodeCheck(raw);
      const checkId = c.CheckID || c.Name || "";
      if (checkId === "") throw serverError("Missing check ID");
      if (c.Status && !CHECK_STATUSES.includes(c.Status)) throw serverError(`Invalid check status: "${c.Status}"`);
      return { ...c, Node: c.Node || node, CheckID: checkId };
    });
    const existing = state.findNode(node);
    const nodeUpdate =
      existing && body.SkipNodeUpdate
        ? undefined
        : nodeRow(api, {
            ID: body.ID as string | undefined,
            Node: node,
            Address: address,
            TaggedAddresses: body.TaggedAddresses as Record<string, string> | undefined,
            Meta: body.NodeMeta as Record<string, string> | undefined,
          });
    // Consul writes the node only when it is new or the request changes it (no index churn for a service re-registration).
    const changesNode = nodeUpdate !== undefined && (!existing || !sameNode(existing, nodeUpdate));
    vetRegister(authz, (id) => state.findService(node, id), node, changesNode || !existing, service, checks);
    ctx.store.write(() => {
      if (changesNode) state.putNode(nodeUpdate!);
      if (service) state.putService({ ...service, Node: existing?.Node ?? node });
      for (const check of checks) state.putCheck(checkRow({ ...check, Node: existing?.Node ?? node }));
    });
    return true;
  });

  router.register("/v1/catalog/deregister", ["PUT"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const body = await decodeBody(rc, { Datacenter: "string", Node: "string", CheckID: "string", ServiceID: "string" }, "structs.DeregisterRequest");
    api.requireDatacenter((body.Datacenter as string) || rc.query.get("dc") || undefined);
    const node = (body.Node as string) ?? "";
    if (node === "") throw serverError("Must provide node");
    const authz = api.authorize(rc);
    const serviceId = (body.ServiceID as string) || "";
    const checkId = (body.CheckID as string) || "";
    vetDeregister(authz, state, node, serviceId, checkId);
    // Consul's applyDeregister: a ServiceID wins over a CheckID; with neither, the whole node goes. Unknown ones are no error.
    ctx.store.write(() => {
      if (serviceId !== "") state.removeService(node, serviceId);
      else if (checkId !== "") state.removeCheck(node, checkId);
      else state.removeNode(node);
    });
    return true;
  });

  router.register("/v1/catalog/nodes", ["GET"], async (rc) => {
    const options = rc.parse();
    api.acceptEnterpriseMeta(rc);
    api.requireDatacenterForRead(options);
    const keep = registryFilter<NodeRow>(rc, NODE_FILTER);
    const meta = nodeMetaFilter(rc.query);
    const authz = api.authorize(rc);
    // Consul's ListNodes: NodesByMeta when `node-meta=` is given (same nodes-table index), then the expression, then ACLs.
    const answer = await api.blockingRead(rc, options, [TABLES.nodes], () => {
      const all = [...state.nodes.values()].filter((n) => satisfiesMeta(n.Meta, meta));
      const sorted = filterRows(
        all.sort((a, b) => (a.Node < b.Node ? -1 : a.Node > b.Node ? 1 : 0)),
        keep,
      );
      const value = sorted.filter((n) => authz.allowed("node", n.Node, "read"));
      return { value, filtered: value.length < sorted.length };
    });
    return withConsistency(answer, consistencyLevel(options, rc.query));
  });

  // The node's own checks and its services' (Consul's NodeChecks), filtered as Consul's filterHealthChecks does.
  router.register("/v1/health/node/", ["GET"], async (rc) => {
    const options = rc.parse();
    api.acceptEnterpriseMeta(rc);
    if (rc.rest === "") throw badRequest("Missing node name");
    api.requireDatacenterForRead(options);
    // Consul's NodeChecks creates the filter (over structs.HealthCheck) before resolving the token; since 1.20.2 (#21950) it runs after the ACL filter.
    const keep = registryFilter<CheckRow>(rc, HEALTH_CHECK_FILTER);
    const authz = api.authorize(rc);
    const answer = await api.blockingRead(rc, options, [TABLES.checks], () => filterChecks(authz, state.checksOf(rc.rest).map(checkView), { keep, order: "acl-first" }));
    return withConsistency(answer, consistencyLevel(options, rc.query));
  });
}

async function decodeBody(rc: RequestContext, fields: Readonly<Record<string, FieldType>>, typeName: string): Promise<Record<string, unknown>> {
  const text = await rc.c.req.text();
  return decodingRequest(() => decodeStruct(parseGoJSON(text, rc.c.req.raw), fields, typeName));
}

function decodeCheck(raw: unknown): CheckInput {
  return decodingRequest(() => decodeStruct(raw, CHECK_FIELDS, "structs.HealthCheck") as unknown as CheckInput);
}

type ServiceInput = Omit<ServiceRow, "Node" | "CreateIndex" | "ModifyIndex">;

/**
 * The `Service` of a register body: `structs.NodeService`'s fields (its name
 * is `Service`), checked as Go decodes them; what the state store adds on
 * the way in (structs.ToServiceNode) is filled here: `Tags` `[]` and `Meta`
 * `{}` when absent, `Weights` `{1,1}` when absent or invalid (Consul drops
 * invalid weights silently there).
 */
function decodeService(raw: unknown): ServiceInput {
  const fields: Record<string, unknown> = decodingRequest(() => {
    try {
      const decoded = decodeStruct(raw, SERVICE_FIELDS, "structs.NodeService");
      return {
        ...decoded,
        Port: decoded.Port === undefined ? 0 : goInt(decoded.Port, "Port"),
        Weights: decoded.Weights === undefined ? undefined : weightsOf(decoded.Weights),
        TaggedAddresses: decoded.TaggedAddresses === undefined ? null : taggedAddressesOf(decoded.TaggedAddresses),
      };
    } catch (error) {
      // Go names a nested field by its path from the request (`.Service.Port`).
      if (error instanceof DecodeError) throw new DecodeError(error.message.replace("Go struct field .", "Go struct field .Service."));
      throw error;
    }
  });
  const weights = fields.Weights as ServiceRow["Weights"] | undefined;
  return {
    Kind: (fields.Kind as string) ?? "",
    ID: (fields.ID as string) ?? "",
    Service: (fields.Service as string) ?? "",
    Tags: (fields.Tags as string[] | null) ?? [],
    Address: (fields.Address as string) ?? "",
    TaggedAddresses: fields.TaggedAddresses as Record<string, ServiceAddress> | null,
    Meta: (fields.Meta as Record<string, string> | null) ?? {},
    Port: fields.Port as number,
    SocketPath: (fields.SocketPath as string) ?? "",
    Weights: weights && validWeights(weights) ? weights : { Passing: 1, Warning: 1 },
    EnableTagOverride: (fields.EnableTagOverride as boolean) ?? false,
  };
}

/** A Go `int` field: a JSON number without a fraction. */
function goInt(raw: unknown, field: string): number {
  if (raw === null) return 0;
  if (typeof raw !== "number" || !Number.isInteger(raw)) throw new DecodeError(unmarshalTypeError(typeof raw === "number" ? `number ${raw}` : jsonKind(raw), "int", `.${field}`));
  return raw;
}

function weightsOf(raw: unknown): ServiceRow["Weights"] | undefined {
  if (raw === null) return undefined;
  const fields = decodeStruct(raw, { Passing: "any", Warning: "any" }, "structs.Weights");
  return { Passing: goInt(fields.Passing ?? 0, "Weights.Passing"), Warning: goInt(fields.Warning ?? 0, "Weights.Warning") };
}

function taggedAddressesOf(raw: unknown): Record<string, ServiceAddress> | null {
  if (raw === null) return null;
  if (typeof raw !== "object" || Array.isArray(raw)) throw new DecodeError(unmarshalTypeError(jsonKind(raw), "map[string]structs.ServiceAddress", ".TaggedAddresses"));
  const out: Record<string, ServiceAddress> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const fields = decodeStruct(value, { Address: "string", Port: "any" }, "structs.ServiceAddress");
    out[key] = { Address: (fields.Address as string) ?? "", Port: goInt(fields.Port ?? 0, "TaggedAddresses.Port") };
  }
  return out;
}

/** structs.ValidateWeights. */
function validWeights(w: ServiceRow["Weights"]): boolean {
  return w.Passing >= 1 && w.Warning >= 0 && w.Passing <= 65535 && w.Warning <= 65535;
}

/**
 * The metadata limits the agent applies (structs.validateMetadata: 64 pairs,
 * keys of 128 characters, values of 512), on the catalog too, where Consul
 * applies none: without them one register could store any amount. The
 * `consul-` prefix stays allowed here, as Consul's agents write
 * `consul-network-segment` and `consul-version` through this endpoint.
 */
function refuseOversizedMeta(nodeMeta: Record<string, string> | null | undefined, serviceMeta: Record<string, string> | undefined): void {
  const nodeProblem = nodeMeta ? metaError(nodeMeta, true) : undefined;
  if (nodeProblem) throw badRequest(`Invalid Node Meta: ${nodeProblem}`);
  const serviceProblem = serviceMeta ? metaError(serviceMeta, true) : undefined;
  if (serviceProblem) throw badRequest(`Invalid Service Meta: ${serviceProblem}`);
}

/** Consul's servicePreApply: the ID defaults to the name, a named ID needs a name, no wildcard address, `service:write`. */
function preApplyService(service: ServiceInput, authz: Authorizer): void {
  if (service.ID === "" && service.Service !== "") service.ID = service.Service;
  if (service.ID !== "" && service.Service === "") throw serverError("Must provide service name (Service.Service) when service ID is provided");
  if (["0.0.0.0", "::", "[::]"].includes(service.Address)) throw serverError("Invalid service address");
  if (service.Service !== CONSUL_SERVICE) authz.require("service", service.Service, "write");
}

/**
 * Consul's vetRegisterWithACL: `node:write` only when the node is new or
 * changed (a service may re-post its node's details with `service:write`
 * alone); `service:write` on the service and on the instance it replaces;
 * each check on the request's node, a node check needing `node:write` and a
 * check of another service that service's `service:write`.
 */
function vetRegister(
  authz: Authorizer,
  existing: (serviceId: string) => ServiceRow | undefined,
  node: string,
  needsNode: boolean,
  service: ServiceInput | undefined,
  checks: readonly CheckInput[],
): void {
  if (needsNode) authz.require("node", node, "write");
  if (service) {
    authz.require("service", service.Service, "write");
    const replaced = existing(service.ID);
    if (replaced && !authz.allowed("service", replaced.Service, "write")) throw new RegistryError(403, "Permission denied");
  }
  for (const check of checks) {
    if (check.Node.toLowerCase() !== node.toLowerCase()) throw serverError(`Node '${check.Node}' for check '${check.CheckID}' doesn't match register request node '${node}'`);
    const serviceId = check.ServiceID ?? "";
    if (serviceId === "") {
      authz.require("node", node, "write");
      continue;
    }
    if (service && service.ID === serviceId) continue;
    const other = existing(serviceId);
    if (!other) throw serverError(`Unknown service ID '${serviceId}' for check ID '${check.CheckID}'`);
    authz.require("service", other.Service, "write");
  }
}

/** Consul's vetDeregisterWithACL: `node:write` allows anything on the node; else the service's (or a service check's) `service:write`. */
function vetDeregister(authz: Authorizer, state: RegistryApi["state"], node: string, serviceId: string, checkId: string): void {
  if (authz.allowed("node", node, "write")) return;
  if (serviceId !== "") {
    const service = state.findService(node, serviceId);
    if (!service) throw serverError(`Unknown service ID '${serviceId}'`);
    authz.require("service", service.Service, "write");
  } else if (checkId !== "") {
    const check = state.findCheck(node, checkId);
    if (!check) throw serverError(`Unknown check ID '${checkId}'`);
    if (check.ServiceID !== "") authz.require("service", check.ServiceName, "write");
    else authz.require("node", node, "write");
  } else {
    authz.require("node", node, "write");
  }
}

/** RegisterRequest.ChangesNode, on the row the request would write. */
function sameNode(a: Omit<NodeRow, "CreateIndex" | "ModifyIndex">, b: Omit<NodeRow, "CreateIndex" | "ModifyIndex">): boolean {
  return (
    a.ID === b.ID &&
    a.Node.toLowerCase() === b.Node.toLowerCase() &&
    a.Address === b.Address &&
    a.Datacenter === b.Datacenter &&
    JSON.stringify(a.TaggedAddresses) === JSON.stringify(b.TaggedAddresses) &&
    JSON.stringify(a.Meta) === JSON.stringify(b.Meta)
  );
}
