/**
 * Reschedule policies: when a failed allocation gets a replacement, and
 * when (scheduler-breadth-nomad.md §3.8; nomad/structs Allocation
 * NextRescheduleTime / NextDelay / RescheduleEligible, RescheduleTracker;
 * scheduler/reconcile_util.go updateByReschedulable; reconcile.go
 * createRescheduleLaterEvals; generic_sched.go updateRescheduleTracker).
 *
 * - An allocation is reschedulable once it has failed (client status
 *   `failed`, still desired to run, never replaced) and its group's policy
 *   allows it: `Unlimited`, or fewer than `Attempts` reschedules within
 *   `Interval` of its failure (the tracker's events count them).
 * - Its reschedule time is its failure (the last task's FinishedAt) plus the
 *   next delay: `Delay` at first, then by `DelayFunction` (constant,
 *   exponential: the last delay doubled, fibonacci: the last two summed),
 *   capped at `MaxDelay` (and back to `Delay` once a capped delay has fully
 *   passed since the last reschedule).
 * - The scheduler replaces it now when that time is within a second, or when
 *   the evaluation is the follow-up made for it; otherwise it makes (batched
 *   within 5 s) follow-up evaluations waiting until that time, and marks the
 *   allocation with their ID. An allocation of an active deployment waits for
 *   the deployment watcher's permission (`DesiredTransition.Reschedule`).
 * - The replacement carries the tracker: the events still within Interval
 *   (or, unlimited, the last five), then one for this reschedule.
 *
 * The tracker rows and their view are in ../state/reschedule-tracker.ts.
 */
import { versionKey, type AllocRow, type DeploymentRow, type EvalRow, type JobRow } from "../state/model.js";
import { ACTIVE_DEPLOYMENT } from "./constants.js";
import { NS_PER_MS, type RescheduleEventRow, type RescheduleTrackerRow } from "../state/reschedule-tracker.js";
import type { EngineCore } from "./core.js";

/** Nomad's ReschedulePolicy as canonicalized onto the group (durations in nanoseconds). */
export interface ReschedulePolicy {
  readonly Attempts: number;
  readonly Interval: number;
  readonly Delay: number;
  readonly DelayFunction: string;
  readonly MaxDelay: number;
  readonly Unlimited: boolean;
}

/** reconcile_util.go rescheduleWindowSize: a reschedule due within this is done now. */
const RESCHEDULE_WINDOW_MS = 1_000;
/** reconcile.go batchedFailedAllocWindowSize: follow-ups due this close share one evaluation. */
const BATCH_WINDOW_MS = 5_000;
/** generic_sched.go maxPastRescheduleEvents: what an unlimited policy carries over. */
const MAX_PAST_EVENTS = 5;
/** reconcile.go reschedulingFollowupEvalDesc. */
export const FOLLOWUP_EVAL_DESCRIPTION = "created for delayed rescheduling";
/** reconcile.go allocRescheduled. */
export const ALLOC_RESCHEDULED = "alloc was rescheduled because it failed";

/** The group's policy in a job document (null when it has none: system jobs, or removed). */
export function groupPolicy(job: JobRow | undefined, groupName: string): ReschedulePolicy | null {
  const group = (job?.TaskGroups as unknown as Array<Record<string, unknown>> | undefined)?.find((g) => g.Name === groupName);
  const policy = group?.ReschedulePolicy as Record<string, unknown> | null | undefined;
  if (!policy) return null;
  return {
    Attempts: Number(policy.Attempts ?? 0),
    Interval: Number(policy.Interval ?? 0),
    Delay: Number(policy.Delay ?? 0),
    DelayFunction: String(policy.DelayFunction ?? ""),
    MaxDelay: Number(policy.MaxDelay ?? 0),
    Unlimited: Boolean(policy.Unlimited),
  };
}

/** Allocation.ReschedulePolicy: the policy of the job version the allocation runs. */
export function allocPolicy(core: EngineCore, alloc: AllocRow): ReschedulePolicy | null {
  const job = core.state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? core.state.job(alloc.Namespace, alloc.JobID);
  return groupPolicy(job, alloc.TaskGroup);
}

export function trackerOf(alloc: AllocRow): RescheduleTrackerRow | null {
  return (alloc.RescheduleTracker as RescheduleTrackerRow | null | undefined) ?? null;
}

/** Allocation.LastEventTime: the latest task FinishedAt, else the allocation's ModifyTime (virtual ms). */
export function failTime(alloc: AllocRow): number {
  let latest: number | null = null;
  const states = alloc.TaskStates as Record<string, { FinishedAt: number | null }> | null | undefined;
  for (const state of Object.values(states ?? {})) {
    if (state.FinishedAt !== null && (latest === null || state.FinishedAt > latest)) latest = state.FinishedAt;
  }
  return latest ?? alloc.ModifyTime;
}

/** RescheduleTracker.rescheduleInfo: the reschedules within Interval of `at` (ms). */
function attemptedWithin(tracker: RescheduleTrackerRow | null, policy: ReschedulePolicy, at: number): number {
  if (!tracker || policy.Attempts <= 0) return 0;
  return tracker.Events.filter((e) => (at - e.RescheduleTime) * NS_PER_MS < policy.Interval).length;
}

/** RescheduleTracker.RescheduleEligible: whether the policy allows one more reschedule at `at` (ms). */
export function rescheduleEligible(tracker: RescheduleTrackerRow | null, policy: ReschedulePolicy | null, at: number): boolean {
  if (!policy) return false;
  if (policy.Attempts <= 0 && !policy.Unlimited) return false;
  if (policy.Unlimited) return true;
  if (!tracker || tracker.Events.length === 0) return true;
  return attemptedWithin(tracker, policy, at) < policy.Attempts;
}

/** Allocation.NextDelay (nanoseconds). */
export function nextDelay(alloc: AllocRow, policy: ReschedulePolicy | null): number {
  if (!policy) return 0;
  const events = trackerOf(alloc)?.Events ?? [];
  if (events.length === 0) return policy.Delay;
  const last = events[events.length - 1]!;
  let delay: number;
  switch (policy.DelayFunction) {
    case "exponential":
      delay = last.Delay * 2;
      break;
    case "fibonacci": {
      if (events.length < 2) {
        delay = policy.Delay;
        break;
      }
      const before = events[events.length - 2]!;
      // A capped sequence that was reset starts over (MaxDelay, then Delay).
      delay = before.Delay === policy.MaxDelay && last.Delay === policy.Delay ? last.Delay : last.Delay + before.Delay;
      break;
    }
    default:
      return policy.Delay;
  }
  if (policy.MaxDelay > 0 && delay > policy.MaxDelay) {
    delay = policy.MaxDelay;
    // Once a capped delay has fully passed since the last reschedule, the sequence starts over.
    if ((failTime(alloc) - last.RescheduleTime) * NS_PER_MS > delay) delay = policy.Delay;
  }
  return delay;
}

/** Allocation.NextRescheduleTime: when (ms) the failed allocation may be replaced, and whether it may. */
export function nextRescheduleTime(alloc: AllocRow, policy: ReschedulePolicy | null): { at: number; eligible: boolean } {
  if (alloc.DesiredStatus === "stop" || alloc.ClientStatus !== "failed" || !policy) return { at: 0, eligible: false };
  const failedAt = failTime(alloc);
  const delay = nextDelay(alloc, policy);
  const at = failedAt + Math.ceil(delay / NS_PER_MS);
  const tracker = trackerOf(alloc);
  let eligible = policy.Unlimited || (policy.Attempts > 0 && tracker === null);
  if (policy.Attempts > 0 && tracker !== null) eligible = attemptedWithin(tracker, policy, failedAt) < policy.Attempts && delay < policy.Interval;
  return { at, eligible };
}

export type Disposition = { readonly kind: "now" } | { readonly kind: "later"; readonly at: number } | { readonly kind: "held" };

function transition(alloc: AllocRow): { Reschedule?: boolean | null; ForceReschedule?: boolean | null } {
  return (alloc.DesiredTransition as { Reschedule?: boolean | null; ForceReschedule?: boolean | null } | null | undefined) ?? {};
}

/**
 * updateByReschedulable for an allocation that failed and still counts for
 * its group: replace it now, make a follow-up for later, or keep it as it is
 * (it still fills its slot: not eligible, waiting on a follow-up, or held by
 * an active deployment).
 */
export function disposition(
  core: EngineCore,
  alloc: AllocRow,
  now: number,
  evalId: string,
  deployment: DeploymentRow | undefined,
  policyOf: (alloc: AllocRow) => ReschedulePolicy | null = (a) => allocPolicy(core, a),
): Disposition {
  if (deployment && alloc.DeploymentID === deployment.ID && ACTIVE_DEPLOYMENT.has(deployment.Status) && transition(alloc).Reschedule !== true) return { kind: "held" };
  if (transition(alloc).ForceReschedule === true) return { kind: "now" };
  const { at, eligible } = nextRescheduleTime(alloc, policyOf(alloc));
  if (eligible && (alloc.FollowupEvalID === evalId || at - now <= RESCHEDULE_WINDOW_MS)) return { kind: "now" };
  if (eligible && !alloc.FollowupEvalID) return { kind: "later", at };
  return { kind: "held" };
}

/** updateRescheduleTracker: the replacement's tracker (at `now`, ms), from the allocation it replaces. */
export function trackerFor(core: EngineCore, previous: AllocRow, now: number, lastReschedule = "ok"): RescheduleTrackerRow {
  const policy = allocPolicy(core, previous);
  const old = trackerOf(previous)?.Events ?? [];
  let kept: RescheduleEventRow[] = [];
  if (policy && policy.Attempts > 0) kept = old.filter((e) => policy.Interval > 0 && (now - e.RescheduleTime) * NS_PER_MS <= policy.Interval);
  else kept = old.slice(-MAX_PAST_EVENTS);
  const event: RescheduleEventRow = { RescheduleTime: now, PrevAllocID: previous.ID, PrevNodeID: previous.NodeID, Delay: nextDelay(previous, policy) };
  return { Events: [...kept, event], LastReschedule: lastReschedule };
}

/**
 * createLostLaterEvals as the reconciler uses it for failed allocations: one
 * follow-up evaluation per batch of reschedule times within 5 s of the
 * batch's first (sorted by time), waiting until that first time. Returns
 * each allocation's follow-up ID; `make` creates an evaluation.
 */
export function batchFollowUps(later: ReadonlyArray<{ alloc: AllocRow; at: number }>, make: (waitUntil: number, first: boolean) => EvalRow): Map<string, string> {
  const byAlloc = new Map<string, string>();
  const sorted = [...later].sort((a, b) => a.at - b.at || (a.alloc.ID < b.alloc.ID ? -1 : 1));
  let batchStart = Number.NaN;
  let current: EvalRow | undefined;
  for (const { alloc, at } of sorted) {
    if (!current || at - batchStart >= BATCH_WINDOW_MS) {
      current = make(at, current === undefined);
      batchStart = at;
    }
    byAlloc.set(alloc.ID, current.ID);
  }
  return byAlloc;
}
