/**
 * The simulated cluster, driven by the virtual clock (reference §6):
 *
 *   register ─▶ eval pending ─(evalProcess)─▶ eval complete, allocs placed (pending),
 *   deployment created ─(allocStart)─▶ allocs running ─(min_healthy_time)─▶ healthy
 *   ─▶ next rolling batch (max_parallel) … ─▶ deployment successful, version stable.
 *
 * Placement is deterministic: ready, eligible nodes in the job's datacenters
 * and node pool with room for the group's CPU and memory, least loaded
 * first, ties by node ID. What fits nowhere leaves a blocked eval, which is
 * re-run when capacity appears. Every transition goes through the store (so
 * indexes move and blocking queries wake) and into the event journal.
 */
import type { ServiceContext } from "../core/context.js";
import { parseDurationMs } from "../core/durations.js";
import { canonicalJSON } from "../core/json.js";
import { RE2JS } from "re2js";
import { specChanged } from "./jobspec/index.js";
import { formatMultierror } from "../core/go/multierror.js";
import { assignGroupPorts } from "./network.js";
import { nextLaunch, type PeriodicConfig } from "./periodic.js";
import {
  jobKey,
  nanos,
  TRACKED_SCALING_EVENTS,
  TRACKED_VERSIONS,
  versionKey,
  type ScalingEvent,
  type AllocRow,
  type DeploymentRow,
  type EvalRow,
  type JobRow,
  type NodeRow,
  type SchedulerState,
  type TaskGroupSummary,
} from "./model.js";
import { tasksFinished, tasksStarted, type RestartPolicy, type TaskSpec, type TaskStatesRow } from "./task-states.js";
import { HttpError } from "../http/errors.js";
import { goGlob } from "../core/go/glob.js";

export const TIMERS = {
  eval: "scheduler.eval",
  allocStart: "scheduler.alloc-start",
  allocHealthy: "scheduler.alloc-healthy",
  batchDone: "scheduler.batch-done",
  progressDeadline: "scheduler.progress-deadline",
  periodic: "scheduler.periodic-launch",
  healthyDeadline: "scheduler.healthy-deadline",
} as const;

export const DEFAULT_TIMING = { evalProcess: "100ms", allocStart: "1s", batchRun: "10s" } as const;
/** Job meta key that overrides `timing.batchRun` for one batch job. */
export const BATCH_RUN_META = "standin.batch_run";

export const DEPLOYMENT_DESCRIPTIONS = {
  running: "Deployment is running",
  runningNeedsPromotion: "Deployment is running but requires manual promotion",
  runningAutoPromotion: "Deployment is running pending automatic promotion",
  successful: "Deployment completed successfully",
  newerJob: "Cancelled due to newer version of job",
  stoppedJob: "Cancelled because job is stopped",
  failedAllocations: "Failed due to unhealthy allocations",
  progressDeadline: "Failed due to progress deadline",
  failedByUser: "Deployment marked as failed",
  paused: "Deployment is paused",
} as const;

const ACTIVE_DEPLOYMENT = new Set(["running", "paused"]);
export const NON_TERMINAL_CLIENT = new Set(["pending", "running"]);

export interface RegisterResult {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}

type Group = { Name: string; Count: number; Update: Record<string, unknown> | null; Networks?: Json[] | null; Tasks: Array<{ Resources?: { CPU?: number; MemoryMB?: number } }> };

export class SchedulerEngine {
  constructor(
    private readonly state: SchedulerState,
    private readonly ctx: ServiceContext,
    private readonly timing: () => Record<string, string>,
  ) {
    const clock = ctx.clock;
    clock.handle(TIMERS.eval, (t) => this.processEval(t.subject));
    clock.handle(TIMERS.allocStart, (t) => this.allocStarted(t.subject));
    clock.handle(TIMERS.allocHealthy, (t) => this.allocHealthy(t.subject));
    clock.handle(TIMERS.batchDone, (t) => this.batchDone(t.subject));
    clock.handle(TIMERS.progressDeadline, (t) => this.progressDeadlinePassed(t.subject));
    clock.handle(TIMERS.periodic, (t) => this.periodicLaunch(t.subject, t.at));
    clock.handle(TIMERS.healthyDeadline, (t) => this.healthyDeadlinePassed(t.subject));
  }

  // ---- jobs ----------------------------------------------------------------------

  /**
   * Upserts a canonical job. A changed (or new) spec (`specChanged`) becomes
   * a new version written with its eval in one index; an unchanged spec keeps
   * its version and only gets an eval. `alwaysNewVersion` writes a new
   * version even for an unchanged spec (revert, dispatch, periodic launch,
   * scale).
   */
  register(job: Record<string, unknown>, { alwaysNewVersion = false, triggeredBy = "job-register" } = {}): RegisterResult {
    const { state, ctx } = this;
    return ctx.store.write(() => {
      const ns = job.Namespace as string;
      const id = job.ID as string;
      const existing = state.job(ns, id);
      let row = existing;
      if (!existing || alwaysNewVersion || specChanged(existing, job)) {
        const index = ctx.store.writeIndex();
        row = {
          ...(job as JobRow),
          Status: "pending",
          StatusDescription: "",
          Stable: false,
          Version: existing ? existing.Version + 1 : 0,
          SubmitTime: ctx.clock.now(),
          CreateIndex: existing?.CreateIndex ?? index,
          ModifyIndex: index,
          JobModifyIndex: index,
        };
        row = state.jobs.put(jobKey(ns, id), row);
        this.storeVersion(row);
        if (!state.summaries.get(jobKey(ns, id))) this.initSummary(row);
        else this.ensureSummaryGroups(row);
        ctx.events.record("job.registered", { service: "scheduler", subject: id, detail: { namespace: ns, version: row.Version } });
      }
      if (isParentJob(row!)) {
        this.schedulePeriodic(row!);
        this.refreshJobStatus(ns, id);
        const index = ctx.store.writeIndex();
        return { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: row!.JobModifyIndex, Index: index };
      }
      const evaluation = this.createEval(row!, triggeredBy);
      this.refreshJobStatus(ns, id);
      return { EvalID: evaluation.ID, EvalCreateIndex: evaluation.CreateIndex, JobModifyIndex: row!.JobModifyIndex, Index: evaluation.CreateIndex };
    });
  }

  /** Stops a job (a new version with Stop: true), or purges it; its allocations stop and its deployment is cancelled by the eval. */
  deregister(namespace: string, id: string, purge: boolean): RegisterResult & { found: boolean } {
    const { state, ctx } = this;
    return ctx.store.write(() => {
      const existing = state.job(namespace, id);
      if (!existing) return { found: false, EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 };
      const index = ctx.store.writeIndex();
      let job: JobRow;
      if (purge) {
        state.jobs.delete(jobKey(namespace, id));
        for (const version of state.jobVersions(namespace, id)) state.versions.delete(versionKey(namespace, id, version.Version));
        state.summaries.delete(jobKey(namespace, id));
        state.scalingEvents.delete(jobKey(namespace, id));
        job = existing;
      } else {
        job = { ...existing, Stop: true, Version: existing.Version + 1, SubmitTime: ctx.clock.now(), ModifyIndex: index, JobModifyIndex: index, Stable: false };
        job = state.jobs.put(jobKey(namespace, id), job);
        this.storeVersion(job);
      }
      ctx.clock.cancelFor(TIMERS.periodic, jobKey(namespace, id));
      ctx.events.record(purge ? "job.purged" : "job.stopped", { service: "scheduler", subject: id, detail: { namespace } });
      if (isParentJob(existing)) return { found: true, EvalID: "", EvalCreateIndex: 0, JobModifyIndex: index, Index: index };
      // Nomad hard-codes the deregister eval's type to "service".
      const evaluation = this.createEval(job, "job-deregister", { Type: "service" });
      if (!purge) this.refreshJobStatus(namespace, id);
      return { found: true, EvalID: evaluation.ID, EvalCreateIndex: evaluation.CreateIndex, JobModifyIndex: index, Index: index };
    });
  }

  // ---- evaluations -----------------------------------------------------------------

  createEval(job: JobRow, triggeredBy: string, extra: Partial<EvalRow> = {}): EvalRow {
    const { state, ctx } = this;
    const now = ctx.clock.now();
    const index = ctx.store.writeIndex();
    const row: EvalRow = {
      ID: ctx.ids.uuid(),
      Namespace: job.Namespace,
      Priority: job.Priority,
      Type: job.Type,
      TriggeredBy: triggeredBy,
      JobID: job.ID,
      JobModifyIndex: job.JobModifyIndex,
      NodeID: "",
      NodeModifyIndex: 0,
      DeploymentID: "",
      Status: "pending",
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
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
      ...extra,
    };
    state.evals.put(row.ID, row);
    if (row.Status === "pending") ctx.clock.schedule({ at: now + this.duration("evalProcess"), kind: TIMERS.eval, subject: row.ID });
    return row;
  }

  /** The scheduler's pass over one eval: reconcile the job's allocations with its spec. */
  private processEval(evalId: string): unknown {
    const { state, ctx } = this;
    const evaluation = state.evals.get(evalId);
    if (!evaluation || evaluation.Status !== "pending") return { eval: evalId, skipped: true };
    return ctx.store.write(() => {
      const job = state.job(evaluation.Namespace, evaluation.JobID);
      const outcome = this.reconcile(job, evaluation);
      const now = ctx.clock.now();
      const index = ctx.store.writeIndex();
      const completed: EvalRow = {
        ...evaluation,
        Status: "complete",
        QueuedAllocations: outcome.queued,
        FailedTGAllocs: outcome.failed,
        DeploymentID: outcome.deploymentId,
        ModifyIndex: index,
        ModifyTime: now,
      };
      if (outcome.failed && job) {
        const blocked = this.createEval(job, "queued-allocs", { Status: "blocked", PreviousEval: evaluation.ID });
        completed.BlockedEval = blocked.ID;
      }
      state.evals.put(evalId, completed);
      this.setQueued(evaluation.Namespace, evaluation.JobID, outcome.queued);
      this.refreshJobStatus(evaluation.Namespace, evaluation.JobID);
      ctx.events.record("eval.complete", { service: "scheduler", subject: evalId, detail: { job: evaluation.JobID, placed: outcome.placed, queued: outcome.queued } });
      return { eval: evalId, placed: outcome.placed, queued: outcome.queued };
    });
  }

  /** Re-runs blocked evals (capacity may have appeared). */
  unblock(): void {
    const { state, ctx } = this;
    for (const evaluation of [...state.evals.values()].filter((e) => e.Status === "blocked").sort((a, b) => a.CreateIndex - b.CreateIndex)) {
      const index = ctx.store.writeIndex();
      state.evals.put(evaluation.ID, { ...evaluation, Status: "pending", ModifyIndex: index, ModifyTime: ctx.clock.now() });
      ctx.clock.schedule({ at: ctx.clock.now() + this.duration("evalProcess"), kind: TIMERS.eval, subject: evaluation.ID });
    }
  }

  private reconcile(job: JobRow | undefined, evaluation: EvalRow) {
    const outcome = { placed: 0, queued: {} as Record<string, number>, failed: null as Record<string, unknown> | null, deploymentId: "" };
    const { state } = this;
    const allocs = state.allocsOfJob(evaluation.Namespace, evaluation.JobID);
    if (!job || job.Stop) {
      for (const alloc of allocs) if (alloc.DesiredStatus === "run") this.stopAlloc(alloc, "alloc not needed due to job update");
      this.cancelDeployments(evaluation.Namespace, evaluation.JobID, DEPLOYMENT_DESCRIPTIONS.stoppedJob);
      return outcome;
    }
    if (job.Type === "system" || job.Type === "sysbatch") return this.reconcileSystem(job, evaluation, allocs, outcome);
    const deployment = this.deploymentFor(job);
    for (const group of job.TaskGroups as unknown as Group[]) {
      const live = allocs.filter((a) => a.TaskGroup === group.Name && a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
      // Allocations whose group changed only in count are updated in place, not replaced.
      const inPlace = live.filter((a) => a.JobVersion !== job.Version && this.sameGroupSpec(a, group));
      for (const alloc of inPlace) this.updateInPlace(alloc, job, deployment);
      const updated = new Set(inPlace.map((a) => a.ID));
      const current = live.filter((a) => a.JobVersion === job.Version || updated.has(a.ID));
      const old = live.filter((a) => a.JobVersion !== job.Version && !updated.has(a.ID));
      const maxParallel = Number(group.Update?.MaxParallel ?? 0);
      const rolling = deployment !== undefined && old.length > 0 && maxParallel > 0;
      const deploymentGroup = deployment?.TaskGroups[group.Name];
      let toPlace: number;
      let canary = false;
      if (!rolling) {
        for (const alloc of old) this.stopAlloc(alloc, "alloc is being updated due to job update");
        toPlace = Math.max(0, group.Count - current.length);
      } else if (deploymentGroup && deploymentGroup.DesiredCanaries > 0 && !deploymentGroup.Promoted) {
        // Canaries run beside the old version until promoted.
        toPlace = Math.max(0, deploymentGroup.DesiredCanaries - current.length);
        canary = true;
      } else if (deployment!.Status === "paused") {
        toPlace = 0;
      } else {
        // Old allocations the new ones (promoted canaries included) already make surplus stop first;
        // then the update rolls max_parallel at a time, each batch once the previous is healthy.
        const surplus = Math.max(0, current.length + old.length - group.Count);
        for (const alloc of old.slice(0, surplus)) this.stopAlloc(alloc, "alloc is being updated due to job update");
        const remainingOld = old.slice(surplus);
        const unhealthyNew = current.filter((a) => (a.DeploymentStatus as { Healthy?: boolean } | null)?.Healthy !== true).length;
        toPlace = Math.max(0, Math.min(group.Count - current.length, maxParallel - unhealthyNew));
        for (const alloc of remainingOld.slice(0, toPlace)) this.stopAlloc(alloc, "alloc is being updated due to job update");
      }
      // More running than wanted: stop the newest extras.
      for (const alloc of current.slice(Math.max(group.Count, deploymentGroup?.DesiredCanaries ?? 0)).reverse()) this.stopAlloc(alloc, "alloc not needed due to job update");

      const usedNames = new Set(live.filter((a) => a.DesiredStatus === "run").map((a) => a.Name));
      let unplaced = 0;
      for (let i = 0; i < toPlace; i++) {
        const node = this.pickNode(job, group);
        if (!node) {
          unplaced = toPlace - i;
          break;
        }
        const name = nextAllocName(job.ID, group.Name, usedNames);
        usedNames.add(name);
        this.placeAlloc(job, group, node, evaluation, name, deployment, canary);
        outcome.placed++;
      }
      outcome.queued[group.Name] = unplaced;
      if (unplaced > 0) {
        outcome.failed ??= {};
        outcome.failed[group.Name] = allocMetric(state.nodes.size, unplaced, this.exhaustedDimensions(job, group));
      }
    }
    if (deployment) {
      outcome.deploymentId = deployment.ID;
      // A deployment the plan met at once (every allocation updated in place and already healthy) is done.
      this.succeedIfComplete(deployment.ID);
    }
    return outcome;
  }

  /** Whether an allocation's group, at its version, differs from `group` in nothing but Count. */
  private sameGroupSpec(alloc: AllocRow, group: Group): boolean {
    const version = this.state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion));
    const before = (version?.TaskGroups as unknown as Group[] | undefined)?.find((g) => g.Name === group.Name);
    if (!before) return false;
    const strip = (g: Group) => canonicalJSON({ ...g, Count: 0 });
    return strip(before) === strip(group);
  }

  /** An in-place update: the allocation moves to the new version (and its deployment) as it is. */
  private updateInPlace(alloc: AllocRow, job: JobRow, deployment: DeploymentRow | undefined): void {
    const { state, ctx } = this;
    const index = ctx.store.writeIndex();
    const status = alloc.DeploymentStatus as { Healthy?: boolean; Canary?: boolean } | null;
    const healthy = status?.Healthy === true;
    // Joining another deployment clears the canary mark (Nomad's scheduler resets DeploymentStatus
    // then), so a promoted canary counts as an ordinary allocation of the new version. Its health
    // is kept (Nomad's client re-checks it; the allocation is already running and healthy here).
    const moved = deployment !== undefined && deployment.ID !== alloc.DeploymentID;
    const deploymentStatus = moved && status?.Canary ? { ...status, Canary: false } : alloc.DeploymentStatus;
    state.allocs.put(alloc.ID, { ...alloc, JobVersion: job.Version, DeploymentID: deployment?.ID ?? alloc.DeploymentID, DeploymentStatus: deploymentStatus, ModifyIndex: index, ModifyTime: ctx.clock.now() });
    if (deployment) {
      this.updateDeploymentGroup(deployment.ID, alloc.TaskGroup, (g) => ({ ...g, PlacedAllocs: g.PlacedAllocs + 1, HealthyAllocs: g.HealthyAllocs + (healthy ? 1 : 0) }));
    }
  }

  /**
   * What a plan would do per group (Nomad's DesiredTGUpdates), computed as a
   * dry run of the reconciler against the current allocations.
   */
  planUpdates(job: Record<string, unknown>): Record<string, Record<string, number>> {
    const { state } = this;
    const ns = job.Namespace as string;
    const id = job.ID as string;
    const existing = state.job(ns, id);
    const out: Record<string, Record<string, number>> = {};
    for (const group of job.TaskGroups as unknown as Group[]) {
      const u = { Canary: 0, DestructiveUpdate: 0, Ignore: 0, InPlaceUpdate: 0, Migrate: 0, Place: 0, Preemptions: 0, Reconnect: 0, RescheduleLater: 0, RescheduleNow: 0, Stop: 0 };
      const live = existing
        ? state.allocsOfJob(ns, id).filter((a) => a.TaskGroup === group.Name && a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus))
        : [];
      const kept = live.slice(0, group.Count);
      u.Stop = live.length - kept.length;
      u.Place = Math.max(0, group.Count - live.length);
      const unchanged = existing !== undefined && !specChanged(existing, job as JobRow);
      const destructive = unchanged ? [] : kept.filter((a) => !this.sameGroupSpec(a, group));
      const inPlace = unchanged ? [] : kept.filter((a) => !destructive.includes(a));
      u.InPlaceUpdate = unchanged ? 0 : inPlace.length;
      u.Ignore = unchanged ? kept.length : 0;
      const canary = Number(group.Update?.Canary ?? 0);
      const maxParallel = Number(group.Update?.MaxParallel ?? 0);
      if (destructive.length > 0 && canary > 0) {
        u.Canary = canary;
        u.Ignore += destructive.length;
      } else if (destructive.length > 0) {
        u.DestructiveUpdate = maxParallel > 0 ? Math.min(maxParallel, destructive.length) : destructive.length;
        u.Ignore += destructive.length - u.DestructiveUpdate;
      }
      out[group.Name] = u;
    }
    return out;
  }

  /**
   * System and sysbatch jobs: one allocation per feasible node, whatever the
   * count; allocations on nodes that no longer qualify are stopped, and a
   * changed spec replaces them node by node. Sysbatch allocations that
   * completed are not run again on the same node.
   */
  private reconcileSystem(job: JobRow, evaluation: EvalRow, allocs: AllocRow[], outcome: { placed: number; queued: Record<string, number>; failed: Record<string, unknown> | null; deploymentId: string }) {
    for (const group of job.TaskGroups as unknown as Group[]) {
      const mine = allocs.filter((a) => a.TaskGroup === group.Name);
      const feasible = new Set(this.feasibleNodes(job, group).map((n) => n.ID));
      for (const alloc of mine) {
        const live = alloc.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(alloc.ClientStatus);
        if (!live) continue;
        if (!feasible.has(alloc.NodeID)) this.stopAlloc(alloc, "alloc not needed as node is tainted");
        else if (alloc.JobVersion !== job.Version && !this.sameGroupSpec(alloc, group)) this.stopAlloc(alloc, "alloc is being updated due to job update");
        else if (alloc.JobVersion !== job.Version) this.updateInPlace(alloc, job, undefined);
      }
      const covered = new Set(
        this.state
          .allocsOfJob(job.Namespace, job.ID)
          .filter((a) => a.TaskGroup === group.Name && ((a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus)) || (job.Type === "sysbatch" && a.ClientStatus === "complete" && a.JobVersion === job.Version)))
          .map((a) => a.NodeID),
      );
      const need = group as Group;
      let unplaced = 0;
      const exhausted: Record<string, number> = {};
      for (const node of this.state.nodes.sorted()) {
        if (!feasible.has(node.ID) || covered.has(node.ID)) continue;
        const dimension = this.exhaustion(node, need);
        if (dimension !== undefined) {
          exhausted[dimension] = (exhausted[dimension] ?? 0) + 1;
          unplaced++;
          continue;
        }
        this.placeAlloc(job, group, node, evaluation, `${job.ID}.${group.Name}[0]`, undefined);
        outcome.placed++;
      }
      outcome.queued[group.Name] = unplaced;
      if (unplaced > 0) {
        outcome.failed ??= {};
        outcome.failed[group.Name] = allocMetric(this.state.nodes.size, unplaced, exhausted);
      }
    }
    return outcome;
  }

  /** Nodes a group may run on (status, eligibility, datacenters, pool, constraints), by node ID. */
  private feasibleNodes(job: JobRow, group: Group): NodeRow[] {
    return [...this.state.nodes.values()]
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

  private fits(node: NodeRow, group: Group): boolean {
    return this.exhaustion(node, group) === undefined;
  }

  /** Why the group does not fit on the node (Nomad's AllocMetric dimension), checked as rank.go does: network first. */
  private exhaustion(node: NodeRow, group: Group): string | undefined {
    const need = groupResources(group);
    const used = this.state.allocsOnNode(node.ID).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
    const ports = assignGroupPorts(node, group.Networks, used);
    if ("dimension" in ports) return ports.dimension;
    const fitsCapacity = used.reduce((sum, a) => sum + a.Cpu, 0) + need.cpu <= node.CpuShares && used.reduce((sum, a) => sum + a.MemoryMB, 0) + need.memoryMB <= node.MemoryMB;
    return fitsCapacity ? undefined : "cpu or memory";
  }

  /** Each dimension that exhausted a feasible node, counted (AllocMetric.DimensionExhausted). */
  private exhaustedDimensions(job: JobRow, group: Group): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const node of this.feasibleNodes(job, group)) {
      const dimension = this.exhaustion(node, group);
      if (dimension !== undefined) counts[dimension] = (counts[dimension] ?? 0) + 1;
    }
    return counts;
  }

  /** Capacity changed (a node appeared, came back or became eligible): blocked evals run again, system jobs re-evaluate. */
  capacityChanged(node?: NodeRow): void {
    this.unblock();
    for (const job of this.state.jobs.sorted()) {
      if ((job.Type === "system" || job.Type === "sysbatch") && !job.Stop) this.createEval(job, "node-update", node ? { NodeID: node.ID, NodeModifyIndex: node.ModifyIndex } : {});
    }
  }

  // ---- placement -------------------------------------------------------------------

  /** The least-loaded feasible node with room (ties by node ID). */
  private pickNode(job: JobRow, group: Group): NodeRow | undefined {
    let best: { node: NodeRow; load: number } | undefined;
    for (const node of this.feasibleNodes(job, group)) {
      if (!this.fits(node, group)) continue;
      const used = this.state.allocsOnNode(node.ID).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
      const load = used.reduce((sum, a) => sum + a.Cpu, 0) / Math.max(1, node.CpuShares);
      if (!best || load < best.load) best = { node, load };
    }
    return best?.node;
  }

  private placeAlloc(job: JobRow, group: Group, node: NodeRow, evaluation: EvalRow, name: string, deployment: DeploymentRow | undefined, canary = false): void {
    const { state, ctx } = this;
    const now = ctx.clock.now();
    const need = groupResources(group);
    const live = state.allocsOnNode(node.ID).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
    const ports = assignGroupPorts(node, group.Networks, live);
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
    };
    // A replacement of a migrated allocation (drain, alloc stop) is linked to it both ways.
    const previous = state
      .allocsOfJob(job.Namespace, job.ID)
      .find((a) => a.TaskGroup === group.Name && a.DesiredStatus === "stop" && (a.DesiredTransition as { Migrate?: boolean } | null)?.Migrate === true && !a.NextAllocation);
    if (previous) {
      alloc.PreviousAllocation = previous.ID;
      state.allocs.put(previous.ID, { ...previous, NextAllocation: alloc.ID, ModifyIndex: index });
    }
    state.allocs.put(alloc.ID, alloc);
    this.bumpSummary(job.Namespace, job.ID, group.Name, (s) => ({ ...s, Starting: s.Starting + 1, Queued: Math.max(0, s.Queued - 1) }));
    if (deployment) {
      this.updateDeploymentGroup(deployment.ID, group.Name, (g) => ({
        ...g,
        PlacedAllocs: g.PlacedAllocs + 1,
        PlacedCanaries: canary ? [...(g.PlacedCanaries ?? []), alloc.ID] : g.PlacedCanaries,
        RequireProgressBy: g.RequireProgressBy ?? now + nanosToMs(g.ProgressDeadline),
      }));
      this.armProgressDeadline(deployment.ID);
      // The allocation must be healthy within healthy_deadline of being placed, or it counts as unhealthy.
      const healthyDeadline = nanosToMs(Number(group.Update?.HealthyDeadline ?? 300_000_000_000));
      if (healthyDeadline > 0) ctx.clock.schedule({ at: now + healthyDeadline, kind: TIMERS.healthyDeadline, subject: alloc.ID });
    }
    ctx.clock.schedule({ at: now + this.duration("allocStart"), kind: TIMERS.allocStart, subject: alloc.ID });
    ctx.events.record("alloc.placed", { service: "scheduler", subject: alloc.ID, detail: { job: job.ID, group: group.Name, node: node.Name } });
  }

  // ---- allocation lifecycle --------------------------------------------------------------

  /** The allocation's tasks and restart policy, from the job version it runs. */
  private tasksOf(alloc: AllocRow): { tasks: TaskSpec[]; restart: RestartPolicy } {
    const job = this.state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? this.state.job(alloc.Namespace, alloc.JobID);
    const group = (job?.TaskGroups as unknown as Array<Record<string, unknown>> | undefined)?.find((g) => g.Name === alloc.TaskGroup);
    const tasks = ((group?.Tasks as Array<Record<string, unknown>> | undefined) ?? []).map((t) => ({ Name: String(t.Name), KillTimeout: Number(t.KillTimeout ?? 5_000_000_000) }));
    const policy = (group?.RestartPolicy ?? {}) as Record<string, unknown>;
    return { tasks, restart: { Attempts: Number(policy.Attempts ?? 2), Interval: Number(policy.Interval ?? 1_800_000_000_000), Mode: String(policy.Mode ?? "fail") } };
  }

  /** TaskStates after the allocation's tasks end (see task-states.ts). */
  private finishedTasks(alloc: AllocRow, outcome: "complete" | "failed" | "killed"): TaskStatesRow {
    const { tasks, restart } = this.tasksOf(alloc);
    return tasksFinished(alloc.TaskStates as TaskStatesRow | null, tasks, outcome, { placedAt: alloc.CreateTime, now: this.ctx.clock.now() }, restart);
  }

  private allocStarted(allocId: string): unknown {
    const { state, ctx } = this;
    const alloc = state.allocs.get(allocId);
    if (!alloc || alloc.ClientStatus !== "pending" || alloc.DesiredStatus !== "run") return { alloc: allocId, skipped: true };
    return ctx.store.write(() => {
      const now = ctx.clock.now();
      this.transitionAlloc(alloc, "running", "Tasks are running", { TaskStates: tasksStarted(this.tasksOf(alloc).tasks, alloc.CreateTime, now) });
      if (alloc.JobType === "batch" || alloc.JobType === "sysbatch") {
        const job = state.job(alloc.Namespace, alloc.JobID);
        const override = (job?.Meta as Record<string, string> | null | undefined)?.[BATCH_RUN_META];
        ctx.clock.schedule({ at: now + (override ? parseDurationMs(override) : this.duration("batchRun")), kind: TIMERS.batchDone, subject: allocId });
      } else if (alloc.DeploymentID) {
        const job = state.job(alloc.Namespace, alloc.JobID);
        const group = (job?.TaskGroups as unknown as Group[] | undefined)?.find((g) => g.Name === alloc.TaskGroup);
        const minHealthy = nanosToMs(Number(group?.Update?.MinHealthyTime ?? 10_000_000_000));
        ctx.clock.schedule({ at: now + minHealthy, kind: TIMERS.allocHealthy, subject: allocId });
      }
      return { alloc: allocId, status: "running" };
    });
  }

  /** Healthy after min_healthy_time of running: counts for the deployment, which may then roll on or succeed. */
  private allocHealthy(allocId: string): unknown {
    const { state, ctx } = this;
    const alloc = state.allocs.get(allocId);
    if (!alloc || alloc.ClientStatus !== "running" || !alloc.DeploymentID) return { alloc: allocId, skipped: true };
    const deployment = state.deployments.get(alloc.DeploymentID);
    return ctx.store.write(() => {
      const now = ctx.clock.now();
      const index = ctx.store.writeIndex();
      const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
      state.allocs.put(allocId, { ...alloc, DeploymentStatus: { Healthy: true, Timestamp: now, Canary: canary, ModifyIndex: index }, ModifyIndex: index, ModifyTime: now });
      ctx.clock.cancelFor(TIMERS.healthyDeadline, allocId);
      if (!deployment || !ACTIVE_DEPLOYMENT.has(deployment.Status)) return { alloc: allocId, healthy: true };
      this.updateDeploymentGroup(deployment.ID, alloc.TaskGroup, (g) => ({ ...g, HealthyAllocs: g.HealthyAllocs + 1, RequireProgressBy: now + nanosToMs(g.ProgressDeadline) }));
      this.armProgressDeadline(deployment.ID);
      this.advanceDeployment(deployment.ID);
      return { alloc: allocId, healthy: true };
    });
  }

  private batchDone(allocId: string): unknown {
    const { state, ctx } = this;
    const alloc = state.allocs.get(allocId);
    if (!alloc || alloc.ClientStatus !== "running") return { alloc: allocId, skipped: true };
    return ctx.store.write(() => {
      this.transitionAlloc(alloc, "complete", "All tasks have completed", { TaskStates: this.finishedTasks(alloc, "complete") });
      this.refreshJobStatus(alloc.Namespace, alloc.JobID);
      return { alloc: allocId, status: "complete" };
    });
  }

  /** healthy_deadline passed without the allocation becoming healthy: it is unhealthy, and its deployment fails. */
  private healthyDeadlinePassed(allocId: string): unknown {
    const { state, ctx } = this;
    const alloc = state.allocs.get(allocId);
    if (!alloc || alloc.DesiredStatus !== "run" || !alloc.DeploymentID) return { alloc: allocId, skipped: true };
    if ((alloc.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy === true) return { alloc: allocId, skipped: true };
    const deployment = state.deployments.get(alloc.DeploymentID);
    return ctx.store.write(() => {
      const now = ctx.clock.now();
      const index = ctx.store.writeIndex();
      const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
      state.allocs.put(allocId, { ...alloc, DeploymentStatus: { Healthy: false, Timestamp: now, Canary: canary, ModifyIndex: index }, ModifyIndex: index, ModifyTime: now });
      ctx.clock.cancelFor(TIMERS.allocHealthy, allocId);
      if (deployment && ACTIVE_DEPLOYMENT.has(deployment.Status)) {
        this.updateDeploymentGroup(deployment.ID, alloc.TaskGroup, (g) => ({ ...g, UnhealthyAllocs: g.UnhealthyAllocs + 1 }));
        this.failDeployment(deployment.ID, DEPLOYMENT_DESCRIPTIONS.failedAllocations);
      }
      return { alloc: allocId, healthy: false };
    });
  }

  /** Client-side status change with the summary bookkeeping of §6.4. */
  transitionAlloc(alloc: AllocRow, clientStatus: string, description: string, extra: Partial<AllocRow> = {}): AllocRow {
    const { state, ctx } = this;
    const index = ctx.store.writeIndex();
    const next: AllocRow = { ...alloc, ...extra, ClientStatus: clientStatus, ClientDescription: description, ModifyIndex: index, ModifyTime: ctx.clock.now() };
    state.allocs.put(alloc.ID, next);
    const bucket = SUMMARY_BUCKET[clientStatus];
    const previous = SUMMARY_BUCKET[alloc.ClientStatus];
    this.bumpSummary(alloc.Namespace, alloc.JobID, alloc.TaskGroup, (s) => {
      const out = { ...s };
      // Complete and Failed are never decremented (state_store updateSummaryWithAlloc).
      if (previous && previous !== "Complete" && previous !== "Failed") out[previous] = Math.max(0, out[previous] - 1);
      if (bucket) out[bucket] += 1;
      return out;
    });
    ctx.events.record("alloc.transition", { service: "scheduler", subject: alloc.ID, detail: { from: alloc.ClientStatus, to: clientStatus } });
    return next;
  }

  stopAlloc(alloc: AllocRow, description: string): void {
    const running = NON_TERMINAL_CLIENT.has(alloc.ClientStatus);
    const stopped = this.transitionAlloc(alloc, running ? "complete" : alloc.ClientStatus, "All tasks have completed", {
      DesiredStatus: "stop",
      DesiredDescription: description,
      // Tasks the client runs are killed; an allocation the client never reported on stays without states.
      TaskStates: running && alloc.TaskStates ? this.finishedTasks(alloc, "killed") : alloc.TaskStates,
    });
    for (const kind of [TIMERS.allocStart, TIMERS.allocHealthy, TIMERS.batchDone, TIMERS.healthyDeadline]) this.ctx.clock.cancelFor(kind, stopped.ID);
  }

  /** Fault: an allocation fails. With an active deployment it is reported unhealthy and fails the deployment. */
  failAlloc(alloc: AllocRow): void {
    this.ctx.store.write(() => {
      const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
      const failed = this.transitionAlloc(alloc, "failed", "Failed tasks", {
        TaskStates: this.finishedTasks(alloc, "failed"),
        DeploymentStatus: alloc.DeploymentID ? { Healthy: false, Timestamp: this.ctx.clock.now(), Canary: canary, ModifyIndex: this.ctx.store.writeIndex() } : alloc.DeploymentStatus,
      });
      // A failed allocation is done: none of its timers may touch it again.
      for (const kind of [TIMERS.allocStart, TIMERS.allocHealthy, TIMERS.batchDone, TIMERS.healthyDeadline]) this.ctx.clock.cancelFor(kind, failed.ID);
      const deployment = alloc.DeploymentID ? this.state.deployments.get(alloc.DeploymentID) : undefined;
      if (deployment && ACTIVE_DEPLOYMENT.has(deployment.Status)) {
        this.updateDeploymentGroup(deployment.ID, alloc.TaskGroup, (g) => ({ ...g, UnhealthyAllocs: g.UnhealthyAllocs + 1 }));
        this.failDeployment(deployment.ID, DEPLOYMENT_DESCRIPTIONS.failedAllocations);
      }
      this.refreshJobStatus(alloc.Namespace, alloc.JobID);
    });
  }

  /** Fault: an allocation completes (its tasks exit successfully). */
  completeAlloc(alloc: AllocRow): void {
    this.ctx.store.write(() => {
      this.transitionAlloc(alloc, "complete", "All tasks have completed", { TaskStates: this.finishedTasks(alloc, "complete") });
      for (const kind of [TIMERS.allocStart, TIMERS.allocHealthy, TIMERS.batchDone, TIMERS.healthyDeadline]) this.ctx.clock.cancelFor(kind, alloc.ID);
      this.refreshJobStatus(alloc.Namespace, alloc.JobID);
    });
  }

  /** An allocation whose node is gone: lost, and none of its timers may touch it again. */
  loseAlloc(alloc: AllocRow, description: string): void {
    this.transitionAlloc(alloc, "lost", description, { DesiredStatus: "stop", DesiredDescription: description });
    for (const kind of [TIMERS.allocStart, TIMERS.allocHealthy, TIMERS.batchDone]) this.ctx.clock.cancelFor(kind, alloc.ID);
  }

  /** Virtual ms from a placement to the allocation running: the timing's evalProcess + allocStart. */
  startupMs(): number {
    return this.duration("evalProcess") + this.duration("allocStart");
  }

  /** Fault: a node goes down: its allocations are lost and replacements are scheduled elsewhere. */
  nodeDown(node: NodeRow): void {
    const { state, ctx } = this;
    ctx.store.write(() => {
      const jobs = new Set<string>();
      for (const alloc of state.allocsOnNode(node.ID)) {
        if (alloc.DesiredStatus !== "run" || !NON_TERMINAL_CLIENT.has(alloc.ClientStatus)) continue;
        this.loseAlloc(alloc, "alloc is lost since its node is down");
        jobs.add(jobKey(alloc.Namespace, alloc.JobID));
      }
      for (const key of [...jobs].sort()) {
        const job = state.jobs.get(key);
        if (job && !job.Stop && job.Type !== "system" && job.Type !== "sysbatch") this.createEval(job, "node-update", { NodeID: node.ID, NodeModifyIndex: node.ModifyIndex });
      }
    });
  }

  // ---- deployments -------------------------------------------------------------------

  /** The job version's deployment, created (and older active ones cancelled) when a service group has an update block. */
  private deploymentFor(job: JobRow): DeploymentRow | undefined {
    const { state, ctx } = this;
    if (job.Type !== "service") return undefined;
    const groups = (job.TaskGroups as unknown as Group[]).filter((g) => Number(g.Update?.MaxParallel ?? 0) > 0 && g.Count > 0);
    if (groups.length === 0) return undefined;
    const existing = state.deploymentsOfJob(job.Namespace, job.ID).find((d) => d.JobVersion === job.Version && d.JobCreateIndex === job.CreateIndex);
    if (existing) return existing;
    // A version whose allocations already run (an unchanged re-register) needs no deployment.
    const allocs = state.allocsOfJob(job.Namespace, job.ID).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
    if (allocs.length > 0 && allocs.every((a) => a.JobVersion === job.Version)) return undefined;
    this.cancelDeployments(job.Namespace, job.ID, DEPLOYMENT_DESCRIPTIONS.newerJob);
    // Canaries only apply to destructive updates (Nomad's reconciler: requireCanary needs a destructive
    // change): the first version has nothing to compare against, and an in-place update (a revert to
    // the running spec, a count change) updates the allocations where they are.
    const destructive = (g: Group) => allocs.some((a) => a.TaskGroup === g.Name && !this.sameGroupSpec(a, g));
    const canaries = (g: Group) => (destructive(g) ? Number(g.Update?.Canary ?? 0) : 0);
    const needsPromotion = groups.filter((g) => canaries(g) > 0);
    const description =
      needsPromotion.length === 0
        ? DEPLOYMENT_DESCRIPTIONS.running
        : needsPromotion.every((g) => Boolean(g.Update?.AutoPromote))
          ? DEPLOYMENT_DESCRIPTIONS.runningAutoPromotion
          : DEPLOYMENT_DESCRIPTIONS.runningNeedsPromotion;
    const now = ctx.clock.now();
    const index = ctx.store.writeIndex();
    const deployment: DeploymentRow = {
      ID: ctx.ids.uuid(),
      Namespace: job.Namespace,
      JobID: job.ID,
      JobVersion: job.Version,
      JobModifyIndex: job.JobModifyIndex,
      JobSpecModifyIndex: job.JobModifyIndex,
      JobCreateIndex: job.CreateIndex,
      IsMultiregion: false,
      TaskGroups: Object.fromEntries(
        groups.map((g) => [
          g.Name,
          {
            AutoPromote: Boolean(g.Update?.AutoPromote),
            AutoRevert: Boolean(g.Update?.AutoRevert),
            DesiredCanaries: canaries(g),
            DesiredTotal: g.Count,
            HealthyAllocs: 0,
            PlacedAllocs: 0,
            PlacedCanaries: null,
            ProgressDeadline: Number(g.Update?.ProgressDeadline ?? 600_000_000_000),
            Promoted: false,
            RequireProgressBy: null,
            UnhealthyAllocs: 0,
          },
        ]),
      ),
      Status: "running",
      StatusDescription: description,
      EvalPriority: job.Priority,
      CreateTime: now,
      ModifyTime: now,
      CreateIndex: index,
      ModifyIndex: index,
    };
    state.deployments.put(deployment.ID, deployment);
    ctx.events.record("deployment.created", { service: "scheduler", subject: deployment.ID, detail: { job: job.ID, version: job.Version } });
    return deployment;
  }

  /** After a healthy allocation: succeed when every group is done, else ask for the next rolling batch. */
  private advanceDeployment(deploymentId: string): void {
    const { state } = this;
    const deployment = state.deployments.get(deploymentId);
    if (!deployment || deployment.Status !== "running") return;
    const job = state.job(deployment.Namespace, deployment.JobID);
    if (!job || job.Version !== deployment.JobVersion) return;
    const waitingForPromotion = Object.entries(deployment.TaskGroups).filter(([, g]) => g.DesiredCanaries > 0 && !g.Promoted);
    if (waitingForPromotion.length > 0) {
      const canariesHealthy = waitingForPromotion.every(([, g]) => (g.PlacedCanaries ?? []).length >= g.DesiredCanaries && (g.PlacedCanaries ?? []).every((id) => (state.allocs.get(id)?.DeploymentStatus as { Healthy?: boolean } | null)?.Healthy === true));
      if (canariesHealthy && waitingForPromotion.every(([, g]) => g.AutoPromote)) this.promote(deploymentId, undefined);
      return;
    }
    if (this.succeedIfComplete(deploymentId)) return;
    const live = state.allocsOfJob(job.Namespace, job.ID).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
    const oldLive = live.some((a) => a.JobVersion !== job.Version);
    // A group still short of its count (a rolling update that also scaled up) needs the next batch too.
    const short = Object.entries(deployment.TaskGroups).some(([name, g]) => live.filter((a) => a.TaskGroup === name && a.JobVersion === job.Version).length < g.DesiredTotal);
    if (oldLive || short) this.createEval(job, "deployment-watcher", { DeploymentID: deploymentId });
  }

  /** Marks a running deployment successful (and its version stable) once every group is healthy and no older allocation runs. */
  private succeedIfComplete(deploymentId: string): boolean {
    const { state } = this;
    const deployment = state.deployments.get(deploymentId);
    if (!deployment || deployment.Status !== "running") return false;
    const job = state.job(deployment.Namespace, deployment.JobID);
    if (!job || job.Version !== deployment.JobVersion) return false;
    if (Object.values(deployment.TaskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted)) return false;
    const oldLive = state.allocsOfJob(job.Namespace, job.ID).some((a) => a.JobVersion !== job.Version && a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
    const done = Object.values(deployment.TaskGroups).every((g) => g.HealthyAllocs >= Math.max(g.DesiredTotal, g.DesiredCanaries));
    if (!done || oldLive) return false;
    this.finishDeployment(deploymentId, "successful", DEPLOYMENT_DESCRIPTIONS.successful);
    this.markStable(job);
    return true;
  }

  finishDeployment(deploymentId: string, status: "successful" | "failed" | "cancelled", description: string): void {
    const { state, ctx } = this;
    const deployment = state.deployments.get(deploymentId);
    if (!deployment) return;
    const index = ctx.store.writeIndex();
    state.deployments.put(deploymentId, { ...deployment, Status: status, StatusDescription: description, ModifyIndex: index, ModifyTime: ctx.clock.now() });
    ctx.clock.cancelFor(TIMERS.progressDeadline, deploymentId);
    ctx.events.record(`deployment.${status}`, { service: "scheduler", subject: deploymentId, detail: { job: deployment.JobID, description } });
  }

  setDeploymentPaused(deploymentId: string, paused: boolean): void {
    const { state, ctx } = this;
    const deployment = state.deployments.get(deploymentId)!;
    const index = ctx.store.writeIndex();
    state.deployments.put(deploymentId, {
      ...deployment,
      Status: paused ? "paused" : "running",
      StatusDescription: paused ? DEPLOYMENT_DESCRIPTIONS.paused : DEPLOYMENT_DESCRIPTIONS.running,
      ModifyIndex: index,
      ModifyTime: ctx.clock.now(),
    });
  }

  private cancelDeployments(namespace: string, jobId: string, description: string): void {
    for (const d of this.state.deploymentsOfJob(namespace, jobId)) if (ACTIVE_DEPLOYMENT.has(d.Status)) this.finishDeployment(d.ID, "cancelled", description);
  }

  private updateDeploymentGroup(deploymentId: string, group: string, update: (g: DeploymentRow["TaskGroups"][string]) => DeploymentRow["TaskGroups"][string]): void {
    const { state, ctx } = this;
    const deployment = state.deployments.get(deploymentId);
    const current = deployment?.TaskGroups[group];
    if (!deployment || !current) return;
    const index = ctx.store.writeIndex();
    state.deployments.put(deploymentId, { ...deployment, TaskGroups: { ...deployment.TaskGroups, [group]: update(current) }, ModifyIndex: index, ModifyTime: ctx.clock.now() });
  }

  /** One progress-deadline timer per deployment, at the earliest RequireProgressBy of its groups. */
  private armProgressDeadline(deploymentId: string): void {
    const deployment = this.state.deployments.get(deploymentId);
    if (!deployment) return;
    this.ctx.clock.cancelFor(TIMERS.progressDeadline, deploymentId);
    const deadlines = Object.values(deployment.TaskGroups)
      .filter((g) => g.RequireProgressBy !== null && g.ProgressDeadline > 0 && g.HealthyAllocs < g.DesiredTotal)
      .map((g) => g.RequireProgressBy!);
    if (deadlines.length > 0) this.ctx.clock.schedule({ at: Math.min(...deadlines), kind: TIMERS.progressDeadline, subject: deploymentId });
  }

  private progressDeadlinePassed(deploymentId: string): unknown {
    const deployment = this.state.deployments.get(deploymentId);
    if (!deployment || deployment.Status !== "running") return { deployment: deploymentId, skipped: true };
    this.ctx.store.write(() => this.failDeployment(deploymentId, DEPLOYMENT_DESCRIPTIONS.progressDeadline));
    return { deployment: deploymentId, status: "failed" };
  }

  private markStable(job: JobRow): void {
    const { state, ctx } = this;
    const index = ctx.store.writeIndex();
    const stable = state.jobs.put(jobKey(job.Namespace, job.ID), { ...job, Stable: true, ModifyIndex: index });
    state.versions.put(versionKey(job.Namespace, job.ID, job.Version), stable);
  }

  /**
   * Fails a deployment; with auto_revert on a group, reverts the job to its
   * latest stable version (a new version, hence a new deployment), with
   * Nomad's description suffixes. Returns the reverted-to version, if any.
   */
  failDeployment(deploymentId: string, base: string): { revertedVersion: number | null; evalId: string; evalIndex: number } {
    const { state } = this;
    const deployment = state.deployments.get(deploymentId)!;
    const job = state.job(deployment.Namespace, deployment.JobID);
    const autoRevert = Object.values(deployment.TaskGroups).some((g) => g.AutoRevert);
    if (!autoRevert || !job) {
      this.finishDeployment(deploymentId, "failed", base);
      return { revertedVersion: null, evalId: "", evalIndex: 0 };
    }
    const stable = state.jobVersions(job.Namespace, job.ID).find((v) => v.Stable && v.Version !== job.Version);
    if (!stable) {
      this.finishDeployment(deploymentId, "failed", `${base} - no stable job version to auto revert to`);
      return { revertedVersion: null, evalId: "", evalIndex: 0 };
    }
    if (!specChanged(stable, job)) {
      this.finishDeployment(deploymentId, "failed", `${base} - not rolling back to stable job version ${stable.Version} as current job has same specification`);
      return { revertedVersion: null, evalId: "", evalIndex: 0 };
    }
    this.finishDeployment(deploymentId, "failed", `${base} - rolling back to job version ${stable.Version}`);
    const result = this.revert(job.Namespace, job.ID, stable.Version);
    return { revertedVersion: stable.Version, evalId: result.EvalID, evalIndex: result.EvalCreateIndex };
  }

  /** Promotes canaries (all groups, or the named ones); throws Nomad's RPC errors. Returns the follow-up eval. */
  promote(deploymentId: string, groups: readonly string[] | undefined): EvalRow {
    const { state, ctx } = this;
    const deployment = state.deployments.get(deploymentId);
    if (!deployment) throw new Error("deployment not found");
    if (!ACTIVE_DEPLOYMENT.has(deployment.Status)) throw new Error("can't promote terminal deployment");
    const chosen = Object.entries(deployment.TaskGroups).filter(([name, g]) => g.DesiredCanaries > 0 && (!groups || groups.includes(name)));
    if (chosen.length === 0) throw new Error("no canaries to promote");
    const unhealthy: string[] = [];
    for (const [name, g] of chosen) {
      for (const id of g.PlacedCanaries ?? []) {
        if ((state.allocs.get(id)?.DeploymentStatus as { Healthy?: boolean } | null)?.Healthy !== true) unhealthy.push(`Canary allocation "${id}" for group "${name}" is not healthy`);
      }
      if ((g.PlacedCanaries ?? []).length < g.DesiredCanaries) unhealthy.push(`Task group "${name}" has ${(g.PlacedCanaries ?? []).length}/${g.DesiredCanaries} healthy canaries`);
    }
    if (unhealthy.length) throw new Error(formatMultierror(unhealthy));
    const index = ctx.store.writeIndex();
    const taskGroups = { ...deployment.TaskGroups };
    for (const [name, g] of chosen) taskGroups[name] = { ...g, Promoted: true };
    const stillWaiting = Object.values(taskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted);
    state.deployments.put(deploymentId, {
      ...deployment,
      TaskGroups: taskGroups,
      StatusDescription: stillWaiting ? deployment.StatusDescription : DEPLOYMENT_DESCRIPTIONS.running,
      ModifyIndex: index,
      ModifyTime: ctx.clock.now(),
    });
    ctx.events.record("deployment.promoted", { service: "scheduler", subject: deploymentId, detail: { groups: chosen.map(([name]) => name) } });
    const job = state.job(deployment.Namespace, deployment.JobID)!;
    return this.createEval(job, "deployment-watcher", { DeploymentID: deploymentId });
  }

  /**
   * Health reports: an operator's (`/v1/deployment/allocation-health`, its own
   * raft message, DeploymentAllocHealth) or a client's (the control API's
   * alloc health, an allocation update as far as events go).
   */
  setAllocHealth(deploymentId: string, healthy: readonly string[], unhealthy: readonly string[], reporter: "operator" | "client" = "operator"): { revertedVersion: number | null; evalId: string; evalIndex: number } {
    const { state, ctx } = this;
    const deployment = state.deployments.get(deploymentId);
    if (!deployment) throw new Error("deployment not found");
    if (!ACTIVE_DEPLOYMENT.has(deployment.Status)) throw new Error("can't set health of allocations for a terminal deployment");
    for (const id of [...healthy, ...unhealthy]) {
      const alloc = state.allocs.get(id);
      if (!alloc || alloc.DeploymentID !== deploymentId) throw new Error(`Deployment "${deploymentId}" does not contain allocation "${id}"`);
    }
    const now = ctx.clock.now();
    if (reporter === "operator") ctx.events.record("deployment.alloc-health", { service: "scheduler", subject: deploymentId, detail: { healthy: [...healthy], unhealthy: [...unhealthy] } });
    for (const [ids, isHealthy] of [[healthy, true], [unhealthy, false]] as const) {
      for (const id of ids) {
        const alloc = state.allocs.get(id)!;
        const index = ctx.store.writeIndex();
        const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
        state.allocs.put(id, { ...alloc, DeploymentStatus: { Healthy: isHealthy, Timestamp: now, Canary: canary, ModifyIndex: index }, ModifyIndex: index, ModifyTime: now });
        ctx.clock.cancelFor(TIMERS.allocHealthy, id);
        this.updateDeploymentGroup(deploymentId, alloc.TaskGroup, (g) => (isHealthy ? { ...g, HealthyAllocs: g.HealthyAllocs + 1 } : { ...g, UnhealthyAllocs: g.UnhealthyAllocs + 1 }));
      }
    }
    if (unhealthy.length > 0) return this.failDeployment(deploymentId, DEPLOYMENT_DESCRIPTIONS.failedAllocations);
    this.advanceDeployment(deploymentId);
    const job = state.job(deployment.Namespace, deployment.JobID)!;
    const evaluation = this.createEval(job, "deployment-watcher", { DeploymentID: deploymentId });
    return { revertedVersion: null, evalId: evaluation.ID, evalIndex: evaluation.CreateIndex };
  }

  /** Job.Revert: registers an earlier version's spec as a new version. */
  revert(namespace: string, id: string, version: number, enforcePrior?: number): RegisterResult {
    const { state } = this;
    const current = state.job(namespace, id);
    if (!current) throw new Error(`job "${id}" not found`);
    if (enforcePrior !== undefined && current.Version !== enforcePrior) throw new Error(`Current job has version ${current.Version}; enforcing version ${enforcePrior}`);
    if (current.Version === version) throw new Error("can't revert to current version");
    const target = state.versions.get(versionKey(namespace, id, version));
    if (!target) throw new Error(`job "${id}" in namespace "${namespace}" at version ${version} not found`);
    const spec = { ...target, Stop: false };
    // A revert always writes a new version, even when the spec equals the current one's.
    return this.register(spec, { alwaysNewVersion: true });
  }

  /** Job.Stable: marks a version stable (or not). */
  setStable(namespace: string, id: string, version: number, stable: boolean): number {
    const { state, ctx } = this;
    const target = state.versions.get(versionKey(namespace, id, version));
    if (!target) throw new Error(`job "${id}" in namespace "${namespace}" at version ${version} not found`);
    return ctx.store.write(() => {
      const index = ctx.store.writeIndex();
      state.versions.put(versionKey(namespace, id, version), { ...target, Stable: stable });
      const current = state.job(namespace, id);
      if (current && current.Version === version) state.jobs.put(jobKey(namespace, id), { ...current, Stable: stable, ModifyIndex: index });
      return index;
    });
  }

  /** Job.Evaluate: a new evaluation for the current version. */
  evaluate(namespace: string, id: string): RegisterResult {
    const { state, ctx } = this;
    const job = state.job(namespace, id);
    if (!job) throw new Error("job not found");
    if (isPeriodic(job)) throw new Error("can't evaluate periodic job");
    if (isParameterized(job)) throw new Error("can't evaluate parameterized job");
    return ctx.store.write(() => {
      const evaluation = this.createEval(job, "job-register");
      this.refreshJobStatus(namespace, id);
      return { EvalID: evaluation.ID, EvalCreateIndex: evaluation.CreateIndex, JobModifyIndex: job.JobModifyIndex, Index: evaluation.CreateIndex };
    });
  }

  /** Job.Dispatch: derives a child job from a parameterized one and registers it with an eval. */
  dispatch(namespace: string, id: string, request: { payload: string; meta: Record<string, string>; idempotencyToken: string }) {
    const { state, ctx } = this;
    if (id === "") throw new Error("missing parameterized job ID");
    const parent = state.job(namespace, id);
    if (!parent) throw new Error("parameterized job not found");
    if (!isParameterized(parent)) throw new Error(`Specified job "${id}" is not a parameterized job`);
    if (parent.Stop) throw new Error(`Specified job "${id}" is stopped`);
    const config = parent.ParameterizedJob as { Payload?: string; MetaRequired?: string[] | null; MetaOptional?: string[] | null };
    const hasPayload = request.payload !== "";
    if (config.Payload === "required" && !hasPayload) throw new Error("Payload is not provided but required by parameterized job");
    if (config.Payload === "forbidden" && hasPayload) throw new Error("Payload provided but forbidden by parameterized job");
    const allowed = new Set([...(config.MetaRequired ?? []), ...(config.MetaOptional ?? [])]);
    const unpermitted = Object.keys(request.meta).filter((k) => !allowed.has(k)).sort();
    if (unpermitted.length) throw new Error(`Dispatch request included unpermitted metadata keys: [${unpermitted.join(" ")}]`);
    const missing = (config.MetaRequired ?? []).filter((k) => !(k in request.meta)).sort();
    if (missing.length) throw new Error(`Dispatch did not provide required meta keys: [${missing.join(" ")}]`);
    if (request.idempotencyToken) {
      const earlier = [...state.jobs.values()].find((j) => j.Namespace === namespace && j.ParentID === id && j.DispatchIdempotencyToken === request.idempotencyToken);
      if (earlier) return { DispatchedJobID: earlier.ID, EvalID: "", EvalCreateIndex: 0, JobCreateIndex: earlier.CreateIndex, Index: earlier.ModifyIndex };
    }
    const childId = `${id}/dispatch-${Math.floor(ctx.clock.now() / 1000)}-${ctx.ids.uuid().slice(0, 8)}`;
    const child = {
      ...parent,
      ID: childId,
      Name: childId,
      ParentID: id,
      Dispatched: true,
      DispatchIdempotencyToken: request.idempotencyToken,
      Meta: Object.keys(request.meta).length ? { ...((parent.Meta as Record<string, string> | null) ?? {}), ...request.meta } : parent.Meta,
      Payload: hasPayload ? request.payload : null,
    };
    const result = this.register(child, { alwaysNewVersion: true });
    const created = state.job(namespace, childId)!;
    return { DispatchedJobID: childId, EvalID: result.EvalID, EvalCreateIndex: result.EvalCreateIndex, JobCreateIndex: created.CreateIndex, Index: result.Index };
  }

  /** Periodic force: launches a child of a periodic job now. */
  periodicForce(namespace: string, id: string) {
    const { state, ctx } = this;
    const parent = state.job(namespace, id);
    if (!parent) throw new Error(`job "${id}" not found`);
    if (!isPeriodic(parent)) throw new Error("can't force launch non-periodic job");
    const result = this.launchChild(parent, ctx.clock.now());
    return { EvalCreateIndex: result.EvalCreateIndex, EvalID: result.EvalID, Index: result.Index };
  }

  /** A periodic parent's child for a launch at `atMs`: `<id>/periodic-<unix seconds>`. */
  private launchChild(parent: JobRow, atMs: number): RegisterResult {
    const childId = `${parent.ID}/periodic-${Math.floor(atMs / 1000)}`;
    const child = { ...parent, ID: childId, Name: childId, ParentID: parent.ID, Periodic: null };
    this.ctx.events.record("job.periodic-launch", { service: "scheduler", subject: childId, detail: { parent: parent.ID } });
    return this.register(child, { alwaysNewVersion: true });
  }

  /** Arms the parent's next launch on the virtual clock (replacing any armed one). */
  private schedulePeriodic(job: JobRow): void {
    const key = jobKey(job.Namespace, job.ID);
    this.ctx.clock.cancelFor(TIMERS.periodic, key);
    if (!isPeriodic(job) || job.Stop) return;
    const next = nextLaunch(job.Periodic as PeriodicConfig, this.ctx.clock.now());
    if (next !== null) this.ctx.clock.schedule({ at: next, kind: TIMERS.periodic, subject: key });
  }

  private periodicLaunch(key: string, at: number): unknown {
    const { state, ctx } = this;
    const parent = state.jobs.get(key);
    if (!parent || !isPeriodic(parent) || parent.Stop) return { job: key, skipped: true };
    return ctx.store.write(() => {
      const overlap =
        (parent.Periodic as PeriodicConfig).ProhibitOverlap === true &&
        [...state.jobs.values()].some((j) => j.Namespace === parent.Namespace && j.ParentID === parent.ID && j.Status !== "dead");
      const launched = overlap ? undefined : this.launchChild(parent, at);
      this.schedulePeriodic(parent);
      return { parent: parent.ID, launched: launched !== undefined, evalId: launched?.EvalID ?? "" };
    });
  }

  /** Job.Scale: sets a group's count (a new version and an eval), refused during an active deployment. */
  /**
   * `PUT /v1/job/:id/scale` (Nomad's Job.Scale): with a Count, the group is
   * re-registered at it and a `job-scaling` evaluation made; either way a
   * scaling event is recorded (newest first, 20 per group) and returned by
   * scale status. Without a Count (an autoscaler reporting, say, an error)
   * only the event is recorded.
   */
  scale(
    namespace: string,
    id: string,
    request: { group: string; count: number | undefined; jobModifyIndex: number; message: string; error: boolean; meta: Record<string, unknown> | null },
  ) {
    const { state, ctx } = this;
    const job = state.job(namespace, id);
    if (!job) throw new CodedError(404, `job "${id}" not found`);
    if (job.Type === "system" && (request.count ?? 0) > 1) throw new CodedError(400, 'jobs of type "system" can only be scaled to 1 or 0');
    const groups = job.TaskGroups as unknown as Array<Group & { Scaling?: { Min?: number; Max?: number } | null }>;
    const group = groups.find((g) => g.Name === request.group);
    if (!group) throw new CodedError(400, `task group "${request.group}" specified for scaling does not exist in job`);
    const event = (evalId: string): ScalingEvent => ({
      Count: request.count ?? null,
      CreateIndex: ctx.store.writeIndex(),
      Error: request.error,
      EvalID: evalId === "" ? null : evalId,
      Message: request.message,
      Meta: request.meta,
      PreviousCount: group.Count,
      Time: nanos(ctx.clock.now()),
    });
    if (request.count === undefined) {
      return ctx.store.write(() => {
        this.recordScalingEvent(namespace, id, request.group, event(""));
        return { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: job.JobModifyIndex, Index: ctx.store.writeIndex() };
      });
    }
    if (group.Scaling) {
      if (request.count < Number(group.Scaling.Min ?? 0)) throw new CodedError(400, `group count was less than scaling policy minimum: ${request.count} < ${group.Scaling.Min}`);
      if (Number(group.Scaling.Max ?? Infinity) < request.count) throw new CodedError(400, `group count was greater than scaling policy maximum: ${request.count} > ${group.Scaling.Max}`);
    }
    const latest = state.deploymentsOfJob(namespace, id)[0];
    if (latest && ACTIVE_DEPLOYMENT.has(latest.Status) && latest.JobCreateIndex === job.CreateIndex) throw new CodedError(400, "job scaling blocked due to active deployment");
    if (request.jobModifyIndex > 0 && request.jobModifyIndex !== job.JobModifyIndex) {
      throw new Error(`Enforcing job modify index ${request.jobModifyIndex}: job exists with conflicting job modify index: ${job.JobModifyIndex}`);
    }
    const scaled = { ...job, TaskGroups: groups.map((g) => (g.Name === request.group ? { ...g, Count: request.count } : g)) };
    return ctx.store.write(() => {
      const result = this.register(scaled, { alwaysNewVersion: true, triggeredBy: "job-scaling" });
      this.recordScalingEvent(namespace, id, request.group, event(result.EvalID));
      return { ...result, Index: ctx.store.writeIndex() };
    });
  }

  private recordScalingEvent(namespace: string, jobId: string, group: string, event: ScalingEvent): void {
    const key = jobKey(namespace, jobId);
    const existing = this.state.scalingEvents.get(key);
    const events = [event, ...(existing?.ScalingEvents[group] ?? [])].slice(0, TRACKED_SCALING_EVENTS);
    this.state.scalingEvents.putIndexed(key, { Namespace: namespace, JobID: jobId, ScalingEvents: { ...existing?.ScalingEvents, [group]: events } });
  }

  /** Scale status (`GET /v1/job/:id/scale`): desired/placed/running/healthy per group, canaries left out. */
  scaleStatus(namespace: string, id: string) {
    const { state } = this;
    const job = state.job(namespace, id);
    if (!job) return undefined;
    const events = state.scalingEvents.get(jobKey(namespace, id))?.ScalingEvents ?? {};
    const groups: Record<string, { Desired: number; Events: ScalingEvent[] | null; Healthy: number; Placed: number; Running: number; Unhealthy: number }> = {};
    for (const g of job.TaskGroups as unknown as Group[]) groups[g.Name] = { Desired: g.Count, Events: events[g.Name] ?? null, Healthy: 0, Placed: 0, Running: 0, Unhealthy: 0 };
    for (const alloc of state.allocsOfJob(namespace, id)) {
      const status = alloc.DeploymentStatus as { Canary?: boolean; Healthy?: boolean | null } | null;
      if (status?.Canary || alloc.DesiredStatus !== "run" || !NON_TERMINAL_CLIENT.has(alloc.ClientStatus)) continue;
      const g = groups[alloc.TaskGroup];
      if (!g) continue;
      g.Placed++;
      if (alloc.ClientStatus === "running") g.Running++;
      if (status?.Healthy === true) g.Healthy++;
      else if (status?.Healthy === false) g.Unhealthy++;
    }
    return { JobCreateIndex: job.CreateIndex, JobID: job.ID, JobModifyIndex: job.ModifyIndex, JobStopped: job.Stop, Namespace: job.Namespace, TaskGroups: groups };
  }

  // ---- summaries and status -----------------------------------------------------------------

  private initSummary(job: JobRow): void {
    const index = this.ctx.store.writeIndex();
    this.state.summaries.put(jobKey(job.Namespace, job.ID), {
      JobID: job.ID,
      Namespace: job.Namespace,
      Summary: Object.fromEntries((job.TaskGroups as unknown as Group[]).map((g) => [g.Name, emptyGroupSummary()])),
      Children: { Dead: 0, Pending: 0, Running: 0 },
      CreateIndex: index,
      ModifyIndex: index,
    });
  }

  private ensureSummaryGroups(job: JobRow): void {
    const key = jobKey(job.Namespace, job.ID);
    const summary = this.state.summaries.get(key)!;
    const missing = (job.TaskGroups as unknown as Group[]).filter((g) => !summary.Summary[g.Name]);
    if (missing.length === 0) return;
    const index = this.ctx.store.writeIndex();
    this.state.summaries.put(key, { ...summary, Summary: { ...summary.Summary, ...Object.fromEntries(missing.map((g) => [g.Name, emptyGroupSummary()])) }, ModifyIndex: index });
  }

  private bumpSummary(namespace: string, jobId: string, group: string, update: (s: TaskGroupSummary) => TaskGroupSummary): void {
    const key = jobKey(namespace, jobId);
    const summary = this.state.summaries.get(key);
    if (!summary) return;
    const index = this.ctx.store.writeIndex();
    this.state.summaries.put(key, { ...summary, Summary: { ...summary.Summary, [group]: update(summary.Summary[group] ?? emptyGroupSummary()) }, ModifyIndex: index });
  }

  private setQueued(namespace: string, jobId: string, queued: Record<string, number>): void {
    for (const [group, count] of Object.entries(queued)) this.bumpSummary(namespace, jobId, group, (s) => (s.Queued === count ? s : { ...s, Queued: count }));
  }

  /** getJobStatus (§6.5). */
  refreshJobStatus(namespace: string, jobId: string): void {
    const { state, ctx } = this;
    const job = state.job(namespace, jobId);
    if (!job) return;
    const allocs = state.allocsOfJob(namespace, jobId);
    const evals = state.evalsOfJob(namespace, jobId);
    let status: string;
    if (allocs.some((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus))) status = "running";
    else if (evals.some((e) => e.Status === "pending" || e.Status === "blocked")) status = "pending";
    else if (job.Type === "system") status = job.Stop ? "dead" : "running";
    else if (allocs.length > 0 || evals.length > 0) status = "dead";
    else if (isParentJob(job)) status = job.Stop ? "dead" : "running";
    else status = "pending";
    if (status !== job.Status) {
      const index = ctx.store.writeIndex();
      state.jobs.put(jobKey(namespace, jobId), { ...job, Status: status, ModifyIndex: index });
      ctx.events.record("job.status", { service: "scheduler", subject: jobId, detail: { namespace, status } });
    }
    if (job.ParentID) this.refreshChildren(namespace, job.ParentID as string);
  }

  /** A parent's summary counts its children by status (Pending, Running, Dead). */
  private refreshChildren(namespace: string, parentId: string): void {
    const { state, ctx } = this;
    const key = jobKey(namespace, parentId);
    const summary = state.summaries.get(key);
    if (!summary) return;
    const children = { Dead: 0, Pending: 0, Running: 0 };
    for (const child of state.jobs.values()) {
      if (child.Namespace !== namespace || child.ParentID !== parentId) continue;
      if (child.Status === "dead") children.Dead++;
      else if (child.Status === "running") children.Running++;
      else children.Pending++;
    }
    if (children.Dead === summary.Children.Dead && children.Pending === summary.Children.Pending && children.Running === summary.Children.Running) return;
    state.summaries.put(key, { ...summary, Children: children, ModifyIndex: ctx.store.writeIndex() });
  }

  private storeVersion(job: JobRow): void {
    const { state } = this;
    state.versions.put(versionKey(job.Namespace, job.ID, job.Version), job);
    const versions = state.jobVersions(job.Namespace, job.ID);
    for (const old of versions.slice(TRACKED_VERSIONS)) state.versions.delete(versionKey(job.Namespace, job.ID, old.Version));
  }

  private duration(name: keyof typeof DEFAULT_TIMING): number {
    return parseDurationMs(this.timing()[name] ?? DEFAULT_TIMING[name]);
  }
}

/** An error with the HTTP status Nomad's RPC layer codes it with (NewErrRPCCoded). */
export class CodedError extends HttpError {}

/** Nomad's IsPeriodic / IsParameterized: a dispatched child is not itself parameterized. */
export function isPeriodic(job: Record<string, unknown>): boolean {
  return job.Periodic != null;
}

export function isParameterized(job: Record<string, unknown>): boolean {
  return job.ParameterizedJob != null && job.Dispatched !== true;
}

function isParentJob(job: Record<string, unknown>): boolean {
  return isPeriodic(job) || isParameterized(job);
}

const SUMMARY_BUCKET: Record<string, keyof TaskGroupSummary | undefined> = {
  pending: "Starting",
  running: "Running",
  complete: "Complete",
  failed: "Failed",
  lost: "Lost",
  unknown: "Unknown",
};

function emptyGroupSummary(): TaskGroupSummary {
  return { Complete: 0, Failed: 0, Lost: 0, Queued: 0, Running: 0, Starting: 0, Unknown: 0 };
}

function groupResources(group: Group): { cpu: number; memoryMB: number } {
  let cpu = 0;
  let memoryMB = 0;
  for (const task of group.Tasks ?? []) {
    cpu += Number(task.Resources?.CPU ?? 100);
    memoryMB += Number(task.Resources?.MemoryMB ?? 300);
  }
  return { cpu, memoryMB };
}

/** `<job>.<group>[<n>]` with the lowest free n. */
function nextAllocName(jobId: string, group: string, used: ReadonlySet<string>): string {
  for (let i = 0; ; i++) {
    const name = `${jobId}.${group}[${i}]`;
    if (!used.has(name)) return name;
  }
}

/** The constraint operators clients use most (`=`, `!=`, `regexp`, `set_contains`, `is_set`) on `${attr.*}`, `${meta.*}`, `${node.*}`. */
function constraintsMet(job: JobRow, group: Group & { Constraints?: unknown }, node: NodeRow): boolean {
  const constraints = [...((job.Constraints as Json[] | null) ?? []), ...(((group as { Constraints?: Json[] | null }).Constraints as Json[] | null) ?? [])];
  return constraints.every((c) => {
    const left = resolveTarget(String(c.LTarget ?? ""), node);
    const right = resolveTarget(String(c.RTarget ?? ""), node);
    switch (String(c.Operand ?? "=")) {
      case "=":
      case "==":
      case "is":
        return left === right;
      case "!=":
      case "not":
        return left !== right;
      case "regexp":
        return left !== undefined && regexpMatches(right ?? "", left);
      case "set_contains":
        return left !== undefined && (right ?? "").split(",").every((v) => left.split(",").map((s) => s.trim()).includes(v.trim()));
      case "is_set":
        return left !== undefined;
      case "is_not_set":
        return left === undefined;
      default:
        return true; // operators not simulated (version, distinct_hosts, …) do not restrict placement
    }
  });
}

type Json = Record<string, unknown>;

function resolveTarget(target: string, node: NodeRow): string | undefined {
  const match = /^\$\{(attr|meta|node)\.(.+)\}$/.exec(target);
  if (!match) return target;
  const [, kind, name] = match;
  if (kind === "attr") return node.Attributes[name!];
  if (kind === "meta") return node.Meta[name!];
  const fields: Record<string, string> = { unique_id: node.ID, unique_name: node.Name, datacenter: node.Datacenter, class: node.NodeClass, pool: node.NodePool };
  return fields[name!];
}

/**
 * Nomad's checkRegexpMatch: Go's regexp (RE2 syntax and semantics, so `(?i)`
 * works and look-arounds do not), unanchored; a pattern that does not compile
 * makes the node infeasible. Compiled patterns are kept (as Nomad caches them).
 */
const compiledConstraints = new Map<string, RE2JS | null>();
function regexpMatches(pattern: string, value: string): boolean {
  let re = compiledConstraints.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch {
      re = null;
    }
    if (compiledConstraints.size >= 1024) compiledConstraints.clear();
    compiledConstraints.set(pattern, re);
  }
  return re !== null && re.matcher(value).find();
}

/** `dimensions`: what exhausted the feasible nodes; none counted (no feasible node) keeps the capacity text. */
function allocMetric(nodesAvailable: number, unplaced: number, dimensions: Record<string, number>): Record<string, unknown> {
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

function nanosToMs(ns: number): number {
  return Math.ceil(ns / 1_000_000);
}
