/**
 * A task's Resources block: its networks, devices and NUMA preferences.
 */
import { keyedDiffs, structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenPrim } from "./flatmap.js";
import { networkResourceDiffs } from "./network.js";
import { fieldDiffs } from "./primitives.js";
import type { DiffType, OD } from "./types.js";
import { obj, str, strList } from "./values.js";

export function resourcesDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Resources", prev, next, contextual, {
    objects: (p, n) => [
      networkResourceDiffs(p["Networks"], n["Networks"], contextual),
      keyedDiffs(
        p["Devices"],
        n["Devices"],
        (d) => str(d, "Name"),
        (o, nn) => structDiff("Device", o, nn, contextual),
      ),
      numaDiff(p["NUMA"], n["NUMA"], contextual),
    ],
  });
}

function numaDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const p = obj(prev);
  const n = obj(next);
  if (!p || !n) {
    if (!p && !n) return null;
  } else if (str(p, "Affinity") === str(n, "Affinity") && deepEqual(strList(p["Devices"]), strList(n["Devices"]))) {
    return null;
  }
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  return { Type: type, Name: "NUMA", Fields: fieldDiffs(p ? flattenPrim(p) : null, n ? flattenPrim(n) : null, contextual), Objects: [] };
}
