/**
 * What the agent endpoints send: `api.AgentService` and the agent's
 * `structs.HealthCheck`/`api.HealthCheck` in their Go field order, the
 * aggregated status of a set of checks, and the bare answers of Consul's
 * `wrap` (a write that returns nothing: 200, no body, no Content-Type).
 */
import { createHash } from "node:crypto";
import { encodeJSON } from "../core/json.js";
import { wantsPretty } from "../http/pretty.js";
import { APPLICATION_JSON, bufferedResponse } from "../http/respond.js";
import { badRequest, type RequestContext } from "./http.js";
import { NODE_MAINTENANCE_CHECK, SERVICE_MAINTENANCE_PREFIX } from "./agent-local.js";
import type { CheckRow, ServiceRow } from "./state.js";

/** A write that returns nil: 200 with an empty body. */
export function emptyOk(): Response {
  return bufferedResponse(null, { status: 200 });
}

/** A JSON answer with Consul's encoding (HTML-escaped, `?pretty` indented) and extra headers. */
export function agentJson(rc: RequestContext, value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const body = encodeJSON(value, { escapeHTML: true, pretty: wantsPretty(rc.c.req.url, "registry") });
  return bufferedResponse(body, { status, headers: { "Content-Type": APPLICATION_JSON, ...headers } });
}

/** `api.AgentService` as buildAgentService fills it (Kind, SocketPath, TaggedAddresses and ContentHash only when set). */
export function agentServiceView(row: ServiceRow, datacenter: string, contentHash?: string): Record<string, unknown> {
  const tagged = row.TaggedAddresses && Object.keys(row.TaggedAddresses).length > 0 ? sortedKeys(row.TaggedAddresses) : undefined;
  return {
    ...(row.Kind !== "" ? { Kind: row.Kind } : {}),
    ID: row.ID,
    Service: row.Service,
    Tags: row.Tags,
    Meta: row.Meta,
    Port: row.Port,
    Address: row.Address,
    ...(row.SocketPath !== "" ? { SocketPath: row.SocketPath } : {}),
    ...(tagged ? { TaggedAddresses: tagged } : {}),
    // buildAgentService: a Passing weight below 1 shows as 1.
    Weights: { Passing: row.Weights.Passing <= 0 ? 1 : row.Weights.Passing, Warning: row.Weights.Warning },
    EnableTagOverride: row.EnableTagOverride,
    ...(contentHash !== undefined ? { ContentHash: contentHash } : {}),
    Datacenter: datacenter,
  };
}

/**
 * A stable hash of the service as sent (Consul's is hashstructure's; any
 * stable one will do, as long as body and header agree): 64 bits of
 * SHA-256 in lowercase hex, without leading zeros as Go's `%x` prints it.
 */
export function contentHash(view: Record<string, unknown>): string {
  const digest = createHash("sha256").update(encodeJSON(view)).digest("hex").slice(0, 16);
  return BigInt(`0x${digest}`).toString(16);
}

/** The agent's copy of a check (local state): its raft indexes are 0. */
export function agentCheckView(row: CheckRow): CheckRow {
  return { ...row, ServiceTags: row.ServiceTags ?? [], CreateIndex: 0, ModifyIndex: 0 };
}

/** The zero `api.HealthCheckDefinition` as its MarshalJSON writes it (the durations first, as strings). */
const ZERO_API_DEFINITION = {
  Interval: "0s",
  Timeout: "0s",
  DeregisterCriticalServiceAfter: "0s",
  HTTP: "",
  Header: null,
  Method: "",
  Body: "",
  TLSServerName: "",
  TLSSkipVerify: false,
  TCP: "",
  TCPUseTLS: false,
  UDP: "",
  GRPC: "",
  OSService: "",
  GRPCUseTLS: false,
};

/** The `api.HealthCheck` agentHealthService builds by hand: Type, Definition and the indexes stay zero. */
export function apiHealthCheckView(row: CheckRow): Record<string, unknown> {
  return {
    Node: row.Node,
    CheckID: row.CheckID,
    Name: row.Name,
    Status: row.Status,
    Notes: row.Notes,
    Output: row.Output,
    ServiceID: row.ServiceID,
    ServiceName: row.ServiceName,
    // A node check's tags are nil in the agent's state.
    ServiceTags: row.ServiceID === "" ? null : row.ServiceTags,
    Type: "",
    ExposedPort: 0,
    Definition: ZERO_API_DEFINITION,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** api.HealthChecks.AggregatedStatus: maintenance over critical over warning over passing; an unknown status gives "". */
export function aggregatedStatus(checks: readonly CheckRow[]): string {
  let warning = false;
  let critical = false;
  let maintenance = false;
  for (const check of checks) {
    if (check.CheckID === NODE_MAINTENANCE_CHECK || check.CheckID.startsWith(SERVICE_MAINTENANCE_PREFIX)) {
      maintenance = true;
      continue;
    }
    if (check.Status === "warning") warning = true;
    else if (check.Status === "critical") critical = true;
    else if (check.Status !== "passing") return "";
  }
  return maintenance ? "maintenance" : critical ? "critical" : warning ? "warning" : "passing";
}

/** strconv.ParseBool's accepted spellings. */
const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** The maintenance endpoints' `?enable=` (required, a Go bool). */
export function enableParam(rc: RequestContext): boolean {
  if (!rc.query.has("enable")) throw badRequest("Missing value for enable");
  const raw = rc.query.get("enable")!;
  if (TRUE.has(raw)) return true;
  if (FALSE.has(raw)) return false;
  throw badRequest(`Invalid value for enable: ${JSON.stringify(raw)}`);
}

function sortedKeys<T>(map: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
