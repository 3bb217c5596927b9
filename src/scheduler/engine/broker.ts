/**
 * The eval broker.
 *
 * Its switch: the scheduler configuration's PauseEvalBroker
 * (scheduler-config.ts). While it is on, evaluations.ts processes nothing;
 * a configuration write that turns it off hands every pending evaluation to
 * the broker again, as Nomad's handleEvalBrokerStateChange and restoreEvals do.
 *
 * Its per-job queue (nomad/eval_broker.go, since Nomad 1.4.3): the broker
 * hands out at most one evaluation of a job at a time; the job's others wait
 * in its pending queue. When the one handed out is acked, every waiting one
 * but the first in queue order (highest priority, then highest ModifyIndex)
 * becomes "cancelable", and the leader's reaper (leader.go
 * cancelCancelableEvals) marks those `canceled`. standin processes an
 * evaluation at one instant, so the job's queue at that instant is its other
 * pending evaluations already enqueued: made before it (those still waiting
 * for their WaitUntil are in the broker's delay heap, not the queue). So N
 * allocations of one job failing together run about two evaluations, not N
 * each reconciling all N allocations.
 */
import type { EvalRow } from "../state/model.js";
import { schedulerConfig, writeSchedulerConfig, type SchedulerConfigInput } from "../state/scheduler-config.js";
import { TIMERS } from "./constants.js";
import { duration, type EngineCore } from "./core.js";
import { refreshJobStatus } from "./summaries.js";

/** leader.go cancelCancelableEvals' StatusDescription. */
export const CANCELED_AFTER_NEWER_EVAL = "canceled after more recent eval was processed";
/** leader.go cancelableEvalsBatchSize (structs.MaxUUIDsPerWriteRequest / 10): the reaper cancels in writes of this many. */
const CANCELABLE_BATCH = 728;

export function brokerPaused(core: EngineCore): boolean {
  return schedulerConfig(core.ctx.store).PauseEvalBroker;
}

/**
 * Operator.SchedulerSetConfiguration's write (after its checks): the
 * configuration stored (or, with `cas`, only when it matches), then the
 * broker resumed if this write unpaused it. One store write.
 */
export function setSchedulerConfig(core: EngineCore, config: SchedulerConfigInput, cas?: number): { updated: boolean; index: number } {
  return core.ctx.store.write(() => {
    const wasPaused = brokerPaused(core);
    const result = writeSchedulerConfig(core.ctx.store, config, cas);
    if (result.updated && wasPaused && !config.PauseEvalBroker) brokerResumed(core);
    return result;
  });
}

/**
 * The broker was unpaused: every pending evaluation is processed again, in
 * the order the broker dequeues (higher priority first, then oldest), after
 * the usual evalProcess delay or at its WaitUntil if later (a timer still
 * waiting from before the pause is replaced, so each has one).
 */
function brokerResumed(core: EngineCore): void {
  const { state, ctx } = core;
  const now = ctx.clock.now();
  const pending = [...state.evals.values()].filter((e) => e.Status === "pending").sort((a, b) => Number(b.Priority) - Number(a.Priority) || a.CreateIndex - b.CreateIndex);
  for (const evaluation of pending) {
    const at = typeof evaluation.WaitUntil === "number" ? Math.max(now, evaluation.WaitUntil) : now + duration(core, "evalProcess");
    ctx.clock.cancelFor(TIMERS.eval, evaluation.ID);
    ctx.clock.schedule({ at, kind: TIMERS.eval, subject: evaluation.ID });
  }
}

/**
 * The job's pending queue as the broker holds it while `processing` is
 * handed out: the job's other pending evaluations that are enqueued (no
 * WaitUntil, or one already passed). Read before the evaluation runs, so
 * what its own pass creates is not in it (Nomad enqueues those after the ack).
 */
export function queuedBehind(core: EngineCore, processing: EvalRow): EvalRow[] {
  const now = core.ctx.clock.now();
  return core.state
    .openEvalsOfJob(processing.Namespace, processing.JobID)
    .filter((e) => e.ID !== processing.ID && e.Status === "pending" && (typeof e.WaitUntil !== "number" || e.WaitUntil <= now));
}

/**
 * EvalBroker.Ack's PendingEvaluations.MarkForCancel, then the reaper: of the
 * job's queue, the first in the broker's order stays pending (it runs at its
 * own time); every other one still pending is canceled, in writes of 728, its
 * timer dropped. Returns how many were canceled.
 */
export function cancelSuperseded(core: EngineCore, queue: readonly EvalRow[]): number {
  const { state, ctx } = core;
  const waiting = queue.map((e) => state.evals.get(e.ID)).filter((e): e is EvalRow => e?.Status === "pending");
  if (waiting.length < 2) return 0;
  const kept = waiting.reduce((best, e) => (queueOrder(e, best) < 0 ? e : best));
  // Ordered by creation so the canceled evaluations' writes (and their indexes) do not depend on the queue's layout.
  const canceled = waiting.filter((e) => e !== kept).sort((a, b) => a.CreateIndex - b.CreateIndex || (a.ID < b.ID ? -1 : 1));
  for (let start = 0; start < canceled.length; start += CANCELABLE_BATCH) {
    ctx.store.write(() => {
      const index = ctx.store.writeIndex();
      const now = ctx.clock.now();
      for (const evaluation of canceled.slice(start, start + CANCELABLE_BATCH)) {
        state.evals.put(evaluation.ID, { ...evaluation, Status: "canceled", StatusDescription: CANCELED_AFTER_NEWER_EVAL, ModifyIndex: index, ModifyTime: now });
        ctx.clock.cancelFor(TIMERS.eval, evaluation.ID);
        ctx.events.record("eval.canceled", { service: "scheduler", subject: evaluation.ID, detail: { job: evaluation.JobID } });
      }
      // Each batch is a job's own evaluations: its status may have counted them (pending).
      const first = canceled[start]!;
      refreshJobStatus(core, first.Namespace, first.JobID);
    });
  }
  return canceled.length;
}

/** PendingEvaluations.Less: higher priority first, then higher ModifyIndex (then, for a total order, the later-created). */
function queueOrder(a: EvalRow, b: EvalRow): number {
  return Number(b.Priority) - Number(a.Priority) || b.ModifyIndex - a.ModifyIndex || b.CreateIndex - a.CreateIndex || (a.ID < b.ID ? 1 : a.ID > b.ID ? -1 : 0);
}
