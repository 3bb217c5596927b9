/**
 * Conformance: the wire-shape oracle. test/oracles/wire reads, by reflection
 * over the api structs at the pinned versions (Nomad v1.9.7's `api` from
 * ../shared/oracle-sources, consul/api v1.34.3 from ../shared/go-clients), the
 * JSON keys each struct's encoder writes. Here standin answers every route the
 * official clients decode into those structs, and each answer's keys are
 * checked against them, recursively. A key the product always writes and
 * standin leaves out is a defect (the client reads a zero value): each one
 * still open is in KNOWN_MISSING with its reason (docs/known-differences.md
 * lists them too), so a new one fails here, and so does an entry that no
 * longer happens. A key only the api struct has (API_ONLY: the server's
 * struct lacks it, so the product never writes it) must stay absent.
 * STANDIN_SKIP_GO=1 skips the suite on a machine without Go.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call, type Answer } from "../support/call.js";
import { checkShape, type OracleSchema, type ShapeFindings } from "./support/wire-shapes.js";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SOURCES = resolve(ROOT, "test/oracles/wire");
const NOMAD_API = resolve(ROOT, "../shared/oracle-sources/nomad-v1.9.7-jobspec2");
const GO_CLIENTS = resolve(ROOT, "../shared/go-clients/gopath");
const BINARY = resolve(ROOT, "node_modules/.cache/standin-conformance/wire-oracle");
const GO = process.env.GO ?? ["/usr/lib/go-1.23/bin/go", "/usr/local/go/bin/go"].find((path) => existsSync(path));
const SKIP = process.env.STANDIN_SKIP_GO === "1";

type Json = Record<string, any>;

/**
 * Keys the product always writes that standin does not send yet, each with
 * why. Keep in step with docs/known-differences.md ("Wire shapes").
 */
const KNOWN_MISSING: Record<string, string> = {};

/**
 * Keys the api structs have that the server's structs do not, so the server
 * never writes them and standin rightly leaves them out (a client reads the
 * zero value from a real server too). Read in hashicorp/nomad's
 * nomad/structs at v1.9.7; each must stay absent from standin's answers.
 */
const API_ONLY: Record<string, string> = {
  "nomad.ServiceCheck.Advertise": "api.ServiceCheck has `advertise` for the jobspec; structs.ServiceCheck has no such field and ApiServicesToStructs drops it",
};

/**
 * Keys standin sends that the api structs do not have. Not a defect by
 * themselves (the products' server structs carry fields their api lacks, and
 * the clients ignore unknown keys), but listed so a new one (a misspelt key,
 * a field a release dropped) fails here. Keep in step with
 * docs/known-differences.md ("Wire shapes").
 */
const KNOWN_EXTRA: Record<string, string> = {
  "consul.AgentCheck.CreateIndex": "structs.HealthCheck's raft index (the agent endpoint encodes the server struct)",
  "consul.AgentCheck.ModifyIndex": "structs.HealthCheck's raft index",
  "consul.AgentCheck.Interval": "structs.HealthCheck's Interval",
  "consul.AgentCheck.Timeout": "structs.HealthCheck's Timeout",
  "consul.AgentCheck.ServiceTags": "structs.HealthCheck's ServiceTags",
  "consul.HealthCheck.Interval": "structs.HealthCheck's Interval",
  "consul.HealthCheck.Timeout": "structs.HealthCheck's Timeout",
  "consul.CatalogService.ServiceConnect": "structs.ServiceNode's ServiceConnect",
  "consul.CatalogService.ServiceKind": "structs.ServiceNode's ServiceKind",
  "consul.CatalogService.ServiceSocketPath": "structs.ServiceNode's ServiceSocketPath",
  "consul.SessionEntry.ModifyIndex": "structs.Session's raft index",
  "nomad.AllocatedCpuResources.ReservedCores": "structs.AllocatedCpuResources' ReservedCores",
  "nomad.AllocatedResources.TaskLifecycles": "structs.AllocatedResources' TaskLifecycles",
  "nomad.AllocationListStub.DesiredTransition": "structs.AllocListStub's DesiredTransition",
  "nomad.Deployment.EvalPriority": "structs.Deployment's EvalPriority",
  "nomad.DeploymentState.AutoPromote": "structs.DeploymentState's AutoPromote",
  "nomad.DesiredUpdates.Disconnect": "structs.DesiredUpdates' Disconnect",
  "nomad.DesiredUpdates.Reconnect": "structs.DesiredUpdates' Reconnect",
  "nomad.DesiredUpdates.RescheduleLater": "structs.DesiredUpdates' RescheduleLater",
  "nomad.DesiredUpdates.RescheduleNow": "structs.DesiredUpdates' RescheduleNow",
  "nomad.JobDispatchResponse.Index": "the server response's WriteMeta, in the body",
  "nomad.JobPlanResponse.Index": "the server response's WriteMeta, in the body",
  "nomad.JobRegisterResponse.Index": "the server response's QueryMeta/WriteMeta, in the body",
  "nomad.JobRegisterResponse.KnownLeader": "the server response's QueryMeta, in the body",
  "nomad.JobRegisterResponse.LastContact": "the server response's QueryMeta, in the body",
  "nomad.JobRegisterResponse.NextToken": "the server response's QueryMeta, in the body",
  "nomad.JobVersionsResponse.Index": "the server response's QueryMeta, in the body",
  "nomad.JobVersionsResponse.KnownLeader": "the server response's QueryMeta, in the body",
  "nomad.JobVersionsResponse.LastContact": "the server response's QueryMeta, in the body",
  "nomad.JobVersionsResponse.NextToken": "the server response's QueryMeta, in the body",
  "nomad.JobListStub.Multiregion": "structs.JobListStub's Multiregion",
  "nomad.JobListStub.NodePool": "structs.JobListStub's NodePool",
  "nomad.Node.ComputedClass": "structs.Node's ComputedClass",
  "nomad.Node.SecretID": "structs.Node's SecretID, blanked by Sanitize",
  "nomad.NodeListStub.HostVolumes": "structs.NodeListStub's HostVolumes",
  "nomad.NodePool.Hash": "structs.NodePool's Hash",
  "nomad.NodeResources.NodeNetworks": "structs.NodeResources' NodeNetworks",
  "nomad.Service.Namespace": "structs.Service's Namespace",
  "nomad.Namespace.Hash": "structs.Namespace's Hash",
  "nomad.NodeEligibilityUpdateResponse.Index": "the server response's WriteMeta, in the body",
  "nomad.SchedulerConfigurationResponse.Index": "the server response's QueryMeta, in the body",
  "nomad.SchedulerConfigurationResponse.KnownLeader": "the server response's QueryMeta, in the body",
  "nomad.SchedulerConfigurationResponse.LastContact": "the server response's QueryMeta, in the body",
  "nomad.SchedulerConfigurationResponse.NextToken": "the server response's QueryMeta, in the body",
  "consul.TxnResponse.Backend": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
  "consul.TxnResponse.ConsistencyLevel": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
  "consul.TxnResponse.Index": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
  "consul.TxnResponse.KnownLeader": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
  "consul.TxnResponse.LastContact": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
  "consul.TxnResponse.NotModified": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
  "consul.TxnResponse.ResultsFilteredByACLs": "structs.TxnReadResponse's QueryMeta, in a read-only transaction's body",
};

async function buildOracle(): Promise<OracleSchema> {
  if (!GO) throw new Error("Go ≥ 1.21 is needed for the wire-shape oracle (see .ci/run), or STANDIN_SKIP_GO=1 to skip it");
  for (const dir of [NOMAD_API, GO_CLIENTS]) if (!existsSync(dir)) throw new Error(`the oracle's sources are not at ${dir} (shared/ beside the project)`);
  mkdirSync(dirname(BINARY), { recursive: true });
  // Nomad 1.9.7's api first: the same import path is in go-clients at a later commit.
  const env = { ...process.env, GO111MODULE: "off", GOFLAGS: "", GOPATH: `${NOMAD_API}:${GO_CLIENTS}:/usr/share/gocode` };
  await run(GO, ["build", "-o", BINARY, "."], { cwd: SOURCES, env, timeout: 600_000 });
  const { stdout } = await run(BINARY, [], { maxBuffer: 64 << 20 });
  return JSON.parse(stdout) as OracleSchema;
}

/** One route a client decodes, the oracle type its answer is, and how to get the answer. */
interface RouteCase {
  route: string;
  type: string;
  answer: (emu: Standin, ids: Ids) => Promise<Answer>;
}

interface Ids {
  alloc: string;
  evaluation: string;
  deployment: string;
  node: string;
  session: string;
  consulNode: string;
}

const nomad = (method: string, path: string, body?: unknown) => (emu: Standin) => call(emu.scheduler, method, path, body);
const consul = (method: string, path: string, body?: unknown) => (emu: Standin) => call(emu.registry, method, path, body);

/**
 * A service job with a deployment and most of the job's blocks filled (so the
 * nested structs are on the wire to be checked, not null): constraints,
 * affinity, spread, scaling, a host volume, a dynamic port, a nomad service
 * with a check, a sidecar task, a template, an artifact, logs.
 */
function webJob(): Json {
  return {
    ID: "web",
    Type: "service",
    Datacenters: ["dc1"],
    Meta: { team: "shop" },
    Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
    Affinities: [{ LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: 50 }],
    Spreads: [{ Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: [{ Value: "dc1", Percent: 100 }] }],
    Update: { MaxParallel: 1, MinHealthyTime: 1e9, HealthyDeadline: 60e9 },
    TaskGroups: [
      {
        Name: "web",
        Count: 2,
        Scaling: { Min: 1, Max: 5, Enabled: true, Policy: {} },
        Volumes: { data: { Name: "data", Type: "host", Source: "data", ReadOnly: true } },
        Networks: [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }],
        Services: [
          {
            Name: "web",
            PortLabel: "http",
            Provider: "nomad",
            Tags: ["front"],
            Checks: [{ Name: "alive", Type: "http", Path: "/health", Interval: 10e9, Timeout: 2e9 }],
          },
        ],
        Tasks: [
          {
            Name: "server",
            Driver: "docker",
            Config: { image: "nginx:1" },
            Env: { MODE: "prod" },
            Resources: { CPU: 100, MemoryMB: 64 },
            Services: [{ Name: "api", PortLabel: "http", Provider: "nomad" }],
            Templates: [{ EmbeddedTmpl: 'mode={{ env "MODE" }}', DestPath: "local/app.conf", ChangeMode: "restart" }],
            Artifacts: [{ GetterSource: "https://example.com/app.tgz", RelativeDest: "local/" }],
            VolumeMounts: [{ Volume: "data", Destination: "/data", ReadOnly: true }],
            LogConfig: { MaxFiles: 3, MaxFileSizeMB: 5 },
          },
          {
            Name: "log-shipper",
            Driver: "docker",
            Config: { image: "busybox:1" },
            Lifecycle: { Hook: "poststart", Sidecar: true },
            Resources: { CPU: 20, MemoryMB: 32 },
          },
        ],
      },
    ],
  };
}

/** A periodic batch job and a parameterized one: the Periodic and ParameterizedJob structs on the wire. */
const periodicJob = () => ({
  ID: "report",
  Type: "batch",
  Datacenters: ["dc1"],
  Periodic: { Enabled: true, SpecType: "cron", Spec: "0 * * * *", ProhibitOverlap: true },
  TaskGroups: [{ Name: "run", Count: 1, Tasks: [{ Name: "run", Driver: "exec", Config: { command: "/bin/true" }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
});
const dispatchJob = () => ({
  ID: "resize",
  Type: "batch",
  Datacenters: ["dc1"],
  ParameterizedJob: { Payload: "optional", MetaRequired: ["size"] },
  TaskGroups: [{ Name: "run", Count: 1, Tasks: [{ Name: "run", Driver: "exec", Config: { command: "/bin/true" }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
});

const ROUTES: RouteCase[] = [
  // Nomad: jobs
  { route: "PUT /v1/jobs", type: "struct:nomad.JobRegisterResponse", answer: nomad("PUT", "/v1/jobs", { Job: { ...webJob(), Meta: { team: "shop", rev: "2" } } }) },
  { route: "GET /v1/jobs", type: "slice:struct:nomad.JobListStub", answer: nomad("GET", "/v1/jobs") },
  { route: "GET /v1/job/:id", type: "struct:nomad.Job", answer: nomad("GET", "/v1/job/web") },
  { route: "GET /v1/job/:id/summary", type: "struct:nomad.JobSummary", answer: nomad("GET", "/v1/job/web/summary") },
  { route: "GET /v1/job/:id/versions", type: "struct:nomad.JobVersionsResponse", answer: nomad("GET", "/v1/job/web/versions?diffs=true") },
  { route: "GET /v1/job/:id/allocations", type: "slice:struct:nomad.AllocationListStub", answer: nomad("GET", "/v1/job/web/allocations") },
  { route: "GET /v1/job/:id/evaluations", type: "slice:struct:nomad.Evaluation", answer: nomad("GET", "/v1/job/web/evaluations") },
  { route: "GET /v1/job/:id/deployments", type: "slice:struct:nomad.Deployment", answer: nomad("GET", "/v1/job/web/deployments") },
  { route: "GET /v1/job/:id/deployment", type: "struct:nomad.Deployment", answer: nomad("GET", "/v1/job/web/deployment") },
  { route: "GET /v1/job/:id/scale", type: "struct:nomad.JobScaleStatusResponse", answer: nomad("GET", "/v1/job/web/scale") },
  { route: "GET /v1/job/:id/services", type: "slice:struct:nomad.ServiceRegistration", answer: nomad("GET", "/v1/job/web/services") },
  { route: "GET /v1/job/:id (periodic)", type: "struct:nomad.Job", answer: nomad("GET", "/v1/job/report") },
  { route: "GET /v1/job/:id (parameterized)", type: "struct:nomad.Job", answer: nomad("GET", "/v1/job/resize") },
  { route: "PUT /v1/job/:id/dispatch", type: "struct:nomad.JobDispatchResponse", answer: nomad("PUT", "/v1/job/resize/dispatch", { Meta: { size: "1" } }) },
  { route: "PUT /v1/job/:id/plan", type: "struct:nomad.JobPlanResponse", answer: nomad("PUT", "/v1/job/web/plan", { Job: { ...webJob(), Meta: { team: "ops" } }, Diff: true }) },
  // Nomad: allocations, evaluations, deployments
  { route: "GET /v1/allocations", type: "slice:struct:nomad.AllocationListStub", answer: nomad("GET", "/v1/allocations?resources=true") },
  { route: "GET /v1/allocation/:id", type: "struct:nomad.Allocation", answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/allocation/${ids.alloc}`) },
  { route: "GET /v1/evaluations", type: "slice:struct:nomad.Evaluation", answer: nomad("GET", "/v1/evaluations") },
  { route: "GET /v1/evaluation/:id", type: "struct:nomad.Evaluation", answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/evaluation/${ids.evaluation}`) },
  {
    route: "GET /v1/evaluation/:id/allocations",
    type: "slice:struct:nomad.AllocationListStub",
    answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/evaluation/${ids.evaluation}/allocations`),
  },
  {
    route: "GET /v1/deployment/allocations/:id",
    type: "slice:struct:nomad.AllocationListStub",
    answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/deployment/allocations/${ids.deployment}`),
  },
  { route: "GET /v1/deployments", type: "slice:struct:nomad.Deployment", answer: nomad("GET", "/v1/deployments") },
  { route: "GET /v1/deployment/:id", type: "struct:nomad.Deployment", answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/deployment/${ids.deployment}`) },
  // Nomad: nodes
  { route: "GET /v1/nodes", type: "slice:struct:nomad.NodeListStub", answer: nomad("GET", "/v1/nodes?resources=true") },
  { route: "GET /v1/node/:id", type: "struct:nomad.Node", answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/node/${ids.node}`) },
  { route: "GET /v1/node/:id/allocations", type: "slice:struct:nomad.Allocation", answer: (emu, ids) => call(emu.scheduler, "GET", `/v1/node/${ids.node}/allocations`) },
  { route: "GET /v1/node/pools", type: "slice:struct:nomad.NodePool", answer: nomad("GET", "/v1/node/pools") },
  // Nomad: services, variables, agent
  { route: "GET /v1/services", type: "slice:struct:nomad.ServiceRegistrationListStub", answer: nomad("GET", "/v1/services") },
  { route: "GET /v1/service/:name", type: "slice:struct:nomad.ServiceRegistration", answer: nomad("GET", "/v1/service/web") },
  { route: "PUT /v1/var/:path", type: "struct:nomad.Variable", answer: nomad("PUT", "/v1/var/app/config", { Namespace: "default", Path: "app/config", Items: { user: "me" } }) },
  { route: "GET /v1/var/:path", type: "struct:nomad.Variable", answer: nomad("GET", "/v1/var/app/config") },
  { route: "GET /v1/vars", type: "slice:struct:nomad.VariableMetadata", answer: nomad("GET", "/v1/vars") },
  { route: "GET /v1/operator/scheduler/configuration", type: "struct:nomad.SchedulerConfigurationResponse", answer: nomad("GET", "/v1/operator/scheduler/configuration") },
  { route: "GET /v1/namespaces", type: "slice:struct:nomad.Namespace", answer: nomad("GET", "/v1/namespaces") },
  {
    route: "PUT /v1/node/:id/eligibility",
    type: "struct:nomad.NodeEligibilityUpdateResponse",
    answer: (emu, ids) => call(emu.scheduler, "PUT", `/v1/node/${ids.node}/eligibility`, { Eligibility: "eligible" }),
  },
  { route: "GET /v1/agent/self (Nomad)", type: "struct:nomad.AgentSelf", answer: nomad("GET", "/v1/agent/self") },
  { route: "GET /v1/agent/members (Nomad)", type: "struct:nomad.ServerMembers", answer: nomad("GET", "/v1/agent/members") },
  // Consul: agent
  { route: "GET /v1/agent/services", type: "map:struct:consul.AgentService", answer: consul("GET", "/v1/agent/services") },
  { route: "GET /v1/agent/service/:id", type: "struct:consul.AgentService", answer: consul("GET", "/v1/agent/service/cart-1") },
  { route: "GET /v1/agent/checks", type: "map:struct:consul.AgentCheck", answer: consul("GET", "/v1/agent/checks") },
  { route: "GET /v1/agent/members (Consul)", type: "slice:struct:consul.AgentMember", answer: consul("GET", "/v1/agent/members") },
  { route: "GET /v1/agent/health/service/name/:name", type: "slice:struct:consul.AgentServiceChecksInfo", answer: consul("GET", "/v1/agent/health/service/name/cart") },
  // Consul: catalog, health
  { route: "GET /v1/catalog/nodes", type: "slice:struct:consul.Node", answer: consul("GET", "/v1/catalog/nodes") },
  { route: "GET /v1/catalog/service/:name", type: "slice:struct:consul.CatalogService", answer: consul("GET", "/v1/catalog/service/cart") },
  { route: "GET /v1/catalog/node/:node", type: "struct:consul.CatalogNode", answer: (emu, ids) => call(emu.registry, "GET", `/v1/catalog/node/${ids.consulNode}`) },
  {
    route: "GET /v1/catalog/node-services/:node",
    type: "struct:consul.CatalogNodeServiceList",
    answer: (emu, ids) => call(emu.registry, "GET", `/v1/catalog/node-services/${ids.consulNode}`),
  },
  { route: "GET /v1/health/service/:name", type: "slice:struct:consul.ServiceEntry", answer: consul("GET", "/v1/health/service/cart") },
  { route: "GET /v1/health/checks/:name", type: "slice:struct:consul.HealthCheck", answer: consul("GET", "/v1/health/checks/cart") },
  { route: "GET /v1/health/node/:node", type: "slice:struct:consul.HealthCheck", answer: (emu, ids) => call(emu.registry, "GET", `/v1/health/node/${ids.consulNode}`) },
  { route: "GET /v1/health/state/:state", type: "slice:struct:consul.HealthCheck", answer: consul("GET", "/v1/health/state/any") },
  // Consul: KV, sessions
  { route: "PUT /v1/event/fire/:name", type: "struct:consul.UserEvent", answer: consul("PUT", "/v1/event/fire/deploy", "v2") },
  { route: "GET /v1/event/list", type: "slice:struct:consul.UserEvent", answer: consul("GET", "/v1/event/list") },
  { route: "PUT /v1/txn", type: "struct:consul.TxnResponse", answer: consul("PUT", "/v1/txn", [{ KV: { Verb: "get", Key: "app/config" } }]) },
  { route: "GET /v1/kv/:key", type: "slice:struct:consul.KVPair", answer: consul("GET", "/v1/kv/app/config") },
  { route: "GET /v1/kv/:prefix?recurse", type: "slice:struct:consul.KVPair", answer: consul("GET", "/v1/kv/app?recurse=true") },
  { route: "GET /v1/session/info/:id", type: "slice:struct:consul.SessionEntry", answer: (emu, ids) => call(emu.registry, "GET", `/v1/session/info/${ids.session}`) },
  { route: "GET /v1/session/list", type: "slice:struct:consul.SessionEntry", answer: consul("GET", "/v1/session/list") },
];

/** Registers a job, a service with a check, a KV pair and a session, and lets the job roll out on the virtual clock. */
async function seed(emu: Standin): Promise<Ids> {
  const ok = (a: Answer) => {
    expect(a.status, a.text).toBe(200);
    return a;
  };
  ok(await call(emu.scheduler, "PUT", "/v1/jobs", { Job: webJob() }));
  ok(await call(emu.scheduler, "PUT", "/v1/jobs", { Job: periodicJob() }));
  ok(await call(emu.scheduler, "PUT", "/v1/jobs", { Job: dispatchJob() }));
  emu.clock.advance("90s");
  const [alloc] = ok(await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
  const [evaluation] = ok(await call(emu.scheduler, "GET", "/v1/job/web/evaluations")).body as Json[];
  const deployment = ok(await call(emu.scheduler, "GET", "/v1/job/web/deployment")).body as Json;
  ok(
    await call(emu.registry, "PUT", "/v1/agent/service/register", {
      ID: "cart-1",
      Name: "cart",
      Port: 8080,
      Tags: ["v1"],
      Meta: { zone: "a" },
      Check: { CheckID: "cart-ttl", TTL: "30s", Status: "passing" },
    }),
  );
  ok(await call(emu.registry, "PUT", "/v1/kv/app/config", "value"));
  const session = ok(await call(emu.registry, "PUT", "/v1/session/create", { Name: "leader", TTL: "60s" })).body as Json;
  const [consulNode] = ok(await call(emu.registry, "GET", "/v1/catalog/nodes")).body as Json[];
  return {
    alloc: alloc!.ID,
    evaluation: evaluation!.ID,
    deployment: deployment.ID,
    node: alloc!.NodeID,
    session: session.ID,
    consulNode: consulNode!.Node,
  };
}

describe.skipIf(SKIP)("wire-shape oracle: the keys standin sends against the api structs' encoders", () => {
  let schema: OracleSchema;
  const results = new Map<string, ShapeFindings>();

  beforeAll(async () => {
    schema = await buildOracle();
    const emu = await createStandin();
    const ids = await seed(emu);
    for (const c of ROUTES) {
      const answer = await c.answer(emu, ids);
      expect(answer.status, `${c.route}: ${answer.text}`).toBe(200);
      const findings: ShapeFindings = { missing: new Set(), extra: new Set() };
      checkShape(schema, answer.body, c.type, findings);
      results.set(c.route, findings);
    }
    emu.close();
  }, 900_000);

  it("the oracle describes every struct the routes decode into", () => {
    for (const c of ROUTES) expect(schema.roots, c.route).toContain(c.type.replace(/^(slice:|map:)?struct:/, ""));
  });

  for (const c of ROUTES) {
    it(`${c.route} sends every key ${c.type.replace(/^.*struct:/, "")} always has`, () => {
      const unexplained = [...results.get(c.route)!.missing].filter((key) => !(key in KNOWN_MISSING) && !(key in API_ONLY)).sort();
      expect(unexplained).toEqual([]);
    });
  }

  it("sends no key beyond the api structs but those listed", () => {
    const extra = new Set([...results.values()].flatMap((f) => [...f.extra]));
    expect([...extra].filter((key) => !(key in KNOWN_EXTRA)).sort()).toEqual([]);
  });

  it("every known difference still happens (a fixed one leaves the list)", () => {
    const missing = new Set([...results.values()].flatMap((f) => [...f.missing]));
    const extra = new Set([...results.values()].flatMap((f) => [...f.extra]));
    expect(Object.keys(KNOWN_MISSING).filter((key) => !missing.has(key))).toEqual([]);
    // An api-only key standin sends would be a key the real server never writes.
    expect(Object.keys(API_ONLY).filter((key) => !missing.has(key))).toEqual([]);
    expect(Object.keys(KNOWN_EXTRA).filter((key) => !extra.has(key))).toEqual([]);
  });

  it("figures", () => {
    // Keys the server never writes (API_ONLY) are not missing from the product's answers.
    const serverMissing = (f: ShapeFindings) => [...f.missing].filter((key) => !(key in API_ONLY));
    const matching = [...results.values()].filter((f) => serverMissing(f).length === 0).length;
    const missing = new Set([...results.values()].flatMap(serverMissing));
    const extra = new Set([...results.values()].flatMap((f) => [...f.extra]));
    const exact = [...results.values()].filter((f) => serverMissing(f).length === 0 && f.extra.size === 0).length;
    console.log(
      `wire shapes: ${results.size} routes checked, ${matching} send every key the product writes (${exact} with no key beyond the api struct), ${missing.size} keys missing, ${Object.keys(API_ONLY).length} api-only keys rightly absent, ${extra.size} keys beyond the api structs (all listed)`,
    );
    // STANDIN_WIRE_REPORT=1 prints each route's findings (for updating the lists and the docs).
    if (process.env.STANDIN_WIRE_REPORT === "1")
      for (const [route, f] of results) console.log(JSON.stringify({ route, missing: [...f.missing].sort(), extra: [...f.extra].sort() }));
    expect(results.size).toBe(ROUTES.length);
  });
});
