import { describe, expect, it } from "vitest";
import { JobDecodeError, SERVER_FIELDS, canonicalizeJob, specChanged, validateJob } from "../../src/scheduler/jobspec/index.js";
import { formatMultierror } from "../../src/core/go/multierror.js";

type Obj = Record<string, unknown>;

const S = 1_000_000_000;
const M = 60 * S;
const H = 60 * M;
const OPTS = { region: "global", namespace: "default" };

/** The minimal accepted job of reference §5.10. */
const MINIMAL = { ID: "example", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "redis" } }] }] };

const canon = (job: unknown, opts = OPTS): Obj => canonicalizeJob(job, opts);
const groups = (job: Obj): Obj[] => job["TaskGroups"] as Obj[];
const group = (job: Obj, i = 0): Obj => groups(job)[i] as Obj;
const task = (job: Obj, g = 0, t = 0): Obj => (group(job, g)["Tasks"] as Obj[])[t] as Obj;
const keys = (o: unknown): string[] => Object.keys(o as Obj).sort();

/** A job with one group and one task; `tg`/`tk` are merged into the group/task. */
function jobWith(top: Obj = {}, tg: Obj = {}, tk: Obj = {}): Obj {
  return { ID: "example", ...top, TaskGroups: [{ Name: "g", ...tg, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "redis" }, ...tk }] }] };
}

const SERVICE_RESTART = { Attempts: 2, Interval: 30 * M, Delay: 15 * S, Mode: "fail", RenderTemplates: false };
const BATCH_RESTART = { Attempts: 3, Interval: 24 * H, Delay: 15 * S, Mode: "fail", RenderTemplates: false };
const SERVICE_RESCHEDULE = { Attempts: 0, Interval: 0, Delay: 30 * S, DelayFunction: "exponential", MaxDelay: H, Unlimited: true };
const BATCH_RESCHEDULE = { Attempts: 1, Interval: 24 * H, Delay: 5 * S, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
const ZERO_RESCHEDULE = { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false };
const GROUP_UPDATE = {
  Stagger: 30 * S,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * S,
  HealthyDeadline: 5 * M,
  ProgressDeadline: 10 * M,
  AutoRevert: false,
  AutoPromote: false,
  Canary: 0,
};
const ZERO_UPDATE = { Stagger: 0, MaxParallel: 0, HealthCheck: "", MinHealthyTime: 0, HealthyDeadline: 0, ProgressDeadline: 0, AutoRevert: false, AutoPromote: false, Canary: 0 };
const DEFAULT_IDENTITY = { Name: "default", Audience: ["nomadproject.io"], ChangeMode: "", ChangeSignal: "", Env: false, File: false, Filepath: "", ServiceName: "", TTL: 0 };

/** Hand-written expectation for MINIMAL: every key a Nomad 1.9 GET returns, with its value. */
const EXPECTED_MINIMAL: Obj = {
  Stop: false,
  Region: "global",
  Namespace: "default",
  ID: "example",
  ParentID: "",
  Name: "example",
  Type: "service",
  Priority: 50,
  AllAtOnce: false,
  Datacenters: ["*"],
  NodePool: "default",
  Constraints: null,
  Affinities: null,
  Spreads: null,
  TaskGroups: [
    {
      Name: "g",
      Count: 1,
      Update: GROUP_UPDATE,
      Migrate: { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * S, HealthyDeadline: 5 * M },
      Constraints: null,
      Scaling: null,
      RestartPolicy: SERVICE_RESTART,
      Disconnect: null,
      Tasks: [
        {
          Name: "t",
          Driver: "docker",
          User: "",
          Config: { image: "redis" },
          Env: null,
          Services: null,
          Vault: null,
          Consul: null,
          Templates: null,
          Constraints: null,
          Affinities: null,
          Resources: { CPU: 100, Cores: 0, MemoryMB: 300, MemoryMaxMB: 0, DiskMB: 0, IOPS: 0, Networks: null, Devices: null, NUMA: null, SecretsMB: 0 },
          RestartPolicy: SERVICE_RESTART,
          DispatchPayload: null,
          Lifecycle: null,
          Meta: null,
          KillTimeout: 5 * S,
          LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false },
          Artifacts: null,
          Leader: false,
          ShutdownDelay: 0,
          VolumeMounts: null,
          ScalingPolicies: null,
          KillSignal: "",
          Kind: "",
          CSIPluginConfig: null,
          Identity: DEFAULT_IDENTITY,
          Identities: null,
          Actions: null,
          Schedule: null,
        },
      ],
      EphemeralDisk: { Sticky: false, SizeMB: 300, Migrate: false },
      Meta: null,
      ReschedulePolicy: SERVICE_RESCHEDULE,
      Affinities: null,
      Spreads: null,
      Networks: null,
      Consul: { Namespace: "", Cluster: "default", Partition: "" },
      Services: null,
      Volumes: null,
      ShutdownDelay: null,
      StopAfterClientDisconnect: null,
      MaxClientDisconnect: null,
      PreventRescheduleOnLost: false,
    },
  ],
  Update: { ...ZERO_UPDATE, Stagger: 30 * S, MaxParallel: 1 },
  Multiregion: null,
  Periodic: null,
  ParameterizedJob: null,
  Dispatched: false,
  DispatchIdempotencyToken: "",
  Payload: null,
  Meta: null,
  ConsulToken: "",
  ConsulNamespace: "",
  VaultToken: "",
  VaultNamespace: "",
  NomadTokenID: "",
  Status: "pending",
  StatusDescription: "",
  Stable: false,
  Version: 0,
  SubmitTime: 0,
  CreateIndex: 0,
  ModifyIndex: 0,
  JobModifyIndex: 0,
  UI: null,
  VersionTag: null,
};

describe("canonicalizeJob: the minimal job", () => {
  const job = canon(MINIMAL);

  it("equals the full server-side object", () => {
    expect(job).toStrictEqual(EXPECTED_MINIMAL);
  });

  it.each([
    ["job", job, EXPECTED_MINIMAL],
    ["task group", group(job), (EXPECTED_MINIMAL["TaskGroups"] as Obj[])[0]],
    ["task", task(job), ((EXPECTED_MINIMAL["TaskGroups"] as Obj[])[0]!["Tasks"] as Obj[])[0]],
  ])("%s has exactly the 1.9 key set", (_label, actual, expected) => {
    expect(keys(actual)).toEqual(keys(expected));
  });

  it("contains no undefined anywhere (it survives a JSON round trip unchanged)", () => {
    expect(JSON.parse(JSON.stringify(job))).toStrictEqual(job);
  });

  it("is valid", () => {
    expect(validateJob(job)).toEqual([]);
  });

  it("does not mutate its input and is deterministic", () => {
    const input = structuredClone(MINIMAL);
    const a = canon(input);
    expect(input).toStrictEqual(MINIMAL);
    expect(canon(input)).toStrictEqual(a);
  });
});

describe("canonicalizeJob: defaults by job type", () => {
  const cases: Array<[string, Obj]> = [
    ["service", { update: GROUP_UPDATE, migrate: true, restart: SERVICE_RESTART, reschedule: SERVICE_RESCHEDULE, jobUpdate: { ...ZERO_UPDATE, Stagger: 30 * S, MaxParallel: 1 } }],
    ["batch", { update: null, migrate: false, restart: BATCH_RESTART, reschedule: BATCH_RESCHEDULE, jobUpdate: ZERO_UPDATE }],
    ["system", { update: null, migrate: false, restart: SERVICE_RESTART, reschedule: null, jobUpdate: ZERO_UPDATE }],
    ["sysbatch", { update: null, migrate: false, restart: BATCH_RESTART, reschedule: ZERO_RESCHEDULE, jobUpdate: ZERO_UPDATE }],
  ];

  it.each(cases)("%s", (type, want) => {
    const job = canon(jobWith({ Type: type }));
    const tg = group(job);
    expect(tg["Update"]).toStrictEqual(want["update"]);
    expect(tg["Migrate"] !== null).toBe(want["migrate"]);
    expect(tg["RestartPolicy"]).toStrictEqual(want["restart"]);
    expect(task(job)["RestartPolicy"]).toStrictEqual(want["restart"]);
    expect(tg["ReschedulePolicy"]).toStrictEqual(want["reschedule"]);
    expect(job["Update"]).toStrictEqual(want["jobUpdate"]);
    expect(tg["EphemeralDisk"]).toStrictEqual({ Sticky: false, SizeMB: 300, Migrate: false });
    expect(validateJob(job)).toEqual([]);
  });

  it("system groups with count 0 get count 1", () => {
    expect(group(canon(jobWith({ Type: "system" }, { Count: 0 })))["Count"]).toBe(1);
    expect(group(canon(jobWith({ Type: "service" }, { Count: 0 })))["Count"]).toBe(0);
  });
});

describe("canonicalizeJob: decoding like encoding/json", () => {
  it("matches keys case-insensitively and keeps map keys as sent", () => {
    const job = canon({
      id: "x",
      PRIORITY: 70,
      taskgroups: [{ name: "g", COUNT: 2, tasks: [{ name: "t", driver: "exec", config: { Command: "/bin/true" }, meta: { Owner: "me" } }] }],
    });
    expect(job["ID"]).toBe("x");
    expect(job["Name"]).toBe("x");
    expect(job["Priority"]).toBe(70);
    expect(group(job)["Name"]).toBe("g");
    expect(group(job)["Count"]).toBe(2);
    expect(task(job)["Driver"]).toBe("exec");
    expect(task(job)["Config"]).toStrictEqual({ Command: "/bin/true" });
    expect(task(job)["Meta"]).toStrictEqual({ Owner: "me" });
  });

  it("ignores unknown keys at every level", () => {
    const job = canon({ ...MINIMAL, Bogus: 1, TaskGroups: [{ Name: "g", Whatever: [1], Tasks: [{ Name: "t", Driver: "docker", Config: { image: "redis" }, Nope: {} }] }] });
    expect(job).toStrictEqual(EXPECTED_MINIMAL);
  });

  it("treats null as absent", () => {
    const job = canon({ ...MINIMAL, Priority: null, Type: null, Name: null, Meta: null, Update: null });
    expect(job).toStrictEqual(EXPECTED_MINIMAL);
  });

  it("decodes a repeated struct key into the same struct, like Go", () => {
    const job = canon(JSON.parse('{"ID":"x","Update":{"MaxParallel":2},"update":{"Canary":1},"TaskGroups":[{"Name":"g","Tasks":[{"Name":"t","Driver":"d"}]}]}'));
    expect(group(job)["Update"]).toMatchObject({ MaxParallel: 2, Canary: 1 });
  });

  const wrongTypes: Array<[string, unknown, string]> = [
    ["string priority", { ID: "x", Priority: "high" }, "json: cannot unmarshal string into Go struct field Job.Job.Priority of type int"],
    ["fractional priority", { ID: "x", Priority: 1.5 }, "json: cannot unmarshal number 1.5 into Go struct field Job.Job.Priority of type int"],
    ["negative uint64", { ID: "x", Version: -1 }, "json: cannot unmarshal number -1 into Go struct field Job.Job.Version of type uint64"],
    ["string bool", { ID: "x", Stop: "true" }, "json: cannot unmarshal string into Go struct field Job.Job.Stop of type bool"],
    ["number ID", { ID: 7 }, "json: cannot unmarshal number into Go struct field Job.Job.ID of type string"],
    ["object task groups", { ID: "x", TaskGroups: {} }, "json: cannot unmarshal object into Go struct field Job.Job.TaskGroups of type []*api.TaskGroup"],
    ["string task group", { ID: "x", TaskGroups: ["g"] }, "json: cannot unmarshal string into Go struct field Job.Job.TaskGroups of type api.TaskGroup"],
    ["string count", { ID: "x", TaskGroups: [{ Name: "g", Count: "3" }] }, "json: cannot unmarshal string into Go struct field TaskGroup.Job.TaskGroups.Count of type int"],
    [
      "array config",
      { ID: "x", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Config: [] }] }] },
      "json: cannot unmarshal array into Go struct field Task.Job.TaskGroups.Tasks.Config of type map[string]interface {}",
    ],
    ["number in meta", { ID: "x", Meta: { a: 1 } }, "json: cannot unmarshal number into Go struct field Job.Job.Meta of type string"],
    ["string datacenters", { ID: "x", Datacenters: "dc1" }, "json: cannot unmarshal string into Go struct field Job.Job.Datacenters of type []string"],
    ["string update", { ID: "x", Update: "x" }, "json: cannot unmarshal string into Go struct field Job.Job.Update of type api.UpdateStrategy"],
    [
      "duration as text",
      { ID: "x", Update: { MinHealthyTime: "10s" } },
      "json: cannot unmarshal string into Go struct field UpdateStrategy.Job.Update.MinHealthyTime of type time.Duration",
    ],
    ["int8 overflow", { ID: "x", Affinities: [{ Weight: 300 }] }, "json: cannot unmarshal number 300 into Go struct field Affinity.Job.Affinities.Weight of type int8"],
    [
      "deep task field",
      { ID: "x", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Resources: { CPU: true } }] }] },
      "json: cannot unmarshal bool into Go struct field Resources.Job.TaskGroups.Tasks.Resources.CPU of type int",
    ],
    ["job not an object", "x", "json: cannot unmarshal string into Go struct field JobRegisterRequest.Job of type api.Job"],
    ["job array", [], "json: cannot unmarshal array into Go struct field JobRegisterRequest.Job of type api.Job"],
    ["no job", null, "Job must be specified"],
    ["bad base64 payload", { ID: "x", Payload: "a*bc" }, "illegal base64 data at input byte 1"],
  ];

  it.each(wrongTypes)("%s → JobDecodeError", (_label, input, message) => {
    let caught: unknown;
    try {
      canonicalizeJob(input, OPTS);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(JobDecodeError);
    expect(caught).toBeInstanceOf(Error);
    expect((caught as Error).message).toBe(message);
  });
});

describe("canonicalizeJob: job-level fields", () => {
  it("takes region and namespace from the options, overriding the job's", () => {
    const job = canon({ ...MINIMAL, Region: "eu", Namespace: "team" }, { region: "us", namespace: "prod" });
    expect(job["Region"]).toBe("us");
    expect(job["Namespace"]).toBe("prod");
  });

  it.each([
    [undefined, 50],
    [0, 50],
    [70, 70],
    [101, 101],
  ])("priority %s → %s", (given, want) => {
    expect(canon(given === undefined ? MINIMAL : { ...MINIMAL, Priority: given })["Priority"]).toBe(want);
  });

  it.each([
    [undefined, ["*"]],
    [[], ["*"]],
    [
      ["dc1", "dc2"],
      ["dc1", "dc2"],
    ],
  ])("datacenters %j → %j", (given, want) => {
    expect(canon(given === undefined ? MINIMAL : { ...MINIMAL, Datacenters: given })["Datacenters"]).toEqual(want);
  });

  it("keeps an explicit name and node pool", () => {
    const job = canon({ ...MINIMAL, Name: "pretty", NodePool: "gpu" });
    expect(job["Name"]).toBe("pretty");
    expect(job["NodePool"]).toBe("gpu");
  });

  it("never stores tokens, keeps meta and constraints, drops empty ones", () => {
    const job = canon({
      ...MINIMAL,
      ConsulToken: "c",
      VaultToken: "v",
      Meta: { a: "b" },
      Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
      Affinities: [],
    });
    expect(job["ConsulToken"]).toBe("");
    expect(job["VaultToken"]).toBe("");
    expect(job["Meta"]).toStrictEqual({ a: "b" });
    expect(job["Constraints"]).toStrictEqual([{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }]);
    expect(job["Affinities"]).toBeNull();
    expect(canon({ ...MINIMAL, Meta: {} })["Meta"]).toBeNull();
  });

  it("defaults affinity and spread weights to 50", () => {
    const job = canon({ ...MINIMAL, Affinities: [{ LTarget: "${node.class}", RTarget: "big", Operand: "=" }], Spreads: [{ Attribute: "${node.datacenter}" }] });
    expect(job["Affinities"]).toStrictEqual([{ LTarget: "${node.class}", RTarget: "big", Operand: "=", Weight: 50 }]);
    expect(job["Spreads"]).toStrictEqual([{ Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: null }]);
  });

  it("canonicalizes periodic and parameterized blocks", () => {
    const job = canon({ ...MINIMAL, Type: "batch", Periodic: { Spec: "*/5 * * * *" }, ParameterizedJob: { MetaRequired: ["k"] } });
    expect(job["Periodic"]).toStrictEqual({ Enabled: true, Spec: "*/5 * * * *", Specs: null, SpecType: "cron", ProhibitOverlap: false, TimeZone: "UTC" });
    expect(job["ParameterizedJob"]).toStrictEqual({ Payload: "optional", MetaRequired: ["k"], MetaOptional: null });
  });
});

describe("canonicalizeJob: update strategies", () => {
  it("merges the job update into each group and keeps only Stagger/MaxParallel at job level", () => {
    const job = canon(jobWith({ Update: { MaxParallel: 2, Canary: 1, AutoRevert: true } }, { Update: { Canary: 3 } }));
    expect(group(job)["Update"]).toStrictEqual({ ...GROUP_UPDATE, MaxParallel: 2, Canary: 3, AutoRevert: true });
    expect(job["Update"]).toStrictEqual({ ...ZERO_UPDATE, Stagger: 30 * S, MaxParallel: 2 });
  });

  it("a job update with max_parallel 0 leaves a zero job-level update and a 0 group max_parallel", () => {
    const job = canon(jobWith({ Update: { MaxParallel: 0 } }));
    expect(job["Update"]).toStrictEqual(ZERO_UPDATE);
    expect(group(job)["Update"]).toStrictEqual({ ...GROUP_UPDATE, MaxParallel: 0 });
  });

  it("a batch group that asks for an update block keeps it (and fails validation)", () => {
    const job = canon(jobWith({ Type: "batch" }, { Update: { MaxParallel: 1 } }));
    expect(group(job)["Update"]).toStrictEqual(GROUP_UPDATE);
    expect(validateJob(job)).toEqual([`Task group g validation failed: 1 error occurred:\n\t* Job type "batch" does not allow update block\n\n`]);
  });
});

describe("canonicalizeJob: groups", () => {
  it("takes the count from scaling.min and builds the scaling policy", () => {
    const job = canon(jobWith({}, { Scaling: { Min: 2, Max: 5, Policy: { cooldown: "1m" } } }), { region: "global", namespace: "prod" });
    expect(group(job)["Count"]).toBe(2);
    expect(group(job)["Scaling"]).toStrictEqual({
      ID: "",
      Type: "horizontal",
      Target: { Namespace: "prod", Job: "example", Group: "g" },
      Policy: { cooldown: "1m" },
      Min: 2,
      Max: 5,
      Enabled: true,
      CreateIndex: 0,
      ModifyIndex: 0,
    });
  });

  it("merges restart and reschedule blocks over the defaults (job → group → task)", () => {
    const job = canon(
      jobWith(
        { Reschedule: { Attempts: 5, Unlimited: false, Interval: H } },
        { RestartPolicy: { Attempts: 7 }, ReschedulePolicy: { Delay: 10 * S } },
        { RestartPolicy: { Mode: "delay" } },
      ),
    );
    expect(group(job)["RestartPolicy"]).toStrictEqual({ ...SERVICE_RESTART, Attempts: 7 });
    expect(task(job)["RestartPolicy"]).toStrictEqual({ ...SERVICE_RESTART, Attempts: 7, Mode: "delay" });
    expect(group(job)["ReschedulePolicy"]).toStrictEqual({ ...SERVICE_RESCHEDULE, Attempts: 5, Unlimited: false, Interval: H, Delay: 10 * S });
  });

  it("inherits the job's consul namespace into the group consul block", () => {
    const job = canon(jobWith({ ConsulNamespace: "team" }));
    expect(group(job)["Consul"]).toStrictEqual({ Namespace: "team", Cluster: "default", Partition: "" });
    expect(job["ConsulNamespace"]).toBe("");
  });

  it("keeps disconnect settings with their defaults", () => {
    const job = canon(jobWith({}, { Disconnect: { LostAfter: H } }));
    expect(group(job)["Disconnect"]).toStrictEqual({ LostAfter: H, StopOnClientAfter: null, Replace: true, Reconcile: "best_score" });
  });

  it("leaves zero network and port fields out and defaults the host network", () => {
    const job = canon(jobWith({}, { Networks: [{ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 8080 }], ReservedPorts: [] }] }));
    expect(group(job)["Networks"]).toStrictEqual([{ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 8080, HostNetwork: "default" }] }]);
  });

  it("names services and checks the way Nomad does", () => {
    const job = canon(
      jobWith(
        {},
        { Networks: [{ DynamicPorts: [{ Label: "http" }] }], Services: [{ PortLabel: "http", Checks: [{ Type: "http", Path: "/", Interval: 10 * S, Timeout: 2 * S }] }] },
        { Services: [{ Name: "${TASK}-svc", PortLabel: "http", Tags: [] }] },
      ),
    );
    const groupService = (group(job)["Services"] as Obj[])[0] as Obj;
    expect(groupService).toMatchObject({
      Name: "example-g",
      TaskName: "",
      AddressMode: "auto",
      Provider: "consul",
      Namespace: "default",
      Cluster: "default",
      OnUpdate: "require_healthy",
    });
    expect((groupService["Checks"] as Obj[])[0]).toMatchObject({ Name: 'service: "example-g" check', OnUpdate: "require_healthy", TaskName: "", CheckRestart: null });
    const taskService = (task(job)["Services"] as Obj[])[0] as Obj;
    expect(taskService).toMatchObject({ Name: "t-svc", TaskName: "t", Tags: null, Checks: null });
    expect(validateJob(job)).toEqual([]);
  });
});

describe("canonicalizeJob: implied constraints (jobImpliedConstraints mutator)", () => {
  const CONSUL = { LTarget: "${attr.consul.version}", RTarget: ">= 1.7.0", Operand: "semver" };
  const NOMAD_SD = { LTarget: "${attr.nomad.service_discovery}", RTarget: "true", Operand: "=" };
  const NOMAD_CHECKS = { LTarget: "${attr.nomad.version}", RTarget: ">= 1.4.0", Operand: "semver" };
  const VAULT = { LTarget: "${attr.vault.version}", RTarget: ">= 0.6.1", Operand: "semver" };
  const http = { Networks: [{ DynamicPorts: [{ Label: "http" }] }] };

  it.each([
    ["nothing for a plain job", {}, {}, null],
    ["consul for a group service", { ...http, Services: [{ PortLabel: "http" }] }, {}, [CONSUL]],
    ["nothing for task-only consul services (Nomad walks group services)", http, { Services: [{ Name: "web", PortLabel: "http" }] }, null],
    [
      "nomad service discovery and checks",
      { ...http, Services: [{ Provider: "nomad", PortLabel: "http", Checks: [{ Type: "http", Path: "/", Interval: 10 * S, Timeout: S }] }] },
      {},
      [NOMAD_SD, NOMAD_CHECKS],
    ],
    [
      "signals from kill_signal and templates",
      {},
      { KillSignal: "SIGTERM", Templates: [{ EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "signal", ChangeSignal: "sighup" }] },
      [{ Operand: "set_contains", LTarget: "${attr.os.signals}", RTarget: "SIGHUP,SIGTERM" }],
    ],
    ["vault", {}, { Vault: { Policies: ["p"] } }, [VAULT]],
    [
      "none over a user constraint on the same attribute",
      { ...http, Constraints: [{ LTarget: "${attr.consul.version}", RTarget: ">= 1.10.0", Operand: "semver" }], Services: [{ PortLabel: "http" }] },
      {},
      [{ LTarget: "${attr.consul.version}", RTarget: ">= 1.10.0", Operand: "semver" }],
    ],
  ])("%s", (_label, tg, tk, want) => {
    const job = canon(jobWith({}, tg, tk));
    expect(group(job)["Constraints"]).toStrictEqual(want);
    expect(validateJob(job)).toEqual([]);
  });
});

describe("canonicalizeJob: tasks", () => {
  it.each([
    ["defaults", {}, { CPU: 100, Cores: 0, MemoryMB: 300, MemoryMaxMB: 0 }],
    ["cores instead of cpu", { Cores: 2 }, { CPU: 0, Cores: 2, MemoryMB: 300, MemoryMaxMB: 0 }],
    ["explicit values", { CPU: 500, MemoryMB: 256, MemoryMaxMB: 512 }, { CPU: 500, Cores: 0, MemoryMB: 256, MemoryMaxMB: 512 }],
  ])("resources: %s", (_label, resources, want) => {
    expect(task(canon(jobWith({}, {}, { Resources: resources })))["Resources"]).toMatchObject(want);
  });

  it.each([
    [undefined, 5 * S],
    [0, 5 * S],
    [30 * S, 30 * S],
  ])("kill timeout %s → %s", (given, want) => {
    expect(task(canon(jobWith({}, {}, given === undefined ? {} : { KillTimeout: given })))["KillTimeout"]).toBe(want);
  });

  it("fills log config and template defaults", () => {
    const t = task(canon(jobWith({}, {}, { LogConfig: { MaxFiles: 3 }, Templates: [{ EmbeddedTmpl: "x", DestPath: "local/x" }] })));
    expect(t["LogConfig"]).toStrictEqual({ MaxFiles: 3, MaxFileSizeMB: 10, Disabled: false });
    expect((t["Templates"] as Obj[])[0]).toMatchObject({
      ChangeMode: "restart",
      ChangeSignal: "",
      Splay: 5 * S,
      Perms: "0644",
      LeftDelim: "{{",
      RightDelim: "}}",
      Uid: null,
      Wait: null,
    });
  });

  it("moves a default identity out of Identities", () => {
    const t = task(
      canon(
        jobWith(
          {},
          {},
          {
            Identities: [
              { Name: "default", Env: true },
              { Name: "vault_default", Audience: ["vault.io"], TTL: H },
            ],
          },
        ),
      ),
    );
    expect(t["Identity"]).toStrictEqual({ ...DEFAULT_IDENTITY, Env: true });
    expect(t["Identities"]).toStrictEqual([
      { Name: "vault_default", Audience: ["vault.io"], ChangeMode: "", ChangeSignal: "", Env: false, File: false, Filepath: "", ServiceName: "", TTL: H },
    ]);
  });

  it("defaults artifacts and vault blocks", () => {
    const t = task(canon(jobWith({ VaultNamespace: "ns" }, {}, { Artifacts: [{ GetterSource: "https://x/y/app.tgz", GetterMode: "file" }], Vault: { Policies: ["p"] } })));
    expect((t["Artifacts"] as Obj[])[0]).toStrictEqual({
      GetterSource: "https://x/y/app.tgz",
      GetterOptions: null,
      GetterHeaders: null,
      GetterMode: "file",
      GetterInsecure: false,
      RelativeDest: "local/app.tgz",
      Chown: false,
    });
    expect(t["Vault"]).toStrictEqual({
      Role: "",
      Policies: ["p"],
      Namespace: "ns",
      Cluster: "default",
      Env: true,
      DisableFile: false,
      ChangeMode: "restart",
      ChangeSignal: "SIGHUP",
      AllowTokenExpiration: false,
    });
  });
});

describe("validateJob: top-level messages in Nomad's order", () => {
  it("reports every job-level problem in order", () => {
    const job = canon({ ID: "a b", Name: "", Type: "foo", Priority: 101 }, { region: "", namespace: "" });
    expect(validateJob(job)).toEqual([
      "Missing job region",
      "Job ID contains a space",
      "Missing job name",
      "Job must be in a namespace",
      'Invalid job type: "foo"',
      "Missing job task groups",
      "job priority must be between [1, 100]",
    ]);
  });

  it.each([
    ["missing ID and type", { ID: "", Name: "n", Type: "" }, ["Missing job ID", "Missing job type"]],
    ["null character in the ID (the name defaults to it)", { ID: "a\u0000b" }, ["Job ID contains a null character", "Job Name contains a null character"]],
    ["null character in the ID only", { ID: "a\u0000b", Name: "n" }, ["Job ID contains a null character"]],
    ["negative priority", { Priority: -5 }, ["job priority must be between [1, 100]"]],
    ["core type", { Type: "_core" }, ["job type cannot be core"]],
    ["periodic service job", { Periodic: { Spec: "@daily" } }, ['Periodic can only be used with "batch" or "sysbatch" scheduler']],
  ])("%s", (_label, top, want) => {
    expect(validateJob(canon(jobWith(top)))).toEqual(want);
  });

  it("reports missing datacenters for a non-canonical job", () => {
    const job = { ...canon(MINIMAL), Datacenters: [] };
    expect(validateJob(job)).toEqual(["Missing job datacenters"]);
  });

  it("renders constraint errors as a nested multierror", () => {
    const job = canon({ ...MINIMAL, Constraints: [{ Operand: "=" }] });
    expect(validateJob(job)).toEqual([
      'Constraint 1 validation failed: 2 errors occurred:\n\t* Operator "=" requires an RTarget\n\t* No LTarget provided but is required by constraint\n\n',
    ]);
  });

  it("reports duplicate groups before the groups' own errors", () => {
    const job = canon({ ID: "x", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "d" }] }, { Name: "g" }] });
    expect(validateJob(job)).toEqual(["Job task group 2 redefines 'g' from group 1", "Task group g validation failed: 1 error occurred:\n\t* Missing tasks for task group\n\n"]);
  });
});

describe("validateJob: task groups and tasks", () => {
  const groupErrors = (top: Obj, tg: Obj, tk: Obj = {}): string[] => validateJob(canon(jobWith(top, tg, tk)));
  const wrap = (errors: string[]): string[] => [`Task group g validation failed: ${formatMultierror(errors)}`];

  it("nests missing tasks inside the group error", () => {
    expect(validateJob(canon({ ID: "x", TaskGroups: [{ Name: "web" }] }))).toEqual(["Task group web validation failed: 1 error occurred:\n\t* Missing tasks for task group\n\n"]);
  });

  it("reports a negative count", () => {
    expect(groupErrors({}, { Count: -1 })).toEqual(wrap(["Task group count can't be negative"]));
  });

  it("reports duplicate tasks, and nests each task's own errors", () => {
    const job = canon({ ID: "x", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "d" }, { Name: "t", Driver: "d" }, {}] }] });
    expect(validateJob(job)).toEqual([
      "Task group g validation failed: 3 errors occurred:\n" +
        "\t* Task 2 redefines 't' from task 1\n" +
        "\t* Task 3 missing name\n" +
        "\t* Task  validation failed: 2 errors occurred:\n\t* Missing task name\n\t* Missing task driver\n\n\n\n",
    ]);
  });

  it("flattens update strategy errors into the group's list", () => {
    const errors = groupErrors(
      {},
      { Update: { HealthCheck: "bogus", MaxParallel: -1, Canary: -1, MinHealthyTime: 10 * M, HealthyDeadline: 5 * M, ProgressDeadline: M, Stagger: 0 } },
    );
    expect(errors).toEqual(
      wrap([
        'Invalid health check given: "bogus"',
        "Max parallel can not be less than zero: -1 < 0",
        "Canary count can not be less than zero: -1 < 0",
        "Minimum healthy time must be less than healthy deadline: 10m0s > 5m0s",
        "Healthy deadline must be less than progress deadline: 5m0s > 1m0s",
        "Stagger must be greater than zero: 0s",
      ]),
    );
  });

  it.each([
    ["auto promote without canaries", { AutoPromote: true }, ["Auto Promote requires a Canary count greater than zero"]],
    [
      "non-positive healthy deadline",
      { HealthyDeadline: 0, MinHealthyTime: 0 },
      ["Healthy deadline must be greater than zero: 0s", "Minimum healthy time must be less than healthy deadline: 0s > 0s"],
    ],
    [
      "negative progress deadline",
      { ProgressDeadline: -1 * S },
      ["Progress deadline must be zero or greater: -1s", "Healthy deadline must be less than progress deadline: 5m0s > -1s"],
    ],
    ["progress deadline 0 is allowed", { ProgressDeadline: 0 }, []],
    ["negative min healthy time", { MinHealthyTime: -1 * S }, ["Minimum healthy time may not be less than zero: -1s"]],
  ])("update: %s", (_label, update, want) => {
    expect(groupErrors({}, { Update: update })).toEqual(want.length === 0 ? [] : wrap(want));
  });

  it.each([
    ["unsupported mode", { Mode: "bogus" }, ['Unsupported restart mode: "bogus"']],
    ["ambiguous delay mode", { Mode: "delay", Attempts: 0 }, ['Restart policy "delay" with 0 attempts is ambiguous']],
    ["short interval", { Interval: S, Attempts: 0 }, ["Interval can not be less than 5s (got 1s)"]],
    ["too many attempts", { Attempts: 10, Delay: 5 * M }, ["Nomad can't restart the TaskGroup 10 times in an interval of 30m0s with a delay of 5m0s"]],
  ])("restart policy: %s", (_label, restart, want) => {
    expect(groupErrors({}, { RestartPolicy: restart })).toEqual(wrap(want));
  });

  it.each([
    ["batch: short delay", "batch", { Delay: S }, ["Delay cannot be less than 5s (got 1s)"]],
    ["service: bad function", "service", { DelayFunction: "linear" }, ['Invalid delay function "linear", must be one of ["constant" "exponential" "fibonacci"]']],
    // strconv.Quote escapes a character that is not printable (here U+2028); a hand-rolled quote wrote it raw.
    [
      "service: unprintable function name",
      "service",
      { DelayFunction: "lin\u2028ear" },
      ['Invalid delay function "lin\\u2028ear", must be one of ["constant" "exponential" "fibonacci"]'],
    ],
    [
      "batch: attempts do not fit",
      "batch",
      { Attempts: 10, Interval: M, Delay: 30 * S },
      ['Nomad can only make 2 attempts in 1m0s with initial delay 30s and delay function "constant"', "Set the interval to at least 5m0s to accommodate 10 attempts"],
    ],
    [
      "service: attempts with unlimited",
      "service",
      { Attempts: 3, Interval: H },
      ["Reschedule Policy with Attempts = 3, Interval = 1h0m0s, and Unlimited = true is ambiguous", "If Attempts >0, Unlimited cannot also be set to true"],
    ],
  ])("reschedule policy: %s", (_label, type, reschedule, want) => {
    expect(groupErrors({ Type: type }, { ReschedulePolicy: reschedule })).toEqual(wrap(want));
  });

  it("rejects reschedule and migrate blocks where the job type forbids them", () => {
    expect(groupErrors({ Type: "system" }, { ReschedulePolicy: { Attempts: 1 } })).toEqual(wrap(["System jobs should not have a reschedule policy"]));
    expect(groupErrors({ Type: "batch" }, { Migrate: { MaxParallel: 1 } })).toEqual(wrap(['Job type "batch" does not allow migrate block']));
  });

  it("reports a small ephemeral disk and the log storage that no longer fits", () => {
    expect(groupErrors({}, { EphemeralDisk: { SizeMB: 5 } })).toEqual(
      wrap([
        "minimum DiskMB value is 10; got 5",
        "Task t validation failed: 1 error occurred:\n\t* 1 error occurred:\n\t* log storage (100 MB) must be less than requested disk capacity (5 MB)\n\n\n\n",
      ]),
    );
  });

  it("nests resource minimums twice, as Nomad's Resources.Validate does", () => {
    expect(groupErrors({}, {}, { Resources: { CPU: 0, MemoryMB: 5 } })).toEqual(
      wrap([
        "Task t validation failed: 1 error occurred:\n\t* 1 error occurred:\n\t* 2 errors occurred:\n\t* minimum CPU value is 1; got 0\n\t* minimum MemoryMB value is 10; got 5\n\n\n\n\n\n",
      ]),
    );
  });

  it("requires service ports to exist in the group network", () => {
    const service = { Services: [{ Name: "web", PortLabel: "http" }] };
    expect(groupErrors({}, {}, service)).toEqual(
      wrap(['Task t validation failed: 1 error occurred:\n\t* 1 error occurred:\n\t* port label "http" referenced by services web does not exist\n\n\n\n']),
    );
    expect(groupErrors({}, { Networks: [{ DynamicPorts: [{ Label: "http" }] }] }, service)).toEqual([]);
  });

  it("reports a task kill timeout longer than the progress deadline", () => {
    expect(groupErrors({}, {}, { KillTimeout: 11 * M })).toEqual(
      wrap(["Task t validation failed: 1 error occurred:\n\t* KillTimout (11m0s) longer than the group's ProgressDeadline (10m0s)\n\n"]),
    );
  });
});

describe("formatMultierror", () => {
  it.each([
    [["Missing job ID"], "1 error occurred:\n\t* Missing job ID\n\n"],
    [["a", "b"], "2 errors occurred:\n\t* a\n\t* b\n\n"],
    [["a", "b", "c"], "3 errors occurred:\n\t* a\n\t* b\n\t* c\n\n"],
    [
      ["Task group g validation failed: " + "1 error occurred:\n\t* Missing tasks for task group\n\n"],
      "1 error occurred:\n\t* Task group g validation failed: 1 error occurred:\n\t* Missing tasks for task group\n\n\n\n",
    ],
  ])("%j", (errors, text) => {
    expect(formatMultierror(errors)).toBe(text);
  });

  it("renders the reference's python-nomad example", () => {
    expect(formatMultierror(validateJob(canon({ ...MINIMAL, ID: "has space" })))).toBe("1 error occurred:\n\t* Job ID contains a space\n\n");
  });
});

describe("specChanged and SERVER_FIELDS", () => {
  it("lists the server-set fields with their initial values", () => {
    expect(SERVER_FIELDS).toStrictEqual({ Status: "pending", StatusDescription: "", Stable: false, Version: 0, SubmitTime: 0, CreateIndex: 0, ModifyIndex: 0, JobModifyIndex: 0 });
    expect(Object.isFrozen(SERVER_FIELDS)).toBe(true);
  });

  const stored = { ...canon(MINIMAL), Status: "running", StatusDescription: "x", Stable: true, Version: 3, SubmitTime: 123, CreateIndex: 10, ModifyIndex: 20, JobModifyIndex: 15 };

  it("is false for the same spec with different server fields", () => {
    expect(specChanged(stored, canon(MINIMAL))).toBe(false);
    expect(specChanged(canon(MINIMAL), stored)).toBe(false);
  });

  it.each([
    ["count", jobWith({}, { Count: 2 })],
    ["image", jobWith({}, {}, { Config: { image: "redis:7" } })],
    ["job meta", jobWith({ Meta: { team: "a" } })],
    ["task meta", jobWith({}, {}, { Meta: { team: "a" } })],
    ["priority", jobWith({ Priority: 60 })],
    ["stop flag", jobWith({ Stop: true })],
  ])("is true for a changed %s", (_label, next) => {
    expect(specChanged(stored, canon(next))).toBe(true);
  });

  it("tells a null list from an empty one, like reflect.DeepEqual", () => {
    expect(specChanged({ ...stored, Constraints: null }, { ...stored, Constraints: [] })).toBe(true);
  });
});
