/**
 * The Go struct a `?filter=` reads, rebuilt from the object standin serves. Nomad's JSON codec leaves
 * out the empty fields of structs tagged with struct-level `omitempty` (Evaluation, Allocation,
 * NetworkResource, Port; and standin's views leave out some fields of the legacy Resources), but go-bexpr reads the Go struct, where those fields are present with their
 * zero values: `DeploymentID == ""` matches an evaluation that has no deployment, where a filter over
 * the served JSON would fail with "couldn't find key". These tables put back the fields standin's
 * views may leave out, with their zero values (`null` for nil slices, maps and pointers): a job's
 * networks and ports and a node's legacy Resources carry only the fields that were given; an
 * evaluation's and an allocation's list views (not their omitempty wire) carry nearly all, and the
 * tables keep it so. The go-bexpr oracle (test/conformance/oracle-bexpr.test.ts) checks them against
 * Nomad's field kinds.
 */
import type { Json } from "./model.js";

const EVALUATION_ZEROS: Json = {
  NodeID: "",
  NodeModifyIndex: 0,
  DeploymentID: "",
  StatusDescription: "",
  Wait: 0,
  WaitUntil: null,
  NextEval: "",
  PreviousEval: "",
  BlockedEval: "",
  RelatedEvals: null,
  FailedTGAllocs: null,
  ClassEligibility: null,
  QuotaLimitReached: "",
  EscapedComputedClass: false,
  AnnotatePlan: false,
  QueuedAllocations: null,
  LeaderACL: "",
  SnapshotIndex: 0,
};

const ALLOCATION_ZEROS: Json = {
  NodeName: "",
  DesiredDescription: "",
  ClientDescription: "",
  PreviousAllocation: "",
  NextAllocation: "",
  DeploymentID: "",
  FollowupEvalID: "",
  PreemptedAllocations: null,
  PreemptedByAllocation: "",
};

const NETWORK_ZEROS: Json = { Mode: "", Device: "", CIDR: "", IP: "", Hostname: "", MBits: 0, DNS: null, ReservedPorts: null, DynamicPorts: null };
const PORT_ZEROS: Json = { Label: "", Value: 0, To: 0, HostNetwork: "" };
const SHARED_RESOURCES_ZEROS: Json = { Networks: null, DiskMB: 0, Ports: null };
/** structs.Resources (a task's, and the legacy `Resources` of an allocation and a node). */
const RESOURCES_ZEROS: Json = { CPU: 0, Cores: 0, MemoryMB: 0, MemoryMaxMB: 0, DiskMB: 0, IOPS: 0, SecretsMB: 0, Networks: null, Devices: null, NUMA: null };

/** Struct fields whose elements (a slice of structs) or value (one struct) get zero values back. */
const NESTED_ZEROS: Readonly<Record<string, Json>> = {
  Networks: NETWORK_ZEROS,
  DynamicPorts: PORT_ZEROS,
  ReservedPorts: PORT_ZEROS,
  Shared: SHARED_RESOURCES_ZEROS,
  Resources: RESOURCES_ZEROS,
};

/** `object` with `zeros`' keys it lacks, and the structs below it likewise (a copy: rows are never changed). */
function withZeros(object: Json, zeros: Json): Json {
  const out: Json = { ...zeros, ...object };
  for (const [key, value] of Object.entries(out)) out[key] = nested(key, value);
  return out;
}

function nested(key: string, value: unknown): unknown {
  // a value with toJSON (a Date) is read as its JSON rendering: left as it is
  if (value === null || typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") return value;
  const zeros = NESTED_ZEROS[key];
  if (Array.isArray(value)) return value.map((item) => (zeros && isObject(item) ? withZeros(item, zeros) : nested("", item)));
  return withZeros(value as Json, zeros ?? {});
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A job as its filter reads it (its networks and ports in full). */
export function jobFilterDatum(view: Json): Json {
  return withZeros(view, {});
}

/** An allocation as its filter reads it. */
export function allocationFilterDatum(view: Json): Json {
  return withZeros(view, ALLOCATION_ZEROS);
}

/** A node as its filter reads it (its legacy Resources in full). */
export function nodeFilterDatum(view: Json): Json {
  return withZeros(view, {});
}

/** An evaluation as its filter reads it (list, and delete by filter). */
export function evaluationFilterDatum(view: Json): Json {
  return withZeros(view, EVALUATION_ZEROS);
}
