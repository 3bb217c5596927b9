/**
 * Periodic jobs' launches on the virtual clock: the parent's next launch is
 * armed as a timer (when, from ../jobspec/periodic.ts's cron evaluation), and each
 * launch registers a `<id>/periodic-<unix seconds>` child, unless
 * prohibit_overlap and a child still runs; periodic force launches one now.
 */
import type { JobRow } from "../state/model.js";
import type { PeriodicConfig } from "../jobspec/periodic.js";
import type { EngineCore, RegisterResult } from "./core.js";
import { CodedError } from "./errors.js";
import { isPeriodic } from "./job-kinds.js";
import { schedulePeriodic } from "./periodic-schedule.js";
import { register } from "./register.js";

/** Periodic force: launches a child of a periodic job now. */
export function periodicForce(core: EngineCore, namespace: string, id: string) {
  const { state, ctx } = core;
  const parent = state.job(namespace, id);
  if (!parent) throw new CodedError(500, `job "${id}" not found`);
  if (!isPeriodic(parent)) throw new CodedError(500, "can't force launch non-periodic job");
  const result = launchChild(core, parent, ctx.clock.now());
  return { EvalCreateIndex: result.EvalCreateIndex, EvalID: result.EvalID, Index: result.Index };
}

/** A periodic parent's child for a launch at `atMs`: `<id>/periodic-<unix seconds>`. */
function launchChild(core: EngineCore, parent: JobRow, atMs: number): RegisterResult {
  const childId = `${parent.ID}/periodic-${Math.floor(atMs / 1000)}`;
  const child = { ...parent, ID: childId, Name: childId, ParentID: parent.ID, Periodic: null };
  core.ctx.events.record("job.periodic-launch", { service: "scheduler", subject: childId, detail: { parent: parent.ID } });
  return register(core, child, { alwaysNewVersion: true });
}

export function periodicLaunch(core: EngineCore, key: string, at: number): unknown {
  const { state, ctx } = core;
  const parent = state.jobs.get(key);
  if (!parent || !isPeriodic(parent) || parent.Stop) return { job: key, skipped: true };
  return ctx.store.write(() => {
    const overlap = (parent.Periodic as PeriodicConfig).ProhibitOverlap === true && state.childrenOf(parent.Namespace, parent.ID).some((j) => j.Status !== "dead");
    const launched = overlap ? undefined : launchChild(core, parent, at);
    schedulePeriodic(core, parent);
    return { parent: parent.ID, launched: launched !== undefined, evalId: launched?.EvalID ?? "" };
  });
}
