/**
 * What Nomad's core scheduler may collect (nomad/core_sched.go, state
 * schema's jobIsGCable), as pure functions over the rows: terminal states,
 * the batch-evaluation rule, an allocation's eligibility (reschedule
 * policy, lost allocations), which jobs job GC considers.
 *
 * Age, as Nomad 1.9.2 and later judge it (PR #24112 replaced the FSM time
 * table with the objects' own times): an object is old when its time is not
 * after the `cutoff` (now − threshold): an evaluation's, allocation's or
 * deployment's ModifyTime, a job's SubmitTime (its latest version's), a
 * node's StatusUpdatedAt in whole seconds (gc.ts downSince). Nomad keeps
 * nanoseconds, standin's virtual instants are milliseconds: on the virtual
 * clock the two agree. A forced GC passes a cutoff of +∞ (Nomad's: 1 ms).
 */
import type { AllocRow, DeploymentRow, EvalRow, JobRow, SchedulerState } from "../state/model.js";
import { groupPolicy, trackerOf } from "./rescheduling.js";

const TERMINAL_EVAL = new Set(["complete", "failed", "canceled"]);
/** Deployment.Active's statuses. */
const ACTIVE_DEPLOYMENT = new Set(["running", "paused", "pending", "blocked", "unblocking", "initializing"]);

export const evalTerminal = (e: EvalRow) => TERMINAL_EVAL.has(e.Status);

/** Allocation.TerminalStatus: stopped or evicted by the server, or complete, failed or lost on the client. */
export const allocTerminal = (a: AllocRow) =>
  a.DesiredStatus === "stop" || a.DesiredStatus === "evict" || a.ClientStatus === "complete" || a.ClientStatus === "failed" || a.ClientStatus === "lost";

export const deploymentActive = (d: DeploymentRow) => ACTIVE_DEPLOYMENT.has(d.Status);

const isBatchType = (type: unknown) => type === "batch" || type === "sysbatch";

/**
 * jobIsGCable: periodic and parameterized parents only once stopped; other
 * jobs once dead, and then only stopped ones or batch ones (a dead service
 * job that was not stopped stays). Tagged versions are kept.
 */
export function jobGCable(job: JobRow): boolean {
  if (job.VersionTag !== null && job.VersionTag !== undefined) return false;
  const periodic = job.Periodic !== null && job.Periodic !== undefined && (job.Periodic as { Enabled?: unknown }).Enabled !== false;
  const parameterized = job.ParameterizedJob !== null && job.ParameterizedJob !== undefined;
  if (periodic || parameterized) return job.Stop === true;
  if (job.Status !== "dead") return false;
  return job.Stop === true || isBatchType(job.Type);
}

/** What gcEval decided: collect the evaluation or not, which of its allocations go, and when to look again (null: only when something changes). */
export interface EvalVerdict {
  collect: boolean;
  allocIds: string[];
  retryAt: number | null;
}

/**
 * gcEval: a terminal evaluation old enough, whose allocations are all
 * eligible (those that are go even when the evaluation stays). A batch
 * job's evaluation stays while its job is alive (`allowBatch`, job GC, lets
 * a dead job's go), but its terminal allocations of older job versions go.
 */
export function gcEval(state: SchedulerState, evaluation: EvalRow, cutoff: number, threshold: number, allowBatch: boolean, now: number): EvalVerdict {
  if (!evalTerminal(evaluation)) return { collect: false, allocIds: [], retryAt: null };
  if (evaluation.ModifyTime > cutoff) return { collect: false, allocIds: [], retryAt: evaluation.ModifyTime + threshold };
  const job = state.job(evaluation.Namespace, evaluation.JobID);
  const allocs = state.allocsOfEval(evaluation.ID);
  if (evaluation.Type === "batch") {
    const collect = !job || (job.Status === "dead" && (job.Stop === true || allowBatch));
    if (!collect) {
      const old = allocs.filter((a) => a.CreateIndex < job!.JobModifyIndex && a.ModifyTime < cutoff && allocTerminal(a));
      const retryAt = earliestOf(allocs.filter((a) => a.CreateIndex < job!.JobModifyIndex && allocTerminal(a) && a.ModifyTime >= cutoff).map((a) => a.ModifyTime + threshold + 1));
      return { collect: old.length === allocs.length, allocIds: ids(old), retryAt };
    }
  }
  let collect = true;
  let retryAt: number | null = null;
  const allocIds: string[] = [];
  for (const alloc of allocs) {
    const eligible = allocGCEligible(alloc, job, now, cutoff, threshold);
    if (eligible === true) allocIds.push(alloc.ID);
    else {
      collect = false;
      if (typeof eligible === "number") retryAt = retryAt === null ? eligible : Math.min(retryAt, eligible);
    }
  }
  return { collect, allocIds: allocIds.sort(), retryAt };
}

/** allocGCEligible: true, or false, or the instant it becomes eligible if nothing else changes. */
export function allocGCEligible(alloc: AllocRow, job: JobRow | undefined, now: number, cutoff: number, threshold: number): boolean | number {
  if (!allocTerminal(alloc)) return false;
  if (alloc.ModifyTime > cutoff) return alloc.ModifyTime + threshold;
  if (alloc.ClientStatus === "running") return false;
  // Nomad 1.9's order; it has no rule for lost allocations (prevent_reschedule_on_lost or not): they go as any other.
  if (!job || job.Stop === true || job.Status === "dead") return true;
  if (alloc.DesiredStatus === "stop") return true;
  if (alloc.ClientStatus !== "failed") return true;
  const group = (job.TaskGroups as Array<Record<string, unknown>>).find((g) => g.Name === alloc.TaskGroup);
  if (!group) return true;
  const policy = groupPolicy(job, alloc.TaskGroup);
  if (!policy || (!policy.Unlimited && policy.Attempts === 0)) return true;
  if ((alloc.NextAllocation ?? "") !== "") return true;
  if (policy.Unlimited) return false;
  const events = trackerOf(alloc)?.Events ?? [];
  if (events.length === 0) return false;
  // Not while the last reschedule is within the policy's interval (nanoseconds; rows keep ms).
  const intervalEnd = events[events.length - 1]!.RescheduleTime + Math.ceil(policy.Interval / 1_000_000);
  return now > intervalEnd ? true : intervalEnd + 1;
}

function earliestOf(instants: number[]): number | null {
  return instants.length === 0 ? null : Math.min(...instants);
}

function ids(rows: Array<{ ID: string }>): string[] {
  return rows.map((r) => r.ID).sort();
}
