/**
 * The Go client's `api.Job.Canonicalize()` applied to an api.Job JSON object,
 * as `POST /v1/jobs/parse` does with `Canonicalize: true`. Unlike
 * ../canonicalize/ (which produces the server's structs.Job), this keeps the
 * api shape and only fills the client-side defaults: job defaults and the
 * default update strategy, group count/ephemeral disk/consul/update/
 * reschedule/migrate/restart merges, task resources/kill timeout/logs/
 * artifacts/templates/vault/restart, services (names, address mode,
 * provider, check_restart merge, the Connect sidecar service and task),
 * affinity and spread weights, Connect gateways (proxy timeout, listener protocol).
 *
 * Source read: api/jobs.go, api/tasks.go, api/resources.go, api/services.go,
 * api/consul.go, api/scaling.go (the `Canonicalize` methods).
 */
import { zeroStruct } from "./api-structs.js";
import type { Obj } from "./decode.js";

const SECOND = 1_000_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

const objs = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

function fill(target: Obj, defaults: Obj): void {
  for (const [k, v] of Object.entries(defaults)) if (target[k] === null || target[k] === undefined) target[k] = v;
}

/** Fields of `override` that are set replace those of a copy of `base` (the Go `Merge` methods). */
function merged(base: Obj, override: Obj | null): Obj {
  const out = structuredClone(base);
  if (override) for (const [k, v] of Object.entries(override)) if (v !== null) out[k] = v;
  return out;
}

const defaultUpdate = (): Obj => ({
  Stagger: 30 * SECOND,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * SECOND,
  HealthyDeadline: 5 * MINUTE,
  ProgressDeadline: 10 * MINUTE,
  Canary: 0,
  AutoRevert: false,
  AutoPromote: false,
});

function updateEmpty(u: Obj): boolean {
  return Object.values(u).every((v) => v === null || v === 0 || v === "" || v === false);
}

function defaultReschedule(type: string): Obj {
  if (type === "service") return { Attempts: 0, Interval: 0, Delay: 30 * SECOND, DelayFunction: "exponential", MaxDelay: HOUR, Unlimited: true };
  if (type === "batch") return { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
  return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false };
}

const defaultRestart = (type: string): Obj =>
  type === "service" || type === "system"
    ? { Interval: 30 * MINUTE, Attempts: 2, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false }
    : { Interval: 24 * HOUR, Attempts: 3, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false };

export function canonicalizeApiJob(job: Obj): Obj {
  job["ID"] ??= "";
  job["Name"] ??= job["ID"];
  fill(job, { ParentID: "", Namespace: "default", Priority: 50, Stop: false, Region: "global", NodePool: "", Type: "service", AllAtOnce: false });
  fill(job, {
    ConsulToken: "",
    ConsulNamespace: "",
    VaultToken: "",
    VaultNamespace: "",
    NomadTokenID: "",
    Status: "",
    StatusDescription: "",
    Stable: false,
    Version: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  });
  const type = job["Type"] as string;
  const periodic = job["Periodic"] as Obj | null;
  if (periodic) {
    fill(periodic, { Enabled: true, Spec: "", Specs: [], SpecType: "cron", ProhibitOverlap: false });
    if (!periodic["TimeZone"]) periodic["TimeZone"] = "UTC";
  }
  const update = job["Update"] as Obj | null;
  if (update) fill(update, defaultUpdate());
  // Only service jobs get the default strategy (api.Job.Canonicalize); a system job's stays null.
  else if (type === "service") job["Update"] = defaultUpdate();
  const multiregion = job["Multiregion"] as Obj | null;
  if (multiregion) {
    const strategy = (multiregion["Strategy"] as Obj | null) ?? {};
    fill(strategy, { MaxParallel: 0, OnFailure: "" });
    multiregion["Strategy"] = strategy;
    multiregion["Regions"] ??= [];
    for (const region of objs(multiregion["Regions"])) fill(region, { Count: 1, Datacenters: [], Meta: {} });
  }
  for (const group of objs(job["TaskGroups"])) canonicalizeGroup(group, job, type);
  for (const spread of objs(job["Spreads"])) spread["Weight"] ??= 50;
  for (const affinity of objs(job["Affinities"])) affinity["Weight"] ??= 50;
  const ui = job["UI"] as Obj | null;
  if (ui && !objs(ui["Links"]).length) ui["Links"] = null;
  return job;
}

function canonicalizeGroup(group: Obj, job: Obj, type: string): void {
  group["Name"] ??= "";
  const scaling = group["Scaling"] as Obj | null;
  if (group["Count"] === null) group["Count"] = scaling && scaling["Min"] !== null ? scaling["Min"] : 1;
  if (scaling) {
    scaling["Enabled"] ??= true;
    scaling["Min"] ??= group["Count"];
    if (scaling["Type"] === "") scaling["Type"] = "horizontal";
  }
  const disk = (group["EphemeralDisk"] as Obj | null) ?? {};
  fill(disk, { Sticky: false, Migrate: false, SizeMB: 300 });
  group["EphemeralDisk"] = disk;

  // Nomad 1.9 always gives the group a Consul block, inheriting the job's namespace.
  const consul = (group["Consul"] as Obj | null) ?? { Namespace: "", Cluster: "", Partition: "" };
  if (consul["Namespace"] === "") consul["Namespace"] = job["ConsulNamespace"];
  if (consul["Cluster"] === "") consul["Cluster"] = "default";
  group["Consul"] = consul;

  const jobUpdate = job["Update"] as Obj | null;
  const groupUpdate = group["Update"] as Obj | null;
  if (jobUpdate && groupUpdate) group["Update"] = merged(jobUpdate, groupUpdate);
  else if (jobUpdate && !updateEmpty(jobUpdate)) group["Update"] = structuredClone(jobUpdate);
  if (group["Update"]) fill(group["Update"] as Obj, defaultUpdate());

  const jobReschedule = job["Reschedule"] as Obj | null;
  if (jobReschedule) group["ReschedulePolicy"] = merged(jobReschedule, group["ReschedulePolicy"] as Obj | null);
  // Every type but system gets one; sysbatch (like any type without defaults of its own) a zeroed one.
  if (!group["ReschedulePolicy"] && type !== "system") group["ReschedulePolicy"] = defaultReschedule(type);
  if (group["ReschedulePolicy"]) fill(group["ReschedulePolicy"] as Obj, defaultReschedule(type));

  const jobMigrate = job["Migrate"] as Obj | null;
  if (jobMigrate) group["Migrate"] = merged(jobMigrate, group["Migrate"] as Obj | null);
  if (!group["Migrate"] && type === "service") group["Migrate"] = { MaxParallel: null, HealthCheck: null, MinHealthyTime: null, HealthyDeadline: null };
  if (group["Migrate"]) fill(group["Migrate"] as Obj, { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * SECOND, HealthyDeadline: 5 * MINUTE });

  group["RestartPolicy"] = merged(defaultRestart(type), group["RestartPolicy"] as Obj | null);

  for (const task of objs(group["Tasks"])) canonicalizeTask(task, group, job);
  for (const spread of objs(group["Spreads"])) spread["Weight"] ??= 50;
  for (const affinity of objs(group["Affinities"])) affinity["Weight"] ??= 50;
  for (const service of objs(group["Services"])) canonicalizeService(service, undefined, group, job);
  // Nomad 1.9's api fills it (deprecated since 1.8; the 1.10 api no longer does).
  group["PreventRescheduleOnLost"] ??= false;
  const disconnect = group["Disconnect"] as Obj | null;
  if (disconnect) fill(disconnect, { Replace: true, Reconcile: "best_score" });
}

/** `Resources.Canonicalize` (on a new Resources when there is none). */
function canonicalResources(given: Obj | null): Obj {
  const resources = given ?? zeroStruct("Resources");
  if (resources["Cores"] === null) {
    resources["Cores"] = 0;
    resources["CPU"] ??= 100;
  }
  resources["CPU"] ??= 0;
  resources["MemoryMB"] ??= 300;
  for (const device of objs(resources["Devices"])) {
    device["Count"] ??= 1;
    for (const affinity of objs(device["Affinities"])) affinity["Weight"] ??= 50;
  }
  const numa = resources["NUMA"] as Obj | null;
  if (numa && numa["Affinity"] === "") numa["Affinity"] = "none";
  return resources;
}

/** `LogConfig.Canonicalize`, or `DefaultLogConfig()` when there is none. */
function canonicalLogs(given: Obj | null): Obj {
  const logs = given ?? zeroStruct("LogConfig");
  fill(logs, { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false });
  return logs;
}

const volumeMountDefaults = (mount: Obj): void => fill(mount, { PropagationMode: "private", ReadOnly: false, SELinuxLabel: "" });

function emptyToNull(obj: Obj, keys: readonly string[]): void {
  for (const key of keys) {
    const v = obj[key];
    if (v === null || v === undefined) continue;
    if (Array.isArray(v) ? v.length === 0 : typeof v === "object" && Object.keys(v as Obj).length === 0) obj[key] = null;
  }
}

/** api.ConsulGateway.Canonicalize: the proxy's connect timeout (Consul's 5 s default) and the ingress listeners' protocol. */
function canonicalizeGateway(gateway: Obj | null): void {
  if (!gateway) return;
  const proxy = gateway["Proxy"] as Obj | null;
  if (proxy) {
    proxy["ConnectTimeout"] ??= 5 * SECOND;
    emptyToNull(proxy, ["EnvoyGatewayBindAddresses", "Config"]);
  }
  const ingress = gateway["Ingress"] as Obj | null;
  if (ingress) {
    emptyToNull(ingress, ["Listeners"]);
    for (const listener of objs(ingress["Listeners"])) {
      if (listener["Protocol"] === "") listener["Protocol"] = "tcp";
      emptyToNull(listener, ["Services"]);
    }
  }
  const terminating = gateway["Terminating"] as Obj | null;
  if (terminating) emptyToNull(terminating, ["Services"]);
}

/** `ConsulConnect.Canonicalize`: the sidecar service's proxy, the sidecar task and the gateway. */
function canonicalizeConnect(connect: Obj | null): void {
  if (!connect) return;
  canonicalizeGateway(connect["Gateway"] as Obj | null);
  const sidecar = connect["SidecarService"] as Obj | null;
  if (sidecar) {
    emptyToNull(sidecar, ["Tags", "Meta"]);
    const proxy = sidecar["Proxy"] as Obj | null;
    if (proxy) {
      const expose = proxy["Expose"] as Obj | null;
      if (expose) emptyToNull(expose, ["Paths"]);
      emptyToNull(proxy, ["Upstreams", "Config"]);
      const transparent = proxy["TransparentProxy"] as Obj | null;
      if (transparent) emptyToNull(transparent, ["ExcludeInboundPorts", "ExcludeOutboundCIDRs", "ExcludeOutboundPorts", "ExcludeUIDs"]);
      for (const upstream of objs(proxy["Upstreams"])) emptyToNull(upstream, ["Config"]);
    }
  }
  const task = connect["SidecarTask"] as Obj | null;
  if (task) {
    emptyToNull(task, ["Config", "Env", "Meta"]);
    task["Resources"] = canonicalResources(task["Resources"] as Obj | null);
    task["LogConfig"] = canonicalLogs(task["LogConfig"] as Obj | null);
    task["KillTimeout"] ??= 5 * SECOND;
    task["ShutdownDelay"] ??= 0;
    for (const mount of objs(task["VolumeMounts"])) volumeMountDefaults(mount);
  }
}

function canonicalizeTask(task: Obj, group: Obj, job: Obj): void {
  task["Resources"] = canonicalResources(task["Resources"] as Obj | null);
  task["KillTimeout"] ??= 5 * SECOND;
  task["LogConfig"] = canonicalLogs(task["LogConfig"] as Obj | null);

  for (const artifact of objs(task["Artifacts"])) {
    fill(artifact, { GetterMode: "any", GetterInsecure: false, GetterSource: "" });
    if (artifact["GetterOptions"] && !Object.keys(artifact["GetterOptions"] as Obj).length) artifact["GetterOptions"] = null;
    if (artifact["GetterHeaders"] && !Object.keys(artifact["GetterHeaders"] as Obj).length) artifact["GetterHeaders"] = null;
    if (artifact["RelativeDest"] === null) {
      const source = String(artifact["GetterSource"]);
      artifact["RelativeDest"] = artifact["GetterMode"] === "file" ? `local/${source.replace(/\/+$/, "").split("/").pop() || "."}` : "local/";
    }
  }
  const vault = task["Vault"] as Obj | null;
  if (vault) {
    fill(vault, { Env: true, DisableFile: false, Namespace: "", ChangeMode: "restart", ChangeSignal: "SIGHUP", AllowTokenExpiration: false });
    if (vault["Cluster"] === "") vault["Cluster"] = "default";
  }
  const consul = task["Consul"] as Obj | null;
  if (consul && consul["Cluster"] === "") consul["Cluster"] = "default";
  for (const template of objs(task["Templates"])) {
    fill(template, { SourcePath: "", DestPath: "", EmbeddedTmpl: "", ChangeMode: "restart" });
    if (template["ChangeSignal"] === null) template["ChangeSignal"] = template["ChangeMode"] === "signal" ? "SIGHUP" : "";
    else template["ChangeSignal"] = String(template["ChangeSignal"]).toUpperCase();
    const script = template["ChangeScript"] as Obj | null;
    if (script) fill(script, { Command: "", Args: [], Timeout: 5 * SECOND, FailOnError: false });
    fill(template, { Splay: 5 * SECOND, Perms: "0644", LeftDelim: "{{", RightDelim: "}}", Envvars: false, ErrMissingKey: false, VaultGrace: 0 });
  }
  for (const service of objs(task["Services"])) canonicalizeService(service, task, group, job);
  for (const affinity of objs(task["Affinities"])) affinity["Weight"] ??= 50;
  for (const mount of objs(task["VolumeMounts"])) volumeMountDefaults(mount);
  const lifecycle = task["Lifecycle"] as Obj | null;
  if (lifecycle && lifecycle["Hook"] === "") task["Lifecycle"] = null;
  const csi = task["CSIPluginConfig"] as Obj | null;
  if (csi) {
    if (csi["MountDir"] === "") csi["MountDir"] = "/csi";
    if (csi["StagePublishBaseDir"] === "") csi["StagePublishBaseDir"] = "/local/csi";
    if (csi["HealthTimeout"] === 0) csi["HealthTimeout"] = 30 * SECOND;
  }
  task["RestartPolicy"] = merged(group["RestartPolicy"] as Obj, task["RestartPolicy"] as Obj | null);
}

function canonicalizeService(service: Obj, task: Obj | undefined, group: Obj, job: Obj): void {
  if (service["Name"] === "")
    service["Name"] = task ? `${String(job["Name"])}-${String(group["Name"])}-${String(task["Name"])}` : `${String(job["Name"])}-${String(group["Name"])}`;
  if (service["AddressMode"] === "") service["AddressMode"] = "auto";
  if (service["OnUpdate"] === "") service["OnUpdate"] = "require_healthy";
  if (service["Provider"] === "") service["Provider"] = "consul";
  if (service["Cluster"] === "") service["Cluster"] = "default";
  for (const key of ["Meta", "CanaryMeta", "TaggedAddresses"]) {
    const map = service[key] as Obj | null;
    if (map && !Object.keys(map).length) service[key] = null;
  }
  canonicalizeConnect(service["Connect"] as Obj | null);
  const weights = service["Weights"] as Obj | null;
  if (weights) {
    // api.ServiceWeights.Canonicalize: a weight of 0 or less becomes 1.
    if ((weights["Passing"] as number) <= 0) weights["Passing"] = 1;
    if ((weights["Warning"] as number) <= 0) weights["Warning"] = 1;
  }
  const serviceRestart = service["CheckRestart"] as Obj | null;
  for (const check of objs(service["Checks"])) {
    const own = check["CheckRestart"] as Obj | null;
    let restart: Obj | null = null;
    if (serviceRestart || own) {
      restart = serviceRestart ? structuredClone(serviceRestart) : { Limit: 0, Grace: null, IgnoreWarnings: false };
      if (own) {
        if (own["Limit"] !== 0) restart["Limit"] = own["Limit"];
        if (own["Grace"] !== null) restart["Grace"] = own["Grace"];
        if (own["IgnoreWarnings"]) restart["IgnoreWarnings"] = true;
      }
      restart["Grace"] ??= SECOND;
    }
    check["CheckRestart"] = restart;
    for (const key of ["SuccessBeforePassing", "FailuresBeforeCritical", "FailuresBeforeWarning"]) if ((check[key] as number) < 0) check[key] = 0;
    if (check["OnUpdate"] === "") check["OnUpdate"] = service["OnUpdate"];
  }
}
