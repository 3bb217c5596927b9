/**
 * Job versions: each new version stored (the newest TRACKED_VERSIONS kept)
 * and Job.Stable. Job.Revert, which registers an earlier spec again, is
 * revert.ts.
 */
import { jobKey, TRACKED_VERSIONS, versionKey, type JobRow } from "../state/model.js";
import type { EngineCore } from "./core.js";
import { CodedError } from "./errors.js";

export function storeVersion(core: EngineCore, job: JobRow): void {
  const { state } = core;
  state.versions.put(versionKey(job.Namespace, job.ID, job.Version), job);
  const versions = state.jobVersions(job.Namespace, job.ID);
  for (const old of versions.slice(TRACKED_VERSIONS)) state.versions.delete(versionKey(job.Namespace, job.ID, old.Version));
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
