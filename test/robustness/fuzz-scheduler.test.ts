/**
 * Bad-input fuzzing of the scheduler (Nomad's HTTP API): malformed and
 * wrongly typed job, plan, dispatch, scale, deployment, namespace and ACL
 * bodies; awkward job IDs and path segments; bad query values (durations,
 * indexes, booleans, filter expressions, regions); repeated and oversized
 * token headers; bodies up to and past the 16 MiB limit. Every request is
 * held to the invariants in harness.ts; the 500s Nomad itself documents are
 * listed below.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import {
  acceptEncoding,
  boolText,
  COMMON_QUERY,
  contentType,
  filterExpression,
  fuzz,
  headerEntries,
  indexText,
  invalidUuid,
  jsonBody,
  longString,
  method,
  pathSegment,
  queryEntries,
  queryString,
  repeatedHeader,
  SCHEDULER_ACL,
  SCHEDULER_MGMT_TOKEN,
  timeoutFor,
  tokenValue,
  toJsonText,
  weirdString,
  type QueryShape,
} from "./arbitraries.js";
import { Harness, matchesAny, type FuzzRequest, type Oracle } from "./harness.js";

/**
 * The 5xx answers Nomad documents. Errors that carry no HTTP code are 500s
 * with the error's text (scheduler-nomad.md §1.3, rule 4); the texts are
 * those of §1.3, §1.6, §1.8 and §5.9, plus the RPC texts the engine models
 * from nomad/job_endpoint.go and nomad/deployment_endpoint.go. Anything else
 * — a JavaScript error's text above all — fails the property.
 */
const NOMAD_500: ReadonlyArray<string | RegExp> = [
  // §1.3 errNoRegionPath, §1.6 `region`
  "No path to region",
  // §1.6 other bool parameters (purge, global, all, diffs, …): strconv.ParseBool's error, uncoded
  /^Failed to parse value of "[^"]*" \([\s\S]*\) as a bool: strconv\.ParseBool: parsing "[\s\S]*": invalid syntax$/,
  // §1.8 Job.Register validation (and a promote's unhealthy canaries): a go-multierror list
  /^\d+ errors? occurred:\n\t\* /,
  // §1.6 register into a namespace that does not exist
  /^job "[\s\S]*" is in nonexistent namespace "[\s\S]*"$/,
  // §1.8 Job.Register with EnforceIndex
  /^Enforcing job modify index \d+: job (already exists|does not exist|exists with conflicting job modify index: \d+)$/,
  // §1.8 Deployment.Fail/Pause/Promote/SetAllocHealth
  "deployment not found",
  "can't fail terminal deployment",
  "can't pause terminal deployment",
  "can't resume terminal deployment",
  "can't promote terminal deployment",
  "can't set health of allocations for a terminal deployment",
  "no canaries to promote",
  /^Deployment "[\s\S]*" does not contain allocation "[\s\S]*"$/,
  // scheduler-breadth §5.2, §5.3, §5.5 Node.UpdateEligibility, Node.UpdateDrain, Node.Deregister
  "node not found",
  /^invalid scheduling eligibility "[\s\S]*"$/,
  "can not set node's scheduling eligibility to eligible while it is draining",
  // §1.8 Job.Revert, Job.Stable, Job.Evaluate, Job.Deregister
  /^job "[\s\S]*" not found$/,
  "can't revert to current version",
  /^job "[\s\S]*" in namespace "[\s\S]*" at version \d+ not found$/,
  /^Current job has version \d+; enforcing version \d+$/,
  "missing job ID for revert",
  "missing job ID for marking job as stable",
  "job not found",
  "can't evaluate periodic job",
  "can't evaluate parameterized job",
  "missing job ID for evaluation",
  "missing job ID for deregistering",
  // §1.8 Job.Dispatch (and its other checks in nomad/job_endpoint.go), periodic force
  /^Specified job "[\s\S]*" is (not a parameterized job|stopped)$/,
  "missing parameterized job ID",
  "parameterized job not found",
  "Payload is not provided but required by parameterized job",
  "Payload provided but forbidden by parameterized job",
  /^Dispatch (request included unpermitted metadata keys|did not provide required meta keys): \[[\s\S]*\]$/,
  "can't force launch non-periodic job",
  // §5.9 namespace delete
  "can not delete default namespace",
  /^namespace "[\s\S]*" has non-terminal jobs in regions: \[[\s\S]*\]$/,
  // plan of a periodic job: the next launch is computed from the cron spec
  /^Failed to parse cron expression: /,
  // docs/known-differences.md: token/self without a secret is Nomad 1.9's lookup error
  "acl token lookup failed: missing secret id",
];

/** docs/control-api.md "Unemulated routes": 501 naming the route, and Nomad CE's own Enterprise stub answer. */
const NOMAD_501: ReadonlyArray<string | RegExp> = [/^standin (does not emulate|accepts JSON job specifications only)/, "Nomad Enterprise only endpoint"];

const NOMAD: Oracle = {
  documented5xx: (status, text) => (status === 500 && matchesAny(text, NOMAD_500)) || (status === 501 && matchesAny(text, NOMAD_501)),
  streams: (request) => new URL(request.path, "http://x").pathname.startsWith("/v1/event/stream"),
};

// ---- the world ------------------------------------------------------------------------------

const task = { Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } };
const serviceJob = (id: string, extra: Record<string, unknown> = {}) => ({
  ID: id,
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 2, Tasks: [task] }],
  Update: { MaxParallel: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000, ProgressDeadline: 600_000_000_000 },
  ...extra,
});

const MGMT = SCHEDULER_MGMT_TOKEN;

const FIXTURE = {
  scheduler: {
    namespaces: [{ Name: "prod" }],
    nodes: [{ Name: "client-1" }, { Name: "client-2", NodeClass: "big" }],
    jobs: [
      serviceJob("web"),
      serviceJob("api", { Namespace: "prod" }),
      { ...serviceJob("nightly", { Type: "batch", Update: null }), Periodic: { Enabled: true, SpecType: "cron", Spec: "0 3 * * *", TimeZone: "UTC", ProhibitOverlap: true } },
      { ...serviceJob("report", { Type: "batch", Update: null }), ParameterizedJob: { Payload: "optional", MetaRequired: ["customer"], MetaOptional: ["format"] } },
    ],
    // A second region, so `region=eu` requests reach a cluster of their own.
    regions: { eu: { nodes: [{ Name: "eu-1" }], jobs: [serviceJob("web")] } },
  },
};

const ACL_FIXTURE = {
  scheduler: {
    ...FIXTURE.scheduler,
    acl: SCHEDULER_ACL,
  },
};

/** A job with most of the blocks a register decodes, for the wrong-type mutations. */
const RICH_JOB = {
  ID: "fuzz",
  Name: "fuzz",
  Type: "service",
  Namespace: "default",
  Region: "global",
  Priority: 50,
  AllAtOnce: false,
  Datacenters: ["dc1"],
  NodePool: "default",
  Meta: { owner: "qa" },
  Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
  Affinities: [{ LTarget: "${node.class}", RTarget: "big", Operand: "=", Weight: 50 }],
  Spreads: [{ Attribute: "${node.datacenter}", Weight: 100, SpreadTarget: [{ Value: "dc1", Percent: 100 }] }],
  Update: {
    Stagger: 30_000_000_000,
    MaxParallel: 1,
    HealthCheck: "checks",
    MinHealthyTime: 10_000_000_000,
    HealthyDeadline: 300_000_000_000,
    ProgressDeadline: 600_000_000_000,
    AutoRevert: true,
    AutoPromote: false,
    Canary: 1,
  },
  TaskGroups: [
    {
      Name: "web",
      Count: 2,
      Meta: { tier: "front" },
      Constraints: [{ LTarget: "${meta.rack}", Operand: "is_set" }],
      RestartPolicy: { Attempts: 2, Interval: 1_800_000_000_000, Delay: 15_000_000_000, Mode: "fail" },
      ReschedulePolicy: { Attempts: 0, Interval: 0, Delay: 30_000_000_000, DelayFunction: "exponential", MaxDelay: 3_600_000_000_000, Unlimited: true },
      EphemeralDisk: { Sticky: false, Migrate: false, SizeMB: 300 },
      Networks: [{ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 8080 }], ReservedPorts: [{ Label: "admin", Value: 9000 }] }],
      Services: [{ Name: "web", PortLabel: "http", Tags: ["a"], Checks: [{ Name: "alive", Type: "http", Path: "/", Interval: 10_000_000_000, Timeout: 2_000_000_000 }] }],
      Scaling: { Min: 1, Max: 5, Enabled: true, Policy: { cooldown: "1m" } },
      Update: { Canary: 1, MaxParallel: 2 },
      Volumes: { data: { Name: "data", Type: "host", Source: "data", ReadOnly: false } },
      Tasks: [
        {
          Name: "server",
          Driver: "docker",
          User: "",
          Config: { image: "nginx:1", ports: ["http"], args: ["-v"] },
          Env: { A: "1" },
          Meta: { b: "2" },
          Resources: { CPU: 100, MemoryMB: 128, MemoryMaxMB: 256, Networks: null, Devices: [{ Name: "nvidia/gpu", Count: 1 }] },
          Templates: [{ EmbeddedTmpl: 'x={{ env "A" }}', DestPath: "local/x", ChangeMode: "restart" }],
          Artifacts: [{ GetterSource: "https://example.test/a.tgz", RelativeDest: "local/" }],
          VolumeMounts: [{ Volume: "data", Destination: "/data", ReadOnly: false }],
          Lifecycle: { Hook: "prestart", Sidecar: false },
          KillTimeout: 5_000_000_000,
          KillSignal: "SIGTERM",
          LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10 },
          Vault: { Policies: ["p"], ChangeMode: "restart" },
          Services: [{ Name: "task-svc", PortLabel: "http", Provider: "nomad" }],
          ShutdownDelay: 0,
          Leader: true,
        },
      ],
    },
  ],
};

const PERIODIC_JOB = {
  ...serviceJob("cron", { Type: "batch", Update: null }),
  Periodic: { Enabled: true, SpecType: "cron", Spec: "*/5 * * * *", Specs: ["0 1 * * *"], TimeZone: "Europe/Paris", ProhibitOverlap: true },
};
const PARAM_JOB = { ...serviceJob("param", { Type: "batch", Update: null }), ParameterizedJob: { Payload: "required", MetaRequired: ["a"], MetaOptional: ["b"] } };
const SYSTEM_JOB = { ID: "sys", Type: "system", TaskGroups: [{ Name: "agent", Tasks: [task] }] };

const JOB_TEMPLATES = [RICH_JOB, PERIODIC_JOB, PARAM_JOB, SYSTEM_JOB];

// ---- requests -------------------------------------------------------------------------------

const NOMAD_QUERY: QueryShape = {
  ...COMMON_QUERY,
  // Mostly the agent's own region, so the rest of the request is reached; `eu` is a second region; any other is Nomad's 500.
  region: fc.constantFrom("global", "", "", "global", "GLOBAL", "eu"),
  namespace: fc.constantFrom("default", "prod", "*", "", "nope", "%", "DEFAULT", "a/b"),
  prefix: weirdString,
  per_page: fc.constantFrom("1", "2", "0", "-1", "abc", "2147483648", "99999999999", "1.5", ""),
  next_token: fc.oneof(weirdString, fc.constantFrom("default.web", "prod.api", "1.x", ".", "999999.zz")),
  reverse: boolText,
  purge: boolText,
  global: boolText,
  all: boolText,
  diffs: boolText,
  meta: boolText,
  resources: boolText,
  os: boolText,
  task_states: boolText,
  related: boolText,
  job: weirdString,
  status: fc.constantFrom("pending", "complete", "", "x"),
  eval_priority: indexText,
  topic: fc.constantFrom("*", "*:*", "Job", "Job:web", "Job:*", "Node:*", ":", "Allocation:", "Deployment:x:y", "Nope:*", ""),
};

/** A job ID as it goes in the path: known ones, odd segments, or several segments (Nomad job IDs may hold slashes). */
const jobIdSegment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("web", "nightly", "report", "fuzz", "cron", "param", "sys", "missing", "api") },
  { weight: 3, arbitrary: pathSegment },
  { weight: 1, arbitrary: fc.array(pathSegment, { minLength: 2, maxLength: 3 }).map((s) => s.join("/")) },
);

const headers = headerEntries(
  {
    "X-Nomad-Token": tokenValue,
    "X-Scheduler-Token": tokenValue,
    Authorization: tokenValue.map((t) => `Bearer ${t}`),
    "Content-Type": contentType,
    "Accept-Encoding": acceptEncoding,
    "X-Nomad-Namespace": weirdString.map((s) => s.replace(/[^\x20-\x7e]/g, "")),
  },
  3,
);

function request(methods: fc.Arbitrary<string>, path: fc.Arbitrary<string>, body?: fc.Arbitrary<string | undefined>, shape: QueryShape = NOMAD_QUERY): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({ method: methods, path, query: queryEntries(shape, 3), headers, body: body ?? fc.constant(undefined) })
    .map(({ method, path, query, headers, body }) => ({ method, path: `${path}${queryString(query)}`, headers, ...(body === undefined ? {} : { body }) }));
}

const writeMethod = fc.constantFrom("PUT", "POST");

interface Refs {
  deployments: string[];
  allocs: string[];
  evals: string[];
  nodes: string[];
}

function arbitraries(refs: Refs) {
  const ref = (ids: string[]) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...(ids.length ? ids : ["none"])) },
      { weight: 2, arbitrary: pathSegment },
      { weight: 1, arbitrary: invalidUuid.map(encodeURIComponent) },
    );
  const deployment = ref(refs.deployments);
  const alloc = ref(refs.allocs);

  // The job's own ID in the path mostly (`PUT /v1/job/:id` must match `Job.ID`).
  const register = fc
    .constantFrom(...JOB_TEMPLATES)
    .chain((job) =>
      request(
        writeMethod,
        fc.oneof(
          { weight: 3, arbitrary: fc.constant("/v1/jobs") },
          { weight: 2, arbitrary: fc.constant(`/v1/job/${job.ID}`) },
          { weight: 1, arbitrary: jobIdSegment.map((id) => `/v1/job/${id}`) },
        ),
        jsonBody({ Job: job, EnforceIndex: false, JobModifyIndex: 0, PolicyOverride: false, PreserveCounts: false, EvalPriority: 50, Region: "", Namespace: "" }),
      ),
    );

  const jobBodies: Array<[string, unknown]> = [
    ["plan", { Job: RICH_JOB, Diff: true, PolicyOverride: false }],
    ["revert", { JobID: "web", JobVersion: 0, EnforcePriorVersion: 0 }],
    ["stable", { JobID: "web", JobVersion: 0, Stable: true }],
    ["dispatch", { JobID: "report", Payload: "aGVsbG8=", Meta: { customer: "acme", format: "csv" }, IdempotencyToken: "t" }],
    ["scale", { Count: 3, Target: { Group: "web", Job: "web", Namespace: "default" }, JobModifyIndex: 0, Message: "m", Error: false, Meta: { a: 1 }, PolicyOverride: false }],
    ["evaluate", { JobID: "web", EvalOptions: { ForceReschedule: true } }],
    ["periodic/force", {}],
  ];
  const jobAction = fc.constantFrom(...jobBodies).chain(([suffix, template]) =>
    request(
      writeMethod,
      fc.oneof({ weight: 3, arbitrary: fc.constantFrom("web", "report", "nightly", "api") }, { weight: 1, arbitrary: jobIdSegment }).map((id) => `/v1/job/${id}/${suffix}`),
      jsonBody(suffix === "plan" ? template : template),
    ),
  );
  const validate = request(
    writeMethod,
    fc.constant("/v1/validate/job"),
    fc.constantFrom(...JOB_TEMPLATES).chain((job) => jsonBody({ Job: job })),
  );

  const deploymentAction = fc.tuple(fc.constantFrom("fail", "pause", "promote", "allocation-health", "unblock", "nope"), deployment, alloc).chain(([action, id, allocId]) =>
    request(
      fc.oneof({ weight: 4, arbitrary: writeMethod }, { weight: 1, arbitrary: method }),
      fc.constant(`/v1/deployment/${action}/${id}`),
      jsonBody({
        DeploymentID: decodeURIComponentSafe(id),
        Pause: true,
        All: true,
        Groups: ["web"],
        HealthyAllocationIDs: [decodeURIComponentSafe(allocId)],
        UnhealthyAllocationIDs: [],
      }),
    ),
  );

  // Node operations and allocation stop (issue 16): eligibility, drain specs, purge, stop.
  const nodeAction = fc.oneof(
    fc
      .tuple(
        ref(refs.nodes),
        fc.constantFrom<[string, unknown]>(
          ["eligibility", { Eligibility: "ineligible", NodeID: "" }],
          ["eligibility", { Eligibility: "eligible" }],
          ["drain", { DrainSpec: { Deadline: 3_600_000_000_000, IgnoreSystemJobs: false }, MarkEligible: false, Meta: { reason: "k" } }],
          ["drain", { DrainSpec: { Deadline: -1, IgnoreSystemJobs: true } }],
          ["drain", { DrainSpec: null, MarkEligible: true }],
          ["purge", {}],
        ),
      )
      .chain(([id, [suffix, template]]) =>
        request(fc.oneof({ weight: 4, arbitrary: writeMethod }, { weight: 1, arbitrary: method }), fc.constant(`/v1/node/${id}/${suffix}`), jsonBody(template)),
      ),
    alloc.chain((id) =>
      request(fc.oneof({ weight: 4, arbitrary: writeMethod }, { weight: 1, arbitrary: method }), fc.constant(`/v1/allocation/${id}/stop`), fc.constant(undefined)),
    ),
  );

  const namespaceWrite = fc.oneof(
    request(writeMethod, fc.constant("/v1/namespace"), jsonBody({ Name: "team", Description: "d", Quota: "", Meta: { a: "b" } })),
    pathSegment.chain((name) =>
      request(fc.oneof(writeMethod, method), fc.constant(`/v1/namespace/${name}`), jsonBody({ Name: decodeURIComponentSafe(name), Description: "d", Meta: { a: "b" } })),
    ),
    request(fc.constant("DELETE"), fc.constantFrom("/v1/namespace/default", "/v1/namespace/prod", "/v1/namespace/nope", "/v1/namespace/"), fc.constant(undefined)),
  );

  const readPath = fc.oneof(
    fc.constantFrom(
      "/v1/jobs",
      "/v1/evaluations",
      "/v1/allocations",
      "/v1/deployments",
      "/v1/nodes",
      "/v1/namespaces",
      "/v1/regions",
      "/v1/status/leader",
      "/v1/status/peers",
      "/v1/agent/health",
      "/v1/agent/members",
      "/v1/agent/self",
      "/v1/event/stream",
      "/",
      "/v1/",
      "/v1/jobsX",
      "/ui/",
      "/v1/acl/policies",
      "/v1/evaluations/count",
      "/v1/jobs/parse",
      "/v1/quotas",
      "/v1/node/pools",
      "/v1/search",
      "/v1/operator/raft/configuration",
      "/v1/operator/scheduler/configuration",
    ),
    fc
      .tuple(
        jobIdSegment,
        fc.constantFrom("", "/summary", "/allocations", "/evaluations", "/deployments", "/deployment", "/versions", "/scale", "/services", "/submission", "/nope"),
      )
      .map(([id, s]) => `/v1/job/${id}${s}`),
    fc.tuple(ref(refs.evals), fc.constantFrom("", "/allocations", "/x")).map(([id, s]) => `/v1/evaluation/${id}${s}`),
    alloc.map((id) => `/v1/allocation/${id}`),
    fc.tuple(deployment, fc.boolean()).map(([id, allocs]) => (allocs ? `/v1/deployment/allocations/${id}` : `/v1/deployment/${id}`)),
    fc.tuple(ref(refs.nodes), fc.constantFrom("", "/allocations", "/drain")).map(([id, s]) => `/v1/node/${id}${s}`),
    pathSegment.map((n) => `/v1/namespace/${n}`),
    fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((s) => `/v1/${s.join("/")}`),
  );
  const read = request(fc.oneof({ weight: 6, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: method }), readPath);
  // The paginated lists with a filter expression, paging and blocking parameters.
  const filtered = fc
    .tuple(
      request(fc.constant("GET"), fc.constantFrom("/v1/jobs", "/v1/evaluations", "/v1/allocations", "/v1/deployments", "/v1/nodes", "/v1/evaluations/count"), undefined, {
        per_page: NOMAD_QUERY.per_page!,
        next_token: NOMAD_QUERY.next_token!,
        reverse: boolText,
        namespace: NOMAD_QUERY.namespace!,
        prefix: NOMAD_QUERY.prefix!,
        index: indexText,
        job: weirdString,
        meta: boolText,
      }),
      filterExpression,
    )
    .map(([req, filter]) => ({ ...req, path: `${req.path}${req.path.includes("?") ? "&" : "?"}${queryString([["filter", filter]]).slice(1)}` }));
  const deregister = request(
    fc.constant("DELETE"),
    jobIdSegment.map((id) => `/v1/job/${id}`),
  );

  const any = fc.oneof(
    { weight: 4, arbitrary: register },
    { weight: 3, arbitrary: jobAction },
    { weight: 1, arbitrary: validate },
    { weight: 2, arbitrary: deploymentAction },
    { weight: 1, arbitrary: nodeAction },
    { weight: 1, arbitrary: namespaceWrite },
    { weight: 4, arbitrary: read },
    { weight: 2, arbitrary: filtered },
    { weight: 1, arbitrary: deregister },
  );
  return { register, jobAction, deploymentAction, nodeAction, read: fc.oneof(read, filtered), any };
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

async function collectRefs(h: Harness): Promise<Refs> {
  const ids = async (path: string, key = "ID") => {
    const res = await h.emu.scheduler.request(path);
    return ((await res.json()) as Array<Record<string, string>>).map((row) => row[key]!);
  };
  return { deployments: await ids("/v1/deployments"), allocs: await ids("/v1/allocations"), evals: await ids("/v1/evaluations"), nodes: await ids("/v1/nodes") };
}

// ---- ACL bodies ------------------------------------------------------------------------------

const RULES = [
  'namespace "default" { policy = "read" }',
  'namespace "*" { capabilities = ["list-jobs", "read-job"] }\nnode { policy = "write" }',
  'agent { policy = "read" }\noperator { policy = "deny" }',
  JSON.stringify({ namespace: { prod: { policy: "write" } }, node: { policy: "read" } }),
];

const ruleText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...RULES) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.constantFrom(...RULES), fc.nat(), fc.constantFrom("{", "}", '"', "=", "[", "]", "#", "\n", "\\", ",", "/*", "\u0000", "é"))
      .map(([r, at, c]) => r.slice(0, at % (r.length + 1)) + c + r.slice(at % (r.length + 1))),
  },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...RULES), fc.nat()).map(([r, n]) => r.slice(0, n % (r.length + 1))) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 20_000 }).map((n) => `${'namespace "a" { '.repeat(n)}${"}".repeat(n)}`) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 20_000 }).map((n) => `namespace "a" { policy = ${"[".repeat(n)}${"]".repeat(n)} }`) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 10, max: 20_000 })
      .map((n) => JSON.stringify({ namespace: { a: { policy: "read" } } }).replace('"read"', `${"[".repeat(n)}"read"${"]".repeat(n)}`)),
  },
  { weight: 1, arbitrary: longString(1_000, 50_000) },
  { weight: 2, arbitrary: weirdString },
);

function aclArbitraries() {
  const mgmt: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
    { weight: 5, arbitrary: fc.constant([["X-Nomad-Token", MGMT]] as Array<[string, string]>) },
    { weight: 1, arbitrary: headers },
  );
  const aclRequest = (methods: fc.Arbitrary<string>, path: fc.Arbitrary<string>, body?: fc.Arbitrary<string | undefined>) =>
    fc
      .record({ method: methods, path, headers: mgmt, query: queryEntries(NOMAD_QUERY, 2), body: body ?? fc.constant(undefined) })
      .map(({ method, path, headers, query, body }) => ({
        method,
        path: `${path}${queryString(query)}`,
        headers,
        ...(body === undefined ? {} : { body }),
      }));
  const policyBody = fc.oneof(
    jsonBody({ Name: "fuzzy", Description: "d", Rules: RULES[0] }),
    ruleText.map((Rules) => toJsonText({ Name: "fuzzy", Description: "d", Rules })),
  );
  return fc.oneof(
    aclRequest(
      writeMethod,
      fc.oneof(
        fc.constant("/v1/acl/policy/fuzzy"),
        pathSegment.map((n) => `/v1/acl/policy/${n}`),
      ),
      policyBody,
    ),
    aclRequest(writeMethod, fc.constant("/v1/acl/token"), jsonBody({ Name: "t", Type: "client", Policies: ["readonly"], Global: false })),
    aclRequest(
      writeMethod,
      fc.oneof(invalidUuid.map(encodeURIComponent), fc.uuid()).map((id) => `/v1/acl/token/${id}`),
      jsonBody({ AccessorID: "", Name: "t", Type: "management", Policies: null, Global: true }),
    ),
    aclRequest(
      writeMethod,
      fc.constant("/v1/acl/bootstrap"),
      fc.oneof(
        jsonBody({ BootstrapSecret: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee" }),
        invalidUuid.map((s) => toJsonText({ BootstrapSecret: s })),
      ),
    ),
    aclRequest(
      fc.oneof(fc.constantFrom("GET", "DELETE"), method),
      fc.oneof(
        pathSegment.map((n) => `/v1/acl/policy/${n}`),
        pathSegment.map((n) => `/v1/acl/token/${n}`),
        fc.constantFrom("/v1/acl/token/self", "/v1/acl/tokens", "/v1/acl/policies", "/v1/acl/policy/", "/v1/acl/token/"),
      ),
    ),
    // Every route with fuzzed tokens: the ACL guard's lookups.
    fc
      .record({
        path: fc.constantFrom("/v1/jobs", "/v1/job/web", "/v1/nodes", "/v1/namespaces", "/v1/acl/token/self", "/v1/event/stream?topic=Job:*"),
        headers: fc.oneof(
          headers,
          repeatedHeader("X-Nomad-Token", tokenValue),
          repeatedHeader(
            "Authorization",
            tokenValue.map((t) => `Bearer ${t}`),
          ),
        ),
      })
      .map(({ path, headers }) => ({ method: "GET", path, headers })),
  );
}

// ---- the properties ------------------------------------------------------------------------------

describe("scheduler: bad input (fuzz)", () => {
  let h: Harness;
  let acl: Harness;
  let arbs: ReturnType<typeof arbitraries>;

  beforeAll(async () => {
    h = await Harness.create({ fixture: FIXTURE });
    acl = await Harness.create({ fixture: ACL_FIXTURE });
    arbs = arbitraries(await collectRefs(h));
  });

  it(
    "job registration bodies: malformed, truncated, every field wrongly typed",
    () =>
      fuzz(
        fc.asyncProperty(arbs.register, async (req) => {
          await h.reset();
          await h.send("scheduler", req, NOMAD);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    "job actions, plan, validate and deployment updates with bad bodies and IDs",
    () =>
      fuzz(
        fc.asyncProperty(fc.oneof(arbs.jobAction, arbs.deploymentAction, arbs.nodeAction), async (req) => {
          await h.reset();
          await h.send("scheduler", req, NOMAD);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    "reads: odd paths, bad query values, filter expressions, blocking parameters",
    () =>
      fuzz(
        fc.asyncProperty(arbs.read, async (req) => {
          await h.reset();
          await h.send("scheduler", req, NOMAD);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    "sequences of any requests on one state",
    () =>
      fuzz(
        fc.asyncProperty(fc.array(arbs.any, { minLength: 2, maxLength: 5 }), async (requests) => {
          await h.reset();
          for (const req of requests) await h.send("scheduler", req, NOMAD);
        }),
        1,
      ),
    timeoutFor(1, 200),
  );

  it(
    "ACL policy, token and bootstrap bodies and token headers (ACLs on)",
    () =>
      fuzz(
        fc.asyncProperty(fc.array(aclArbitraries(), { minLength: 1, maxLength: 3 }), async (requests) => {
          await acl.reset();
          for (const req of requests) await acl.send("scheduler", req, NOMAD);
        }),
        1.5,
      ),
    timeoutFor(1.5, 150),
  );

  it(
    "huge bodies, up to and past the 16 MiB limit",
    () =>
      fuzz(
        fc.asyncProperty(
          fc.constantFrom(1 << 20, 15 << 20, 16 << 20, (16 << 20) + 1, 17 << 20),
          fc.constantFrom("meta", "garbage", "array"),
          fc.constantFrom("/v1/jobs", "/v1/job/web/plan", "/v1/validate/job", "/v1/namespace"),
          async (size, kind, path) => {
            await h.reset();
            const frame = toJsonText({ Job: { ...serviceJob("huge"), Meta: { big: "" } } });
            const body =
              kind === "meta"
                ? frame.replace('"big":""', `"big":"${"x".repeat(Math.max(0, size - frame.length))}"`)
                : kind === "array"
                  ? `[${"0,".repeat(Math.max(0, Math.floor((size - 2) / 2)))}0]`
                  : "x".repeat(size);
            await h.send("scheduler", { method: "PUT", path, body }, NOMAD);
          },
        ),
        0.05,
      ),
    60_000,
  );
});

// ---- regressions: inputs the fuzz properties found, as shrunk, one test per fix -------------------

describe("scheduler: regressions found by fuzzing", () => {
  const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  const call = async (emu: Standin, method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await emu.scheduler.request(path, { method, body, headers });
    return { status: res.status, text: await res.text() };
  };
  const task = { Name: "t", Driver: "docker", Config: { image: "x", args: [] as unknown[] }, Resources: { CPU: 10, MemoryMB: 10 } };
  const job = (id: string, extra: Record<string, unknown> = {}) => ({
    ID: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "web", Count: 1, Tasks: [task] }],
    ...extra,
  });
  // {"Job":{"TaskGroups":[{"Tasks":[{"Config":{"args": — the args value starts seven levels down.
  const withArgs = (args: string) => JSON.stringify({ Job: job("deep") }).replace('"args":[]', `"args":${args}`);

  it("a body nested deeper than 1000 levels is refused with Go's decoder text before anything walks it", async () => {
    // Shrunk: PUT /v1/namespace {"Name":"team","Description":"d","Quota":1e999,"Meta":{"a":[[[…1]]]}} was stored, and every
    // stateHash() after it overflowed the stack.
    const emu = await createStandin();
    const before = emu.stateHash();
    expect(await call(emu, "PUT", "/v1/namespace", `{"Name":"team","Meta":{"a":${nested(1001)}}}`)).toEqual({ status: 400, text: "invalid character '[' exceeded max depth" });
    expect(await call(emu, "PUT", "/v1/jobs", withArgs(nested(994)))).toEqual({ status: 400, text: "invalid character '[' exceeded max depth" });
    expect(await call(emu, "PUT", "/v1/jobs", `{"Job":${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}`)).toEqual({
      status: 400,
      text: "invalid character '{' exceeded max depth",
    });
    expect(emu.stateHash()).toBe(before);
  });

  it("a job nested exactly 1000 levels deep still registers, reads back, plans and hashes", async () => {
    const emu = await createStandin();
    const registered = await call(emu, "PUT", "/v1/jobs", withArgs(nested(993)));
    expect(registered.status, registered.text).toBe(200);
    expect((await call(emu, "GET", "/v1/job/deep")).status).toBe(200);
    expect((await call(emu, "PUT", "/v1/job/deep/plan", withArgs(nested(992, "2")).replace('{"Job"', '{"Diff":true,"Job"'))).status).toBe(200);
    expect(emu.stateHash()).toMatch(/^[0-9a-f]{64}$/);
    emu.restore(emu.snapshot());
  });

  it("RPC request bodies are read with Go's types: a wrongly typed field is a 400, not a 500 or a crash", async () => {
    const world = {
      scheduler: {
        jobs: [
          job("web", { Update: { MaxParallel: 1, Canary: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000, ProgressDeadline: 600_000_000_000 } }),
          { ...job("report", { Type: "batch" }), ParameterizedJob: { Payload: "optional", MetaRequired: ["customer"] } },
        ],
      },
    };
    const emu = await createStandin({ fixture: world });
    await emu.clock.advance("1m");
    const before = emu.stateHash();
    const cases: Array<[string, string, string]> = [
      // Shrunk: answered 500 `job "web" in namespace "default" at version 5e-324 not found`.
      [
        "/v1/job/web/revert",
        '{"JobID":"web","JobVersion":5e-324,"EnforcePriorVersion":0}',
        "json: cannot unmarshal number 5e-324 into Go struct field JobRevertRequest.JobVersion of type uint64",
      ],
      // Shrunk: an array nested a few thousand levels deep overflowed the stack in Number().
      ["/v1/job/web/revert", `{"JobID":"web","JobVersion":${nested(900)}}`, "json: cannot unmarshal array into Go struct field JobRevertRequest.JobVersion of type uint64"],
      // Shrunk: answered 500 `job "web" in namespace "default" at version NaN not found`.
      [
        "/v1/job/web/stable",
        '{"JobID":"web","JobVersion":"../..","Stable":true}',
        "json: cannot unmarshal string into Go struct field JobStabilityRequest.JobVersion of type uint64",
      ],
      // Shrunk: answered 500 `Cannot use 'in' operator to search for 'customer' in 5e-324`.
      ["/v1/job/report/dispatch", '{"Meta":5e-324}', "json: cannot unmarshal number into Go struct field JobDispatchRequest.Meta of type map[string]string"],
      ["/v1/job/report/dispatch", '{"Meta":{"customer":7}}', "json: cannot unmarshal number into Go struct field JobDispatchRequest.Meta of type string"],
      ["/v1/job/web/scale", '{"Count":1.5,"Target":{"Group":"web"}}', "json: cannot unmarshal number 1.5 into Go struct field ScalingRequest.Count of type int64"],
      ["/v1/namespace", '{"Name":"team","Meta":{"a":["x"]}}', "json: cannot unmarshal array into Go struct field Namespace.Meta of type string"],
      [
        "/v1/jobs",
        JSON.stringify({ Job: job("x"), EnforceIndex: true, JobModifyIndex: "7" }),
        "json: cannot unmarshal string into Go struct field JobRegisterRequest.JobModifyIndex of type uint64",
      ],
    ];
    for (const [path, body, text] of cases) expect(await call(emu, "PUT", path, body), `${path} ${body.slice(0, 80)}`).toEqual({ status: 400, text });
    const [deployment] = JSON.parse((await call(emu, "GET", "/v1/deployments")).text) as Array<{ ID: string }>;
    const id = deployment!.ID;
    expect(await call(emu, "PUT", `/v1/deployment/promote/${id}`, JSON.stringify({ DeploymentID: id, Groups: 5 }))).toEqual({
      status: 400,
      text: "json: cannot unmarshal number into Go struct field DeploymentPromoteRequest.Groups of type []string",
    });
    expect(await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, JSON.stringify({ DeploymentID: id, HealthyAllocationIDs: "abc" }))).toEqual({
      status: 400,
      text: "json: cannot unmarshal string into Go struct field DeploymentAllocHealthRequest.HealthyAllocationIDs of type []string",
    });
    expect(emu.stateHash()).toBe(before);
  });

  const MGMT = "11111111-2222-3333-4444-555555555555";
  const aclWorld = { scheduler: { acl: { enabled: true, tokens: [{ SecretID: MGMT, Name: "root", Type: "management" }] } } };

  it("an ACL token whose Policies nest arrays is a 400 (it overflowed the stack)", async () => {
    const emu = await createStandin({ fixture: aclWorld });
    const before = emu.stateHash();
    // Shrunk: PUT /v1/acl/token {"Name":"t","Type":"client","Policies":[[[[…]]]]} answered 500 `internal error: Maximum call stack size exceeded`.
    const res = await call(emu, "PUT", "/v1/acl/token", `{"Name":"t","Type":"client","Policies":${nested(900, '"p"')}}`, { "X-Nomad-Token": MGMT });
    expect(res).toEqual({ status: 400, text: "json: cannot unmarshal array into Go struct field ACLToken.Policies of type string" });
    expect(emu.stateHash()).toBe(before);
  });

  it("ACL rules nested past 1000 levels are a parse error (the rule parser overflowed the stack)", async () => {
    const emu = await createStandin({ fixture: aclWorld });
    const before = emu.stateHash();
    const put = (rules: string) => call(emu, "PUT", "/v1/acl/policy/fuzzy", JSON.stringify({ Name: "fuzzy", Rules: rules }), { "X-Nomad-Token": MGMT });
    const refused = (why: string) => ({ status: 400, text: `policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Failed to parse ACL Policy: ${why}\n\n` });
    // Shrunk: each of these answered 500 `internal error: Maximum call stack size exceeded`.
    expect(await put(`${'namespace "a" { '.repeat(1001)}${"}".repeat(1001)}`)).toEqual(refused("At 1: blocks and lists nested deeper than 1000 levels"));
    expect(await put(`namespace "a" { policy = ${nested(1001, '"read"')} }`)).toEqual(refused("At 1: blocks and lists nested deeper than 1000 levels"));
    expect(await put(`{"namespace":{"a":{"policy":${nested(1001, '"read"')}}}}`)).toEqual(refused("invalid JSON: nested deeper than 1000 levels"));
    expect(emu.stateHash()).toBe(before);
    // Nesting within the limit parses (and is refused for what it says, not for its depth).
    const deep = await put(`namespace "a" { policy = ${nested(990, '"read"')} }`);
    expect(deep.status).toBe(400);
    expect(deep.text).toContain("Invalid namespace policy");
  });

  it("an ACL rule string with a raw control character or an unknown escape is a 400 (it was a 500 from JSON.parse)", async () => {
    const emu = await createStandin({ fixture: aclWorld });
    const before = emu.stateHash();
    const put = (rules: string) => call(emu, "PUT", "/v1/acl/policy/fuzzy", JSON.stringify({ Name: "fuzzy", Rules: rules }), { "X-Nomad-Token": MGMT });
    // Shrunk: {"Name":"fuzzy","Description":"d","Rules":"namespace \"default\" { policy = \"\u0000read\" }"} answered 500
    // `internal error: Bad control character in string literal in JSON at position 1`.
    const raw = await put('namespace "default" { policy = "\u0000read" }');
    expect(raw.status).toBe(400);
    // Go's %#v writes the NUL as \x00 (strconv.Quote).
    expect(raw.text).toContain('Invalid namespace policy: &acl.NamespacePolicy{Name:"default", Policy:"\\x00read"');
    expect(await put('namespace "default" { policy = "\\qread" }')).toEqual({
      status: 400,
      text: "policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Failed to parse ACL Policy: At 1:32: illegal char escape\n\n",
    });
    expect(emu.stateHash()).toBe(before);
  });
});
