/**
 * Job versions: each new version stored (the newest TRACKED_VERSIONS kept),
 * Job.Revert (an earlier spec registered again) and Job.Stable.
 */
import { jobKey, TRACKED_VERSIONS, versionKey, type JobRow } from "../model.js";
import type { EngineCore, RegisterResult } from "./core.js";
import { CodedError } from "./errors.js";
import { register } from "./register.js";

export function storeVersion(core: EngineCore, job: JobRow): void {
  const { state } = core;
  state.versions.put(versionKey(job.Namespace, job.ID, job.Version), job);
  const versions = state.jobVersions(job.Namespace, job.ID);
  for (const old of versions.slice(TRACKED_VERSIONS)) state.versions.delete(versionKey(job.Namespace, job.ID, old.Version));
}

/** Job.Revert: registers an earlier version's spec as a new version. `admit`: the register's own checks (doRegister's), run once the revert's pass. */
export function revert(core: EngineCore, namespace: string, id: string, version: number, enforcePrior?: number, admit?: () => void): RegisterResult {
  const { state } = core;
  const current = state.job(namespace, id);
  if (!current) throw new CodedError(500, `job "${id}" not found`);
  if (enforcePrior !== undefined && current.Version !== enforcePrior) throw new CodedError(500, `Current job has version ${current.Version}; enforcing version ${enforcePrior}`);
  if (current.Version === version) throw new CodedError(500, "can't revert to current version");
  const target = state.versions.get(versionKey(namespace, id, version));
  if (!target) throw new CodedError(500, `job "${id}" in namespace "${namespace}" at version ${version} not found`);
  admit?.();
  const spec = { ...target, Stop: false };
  // A revert always writes a new version, even when the spec equals the current one's.
  return register(core, spec, { alwaysNewVersion: true });
}

/** Job.Stable: marks a version stable (or not). */
export function setStable(core: EngineCore, namespace: string, id: string, version: number, stable: boolean): number {
  const { state, ctx } = core;
  const target = state.versions.get(versionKey(namespace, id, version));
  if (!target) throw new CodedError(500, `job "${id}" in namespace "${namespace}" at version ${version} not found`);
  return ctx.store.write(() => {
    const index = ctx.store.writeIndex();
    state.versions.put(versionKey(namespace, id, version), { ...target, Stable: stable });
    const current = state.job(namespace, id);
    if (current && current.Version === version) state.jobs.put(jobKey(namespace, id), { ...current, Stable: stable, ModifyIndex: index });
    return index;
  });
}
