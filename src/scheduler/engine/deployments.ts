/**
 * Deployments: created for a job version whose service groups have an
 * update block, their groups' counts and progress deadline kept as
 * allocations become healthy (deployment-health.ts advances them), finished
 * successful (the version marked stable), failed (by unhealthy allocations
 * or the progress deadline, with auto_revert rolling back to the latest
 * stable version, a follow-up the engine core's revert runs) or cancelled.
 */
import { specChanged } from "../jobspec/index.js";
import { jobKey, versionKey, type DeploymentRow, type JobRow } from "../state/model.js";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESCRIPTIONS, NON_TERMINAL_CLIENT, TIMERS } from "./constants.js";
import { nanosToMs, type EngineCore, type Group } from "./core.js";
import { sameGroupSpec } from "./group-spec.js";

/** The job version's deployment, created (and older active ones cancelled) when a service group has an update block. */
export function deploymentFor(core: EngineCore, job: JobRow): DeploymentRow | undefined {
  const { state, ctx } = core;
  if (job.Type !== "service") return undefined;
  const groups = (job.TaskGroups as unknown as Group[]).filter((g) => Number(g.Update?.MaxParallel ?? 0) > 0 && g.Count > 0);
  if (groups.length === 0) return undefined;
  const existing = state.deploymentsOfJob(job.Namespace, job.ID).find((d) => d.JobVersion === job.Version && d.JobCreateIndex === job.CreateIndex);
  if (existing) return existing;
  // A version whose allocations already run (an unchanged re-register) needs no deployment.
  const allocs = state.allocsOfJob(job.Namespace, job.ID).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
  if (allocs.length > 0 && allocs.every((a) => a.JobVersion === job.Version)) return undefined;
  cancelDeployments(core, job.Namespace, job.ID, DEPLOYMENT_DESCRIPTIONS.newerJob);
  // Canaries only apply to destructive updates (Nomad's reconciler: requireCanary needs a destructive
  // change): the first version has nothing to compare against, and an in-place update (a revert to
  // the running spec, a count change) updates the allocations where they are.
  const destructive = (g: Group) => allocs.some((a) => a.TaskGroup === g.Name && !sameGroupSpec(core, a, g));
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

/** Marks a running deployment successful (and its version stable) once every group is healthy and no older allocation runs. */
export function succeedIfComplete(core: EngineCore, deploymentId: string): boolean {
  const { state } = core;
  const deployment = state.deployments.get(deploymentId);
  if (!deployment || deployment.Status !== "running") return false;
  const job = state.job(deployment.Namespace, deployment.JobID);
  if (!job || job.Version !== deployment.JobVersion) return false;
  if (Object.values(deployment.TaskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted)) return false;
  const oldLive = state.liveAllocCount(job.Namespace, job.ID) > state.liveAllocCount(job.Namespace, job.ID, job.Version);
  const done = Object.values(deployment.TaskGroups).every((g) => g.HealthyAllocs >= Math.max(g.DesiredTotal, g.DesiredCanaries));
  if (!done || oldLive) return false;
  finishDeployment(core, deploymentId, "successful", DEPLOYMENT_DESCRIPTIONS.successful);
  markStable(core, job);
  return true;
}

export function finishDeployment(core: EngineCore, deploymentId: string, status: "successful" | "failed" | "cancelled", description: string): void {
  const { state, ctx } = core;
  const deployment = state.deployments.get(deploymentId);
  if (!deployment) return;
  const index = ctx.store.writeIndex();
  state.deployments.put(deploymentId, { ...deployment, Status: status, StatusDescription: description, ModifyIndex: index, ModifyTime: ctx.clock.now() });
  ctx.clock.cancelFor(TIMERS.progressDeadline, deploymentId);
  ctx.events.record(`deployment.${status}`, { service: "scheduler", subject: deploymentId, detail: { job: deployment.JobID, description } });
}

export function setDeploymentPaused(core: EngineCore, deploymentId: string, paused: boolean): void {
  const { state, ctx } = core;
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

export function cancelDeployments(core: EngineCore, namespace: string, jobId: string, description: string): void {
  for (const d of core.state.deploymentsOfJob(namespace, jobId)) if (ACTIVE_DEPLOYMENT.has(d.Status)) finishDeployment(core, d.ID, "cancelled", description);
}

export function updateDeploymentGroup(
  core: EngineCore,
  deploymentId: string,
  group: string,
  update: (g: DeploymentRow["TaskGroups"][string]) => DeploymentRow["TaskGroups"][string],
): void {
  const { state, ctx } = core;
  const deployment = state.deployments.get(deploymentId);
  const current = deployment?.TaskGroups[group];
  if (!deployment || !current) return;
  const index = ctx.store.writeIndex();
  state.deployments.put(deploymentId, { ...deployment, TaskGroups: { ...deployment.TaskGroups, [group]: update(current) }, ModifyIndex: index, ModifyTime: ctx.clock.now() });
}

/** One progress-deadline timer per deployment, at the earliest RequireProgressBy of its groups. */
export function armProgressDeadline(core: EngineCore, deploymentId: string): void {
  const deployment = core.state.deployments.get(deploymentId);
  if (!deployment) return;
  core.ctx.clock.cancelFor(TIMERS.progressDeadline, deploymentId);
  const deadlines = Object.values(deployment.TaskGroups)
    .filter((g) => g.RequireProgressBy !== null && g.ProgressDeadline > 0 && g.HealthyAllocs < g.DesiredTotal)
    .map((g) => g.RequireProgressBy!);
  if (deadlines.length > 0) core.ctx.clock.schedule({ at: Math.min(...deadlines), kind: TIMERS.progressDeadline, subject: deploymentId });
}

/** A healthy allocation moves a progress-based group's deadline to `progress_deadline` after it, never earlier (state_store updateDeploymentWithAlloc). */
export function progressAfterHealthy(g: { ProgressDeadline: number; RequireProgressBy: number | null }, now: number): number | null {
  if (g.ProgressDeadline <= 0) return g.RequireProgressBy;
  return Math.max(g.RequireProgressBy ?? 0, now + nanosToMs(g.ProgressDeadline));
}

/**
 * The progress deadline passed (the watcher's shouldFail): the deployment
 * fails unless every group has the healthy allocations it needs (its
 * canaries while it waits for promotion, else its total), as when it waits
 * for a manual promotion with healthy canaries.
 */
export function progressDeadlinePassed(core: EngineCore, deploymentId: string): unknown {
  const deployment = core.state.deployments.get(deploymentId);
  if (!deployment || deployment.Status !== "running") return { deployment: deploymentId, skipped: true };
  const short = Object.values(deployment.TaskGroups).some((g) => g.HealthyAllocs < (g.DesiredCanaries > 0 && !g.Promoted ? g.DesiredCanaries : g.DesiredTotal));
  if (!short) return { deployment: deploymentId, skipped: true };
  core.ctx.store.write(() => failDeployment(core, deploymentId, DEPLOYMENT_DESCRIPTIONS.progressDeadline));
  return { deployment: deploymentId, status: "failed" };
}

function markStable(core: EngineCore, job: JobRow): void {
  const { state, ctx } = core;
  const index = ctx.store.writeIndex();
  const stable = state.jobs.put(jobKey(job.Namespace, job.ID), { ...job, Stable: true, ModifyIndex: index });
  state.versions.put(versionKey(job.Namespace, job.ID, job.Version), stable);
}

/**
 * Fails a deployment; with auto_revert on a group, reverts the job to its
 * latest stable version (a new version, hence a new deployment), with
 * Nomad's description suffixes. Returns the reverted-to version, if any.
 */
export function failDeployment(core: EngineCore, deploymentId: string, base: string): { revertedVersion: number | null; evalId: string; evalIndex: number } {
  const { state } = core;
  const deployment = state.deployments.get(deploymentId)!;
  const job = state.job(deployment.Namespace, deployment.JobID);
  const autoRevert = Object.values(deployment.TaskGroups).some((g) => g.AutoRevert);
  if (!autoRevert || !job) {
    finishDeployment(core, deploymentId, "failed", base);
    return { revertedVersion: null, evalId: "", evalIndex: 0 };
  }
  const stable = state.jobVersions(job.Namespace, job.ID).find((v) => v.Stable && v.Version !== job.Version);
  if (!stable) {
    finishDeployment(core, deploymentId, "failed", `${base} - no stable job version to auto revert to`);
    return { revertedVersion: null, evalId: "", evalIndex: 0 };
  }
  if (!specChanged(stable, job)) {
    finishDeployment(core, deploymentId, "failed", `${base} - not rolling back to stable job version ${stable.Version} as current job has same specification`);
    return { revertedVersion: null, evalId: "", evalIndex: 0 };
  }
  finishDeployment(core, deploymentId, "failed", `${base} - rolling back to job version ${stable.Version}`);
  const result = core.followUps.revert(job.Namespace, job.ID, stable.Version);
  return { revertedVersion: stable.Version, evalId: result.EvalID, evalIndex: result.EvalCreateIndex };
}
