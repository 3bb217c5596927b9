/**
 * The simulated cluster, driven by the virtual clock (reference §6):
 *
 *   register ─▶ eval pending ─(evalProcess)─▶ eval complete, allocs placed (pending),
 *   deployment created ─(allocStart)─▶ allocs running ─(min_healthy_time)─▶ healthy
 *   ─▶ next rolling batch (max_parallel) … ─▶ deployment successful, version stable.
 *   stop ─▶ eval ─(evalProcess)─▶ plan: allocs DesiredStatus stop ─(client sync, ≤ 200 ms)─▶ complete.
 *
 * Placement is deterministic: ready, eligible nodes in the job's datacenters
 * and node pool with room for the group's CPU and memory, least loaded
 * first, ties by node ID. What fits nowhere leaves a blocked eval, which is
 * re-run when capacity appears. Every transition goes through the store (so
 * indexes move and blocking queries wake) and into the event journal.
 *
 * How the engine is split: a pipeline of steps in the order Nomad's server
 * runs them, each a module of plain functions taking the EngineCore
 * (core.ts: the state, the service context, the timing) first. A step calls
 * the steps after it directly (it imports them); nothing imports a step
 * above it:
 *
 *   1 admission            register.ts (register, deregister); the front doors that
 *                          register a job: revert.ts, dispatch.ts, scaling.ts,
 *                          periodic-launches.ts (periodic-schedule.ts arms the launches);
 *                          versions.ts (stored versions, Job.Stable)
 *   2 evaluation broker    evaluations.ts (create, process, unblock, Job.Evaluate),
 *                          broker.ts (the broker paused / resumed), eval-delete.ts
 *   3 reconciler           reconcile.ts, reschedule-reconcile.ts, plan.ts (the dry run),
 *                          group-spec.ts (in place or destructive)
 *   4 placement            placement.ts, constraints.ts (feasible nodes, fit, the node)
 *   5 plan apply           placement.ts placeAlloc, allocations.ts stopAllocByPlan
 *   6 client updates       allocations.ts (start, health, completion, stop), faults.ts,
 *                          task-restarts.ts
 *   7 deployment watcher   deployment-health.ts (health reports, promotion, the next
 *                          batch), deployment-watcher.ts (unhealthy allocations),
 *                          deployments.ts (create, progress deadline, finish, fail)
 *   8 follow-up evaluations  asked for through core.followUps (below)
 *
 * Beside the pipeline, read by every step: summaries.ts (job summaries and
 * status), rescheduling.ts (the reschedule policy's arithmetic), constants.ts,
 * job-kinds.ts, errors.ts; and the garbage collector on the clock (gc.ts,
 * gc-rules.ts, gc-settings.ts).
 *
 * Going back up the pipeline (a failed allocation, a deployment's next
 * batch or its promotion want a new evaluation; a failed deployment's
 * auto_revert registers the job again) is a follow-up: the later step asks
 * `core.followUps`, which the constructor below wires to the earlier step's
 * function. The ask runs at once, where a direct call ran, so the order of
 * every store write, event, timer and seeded ID is the one it always was;
 * work due later goes through the virtual clock's timers, whose handlers
 * are registered below too. SchedulerEngine is the public face: it owns the
 * core and keeps the methods callers have always used, each a call into
 * its step.
 */
import type { ServiceContext } from "../../core/context.js";
import type { AllocRow, EvalRow, JobRow, NodeRow, SchedulerState } from "../state/model.js";
import type { SchedulerConfigInput } from "../state/scheduler-config.js";
import * as allocations from "./allocations.js";
import * as broker from "./broker.js";
import * as evalDelete from "./eval-delete.js";
import type { EvalDeleteResult } from "./eval-delete.js";
import { TIMERS } from "./constants.js";
import type { EngineCore, RegisterResult } from "./core.js";
import * as deploymentHealth from "./deployment-health.js";
import * as deployments from "./deployments.js";
import * as dispatching from "./dispatch.js";
import * as evaluations from "./evaluations.js";
import * as faults from "./faults.js";
import { GarbageCollector } from "./gc.js";
import type { GcSettings } from "./gc-settings.js";
import * as periodic from "./periodic-launches.js";
import * as plan from "./plan.js";
import * as jobs from "./register.js";
import * as reverting from "./revert.js";
import * as scaling from "./scaling.js";
import * as summaries from "./summaries.js";
import * as taskRestarts from "./task-restarts.js";
import * as versions from "./versions.js";

export { BATCH_RUN_META, DEFAULT_TIMING, DEPLOYMENT_DESCRIPTIONS, NON_TERMINAL_CLIENT, TIMERS } from "./constants.js";
export type { RegisterResult } from "./core.js";
export { GC_DEFAULTS, type GcSettings } from "./gc-settings.js";
export { CodedError } from "./errors.js";
export { isParameterized, isPeriodic } from "./job-kinds.js";

type HealthOutcome = { revertedVersion: number | null; evalId: string; evalIndex: number };

export class SchedulerEngine {
  private readonly core: EngineCore;

  private readonly collector: GarbageCollector;

  constructor(state: SchedulerState, ctx: ServiceContext, timing: () => Record<string, string>, gc?: () => GcSettings | undefined) {
    const core: EngineCore = {
      state,
      ctx,
      timing,
      gc,
      followUps: {
        evaluation: (job, triggeredBy, extra) => evaluations.createEval(core, job, triggeredBy, extra),
        revert: (namespace, id, version) => reverting.revert(core, namespace, id, version),
      },
    };
    this.core = core;
    const clock = ctx.clock;
    clock.handle(TIMERS.eval, (t) => evaluations.processEval(core, t.subject));
    clock.handle(TIMERS.allocStart, (t) => allocations.allocStarted(core, t.subject));
    clock.handle(TIMERS.allocHealthy, (t) => allocations.allocHealthy(core, t.subject));
    clock.handle(TIMERS.batchDone, (t) => allocations.batchDone(core, t.subject));
    clock.handle(TIMERS.progressDeadline, (t) => deployments.progressDeadlinePassed(core, t.subject));
    clock.handle(TIMERS.periodic, (t) => periodic.periodicLaunch(core, t.subject, t.at));
    clock.handle(TIMERS.healthyDeadline, (t) => allocations.healthyDeadlinePassed(core, t.subject));
    clock.handle(TIMERS.taskRestart, (t) => taskRestarts.restartDue(core, t.subject));
    clock.handle(TIMERS.clientSync, (t) => allocations.clientSync(core, t.subject));
    this.collector = new GarbageCollector(core);
  }

  // ---- garbage collection (gc.ts) ----

  /** System.GarbageCollect: collects everything collectable, whatever its age, in slices after the request is answered (gc-force.ts). */
  forceGC(): void {
    this.collector.forceLater();
  }

  /** Objects queued for a later GC pass (derived state; tests check it stays bounded). */
  gcQueued(): number {
    return this.collector.queued();
  }

  // ---- jobs (register.ts) ----

  register(job: Record<string, unknown>, options?: { alwaysNewVersion?: boolean; triggeredBy?: string }): RegisterResult {
    return jobs.register(this.core, job, options);
  }

  deregister(namespace: string, id: string, purge: boolean): RegisterResult & { found: boolean } {
    return jobs.deregister(this.core, namespace, id, purge);
  }

  // ---- evaluations (evaluations.ts, plan.ts) ----

  createEval(job: JobRow, triggeredBy: string, extra?: Partial<EvalRow>): EvalRow {
    return evaluations.createEval(this.core, job, triggeredBy, extra);
  }

  unblock(): void {
    evaluations.unblock(this.core);
  }

  planUpdates(job: Record<string, unknown>): Record<string, Record<string, number>> {
    return plan.planUpdates(this.core, job);
  }

  capacityChanged(node?: NodeRow): void {
    evaluations.capacityChanged(this.core, node);
  }

  // ---- allocations (allocations.ts, faults.ts) ----

  transitionAlloc(alloc: AllocRow, clientStatus: string, description: string, extra?: Partial<AllocRow>): AllocRow {
    return allocations.transitionAlloc(this.core, alloc, clientStatus, description, extra);
  }

  stopAlloc(alloc: AllocRow, description: string): void {
    allocations.stopAlloc(this.core, alloc, description);
  }

  failAlloc(alloc: AllocRow): void {
    faults.failAlloc(this.core, alloc);
  }

  /** Running tasks exit (a fault): the client restarts them per the restart policy, or the allocation fails or completes. */
  tasksExited(alloc: AllocRow, tasks: readonly string[] | undefined, exitCode: number): AllocRow {
    return taskRestarts.tasksExited(this.core, alloc, tasks, exitCode);
  }

  completeAlloc(alloc: AllocRow): void {
    faults.completeAlloc(this.core, alloc);
  }

  loseAlloc(alloc: AllocRow, description: string): void {
    faults.loseAlloc(this.core, alloc, description);
  }

  checksChanged(allocId: string): void {
    allocations.checksChanged(this.core, allocId);
  }

  startupMs(): number {
    return allocations.startupMs(this.core);
  }

  nodeDown(node: NodeRow): void {
    faults.nodeDown(this.core, node);
  }

  // ---- deployments (deployments.ts, deployment-health.ts) ----

  finishDeployment(deploymentId: string, status: "successful" | "failed" | "cancelled", description: string): void {
    deployments.finishDeployment(this.core, deploymentId, status, description);
  }

  setDeploymentPaused(deploymentId: string, paused: boolean): void {
    deployments.setDeploymentPaused(this.core, deploymentId, paused);
  }

  failDeployment(deploymentId: string, base: string): HealthOutcome {
    return deployments.failDeployment(this.core, deploymentId, base);
  }

  promote(deploymentId: string, groups: readonly string[] | undefined): EvalRow {
    return deploymentHealth.promote(this.core, deploymentId, groups);
  }

  setAllocHealth(deploymentId: string, healthy: readonly string[], unhealthy: readonly string[], reporter?: "operator" | "client"): HealthOutcome {
    return deploymentHealth.setAllocHealth(this.core, deploymentId, healthy, unhealthy, reporter);
  }

  // ---- job operations (revert.ts, versions.ts, evaluations.ts, dispatch.ts, periodic-launches.ts, scaling.ts) ----

  revert(namespace: string, id: string, version: number, enforcePrior?: number, admit?: () => void): RegisterResult {
    return reverting.revert(this.core, namespace, id, version, enforcePrior, admit);
  }

  setStable(namespace: string, id: string, version: number, stable: boolean): number {
    return versions.setStable(this.core, namespace, id, version, stable);
  }

  evaluate(namespace: string, id: string, options?: { forceReschedule?: boolean }): RegisterResult {
    return evaluations.evaluate(this.core, namespace, id, options);
  }

  dispatch(namespace: string, id: string, request: Parameters<typeof dispatching.dispatch>[3]) {
    return dispatching.dispatch(this.core, namespace, id, request);
  }

  periodicForce(namespace: string, id: string) {
    return periodic.periodicForce(this.core, namespace, id);
  }

  scale(namespace: string, id: string, request: Parameters<typeof scaling.scale>[3]) {
    return scaling.scale(this.core, namespace, id, request);
  }

  scaleStatus(namespace: string, id: string) {
    return scaling.scaleStatus(this.core, namespace, id);
  }

  // ---- the scheduler configuration and the eval broker (broker.ts, eval-delete.ts) ----

  setSchedulerConfig(config: SchedulerConfigInput, cas?: number): { updated: boolean; index: number } {
    return broker.setSchedulerConfig(this.core, config, cas);
  }

  deleteEvalsById(ids: readonly string[]): EvalDeleteResult {
    return evalDelete.deleteEvalsById(this.core, ids);
  }

  deleteEvalsByFilter(filter: string): EvalDeleteResult {
    return evalDelete.deleteEvalsByFilter(this.core, filter);
  }

  // ---- summaries (summaries.ts) ----

  refreshJobStatus(namespace: string, jobId: string): void {
    summaries.refreshJobStatus(this.core, namespace, jobId);
  }
}
