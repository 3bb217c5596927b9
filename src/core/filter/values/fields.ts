/**
 * What JSON does not say about Nomad's structs, by field name: which objects are Go maps rather than
 * structs, which `null`s are nil struct pointers, which strings are `[]byte`, which integers are
 * `int64` or `uint64`, and the Go type names go-bexpr prints for the common fields. values/go-value.ts
 * reads these tables to type a datum the way go-bexpr's reflection sees it.
 */

/**
 * Struct fields whose object value is a Go map rather than a struct (see the module comment). Mutable: a
 * caller whose data holds other map-typed fields may add their names.
 */
export const MAP_FIELDS: Set<string> = new Set([
  "Meta",
  "Attributes",
  "Links",
  "TaskGroups",
  "Drivers",
  "HostVolumes",
  "Summary",
  "QueuedAllocations",
  "FailedTGAllocs",
  "Config",
  "Env",
  "TaggedAddresses",
  // Allocation, AllocMetric, Evaluation and Node maps (Go map[string]…)
  "TaskStates",
  "TaskResources",
  "ClassEligibility",
  "NodesAvailable",
  "ClassFiltered",
  "ConstraintFiltered",
  "ClassExhausted",
  "DimensionExhausted",
  "ResourcesExhausted",
  "Scores",
  "CSIControllerPlugins",
  "CSINodePlugins",
  "HostNetworks",
  // AllocatedResources: per-task resources and lifecycles are maps by task name (a task group's
  // Tasks is a JSON array, which stays a slice whatever its name)
  "Tasks",
  "TaskLifecycles",
  // a task event's and a node event's details (map[string]string)
  "Details",
  // a service's canary meta, a group's volume requests
  "CanaryMeta",
  "Volumes",
]);

/** Map fields whose nested objects are maps as well (Go `map[string]interface{}`). */
export const FREEFORM_MAP_FIELDS: ReadonlySet<string> = new Set(["Config"]);

/**
 * Struct fields Nomad declares as a pointer to a struct (`*PeriodicConfig`,
 * `*ParameterizedJobConfig`, a group's `*RestartPolicy`, …): `null` there is a
 * nil struct pointer, not a nil slice or map. go-bexpr treats one as an
 * invalid value: `in`/`contains` fail with "Cannot perform in/contains
 * operations on type invalid", and `is empty`, `any` and `all` panic (Nomad
 * then fails the request), which this port answers with a 400 saying so.
 */
export const STRUCT_POINTER_FIELDS: ReadonlySet<string> = new Set([
  "ParameterizedJob",
  "Periodic",
  "Multiregion",
  "DispatchPayload",
  "EphemeralDisk",
  "RestartPolicy",
  "ReschedulePolicy",
  "Migrate",
  "Scaling",
  "Lifecycle",
  "LogConfig",
  "Vault",
  "Consul",
  "Disconnect",
  "DeploymentStatus",
  "RescheduleTracker",
  "DrainStrategy",
  "LastDrain",
  "Identity",
  // pointers to something other than a struct, and struct fields that are pointers in one struct and
  // values in another (a group's `*UpdateStrategy`, the job's `UpdateStrategy`): only their `null`
  // is read from this table, and go-bexpr sees any nil pointer as the same invalid value.
  "ShutdownDelay",
  "StopAfterClientDisconnect",
  "MaxClientDisconnect",
  "Healthy",
  "Update",
  "Resources",
  "AllocatedResources",
  // a variable's `*VariableLock`
  "Lock",
]);

/**
 * `time.Time` struct fields. JSON shows them as RFC 3339 strings (or `null` for the zero time), but
 * to go-bexpr they are structs with no exported fields: `==` has no primitive comparison, `matches`
 * says `Value of type time.Time is not convertible to []byte`, `in` cannot work on a struct, and
 * `is empty` panics (answered with a 400 here).
 */
export const TIME_FIELDS: ReadonlySet<string> = new Set(["StartedAt", "FinishedAt", "LastRestart", "Timestamp", "RequireProgressBy", "UpdateTime", "WaitUntil", "ForceDeadline"]);

/**
 * Slice fields whose elements are structs or pointers to structs (`[]*structs.Constraint`, `[]Port`):
 * go-bexpr's `in`/`contains` finds no primitive comparison for the element type and fails even when the
 * slice is empty or nil, which JSON (`[]`, `null`) cannot tell from a slice of strings.
 */
export const STRUCT_SLICE_FIELDS: ReadonlySet<string> = new Set([
  "Constraints",
  "Affinities",
  "Spreads",
  "SpreadTarget",
  "TaskGroups",
  "Tasks",
  "Services",
  "Checks",
  "Networks",
  "DynamicPorts",
  "ReservedPorts",
  "Ports",
  "Identities",
  "Events",
  "Artifacts",
  "Templates",
  "VolumeMounts",
  "ScalingPolicies",
  "Devices",
  "Actions",
  "NodeNetworks",
  "Addresses",
  "RelatedEvals",
  "AllocStates",
]);

/**
 * `[]byte` struct fields (a dispatched job's `Payload`, a variable's encrypted `Data`): base64 in the JSON,
 * bytes to go-bexpr, which sees a slice of uint8: `is empty` is its length,
 * `in`/`contains` compare a byte (ParseUint), `matches` runs over the raw
 * bytes, and `==` has no comparison for a slice.
 */
export const BYTES_FIELDS: ReadonlySet<string> = new Set(["Payload", "Data"]);

/** `<struct field>.<field>` pairs that are plain strings although a table above names the field otherwise. */
export const STRING_FIELDS_BY_OWNER: ReadonlySet<string> = new Set(["ParameterizedJob.Payload"]);

/** int64 struct fields (Unix-nanosecond times, durations): their reflect kind is int64, not int. */
export const INT64_FIELDS: ReadonlySet<string> = new Set([
  "SubmitTime",
  "CreateTime",
  "ModifyTime",
  "StatusUpdatedAt",
  "Wait",
  "KillTimeout",
  "ShutdownDelay",
  "MinHealthyTime",
  "HealthyDeadline",
  "ProgressDeadline",
  "Stagger",
  "Interval",
  "Delay",
  "MaxDelay",
  "TTL",
  "LockDelay",
]);

/**
 * The Go types of the struct fields people filter on most, as go-bexpr names
 * them in `Value of type … is not convertible to []byte` (Nomad's structs);
 * anything else gets the JSON-derived approximation.
 */
export const GO_TYPE_NAMES: Readonly<Record<string, string>> = {
  TaskGroups: "[]*structs.TaskGroup",
  Tasks: "[]*structs.Task",
  Datacenters: "[]string",
  Constraints: "[]*structs.Constraint",
  Affinities: "[]*structs.Affinity",
  Spreads: "[]*structs.Spread",
  Services: "[]*structs.Service",
  Networks: "[]*structs.NetworkResource",
  Meta: "map[string]string",
  Attributes: "map[string]string",
  Update: "structs.UpdateStrategy",
  Periodic: "*structs.PeriodicConfig",
  ParameterizedJob: "*structs.ParameterizedJobConfig",
  DeploymentStatus: "*structs.AllocDeploymentStatus",
  TaskStates: "map[string]*structs.TaskState",
  ...Object.fromEntries(["StartedAt", "FinishedAt", "LastRestart", "Timestamp", "RequireProgressBy", "UpdateTime", "WaitUntil", "ForceDeadline"].map((f) => [f, "time.Time"])),
};

/**
 * Struct fields Nomad declares `uint64` (raft indexes, job versions, a task's
 * restart count): go-bexpr coerces a literal compared with one of them with
 * `strconv.ParseUint(raw, 0, 64)`, so `-1` or `1.5` is an error there and
 * `18446744073709551615` a valid value; every other integer field is a signed
 * `int`/`int64` (ParseInt).
 */
export const UNSIGNED_FIELDS: ReadonlySet<string> = new Set([
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "AllocModifyIndex",
  "NodeModifyIndex",
  "SnapshotIndex",
  "JobSpecModifyIndex",
  "JobCreateIndex",
  "EvalCreateIndex",
  "JobVersion",
  "Version",
  "Restarts",
]);
