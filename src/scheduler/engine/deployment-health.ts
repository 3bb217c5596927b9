/**
 * The writes that judge a deployment's allocations: health reports (an
 * operator's fails the deployment; a client's goes to the deployment
 * watcher's rules), promoting its canaries, and what a healthy allocation
 * advances (the deployment's success, auto-promotion, the next rolling
 * batch's evaluation, asked for through the core's follow-ups).
 */
import { formatMultierror } from "../../core/go/multierror.js";
import type { AllocRow, EvalRow } from "../state/model.js";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESCRIPTIONS, NON_TERMINAL_CLIENT, TIMERS } from "./constants.js";
import { nanosToMs, type EngineCore } from "./core.js";
import { CodedError } from "./errors.js";
import { armProgressDeadline, failDeployment, progressAfterHealthy, succeedIfComplete, updateDeploymentGroup } from "./deployments.js";
import { allocReportedUnhealthy } from "./deployment-watcher.js";

/** After a healthy allocation: succeed when every group is done, else ask for the next rolling batch. */
export function advanceDeployment(core: EngineCore, deploymentId: string): void {
  const { state } = core;
  const deployment = state.deployments.get(deploymentId);
  if (!deployment || deployment.Status !== "running") return;
  const job = state.job(deployment.Namespace, deployment.JobID);
  if (!job || job.Version !== deployment.JobVersion) return;
  const waitingForPromotion = Object.entries(deployment.TaskGroups).filter(([, g]) => g.DesiredCanaries > 0 && !g.Promoted);
  if (waitingForPromotion.length > 0) {
    // autoPromoteDeployment: as many healthy canaries as desired (a failed canary's replacement counts, the failed one not).
    const canariesHealthy = waitingForPromotion.every(
      ([, g]) =>
        (g.PlacedCanaries ?? []).length >= g.DesiredCanaries &&
        liveCanaries(core, g.PlacedCanaries).filter((a) => (a.DeploymentStatus as { Healthy?: boolean } | null)?.Healthy === true).length === g.DesiredCanaries,
    );
    if (canariesHealthy && waitingForPromotion.every(([, g]) => g.AutoPromote)) promote(core, deploymentId, undefined);
    return;
  }
  if (succeedIfComplete(core, deploymentId)) return;
  // Counted, not listed: this runs after every healthy allocation, and listing the job's made a deployment of N O(N²).
  const oldLive = state.liveAllocCount(job.Namespace, job.ID) > state.liveAllocCount(job.Namespace, job.ID, job.Version);
  // A group still short of its count (a rolling update that also scaled up) needs the next batch too.
  const short = Object.entries(deployment.TaskGroups).some(([name, g]) => state.liveAllocCount(job.Namespace, job.ID, job.Version, name) < g.DesiredTotal);
  if (oldLive || short) core.followUps.evaluation(job, "deployment-watcher", { DeploymentID: deploymentId });
}

/** Promotes canaries (all groups, or the named ones); throws Nomad's RPC errors. Returns the follow-up eval. */
export function promote(core: EngineCore, deploymentId: string, groups: readonly string[] | undefined): EvalRow {
  const { state, ctx } = core;
  const deployment = state.deployments.get(deploymentId);
  if (!deployment) throw new CodedError(500, "deployment not found");
  if (!ACTIVE_DEPLOYMENT.has(deployment.Status)) throw new CodedError(500, "can't promote terminal deployment");
  const chosen = Object.entries(deployment.TaskGroups).filter(([name, g]) => g.DesiredCanaries > 0 && (!groups || groups.includes(name)));
  if (chosen.length === 0) throw new CodedError(500, "no canaries to promote");
  const unhealthy: string[] = [];
  for (const [name, g] of chosen) {
    // A canary that failed and was rescheduled is no longer one to wait for: its replacement is.
    const canaries = liveCanaries(core, g.PlacedCanaries);
    for (const alloc of canaries) {
      if ((alloc.DeploymentStatus as { Healthy?: boolean } | null)?.Healthy !== true) unhealthy.push(`Canary allocation "${alloc.ID}" for group "${name}" is not healthy`);
    }
    if (canaries.length < g.DesiredCanaries) unhealthy.push(`Task group "${name}" has ${canaries.length}/${g.DesiredCanaries} healthy canaries`);
  }
  if (unhealthy.length) throw new CodedError(500, formatMultierror(unhealthy));
  const index = ctx.store.writeIndex();
  const taskGroups = { ...deployment.TaskGroups };
  // Promotion restarts a progress-based group's deadline (state_store UpdateDeploymentPromotion).
  const now = ctx.clock.now();
  for (const [name, g] of chosen)
    taskGroups[name] = {
      ...g,
      Promoted: true,
      RequireProgressBy: g.ProgressDeadline > 0 && g.RequireProgressBy !== null ? now + nanosToMs(g.ProgressDeadline) : g.RequireProgressBy,
    };
  const stillWaiting = Object.values(taskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted);
  state.deployments.put(deploymentId, {
    ...deployment,
    TaskGroups: taskGroups,
    StatusDescription: stillWaiting ? deployment.StatusDescription : DEPLOYMENT_DESCRIPTIONS.running,
    ModifyIndex: index,
    ModifyTime: ctx.clock.now(),
  });
  armProgressDeadline(core, deploymentId);
  ctx.events.record("deployment.promoted", { service: "scheduler", subject: deploymentId, detail: { groups: chosen.map(([name]) => name) } });
  const job = state.job(deployment.Namespace, deployment.JobID)!;
  return core.followUps.evaluation(job, "deployment-watcher", { DeploymentID: deploymentId });
}

/** The deployment's canaries that still run or wait to (a rescheduled canary is stopped, a failed one is done). */
export function liveCanaries(core: EngineCore, placed: readonly string[] | null): AllocRow[] {
  return (placed ?? [])
    .map((id) => core.state.allocs.get(id))
    .filter((a): a is AllocRow => a !== undefined && a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
}

/**
 * Health reports: an operator's (`/v1/deployment/allocation-health`, its own
 * raft message, DeploymentAllocHealth) or a client's (the control API's
 * alloc health, an allocation update as far as events go).
 */
export function setAllocHealth(
  core: EngineCore,
  deploymentId: string,
  healthy: readonly string[],
  unhealthy: readonly string[],
  reporter: "operator" | "client" = "operator",
): { revertedVersion: number | null; evalId: string; evalIndex: number } {
  const { state, ctx } = core;
  // Deployment.SetAllocHealth checks the request before it looks the deployment up.
  if (healthy.length + unhealthy.length === 0) throw new CodedError(500, "must specify at least one healthy/unhealthy allocation ID");
  const deployment = state.deployments.get(deploymentId);
  if (!deployment) throw new CodedError(500, "deployment not found");
  if (!ACTIVE_DEPLOYMENT.has(deployment.Status)) throw new CodedError(500, "can't set health of allocations for a terminal deployment");
  for (const id of [...healthy, ...unhealthy]) {
    const alloc = state.allocs.get(id);
    if (!alloc || alloc.DeploymentID !== deploymentId) throw new CodedError(500, `Deployment "${deploymentId}" does not contain allocation "${id}"`);
  }
  const now = ctx.clock.now();
  if (reporter === "operator")
    ctx.events.record("deployment.alloc-health", { service: "scheduler", subject: deploymentId, detail: { healthy: [...healthy], unhealthy: [...unhealthy] } });
  for (const [ids, isHealthy] of [
    [healthy, true],
    [unhealthy, false],
  ] as const) {
    for (const id of ids) {
      const alloc = state.allocs.get(id)!;
      const index = ctx.store.writeIndex();
      const canary = Boolean((alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary);
      state.allocs.put(id, { ...alloc, DeploymentStatus: { Healthy: isHealthy, Timestamp: now, Canary: canary, ModifyIndex: index }, ModifyIndex: index, ModifyTime: now });
      ctx.clock.cancelFor(TIMERS.allocHealthy, id);
      updateDeploymentGroup(core, deploymentId, alloc.TaskGroup, (g) =>
        isHealthy ? { ...g, HealthyAllocs: g.HealthyAllocs + 1, RequireProgressBy: progressAfterHealthy(g, now) } : { ...g, UnhealthyAllocs: g.UnhealthyAllocs + 1 },
      );
    }
  }
  if (healthy.length > 0) armProgressDeadline(core, deploymentId);
  if (unhealthy.length > 0) {
    // An operator's report is Nomad's SetAllocHealth, which fails the deployment at once; a client's
    // is an allocation update, which the deployment watcher judges (deployment-watcher.ts).
    if (reporter === "operator") return failDeployment(core, deploymentId, DEPLOYMENT_DESCRIPTIONS.failedAllocations);
    for (const id of unhealthy) allocReportedUnhealthy(core, deploymentId, state.allocs.get(id)!);
    return { revertedVersion: null, evalId: "", evalIndex: 0 };
  }
  advanceDeployment(core, deploymentId);
  const job = state.job(deployment.Namespace, deployment.JobID)!;
  const evaluation = core.followUps.evaluation(job, "deployment-watcher", { DeploymentID: deploymentId });
  return { revertedVersion: null, evalId: evaluation.ID, evalIndex: evaluation.CreateIndex };
}
