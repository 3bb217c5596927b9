/**
 * The job's own blocks: Periodic, Multiregion (with its regions) and UI
 * (with its links).
 */
import { structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenPrim } from "./flatmap.js";
import { sortFields, sortObjects } from "./order.js";
import { fieldDiffs, primitiveObjectDiff, stringSetDiff, typeFromFields } from "./primitives.js";
import type { DiffType, OD, Obj } from "./types.js";
import { obj, objList, str } from "./values.js";

export function periodicDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const d = structDiff("Periodic", prev, next, contextual, {
    objects: (p, n) => {
      const specs = stringSetDiff(p["Specs"], n["Specs"], "Specs", contextual);
      return [specs && specs.Type !== "None" ? specs : null];
    },
  });
  if (d) sortFields(d.Fields);
  return d;
}

export function multiregionDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const type: DiffType = !obj(prev) ? "Added" : !obj(next) ? "Deleted" : "Edited";
  // An added block is diffed against a canonicalized empty Multiregion, a deleted one against an empty one.
  const p: Obj = obj(prev) ?? { Strategy: { MaxParallel: 0, OnFailure: "" }, Regions: [] };
  const n: Obj = obj(next) ?? {};
  const objects: OD[] = [];
  const strategy = primitiveObjectDiff(p["Strategy"], n["Strategy"], [], "Strategy", contextual);
  if (strategy) objects.push(strategy);
  const oldMap = new Map<string, Obj>();
  const newMap = new Map<string, Obj>();
  for (const r of objList(p["Regions"])) oldMap.set(str(r, "Name"), r);
  for (const r of objList(n["Regions"])) newMap.set(str(r, "Name"), r);
  for (const [name, r] of oldMap) {
    const d = multiregionRegionDiff(r, newMap.get(name) ?? null, contextual);
    if (d) objects.push(d);
  }
  for (const [name, r] of newMap) {
    if (oldMap.has(name)) continue;
    const d = multiregionRegionDiff(null, r, contextual);
    if (d) objects.push(d);
  }
  sortObjects(objects);
  return { Type: type, Name: "Multiregion", Fields: [], Objects: objects };
}

function multiregionRegionDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  const d = structDiff("Region", prev, next, contextual, {
    objects: (p, n) => {
      const dcs = stringSetDiff(p["Datacenters"], n["Datacenters"], "Datacenters", contextual);
      return [dcs && dcs.Type !== "None" ? dcs : null];
    },
    sortObjects: true,
  });
  if (!d) return null;
  const type = typeFromFields(d.Fields);
  if (!type) return null;
  d.Type = type;
  return d;
}

export function uiDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const d = structDiff("UI", prev, next, contextual, {
    objects: (p, n) => [linkDiffs(p["Links"], n["Links"], contextual)],
    sortObjects: true,
  });
  if (d) sortFields(d.Fields);
  return d;
}

function linkDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  const diffs: OD[] = [];
  const link = (a: Obj, b: Obj): OD | null => {
    if (deepEqual(a, b)) return null;
    return { Type: "Edited", Name: "Link", Fields: fieldDiffs(flattenPrim(a), flattenPrim(b), contextual), Objects: [] };
  };
  for (let i = 0; i < o.length && i < n.length; i++) {
    const d = link(o[i]!, n[i]!);
    if (d) diffs.push(d);
  }
  for (let i = n.length; i < o.length; i++) {
    const d = link(o[i]!, { Label: "", URL: "" });
    if (d) diffs.push({ ...d, Type: "Deleted" });
  }
  for (let i = o.length; i < n.length; i++) {
    const d = link({ Label: "", URL: "" }, n[i]!);
    if (d) diffs.push({ ...d, Type: "Added" });
  }
  return sortObjects(diffs);
}
