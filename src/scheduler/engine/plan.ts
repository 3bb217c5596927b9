/**
 * The plan endpoint's per-group annotations: a dry run of the reconciler
 * that writes nothing.
 */
import { specChanged } from "../jobspec/index.js";
import type { JobRow } from "../model.js";
import { NON_TERMINAL_CLIENT } from "./constants.js";
import type { EngineCore, Group } from "./core.js";
import { sameGroupSpec } from "./reconcile.js";

/**
 * What a plan would do per group (Nomad's DesiredTGUpdates), computed as a
 * dry run of the reconciler against the current allocations.
 */
export function planUpdates(core: EngineCore, job: Record<string, unknown>): Record<string, Record<string, number>> {
  const { state } = core;
  const ns = job.Namespace as string;
  const id = job.ID as string;
  const existing = state.job(ns, id);
  const out: Record<string, Record<string, number>> = {};
  for (const group of job.TaskGroups as unknown as Group[]) {
    const u = { Canary: 0, DestructiveUpdate: 0, Ignore: 0, InPlaceUpdate: 0, Migrate: 0, Place: 0, Preemptions: 0, Reconnect: 0, RescheduleLater: 0, RescheduleNow: 0, Stop: 0 };
    const live = existing ? state.allocsOfJob(ns, id).filter((a) => a.TaskGroup === group.Name && a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus)) : [];
    const kept = live.slice(0, group.Count);
    u.Stop = live.length - kept.length;
    u.Place = Math.max(0, group.Count - live.length);
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
