/**
 * The eval broker's switch: the scheduler configuration's PauseEvalBroker
 * (scheduler-config.ts). While it is on, evaluations.ts processes nothing;
 * a configuration write that turns it off hands every pending evaluation to
 * the broker again, as Nomad's handleEvalBrokerStateChange and restoreEvals do.
 */
import { schedulerConfig, writeSchedulerConfig, type SchedulerConfigInput } from "../scheduler-config.js";
import { TIMERS } from "./constants.js";
import { duration, type EngineCore } from "./core.js";

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
