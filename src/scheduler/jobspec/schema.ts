/**
 * The api.* structs an API job decodes into, written in a small schema
 * language: each `struct` lists its Go fields and their Go types, so the
 * decoder can match keys as encoding/json does and name the Go type in a
 * type error. The tables transcribe api/jobs.go, api/tasks.go,
 * api/resources.go, api/consul.go and api/services.go (Nomad 1.9); they are
 * one cohesive transcription, hence one file of ~350 lines.
 */

export type IntType = "int" | "int64" | "uint64" | "int8" | "uint8" | "time.Duration";

export type Schema =
  | { readonly k: "string" }
  | { readonly k: "bool" }
  | { readonly k: "int"; readonly go: IntType }
  | { readonly k: "any" }
  | { readonly k: "raw"; readonly go: string }
  | { readonly k: "bytes" }
  | { readonly k: "slice"; readonly elem: Schema; readonly ptr: boolean }
  | { readonly k: "map"; readonly elem: Schema; readonly ptr: boolean }
  | StructSchema;

export interface StructSchema {
  readonly k: "struct";
  readonly name: string;
  readonly fields: () => Readonly<Record<string, Schema>>;
}

const STR: Schema = { k: "string" };
const BOOL: Schema = { k: "bool" };
const INT: Schema = { k: "int", go: "int" };
const INT64: Schema = { k: "int", go: "int64" };
const UINT64: Schema = { k: "int", go: "uint64" };
const INT8: Schema = { k: "int", go: "int8" };
const UINT8: Schema = { k: "int", go: "uint8" };
const DUR: Schema = { k: "int", go: "time.Duration" };
const ANY: Schema = { k: "any" };
const BYTES: Schema = { k: "bytes" };
const STRS: Schema = { k: "slice", elem: STR, ptr: false };
const STRMAP: Schema = { k: "map", elem: STR, ptr: false };
const ANYMAP: Schema = { k: "map", elem: ANY, ptr: false };

function struct(name: string, fields: () => Record<string, Schema>): StructSchema {
  let cache: Record<string, Schema> | undefined;
  return { k: "struct", name, fields: () => (cache ??= fields()) };
}
const ptrs = (elem: Schema): Schema => ({ k: "slice", elem, ptr: true });
const vals = (elem: Schema): Schema => ({ k: "slice", elem, ptr: false });
const raw = (go: string): Schema => ({ k: "raw", go });

const CONSTRAINT = struct("Constraint", () => ({ LTarget: STR, RTarget: STR, Operand: STR }));
const AFFINITY = struct("Affinity", () => ({ LTarget: STR, RTarget: STR, Operand: STR, Weight: INT8 }));
const SPREAD_TARGET = struct("SpreadTarget", () => ({ Value: STR, Percent: UINT8 }));
const SPREAD = struct("Spread", () => ({ Attribute: STR, Weight: INT8, SpreadTarget: ptrs(SPREAD_TARGET) }));
const UPDATE = struct("UpdateStrategy", () => ({
  Stagger: DUR,
  MaxParallel: INT,
  HealthCheck: STR,
  MinHealthyTime: DUR,
  HealthyDeadline: DUR,
  ProgressDeadline: DUR,
  Canary: INT,
  AutoRevert: BOOL,
  AutoPromote: BOOL,
}));
const MULTIREGION_STRATEGY = struct("MultiregionStrategy", () => ({ MaxParallel: INT, OnFailure: STR }));
const MULTIREGION_REGION = struct("MultiregionRegion", () => ({ Name: STR, Count: INT, Datacenters: STRS, NodePool: STR, Meta: STRMAP }));
const MULTIREGION = struct("Multiregion", () => ({ Strategy: MULTIREGION_STRATEGY, Regions: ptrs(MULTIREGION_REGION) }));
const PERIODIC = struct("PeriodicConfig", () => ({
  Enabled: BOOL,
  Spec: STR,
  Specs: STRS,
  SpecType: STR,
  ProhibitOverlap: BOOL,
  TimeZone: STR,
}));
const PARAMETERIZED = struct("ParameterizedJobConfig", () => ({ Payload: STR, MetaRequired: STRS, MetaOptional: STRS }));
const RESCHEDULE = struct("ReschedulePolicy", () => ({
  Attempts: INT,
  Interval: DUR,
  Delay: DUR,
  DelayFunction: STR,
  MaxDelay: DUR,
  Unlimited: BOOL,
}));
const MIGRATE = struct("MigrateStrategy", () => ({ MaxParallel: INT, HealthCheck: STR, MinHealthyTime: DUR, HealthyDeadline: DUR }));
const UI_LINK = struct("JobUILink", () => ({ Label: STR, Url: STR }));
const UI = struct("JobUIConfig", () => ({ Description: STR, Links: ptrs(UI_LINK) }));
const VERSION_TAG = struct("JobVersionTag", () => ({ Name: STR, Description: STR, TaggedTime: INT64 }));
const RESTART = struct("RestartPolicy", () => ({ Interval: DUR, Attempts: INT, Delay: DUR, Mode: STR, RenderTemplates: BOOL }));
const DISCONNECT = struct("DisconnectStrategy", () => ({ LostAfter: DUR, StopOnClientAfter: DUR, Replace: BOOL, Reconcile: STR }));
const EPHEMERAL_DISK = struct("EphemeralDisk", () => ({ Sticky: BOOL, Migrate: BOOL, SizeMB: INT }));
const MOUNT_OPTIONS = struct("CSIMountOptions", () => ({ FSType: STR, MountFlags: STRS }));
const VOLUME_REQUEST = struct("VolumeRequest", () => ({
  Name: STR,
  Type: STR,
  Source: STR,
  ReadOnly: BOOL,
  AccessMode: STR,
  AttachmentMode: STR,
  MountOptions: MOUNT_OPTIONS,
  PerAlloc: BOOL,
}));
const PORT = struct("Port", () => ({ Label: STR, Value: INT, To: INT, HostNetwork: STR, IgnoreCollision: BOOL }));
const DNS = struct("DNSConfig", () => ({ Servers: STRS, Searches: STRS, Options: STRS }));
const NETWORK = struct("NetworkResource", () => ({
  Mode: STR,
  Device: STR,
  CIDR: STR,
  IP: STR,
  Hostname: STR,
  DNS: DNS,
  ReservedPorts: vals(PORT),
  DynamicPorts: vals(PORT),
  MBits: INT,
}));
const CONSUL = struct("Consul", () => ({ Namespace: STR, Cluster: STR, Partition: STR }));
const CHECK_RESTART = struct("CheckRestart", () => ({ Limit: INT, Grace: DUR, IgnoreWarnings: BOOL }));
const WORKLOAD_IDENTITY = struct("WorkloadIdentity", () => ({
  Name: STR,
  Audience: STRS,
  ChangeMode: STR,
  ChangeSignal: STR,
  Env: BOOL,
  File: BOOL,
  Filepath: STR,
  ServiceName: STR,
  TTL: DUR,
}));
const SERVICE_CHECK = struct("ServiceCheck", () => ({
  Name: STR,
  Type: STR,
  Command: STR,
  Args: STRS,
  Path: STR,
  Protocol: STR,
  PortLabel: STR,
  Expose: BOOL,
  AddressMode: STR,
  Advertise: STR,
  Interval: DUR,
  Timeout: DUR,
  InitialStatus: STR,
  Notes: STR,
  TLSServerName: STR,
  TLSSkipVerify: BOOL,
  Header: { k: "map", elem: STRS, ptr: false },
  Method: STR,
  CheckRestart: CHECK_RESTART,
  GRPCService: STR,
  GRPCUseTLS: BOOL,
  TaskName: STR,
  SuccessBeforePassing: INT,
  FailuresBeforeCritical: INT,
  FailuresBeforeWarning: INT,
  Body: STR,
  OnUpdate: STR,
}));
const SERVICE_WEIGHTS = struct("ServiceWeights", () => ({ Passing: INT, Warning: INT }));
const SERVICE = struct("Service", () => ({
  Name: STR,
  Tags: STRS,
  CanaryTags: STRS,
  EnableTagOverride: BOOL,
  PortLabel: STR,
  AddressMode: STR,
  Address: STR,
  Checks: vals(SERVICE_CHECK),
  CheckRestart: CHECK_RESTART,
  Connect: raw("api.ConsulConnect"),
  Meta: STRMAP,
  CanaryMeta: STRMAP,
  TaggedAddresses: STRMAP,
  TaskName: STR,
  OnUpdate: STR,
  Identity: WORKLOAD_IDENTITY,
  Weights: SERVICE_WEIGHTS,
  Provider: STR,
  Cluster: STR,
}));
const SCALING = struct("ScalingPolicy", () => ({
  ID: STR,
  Namespace: STR,
  Type: STR,
  Target: STRMAP,
  Min: INT64,
  Max: INT64,
  Policy: ANYMAP,
  Enabled: BOOL,
  CreateIndex: UINT64,
  ModifyIndex: UINT64,
}));
const LIFECYCLE = struct("TaskLifecycle", () => ({ Hook: STR, Sidecar: BOOL }));
const NUMA = struct("NUMAResource", () => ({ Affinity: STR, Devices: STRS }));
const DEVICE = struct("RequestedDevice", () => ({ Name: STR, Count: UINT64, Constraints: ptrs(CONSTRAINT), Affinities: ptrs(AFFINITY) }));
const RESOURCES = struct("Resources", () => ({
  CPU: INT,
  Cores: INT,
  MemoryMB: INT,
  MemoryMaxMB: INT,
  DiskMB: INT,
  Networks: ptrs(NETWORK),
  Devices: ptrs(DEVICE),
  IOPS: INT,
  NUMA: NUMA,
  SecretsMB: INT,
}));
const LOG_CONFIG = struct("LogConfig", () => ({ MaxFiles: INT, MaxFileSizeMB: INT, Enabled: BOOL, Disabled: BOOL }));
const ARTIFACT = struct("TaskArtifact", () => ({
  GetterSource: STR,
  GetterOptions: STRMAP,
  GetterHeaders: STRMAP,
  GetterMode: STR,
  GetterInsecure: BOOL,
  RelativeDest: STR,
  Chown: BOOL,
}));
const VAULT = struct("Vault", () => ({
  Policies: STRS,
  Role: STR,
  Namespace: STR,
  Cluster: STR,
  Env: BOOL,
  DisableFile: BOOL,
  ChangeMode: STR,
  ChangeSignal: STR,
  AllowTokenExpiration: BOOL,
}));
const CHANGE_SCRIPT = struct("ChangeScript", () => ({ Command: STR, Args: STRS, Timeout: DUR, FailOnError: BOOL }));
const WAIT_CONFIG = struct("WaitConfig", () => ({ Min: DUR, Max: DUR }));
const TEMPLATE = struct("Template", () => ({
  SourcePath: STR,
  DestPath: STR,
  EmbeddedTmpl: STR,
  ChangeMode: STR,
  ChangeScript: CHANGE_SCRIPT,
  ChangeSignal: STR,
  Splay: DUR,
  Perms: STR,
  Uid: INT,
  Gid: INT,
  LeftDelim: STR,
  RightDelim: STR,
  Envvars: BOOL,
  VaultGrace: DUR,
  Wait: WAIT_CONFIG,
  ErrMissingKey: BOOL,
}));
const DISPATCH_PAYLOAD = struct("DispatchPayloadConfig", () => ({ File: STR }));
const VOLUME_MOUNT = struct("VolumeMount", () => ({
  Volume: STR,
  Destination: STR,
  ReadOnly: BOOL,
  PropagationMode: STR,
  SELinuxLabel: STR,
}));
const CSI_PLUGIN = struct("TaskCSIPluginConfig", () => ({
  ID: STR,
  Type: STR,
  MountDir: STR,
  StagePublishBaseDir: STR,
  HealthTimeout: DUR,
}));
const ACTION = struct("Action", () => ({ Name: STR, Command: STR, Args: STRS }));
const TASK = struct("Task", () => ({
  Name: STR,
  Driver: STR,
  User: STR,
  Lifecycle: LIFECYCLE,
  Config: ANYMAP,
  Constraints: ptrs(CONSTRAINT),
  Affinities: ptrs(AFFINITY),
  Env: STRMAP,
  Services: ptrs(SERVICE),
  Resources: RESOURCES,
  RestartPolicy: RESTART,
  Meta: STRMAP,
  KillTimeout: DUR,
  LogConfig: LOG_CONFIG,
  Artifacts: ptrs(ARTIFACT),
  Vault: VAULT,
  Consul: CONSUL,
  Templates: ptrs(TEMPLATE),
  DispatchPayload: DISPATCH_PAYLOAD,
  VolumeMounts: ptrs(VOLUME_MOUNT),
  CSIPluginConfig: CSI_PLUGIN,
  Leader: BOOL,
  ShutdownDelay: DUR,
  KillSignal: STR,
  Kind: STR,
  ScalingPolicies: ptrs(SCALING),
  Identity: WORKLOAD_IDENTITY,
  Identities: ptrs(WORKLOAD_IDENTITY),
  Actions: ptrs(ACTION),
  Schedule: raw("api.TaskSchedule"),
}));
const TASK_GROUP = struct("TaskGroup", () => ({
  Name: STR,
  Count: INT,
  Constraints: ptrs(CONSTRAINT),
  Affinities: ptrs(AFFINITY),
  Tasks: ptrs(TASK),
  Spreads: ptrs(SPREAD),
  Volumes: { k: "map", elem: VOLUME_REQUEST, ptr: true },
  RestartPolicy: RESTART,
  Disconnect: DISCONNECT,
  ReschedulePolicy: RESCHEDULE,
  EphemeralDisk: EPHEMERAL_DISK,
  Update: UPDATE,
  Migrate: MIGRATE,
  Networks: ptrs(NETWORK),
  Meta: STRMAP,
  Services: ptrs(SERVICE),
  ShutdownDelay: DUR,
  StopAfterClientDisconnect: DUR,
  MaxClientDisconnect: DUR,
  Scaling: SCALING,
  Consul: CONSUL,
  PreventRescheduleOnLost: BOOL,
}));
export const JOB = struct("Job", () => ({
  Region: STR,
  Namespace: STR,
  ID: STR,
  Name: STR,
  Type: STR,
  Priority: INT,
  AllAtOnce: BOOL,
  Datacenters: STRS,
  NodePool: STR,
  Constraints: ptrs(CONSTRAINT),
  Affinities: ptrs(AFFINITY),
  TaskGroups: ptrs(TASK_GROUP),
  Update: UPDATE,
  Multiregion: MULTIREGION,
  Spreads: ptrs(SPREAD),
  Periodic: PERIODIC,
  ParameterizedJob: PARAMETERIZED,
  Reschedule: RESCHEDULE,
  Migrate: MIGRATE,
  Meta: STRMAP,
  ConsulToken: STR,
  VaultToken: STR,
  UI: UI,
  Stop: BOOL,
  ParentID: STR,
  Dispatched: BOOL,
  DispatchIdempotencyToken: STR,
  Payload: BYTES,
  ConsulNamespace: STR,
  VaultNamespace: STR,
  NomadTokenID: STR,
  Status: STR,
  StatusDescription: STR,
  Stable: BOOL,
  Version: UINT64,
  SubmitTime: INT64,
  CreateIndex: UINT64,
  ModifyIndex: UINT64,
  JobModifyIndex: UINT64,
  VersionTag: VERSION_TAG,
}));
