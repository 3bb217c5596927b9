/**
 * Job specifications for the scheduler service: decoding, canonicalization,
 * validation and spec comparison, the way a Nomad server does them.
 *
 * TARGET VERSION: Nomad 1.9.x (Community Edition). Where releases differ, this
 * module follows 1.9:
 * - the job carries `UI` and `VersionTag` (1.9+); task groups carry
 *   `Disconnect` (1.8+) next to the deprecated `StopAfterClientDisconnect`,
 *   `MaxClientDisconnect` and `PreventRescheduleOnLost`; tasks carry
 *   `Identity`/`Identities` (a default workload identity is always added),
 *   `Actions` and `Schedule`; resources carry `NUMA` (1.7+) but not the 1.10
 *   `SecretsMB`; services carry no 1.10 `Weights`/`Kind`.
 * - `Datacenters` defaults to `["*"]` and `NodePool` to `"default"` (1.6+),
 *   so "Missing job datacenters" cannot happen for canonicalized jobs.
 * - the priority range is checked by the job-validate admission hook with the
 *   lower-case text `job priority must be between [1, 100]`, appended after
 *   the errors of `structs.Job.Validate` (1.5+ behaviour).
 *
 * The pipeline mirrors a real `PUT /v1/jobs`:
 * 1. `encoding/json` decodes the body into `api.Job` (keys matched
 *    case-insensitively, unknown keys ignored, first type error reported in
 *    Go's words) — `decodeStruct` below, driven by the `api.*` schemas;
 * 2. `api.Job.Canonicalize` fills client-side defaults and
 *    `ApiJobToStructJob` converts to `structs.Job`, dropping what the server
 *    does not keep (job-level update keeps only Stagger/MaxParallel; the
 *    tokens are blanked as the register RPC does) — `buildJob` and friends;
 * 3. the admission mutators run `structs.Job.Canonicalize` (priority 0 → 50,
 *    `Datacenters` `["*"]`, node pool `default`, default identity, restart /
 *    reschedule / migrate defaults, service and check names) and add the
 *    implied constraints (Vault, signals, Nomad/Consul services); the Connect
 *    sidecar and expose-check mutators are not emulated;
 * 4. the admission validators run `structs.Job.Validate` plus the hook checks
 *    — `validateJob`, whose result `formatMultierror` renders.
 *
 * Sources read (hashicorp/nomad): api/jobs.go, api/tasks.go, api/resources.go,
 * api/consul.go, api/services.go, command/agent/job_endpoint.go (1.8),
 * nomad/job_endpoint_hooks.go, nomad/structs/structs.go (1.9/1.10 era),
 * nomad/structs/services.go, nomad/structs/workload_id.go,
 * nomad/structs/group.go, nomad/structs/numa.go; hashicorp/go-multierror
 * format.go and append.go.
 *
 * Known approximations (see the notes next to each):
 * - numbers arrive already parsed, so `1.0` is accepted where Go rejects it,
 *   and "number <literal>" shows JavaScript's spelling of the literal;
 * - `NetworkResource` and `Port` carry a struct-level `codec:",omitempty"`
 *   marker in Nomad, so their zero fields are left out here as well;
 * - blocks this emulator does not interpret (service `Connect`, task
 *   `Schedule`) are kept as the client sent them;
 * - scaling policy IDs are left "" (the state store assigns UUIDs);
 * - cron expressions, regexp/version/semver constraint targets, templates'
 *   finer rules and volume requests are not validated.
 */
import { formatGoDuration } from "../core/durations.js";

type Obj = Record<string, unknown>;

/** A body-shape problem (wrong JSON type); the HTTP layer answers 400 with `message`. */
export class JobDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobDecodeError";
  }
}

// ---------------------------------------------------------------------------
// Time units (nanoseconds, as time.Duration)

const SECOND = 1_000_000_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Server-set fields and their values before the state store writes the job. */
export const SERVER_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({
  Status: "pending",
  StatusDescription: "",
  Stable: false,
  Version: 0,
  SubmitTime: 0,
  CreateIndex: 0,
  ModifyIndex: 0,
  JobModifyIndex: 0,
});

// ---------------------------------------------------------------------------
// hashicorp/go-multierror

/**
 * go-multierror's ListFormatFunc. A nested multierror is simply its own
 * rendering embedded in the parent's bullet (no extra indentation).
 */
export function formatMultierror(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  const points = errors.map((e) => `* ${e}`);
  return `${errors.length} errors occurred:\n\t${points.join("\n\t")}\n\n`;
}

// ---------------------------------------------------------------------------
// Decoding: Go's encoding/json into the api.* structs

type IntType = "int" | "int64" | "uint64" | "int8" | "uint8" | "time.Duration";

type Schema =
  | { readonly k: "string" }
  | { readonly k: "bool" }
  | { readonly k: "int"; readonly go: IntType }
  | { readonly k: "any" }
  | { readonly k: "raw"; readonly go: string }
  | { readonly k: "bytes" }
  | { readonly k: "slice"; readonly elem: Schema; readonly ptr: boolean }
  | { readonly k: "map"; readonly elem: Schema; readonly ptr: boolean }
  | StructSchema;

interface StructSchema {
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
const JOB = struct("Job", () => ({
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

/** reflect.Type.String() of a schema, as Go prints it in UnmarshalTypeError. */
function goTypeName(schema: Schema): string {
  switch (schema.k) {
    case "string":
      return "string";
    case "bool":
      return "bool";
    case "int":
      return schema.go;
    case "any":
      return "interface {}";
    case "raw":
      return schema.go;
    case "bytes":
      return "[]uint8";
    case "slice":
      return `[]${schema.ptr ? "*" : ""}${goTypeName(schema.elem)}`;
    case "map":
      return `map[string]${schema.ptr ? "*" : ""}${goTypeName(schema.elem)}`;
    case "struct":
      return `api.${schema.name}`;
  }
}

/** Go's decodeState.errorContext: the innermost struct type and the field path from the top. */
interface DecodeContext {
  readonly struct: string;
  readonly stack: readonly string[];
}

function describeJSON(value: unknown): string {
  if (typeof value === "string") return "string";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "number") return "number";
  if (Array.isArray(value)) return "array";
  return "object";
}

function typeError(what: string, schema: Schema, ctx: DecodeContext): JobDecodeError {
  return new JobDecodeError(
    `json: cannot unmarshal ${what} into Go struct field ${ctx.struct}.${ctx.stack.join(".")} of type ${goTypeName(schema)}`,
  );
}

function isPlainObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Own-property write that is safe for keys such as "__proto__". */
function setOwn(target: Obj, key: string, value: unknown): void {
  // Only `__proto__` would not become an own property by assignment (defineProperty costs ~10× more, on every key).
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const INT_RANGES: Record<IntType, readonly [number, number]> = {
  int: [-(2 ** 63), 2 ** 63 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  "time.Duration": [-(2 ** 63), 2 ** 63 - 1],
  uint64: [0, 2 ** 64 - 1],
  int8: [-128, 127],
  uint8: [0, 255],
};

/** Index of the first byte Go's base64.StdEncoding rejects, or -1 when the text decodes. */
function base64ErrorIndex(text: string): number {
  const stripped = text.replace(/[\r\n]/g, "");
  const alphabet = /[A-Za-z0-9+/]/;
  let i = 0;
  for (; i < stripped.length; i++) {
    const ch = stripped[i] ?? "";
    if (ch === "=") break;
    if (!alphabet.test(ch)) return i;
  }
  const dataLength = i;
  const padding = stripped.length - dataLength;
  if (padding > 0 && !/^={1,2}$/.test(stripped.slice(dataLength))) return dataLength;
  if (stripped.length % 4 !== 0) return stripped.length - (stripped.length % 4);
  if (padding > 0 && dataLength % 4 < 2) return dataLength;
  return -1;
}

function deepClone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepClone);
  if (isPlainObject(value)) {
    const out: Obj = {};
    // for…in, not Object.entries: no [key, value] pair allocated per key of a large map.
    for (const key in value) if (Object.hasOwn(value, key)) setOwn(out, key, deepClone(value[key]));
    return out;
  }
  return value;
}

/**
 * Decodes one JSON value into the shape of `schema`. `existing` is the value
 * already decoded for the same field (a repeated key): Go decodes structs and
 * maps into the existing value and replaces everything else.
 */
function decodeValue(schema: Schema, value: unknown, ctx: DecodeContext, existing?: unknown): unknown {
  switch (schema.k) {
    case "string":
      if (typeof value !== "string") throw typeError(describeJSON(value), schema, ctx);
      return value;
    case "bool":
      if (typeof value !== "boolean") throw typeError(describeJSON(value), schema, ctx);
      return value;
    case "int": {
      if (typeof value !== "number") throw typeError(describeJSON(value), schema, ctx);
      const [min, max] = INT_RANGES[schema.go];
      if (!Number.isInteger(value) || value < min || value > max) throw typeError(`number ${String(value)}`, schema, ctx);
      return value;
    }
    case "any":
      return deepClone(value);
    case "raw":
      if (!isPlainObject(value)) throw typeError(describeJSON(value), schema, ctx);
      return deepClone(value);
    case "bytes": {
      if (typeof value !== "string") throw typeError(describeJSON(value), schema, ctx);
      const bad = base64ErrorIndex(value);
      if (bad >= 0) throw new JobDecodeError(`illegal base64 data at input byte ${bad}`);
      return value;
    }
    case "slice": {
      if (!Array.isArray(value)) throw typeError(describeJSON(value), schema, ctx);
      return value.map((element) => {
        // A null element stays the zero value: nil for pointers (treated as an
        // empty block downstream, where Go would dereference nil), "" / 0 / false otherwise.
        if (element === null) return schema.elem.k === "struct" ? {} : zeroValue(schema.elem);
        return decodeValue(schema.elem, element, ctx);
      });
    }
    case "map": {
      if (!isPlainObject(value)) throw typeError(describeJSON(value), schema, ctx);
      const out: Obj = isPlainObject(existing) ? existing : {};
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const inner = value[key];
        if (inner === null) {
          setOwn(out, key, schema.elem.k === "struct" ? {} : zeroValue(schema.elem));
          continue;
        }
        setOwn(out, key, decodeValue(schema.elem, inner, ctx));
      }
      return out;
    }
    case "struct":
      if (!isPlainObject(value)) throw typeError(describeJSON(value), schema, ctx);
      return decodeStruct(schema, value, ctx, isPlainObject(existing) ? existing : {});
  }
}

function zeroValue(schema: Schema): unknown {
  switch (schema.k) {
    case "string":
      return "";
    case "bool":
      return false;
    case "int":
      return 0;
    default:
      return null;
  }
}

const fieldIndexes = new WeakMap<StructSchema, Map<string, string>>();

/** Go field lookup: exact name first, then a case-insensitive match. */
function findField(schema: StructSchema, key: string): string | undefined {
  const fields = schema.fields();
  if (Object.prototype.hasOwnProperty.call(fields, key)) return key;
  let index = fieldIndexes.get(schema);
  if (!index) {
    index = new Map();
    for (const name of Object.keys(fields)) index.set(name.toLowerCase(), name);
    fieldIndexes.set(schema, index);
  }
  return index.get(key.toLowerCase());
}

/**
 * Decodes an object into a struct. The result holds Go field names only for
 * fields that were present with a non-null value (null leaves a pointer nil).
 */
function decodeStruct(schema: StructSchema, value: Obj, ctx: DecodeContext, into: Obj = {}): Obj {
  const fields = schema.fields();
  for (const [key, inner] of Object.entries(value)) {
    const name = findField(schema, key);
    if (name === undefined) continue; // unknown keys are ignored
    const fieldSchema = fields[name];
    if (fieldSchema === undefined) continue;
    if (inner === null) {
      delete into[name];
      continue;
    }
    const fieldCtx: DecodeContext = { struct: schema.name, stack: [...ctx.stack, name] };
    setOwn(into, name, decodeValue(fieldSchema, inner, fieldCtx, into[name]));
  }
  return into;
}

// ---------------------------------------------------------------------------
// Accessors over decoded api objects (absent = Go nil / zero value)

const has = (o: Obj | undefined, key: string): boolean => o !== undefined && o[key] !== undefined;
const getStr = (o: Obj | undefined, key: string, fallback = ""): string => (o !== undefined && typeof o[key] === "string" ? (o[key] as string) : fallback);
const getNum = (o: Obj | undefined, key: string, fallback = 0): number => (o !== undefined && typeof o[key] === "number" ? (o[key] as number) : fallback);
const getBool = (o: Obj | undefined, key: string, fallback = false): boolean => (o !== undefined && typeof o[key] === "boolean" ? (o[key] as boolean) : fallback);
const getObj = (o: Obj | undefined, key: string): Obj | undefined => (o !== undefined && isPlainObject(o[key]) ? (o[key] as Obj) : undefined);
const getList = (o: Obj | undefined, key: string): unknown[] | undefined => (o !== undefined && Array.isArray(o[key]) ? (o[key] as unknown[]) : undefined);
const getObjList = (o: Obj | undefined, key: string): Obj[] => (getList(o, key) ?? []).map((e) => (isPlainObject(e) ? e : {}));
const optNum = (o: Obj | undefined, key: string): number | null => (has(o, key) ? getNum(o, key) : null);

/** A map kept only when non-empty (the many `if len(m) == 0 { m = nil }`). */
function nonEmptyMap(value: unknown): Obj | null {
  if (!isPlainObject(value) || isEmptyObject(value)) return null;
  return deepClone(value) as Obj;
}

/** Whether an object has no own enumerable key (without listing its keys: a map may hold 100,000). */
function isEmptyObject(value: Obj): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** A string list kept only when non-empty. */
function nonEmptyStrings(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 ? (value.slice() as string[]) : null;
}

/** A string list copied as Go's slices.Clone does: nil stays nil, empty stays empty. */
function cloneStrings(value: unknown): string[] | null {
  return Array.isArray(value) ? (value.slice() as string[]) : null;
}

// ---------------------------------------------------------------------------
// Canonicalization (api.Canonicalize → ApiJobToStructJob → structs.Canonicalize)

interface JobContext {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly consulNamespace: string;
  readonly vaultNamespace: string;
  readonly update: Obj | undefined;
  readonly reschedule: Obj | undefined;
  readonly migrate: Obj | undefined;
}

const UPDATE_DEFAULTS: Readonly<Obj> = {
  Stagger: 30 * SECOND,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * SECOND,
  HealthyDeadline: 5 * MINUTE,
  ProgressDeadline: 10 * MINUTE,
  AutoRevert: false,
  Canary: 0,
  AutoPromote: false,
};

const MIGRATE_DEFAULTS: Readonly<Obj> = { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * SECOND, HealthyDeadline: 5 * MINUTE };

function restartDefaults(jobType: string): Obj {
  // api/tasks.go defaultServiceJobRestartPolicy / defaultBatchJobRestartPolicy
  return jobType === "service" || jobType === "system"
    ? { Attempts: 2, Interval: 30 * MINUTE, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false }
    : { Attempts: 3, Interval: 24 * HOUR, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false };
}

function rescheduleDefaults(jobType: string): Obj {
  // api/tasks.go NewDefaultReschedulePolicy
  switch (jobType) {
    case "service":
      return { Attempts: 0, Interval: 0, Delay: 30 * SECOND, DelayFunction: "exponential", MaxDelay: HOUR, Unlimited: true };
    case "batch":
      return { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
    default:
      return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false };
  }
}

/** Fills the fields `partial` lacks from `defaults` (the api Canonicalize pattern). */
function withDefaults(partial: Obj | undefined, defaults: Readonly<Obj>): Obj {
  const out: Obj = {};
  for (const key of Object.keys(defaults)) out[key] = has(partial, key) ? partial?.[key] : defaults[key];
  return out;
}

/** Overlays the fields present in `over` on a copy of `base` (the api Merge pattern). */
function mergePresent(base: Obj, over: Obj | undefined): Obj {
  const out: Obj = { ...base };
  if (over) for (const [key, value] of Object.entries(over)) if (value !== undefined) out[key] = value;
  return out;
}

function updateIsEmpty(u: Obj): boolean {
  // api UpdateStrategy.Empty
  return (
    getNum(u, "Stagger") === 0 &&
    getNum(u, "MaxParallel") === 0 &&
    getStr(u, "HealthCheck") === "" &&
    getNum(u, "MinHealthyTime") === 0 &&
    getNum(u, "HealthyDeadline") === 0 &&
    getNum(u, "ProgressDeadline") === 0 &&
    !getBool(u, "AutoRevert") &&
    !getBool(u, "AutoPromote") &&
    getNum(u, "Canary") === 0
  );
}

function structsUpdate(u: Obj): Obj {
  return {
    Stagger: getNum(u, "Stagger"),
    MaxParallel: getNum(u, "MaxParallel"),
    HealthCheck: getStr(u, "HealthCheck"),
    MinHealthyTime: getNum(u, "MinHealthyTime"),
    HealthyDeadline: getNum(u, "HealthyDeadline"),
    ProgressDeadline: getNum(u, "ProgressDeadline"),
    AutoRevert: getBool(u, "AutoRevert"),
    AutoPromote: getBool(u, "AutoPromote"),
    Canary: getNum(u, "Canary"),
  };
}

function constraints(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((c) => {
    const o = isPlainObject(c) ? c : {};
    return { LTarget: getStr(o, "LTarget"), RTarget: getStr(o, "RTarget"), Operand: getStr(o, "Operand") };
  });
}

function affinities(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((a) => {
    const o = isPlainObject(a) ? a : {};
    return { LTarget: getStr(o, "LTarget"), RTarget: getStr(o, "RTarget"), Operand: getStr(o, "Operand"), Weight: getNum(o, "Weight", 50) };
  });
}

function spreads(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((s) => {
    const o = isPlainObject(s) ? s : {};
    const targets = getList(o, "SpreadTarget");
    return {
      Attribute: getStr(o, "Attribute"),
      Weight: getNum(o, "Weight", 50),
      SpreadTarget: targets ? targets.map((t) => ({ Value: getStr(t as Obj, "Value"), Percent: getNum(t as Obj, "Percent") })) : null,
    };
  });
}

/** structs.Port; a struct-level `codec:",omitempty"` leaves zero fields out. */
function port(p: Obj): Obj {
  const out: Obj = {};
  if (getStr(p, "Label") !== "") out["Label"] = getStr(p, "Label");
  if (getNum(p, "Value") !== 0) out["Value"] = getNum(p, "Value");
  if (getNum(p, "To") !== 0) out["To"] = getNum(p, "To");
  out["HostNetwork"] = getStr(p, "HostNetwork") || "default"; // NetworkResource.Canonicalize
  if (getBool(p, "IgnoreCollision")) out["IgnoreCollision"] = true;
  return out;
}

/** ApiNetworkResourceToStructs + NetworkResource.Canonicalize, zero fields omitted (see port). */
function networks(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((n) => {
    const o = isPlainObject(n) ? n : {};
    const out: Obj = {};
    for (const key of ["Mode", "CIDR", "IP", "Hostname"]) if (getStr(o, key) !== "") out[key] = getStr(o, key);
    if (getNum(o, "MBits") !== 0) out["MBits"] = getNum(o, "MBits");
    const dns = getObj(o, "DNS");
    if (dns) out["DNS"] = { Servers: cloneStrings(dns["Servers"]), Searches: cloneStrings(dns["Searches"]), Options: cloneStrings(dns["Options"]) };
    const reserved = getObjList(o, "ReservedPorts");
    if (reserved.length > 0) out["ReservedPorts"] = reserved.map(port);
    const dynamic = getObjList(o, "DynamicPorts");
    if (dynamic.length > 0) out["DynamicPorts"] = dynamic.map(port);
    return out;
  });
}

function workloadIdentity(o: Obj): Obj {
  return {
    Name: getStr(o, "Name"),
    Audience: cloneStrings(o["Audience"]),
    ChangeMode: getStr(o, "ChangeMode"),
    ChangeSignal: getStr(o, "ChangeSignal"),
    Env: getBool(o, "Env"),
    File: getBool(o, "File"),
    ServiceName: getStr(o, "ServiceName"),
    TTL: getNum(o, "TTL"),
  };
}

/** structs.WorkloadIdentity.Canonicalize */
function canonicalizeIdentity(wid: Obj): void {
  if (wid["Name"] === "") wid["Name"] = "default";
  if (wid["Name"] === "default") wid["Audience"] = ["nomadproject.io"];
  if (wid["ChangeSignal"] !== "") wid["ChangeSignal"] = String(wid["ChangeSignal"]).toUpperCase();
}

/** args.ReplaceEnv: `${KEY}` is replaced for the given keys only. */
function replaceEnv(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([^}]*)\}/g, (whole, key: string) => (Object.prototype.hasOwnProperty.call(vars, key) ? (vars[key] ?? "") : whole));
}

/** strconv.Quote (what Go's %q prints for a string). */
function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case "\\":
        out += "\\\\";
        continue;
      case "\x07":
        out += "\\a";
        continue;
      case "\b":
        out += "\\b";
        continue;
      case "\f":
        out += "\\f";
        continue;
      case "\n":
        out += "\\n";
        continue;
      case "\r":
        out += "\\r";
        continue;
      case "\t":
        out += "\\t";
        continue;
      case "\v":
        out += "\\v";
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp >= 0x80 && cp < 0xa0) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

/** ApiServicesToStructs + api Service.Canonicalize + structs Service.Canonicalize. */
function services(list: unknown[] | undefined, ctx: JobContext, groupName: string, taskName: string | null): Obj[] | null {
  if (!list || list.length === 0) return null;
  const taskOrGroup = taskName ?? "group";
  return list.map((entry) => {
    const svc = isPlainObject(entry) ? entry : {};
    let name = getStr(svc, "Name");
    if (name === "") name = taskName !== null ? `${ctx.name}-${groupName}-${taskName}` : `${ctx.name}-${groupName}`;
    name = replaceEnv(name, {
      JOB: ctx.name,
      TASKGROUP: groupName,
      TASK: taskOrGroup,
      BASE: `${ctx.name}-${groupName}-${taskOrGroup}`,
    });
    const onUpdate = getStr(svc, "OnUpdate") || "require_healthy";
    const provider = getStr(svc, "Provider") || "consul";
    const serviceTask = getStr(svc, "TaskName") || (taskName ?? "");
    const serviceRestart = getObj(svc, "CheckRestart");
    const checks = getObjList(svc, "Checks").map((check) => {
      // api CheckRestart.Merge + Canonicalize (grace defaults to 1s)
      const own = getObj(check, "CheckRestart");
      let restart: Obj | undefined = serviceRestart ? { ...serviceRestart } : own ? { ...own } : undefined;
      if (serviceRestart && own) {
        if (getNum(own, "Limit") > 0) restart = { ...restart, Limit: own["Limit"] };
        if (has(own, "Grace")) restart = { ...restart, Grace: own["Grace"] };
        if (getBool(own, "IgnoreWarnings")) restart = { ...restart, IgnoreWarnings: true };
      }
      const header = getObj(check, "Header");
      let headerOut: Obj | null = null;
      if (header && Object.keys(header).length > 0) {
        headerOut = {};
        for (const [key, values] of Object.entries(header)) setOwn(headerOut, key, Array.isArray(values) && values.length > 0 ? values.slice() : null);
      }
      const args = getList(check, "Args");
      return {
        Name: getStr(check, "Name") || `service: ${goQuote(name)} check`,
        Type: getStr(check, "Type"),
        Command: getStr(check, "Command"),
        Args: args && args.length > 0 ? args.slice() : null,
        Path: getStr(check, "Path"),
        Protocol: getStr(check, "Protocol"),
        PortLabel: getStr(check, "PortLabel"),
        Expose: getBool(check, "Expose"),
        AddressMode: getStr(check, "AddressMode"),
        Interval: getNum(check, "Interval"),
        Timeout: getNum(check, "Timeout"),
        InitialStatus: getStr(check, "InitialStatus"),
        Notes: "", // not copied by ApiServicesToStructs
        TLSServerName: getStr(check, "TLSServerName"),
        TLSSkipVerify: getBool(check, "TLSSkipVerify"),
        Method: getStr(check, "Method"),
        Header: headerOut,
        CheckRestart: restart
          ? { Limit: getNum(restart, "Limit"), Grace: getNum(restart, "Grace", SECOND), IgnoreWarnings: getBool(restart, "IgnoreWarnings") }
          : null,
        GRPCService: getStr(check, "GRPCService"),
        GRPCUseTLS: getBool(check, "GRPCUseTLS"),
        // Group checks keep their own task; every check falls back to the service's task.
        TaskName: (taskName === null ? getStr(check, "TaskName") : "") || serviceTask,
        SuccessBeforePassing: Math.max(0, getNum(check, "SuccessBeforePassing")),
        FailuresBeforeCritical: Math.max(0, getNum(check, "FailuresBeforeCritical")),
        FailuresBeforeWarning: Math.max(0, getNum(check, "FailuresBeforeWarning")),
        Body: getStr(check, "Body"),
        OnUpdate: getStr(check, "OnUpdate") || onUpdate,
      };
    });
    const identity = getObj(svc, "Identity");
    return {
      Name: name,
      TaskName: serviceTask,
      PortLabel: getStr(svc, "PortLabel"),
      AddressMode: getStr(svc, "AddressMode") || "auto",
      Address: getStr(svc, "Address"),
      EnableTagOverride: getBool(svc, "EnableTagOverride"),
      Tags: nonEmptyStrings(svc["Tags"]),
      CanaryTags: nonEmptyStrings(svc["CanaryTags"]),
      Checks: checks.length > 0 ? checks : null,
      Connect: has(svc, "Connect") ? deepClone(svc["Connect"]) : null,
      Meta: nonEmptyMap(svc["Meta"]),
      CanaryMeta: nonEmptyMap(svc["CanaryMeta"]),
      TaggedAddresses: nonEmptyMap(svc["TaggedAddresses"]),
      Namespace: provider === "consul" ? "default" : provider === "nomad" ? ctx.namespace : "",
      OnUpdate: onUpdate,
      Provider: provider,
      Cluster: getStr(svc, "Cluster") || "default",
      Identity: identity ? workloadIdentity(identity) : null,
    };
  });
}

function consulBlock(consul: Obj | undefined, inheritedNamespace: string | null): Obj {
  return {
    Namespace: getStr(consul, "Namespace") || (inheritedNamespace ?? ""),
    Cluster: getStr(consul, "Cluster") || "default",
    Partition: getStr(consul, "Partition"),
  };
}

function scalingPolicy(policy: Obj, count: number, ctx: JobContext, group: string, task: string | null): Obj {
  const target: Obj = { Namespace: ctx.namespace, Job: ctx.id, Group: group };
  if (task !== null) target["Task"] = task;
  return {
    ID: "", // assigned by the state store
    Type: getStr(policy, "Type") || "horizontal",
    Target: target,
    Policy: isPlainObject(policy["Policy"]) ? deepClone(policy["Policy"]) : null,
    Min: has(policy, "Min") ? getNum(policy, "Min") : count,
    Max: has(policy, "Max") ? getNum(policy, "Max") : -1,
    Enabled: getBool(policy, "Enabled", true),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

function pathBase(p: string): string {
  // Go's path.Base
  if (p === "") return ".";
  const trimmed = p.replace(/\/+$/, "");
  if (trimmed === "") return "/";
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

function pathJoin(...parts: string[]): string {
  // Go's path.Join (= filepath.Join on Unix): join non-empty parts and Clean
  const joined = parts.filter((p) => p !== "").join("/");
  if (joined === "") return "";
  const absolute = joined.startsWith("/");
  const out: string[] = [];
  for (const segment of joined.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(segment);
  }
  const cleaned = (absolute ? "/" : "") + out.join("/");
  return cleaned === "" ? "." : cleaned;
}

function buildTask(t: Obj, ctx: JobContext, groupName: string, groupRestart: Obj): Obj {
  const name = getStr(t, "Name");

  // api Resources.Canonicalize + ApiResourcesToStructs
  const res = getObj(t, "Resources") ?? {};
  const coresSet = has(res, "Cores");
  const cpu = has(res, "CPU") ? getNum(res, "CPU") : coresSet ? 0 : 100;
  const devices = getObjList(res, "Devices");
  const numa = getObj(res, "NUMA");
  const resources: Obj = {
    CPU: cpu,
    Cores: getNum(res, "Cores"),
    MemoryMB: getNum(res, "MemoryMB", 300),
    MemoryMaxMB: getNum(res, "MemoryMaxMB"),
    DiskMB: getNum(res, "DiskMB"),
    IOPS: getNum(res, "IOPS"),
    Networks: networks(getList(res, "Networks")),
    Devices:
      devices.length > 0
        ? devices.map((d) => ({
            Name: getStr(d, "Name"),
            Count: getNum(d, "Count", 1),
            Constraints: constraints(getList(d, "Constraints")),
            Affinities: affinities(getList(d, "Affinities")),
          }))
        : null,
    NUMA: numa ? { Affinity: getStr(numa, "Affinity") || "none", Devices: nonEmptyStrings(numa["Devices"]) } : null,
  };

  // Restart policy: the group's, with the task's own fields merged over it.
  const taskRestart = getObj(t, "RestartPolicy");
  const restart = mergePresent(groupRestart, taskRestart);

  // api Vault.Canonicalize; the job's vault namespace fills an empty one.
  const vault = getObj(t, "Vault");
  let vaultOut: Obj | null = null;
  if (vault) {
    const changeSignal = has(vault, "ChangeSignal") ? getStr(vault, "ChangeSignal").toUpperCase() : "SIGHUP";
    vaultOut = {
      Role: getStr(vault, "Role"),
      Policies: cloneStrings(vault["Policies"]),
      Namespace: getStr(vault, "Namespace") || ctx.vaultNamespace,
      Cluster: getStr(vault, "Cluster") || "default",
      Env: getBool(vault, "Env", true),
      DisableFile: getBool(vault, "DisableFile"),
      ChangeMode: getStr(vault, "ChangeMode", "restart") || "restart",
      ChangeSignal: changeSignal,
      AllowTokenExpiration: getBool(vault, "AllowTokenExpiration"),
    };
  }

  const templates = getObjList(t, "Templates").map((tmpl) => {
    const changeMode = getStr(tmpl, "ChangeMode", "restart");
    const changeSignal = has(tmpl, "ChangeSignal") ? getStr(tmpl, "ChangeSignal").toUpperCase() : changeMode === "signal" ? "SIGHUP" : "";
    const script = getObj(tmpl, "ChangeScript");
    const wait = getObj(tmpl, "Wait");
    return {
      SourcePath: getStr(tmpl, "SourcePath"),
      DestPath: getStr(tmpl, "DestPath"),
      EmbeddedTmpl: getStr(tmpl, "EmbeddedTmpl"),
      ChangeMode: changeMode,
      ChangeSignal: changeSignal,
      ChangeScript: script
        ? {
            Command: getStr(script, "Command"),
            Args: cloneStrings(script["Args"]) ?? [],
            Timeout: getNum(script, "Timeout", 5 * SECOND),
            FailOnError: getBool(script, "FailOnError"),
          }
        : null,
      Splay: getNum(tmpl, "Splay", 5 * SECOND),
      Perms: getStr(tmpl, "Perms", "0644"),
      Uid: optNum(tmpl, "Uid"),
      Gid: optNum(tmpl, "Gid"),
      LeftDelim: getStr(tmpl, "LeftDelim", "{{"),
      RightDelim: getStr(tmpl, "RightDelim", "}}"),
      Envvars: getBool(tmpl, "Envvars"),
      VaultGrace: getNum(tmpl, "VaultGrace"),
      Wait: wait ? { Min: optNum(wait, "Min"), Max: optNum(wait, "Max") } : null,
      ErrMissingKey: getBool(tmpl, "ErrMissingKey"),
    };
  });

  const artifacts = getObjList(t, "Artifacts").map((a) => {
    const mode = getStr(a, "GetterMode", "any");
    const source = getStr(a, "GetterSource");
    const dest = has(a, "RelativeDest") ? getStr(a, "RelativeDest") : mode === "file" ? pathJoin("local", pathBase(source)) : "local/";
    return {
      GetterSource: source,
      GetterOptions: nonEmptyMap(a["GetterOptions"]),
      GetterHeaders: nonEmptyMap(a["GetterHeaders"]),
      GetterMode: mode,
      GetterInsecure: getBool(a, "GetterInsecure"),
      RelativeDest: dest,
      Chown: getBool(a, "Chown"),
    };
  });

  const lifecycle = getObj(t, "Lifecycle");
  const volumeMounts = getObjList(t, "VolumeMounts")
    .filter((vm) => has(vm, "Volume"))
    .map((vm) => ({
      Volume: getStr(vm, "Volume"),
      Destination: getStr(vm, "Destination"),
      ReadOnly: getBool(vm, "ReadOnly"),
      PropagationMode: getStr(vm, "PropagationMode", "private"),
      SELinuxLabel: getStr(vm, "SELinuxLabel"),
    }));
  const csi = getObj(t, "CSIPluginConfig");
  const scalingPolicies = getObjList(t, "ScalingPolicies").map((p) => scalingPolicy(p, 0, ctx, groupName, name));
  const actions = getObjList(t, "Actions").map((a) => ({ Name: getStr(a, "Name"), Command: getStr(a, "Command"), Args: cloneStrings(a["Args"]) }));

  // Workload identities (structs Task.Canonicalize): the default identity
  // moves out of Identities into Identity, and one is created when absent.
  const given = getObj(t, "Identity");
  let identity: Obj | null = given ? workloadIdentity(given) : null;
  let identities: Obj[] | null = null;
  const widList = getObjList(t, "Identities");
  if (widList.length > 0) {
    identities = widList.map(workloadIdentity);
    let defaultIdx = -1;
    identities.forEach((wid, i) => {
      canonicalizeIdentity(wid);
      if (wid["Name"] === "default") {
        identity = wid;
        defaultIdx = i;
      }
    });
    if (defaultIdx >= 0) identities.splice(defaultIdx, 1);
  }
  if (identity === null) identity = { Name: "default", Audience: ["nomadproject.io"], ChangeMode: "", ChangeSignal: "", Env: false, File: false, ServiceName: "", TTL: 0 };
  else canonicalizeIdentity(identity);

  const killTimeout = getNum(t, "KillTimeout");
  const taskConsul = getObj(t, "Consul");
  const dispatch = getObj(t, "DispatchPayload");
  return {
    Name: name,
    Driver: getStr(t, "Driver"),
    User: getStr(t, "User"),
    Config: nonEmptyMap(t["Config"]),
    Env: nonEmptyMap(t["Env"]),
    Services: services(getList(t, "Services"), ctx, groupName, name),
    Vault: vaultOut,
    Consul: taskConsul ? consulBlock(taskConsul, null) : null,
    Templates: templates.length > 0 ? templates : null,
    Constraints: constraints(getList(t, "Constraints")),
    Affinities: affinities(getList(t, "Affinities")),
    Resources: resources,
    RestartPolicy: restart,
    DispatchPayload: dispatch ? { File: getStr(dispatch, "File") } : null,
    Lifecycle: lifecycle && getStr(lifecycle, "Hook") !== "" ? { Hook: getStr(lifecycle, "Hook"), Sidecar: getBool(lifecycle, "Sidecar") } : null,
    Meta: nonEmptyMap(t["Meta"]),
    KillTimeout: killTimeout === 0 ? 5 * SECOND : killTimeout,
    LogConfig: (() => {
      const lc = getObj(t, "LogConfig");
      return { MaxFiles: getNum(lc, "MaxFiles", 10), MaxFileSizeMB: getNum(lc, "MaxFileSizeMB", 10), Disabled: getBool(lc, "Disabled") };
    })(),
    Artifacts: artifacts.length > 0 ? artifacts : null,
    Leader: getBool(t, "Leader"),
    ShutdownDelay: getNum(t, "ShutdownDelay"),
    VolumeMounts: volumeMounts.length > 0 ? volumeMounts : null,
    ScalingPolicies: scalingPolicies.length > 0 ? scalingPolicies : null,
    KillSignal: getStr(t, "KillSignal"),
    Kind: getStr(t, "Kind"),
    CSIPluginConfig: csi
      ? {
          ID: getStr(csi, "ID"),
          Type: getStr(csi, "Type"),
          MountDir: getStr(csi, "MountDir") || "/csi",
          StagePublishBaseDir: getStr(csi, "StagePublishBaseDir") || "/local/csi",
          HealthTimeout: getNum(csi, "HealthTimeout") || 30 * SECOND,
        }
      : null,
    Identity: identity,
    Identities: identities,
    Actions: actions.length > 0 ? actions : null,
    Schedule: has(t, "Schedule") ? deepClone(t["Schedule"]) : null,
  };
}

function buildGroup(tg: Obj, ctx: JobContext): Obj {
  const name = getStr(tg, "Name");
  const scaling = getObj(tg, "Scaling");
  const apiCount = has(tg, "Count") ? getNum(tg, "Count") : scaling && has(scaling, "Min") ? getNum(scaling, "Min") : 1;
  const count = ctx.type === "system" && apiCount === 0 ? 1 : apiCount;

  // Update: the job's (already canonicalized) merged with the group's.
  const own = getObj(tg, "Update");
  let update: Obj | undefined;
  if (ctx.update && own) update = mergePresent(ctx.update, own);
  else if (ctx.update && !updateIsEmpty(ctx.update)) update = { ...ctx.update };
  else update = own;
  const updateOut = update ? structsUpdate(withDefaults(update, UPDATE_DEFAULTS)) : null;

  // Reschedule: job ⊕ group, then the job type's defaults (none for system jobs).
  const ownReschedule = getObj(tg, "ReschedulePolicy");
  let reschedule: Obj | undefined;
  if (ctx.reschedule && ownReschedule) reschedule = mergePresent(ctx.reschedule, ownReschedule);
  else reschedule = ctx.reschedule ? { ...ctx.reschedule } : ownReschedule;
  if (!reschedule && ctx.type !== "system") reschedule = {};
  const rescheduleOut = reschedule ? withDefaults(reschedule, rescheduleDefaults(ctx.type)) : null;

  // Migrate: job ⊕ group; service jobs always get one.
  const ownMigrate = getObj(tg, "Migrate");
  let migrate: Obj | undefined;
  if (ctx.migrate && ownMigrate) migrate = mergePresent(ctx.migrate, ownMigrate);
  else migrate = ctx.migrate ? { ...ctx.migrate } : ownMigrate;
  if (!migrate && ctx.type === "service") migrate = {};
  const migrateOut = migrate ? withDefaults(migrate, MIGRATE_DEFAULTS) : null;

  const restart = mergePresent(restartDefaults(ctx.type), getObj(tg, "RestartPolicy"));

  const disk = getObj(tg, "EphemeralDisk");
  const maxClientDisconnect = optNum(tg, "MaxClientDisconnect");
  const stopAfterClientDisconnect = optNum(tg, "StopAfterClientDisconnect");
  const disconnect = getObj(tg, "Disconnect");
  let disconnectOut: Obj | null = null;
  if (disconnect) {
    let lostAfter = getNum(disconnect, "LostAfter");
    if (maxClientDisconnect !== null && lostAfter === 0) lostAfter = maxClientDisconnect;
    const stopOnClientAfter = has(disconnect, "StopOnClientAfter") ? getNum(disconnect, "StopOnClientAfter") : stopAfterClientDisconnect;
    disconnectOut = {
      LostAfter: lostAfter,
      StopOnClientAfter: stopOnClientAfter,
      Replace: getBool(disconnect, "Replace", true),
      Reconcile: getStr(disconnect, "Reconcile") || "best_score",
    };
  }

  const volumes = getObj(tg, "Volumes");
  let volumesOut: Obj | null = null;
  if (volumes && Object.keys(volumes).length > 0) {
    volumesOut = {};
    for (const [key, value] of Object.entries(volumes)) {
      const v = isPlainObject(value) ? value : {};
      const type = getStr(v, "Type");
      if (type !== "host" && type !== "csi") continue; // ApiTgToStructsTG ignores other types
      const mount = getObj(v, "MountOptions");
      setOwn(volumesOut, key, {
        Name: getStr(v, "Name"),
        Type: type,
        Source: getStr(v, "Source"),
        ReadOnly: getBool(v, "ReadOnly"),
        AccessMode: getStr(v, "AccessMode"),
        AttachmentMode: getStr(v, "AttachmentMode"),
        MountOptions: mount ? { FSType: getStr(mount, "FSType"), MountFlags: cloneStrings(mount["MountFlags"]) } : null,
        PerAlloc: getBool(v, "PerAlloc"),
      });
    }
  }

  const tasks = getObjList(tg, "Tasks");
  return {
    Name: name,
    Count: count,
    Update: updateOut,
    Migrate: migrateOut,
    Constraints: constraints(getList(tg, "Constraints")),
    Scaling: scaling ? scalingPolicy(scaling, apiCount, ctx, name, null) : null,
    RestartPolicy: restart,
    Disconnect: disconnectOut,
    Tasks: tasks.length > 0 ? tasks.map((t) => buildTask(t, ctx, name, restart)) : null,
    EphemeralDisk: { Sticky: getBool(disk, "Sticky"), SizeMB: getNum(disk, "SizeMB", 300), Migrate: getBool(disk, "Migrate") },
    Meta: nonEmptyMap(tg["Meta"]),
    ReschedulePolicy: rescheduleOut,
    Affinities: affinities(getList(tg, "Affinities")),
    Spreads: spreads(getList(tg, "Spreads")),
    Networks: networks(getList(tg, "Networks")),
    Consul: consulBlock(getObj(tg, "Consul"), ctx.consulNamespace),
    Services: services(getList(tg, "Services"), ctx, name, null),
    Volumes: volumesOut,
    ShutdownDelay: optNum(tg, "ShutdownDelay"),
    StopAfterClientDisconnect: stopAfterClientDisconnect,
    MaxClientDisconnect: maxClientDisconnect,
    PreventRescheduleOnLost: getBool(tg, "PreventRescheduleOnLost"),
  };
}

const VAULT_CONSTRAINT = { LTarget: "${attr.vault.version}", RTarget: ">= 0.6.1", Operand: "semver" };
const CONSUL_CONSTRAINT = { LTarget: "${attr.consul.version}", RTarget: ">= 1.7.0", Operand: "semver" };
const NOMAD_SD_CONSTRAINT = { LTarget: "${attr.nomad.service_discovery}", RTarget: "true", Operand: "=" };
const NOMAD_CHECKS_CONSTRAINT = { LTarget: "${attr.nomad.version}", RTarget: ">= 1.4.0", Operand: "semver" };

/**
 * The jobImpliedConstraints admission mutator (nomad/job_endpoint_hooks.go):
 * groups using Vault, signals, Nomad or Consul services get the constraints
 * that keep them off clients which cannot run them. "Left" matching skips the
 * constraint when the group already constrains the same attribute.
 */
function addImpliedConstraints(tg: Obj): void {
  const list = (): Obj[] => (tg["Constraints"] as Obj[] | null) ?? [];
  const add = (constraint: Obj, leftOnly: boolean): void => {
    const found = list().some((c) =>
      leftOnly ? c["LTarget"] === constraint["LTarget"] : c["LTarget"] === constraint["LTarget"] && c["RTarget"] === constraint["RTarget"] && c["Operand"] === constraint["Operand"],
    );
    if (!found) tg["Constraints"] = [...list(), { ...constraint }];
  };
  const tasks = (tg["Tasks"] as Obj[] | null) ?? [];
  const taskServices = tasks.flatMap((t) => (t["Services"] as Obj[] | null) ?? []);
  const groupServices = (tg["Services"] as Obj[] | null) ?? [];
  const allServices = [...groupServices, ...taskServices];

  const vaultTasks = tasks.filter((t) => t["Vault"] !== null).sort((a, b) => (String(a["Name"]) < String(b["Name"]) ? -1 : 1));
  for (const t of vaultTasks) {
    const cluster = String((t["Vault"] as Obj)["Cluster"]);
    add(cluster === "default" || cluster === "" ? VAULT_CONSTRAINT : { ...VAULT_CONSTRAINT, LTarget: `\${attr.vault.${cluster}.version}` }, true);
  }

  const signals = new Set<string>();
  for (const t of tasks) {
    const vault = t["Vault"] as Obj | null;
    if (vault && vault["ChangeMode"] === "signal") signals.add(String(vault["ChangeSignal"]));
    if (t["KillSignal"] !== "") signals.add(String(t["KillSignal"]));
    for (const tmpl of (t["Templates"] as Obj[] | null) ?? []) if (tmpl["ChangeMode"] === "signal") signals.add(String(tmpl["ChangeSignal"]));
  }
  if (signals.size > 0) add({ Operand: "set_contains", LTarget: "${attr.os.signals}", RTarget: [...signals].sort().join(",") }, false);

  const nomadServices = allServices.filter((svc) => svc["Provider"] === "nomad");
  if (nomadServices.length > 0) add(NOMAD_SD_CONSTRAINT, false);
  if (nomadServices.some((svc) => ((svc["Checks"] as Obj[] | null) ?? []).length > 0)) add(NOMAD_CHECKS_CONSTRAINT, false);

  // Nomad walks the group's services here, so task-only Consul services add nothing.
  const consulConstraint = (svc: Obj): Obj => {
    const cluster = String(svc["Cluster"]);
    return cluster === "default" || cluster === "" ? CONSUL_CONSTRAINT : { ...CONSUL_CONSTRAINT, LTarget: `\${attr.consul.${cluster}.version}` };
  };
  if (allServices.some((svc) => svc["Provider"] === "consul")) {
    for (const svc of groupServices) {
      if (svc["Provider"] === "consul") add(consulConstraint(svc), true);
      for (const taskService of taskServices) if (taskService["Provider"] === "consul") add(consulConstraint(taskService), true);
    }
  }
}

/**
 * Decodes and canonicalizes a job as a Nomad 1.9 server stores it (see the
 * module comment). `opts.region`/`opts.namespace` are the resolved values and
 * replace the job's own.
 */
export function canonicalizeJob(apiJob: unknown, opts: { region: string; namespace: string }): Record<string, unknown> {
  if (apiJob === undefined || apiJob === null) throw new JobDecodeError("Job must be specified");
  if (!isPlainObject(apiJob)) throw typeError(describeJSON(apiJob), JOB, { struct: "JobRegisterRequest", stack: ["Job"] });
  const api = decodeStruct(JOB, apiJob, { struct: "Job", stack: ["Job"] });

  const id = getStr(api, "ID");
  const name = has(api, "Name") ? getStr(api, "Name") : id;
  const type = has(api, "Type") ? getStr(api, "Type") : "service";
  const apiPriority = has(api, "Priority") ? getNum(api, "Priority") : 50;
  const jobUpdate = has(api, "Update") ? withDefaults(getObj(api, "Update"), UPDATE_DEFAULTS) : type === "service" ? { ...UPDATE_DEFAULTS } : undefined;

  const ctx: JobContext = {
    type,
    id,
    name,
    namespace: opts.namespace,
    consulNamespace: getStr(api, "ConsulNamespace"),
    vaultNamespace: getStr(api, "VaultNamespace"),
    update: jobUpdate,
    reschedule: getObj(api, "Reschedule"),
    migrate: getObj(api, "Migrate"),
  };

  // ApiJobToStructJob keeps only Stagger and MaxParallel of the job's update.
  const jobLevelUpdate = structsUpdate({});
  if (jobUpdate && getNum(jobUpdate, "MaxParallel") > 0) {
    jobLevelUpdate["Stagger"] = getNum(jobUpdate, "Stagger");
    jobLevelUpdate["MaxParallel"] = getNum(jobUpdate, "MaxParallel");
  }

  const datacenters = getList(api, "Datacenters");
  const groups = getObjList(api, "TaskGroups");

  const multiregion = getObj(api, "Multiregion");
  let multiregionOut: Obj | null = null;
  if (multiregion) {
    const strategy = getObj(multiregion, "Strategy");
    multiregionOut = {
      Strategy: { MaxParallel: getNum(strategy, "MaxParallel"), OnFailure: getStr(strategy, "OnFailure") },
      Regions: getObjList(multiregion, "Regions").map((r) => ({
        Name: getStr(r, "Name"),
        Count: getNum(r, "Count", 1),
        Datacenters: cloneStrings(r["Datacenters"]) ?? [],
        NodePool: getStr(r, "NodePool"),
        Meta: isPlainObject(r["Meta"]) ? deepClone(r["Meta"]) : {},
      })),
    };
  }

  const periodic = getObj(api, "Periodic");
  const parameterized = getObj(api, "ParameterizedJob");
  const ui = getObj(api, "UI");
  const versionTag = getObj(api, "VersionTag");

  const job: Obj = {
    Stop: getBool(api, "Stop"),
    Region: opts.region,
    Namespace: opts.namespace,
    ID: id,
    ParentID: "",
    Name: name,
    Type: type,
    Priority: apiPriority === 0 ? 50 : apiPriority, // jobCanonicalizer: 0 → the server's default
    AllAtOnce: getBool(api, "AllAtOnce"),
    Datacenters: datacenters && datacenters.length > 0 ? datacenters.slice() : ["*"],
    NodePool: getStr(api, "NodePool") || "default",
    Constraints: constraints(getList(api, "Constraints")),
    Affinities: affinities(getList(api, "Affinities")),
    Spreads: spreads(getList(api, "Spreads")),
    TaskGroups: groups.length > 0 ? groups.map((tg) => buildGroup(tg, ctx)) : null,
    Update: jobLevelUpdate,
    Multiregion: multiregionOut,
    Periodic: periodic
      ? {
          Enabled: getBool(periodic, "Enabled", true),
          Spec: getStr(periodic, "Spec"),
          Specs: cloneStrings(periodic["Specs"]),
          SpecType: getStr(periodic, "SpecType", "cron"),
          ProhibitOverlap: getBool(periodic, "ProhibitOverlap"),
          TimeZone: getStr(periodic, "TimeZone") || "UTC",
        }
      : null,
    ParameterizedJob: parameterized
      ? {
          Payload: getStr(parameterized, "Payload") || "optional",
          MetaRequired: cloneStrings(parameterized["MetaRequired"]),
          MetaOptional: cloneStrings(parameterized["MetaOptional"]),
        }
      : null,
    Dispatched: false,
    DispatchIdempotencyToken: "",
    Payload: has(api, "Payload") ? getStr(api, "Payload") : null,
    Meta: nonEmptyMap(api["Meta"]),
    ConsulToken: "", // never stored (Job.Register clears it)
    ConsulNamespace: "", // not copied by ApiJobToStructJob; merged into the groups' Consul blocks
    VaultToken: "", // never stored
    VaultNamespace: getStr(api, "VaultNamespace"),
    NomadTokenID: "",
    ...SERVER_FIELDS,
    UI: ui
      ? {
          Description: getStr(ui, "Description"),
          Links: getList(ui, "Links") ? getObjList(ui, "Links").map((l) => ({ Label: getStr(l, "Label"), Url: getStr(l, "Url") })) : null,
        }
      : null,
    VersionTag: versionTag
      ? { Name: getStr(versionTag, "Name"), Description: getStr(versionTag, "Description"), TaggedTime: getNum(versionTag, "TaggedTime") }
      : null,
  };
  for (const tg of (job["TaskGroups"] as Obj[] | null) ?? []) addImpliedConstraints(tg);
  return job;
}

// ---------------------------------------------------------------------------
// Validation (structs.Job.Validate + the job-validate admission hook)

const dur = (ns: number): string => formatGoDuration(BigInt(Math.trunc(ns)));
const goStrings = (list: readonly string[]): string => `[${list.join(" ")}]`;
const goQuotedStrings = (list: readonly string[]): string => `[${list.map(goQuote).join(" ")}]`;

const str = (o: unknown, key: string): string => (isPlainObject(o) && typeof o[key] === "string" ? (o[key] as string) : "");
const num = (o: unknown, key: string): number => (isPlainObject(o) && typeof o[key] === "number" ? (o[key] as number) : 0);
const flag = (o: unknown, key: string): boolean => isPlainObject(o) && o[key] === true;
const block = (o: unknown, key: string): Obj | undefined => (isPlainObject(o) && isPlainObject(o[key]) ? (o[key] as Obj) : undefined);
const items = (o: unknown, key: string): Obj[] => (isPlainObject(o) && Array.isArray(o[key]) ? (o[key] as unknown[]).map((e) => (isPlainObject(e) ? e : {})) : []);
const isSet = (o: unknown, key: string): boolean => isPlainObject(o) && o[key] !== null && o[key] !== undefined;
const nested = (errors: readonly string[]): string => formatMultierror(errors);

function validateConstraint(c: Obj): string[] {
  const errs: string[] = [];
  const operand = str(c, "Operand");
  if (operand === "") errs.push("Missing constraint operand");
  let requireLTarget = true;
  switch (operand) {
    case "distinct_hosts":
      requireLTarget = false;
      break;
    case "set_contains_all":
    case "set_contains_any":
    case "set_contains":
      if (str(c, "RTarget") === "") errs.push("Set contains constraint requires an RTarget");
      break;
    case "regexp":
    case "version":
    case "semver":
      break; // the target expressions are not parsed here
    case "distinct_property": {
      const target = str(c, "RTarget");
      if (target !== "") {
        if (!/^[0-9]+$/.test(target) || BigInt(target) > 2n ** 64n - 1n) {
          const reason = /^[0-9]+$/.test(target) ? "value out of range" : "invalid syntax";
          errs.push(`Failed to convert RTarget ${goQuote(target)} to uint64: strconv.ParseUint: parsing ${goQuote(target)}: ${reason}`);
        } else if (BigInt(target) < 1n) {
          errs.push(`Distinct Property must have an allowed count of 1 or greater: ${target} < 1`);
        }
      }
      break;
    }
    case "is_set":
    case "is_not_set":
      if (str(c, "RTarget") !== "") errs.push(`Operator ${goQuote(operand)} does not support an RTarget`);
      break;
    case "=":
    case "==":
    case "is":
    case "!=":
    case "not":
    case "<":
    case "<=":
    case ">":
    case ">=":
      if (str(c, "RTarget") === "") errs.push(`Operator ${goQuote(operand)} requires an RTarget`);
      break;
    default:
      errs.push(`Unknown constraint type ${goQuote(operand)}`);
  }
  if (requireLTarget && str(c, "LTarget") === "") errs.push("No LTarget provided but is required by constraint");
  return errs;
}

function validateAffinity(a: Obj): string[] {
  const errs: string[] = [];
  const operand = str(a, "Operand");
  if (operand === "") errs.push("Missing affinity operand");
  switch (operand) {
    case "set_contains_all":
    case "set_contains_any":
    case "set_contains":
      if (str(a, "RTarget") === "") errs.push("Set contains operators require an RTarget");
      break;
    case "regexp":
    case "version":
    case "semver":
      break;
    case "=":
    case "==":
    case "is":
    case "!=":
    case "not":
    case "<":
    case "<=":
    case ">":
    case ">=":
      if (str(a, "RTarget") === "") errs.push(`Operator ${goQuote(operand)} requires an RTarget`);
      break;
    default:
      errs.push(`Unknown affinity operator ${goQuote(operand)}`);
  }
  if (str(a, "LTarget") === "") errs.push("No LTarget provided but is required");
  const weight = num(a, "Weight");
  if (weight === 0) errs.push("Affinity weight cannot be zero");
  if (weight > 100 || weight < -100) errs.push("Affinity weight must be within the range [-100,100]");
  return errs;
}

function validateSpread(s: Obj): string[] {
  const errs: string[] = [];
  if (str(s, "Attribute") === "") errs.push("Missing spread attribute");
  const weight = num(s, "Weight");
  if (weight <= 0 || weight > 100) errs.push("Spread block must have a positive weight from 0 to 100");
  const seen = new Set<string>();
  let sum = 0;
  for (const target of items(s, "SpreadTarget")) {
    const value = str(target, "Value");
    if (seen.has(value)) errs.push(`Spread target value ${goQuote(value)} already defined`);
    else seen.add(value);
    const percent = num(target, "Percent");
    if (percent > 100) errs.push(`Spread target percentage for value ${goQuote(value)} must be between 0 and 100`);
    sum += percent;
  }
  if (sum > 100) errs.push(`Sum of spread target percentages must not be greater than 100%; got ${sum}%`);
  return errs;
}

/** Constraints / affinities / spreads of one level, with the system-job rules. */
function validatePlacement(owner: Obj, jobType: string, errs: string[], which: "Constraints" | "Affinities" | "Spreads"): void {
  if (which === "Constraints") {
    items(owner, "Constraints").forEach((c, i) => {
      const inner = validateConstraint(c);
      if (inner.length > 0) errs.push(`Constraint ${i + 1} validation failed: ${nested(inner)}`);
    });
    return;
  }
  if (which === "Affinities") {
    if (jobType === "system") {
      if (isSet(owner, "Affinities")) errs.push("System jobs may not have an affinity block");
      return;
    }
    items(owner, "Affinities").forEach((a, i) => {
      const inner = validateAffinity(a);
      if (inner.length > 0) errs.push(`Affinity ${i + 1} validation failed: ${nested(inner)}`);
    });
    return;
  }
  if (jobType === "system") {
    if (isSet(owner, "Spreads")) errs.push("System jobs may not have a spread block");
    return;
  }
  items(owner, "Spreads").forEach((s, i) => {
    const inner = validateSpread(s);
    if (inner.length > 0) errs.push(`Spread ${i + 1} validation failed: ${nested(inner)}`);
  });
}

function validateUpdate(u: Obj): string[] {
  const errs: string[] = [];
  const healthCheck = str(u, "HealthCheck");
  if (!["checks", "task_states", "manual"].includes(healthCheck)) errs.push(`Invalid health check given: ${goQuote(healthCheck)}`);
  const maxParallel = num(u, "MaxParallel");
  const canary = num(u, "Canary");
  const minHealthy = num(u, "MinHealthyTime");
  const healthyDeadline = num(u, "HealthyDeadline");
  const progressDeadline = num(u, "ProgressDeadline");
  const stagger = num(u, "Stagger");
  if (maxParallel < 0) errs.push(`Max parallel can not be less than zero: ${maxParallel} < 0`);
  if (canary < 0) errs.push(`Canary count can not be less than zero: ${canary} < 0`);
  if (canary === 0 && flag(u, "AutoPromote")) errs.push("Auto Promote requires a Canary count greater than zero");
  if (minHealthy < 0) errs.push(`Minimum healthy time may not be less than zero: ${dur(minHealthy)}`);
  if (healthyDeadline <= 0) errs.push(`Healthy deadline must be greater than zero: ${dur(healthyDeadline)}`);
  if (progressDeadline < 0) errs.push(`Progress deadline must be zero or greater: ${dur(progressDeadline)}`);
  if (minHealthy >= healthyDeadline) {
    errs.push(`Minimum healthy time must be less than healthy deadline: ${dur(minHealthy)} > ${dur(healthyDeadline)}`);
  }
  if (progressDeadline !== 0 && healthyDeadline >= progressDeadline) {
    errs.push(`Healthy deadline must be less than progress deadline: ${dur(healthyDeadline)} > ${dur(progressDeadline)}`);
  }
  if (stagger <= 0) errs.push(`Stagger must be greater than zero: ${dur(stagger)}`);
  return errs;
}

function validateRestart(r: Obj): string[] {
  const errs: string[] = [];
  const mode = str(r, "Mode");
  const attempts = num(r, "Attempts");
  const interval = num(r, "Interval");
  const delay = num(r, "Delay");
  if (mode !== "delay" && mode !== "fail") errs.push(`Unsupported restart mode: ${goQuote(mode)}`);
  if (attempts === 0 && mode !== "fail") errs.push(`Restart policy ${goQuote(mode)} with ${attempts} attempts is ambiguous`);
  if (interval < 5 * SECOND) errs.push(`Interval can not be less than ${dur(5 * SECOND)} (got ${dur(interval)})`);
  if (attempts * delay > interval) {
    errs.push(`Nomad can't restart the TaskGroup ${attempts} times in an interval of ${dur(interval)} with a delay of ${dur(delay)}`);
  }
  return errs;
}

const DELAY_FUNCTIONS = ["constant", "exponential", "fibonacci"] as const;

/** Go's Duration.Round(time.Second): halfway values round away from zero. */
function roundToSecond(ns: number): number {
  const q = Math.trunc(ns / SECOND);
  const r = ns - q * SECOND;
  if (Math.abs(r) * 2 >= SECOND) return (q + Math.sign(ns)) * SECOND;
  return q * SECOND;
}

function viableAttempts(r: Obj): { valid: boolean; possible: number; recommended: number } {
  const attempts = num(r, "Attempts");
  const interval = num(r, "Interval");
  const delay = num(r, "Delay");
  const maxDelay = num(r, "MaxDelay");
  let possible = 0;
  let recommended = 0;
  let valid = true;
  switch (str(r, "DelayFunction")) {
    case "constant":
      recommended = attempts * delay;
      if (interval < recommended) {
        possible = Math.trunc(interval / delay);
        valid = false;
      }
      break;
    case "exponential":
      for (let i = 0; i < attempts; i++) {
        let next = 2 ** i * delay;
        if (next > maxDelay) {
          next = maxDelay;
          recommended += next;
        } else {
          recommended = next;
        }
        if (recommended < interval) possible++;
      }
      if (possible < attempts) valid = false;
      break;
    case "fibonacci": {
      const slots = [delay, delay];
      let reachedCeiling = false;
      for (let i = 2; i < attempts; i++) {
        let next: number;
        if (reachedCeiling) next = (slots[i - 1] ?? 0) + maxDelay;
        else {
          next = (slots[i - 1] ?? 0) + (slots[i - 2] ?? 0);
          if (next > maxDelay) {
            next = maxDelay;
            reachedCeiling = true;
          }
        }
        slots.push(next);
      }
      recommended = slots[slots.length - 1] ?? 0;
      if (interval < recommended) {
        valid = false;
        for (let i = 0; i < slots.length; i++) {
          if ((slots[i] ?? 0) > interval) {
            possible = i;
            break;
          }
        }
      }
      break;
    }
    default:
      return { valid: false, possible: 0, recommended: 0 };
  }
  return { valid, possible: Math.max(0, possible), recommended };
}

function validateReschedule(r: Obj): string[] {
  const attempts = num(r, "Attempts");
  const unlimited = flag(r, "Unlimited");
  if (!(attempts > 0 || unlimited)) return [];
  const errs: string[] = [];
  const interval = num(r, "Interval");
  const delay = num(r, "Delay");
  const maxDelay = num(r, "MaxDelay");
  const fn = str(r, "DelayFunction");
  if (attempts > 0) {
    if (interval <= 0) errs.push("Interval must be a non zero value if Attempts > 0");
    if (unlimited) {
      errs.push(`Reschedule Policy with Attempts = ${attempts}, Interval = ${dur(interval)}, and Unlimited = ${unlimited} is ambiguous`);
      errs.push("If Attempts >0, Unlimited cannot also be set to true");
    }
  }
  let delayPreCheck = true;
  if (delay < 5 * SECOND) {
    errs.push(`Delay cannot be less than ${dur(5 * SECOND)} (got ${dur(delay)})`);
    delayPreCheck = false;
  }
  if (!(DELAY_FUNCTIONS as readonly string[]).includes(fn)) {
    errs.push(`Invalid delay function ${goQuote(fn)}, must be one of ${goQuotedStrings(DELAY_FUNCTIONS)}`);
    delayPreCheck = false;
  }
  if (fn !== "constant") {
    if (maxDelay < 5 * SECOND) {
      // Nomad prints the delay here, not the max delay.
      errs.push(`Max Delay cannot be less than ${dur(5 * SECOND)} (got ${dur(delay)})`);
      delayPreCheck = false;
    }
    if (maxDelay < delay) {
      errs.push(`Max Delay cannot be less than Delay ${dur(delay)} (got ${dur(maxDelay)})`);
      delayPreCheck = false;
    }
  }
  if (!unlimited) {
    if (interval < 15 * SECOND) errs.push(`Interval cannot be less than ${dur(15 * SECOND)} (got ${dur(interval)})`);
    if (!delayPreCheck) return errs;
    const { valid, possible, recommended } = viableAttempts(r);
    if (!valid) {
      if (fn === "constant") {
        errs.push(`Nomad can only make ${possible} attempts in ${dur(interval)} with initial delay ${dur(delay)} and delay function ${goQuote(fn)}`);
      } else {
        errs.push(
          `Nomad can only make ${possible} attempts in ${dur(interval)} with initial delay ${dur(delay)}, delay function ${goQuote(fn)}, and delay ceiling ${dur(maxDelay)}`,
        );
      }
      errs.push(`Set the interval to at least ${dur(roundToSecond(recommended))} to accommodate ${attempts} attempts`);
    }
  }
  return errs;
}

function validateMigrate(m: Obj): string[] {
  const errs: string[] = [];
  const maxParallel = num(m, "MaxParallel");
  const healthCheck = str(m, "HealthCheck");
  const minHealthy = num(m, "MinHealthyTime");
  const deadline = num(m, "HealthyDeadline");
  if (maxParallel < 0) errs.push(`MaxParallel must be >= 0 but found ${maxParallel}`);
  if (healthCheck === "") {
    if (maxParallel > 0) errs.push("Missing HealthCheck");
  } else if (healthCheck !== "checks" && healthCheck !== "task_states") {
    errs.push(`Invalid HealthCheck: ${goQuote(healthCheck)}`);
  }
  if (minHealthy < 0) errs.push(`MinHealthyTime is ${dur(minHealthy)} and must be >= 0`);
  if (deadline < 0) errs.push(`HealthyDeadline is ${dur(deadline)} and must be >= 0`);
  if (minHealthy > deadline) errs.push("MinHealthyTime must be less than HealthyDeadline");
  return errs;
}

function validateDisconnect(d: Obj, jobType: string): string[] {
  const errs: string[] = [];
  const stopAfter = isSet(d, "StopOnClientAfter");
  if (stopAfter) {
    if (num(d, "StopOnClientAfter") < 0) errs.push("stop_after cannot be a negative duration");
    if (jobType !== "service" && jobType !== "batch") errs.push("stop_after can only be used with service or batch job types");
  }
  if (num(d, "LostAfter") < 0) errs.push("lost_after cannot be a negative duration");
  if (stopAfter && num(d, "LostAfter") !== 0) {
    errs.push("Disconnect cannot be configured with both lost_after and stop_after");
    return errs;
  }
  const reconcile = str(d, "Reconcile");
  if (!["", "best_score", "longest_running", "keep_original", "keep_replacement"].includes(reconcile)) {
    errs.push(`reconcile option is invalid: ${reconcile}`);
  }
  return errs;
}

/** escapingfs.PathEscapesAllocViaRelative: does prefix/path leave the allocation directory? */
function escapesAllocDir(prefix: string, path: string): boolean {
  const allocDir = "/alloc-dir/alloc-id";
  const joined = pathJoin(allocDir, prefix, path);
  return !(joined === allocDir || joined.startsWith(`${allocDir}/`));
}

const SERVICE_NAME = /^(?:[a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$/i;
const ENV_REFERENCE = /\$\{[^}]*\}/g;

function validateCheck(check: Obj, provider: string): string | null {
  const type = str(check, "Type").toLowerCase();
  const allowed = provider === "nomad" ? ["tcp", "http"] : ["grpc", "tcp", "http", "script"];
  if (!allowed.includes(type)) return `invalid check type (${goQuote(type)}), must be one of ${allowed.join(", ")}`;
  if (type === "http") {
    const path = str(check, "Path");
    if (path === "") return "http type must have http path";
    if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return "http type must have relative http path";
  } else if (type === "script" && str(check, "Command") === "") {
    return "script type must have a valid script path";
  }
  const interval = num(check, "Interval");
  if (interval === 0) return `missing required value interval. Interval cannot be less than ${dur(SECOND)}`;
  if (interval < SECOND) return `interval (${dur(interval)}) cannot be lower than ${dur(SECOND)}`;
  const timeout = num(check, "Timeout");
  if (timeout === 0) return `missing required value timeout. Timeout cannot be less than ${dur(SECOND)}`;
  if (timeout < SECOND) return `timeout (${dur(timeout)}) is lower than required minimum timeout ${dur(SECOND)}`;
  const initial = str(check, "InitialStatus");
  if (!["", "passing", "warning", "critical"].includes(initial)) {
    return `invalid initial check state (${initial}), must be one of "passing", "warning", "critical" or empty`;
  }
  const addressMode = str(check, "AddressMode");
  if (addressMode === "auto") return `invalid address_mode ${goQuote(addressMode)} - auto only valid for services`;
  if (!["", "host", "driver", "alloc"].includes(addressMode)) return `invalid address_mode ${goQuote(addressMode)}`;
  const onUpdate = str(check, "OnUpdate");
  if (!["", "ignore", "require_healthy", "ignore_warnings"].includes(onUpdate)) {
    return `on_update must be "require_healthy", "ignore_warnings", or "ignore"; got ${goQuote(onUpdate)}`;
  }
  return null;
}

/** structs.Service.Validate (name, address mode, on_update, provider, checks). */
function validateService(svc: Obj): string[] {
  const errs: string[] = [];
  const name = str(svc, "Name");
  if (!SERVICE_NAME.test(name.replace(ENV_REFERENCE, "ENV-VAR"))) {
    errs.push(
      `Service name must be valid per RFC 1123 and can contain only alphanumeric characters or dashes and must be no longer than 63 characters: ${goQuote(name)}`,
    );
  }
  const addressMode = str(svc, "AddressMode");
  if (["host", "driver", "alloc"].includes(addressMode)) {
    if (str(svc, "Address") !== "") errs.push(`Service address_mode must be "auto" if address is set`);
  } else if (addressMode !== "" && addressMode !== "auto") {
    errs.push(`Service address_mode must be "auto", "host", or "driver"; not ${goQuote(addressMode)}`);
  }
  const onUpdate = str(svc, "OnUpdate");
  if (!["", "ignore", "require_healthy", "ignore_warnings"].includes(onUpdate)) {
    errs.push(`Service on_update must be "require_healthy", "ignore_warnings", or "ignore"; not ${goQuote(onUpdate)}`);
  }
  const provider = str(svc, "Provider");
  if (provider !== "consul" && provider !== "nomad") {
    errs.push(`Service provider must be "consul", or "nomad"; not ${goQuote(provider)}`);
    return errs;
  }
  for (const check of items(svc, "Checks")) {
    const checkName = str(check, "Name");
    const type = str(check, "Type");
    if (str(svc, "PortLabel") === "" && str(check, "PortLabel") === "" && ["grpc", "http", "tcp"].includes(type)) {
      errs.push(`Check ${checkName} invalid: check requires a port but neither check nor service ${goQuote(name)} have a port`);
      continue;
    }
    const problem = validateCheck(check, provider);
    if (problem !== null) errs.push(provider === "consul" ? `Check ${checkName} invalid: ${problem}` : problem);
  }
  if (provider === "nomad" && isSet(svc, "Connect")) errs.push("Service with provider nomad cannot include Connect blocks");
  return errs;
}

function portLabelsOf(network: Obj): string[] {
  return [...items(network, "ReservedPorts"), ...items(network, "DynamicPorts")].map((p) => str(p, "Label"));
}

function validateGroupNetworks(tg: Obj): string[] {
  const errs: string[] = [];
  const labels = new Map<string, string>();
  const staticPorts = new Map<string, Map<number, string>>();
  for (const network of items(tg, "Networks")) {
    const mode = str(network, "Mode");
    for (const p of [...items(network, "ReservedPorts"), ...items(network, "DynamicPorts")]) {
      const label = str(p, "Label");
      const other = labels.get(label);
      if (other !== undefined) errs.push(`Port label ${label} already in use by ${other}`);
      else labels.set(label, "taskgroup network");
      const value = num(p, "Value");
      if (value !== 0) {
        const hostNetwork = str(p, "HostNetwork") || "default";
        const used = staticPorts.get(hostNetwork) ?? new Map<number, string>();
        const owner = used.get(value);
        if (owner !== undefined) {
          if (!flag(p, "IgnoreCollision")) errs.push(`Static port ${value} already reserved by ${owner}`);
        } else if (value > 65535) {
          errs.push(`Port ${label} (${value}) cannot be greater than 65535`);
        } else {
          used.set(value, `taskgroup network:${label}`);
          staticPorts.set(hostNetwork, used);
        }
      }
      const to = num(p, "To");
      if (to < -1) errs.push(`Port ${goQuote(label)} cannot be mapped to negative value ${to}`);
      else if (to > 65535) errs.push(`Port ${goQuote(label)} cannot be mapped to a port (${to}) greater than 65535`);
      if (flag(p, "IgnoreCollision") && !(mode === "" || mode === "host")) {
        errs.push(`Port ${goQuote(label)} collision may not be ignored on non-host network mode ${goQuote(mode)}`);
      }
    }
  }
  for (const task of items(tg, "Tasks")) {
    for (const network of items(block(task, "Resources"), "Networks")) {
      for (const p of [...items(network, "ReservedPorts"), ...items(network, "DynamicPorts")]) {
        const label = str(p, "Label");
        const other = labels.get(label);
        if (other !== undefined) errs.push(`Port label ${label} already in use by ${other}`);
        const value = num(p, "Value");
        if (value !== 0) {
          const hostNetwork = str(p, "HostNetwork") || "default";
          const used = staticPorts.get(hostNetwork) ?? new Map<number, string>();
          const owner = used.get(value);
          if (owner !== undefined) errs.push(`Static port ${value} already reserved by ${owner}`);
          else if (value > 65535) errs.push(`Port ${label} (${value}) cannot be greater than 65535`);
          else {
            used.set(value, `${str(task, "Name")}:${label}`);
            staticPorts.set(hostNetwork, used);
          }
        }
      }
    }
  }
  return errs;
}

function validateGroupServices(tg: Obj): string[] {
  const errs: string[] = [];
  const taskNames = new Set(items(tg, "Tasks").map((t) => str(t, "Name")));
  const providers = new Set<string>();
  for (const task of items(tg, "Tasks")) {
    for (const svc of items(task, "Services")) {
      const taskName = str(svc, "TaskName");
      if (taskName !== "" && taskName !== str(task, "Name")) {
        errs.push(`Service ${str(svc, "Name")} is invalid: may only specify task the service belongs to, got ${goQuote(taskName)}`);
      }
      for (const check of items(svc, "Checks")) {
        const checkTask = str(check, "TaskName");
        if (checkTask !== "" && checkTask !== str(task, "Name")) {
          errs.push(`Check ${str(check, "Name")} is invalid: may only specify task the check belongs to, got ${goQuote(checkTask)}`);
        }
      }
      providers.add(str(svc, "Provider"));
    }
  }
  items(tg, "Services").forEach((svc, i) => {
    providers.add(str(svc, "Provider"));
    const inner = validateService(svc);
    if (inner.length > 0) {
      errs.push(`Service[${i}] ${str(svc, "Name")} validation failed: ${nested(inner)}`);
      return;
    }
    if (str(svc, "AddressMode") === "driver") {
      errs.push(`service ${goQuote(str(svc, "Name"))} cannot use address_mode="driver", only services defined in a "task" block can use this mode`);
    }
    for (const check of items(svc, "Checks")) {
      const checkTask = str(check, "TaskName");
      if (checkTask === "") continue;
      if (str(check, "AddressMode") === "driver") {
        errs.push(`Check ${goQuote(str(svc, "Name"))} invalid: cannot use address_mode="driver", only checks defined in a "task" service block can use this mode`);
      }
      if (!taskNames.has(checkTask)) errs.push(`Check ${str(check, "Name")} invalid: refers to non-existent task ${checkTask}`);
    }
  });
  if (providers.size > 1) errs.push("Multiple service providers used: task group services must use the same provider");
  return errs;
}

function validateTaskServices(task: Obj, tg: Obj): string[] {
  const errs: string[] = [];
  const servicePorts = new Map<string, Set<string>>();
  const addPort = (label: string, service: string): void => {
    const set = servicePorts.get(label) ?? new Set<string>();
    set.add(service);
    servicePorts.set(label, set);
  };
  const known = new Set<string>();
  items(task, "Services").forEach((svc, i) => {
    const name = str(svc, "Name");
    const inner = validateService(svc);
    if (inner.length > 0) errs.push(`service[${i}] ${goQuote(name)} validation failed: ${nested(inner)}`);
    if (str(svc, "AddressMode") === "alloc") {
      errs.push(`service ${goQuote(name)} cannot use address_mode="alloc", only services defined in a "group" block can use this mode`);
    }
    const portLabel = str(svc, "PortLabel");
    if (known.has(name + portLabel)) errs.push(`service ${goQuote(name)} is duplicate`);
    known.add(name + portLabel);
    if (portLabel !== "" && !(str(svc, "AddressMode") === "driver" && /^[+-]?[0-9]+$/.test(portLabel))) addPort(portLabel, name);
    if (isSet(svc, "Connect")) errs.push(`service ${goQuote(name)} cannot have "connect" block, only services defined in a "group" block can`);
    const checkNames = new Set<string>();
    for (const check of items(svc, "Checks")) {
      const checkName = str(check, "Name");
      if (checkNames.has(checkName)) errs.push(`check ${goQuote(checkName)} is duplicate`);
      checkNames.add(checkName);
      if (str(check, "AddressMode") === "alloc") {
        errs.push(`check ${goQuote(name)} cannot use address_mode="alloc", only checks defined in a "group" service block can use this mode`);
      }
      if (!["grpc", "http", "tcp"].includes(str(check, "Type"))) continue;
      const effective = str(check, "PortLabel") || portLabel;
      if (effective === "") {
        errs.push(`check ${goQuote(checkName)} is missing a port`);
        continue;
      }
      if (/^[+-]?[0-9]+$/.test(effective)) {
        const portNumber = Number(effective);
        if (str(check, "AddressMode") === "driver") {
          if (portNumber <= 0) errs.push(`check ${goQuote(checkName)} has invalid numeric port ${portNumber}`);
        } else {
          errs.push(`check ${goQuote(checkName)} cannot use a numeric port ${portNumber} without setting address_mode="driver"`);
        }
        continue;
      }
      addPort(effective, name);
    }
  });
  const labels = new Set<string>();
  const firstNetwork = items(tg, "Networks")[0];
  if (firstNetwork) for (const label of portLabelsOf(firstNetwork)) labels.add(label);
  for (const network of items(block(task, "Resources"), "Networks")) for (const label of portLabelsOf(network)) labels.add(label);
  for (const label of [...servicePorts.keys()].sort()) {
    if (labels.has(label)) continue;
    const names = [...(servicePorts.get(label) ?? [])].sort();
    errs.push(`port label ${goQuote(label)} referenced by services ${names.join(", ")} does not exist`);
  }
  return errs;
}

const IDENTITY_NAME = /^[a-zA-Z0-9-_]{1,128}$/;

function validateIdentity(wid: Obj): string[] {
  const errs: string[] = [];
  const name = str(wid, "Name");
  if (!IDENTITY_NAME.test(name)) errs.push(`invalid name ${goQuote(name)}. Must match regex ^[a-zA-Z0-9-_]{1,128}$`);
  const audience = isPlainObject(wid) && Array.isArray(wid["Audience"]) ? (wid["Audience"] as unknown[]) : [];
  audience.forEach((aud, i) => {
    if (aud === "") errs.push(`an empty string is an invalid audience (${i + 1})`);
  });
  const changeMode = str(wid, "ChangeMode");
  const changeSignal = str(wid, "ChangeSignal");
  if (changeMode === "" || changeMode === "noop" || changeMode === "restart") {
    if (changeSignal !== "") errs.push(`can only use change_signal=${goQuote(changeSignal)} with change_mode="signal"`);
  } else if (changeMode === "signal") {
    if (changeSignal === "") errs.push(`change_signal must be specified when using change_mode="signal"`);
  } else {
    errs.push(`invalid change_mode: ${changeMode}`);
  }
  const ttl = num(wid, "TTL");
  if (ttl > 0 && (name === "" || name === "default")) errs.push("ttl for default identity not yet supported");
  if (ttl < 0) errs.push("ttl must be >= 0");
  return errs;
}

function validateArtifact(a: Obj): string[] {
  const errs: string[] = [];
  if (str(a, "GetterSource") === "") errs.push("source must be specified");
  const mode = str(a, "GetterMode");
  if (!["", "any", "file", "dir"].includes(mode)) errs.push(`invalid artifact mode ${goQuote(mode)}; must be one of: any, file, dir`);
  if (escapesAllocDir("task", str(a, "RelativeDest"))) errs.push("destination escapes allocation directory");
  const options = block(a, "GetterOptions");
  const checksum = options?.["checksum"];
  if (typeof checksum === "string" && !/\$\{[^}]*\}/.test(checksum)) {
    const check = checksum.trim();
    const parts = check.split(":");
    if (check === "") errs.push("checksum value cannot be empty");
    else if (parts.length !== 2) errs.push(`checksum must be given as "type:value"; got ${goQuote(check)}`);
    else {
      const [kind = "", value = ""] = parts;
      const lengths: Record<string, number> = { md5: 16, sha1: 20, sha256: 32, sha512: 64 };
      if (!/^([0-9a-fA-F]{2})*$/.test(value)) errs.push("invalid checksum: encoding/hex: invalid byte");
      else if (lengths[kind] === undefined) errs.push(`unsupported checksum type: ${kind}`);
      else if (value.length / 2 !== lengths[kind]) errs.push(`invalid ${kind} checksum: ${value}`);
    }
  }
  return errs;
}

function validateTask(task: Obj, tg: Obj, jobType: string): string[] {
  const errs: string[] = [];
  const name = str(task, "Name");
  if (name === "") errs.push("Missing task name");
  if (/[/\\]/.test(name)) errs.push("Task name cannot include slashes");
  else if (name.includes("\0")) errs.push("Task name cannot include null characters");
  if (str(task, "Driver") === "") errs.push("Missing task driver");
  const killTimeout = num(task, "KillTimeout");
  if (killTimeout < 0) errs.push("KillTimeout must be a positive value");
  else {
    const update = block(tg, "Update");
    const progressDeadline = num(update, "ProgressDeadline");
    if (jobType === "service" && update && progressDeadline > 0 && killTimeout > progressDeadline) {
      errs.push(`KillTimout (${dur(killTimeout)}) longer than the group's ProgressDeadline (${dur(progressDeadline)})`);
    }
  }
  if (num(task, "ShutdownDelay") < 0) errs.push("ShutdownDelay must be a positive value");

  const resources = block(task, "Resources");
  if (!resources) errs.push("Missing task resources");
  else {
    const inner: string[] = [];
    const cpu = num(resources, "CPU");
    const cores = num(resources, "Cores");
    const memory = num(resources, "MemoryMB");
    const memoryMax = num(resources, "MemoryMaxMB");
    if (cores > 0 && cpu > 0) inner.push("Task can only ask for 'cpu' or 'cores' resource, not both.");
    const minimum: string[] = [];
    if (cpu < 1 && cores === 0) minimum.push(`minimum CPU value is 1; got ${cpu}`);
    if (memory < 10) minimum.push(`minimum MemoryMB value is 10; got ${memory}`);
    if (minimum.length > 0) inner.push(nested(minimum));
    if (num(resources, "DiskMB") > 0) inner.push("Task can't ask for disk resources, they have to be specified at the task group level.");
    const numa = block(resources, "NUMA");
    if (numa && !["none", "prefer", "require"].includes(str(numa, "Affinity"))) inner.push("numa affinity must be one of none, prefer, or require");
    if (memoryMax !== 0 && memoryMax !== -1 && memoryMax < memory) {
      inner.push(`MemoryMaxMB value (${memoryMax}) should be larger than MemoryMB value (${memory})`);
    }
    if (inner.length > 0) errs.push(nested(inner));
  }

  const logConfig = block(task, "LogConfig");
  if (!logConfig) errs.push("Missing Log Config");
  else {
    const inner: string[] = [];
    const files = num(logConfig, "MaxFiles");
    const size = num(logConfig, "MaxFileSizeMB");
    if (files < 1) inner.push(`minimum number of files is 1; got ${files}`);
    if (size < 1) inner.push(`minimum file size is 1MB; got ${size}`);
    const disk = block(tg, "EphemeralDisk");
    if (disk && num(disk, "SizeMB") <= files * size) {
      inner.push(`log storage (${files * size} MB) must be less than requested disk capacity (${num(disk, "SizeMB")} MB)`);
    }
    if (inner.length > 0) errs.push(nested(inner));
  }

  items(task, "Constraints").forEach((c, i) => {
    const inner = validateConstraint(c);
    if (inner.length > 0) errs.push(`Constraint ${i + 1} validation failed: ${nested(inner)}`);
    const operand = str(c, "Operand");
    if (operand === "distinct_hosts" || operand === "distinct_property") errs.push(`Constraint ${i + 1} has disallowed Operand at task level: ${operand}`);
  });
  validatePlacement(task, jobType, errs, "Affinities");

  const serviceErrs = validateTaskServices(task, tg);
  if (serviceErrs.length > 0) errs.push(nested(serviceErrs));

  items(task, "Artifacts").forEach((a, i) => {
    const inner = validateArtifact(a);
    if (inner.length > 0) errs.push(`Artifact ${i + 1} validation failed: ${nested(inner)}`);
  });

  const vault = block(task, "Vault");
  if (vault) {
    const inner: string[] = [];
    for (const policy of isPlainObject(vault) && Array.isArray(vault["Policies"]) ? (vault["Policies"] as unknown[]) : []) {
      if (policy === "root") inner.push(`Can not specify "root" policy`);
    }
    const mode = str(vault, "ChangeMode");
    if (mode === "signal") {
      if (str(vault, "ChangeSignal") === "") inner.push(`Signal must be specified when using change mode "signal"`);
    } else if (mode !== "noop" && mode !== "restart") {
      inner.push(`Unknown change mode ${goQuote(mode)}`);
    }
    if (inner.length > 0) errs.push(`Vault validation failed: ${nested(inner)}`);
  }

  // Templates: only the basic shape is checked (unverified texts beyond these).
  const destinations = new Map<string, number>();
  items(task, "Templates").forEach((tmpl, i) => {
    const inner: string[] = [];
    if (str(tmpl, "SourcePath") === "" && str(tmpl, "EmbeddedTmpl") === "") inner.push("Must specify a source path or have an embedded template");
    if (str(tmpl, "DestPath") === "") inner.push("Must specify a destination for the template");
    if (num(tmpl, "Splay") < 0) inner.push("Must specify positive splay value");
    if (inner.length > 0) errs.push(`Template ${i + 1} validation failed: ${nested(inner)}`);
    const dest = str(tmpl, "DestPath");
    const other = destinations.get(dest);
    if (other !== undefined) errs.push(`Template ${i + 1} has same destination as ${other}`);
    else destinations.set(dest, i + 1);
  });

  const seenActions = new Map<string, boolean>();
  for (const action of items(task, "Actions")) {
    const actionName = str(action, "Name");
    const handled = seenActions.get(actionName);
    if (handled === false) {
      errs.push(`Action ${actionName} defined multiple times`);
      seenActions.set(actionName, true);
      continue;
    }
    if (handled === undefined) seenActions.set(actionName, false);
  }

  const dispatch = block(task, "DispatchPayload");
  if (dispatch && escapesAllocDir("task/local/", str(dispatch, "File"))) {
    errs.push("Dispatch Payload validation failed: destination escapes allocation directory");
  }

  const lifecycle = block(task, "Lifecycle");
  if (lifecycle) {
    const hook = str(lifecycle, "Hook");
    if (hook === "") errs.push("Lifecycle validation failed: no lifecycle hook provided");
    else if (!["prestart", "poststart", "poststop"].includes(hook)) errs.push(`Lifecycle validation failed: invalid hook: ${hook}`);
  }

  const volumes = block(tg, "Volumes") ?? {};
  items(task, "VolumeMounts").forEach((vm, i) => {
    const volume = str(vm, "Volume");
    if (!Object.prototype.hasOwnProperty.call(volumes, volume)) errs.push(`Volume Mount (${i}) references undefined volume ${volume}`);
  });

  const identity = block(task, "Identity");
  if (identity) {
    const inner = validateIdentity(identity);
    if (inner.length > 0) errs.push(`Identity ${goQuote(str(identity, "Name"))} is invalid: ${nested(inner)}`);
  }
  for (const wid of items(task, "Identities")) {
    if (str(wid, "Name") === "default") errs.push("Duplicate default identities found");
    const inner = validateIdentity(wid);
    if (inner.length > 0) errs.push(`Identity ${goQuote(str(wid, "Name"))} is invalid: ${nested(inner)}`);
  }
  return errs;
}

function validateGroup(tg: Obj, job: Obj): string[] {
  const jobType = str(job, "Type");
  const errs: string[] = [];
  const name = str(tg, "Name");
  if (name === "") errs.push("Missing task group name");
  else if (name.includes("\0")) errs.push("Task group name contains null character");
  const count = num(tg, "Count");
  if (count < 0) errs.push("Task group count can't be negative");
  if (items(tg, "Tasks").length === 0) errs.push("Missing tasks for task group");
  const maxClientDisconnect = isSet(tg, "MaxClientDisconnect");
  const stopAfterClientDisconnect = isSet(tg, "StopAfterClientDisconnect");
  if (maxClientDisconnect && stopAfterClientDisconnect) {
    errs.push("Task group cannot be configured with both max_client_disconnect and stop_after_client_disconnect");
  }
  if (maxClientDisconnect && num(tg, "MaxClientDisconnect") < 0) errs.push("max_client_disconnect cannot be negative");
  const disconnect = block(tg, "Disconnect");
  if (disconnect) {
    // These three end the group's validation early, as in Nomad.
    if (maxClientDisconnect && num(disconnect, "LostAfter") > 0) return [...errs, "using both lost_after and max_client_disconnect is not allowed"];
    if (stopAfterClientDisconnect && isSet(disconnect, "StopOnClientAfter")) {
      return [...errs, "using both stop_after_client_disconnect and stop_on_client_after is not allowed"];
    }
    if (flag(tg, "PreventRescheduleOnLost") && isSet(disconnect, "Replace")) {
      return [...errs, "using both prevent_reschedule_on_lost and replace is not allowed"];
    }
    errs.push(...validateDisconnect(disconnect, jobType));
  }

  validatePlacement(tg, jobType, errs, "Constraints");
  validatePlacement(tg, jobType, errs, "Affinities");

  const restart = block(tg, "RestartPolicy");
  if (restart) errs.push(...validateRestart(restart));
  else errs.push(`Task Group ${name} should have a restart policy`);

  validatePlacement(tg, jobType, errs, "Spreads");

  const reschedule = block(tg, "ReschedulePolicy");
  if (jobType === "system") {
    if (reschedule) errs.push("System jobs should not have a reschedule policy");
  } else if (reschedule) errs.push(...validateReschedule(reschedule));
  else errs.push(`Task Group ${name} should have a reschedule policy`);

  const disk = block(tg, "EphemeralDisk");
  if (disk) {
    if (num(disk, "SizeMB") < 10) errs.push(`minimum DiskMB value is 10; got ${num(disk, "SizeMB")}`);
  } else errs.push(`Task Group ${name} should have an ephemeral disk object`);

  const update = block(tg, "Update");
  if (update) {
    if (jobType !== "service" && jobType !== "system") errs.push(`Job type ${goQuote(jobType)} does not allow update block`);
    errs.push(...validateUpdate(update));
  }

  const migrate = block(tg, "Migrate");
  if (jobType === "service") {
    if (migrate) errs.push(...validateMigrate(migrate));
  } else if (migrate) errs.push(`Job type ${goQuote(jobType)} does not allow migrate block`);

  const taskIndex = new Map<string, number>();
  let leaders = 0;
  items(tg, "Tasks").forEach((task, i) => {
    const taskName = str(task, "Name");
    if (taskName === "") errs.push(`Task ${i + 1} missing name`);
    else if (taskIndex.has(taskName)) errs.push(`Task ${i + 1} redefines '${taskName}' from task ${(taskIndex.get(taskName) ?? 0) + 1}`);
    else taskIndex.set(taskName, i);
    if (flag(task, "Leader")) leaders++;
  });
  if (leaders > 1) errs.push("Only one task may be marked as leader");

  const networkErrs = validateGroupNetworks(tg);
  if (networkErrs.length > 0) errs.push(`Task group network validation failed: ${nested(networkErrs)}`);
  const serviceErrs = validateGroupServices(tg);
  if (serviceErrs.length > 0) errs.push(`Task group service validation failed: ${nested(serviceErrs)}`);

  const scriptErrs: string[] = [];
  for (const svc of items(tg, "Services")) {
    if (str(svc, "TaskName") !== "") continue;
    for (const check of items(svc, "Checks")) {
      if (str(check, "Type") === "script" && str(check, "TaskName") === "") {
        scriptErrs.push(`Service [${name}]->${str(svc, "Name")} or Check ${str(check, "Name")} must specify task parameter`);
      }
    }
  }
  if (scriptErrs.length > 0) errs.push(`Task group service check validation failed: ${nested(scriptErrs)}`);

  const scaling = block(tg, "Scaling");
  if (scaling) {
    const inner: string[] = [];
    const min = num(scaling, "Min");
    const max = num(scaling, "Max");
    if (str(scaling, "Type") === "") inner.push("Scaling policy invalid: missing scaling policy type");
    if (max < 0) inner.push("Scaling policy invalid: maximum count must be specified and non-negative");
    else if (max < min) inner.push("Scaling policy invalid: maximum count must not be less than minimum count");
    if (min < 0) inner.push("Scaling policy invalid: minimum count must be specified and non-negative");
    if (max < count) inner.push("Scaling policy invalid: task group count must not be greater than maximum count in scaling policy");
    if (count < min) inner.push("Scaling policy invalid: task group count must not be less than minimum count in scaling policy");
    if (inner.length > 0) errs.push(`Task group scaling policy validation failed: ${nested(inner)}`);
  }

  for (const task of items(tg, "Tasks")) {
    const inner = validateTask(task, tg, jobType);
    if (inner.length > 0) errs.push(`Task ${str(task, "Name")} validation failed: ${nested(inner)}`);
  }
  return errs;
}

function isValidTimeZone(zone: string): boolean {
  if (zone === "" || zone === "UTC" || zone === "Local") return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** structs.Job.Validate, in Nomad's order. */
function validateJobStruct(job: Obj): string[] {
  const errs: string[] = [];
  const jobType = str(job, "Type");
  if (str(job, "Region") === "" && !isSet(job, "Multiregion")) errs.push("Missing job region");
  const id = str(job, "ID");
  if (id === "") errs.push("Missing job ID");
  else if (id.includes(" ")) errs.push("Job ID contains a space");
  else if (id.includes("\0")) errs.push("Job ID contains a null character");
  const name = str(job, "Name");
  if (name === "") errs.push("Missing job name");
  else if (name.includes("\0")) errs.push("Job Name contains a null character");
  if (str(job, "Namespace") === "") errs.push("Job must be in a namespace");
  switch (jobType) {
    case "_core":
    case "service":
    case "batch":
    case "system":
    case "sysbatch":
      break;
    case "":
      errs.push("Missing job type");
      break;
    default:
      errs.push(`Invalid job type: ${goQuote(jobType)}`);
  }
  const multiregionRegions = items(block(job, "Multiregion"), "Regions");
  const datacenters = isPlainObject(job) && Array.isArray(job["Datacenters"]) ? (job["Datacenters"] as unknown[]) : [];
  if (datacenters.length === 0 && multiregionRegions.length === 0) errs.push("Missing job datacenters");
  else for (const dc of datacenters) if (dc === "") errs.push("Job datacenter must be non-empty string");
  const groups = items(job, "TaskGroups");
  if (groups.length === 0) errs.push("Missing job task groups");
  validatePlacement(job, jobType, errs, "Constraints");
  validatePlacement(job, jobType, errs, "Affinities");
  validatePlacement(job, jobType, errs, "Spreads");
  const uiDescription = str(block(job, "UI"), "Description");
  if (uiDescription.length > 1000) errs.push(`UI description must be under 1000 characters, currently ${uiDescription.length}`);
  const tagDescription = str(block(job, "VersionTag"), "Description");
  if (tagDescription.length > 1000) errs.push(`Tagged version description must be under 1000 characters, currently ${tagDescription.length}`);

  const seen = new Map<string, number>();
  groups.forEach((tg, i) => {
    const tgName = str(tg, "Name");
    if (tgName === "") errs.push(`Job task group ${i + 1} missing name`);
    else if (seen.has(tgName)) errs.push(`Job task group ${i + 1} redefines '${tgName}' from group ${(seen.get(tgName) ?? 0) + 1}`);
    else seen.set(tgName, i);
    if (isSet(tg, "ShutdownDelay") && num(tg, "ShutdownDelay") < 0) errs.push("ShutdownDelay must be a positive value");
    if (isSet(tg, "StopAfterClientDisconnect") && num(tg, "StopAfterClientDisconnect") !== 0) {
      const stopAfter = num(tg, "StopAfterClientDisconnect");
      if (stopAfter > 0 && !(jobType === "batch" || jobType === "service")) {
        errs.push("stop_after_client_disconnect can only be set in batch and service jobs");
      } else if (stopAfter < 0) errs.push("stop_after_client_disconnect must be a positive value");
    }
    if (jobType === "system" && num(tg, "Count") > 1) {
      errs.push(`Job task group ${tgName} has count ${num(tg, "Count")}. Count cannot exceed 1 with system scheduler`);
    }
    if (isSet(tg, "MaxClientDisconnect") && num(block(tg, "ReschedulePolicy"), "Attempts") > 0 && flag(tg, "PreventRescheduleOnLost")) {
      errs.push("max_client_disconnect and prevent_reschedule_on_lost cannot be enabled when rechedule.attempts > 0");
    }
  });

  for (const tg of groups) {
    const inner = validateGroup(tg, job);
    if (inner.length > 0) errs.push(`Task group ${str(tg, "Name")} validation failed: ${nested(inner)}`);
  }

  const periodic = block(job, "Periodic");
  if (periodic && flag(periodic, "Enabled")) {
    if (jobType !== "batch" && jobType !== "sysbatch") errs.push(`Periodic can only be used with "batch" or "sysbatch" scheduler`);
    const inner: string[] = [];
    const spec = str(periodic, "Spec");
    const specs = Array.isArray(periodic["Specs"]) ? (periodic["Specs"] as unknown[]) : [];
    if (spec !== "" && specs.length !== 0) inner.push("Only cron or crons may be used");
    if (spec === "" && specs.length === 0) inner.push("Must specify a spec");
    const zone = str(periodic, "TimeZone");
    if (!isValidTimeZone(zone)) inner.push(`Invalid time zone ${goQuote(zone)}: unknown time zone ${zone}`);
    const specType = str(periodic, "SpecType");
    if (specType !== "cron" && specType !== "_internal_test") inner.push(`Unknown periodic specification type ${goQuote(specType)}`);
    if (inner.length > 0) errs.push(nested(inner));
  }

  const parameterized = block(job, "ParameterizedJob");
  if (parameterized && !flag(job, "Dispatched")) {
    if (jobType !== "batch" && jobType !== "sysbatch") errs.push(`Parameterized job can only be used with "batch" or "sysbatch" scheduler`);
    const inner: string[] = [];
    const payload = str(parameterized, "Payload");
    if (!["optional", "required", "forbidden"].includes(payload)) inner.push(`Unknown payload requirement: ${goQuote(payload)}`);
    const required = Array.isArray(parameterized["MetaRequired"]) ? (parameterized["MetaRequired"] as string[]) : [];
    const optional = new Set(Array.isArray(parameterized["MetaOptional"]) ? (parameterized["MetaOptional"] as string[]) : []);
    const both = required.filter((key) => optional.has(key));
    if (both.length > 0) inner.push(`Required and optional meta keys should be disjoint. Following keys exist in both: ${goStrings(both)}`);
    if (inner.length > 0) errs.push(nested(inner));
  }
  return errs;
}

/**
 * The validation errors Nomad 1.9's job-validate admission hook reports, in
 * its order: `structs.Job.Validate` (flattened into the top-level list), then
 * the core type, the payload, the priority range (with the default
 * `job_max_priority` of 100) and empty service identity names. Nested task
 * group and task errors are already rendered as go-multierror nests them.
 * An empty list means the job is valid.
 */
export function validateJob(job: Record<string, unknown>): string[] {
  const errs = validateJobStruct(job);
  const jobType = str(job, "Type");
  if (jobType === "_core") errs.push("job type cannot be core");
  if (str(job, "Payload") !== "") errs.push("job can't be submitted with a payload, only dispatched");
  const priority = num(job, "Priority");
  if (priority < 1 || priority > 100) errs.push("job priority must be between [1, 100]");
  for (const tg of items(job, "TaskGroups")) {
    for (const svc of items(tg, "Services")) {
      const identity = block(svc, "Identity");
      if (identity && str(identity, "Name") === "") errs.push(`Service ${str(svc, "Name")} in task group ${str(tg, "Name")} has an identity with an empty name`);
    }
    for (const task of items(tg, "Tasks")) {
      for (const svc of items(task, "Services")) {
        const identity = block(svc, "Identity");
        if (identity && str(identity, "Name") === "") errs.push(`Service ${str(svc, "Name")} in task ${str(task, "Name")} has an identity with an empty name`);
      }
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------
// Spec comparison

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, i) => jsonEqual(value, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    if (keysA.length !== keysB.length) return false;
    return keysA.every((key) => Object.prototype.hasOwnProperty.call(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}

/**
 * `structs.Job.SpecChanged`: the new job with the previous job's server-set
 * fields (Status, StatusDescription, Stable, Version, CreateIndex,
 * ModifyIndex, JobModifyIndex, SubmitTime) is compared deeply with the
 * previous one; nil and empty lists/maps count as different, as in
 * reflect.DeepEqual.
 */
export function specChanged(previous: Record<string, unknown>, next: Record<string, unknown>): boolean {
  const copy: Obj = { ...next };
  for (const key of Object.keys(SERVER_FIELDS)) {
    if (Object.prototype.hasOwnProperty.call(previous, key)) copy[key] = previous[key];
    else delete copy[key];
  }
  return !jsonEqual(previous, copy);
}
