/**
 * The catalog pieces sessions depend on: nodes and their health checks
 * (`/v1/catalog/register`, `/deregister`, `/nodes`, `/v1/health/node/:node`).
 * A check turning critical, a removed check and a removed node invalidate
 * the sessions bound to them.
 */
import { decodeStruct, decodingRequest, parseGoJSON, type FieldType } from "./decode.js";
import { badRequest, serverError, type RequestContext, type Router } from "./http.js";
import type { RegistryApi } from "./api.js";
import { filterRows, registryFilter } from "./filter.js";
import { NODE_FILTER } from "./filter-schemas.js";
import { TABLES, type CheckRow, type NodeRow } from "./state.js";

const CHECK_STATUSES = ["passing", "warning", "critical", "maintenance"];

const REGISTER_FIELDS = {
  Datacenter: "string",
  ID: "string",
  Node: "string",
  Address: "string",
  TaggedAddresses: "map[string]string",
  NodeMeta: "map[string]string",
  Check: "object",
  Checks: "[]object",
  SkipNodeUpdate: "bool",
} as const;

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
    api.requireDatacenter((body.Datacenter as string) || rc.query.get("dc") || undefined);
    const node = (body.Node as string) ?? "";
    const address = (body.Address as string) ?? "";
    if (node === "" || address === "") throw serverError("Must provide node and address");
    api.authorize(rc).require("node", node, "write");
    const checks = [...(body.Check ? [body.Check] : []), ...((body.Checks as object[]) ?? [])].map((raw) => {
      const c = decodeCheck(raw);
      const checkId = c.CheckID || c.Name || "";
      if (checkId === "") throw serverError("Missing check ID");
      if (c.Status && !CHECK_STATUSES.includes(c.Status)) throw serverError(`Invalid check status: "${c.Status}"`);
      return { ...c, Node: node, CheckID: checkId };
    });
    ctx.store.write(() => {
      if (!body.SkipNodeUpdate || !state.findNode(node)) {
        state.putNode(
          nodeRow(api, {
            ID: body.ID as string | undefined,
            Node: node,
            Address: address,
            TaggedAddresses: body.TaggedAddresses as Record<string, string> | undefined,
            Meta: body.NodeMeta as Record<string, string> | undefined,
          }),
        );
      }
      for (const check of checks) state.putCheck(checkRow(check));
    });
    return true;
  });

  router.register("/v1/catalog/deregister", ["PUT"], async (rc) => {
    api.acceptEnterpriseMeta(rc);
    const body = await decodeBody(rc, { Datacenter: "string", Node: "string", CheckID: "string", ServiceID: "string" }, "structs.DeregisterRequest");
    api.requireDatacenter((body.Datacenter as string) || rc.query.get("dc") || undefined);
    const node = (body.Node as string) ?? "";
    if (node === "") throw serverError("Must provide node");
    api.authorize(rc).require("node", node, "write");
    ctx.store.write(() => {
      if (body.CheckID) state.removeCheck(node, body.CheckID as string);
      else if (!body.ServiceID) state.removeNode(node);
    });
    return true;
  });

  router.register("/v1/catalog/nodes", ["GET"], (rc) => {
    const options = rc.parse();
    api.acceptEnterpriseMeta(rc);
    api.requireDatacenterForRead(options);
    const keep = registryFilter<NodeRow>(rc, NODE_FILTER);
    const authz = api.authorize(rc);
    return api.blockingRead(rc, options, [TABLES.nodes], () => {
      const all = state.nodes.values();
      const sorted = filterRows(
        [...all].sort((a, b) => (a.Node < b.Node ? -1 : a.Node > b.Node ? 1 : 0)),
        keep,
      );
      const value = sorted.filter((n) => authz.allowed("node", n.Node, "read"));
      return { value, filtered: value.length < sorted.length };
    });
  });

  router.register("/v1/health/node/", ["GET"], (rc) => {
    const options = rc.parse();
    api.acceptEnterpriseMeta(rc);
    if (rc.rest === "") throw badRequest("Missing node name");
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    return api.blockingRead(rc, options, [TABLES.checks], () => {
      const checks = state.checksOf(rc.rest);
      const value = checks.filter((c) => authz.allowed("node", c.Node, "read"));
      return { value, filtered: value.length < checks.length };
    });
  });
}

async function decodeBody(rc: RequestContext, fields: Readonly<Record<string, FieldType>>, typeName: string): Promise<Record<string, unknown>> {
  const text = await rc.c.req.text();
  return decodingRequest(() => decodeStruct(parseGoJSON(text, rc.c.req.raw), fields, typeName));
}

function decodeCheck(raw: unknown): CheckInput {
  return decodingRequest(() => decodeStruct(raw, CHECK_FIELDS, "structs.HealthCheck") as unknown as CheckInput);
}
