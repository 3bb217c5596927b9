/**
 * Eval.Delete after its HTTP and ACL checks (nomad/eval_endpoint.go Delete,
 * deleteEvalsByFilter; state store EvalIsUserDeleteSafe, DeleteEval): only
 * while the eval broker is paused; by ID (every one must exist and be safe to
 * delete, else nothing is deleted) or by a go-bexpr filter over the
 * Evaluation (the safe ones that match, in ID order). The allocations stay;
 * the jobs' statuses are worked out again, as DeleteEval's setJobStatuses does.
 */
import { evaluationFilterDatum } from "../state/filter-datum.js";
import { compileFilter, FilterEvaluationError, FilterParseError } from "../../core/filter/index.js";
import { evalView, type EvalRow } from "../state/model.js";
import { brokerPaused } from "./broker.js";
import type { EngineCore } from "./core.js";
import { CodedError } from "./errors.js";
import { groupPolicy } from "./rescheduling.js";
import { refreshJobStatus } from "./summaries.js";

export const BROKER_ENABLED = "eval broker is enabled; eval broker must be paused to delete evals";

/** EvalDeleteResponse without its WriteMeta: how many were deleted, at which index (0 when a filter deleted none). */
export interface EvalDeleteResult {
  Count: number;
  Index: number;
}

export function deleteEvalsById(core: EngineCore, ids: readonly string[]): EvalDeleteResult {
  const { state } = core;
  if (!brokerPaused(core)) throw new CodedError(500, BROKER_ENABLED);
  for (const id of ids) {
    const evaluation = state.evals.get(id);
    if (!evaluation) throw new CodedError(500, "eval not found");
    if (!deleteSafe(core, evaluation)) throw new CodedError(500, `eval ${evaluation.ID} is not safe to delete`);
  }
  // Counted as asked (an ID named twice counts twice), as Nomad counts them before its one raft apply.
  return { Count: ids.length, Index: remove(core, ids) };
}

export function deleteEvalsByFilter(core: EngineCore, expression: string): EvalDeleteResult {
  const { state } = core;
  if (!brokerPaused(core)) throw new CodedError(500, BROKER_ENABLED);
  let filter: ReturnType<typeof compileFilter>;
  try {
    filter = compileFilter(expression);
  } catch (error) {
    // bexpr.CreateEvaluator's error, returned by the RPC as it is: a plain 500.
    if (error instanceof FilterParseError) throw new CodedError(500, error.message);
    throw error;
  }
  const matches = (evaluation: EvalRow) => {
    try {
      return filter.matches(evaluationFilterDatum(evalView(evaluation)));
    } catch (error) {
      if (error instanceof FilterEvaluationError) return false; // an eval the filter cannot evaluate is skipped
      throw error;
    }
  };
  const ids = [...state.evals.ids()].sort().filter((id) => {
    const evaluation = state.evals.get(id)!;
    return deleteSafe(core, evaluation) && matches(evaluation);
  });
  // Nothing matched: no raft apply, so the reply's index is 0.
  if (ids.length === 0) return { Count: 0, Index: 0 };
  return { Count: ids.length, Index: remove(core, ids) };
}

/** DeleteEval in one write: the evaluations gone, their jobs' statuses again (with evalDelete set). */
function remove(core: EngineCore, ids: readonly string[]): number {
  const { state, ctx } = core;
  return ctx.store.write(() => {
    const index = ctx.store.writeIndex();
    // Nomad maps this raft message to no event type: the event stream says nothing of it.
    ctx.events.record("evals.deleted", { service: "scheduler", subject: "", detail: { count: ids.length } });
    const jobs = new Map<string, { namespace: string; id: string }>();
    for (const id of ids) {
      const evaluation = state.evals.get(id);
      if (!evaluation) continue;
      state.evals.delete(id);
      jobs.set(`${evaluation.Namespace}\u0000${evaluation.JobID}`, { namespace: evaluation.Namespace, id: evaluation.JobID });
    }
    for (const job of jobs.values()) refreshJobStatus(core, job.namespace, job.id, { evalDelete: true });
    return index;
  });
}

/**
 * isEvalDeleteSafe: always when the job is gone, stopped or dead; otherwise
 * none of the eval's allocations may be running or unknown, nor failed and
 * still in line for a reschedule that needs the eval.
 */
function deleteSafe(core: EngineCore, evaluation: EvalRow): boolean {
  const job = core.state.job(evaluation.Namespace, evaluation.JobID);
  if (!job || job.Stop || job.Status === "dead") return true;
  for (const alloc of core.state.allocsOfJob(evaluation.Namespace, evaluation.JobID)) {
    if (alloc.EvalID !== evaluation.ID) continue;
    if (alloc.ClientStatus === "running" || alloc.ClientStatus === "unknown") return false;
    if (alloc.ClientStatus !== "failed") continue;
    const policy = groupPolicy(job, alloc.TaskGroup);
    if (!policy || (!policy.Unlimited && policy.Attempts === 0)) continue;
    if ((alloc.NextAllocation ?? "") === "") return false;
    if (policy.Unlimited) return false;
    const tracker = alloc.RescheduleTracker as { Events?: unknown[] | null } | null | undefined;
    if (!tracker?.Events || tracker.Events.length === 0) return false;
  }
  return true;
}
