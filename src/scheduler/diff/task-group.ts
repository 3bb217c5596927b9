/**
 * The task group level of diff.go (`TaskGroup.Diff`): the group's primitive
 * fields (its *time.Duration fields compared by hand), its blocks and its tasks.
 */
import { collect } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { type FlatOpts, flattenPrim } from "./flatmap.js";
import { fmtPrim } from "../../core/go/format.js";
import { goLess, goSort } from "../../core/go/sort.js";
import { disconnectDiff, scalingDiff, volumeDiffs } from "./group-blocks.js";
import { networkResourceDiffs } from "./network.js";
import { fieldDiffs, primitiveObjectDiff, primitiveObjectSetDiff } from "./primitives.js";
import { serviceDiffs } from "./services.js";
import { taskDiffs } from "./task.js";
import type { DiffType, Flat, Obj, TGD } from "./types.js";
import { isNil, objList, str } from "./values.js";

const GROUP_POINTER_DURATIONS = ["ShutdownDelay", "StopAfterClientDisconnect", "MaxClientDisconnect"];

export function taskGroupDiffs(oldList: unknown, newList: unknown, contextual: boolean): TGD[] {
  const oldMap = new Map<string, Obj>();
  const newMap = new Map<string, Obj>();
  for (const g of objList(oldList)) oldMap.set(str(g, "Name"), g);
  for (const g of objList(newList)) newMap.set(str(g, "Name"), g);
  const diffs: TGD[] = [];
  for (const [name, g] of oldMap) diffs.push(taskGroupDiff(g, newMap.get(name) ?? null, contextual));
  for (const [name, g] of newMap) if (!oldMap.has(name)) diffs.push(taskGroupDiff(null, g, contextual));
  return goSort(diffs, (x, y) => goLess(x.Name, y.Name));
}

function taskGroupDiff(tg: Obj | null, other: Obj | null, contextual: boolean): TGD {
  const flat: FlatOpts = { filter: ["Name"], skip: GROUP_POINTER_DURATIONS };
  let type: DiffType = "None";
  let name = "";
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  if (!tg && !other) return { Type: type, Name: name, Fields: [], Objects: [], Tasks: [] };
  if (!tg) {
    type = "Added";
    name = str(other, "Name");
    newFlat = flattenPrim(other, flat);
  } else if (!other) {
    type = "Deleted";
    name = str(tg, "Name");
    oldFlat = flattenPrim(tg, flat);
  } else {
    if (!deepEqual(tg, other)) type = "Edited";
    name = str(other, "Name");
    oldFlat = flattenPrim(tg, flat);
    newFlat = flattenPrim(other, flat);
  }
  const a: Obj = tg ?? {};
  const b: Obj = other ?? {};

  // The *time.Duration fields, compared by hand when both sides exist.
  if (oldFlat && newFlat) {
    for (const key of GROUP_POINTER_DURATIONS) {
      oldFlat.set(key, isNil(a[key]) ? "" : fmtPrim(a[key]));
      newFlat.set(key, isNil(b[key]) ? "" : fmtPrim(b[key]));
    }
  }

  const fields = fieldDiffs(oldFlat, newFlat, false);
  const objects = collect([
    primitiveObjectSetDiff(a["Constraints"], b["Constraints"], ["str"], "Constraint", contextual),
    primitiveObjectSetDiff(a["Affinities"], b["Affinities"], ["str"], "Affinity", contextual),
    primitiveObjectDiff(a["RestartPolicy"], b["RestartPolicy"], null, "RestartPolicy", contextual),
    primitiveObjectDiff(a["ReschedulePolicy"], b["ReschedulePolicy"], null, "ReschedulePolicy", contextual),
    primitiveObjectDiff(a["EphemeralDisk"], b["EphemeralDisk"], null, "EphemeralDisk", contextual),
    primitiveObjectDiff(a["Consul"], b["Consul"], null, "Consul", contextual),
    primitiveObjectDiff(a["Update"], b["Update"], ["Stagger"], "Update", contextual),
    disconnectDiff(a["Disconnect"], b["Disconnect"], contextual),
    networkResourceDiffs(a["Networks"], b["Networks"], contextual),
    scalingDiff(a["Scaling"], b["Scaling"], contextual),
    serviceDiffs(a["Services"], b["Services"], contextual),
    volumeDiffs(a["Volumes"], b["Volumes"], contextual),
  ]);
  const tasks = taskDiffs(a["Tasks"], b["Tasks"], contextual);
  return { Type: type, Name: name, Fields: fields, Objects: objects, Tasks: tasks };
}
