/**
 * The scheduler's state: namespaces, nodes, jobs (and their versions and
 * summaries), evaluations, allocations and deployments, each a store table.
 *
 * Rows keep instants as virtual milliseconds so snapshots stay plain JSON;
 * the views below render them as Nomad does (Unix nanoseconds as exact
 * integers, RFC 3339 strings) and build the list stubs from the full rows.
 */
import type { ServiceContext } from "../../core/context.js";
import { formatInstant } from "../../core/instant.js";
import type { GroupLookup, Table } from "../../core/store.js";
import { omitEmpty } from "./encode.js";
import { HeldPortIndex, type NodePorts } from "./held-ports.js";
import { taskStatesView, type TaskStatesRow } from "./task-states.js";
import { rescheduleTrackerView, type RescheduleTrackerRow } from "./reschedule-tracker.js";

export const TABLES = {
  namespaces: "scheduler.namespaces",
  nodes: "scheduler.nodes",
  jobs: "scheduler.jobs",
  versions: "scheduler.job-versions",
  summaries: "scheduler.job-summaries",
  evals: "scheduler.evals",
  allocs: "scheduler.allocs",
  deployments: "scheduler.deployments",
  scalingEvents: "scheduler.scaling-events",
} as const;

/** Nomad keeps this many scaling events per task group (structs.JobTrackedScalingEvents). */
export const TRACKED_SCALING_EVENTS = 20;

/** A structs.ScalingEvent (the encoder sorts its keys). */
export type ScalingEvent = {
  Count: number | null;
  CreateIndex: number;
  Error: boolean;
  EvalID: string | null;
  Message: string;
  Meta: Record<string, unknown> | null;
  PreviousCount: number;
  /** Unix nanoseconds. */
  Time: bigint | number;
};

/** A job's scaling events per group, newest first (structs.JobScalingEvents). */
export type ScalingEventsRow = {
  Namespace: string;
  JobID: string;
  ScalingEvents: Record<string, ScalingEvent[]>;
  CreateIndex: number;
  ModifyIndex: number;
};

/** Nomad keeps this many versions of a job (JobTrackedVersions). */
export const TRACKED_VERSIONS = 6;

export type Json = Record<string, unknown>;

export type JobRow = Json & {
  ID: string;
  Namespace: string;
  Name: string;
  Type: string;
  Priority: number;
  Datacenters: string[];
  NodePool: string;
  TaskGroups: Json[];
  Stop: boolean;
  Status: string;
  Version: number;
  /** ms (rendered as ns). */
  SubmitTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  JobModifyIndex: number;
};

export type TaskGroupSummary = { Complete: number; Failed: number; Lost: number; Queued: number; Running: number; Starting: number; Unknown: number };

export type SummaryRow = {
  JobID: string;
  Namespace: string;
  Summary: Record<string, TaskGroupSummary>;
  Children: { Dead: number; Pending: number; Running: number };
  CreateIndex: number;
  ModifyIndex: number;
};

export type EvalRow = Json & {
  ID: string;
  Namespace: string;
  JobID: string;
  Status: string;
  Type: string;
  CreateTime: number;
  ModifyTime: number;
  CreateIndex: number;
  ModifyIndex: number;
};

export type AllocRow = Json & {
  ID: string;
  EvalID: string;
  Name: string;
  Namespace: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  JobType: string;
  JobVersion: number;
  TaskGroup: string;
  DesiredStatus: string;
  DesiredDescription: string;
  ClientStatus: string;
  ClientDescription: string;
  DeploymentID: string;
  /** null, or {Healthy, Timestamp (ms), Canary, ModifyIndex}. */
  DeploymentStatus: Json | null;
  /** Requested resources of the group's tasks, summed (placement). */
  Cpu: number;
  /** The group network's ports as placed (AllocatedPortMapping, zero fields left out); absent when the group asks none. */
  SharedPorts?: Json[];
  /** The group network with its dynamic ports filled in (NetworkResource, zero fields left out). */
  SharedNetworks?: Json[];
  MemoryMB: number;
  CreateTime: number;
  ModifyTime: number;
  CreateIndex: number;
  ModifyIndex: number;
};

export type DeploymentState = {
  AutoPromote: boolean;
  AutoRevert: boolean;
  DesiredCanaries: number;
  DesiredTotal: number;
  HealthyAllocs: number;
  PlacedAllocs: number;
  PlacedCanaries: string[] | null;
  ProgressDeadline: number;
  Promoted: boolean;
  /** ms, or null. */
  RequireProgressBy: number | null;
  UnhealthyAllocs: number;
};

export type DeploymentRow = {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  JobModifyIndex: number;
  JobSpecModifyIndex: number;
  JobCreateIndex: number;
  IsMultiregion: boolean;
  TaskGroups: Record<string, DeploymentState>;
  Status: string;
  StatusDescription: string;
  EvalPriority: number;
  CreateTime: number;
  ModifyTime: number;
  CreateIndex: number;
  ModifyIndex: number;
};

export type NodeRow = Json & {
  ID: string;
  Name: string;
  Datacenter: string;
  NodePool: string;
  NodeClass: string;
  HTTPAddr: string;
  Status: string;
  SchedulingEligibility: string;
  Drain: boolean;
  Attributes: Record<string, string>;
  Meta: Record<string, string>;
  /** Total CPU MHz and memory MB on offer. */
  CpuShares: number;
  MemoryMB: number;
  /** ms. */
  StatusUpdatedAt: number;
  CreateIndex: number;
  ModifyIndex: number;
};

export type NamespaceRow = {
  Name: string;
  Description: string;
  Quota: string;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
};

export const jobKey = (namespace: string, id: string) => `${namespace}\u0000${id}`;
export const versionKey = (namespace: string, id: string, version: number) => `${namespace}\u0000${id}\u0000${String(version).padStart(10, "0")}`;

/** Virtual ms → Unix nanoseconds, exact (Nomad's int64 timestamps exceed 2^53). */
export const nanos = (ms: number): bigint => BigInt(ms) * 1_000_000n;

export class SchedulerState {
  readonly namespaces: Table<NamespaceRow>;
  readonly nodes: Table<NodeRow>;
  readonly jobs: Table<JobRow>;
  readonly versions: Table<JobRow>;
  readonly summaries: Table<SummaryRow>;
  readonly evals: Table<EvalRow>;
  readonly allocs: Table<AllocRow>;
  readonly deployments: Table<DeploymentRow>;
  readonly scalingEvents: Table<ScalingEventsRow>;
  // Rows by job (and allocations by node): registering a job looks these up, and a scan of the whole table each
  // time made registering N jobs take O(N²).
  private readonly versionsByJob: (key: string) => JobRow[];
  private readonly evalsByJob: GroupLookup<EvalRow>;
  private readonly allocsByJob: GroupLookup<AllocRow>;
  private readonly allocsByNode: (nodeId: string) => AllocRow[];
  private readonly liveAllocsByNode: (nodeId: string) => AllocRow[];
  private readonly heldPorts: HeldPortIndex<AllocRow>;
  private readonly liveUsageByNode: (nodeId: string) => readonly number[];
  private readonly liveAllocsByJobPart: GroupLookup<AllocRow>;
  private readonly openEvalsByJob: GroupLookup<EvalRow>;
  private readonly migratedUnreplacedByGroup: (key: string) => AllocRow[];
  private readonly deploymentsByJob: (key: string) => DeploymentRow[];
  // For garbage collection and periodic launches: a pass or a launch looks up only what it touches.
  private readonly childrenByParent: (key: string) => JobRow[];
  private readonly allocsByEval: (evalId: string) => AllocRow[];
  private readonly allocsByDeployment: (deploymentId: string) => AllocRow[];

  constructor(readonly ctx: ServiceContext) {
    const s = ctx.store;
    this.namespaces = s.table(TABLES.namespaces);
    this.nodes = s.table(TABLES.nodes);
    this.jobs = s.table(TABLES.jobs);
    this.versions = s.table(TABLES.versions);
    this.summaries = s.table(TABLES.summaries);
    this.evals = s.table(TABLES.evals);
    this.allocs = s.table(TABLES.allocs);
    this.deployments = s.table(TABLES.deployments);
    this.scalingEvents = s.table(TABLES.scalingEvents);
    this.versionsByJob = this.versions.groupBy((v) => jobKey(v.Namespace, v.ID));
    this.evalsByJob = this.evals.groupBy((e) => jobKey(e.Namespace, e.JobID));
    this.allocsByJob = this.allocs.groupBy((a) => jobKey(a.Namespace, a.JobID));
    this.allocsByNode = this.allocs.groupBy((a) => a.NodeID);
    // Placement reads what holds each candidate node's resources for every allocation it places: kept apart
    // (and unsorted) so that pass skips a node's terminal allocations and the sort.
    this.liveAllocsByNode = this.allocs.groupBy((a) => (isLive(a) ? a.NodeID : ""));
    // What a placement needs of each candidate node, without visiting the node's allocations: the CPU and memory
    // they hold (sums kept as allocations change) and the few that hold ports. Visiting them made placing N
    // allocations O(N²).
    this.liveUsageByNode = this.allocs.sumBy(
      (a) => (isLive(a) ? a.NodeID : undefined),
      (a) => [a.Cpu, a.MemoryMB],
    );
    // The ports live allocations hold, per node and IP, kept as allocations change: a placement asks them of each
    // candidate node, and rebuilding them from the node's allocations each time made placing N allocations O(N²).
    this.heldPorts = new HeldPortIndex(this.allocs, s, isLive);
    // Live allocations counted by job, job version, and job version and group: a deployment asks after each
    // healthy allocation whether older ones still run or a group is short, and counting them there was O(N) each.
    this.liveAllocsByJobPart = this.allocs.groupBy((a) => {
      if (!isLive(a)) return [];
      const job = jobKey(a.Namespace, a.JobID);
      return [job, `${job}\u0000${a.JobVersion}`, `${job}\u0000${a.JobVersion}\u0000${a.TaskGroup}`];
    });
    // A job's evaluations still to run (pending or blocked): its status asks after each evaluation and allocation change.
    this.openEvalsByJob = this.evals.groupBy((e) => (e.Status === "pending" || e.Status === "blocked" ? jobKey(e.Namespace, e.JobID) : []));
    // Allocations a drain or an alloc stop migrated whose replacement is not placed yet (placeAlloc links them).
    this.migratedUnreplacedByGroup = this.allocs.groupBy((a) =>
      a.DesiredStatus === "stop" && (a.DesiredTransition as { Migrate?: boolean } | null)?.Migrate === true && !a.NextAllocation
        ? `${jobKey(a.Namespace, a.JobID)}\u0000${a.TaskGroup}`
        : [],
    );
    this.deploymentsByJob = this.deployments.groupBy((d) => jobKey(d.Namespace, d.JobID));
    this.childrenByParent = this.jobs.groupBy((j) => (typeof j.ParentID === "string" && j.ParentID !== "" ? jobKey(j.Namespace, j.ParentID) : ""));
    this.allocsByEval = this.allocs.groupBy((a) => a.EvalID);
    this.allocsByDeployment = this.allocs.groupBy((a) => a.DeploymentID ?? "");
  }

  job(namespace: string, id: string): JobRow | undefined {
    return this.jobs.get(jobKey(namespace, id));
  }

  /** Versions of a job, newest first. */
  jobVersions(namespace: string, id: string): JobRow[] {
    return this.versionsByJob(jobKey(namespace, id)).sort((a, b) => b.Version - a.Version);
  }

  allocsOfJob(namespace: string, id: string): AllocRow[] {
    return byCreateIndex(this.allocsByJob(jobKey(namespace, id)));
  }

  evalsOfJob(namespace: string, id: string): EvalRow[] {
    return byCreateIndex(this.evalsByJob(jobKey(namespace, id)));
  }

  deploymentsOfJob(namespace: string, id: string): DeploymentRow[] {
    return byCreateIndex(this.deploymentsByJob(jobKey(namespace, id))).reverse();
  }

  /** A parent's children (periodic launches, dispatches), in no particular order. */
  childrenOf(namespace: string, parentId: string): JobRow[] {
    return this.childrenByParent(jobKey(namespace, parentId));
  }

  /** An evaluation's allocations, in no particular order. */
  allocsOfEval(evalId: string): AllocRow[] {
    return this.allocsByEval(evalId);
  }

  /** A deployment's allocations, in no particular order. */
  allocsOfDeployment(deploymentId: string): AllocRow[] {
    return deploymentId === "" ? [] : this.allocsByDeployment(deploymentId);
  }

  allocsOnNode(nodeId: string): AllocRow[] {
    return byCreateIndex(this.allocsByNode(nodeId));
  }

  /** A node's allocations desired to run and pending or running on the client (what holds its resources), in no order. */
  liveAllocsOnNode(nodeId: string): AllocRow[] {
    return nodeId === "" ? [] : this.liveAllocsByNode(nodeId);
  }

  /** The CPU (MHz) and memory (MB) a node's live allocations hold. */
  liveUsageOnNode(nodeId: string): { cpu: number; memoryMB: number } {
    const [cpu = 0, memoryMB = 0] = nodeId === "" ? [] : this.liveUsageByNode(nodeId);
    return { cpu, memoryMB };
  }

  /** The ports a node's live allocations hold (read-only). */
  portsHeldOnNode(nodeId: string): NodePorts {
    return this.heldPorts.onNode(nodeId);
  }

  /** How many of a job's allocations are live: all of them, or those at `version` (in `group`). */
  liveAllocCount(namespace: string, id: string, version?: number, group?: string): number {
    const job = jobKey(namespace, id);
    if (version === undefined) return this.liveAllocsByJobPart.count(job);
    return this.liveAllocsByJobPart.count(group === undefined ? `${job}\u0000${version}` : `${job}\u0000${version}\u0000${group}`);
  }

  /** How many allocations and evaluations a job has, and how many of its evaluations are pending or blocked. */
  jobCounts(namespace: string, id: string): { allocs: number; evals: number; openEvals: number } {
    const key = jobKey(namespace, id);
    return { allocs: this.allocsByJob.count(key), evals: this.evalsByJob.count(key), openEvals: this.openEvalsByJob.count(key) };
  }

  /** A job's evaluations still to run (pending or blocked), in no particular order: what the eval broker holds for it. */
  openEvalsOfJob(namespace: string, id: string): EvalRow[] {
    return this.openEvalsByJob(jobKey(namespace, id));
  }

  /** A job's group's allocations migrated away (drain, alloc stop) and not replaced yet, oldest first. */
  unreplacedMigrations(namespace: string, id: string, group: string): AllocRow[] {
    return byCreateIndex(this.migratedUnreplacedByGroup(`${jobKey(namespace, id)}\u0000${group}`));
  }

  /** The table index a read of these tables reports (never below 1 on the wire). */
  index(...tables: string[]): number {
    return Math.max(...tables.map((t) => this.ctx.store.tableIndex(t)));
  }
}

/** Desired to run and pending or running on the client: what holds a node's resources. */
function isLive(a: AllocRow): boolean {
  return a.DesiredStatus === "run" && (a.ClientStatus === "pending" || a.ClientStatus === "running");
}

export function byCreateIndex<T extends { CreateIndex: number; ID: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => a.CreateIndex - b.CreateIndex || (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
}

// ---- views -------------------------------------------------------------------

export function jobView(job: JobRow): Json {
  return { ...job, SubmitTime: nanos(job.SubmitTime) };
}

export function jobStub(job: JobRow, summary: SummaryRow | undefined): Json {
  const periodic = job.Periodic !== null && job.Periodic !== undefined;
  const parameterized = job.ParameterizedJob !== null && job.ParameterizedJob !== undefined;
  return {
    ID: job.ID,
    ParentID: job.ParentID ?? "",
    Name: job.Name,
    Namespace: job.Namespace,
    Datacenters: job.Datacenters,
    NodePool: job.NodePool,
    Multiregion: job.Multiregion ?? null,
    Type: job.Type,
    Priority: job.Priority,
    Periodic: periodic,
    ParameterizedJob: parameterized,
    Stop: job.Stop,
    Status: job.Status,
    StatusDescription: job.StatusDescription ?? "",
    JobSummary: summary ?? null,
    CreateIndex: job.CreateIndex,
    ModifyIndex: job.ModifyIndex,
    JobModifyIndex: job.JobModifyIndex,
    SubmitTime: nanos(job.SubmitTime),
  };
}

export function evalView(e: EvalRow): Json {
  // WaitUntil is kept in virtual ms (a follow-up eval's); Go's time.Time renders RFC 3339.
  const waitUntil = typeof e.WaitUntil === "number" ? formatInstant(e.WaitUntil) : e.WaitUntil;
  return { ...e, WaitUntil: waitUntil, CreateTime: nanos(e.CreateTime), ModifyTime: nanos(e.ModifyTime) };
}

/** The evaluation as Nomad's encoder writes it: Evaluation has a struct-level omitempty (see encode.ts). */
export function evalWire(e: EvalRow): Json {
  return omitEmpty(evalView(e));
}

export function deploymentView(d: DeploymentRow): Json {
  const groups: Record<string, Json> = {};
  for (const [name, state] of Object.entries(d.TaskGroups)) {
    groups[name] = { ...state, RequireProgressBy: state.RequireProgressBy === null ? null : formatNanosInstant(state.RequireProgressBy) };
  }
  return { ...d, TaskGroups: groups, CreateTime: nanos(d.CreateTime), ModifyTime: nanos(d.ModifyTime) };
}

function deploymentStatusView(status: Json | null): Json | null {
  if (!status) return null;
  return { ...status, Timestamp: formatNanosInstant(status.Timestamp as number) };
}

export function allocStub(a: AllocRow): Json {
  return {
    ID: a.ID,
    EvalID: a.EvalID,
    Name: a.Name,
    Namespace: a.Namespace,
    NodeID: a.NodeID,
    NodeName: a.NodeName,
    JobID: a.JobID,
    JobType: a.JobType,
    JobVersion: a.JobVersion,
    TaskGroup: a.TaskGroup,
    DesiredStatus: a.DesiredStatus,
    DesiredDescription: a.DesiredDescription,
    ClientStatus: a.ClientStatus,
    ClientDescription: a.ClientDescription,
    DesiredTransition: { ForceReschedule: null, Migrate: null, NoShutdownDelay: null, Reschedule: null, ...(a.DesiredTransition as Json | null | undefined) },
    TaskStates: taskStatesView(a.TaskStates as TaskStatesRow | null),
    DeploymentStatus: deploymentStatusView(a.DeploymentStatus),
    FollowupEvalID: a.FollowupEvalID ?? "",
    NextAllocation: a.NextAllocation ?? "",
    RescheduleTracker: rescheduleTrackerView(a.RescheduleTracker as RescheduleTrackerRow | null | undefined),
    PreemptedAllocations: null,
    PreemptedByAllocation: "",
    CreateIndex: a.CreateIndex,
    ModifyIndex: a.ModifyIndex,
    CreateTime: nanos(a.CreateTime),
    ModifyTime: nanos(a.ModifyTime),
  };
}

/**
 * The full allocation (every field, as filters see it): the stub's fields plus
 * the job it runs and its resources, with the group network's ports.
 */
export function allocView(a: AllocRow, job: JobRow | undefined): Json {
  const { Cpu, MemoryMB, DeploymentID, SharedPorts, SharedNetworks, ...rest } = a;
  const shared: Json = { DiskMB: 300 };
  if (SharedNetworks && SharedNetworks.length > 0) shared.Networks = SharedNetworks;
  if (SharedPorts && SharedPorts.length > 0) shared.Ports = SharedPorts;
  return {
    ...allocStub(a),
    ...Object.fromEntries(Object.entries(rest).filter(([k]) => !(k in allocStub(a)))),
    DeploymentID,
    Job: job ? jobView(job) : null,
    AllocatedResources: { Shared: shared, ...allocatedTasks(job, a.TaskGroup) },
    Resources: legacyResources(Cpu, MemoryMB, 300),
  };
}

/**
 * structs.Resources, the pre-0.9 resources block allocations and nodes still
 * carry: a plain struct (no struct-level omitempty), so Nomad writes every
 * field, the unused ones zero or null (the wire-shape oracle checks this).
 */
export function legacyResources(cpu: number, memoryMB: number, diskMB: number): Json {
  return { CPU: cpu, Cores: 0, MemoryMB: memoryMB, MemoryMaxMB: 0, DiskMB: diskMB, IOPS: 0, Networks: null, Devices: null, NUMA: null, SecretsMB: 0 };
}

/**
 * AllocatedResources' per-task maps, keyed by task name as Nomad's are: each
 * task's CPU and memory ask (AllocatedTaskResources) and its lifecycle block
 * (null for a main task).
 */
function allocatedTasks(job: JobRow | undefined, groupName: string): { Tasks: Json; TaskLifecycles: Json | null } {
  const group = (job?.TaskGroups as Json[] | undefined)?.find((g) => g.Name === groupName);
  const tasks = (group?.Tasks as Json[] | undefined) ?? [];
  if (tasks.length === 0) return { Tasks: {}, TaskLifecycles: null };
  const resources: Json = {};
  const lifecycles: Json = {};
  for (const task of tasks) {
    const name = String(task.Name);
    const ask = (task.Resources as Json | null | undefined) ?? {};
    resources[name] = {
      Cpu: { CpuShares: Number(ask.CPU ?? 100), ReservedCores: null },
      Devices: null,
      // The secrets tmpfs is allocated memory (rank.go adds SecretsMB to the task's MemoryMB).
      Memory: { MemoryMB: Number(ask.MemoryMB ?? 300) + Number(ask.SecretsMB ?? 0), MemoryMaxMB: Number(ask.MemoryMaxMB ?? 0) },
      Networks: null,
    };
    lifecycles[name] = (task.Lifecycle as Json | null | undefined) ?? null;
  }
  return { Tasks: resources, TaskLifecycles: lifecycles };
}

/**
 * The allocation as Nomad's encoder writes it: Allocation has a struct-level
 * omitempty (see encode.ts), and no `JobType` (only the list stub has one in
 * Nomad 1.9.7's structs; the view keeps it for the list filters).
 */
export function allocWire(a: AllocRow, job: JobRow | undefined): Json {
  const { JobType: _stubOnly, ...full } = allocView(a, job);
  return omitEmpty(full);
}

export function nodeStub(n: NodeRow): Json {
  return {
    Address: n.HTTPAddr.split(":")[0] ?? "",
    ID: n.ID,
    Datacenter: n.Datacenter,
    Name: n.Name,
    NodeClass: n.NodeClass,
    NodePool: n.NodePool,
    Version: n.Attributes["nomad.version"] ?? "",
    Drain: n.Drain,
    SchedulingEligibility: n.SchedulingEligibility,
    Status: n.Status,
    StatusDescription: n.StatusDescription ?? "",
    Drivers: n.Drivers ?? {},
    HostVolumes: null,
    LastDrain: null,
    CreateIndex: n.CreateIndex,
    ModifyIndex: n.ModifyIndex,
  };
}

export function namespaceView(ns: NamespaceRow): Json {
  return { Capabilities: null, NodePoolConfiguration: null, VaultConfiguration: null, ConsulConfiguration: null, Hash: null, ...ns };
}

/** RFC 3339 with nanoseconds trimmed, as Go's time.Time encodes. */
function formatNanosInstant(ms: number): string {
  return formatInstant(ms);
}
