/**
 * The plan endpoint's per-group annotations: a dry run of the reconciler
 * that writes nothing.
 */
import { specChanged } from "../jobspec/index.js";
import type { DeploymentRow, JobRow } from "../state/model.js";
import { NON_TERMINAL_CLIENT } from "./constants.js";
import type { EngineCore, Group } from "./core.js";
import { sameGroupSpec } from "./group-spec.js";
import { sortFailed } from "./reschedule-reconcile.js";

/** No evaluation is any allocation's follow-up during a plan's dry run. */
const PLAN_EVAL_ID = "plan";

/** The job's deployment the reconciler would hold failed allocations for: its version's, unless it succeeded (read only). */
function currentDeployment(core: EngineCore, job: JobRow): DeploymentRow | undefined {
  const found = core.state.deploymentsOfJob(job.Namespace, job.ID).find((d) => d.JobVersion === job.Version && d.JobCreateIndex === job.CreateIndex);
  return found?.Status === "successful" ? undefined : found;
}

/**
 * What a plan would do per group (Nomad's DesiredTGUpdates), computed as a
 * dry run of the reconciler against the current allocations. The keys are
 * structs.DesiredUpdates' (Disconnect and Reconnect since 1.3, the
 * Reschedule counts later): more than api.DesiredUpdates decodes.
 */
export function planUpdates(core: EngineCore, job: Record<string, unknown>): Record<string, Record<string, number>> {
  const { state } = core;
  const ns = job.Namespace as string;
  const id = job.ID as string;
  const existing = state.job(ns, id);
  const out: Record<string, Record<string, number>> = {};
  for (const group of job.TaskGroups as unknown as Group[]) {
    const u = {
      Canary: 0,
      DestructiveUpdate: 0,
      Disconnect: 0,
      Ignore: 0,
      InPlaceUpdate: 0,
      Migrate: 0,
      Place: 0,
      Preemptions: 0,
      Reconnect: 0,
      RescheduleLater: 0,
      RescheduleNow: 0,
      Stop: 0,
    };
    const mine = existing ? state.allocsOfJob(ns, id).filter((a) => a.TaskGroup === group.Name) : [];
    // Failed allocations the reschedule policy keeps hold their slots; those due now are replaced (a place and a stop).
    const failed = existing ? sortFailed(core, mine, PLAN_EVAL_ID, currentDeployment(core, existing)) : { now: [], kept: [], later: [] };
    const live = [...mine.filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus)), ...failed.kept];
    const kept = live.slice(0, group.Count);
    u.Place = Math.max(0, group.Count - live.length);
    u.Stop = live.length - kept.length + Math.min(failed.now.length, u.Place);
    const unchanged = existing !== undefined && !specChanged(existing, job as JobRow);
    const destructive = unchanged ? [] : kept.filter((a) => !sameGroupSpec(core, a, group));
    const inPlace = unchanged ? [] : kept.filter((a) => !destructive.includes(a));
    u.InPlaceUpdate = unchanged ? 0 : inPlace.length;
    u.Ignore = unchanged ? kept.length : 0;
    const canary = Number(group.Update?.Canary ?? 0);
    const maxParallel = Number(group.Update?.MaxParallel ?? 0);
    if (destructive.length > 0 && canary > 0) {
      u.Canary = canary;
      u.Ignore += destructive.length;
    } else if (destructive.length > 0) {
      u.DestructiveUpdate = maxParallel > 0 ? Math.min(maxParallel, destructive.length) : destructive.length;
      u.Ignore += destructive.length - u.DestructiveUpdate;
    }
    out[group.Name] = u;
  }
  return out;
}
