/**
 * Job.Revert: an earlier version's spec registered again, as a new version.
 * Also what a failed deployment's auto_revert asks for (deployments.ts,
 * through the engine core's follow-ups).
 */
import { versionKey } from "../state/model.js";
import type { EngineCore, RegisterResult } from "./core.js";
import { CodedError } from "./errors.js";
import { register } from "./register.js";

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
