/**
 * The scheduler's reconciler: what an eval does to a job's allocations.
 * Service and batch groups place up to their count (rolling max_parallel at
 * a time under a deployment, canaries first when the update asks for them),
 * update in place what changed only in count, and stop what is surplus or
 * replaced; failed allocations are rescheduled per their policy (mid-update
 * too, once the deployment watcher allows it: the replacement joins the
 * deployment, a canary's as a canary); system and sysbatch groups run one
 * allocation per feasible node.
 */
import type { AllocRow, DeploymentRow, EvalRow, JobRow } from "../state/model.js";
import { syncAllocServices } from "../services/service-registrations.js";
import { stopAlloc, stopAllocByPlan } from "./allocations.js";
import { DEPLOYMENT_DESCRIPTIONS, NON_TERMINAL_CLIENT } from "./constants.js";
import type { EngineCore, Group } from "./core.js";
import { cancelDeployments, deploymentFor, succeedIfComplete, updateDeploymentGroup } from "./deployments.js";
import { sameGroupSpec } from "./group-spec.js";
import { allocMetric, allocNamer, exhaustedDimensions, exhaustion, feasibleNodes, migrationQueue, pickNode, placeAlloc } from "./placement.js";
import { markNoPlacement, markRescheduled, replacementFields, scheduleFollowUps, sortFailed } from "./reschedule-reconcile.js";

export function reconcile(core: EngineCore, job: JobRow | undefined, evaluation: EvalRow) {
  const outcome = { placed: 0, queued: {} as Record<string, number>, failed: null as Record<string, unknown> | null, deploymentId: "" };
  const { state } = core;
  const allocs = state.allocsOfJob(evaluation.Namespace, evaluation.JobID);
  if (!job || job.Stop) {
    // The plan only marks them; each client reports its allocation complete later (stopAllocByPlan).
    for (const alloc of allocs) if (alloc.DesiredStatus === "run") stopAllocByPlan(core, alloc, "alloc not needed due to job update");
    cancelDeployments(core, evaluation.Namespace, evaluation.JobID, DEPLOYMENT_DESCRIPTIONS.stoppedJob);
    return outcome;
  }
  if (job.Type === "system" || job.Type === "sysbatch") return reconcileSystem(core, job, evaluation, allocs, outcome);
  // A deployment that succeeded is done with (cancelUnneededDeployments): later placements, such as a
  // failed or lost allocation's replacement, are no part of it.
  const found = deploymentFor(core, job);
  const deployment = found?.Status === "successful" ? undefined : found;
  for (const group of job.TaskGroups as unknown as Group[]) {
    const live = allocs.filter((a) => a.TaskGroup === group.Name && a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
    // Allocations whose group changed only in count are updated in place, not replaced.
    const inPlace = live.filter((a) => a.JobVersion !== job.Version && sameGroupSpec(core, a, group));
    for (const alloc of inPlace) updateInPlace(core, alloc, job, deployment);
    const updated = new Set(inPlace.map((a) => a.ID));
    const current = live.filter((a) => a.JobVersion === job.Version || updated.has(a.ID));
    const old = live.filter((a) => a.JobVersion !== job.Version && !updated.has(a.ID));
    const maxParallel = Number(group.Update?.MaxParallel ?? 0);
    const rolling = deployment !== undefined && old.length > 0 && maxParallel > 0;
    const deploymentGroup = deployment?.TaskGroups[group.Name];
    const mine = allocs.filter((a) => a.TaskGroup === group.Name);
    // Failed allocations are replaced now, later (a follow-up eval) or not at all, per the reschedule policy.
    const failed = sortFailed(core, mine, evaluation.ID, deployment);
    // A failed allocation kept from a version the job has since changed is replaced by the update, as a running one is.
    const outdated = rolling ? [] : failed.kept.filter((a) => a.JobVersion !== job.Version && !sameGroupSpec(core, a, group));
    scheduleFollowUps(
      core,
      job,
      failed.later.filter((l) => !outdated.includes(l.alloc)),
    );
    // A batch allocation that completed at this version is done, and keeps its slot (Nomad's shouldFilter).
    const done = job.Type === "batch" ? mine.filter((a) => a.DesiredStatus === "run" && a.ClientStatus === "complete" && a.JobVersion === job.Version) : [];
    let toPlace: number;
    let canary = false;
    let replacing: AllocRow[] = [];
    if (!rolling) {
      for (const alloc of [...old, ...outdated]) stopAlloc(core, alloc, "alloc is being updated due to job update");
      toPlace = Math.max(0, group.Count - current.length - (failed.kept.length - outdated.length) - done.length);
      replacing = failed.now.slice(0, toPlace);
    } else {
      // Mid-update, the new version's failed allocations hold their slots, and those the deployment
      // watcher let through are rescheduled whatever the update's state (placeAllocs places
      // reschedules even while canarying or paused); old ones are left to the update.
      const keptNew = failed.kept.filter((a) => a.JobVersion === job.Version);
      replacing = failed.now.filter((a) => a.JobVersion === job.Version);
      const occupied = current.length + keptNew.length + replacing.length;
      let fresh: number;
      if (deploymentGroup && deploymentGroup.DesiredCanaries > 0 && !deploymentGroup.Promoted) {
        // Canaries run beside the old version until promoted.
        fresh = Math.max(0, deploymentGroup.DesiredCanaries - occupied);
        canary = true;
      } else if (deployment!.Status === "paused") {
        fresh = 0;
      } else {
        // Old allocations the new ones (promoted canaries included) already make surplus stop first;
        // then the update rolls max_parallel at a time, each batch once the previous is healthy
        // (computeUnderProvisionedBy: one unhealthy allocation of the deployment halts it), the
        // reschedules counting against the batch.
        const surplus = Math.max(0, current.length + old.length - group.Count);
        for (const alloc of old.slice(0, surplus)) stopAlloc(core, alloc, "alloc is being updated due to job update");
        const remainingOld = old.slice(surplus);
        const health = (a: AllocRow) => (a.DeploymentStatus as { Healthy?: boolean | null } | null)?.Healthy;
        const ofDeployment = [...current, ...keptNew].filter((a) => a.DeploymentID === deployment!.ID);
        const underProvisioned = ofDeployment.some((a) => health(a) === false) ? 0 : maxParallel - current.filter((a) => health(a) !== true).length;
        fresh = Math.max(0, Math.min(group.Count - occupied, underProvisioned - replacing.length));
        for (const alloc of remainingOld.slice(0, fresh)) stopAlloc(core, alloc, "alloc is being updated due to job update");
      }
      toPlace = replacing.length + fresh;
    }
    // More running than wanted: stop the newest extras.
    for (const alloc of current.slice(Math.max(group.Count, deploymentGroup?.DesiredCanaries ?? 0)).reverse()) stopAlloc(core, alloc, "alloc not needed due to job update");

    const usedNames = new Set([...live, ...failed.kept, ...failed.now, ...done].filter((a) => a.DesiredStatus === "run" && !outdated.includes(a)).map((a) => a.Name));
    const nextName = allocNamer(job.ID, group.Name, usedNames);
    const migrations = migrationQueue(core, job, group);
    let unplaced = 0;
    for (let i = 0; i < toPlace; i++) {
      const node = pickNode(core, job, group);
      if (!node) {
        // Failed allocations whose replacements found no node stay as they are, marked, to be tried again.
        for (const previous of replacing.slice(i)) markNoPlacement(core, previous);
        unplaced = toPlace - i;
        break;
      }
      const previous = replacing[i];
      const name = previous ? previous.Name : nextName();
      usedNames.add(name);
      // A rescheduled canary's replacement is a canary too (computePlacements).
      const asCanary = previous ? Boolean((previous.DeploymentStatus as { Canary?: boolean } | null)?.Canary) : canary;
      const placed = placeAlloc(core, job, group, node, evaluation, name, deployment, asCanary, previous ? replacementFields(core, previous) : undefined, migrations);
      if (previous) markRescheduled(core, previous, placed.ID);
      outcome.placed++;
    }
    outcome.queued[group.Name] = unplaced;
    if (unplaced > 0) {
      outcome.failed ??= {};
      outcome.failed[group.Name] = allocMetric(state.nodes.size, unplaced, exhaustedDimensions(core, job, group));
    }
  }
  if (deployment) {
    outcome.deploymentId = deployment.ID;
    // A deployment the plan met at once (every allocation updated in place and already healthy) is done.
    succeedIfComplete(core, deployment.ID);
  }
  return outcome;
}

/** An in-place update: the allocation moves to the new version (and its deployment) as it is. */
function updateInPlace(core: EngineCore, alloc: AllocRow, job: JobRow, deployment: DeploymentRow | undefined): void {
  const { state, ctx } = core;
  const index = ctx.store.writeIndex();
  const status = alloc.DeploymentStatus as { Healthy?: boolean; Canary?: boolean } | null;
  const healthy = status?.Healthy === true;
  // Joining another deployment clears the canary mark (Nomad's scheduler resets DeploymentStatus
  // then), so a promoted canary counts as an ordinary allocation of the new version. Its health
  // is kept (Nomad's client re-checks it; the allocation is already running and healthy here).
  const moved = deployment !== undefined && deployment.ID !== alloc.DeploymentID;
  const deploymentStatus = moved && status?.Canary ? { ...status, Canary: false } : alloc.DeploymentStatus;
  const updated = state.allocs.put(alloc.ID, {
    ...alloc,
    JobVersion: job.Version,
    DeploymentID: deployment?.ID ?? alloc.DeploymentID,
    DeploymentStatus: deploymentStatus,
    ModifyIndex: index,
    ModifyTime: ctx.clock.now(),
  });
  // An in-place update may change a service's tags (or promote a canary off its canary_tags).
  syncAllocServices(state, updated);
  if (deployment) {
    updateDeploymentGroup(core, deployment.ID, alloc.TaskGroup, (g) => ({ ...g, PlacedAllocs: g.PlacedAllocs + 1, HealthyAllocs: g.HealthyAllocs + (healthy ? 1 : 0) }));
  }
}

/**
 * System and sysbatch jobs: one allocation per feasible node, whatever the
 * count; allocations on nodes that no longer qualify are stopped, and a
 * changed spec replaces them node by node. Sysbatch allocations that
 * completed are not run again on the same node.
 */
function reconcileSystem(
  core: EngineCore,
  job: JobRow,
  evaluation: EvalRow,
  allocs: AllocRow[],
  outcome: { placed: number; queued: Record<string, number>; failed: Record<string, unknown> | null; deploymentId: string },
) {
  for (const group of job.TaskGroups as unknown as Group[]) {
    const mine = allocs.filter((a) => a.TaskGroup === group.Name);
    const feasible = new Set(feasibleNodes(core, job, group).map((n) => n.ID));
    for (const alloc of mine) {
      const live = alloc.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(alloc.ClientStatus);
      if (!live) continue;
      if (!feasible.has(alloc.NodeID)) stopAlloc(core, alloc, "alloc not needed as node is tainted");
      else if (alloc.JobVersion !== job.Version && !sameGroupSpec(core, alloc, group)) stopAlloc(core, alloc, "alloc is being updated due to job update");
      else if (alloc.JobVersion !== job.Version) updateInPlace(core, alloc, job, undefined);
    }
    const covered = new Set(
      core.state
        .allocsOfJob(job.Namespace, job.ID)
        .filter(
          (a) =>
            a.TaskGroup === group.Name &&
            ((a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus)) || (job.Type === "sysbatch" && a.ClientStatus === "complete" && a.JobVersion === job.Version)),
        )
        .map((a) => a.NodeID),
    );
    const need = group as Group;
    let unplaced = 0;
    const exhausted: Record<string, number> = {};
    for (const node of core.state.nodes.sorted()) {
      if (!feasible.has(node.ID) || covered.has(node.ID)) continue;
      const dimension = exhaustion(core, node, need);
      if (dimension !== undefined) {
        exhausted[dimension] = (exhausted[dimension] ?? 0) + 1;
        unplaced++;
        continue;
      }
      placeAlloc(core, job, group, node, evaluation, `${job.ID}.${group.Name}[0]`, undefined);
      outcome.placed++;
    }
    outcome.queued[group.Name] = unplaced;
    if (unplaced > 0) {
      outcome.failed ??= {};
      outcome.failed[group.Name] = allocMetric(core.state.nodes.size, unplaced, exhausted);
    }
  }
  return outcome;
}
