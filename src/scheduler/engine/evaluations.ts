/**
 * Evaluations: created pending (processed evalProcess later on the virtual
 * clock), processed by reconciling the job's allocations with its spec,
 * blocked when something did not fit and re-run when capacity appears.
 *
 * While the scheduler configuration pauses the eval broker
 * (`PauseEvalBroker`), nothing is processed: evaluations stay pending and
 * blocked ones are not re-run (Nomad disables the broker and the blocked-evals
 * tracker together); broker.ts hands them over again when it is unpaused.
 */
import type { EvalRow, JobRow, NodeRow } from "../state/model.js";
import { TIMERS } from "./constants.js";
import { duration, type EngineCore, type RegisterResult } from "./core.js";
import { CodedError } from "./errors.js";
import { isParameterized, isPeriodic } from "./job-kinds.js";
import { reconcile } from "./reconcile.js";
import { brokerPaused, cancelSuperseded, queuedBehind } from "./broker.js";
import { refreshJobStatus, setQueued } from "./summaries.js";

export function createEval(core: EngineCore, job: JobRow, triggeredBy: string, extra: Partial<EvalRow> = {}): EvalRow {
  const { state, ctx } = core;
  const now = ctx.clock.now();
  const index = ctx.store.writeIndex();
  const row: EvalRow = {
    ID: ctx.ids.uuid(),
    Namespace: job.Namespace,
    Priority: job.Priority,
    Type: job.Type,
    TriggeredBy: triggeredBy,
    JobID: job.ID,
    JobModifyIndex: job.JobModifyIndex,
    NodeID: "",
    NodeModifyIndex: 0,
    DeploymentID: "",
    Status: "pending",
    StatusDescription: "",
    Wait: 0,
    WaitUntil: null,
    NextEval: "",
    PreviousEval: "",
    BlockedEval: "",
    RelatedEvals: null,
    FailedTGAllocs: null,
    ClassEligibility: null,
    QuotaLimitReached: "",
    EscapedComputedClass: false,
    AnnotatePlan: false,
    QueuedAllocations: null,
    LeaderACL: "",
    SnapshotIndex: 0,
    CreateIndex: index,
    ModifyIndex: index,
    CreateTime: now,
    ModifyTime: now,
    ...extra,
  };
  state.evals.put(row.ID, row);
  // A follow-up eval waits in the broker until its WaitUntil (virtual ms), then runs at once.
  const at = typeof row.WaitUntil === "number" ? Math.max(now, row.WaitUntil) : now + duration(core, "evalProcess");
  if (row.Status === "pending") ctx.clock.schedule({ at, kind: TIMERS.eval, subject: row.ID });
  return row;
}

/** The scheduler's pass over one eval: reconcile the job's allocations with its spec. */
export function processEval(core: EngineCore, evalId: string): unknown {
  const { state, ctx } = core;
  const evaluation = state.evals.get(evalId);
  if (!evaluation || evaluation.Status !== "pending") return { eval: evalId, skipped: true };
  // A paused broker hands out nothing: the eval waits for brokerResumed (broker.ts) to schedule it again.
  if (brokerPaused(core)) return { eval: evalId, skipped: true, paused: true };
  const queue = queuedBehind(core, evaluation);
  const result = ctx.store.write(() => {
    const job = state.job(evaluation.Namespace, evaluation.JobID);
    const outcome = reconcile(core, job, evaluation);
    const now = ctx.clock.now();
    const index = ctx.store.writeIndex();
    const completed: EvalRow = {
      ...evaluation,
      Status: "complete",
      QueuedAllocations: outcome.queued,
      FailedTGAllocs: outcome.failed,
      DeploymentID: outcome.deploymentId,
      ModifyIndex: index,
      ModifyTime: now,
    };
    if (outcome.failed && job) {
      const blocked = createEval(core, job, "queued-allocs", { Status: "blocked", PreviousEval: evaluation.ID });
      completed.BlockedEval = blocked.ID;
    }
    state.evals.put(evalId, completed);
    setQueued(core, evaluation.Namespace, evaluation.JobID, outcome.queued);
    refreshJobStatus(core, evaluation.Namespace, evaluation.JobID);
    ctx.events.record("eval.complete", { service: "scheduler", subject: evalId, detail: { job: evaluation.JobID, placed: outcome.placed, queued: outcome.queued } });
    return { eval: evalId, placed: outcome.placed, queued: outcome.queued };
  });
  // The ack: the job's evaluations that waited behind this one, all but the next, are canceled (broker.ts).
  const canceled = cancelSuperseded(core, queue);
  return canceled > 0 ? { ...result, canceled } : result;
}

/** Re-runs blocked evals (capacity may have appeared). */
export function unblock(core: EngineCore): void {
  const { state, ctx } = core;
  if (brokerPaused(core)) return;
  for (const evaluation of [...state.evals.values()].filter((e) => e.Status === "blocked").sort((a, b) => a.CreateIndex - b.CreateIndex)) {
    const index = ctx.store.writeIndex();
    state.evals.put(evaluation.ID, { ...evaluation, Status: "pending", ModifyIndex: index, ModifyTime: ctx.clock.now() });
    ctx.clock.schedule({ at: ctx.clock.now() + duration(core, "evalProcess"), kind: TIMERS.eval, subject: evaluation.ID });
  }
}

/** Capacity changed (a node appeared, came back or became eligible): blocked evals run again, system jobs re-evaluate. */
export function capacityChanged(core: EngineCore, node?: NodeRow): void {
  unblock(core);
  for (const job of core.state.jobs.sorted()) {
    if ((job.Type === "system" || job.Type === "sysbatch") && !job.Stop) createEval(core, job, "node-update", node ? { NodeID: node.ID, NodeModifyIndex: node.ModifyIndex } : {});
  }
}

/**
 * Job.Evaluate: a new evaluation for the current version. With
 * forceReschedule, every failed allocation is marked
 * `DesiredTransition.ForceReschedule` first, so the evaluation replaces it
 * whatever its reschedule policy says.
 */
export function evaluate(core: EngineCore, namespace: string, id: string, options: { forceReschedule?: boolean } = {}): RegisterResult {
  const { state, ctx } = core;
  const job = state.job(namespace, id);
  if (!job) throw new CodedError(500, "job not found");
  if (isPeriodic(job)) throw new CodedError(500, "can't evaluate periodic job");
  if (isParameterized(job)) throw new CodedError(500, "can't evaluate parameterized job");
  return ctx.store.write(() => {
    if (options.forceReschedule) {
      for (const alloc of state.allocsOfJob(namespace, id).filter((a) => a.ClientStatus === "failed")) {
        const transition = { ...(alloc.DesiredTransition as Record<string, unknown> | null | undefined), ForceReschedule: true };
        state.allocs.put(alloc.ID, { ...alloc, DesiredTransition: transition, ModifyIndex: ctx.store.writeIndex(), ModifyTime: ctx.clock.now() });
      }
    }
    const evaluation = createEval(core, job, "job-register");
    refreshJobStatus(core, namespace, id);
    return { EvalID: evaluation.ID, EvalCreateIndex: evaluation.CreateIndex, JobModifyIndex: job.JobModifyIndex, Index: evaluation.CreateIndex };
  });
}
