/**
 * What the reconciler does with a group's failed allocations (Nomad's
 * reconcile_util.go filterByRescheduleable, reconcile.go
 * createRescheduleLaterEvals, generic_sched.go's reschedule placements), on
 * top of the policy arithmetic of rescheduling.ts:
 *
 * - `now`: replaced in this pass. The replacement takes the allocation's
 *   name, `PreviousAllocation` and a `RescheduleTracker`; the failed
 *   allocation is stopped ("alloc was rescheduled because it failed") and
 *   gets `NextAllocation`.
 * - `later`: it keeps its slot, and a follow-up evaluation (one per batch of
 *   reschedule times within 5 s) waits until its reschedule time; the
 *   allocation gets the follow-up's ID as `FollowupEvalID`.
 * - `kept`: it keeps its slot and nothing happens (attempts used up, a
 *   follow-up already waiting, or held by its deployment).
 * - A replacement that finds no node leaves the allocation as it is, its
 *   tracker's `LastReschedule` "no placement", for the blocked evaluation.
 *
 * An allocation of the group's active deployment waits for the watcher's
 * `DesiredTransition.Reschedule`; one of a failed deployment is not replaced
 * (computeReplacements' partOfFailedDeployment).
 */
import { versionKey, type AllocRow, type DeploymentRow, type JobRow } from "../state/model.js";
import type { EngineCore } from "./core.js";
import { ALLOC_RESCHEDULED, allocPolicy, batchFollowUps, disposition, FOLLOWUP_EVAL_DESCRIPTION, trackerFor, trackerOf, type ReschedulePolicy } from "./rescheduling.js";

/** structs.LastRescheduleFailedToPlace. */
const LAST_RESCHEDULE_NO_PLACEMENT = "no placement";

export interface FailedAllocs {
  readonly now: AllocRow[];
  readonly kept: AllocRow[];
  readonly later: Array<{ alloc: AllocRow; at: number }>;
}

/** The group's failed allocations that still count for it (desired run), sorted into now / later / kept by the evaluation `evalId`. */
export function sortFailed(core: EngineCore, allocs: readonly AllocRow[], evalId: string, deployment: DeploymentRow | undefined): FailedAllocs {
  const out: FailedAllocs = { now: [], kept: [], later: [] };
  const now = core.ctx.clock.now();
  // One policy per job version and group, not one read of the version per failed allocation: every evaluation
  // of a job with N failed allocations sorts them all.
  const policies = new Map<string, ReschedulePolicy | null>();
  const policyOf = (alloc: AllocRow) => {
    const key = `${versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)}\u0000${alloc.TaskGroup}`;
    let policy = policies.get(key);
    if (policy === undefined) policies.set(key, (policy = allocPolicy(core, alloc)));
    return policy;
  };
  for (const alloc of allocs) {
    if (alloc.DesiredStatus !== "run" || alloc.ClientStatus !== "failed") continue;
    const failedDeployment = deployment !== undefined && alloc.DeploymentID === deployment.ID && deployment.Status === "failed";
    const fate = failedDeployment ? ({ kind: "held" } as const) : disposition(core, alloc, now, evalId, deployment, policyOf);
    if (fate.kind === "now") out.now.push(alloc);
    else {
      out.kept.push(alloc);
      if (fate.kind === "later") out.later.push({ alloc, at: fate.at });
    }
  }
  return out;
}

/** What a replacement of `previous` carries: the link back and the reschedule tracker. */
export function replacementFields(core: EngineCore, previous: AllocRow): Partial<AllocRow> {
  return { PreviousAllocation: previous.ID, RescheduleTracker: trackerFor(core, previous, core.ctx.clock.now()) };
}

/** The failed allocation once replaced: stopped, pointing at its replacement (its client status stays failed). */
export function markRescheduled(core: EngineCore, previous: AllocRow, replacementId: string): void {
  const { state, ctx } = core;
  const current = state.allocs.get(previous.ID) ?? previous;
  state.allocs.put(previous.ID, {
    ...current,
    DesiredStatus: "stop",
    DesiredDescription: ALLOC_RESCHEDULED,
    NextAllocation: replacementId,
    ModifyIndex: ctx.store.writeIndex(),
    ModifyTime: ctx.clock.now(),
  });
}

/** annotateRescheduleTracker: a reschedule that found no node is noted on the failed allocation's tracker. */
export function markNoPlacement(core: EngineCore, previous: AllocRow): void {
  const { state, ctx } = core;
  const current = state.allocs.get(previous.ID) ?? previous;
  const tracker = trackerOf(current);
  if (tracker?.LastReschedule === LAST_RESCHEDULE_NO_PLACEMENT) return;
  state.allocs.put(previous.ID, {
    ...current,
    RescheduleTracker: { Events: tracker?.Events ?? [], LastReschedule: LAST_RESCHEDULE_NO_PLACEMENT },
    ModifyIndex: ctx.store.writeIndex(),
    ModifyTime: ctx.clock.now(),
  });
}

/**
 * createRescheduleLaterEvals: the follow-up evaluations (pending, waiting
 * until their time, `alloc-failure`; the first of a pass described as
 * "created for delayed rescheduling") and each allocation's FollowupEvalID.
 */
export function scheduleFollowUps(core: EngineCore, job: JobRow, later: FailedAllocs["later"]): void {
  if (later.length === 0) return;
  const { state, ctx } = core;
  const byAlloc = batchFollowUps(later, (waitUntil, first) =>
    core.followUps.evaluation(job, "alloc-failure", { JobModifyIndex: job.ModifyIndex, WaitUntil: waitUntil, ...(first ? { StatusDescription: FOLLOWUP_EVAL_DESCRIPTION } : {}) }),
  );
  for (const { alloc } of later) {
    const current = state.allocs.get(alloc.ID)!;
    state.allocs.put(alloc.ID, { ...current, FollowupEvalID: byAlloc.get(alloc.ID)!, ModifyIndex: ctx.store.writeIndex(), ModifyTime: ctx.clock.now() });
  }
}
