/**
 * Placement: which nodes a group may run on (status, eligibility,
 * datacenters, pool, constraints), whether it fits there (ports, then CPU
 * and memory), the least loaded node with room, and the placed allocation
 * itself with its timers. What fits nowhere is described by an AllocMetric.
 */
import { goGlob } from "../../core/go/glob.js";
import { assignGroupPorts, portDimension } from "../state/network.js";
import type { AllocRow, DeploymentRow, EvalRow, JobRow, NodeRow } from "../state/model.js";
import { syncAllocServices } from "../services/service-registrations.js";
import { TIMERS } from "./constants.js";
import { constraintsMet } from "./constraints.js";
import { duration, healthSetByOperator, nanosToMs, type EngineCore, type Group } from "./core.js";
import { armProgressDeadline, updateDeploymentGroup } from "./deployments.js";
import { bumpSummary } from "./summaries.js";

/** Nodes a group may run on (status, eligibility, datacenters, pool, constraints), by node ID. */
export function feasibleNodes(core: EngineCore, job: JobRow, group: Group): NodeRow[] {
  return [...core.state.nodes.values()]
    .filter(
      (n) =>
        n.Status === "ready" &&
        n.SchedulingEligibility === "eligible" &&
        !n.Drain &&
        (job.Datacenters.includes("*") || job.Datacenters.some((dc) => goGlob(dc, n.Datacenter))) &&
        (job.NodePool === "all" || job.NodePool === n.NodePool) &&
        constraintsMet(job, group, n),
    )
    .sort((a, b) => (a.ID < b.ID ? -1 : 1));
}

/**
 * Why the group does not fit on the node (Nomad's AllocMetric dimension), checked as rank.go does: network first.
 * Reads the node's running totals and its held-port index, never its allocations: placing N allocations
 * visited every live one (then every port-holding one) on every candidate node for each, O(N²).
 */
export function exhaustion(core: EngineCore, node: NodeRow, group: Group): string | undefined {
  const need = groupResources(group);
  const ports = portDimension(node, group.Networks, core.state.portsHeldOnNode(node.ID));
  if (ports !== undefined) return ports;
  const used = core.state.liveUsageOnNode(node.ID);
  const fitsCapacity = used.cpu + need.cpu <= node.CpuShares && used.memoryMB + need.memoryMB <= node.MemoryMB;
  return fitsCapacity ? undefined : "cpu or memory";
}

/** Each dimension that exhausted a feasible node, counted (AllocMetric.DimensionExhausted). */
export function exhaustedDimensions(core: EngineCore, job: JobRow, group: Group): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const node of feasibleNodes(core, job, group)) {
    const dimension = exhaustion(core, node, group);
    if (dimension !== undefined) counts[dimension] = (counts[dimension] ?? 0) + 1;
  }
  return counts;
}

/** The least-loaded feasible node with room (ties by node ID). */
export function pickNode(core: EngineCore, job: JobRow, group: Group): NodeRow | undefined {
  let best: { node: NodeRow; load: number } | undefined;
  for (const node of feasibleNodes(core, job, group)) {
    if (exhaustion(core, node, group) !== undefined) continue;
    const load = core.state.liveUsageOnNode(node.ID).cpu / Math.max(1, node.CpuShares);
    if (!best || load < best.load) best = { node, load };
  }
  return best?.node;
}

export function placeAlloc(
  core: EngineCore,
  job: JobRow,
  group: Group,
  node: NodeRow,
  evaluation: EvalRow,
  name: string,
  deployment: DeploymentRow | undefined,
  canary = false,
  replacing?: Partial<AllocRow>,
  migrations: MigrationQueue = migrationQueue(core, job, group),
): AllocRow {
  const { state, ctx } = core;
  const now = ctx.clock.now();
  const need = groupResources(group);
  const ports = assignGroupPorts(node, group.Networks, core.state.portsHeldOnNode(node.ID));
  const offer = "offer" in ports ? ports.offer : undefined;
  const index = ctx.store.writeIndex();
  const alloc: AllocRow = {
    ID: ctx.ids.uuid(),
    EvalID: evaluation.ID,
    Name: name,
    Namespace: job.Namespace,
    NodeID: node.ID,
    NodeName: node.Name,
    JobID: job.ID,
    JobType: job.Type,
    JobVersion: job.Version,
    TaskGroup: group.Name,
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "No tasks have started",
    DeploymentID: deployment?.ID ?? "",
    DeploymentStatus: canary ? { Healthy: null, Timestamp: now, Canary: true, ModifyIndex: index } : null,
    TaskStates: null,
    FollowupEvalID: "",
    NextAllocation: "",
    PreviousAllocation: "",
    Cpu: need.cpu,
    MemoryMB: need.memoryMB,
    ...(offer ? { SharedPorts: offer.ports, SharedNetworks: offer.networks } : {}),
    CreateTime: now,
    ModifyTime: now,
    CreateIndex: index,
    ModifyIndex: index,
    // A reschedule's replacement: PreviousAllocation and RescheduleTracker (reschedule-reconcile.ts links the other way).
    ...replacing,
  };
  // A replacement of a migrated allocation (drain, alloc stop) is linked to it both ways.
  const previous = replacing ? undefined : migrations.next();
  if (previous) {
    alloc.PreviousAllocation = previous.ID;
    state.allocs.put(previous.ID, { ...previous, NextAllocation: alloc.ID, ModifyIndex: index });
  }
  syncAllocServices(state, state.allocs.put(alloc.ID, alloc));
  bumpSummary(core, job.Namespace, job.ID, group.Name, (s) => ({ ...s, Starting: s.Starting + 1, Queued: Math.max(0, s.Queued - 1) }));
  if (deployment) {
    updateDeploymentGroup(core, deployment.ID, group.Name, (g) => ({
      ...g,
      PlacedAllocs: g.PlacedAllocs + 1,
      PlacedCanaries: canary ? [...(g.PlacedCanaries ?? []), alloc.ID] : g.PlacedCanaries,
      // The first placement starts a progress-based group's deadline (none without progress_deadline).
      RequireProgressBy: g.RequireProgressBy ?? (g.ProgressDeadline > 0 ? now + nanosToMs(g.ProgressDeadline) : null),
    }));
    armProgressDeadline(core, deployment.ID);
    // The allocation must be healthy within healthy_deadline of being placed, or it counts as unhealthy
    // (unless its health is the operator's to set: the client then watches nothing).
    const healthyDeadline = nanosToMs(Number(group.Update?.HealthyDeadline ?? 300_000_000_000));
    if (healthyDeadline > 0 && !healthSetByOperator(group)) ctx.clock.schedule({ at: now + healthyDeadline, kind: TIMERS.healthyDeadline, subject: alloc.ID });
  }
  ctx.clock.schedule({ at: now + duration(core, "allocStart"), kind: TIMERS.allocStart, subject: alloc.ID });
  ctx.events.record("alloc.placed", { service: "scheduler", subject: alloc.ID, detail: { job: job.ID, group: group.Name, node: node.Name } });
  return alloc;
}

/** A group's migrated allocations awaiting a replacement, handed out oldest first, one per placement. */
export interface MigrationQueue {
  next(): AllocRow | undefined;
}

/**
 * The queue, read once: a pass that places many allocations takes them in turn instead of looking for the
 * oldest at each placement (O(N²) for a drain of N). Nothing migrates during a pass, so the order holds.
 */
export function migrationQueue(core: EngineCore, job: JobRow, group: Group): MigrationQueue {
  let pending: AllocRow[] | undefined;
  let at = 0;
  return {
    next: () => {
      pending ??= core.state.unreplacedMigrations(job.Namespace, job.ID, group.Name);
      return pending[at++];
    },
  };
}

/**
 * What a group asks of a node. A task's secrets directory is a tmpfs, so its
 * `SecretsMB` counts as memory (Nomad ≥ 1.8.3's rank.go adds it to the
 * allocated memory; the unset default, 0 here, costs nothing).
 */
function groupResources(group: Group): { cpu: number; memoryMB: number } {
  let cpu = 0;
  let memoryMB = 0;
  for (const task of group.Tasks ?? []) {
    cpu += Number(task.Resources?.CPU ?? 100);
    memoryMB += Number(task.Resources?.MemoryMB ?? 300) + Number(task.Resources?.SecretsMB ?? 0);
  }
  return { cpu, memoryMB };
}

/**
 * Names `<job>.<group>[<n>]`, each with the lowest n free in `used` (which the caller adds each name to).
 * Names are only ever added while placing, so the lowest free n never goes down: the search resumes where
 * the last one stopped, and naming N placements takes O(N), not O(N²).
 */
export function allocNamer(jobId: string, group: string, used: ReadonlySet<string>): () => string {
  let from = 0;
  return () => {
    for (let i = from; ; i++) {
      const name = `${jobId}.${group}[${i}]`;
      if (!used.has(name)) {
        from = i;
        return name;
      }
    }
  };
}

/** `dimensions`: what exhausted the feasible nodes; none counted (no feasible node) keeps the capacity text. */
export function allocMetric(nodesAvailable: number, unplaced: number, dimensions: Record<string, number>): Record<string, unknown> {
  return {
    AllocationTime: 0,
    ClassExhausted: null,
    ClassFiltered: null,
    CoalescedFailures: Math.max(0, unplaced - 1),
    ConstraintFiltered: null,
    DimensionExhausted: Object.keys(dimensions).length > 0 ? dimensions : { "cpu or memory": nodesAvailable },
    NodesAvailable: {},
    NodesEvaluated: nodesAvailable,
    NodesExhausted: Object.keys(dimensions).length > 0 ? Object.values(dimensions).reduce((sum, n) => sum + n, 0) : nodesAvailable,
    NodesFiltered: 0,
    NodesInPool: nodesAvailable,
    QuotaExhausted: null,
    ResourcesExhausted: null,
    ScoreMetaData: null,
    Scores: null,
  };
}
