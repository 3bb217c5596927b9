/**
 * An allocation's life on the virtual clock: started allocStart after its
 * placement, healthy min_healthy_time later (or unhealthy at its
 * healthy_deadline), a batch allocation complete after its run; every
 * client-side status change keeps the job summary's counts.
 *
 * Where Nomad's health tracker counts native service checks (service-checks.ts
 * `healthChecks`), the allocation is healthy only once they have all run and
 * passed for min_healthy_time: the healthy timer is set that much later, and
 * does nothing while one of them fails (healthy_deadline then decides).
 */
import { parseDurationMs } from "../../core/durations.js";
import { jobKey, type AllocRow, type TaskGroupSummary } from "../state/model.js";
import type { RestartPolicy } from "../state/restart-tracker.js";
import { tasksFinished, tasksStarted, unhealthyByDeadline, type TaskSpec, type TaskStatesRow } from "../state/task-states.js";
import { ACTIVE_DEPLOYMENT, ALLOC_TIMERS, BATCH_RUN_META, NON_TERMINAL_CLIENT, TIMERS } from "./constants.js";
import { duration, healthSetByOperator, nanosToMs, type EngineCore, type Group } from "./core.js";
import { advanceDeployment } from "./deployment-health.js";
import { armProgressDeadline, progressAfterHealthy, updateDeploymentGroup } from "./deployments.js";
import { allocReportedUnhealthy } from "./deployment-watcher.js";
import { bumpSummary, refreshJobStatus } from "./summaries.js";
import { syncAllocServices } from "../services/service-registrations.js";
import { allocGroup, checksHealthDelayMs, serviceChecksOf } from "../services/service-checks.js";

/** What the client simulation needs of each task (task-states.ts). */
export function taskSpecs(group: Record<string, unknown> | undefined): TaskSpec[] {
  return ((group?.Tasks as Array<Record<string, unknown>> | undefined) ?? []).map((t) => ({ Name: String(t.Name), KillTimeout: Number(t.KillTimeout ?? 5_000_000_000) }));
}

/** The group's restart policy; api/tasks.go's service defaults when a stored group has none. */
export function restartPolicy(group: Record<string, unknown> | undefined): RestartPolicy {
  const p = (group?.RestartPolicy ?? {}) as Record<string, unknown>;
  return { Attempts: Number(p.Attempts ?? 2), Interval: Number(p.Interval ?? 1_800_000_000_000), Delay: Number(p.Delay ?? 15_000_000_000), Mode: String(p.Mode ?? "fail") };
}

/** The allocation's tasks and restart policy, from the job version it runs. */
function tasksOf(core: EngineCore, alloc: AllocRow): { tasks: TaskSpec[]; restart: RestartPolicy } {
  const group = allocGroup(core.state, alloc);
  // A purged job's versions are gone, but its allocations still know their tasks (Nomad's carry their
  // job): a stop then kills what the client runs, with the default kill_timeout.
  const tasks = group ? taskSpecs(group) : Object.keys((alloc.TaskStates as TaskStatesRow | null) ?? {}).map((Name) => ({ Name, KillTimeout: 5_000_000_000 }));
  return { tasks, restart: restartPolicy(group) };
}

/** TaskStates after the allocation's tasks end (see task-states.ts). */
export function finishedTasks(core: EngineCore, alloc: AllocRow, outcome: "complete" | "failed" | "killed"): TaskStatesRow {
  const { tasks, restart } = tasksOf(core, alloc);
  return tasksFinished(alloc.TaskStates as TaskStatesRow | null, tasks, outcome, { placedAt: alloc.CreateTime, now: core.ctx.clock.now() }, restart);
}

export function allocStarted(core: EngineCore, allocId: string): unknown {
  const { state, ctx } = core;
  const alloc = state.allocs.get(allocId);
  if (!alloc || alloc.ClientStatus !== "pending" || alloc.DesiredStatus !== "run") return { alloc: allocId, skipped: true };
  return ctx.store.write(() => {
    const now = ctx.clock.now();
    const running = transitionAlloc(core, alloc, "running", "Tasks are running", { TaskStates: tasksStarted(tasksOf(core, alloc).tasks, alloc.CreateTime, now) });
    armRunTimers(core, running, now);
    return { alloc: allocId, status: "running" };
  });
}

/** The group's min_healthy_time in virtual ms (the job's current version, as the deployment watcher reads it). */
function minHealthyMs(core: EngineCore, alloc: AllocRow): number {
  const job = core.state.job(alloc.Namespace, alloc.JobID);
  const group = (job?.TaskGroups as unknown as Group[] | undefined)?.find((g) => g.Name === alloc.TaskGroup);
  return nanosToMs(Number(group?.Update?.MinHealthyTime ?? 10_000_000_000));
}

/**
 * The timers of an allocation whose tasks (all) run from `now`: a batch run
 * completes after its run time; a deployment's allocation is healthy after
 * min_healthy_time (counted from the first run of its native checks, which
 * the tracker waits for: interval/2 after the start), unless its health is
 * already set (healthy, or unhealthy by healthy_deadline).
 * A task restart arms them again. A group whose health the operator sets
 * (`health_check = "manual"`) gets no health timer.
 */
export function armRunTimers(core: EngineCore, alloc: AllocRow, now: number): void {
  const { state, ctx } = core;
  if (alloc.JobType === "batch" || alloc.JobType === "sysbatch") {
    const job = state.job(alloc.Namespace, alloc.JobID);
    const override = (job?.Meta as Record<string, string> | null | undefined)?.[BATCH_RUN_META];
    ctx.clock.schedule({ at: now + (override ? parseDurationMs(override) : duration(core, "batchRun")), kind: TIMERS.batchDone, subject: alloc.ID });
  } else if (
    alloc.DeploymentID &&
    typeof (alloc.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy !== "boolean" &&
    !healthSetByOperator(allocGroup(state, alloc))
  ) {
    // The client sets an allocation's health once (health_hook: HasHealth): one found unhealthy stays so.
    const checksDelay = checksHealthDelayMs(allocGroup(state, alloc));
    ctx.clock.schedule({ at: now + checksDelay + minHealthyMs(core, alloc), kind: TIMERS.allocHealthy, subject: alloc.ID });
  }
}

/** Healthy after min_healthy_time of running: counts for the deployment, which may then roll on or succeed. */
export function allocHealthy(core: EngineCore, allocId: string): unknown {
  const { state, ctx } = core;
  const alloc = state.allocs.get(allocId);
  if (!alloc || alloc.ClientStatus !== "running" || !alloc.DeploymentID) return { alloc: allocId, skipped: true };
  if (typeof (alloc.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy === "boolean") return { alloc: allocId, skipped: true };
  // A failing healthiness check holds the health back (checksChanged arms the timer again once it passes).
  if (!serviceChecksOf(state).checksPassing(alloc, ctx.clock.now())) return { alloc: allocId, healthy: null, waiting: "checks" };
  const deployment = state.deployments.get(alloc.DeploymentID);
  return ctx.store.write(() => {
    const now = ctx.clock.now();
    const index = ctx.store.writeIndex();
    const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
    state.allocs.put(allocId, { ...alloc, DeploymentStatus: { Healthy: true, Timestamp: now, Canary: canary, ModifyIndex: index }, ModifyIndex: index, ModifyTime: now });
    ctx.clock.cancelFor(TIMERS.healthyDeadline, allocId);
    if (!deployment || !ACTIVE_DEPLOYMENT.has(deployment.Status)) return { alloc: allocId, healthy: true };
    updateDeploymentGroup(core, deployment.ID, alloc.TaskGroup, (g) => ({ ...g, HealthyAllocs: g.HealthyAllocs + 1, RequireProgressBy: progressAfterHealthy(g, now) }));
    armProgressDeadline(core, deployment.ID);
    advanceDeployment(core, deployment.ID);
    return { alloc: allocId, healthy: true };
  });
}

/**
 * A check of a running allocation changed (the control API set its status):
 * as Nomad's tracker, a failing check stops the min_healthy_time wait, and
 * checks passing again start it anew. Inside a write.
 */
export function checksChanged(core: EngineCore, allocId: string): void {
  const { state, ctx } = core;
  const alloc = state.allocs.get(allocId);
  if (!alloc || alloc.ClientStatus !== "running" || alloc.DesiredStatus !== "run" || !alloc.DeploymentID) return;
  if (typeof (alloc.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy === "boolean") return;
  if (healthSetByOperator(allocGroup(state, alloc))) return;
  if (!serviceChecksOf(state).checksPassing(alloc, ctx.clock.now())) {
    ctx.clock.cancelFor(TIMERS.allocHealthy, allocId);
    return;
  }
  if (ctx.clock.timersFor(TIMERS.allocHealthy, allocId).length === 0)
    ctx.clock.schedule({ at: ctx.clock.now() + minHealthyMs(core, alloc), kind: TIMERS.allocHealthy, subject: allocId });
}

export function batchDone(core: EngineCore, allocId: string): unknown {
  const { state, ctx } = core;
  const alloc = state.allocs.get(allocId);
  if (!alloc || alloc.ClientStatus !== "running") return { alloc: allocId, skipped: true };
  return ctx.store.write(() => {
    transitionAlloc(core, alloc, "complete", "All tasks have completed", { TaskStates: finishedTasks(core, alloc, "complete") });
    refreshJobStatus(core, alloc.Namespace, alloc.JobID);
    return { alloc: allocId, status: "complete" };
  });
}

/**
 * healthy_deadline passed without the allocation becoming healthy: the client
 * reports it unhealthy and leaves it running (Nomad's health hook sets the
 * health and kills nothing); the deployment watcher fails the deployment or
 * marks the allocation for rescheduling, which only a failure then acts on.
 */
export function healthyDeadlinePassed(core: EngineCore, allocId: string): unknown {
  const { state, ctx } = core;
  const alloc = state.allocs.get(allocId);
  if (!alloc || alloc.DesiredStatus !== "run" || !alloc.DeploymentID) return { alloc: allocId, skipped: true };
  if ((alloc.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy === true) return { alloc: allocId, skipped: true };
  const deployment = state.deployments.get(alloc.DeploymentID);
  return ctx.store.write(() => {
    const now = ctx.clock.now();
    const index = ctx.store.writeIndex();
    const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
    // The client explains on each task why the allocation is not healthy (only once its tasks have states).
    const states = alloc.TaskStates as TaskStatesRow | null;
    const healthyDeadlineMs = nanosToMs(Number((allocGroup(state, alloc)?.Update as { HealthyDeadline?: number } | undefined)?.HealthyDeadline ?? 300_000_000_000));
    const taskStates = states ? unhealthyByDeadline(states, { healthyDeadlineMs, minHealthyMs: minHealthyMs(core, alloc), now }) : states;
    state.allocs.put(allocId, {
      ...alloc,
      TaskStates: taskStates,
      DeploymentStatus: { Healthy: false, Timestamp: now, Canary: canary, ModifyIndex: index },
      ModifyIndex: index,
      ModifyTime: now,
    });
    ctx.clock.cancelFor(TIMERS.allocHealthy, allocId);
    if (deployment && ACTIVE_DEPLOYMENT.has(deployment.Status)) {
      updateDeploymentGroup(core, deployment.ID, alloc.TaskGroup, (g) => ({ ...g, UnhealthyAllocs: g.UnhealthyAllocs + 1 }));
      allocReportedUnhealthy(core, deployment.ID, state.allocs.get(allocId)!);
    }
    return { alloc: allocId, healthy: false };
  });
}

/** Client-side status change with the summary bookkeeping of §6.4. */
export function transitionAlloc(core: EngineCore, alloc: AllocRow, clientStatus: string, description: string, extra: Partial<AllocRow> = {}): AllocRow {
  const { state, ctx } = core;
  const index = ctx.store.writeIndex();
  const next: AllocRow = { ...alloc, ...extra, ClientStatus: clientStatus, ClientDescription: description, ModifyIndex: index, ModifyTime: ctx.clock.now() };
  state.allocs.put(alloc.ID, next);
  syncAllocServices(state, next);
  const bucket = SUMMARY_BUCKET[clientStatus];
  const previous = SUMMARY_BUCKET[alloc.ClientStatus];
  // The summary follows client status changes only (stopping a failed allocation counts it once).
  if (clientStatus !== alloc.ClientStatus)
    bumpSummary(core, alloc.Namespace, alloc.JobID, alloc.TaskGroup, (s) => {
      const out = { ...s };
      // Complete and Failed are never decremented (state_store updateSummaryWithAlloc).
      if (previous && previous !== "Complete" && previous !== "Failed") out[previous] = Math.max(0, out[previous] - 1);
      if (bucket) out[bucket] += 1;
      return out;
    });
  ctx.events.record("alloc.transition", { service: "scheduler", subject: alloc.ID, detail: { from: alloc.ClientStatus, to: clientStatus } });
  return next;
}

export function stopAlloc(core: EngineCore, alloc: AllocRow, description: string): void {
  const running = NON_TERMINAL_CLIENT.has(alloc.ClientStatus);
  const stopped = transitionAlloc(core, alloc, running ? "complete" : alloc.ClientStatus, "All tasks have completed", {
    DesiredStatus: "stop",
    DesiredDescription: description,
    // Tasks the client runs are killed; an allocation the client never reported on stays without states.
    TaskStates: running && alloc.TaskStates ? finishedTasks(core, alloc, "killed") : alloc.TaskStates,
  });
  for (const kind of ALLOC_TIMERS) core.ctx.clock.cancelFor(kind, stopped.ID);
}

/**
 * The plan's half of a stop (Nomad's order for a stopped job): the scheduler
 * sets `DesiredStatus: stop` — a PlanResult the event stream carries with the
 * allocation still running — and the client reports it `complete` at its next
 * update (`clientSync`, AllocationUpdated). From the plan on the allocation
 * holds no resources (it is terminal to the scheduler); its services stay
 * registered until the client has stopped it. Inside a write.
 */
export function stopAllocByPlan(core: EngineCore, alloc: AllocRow, description: string): void {
  const { state, ctx } = core;
  for (const kind of ALLOC_TIMERS) ctx.clock.cancelFor(kind, alloc.ID);
  const now = ctx.clock.now();
  const index = ctx.store.writeIndex();
  state.allocs.put(alloc.ID, { ...alloc, DesiredStatus: "stop", DesiredDescription: description, ModifyIndex: index, ModifyTime: now });
  // An allocation its client already finished (complete, failed, lost) has nothing left to report.
  if (!NON_TERMINAL_CLIENT.has(alloc.ClientStatus)) return;
  // One pending update per node: whatever else it stops before then goes with it, as Nomad's client batches.
  if (ctx.clock.timersFor(TIMERS.clientSync, alloc.NodeID).length === 0) ctx.clock.schedule({ at: now + CLIENT_SYNC_MS, kind: TIMERS.clientSync, subject: alloc.NodeID });
}

/**
 * Nomad's client sends its allocations' updates in one batch every 200 ms
 * (client.go allocSyncIntv); the simulated tasks exit at their first
 * interrupt, so a stop is reported at the next batch.
 */
export const CLIENT_SYNC_MS = 200;

/** A node's client reports the allocations the plan stopped: tasks killed, `complete`, services gone — one write per node. */
export function clientSync(core: EngineCore, nodeId: string): unknown {
  const { state, ctx } = core;
  const stopping = state.allocsOnNode(nodeId).filter((a) => a.DesiredStatus === "stop" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
  if (stopping.length === 0) return { node: nodeId, skipped: true };
  return ctx.store.write(() => {
    const jobs = new Map<string, { namespace: string; id: string }>();
    for (const alloc of stopping) {
      // Tasks the client runs are killed; an allocation the client never reported on stays without states.
      const killed = alloc.TaskStates ? finishedTasks(core, alloc, "killed") : alloc.TaskStates;
      transitionAlloc(core, alloc, "complete", "All tasks have completed", { TaskStates: killed });
      jobs.set(jobKey(alloc.Namespace, alloc.JobID), { namespace: alloc.Namespace, id: alloc.JobID });
    }
    for (const { namespace, id } of jobs.values()) refreshJobStatus(core, namespace, id);
    return { node: nodeId, stopped: stopping.map((a) => a.ID) };
  });
}

/** Virtual ms from a placement to the allocation running: the timing's evalProcess + allocStart. */
export function startupMs(core: EngineCore): number {
  return duration(core, "evalProcess") + duration(core, "allocStart");
}

const SUMMARY_BUCKET: Record<string, keyof TaskGroupSummary | undefined> = {
  pending: "Starting",
  running: "Running",
  complete: "Complete",
  failed: "Failed",
  lost: "Lost",
  unknown: "Unknown",
};
