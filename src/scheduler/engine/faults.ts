/**
 * What happens to allocations from outside the schedule: an allocation
 * fails or completes (the control API's faults), a node goes down and its
 * allocations are lost and replaced elsewhere.
 */
import { jobKey, type AllocRow, type NodeRow } from "../state/model.js";
import type { TaskStatesRow } from "../state/task-states.js";
import { finishedTasks, transitionAlloc } from "./allocations.js";
import { ACTIVE_DEPLOYMENT, ALLOC_TIMERS, NON_TERMINAL_CLIENT, TIMERS } from "./constants.js";
import type { EngineCore } from "./core.js";
import { updateDeploymentGroup } from "./deployments.js";
import { allocReportedUnhealthy } from "./deployment-watcher.js";
import { groupPolicy, rescheduleEligible, trackerOf } from "./rescheduling.js";
import { refreshJobStatus } from "./summaries.js";

/**
 * Fault: an allocation fails (its tasks as `taskStates` say, else every task
 * failed with its restart attempts used up). With an active deployment it is
 * reported unhealthy, and the deployment watcher fails the deployment or lets
 * the allocation be rescheduled (deployment-watcher.ts). As Nomad's Node.UpdateAlloc
 * does, a failure its group's reschedule policy allows to be replaced makes
 * an `alloc-failure` evaluation (the reconciler then replaces it now or
 * schedules a follow-up for the policy's delay: rescheduling.ts).
 */
export function failAlloc(core: EngineCore, alloc: AllocRow, taskStates?: TaskStatesRow): void {
  core.ctx.store.write(() => {
    const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
    const failed = transitionAlloc(core, alloc, "failed", "Failed tasks", {
      TaskStates: taskStates ?? finishedTasks(core, alloc, "failed"),
      DeploymentStatus: alloc.DeploymentID ? { Healthy: false, Timestamp: core.ctx.clock.now(), Canary: canary, ModifyIndex: core.ctx.store.writeIndex() } : alloc.DeploymentStatus,
    });
    // A failed allocation is done: none of its timers may touch it again.
    for (const kind of ALLOC_TIMERS) core.ctx.clock.cancelFor(kind, failed.ID);
    // Node.UpdateAlloc's evaluation comes first, then the deployment watcher's answer to the unhealthy allocation.
    retryFailedAlloc(core, failed);
    const deployment = alloc.DeploymentID ? core.state.deployments.get(alloc.DeploymentID) : undefined;
    if (deployment && ACTIVE_DEPLOYMENT.has(deployment.Status)) {
      // The health counts follow the change (state_store updateDeploymentWithAlloc): none when it already was unhealthy.
      const was = (alloc.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy;
      if (was !== false)
        updateDeploymentGroup(core, deployment.ID, alloc.TaskGroup, (g) => ({
          ...g,
          HealthyAllocs: g.HealthyAllocs - (was === true ? 1 : 0),
          UnhealthyAllocs: g.UnhealthyAllocs + 1,
        }));
      allocReportedUnhealthy(core, deployment.ID, failed);
    }
    refreshJobStatus(core, alloc.Namespace, alloc.JobID);
  });
}

/** Node.UpdateAlloc: an eval for a failed allocation its job's current policy may reschedule (no JobModifyIndex, as Nomad's). */
function retryFailedAlloc(core: EngineCore, alloc: AllocRow): void {
  const job = core.state.job(alloc.Namespace, alloc.JobID);
  if (!job || job.Stop || alloc.FollowupEvalID) return;
  if (!rescheduleEligible(trackerOf(alloc), groupPolicy(job, alloc.TaskGroup), core.ctx.clock.now())) return;
  core.followUps.evaluation(job, "alloc-failure", { JobModifyIndex: 0 });
}

/** Fault: an allocation completes (its tasks exit successfully, or as `taskStates` say). */
export function completeAlloc(core: EngineCore, alloc: AllocRow, taskStates?: TaskStatesRow): void {
  core.ctx.store.write(() => {
    transitionAlloc(core, alloc, "complete", "All tasks have completed", { TaskStates: taskStates ?? finishedTasks(core, alloc, "complete") });
    for (const kind of ALLOC_TIMERS) core.ctx.clock.cancelFor(kind, alloc.ID);
    refreshJobStatus(core, alloc.Namespace, alloc.JobID);
  });
}

/** An allocation whose node is gone: lost, and none of its timers may touch it again. */
export function loseAlloc(core: EngineCore, alloc: AllocRow, description: string): void {
  transitionAlloc(core, alloc, "lost", description, { DesiredStatus: "stop", DesiredDescription: description });
  for (const kind of [TIMERS.allocStart, TIMERS.allocHealthy, TIMERS.batchDone, TIMERS.taskRestart]) core.ctx.clock.cancelFor(kind, alloc.ID);
}

/** Fault: a node goes down: its allocations are lost and replacements are scheduled elsewhere. */
export function nodeDown(core: EngineCore, node: NodeRow): void {
  const { state, ctx } = core;
  ctx.store.write(() => {
    const jobs = new Set<string>();
    for (const alloc of state.allocsOnNode(node.ID)) {
      if (alloc.DesiredStatus !== "run" || !NON_TERMINAL_CLIENT.has(alloc.ClientStatus)) continue;
      loseAlloc(core, alloc, "alloc is lost since its node is down");
      jobs.add(jobKey(alloc.Namespace, alloc.JobID));
    }
    for (const key of [...jobs].sort()) {
      const job = state.jobs.get(key);
      if (job && !job.Stop && job.Type !== "system" && job.Type !== "sysbatch")
        core.followUps.evaluation(job, "node-update", { NodeID: node.ID, NodeModifyIndex: node.ModifyIndex });
    }
  });
}
