/**
 * Task group blocks with diffs of their own shape: Disconnect, Scaling (with
 * its policy) and the group's volume requests.
 */
import { compareBytewise } from "../../core/json.js";
import { configDiff, structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenAll } from "./flatmap.js";
import { sortFields } from "./order.js";
import { fieldDiffs, stringSetDiff } from "./primitives.js";
import type { DiffType, OD } from "./types.js";
import { obj } from "./values.js";

export function disconnectDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  const fields = fieldDiffs(p ? flattenAll(p, false) : null, n ? flattenAll(n, false) : null, contextual);
  return { Type: type, Name: "Disconnect", Fields: fields, Objects: [] };
}

export function scalingDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const d = structDiff("Scaling", prev, next, contextual, {
    flat: { filter: ["CreateIndex", "ModifyIndex", "ID", "Type", "Target[Job]", "Target[Group]", "Target[Namespace]"] },
    fieldsContextual: false,
    objects: (p, n) => [configDiff("Policy", p["Policy"], n["Policy"], false)],
    sortObjects: true,
  });
  if (d) sortFields(d.Fields);
  return d;
}

export function volumeDiffs(oldMap: unknown, newMap: unknown, contextual: boolean): OD[] {
  if (deepEqual(oldMap, newMap)) return [];
  const o = obj(oldMap) ?? {};
  const n = obj(newMap) ?? {};
  const diffs: OD[] = [];
  for (const name of Object.keys(o).sort(compareBytewise)) {
    const d = volumeDiff(o[name], n[name], contextual);
    if (d) diffs.push(d);
  }
  for (const name of Object.keys(n).sort(compareBytewise)) {
    if (Object.hasOwn(o, name)) continue;
    const d = volumeDiff(null, n[name], contextual);
    if (d) diffs.push(d);
  }
  return diffs;
}

function volumeDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Volume", prev, next, contextual, {
    objects: (p, n) => [
      structDiff("MountOptions", p["MountOptions"], n["MountOptions"], contextual, {
        objects: (mp, mn) => [stringSetDiff(mp["MountFlags"], mn["MountFlags"], "MountFlags", contextual)],
      }),
    ],
  });
}
