/**
 * How the engine tells an in-place update from a destructive one: a group
 * whose spec changed in nothing but its count. The reconciler, the plan's
 * dry run and a new deployment's canaries all ask it.
 */
import { canonicalJSON } from "../../core/json.js";
import { versionKey, type AllocRow } from "../state/model.js";
import type { EngineCore, Group } from "./core.js";

/** Whether an allocation's group, at its version, differs from `group` in nothing but Count. */
export function sameGroupSpec(core: EngineCore, alloc: AllocRow, group: Group): boolean {
  const version = core.state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion));
  const before = (version?.TaskGroups as unknown as Group[] | undefined)?.find((g) => g.Name === group.Name);
  if (!before) return false;
  const strip = (g: Group) => canonicalJSON({ ...g, Count: 0 });
  return strip(before) === strip(group);
}
