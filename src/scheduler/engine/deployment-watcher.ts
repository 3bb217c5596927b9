/**
 * The deployment watcher's rules for unhealthy allocations and the progress
 * deadline (nomad/deploymentwatcher/deployment_watcher.go: handleAllocUpdate,
 * shouldFailEarly, shouldFail, getDeploymentProgressCutoff):
 *
 * - An allocation the client reports unhealthy (it failed, or
 *   healthy_deadline passed) fails its active deployment at once only when
 *   the group is not progress based (`progress_deadline = 0`) or the group's
 *   reschedule policy allows it no further reschedule (attempts used up, or
 *   none). Otherwise the watcher lets it be rescheduled: it is marked
 *   `DesiredTransition.Reschedule`, with a `deployment-watcher` evaluation,
 *   and the reconciler replaces it (once it has failed, after the policy's
 *   delay) within the deployment.
 * - When the progress deadline passes, the deployment fails (`Failed due to
 *   progress deadline`) unless every group has enough healthy allocations
 *   (deployments.ts progressDeadlinePassed).
 *
 * Health reports by an operator (`/v1/deployment/allocation-health`) are
 * Nomad's SetAllocHealth RPC, which fails the deployment at once: see
 * deployment-health.ts.
 */
import { versionKey, type AllocRow, type DeploymentRow } from "../state/model.js";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESCRIPTIONS } from "./constants.js";
import type { EngineCore } from "./core.js";
import { failDeployment } from "./deployments.js";
import { groupPolicy, rescheduleEligible, trackerOf } from "./rescheduling.js";

/**
 * An allocation of the deployment was just reported unhealthy (inside a
 * write): fail the deployment early, or allow the allocation's reschedule.
 */
export function allocReportedUnhealthy(core: EngineCore, deploymentId: string, alloc: AllocRow): void {
  const deployment = core.state.deployments.get(deploymentId);
  if (!deployment || !ACTIVE_DEPLOYMENT.has(deployment.Status)) return;
  if (!deployment.TaskGroups[alloc.TaskGroup]) return;
  if (shouldFailEarly(core, deployment, alloc)) {
    failDeployment(core, deploymentId, DEPLOYMENT_DESCRIPTIONS.failedAllocations);
    return;
  }
  allowReschedule(core, deployment, alloc);
}

/** shouldFailEarly: no progress deadline to wait for, or no reschedule left to get a healthy allocation from. */
function shouldFailEarly(core: EngineCore, deployment: DeploymentRow, alloc: AllocRow): boolean {
  if (deployment.TaskGroups[alloc.TaskGroup]!.ProgressDeadline === 0) return true;
  // The policy of the job version the deployment rolls out, as the watcher's job is.
  const job = core.state.versions.get(versionKey(deployment.Namespace, deployment.JobID, deployment.JobVersion)) ?? core.state.job(deployment.Namespace, deployment.JobID);
  const current = core.state.allocs.get(alloc.ID) ?? alloc;
  return !rescheduleEligible(trackerOf(current), groupPolicy(job, alloc.TaskGroup), core.ctx.clock.now());
}

/** createBatchedUpdate: the allocation may be rescheduled within the deployment; an evaluation lets the reconciler do it. */
function allowReschedule(core: EngineCore, deployment: DeploymentRow, alloc: AllocRow): void {
  const { state, ctx } = core;
  const current = state.allocs.get(alloc.ID) ?? alloc;
  const transition = (current.DesiredTransition as Record<string, unknown> | null | undefined) ?? {};
  if (transition.Reschedule === true) return;
  state.allocs.put(current.ID, { ...current, DesiredTransition: { ...transition, Reschedule: true }, ModifyIndex: ctx.store.writeIndex(), ModifyTime: ctx.clock.now() });
  const job = state.job(deployment.Namespace, deployment.JobID);
  if (job) core.followUps.evaluation(job, "deployment-watcher", { DeploymentID: deployment.ID });
}
