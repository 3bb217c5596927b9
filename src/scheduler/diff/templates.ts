/**
 * A task's templates, matched by destination path, with their wait config and
 * change script.
 */
import { structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenAll } from "./flatmap.js";
import { fmtPrim } from "../../core/go/format.js";
import { sortObjects } from "./order.js";
import { fieldDiffs, stringSetDiff } from "./primitives.js";
import type { DiffType, OD, Obj } from "./types.js";
import { isNil, obj, objList, str } from "./values.js";

function templateDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Template", prev, next, contextual, {
    flat: { skip: ["Uid", "Gid"] },
    extraFields: (p, n, oldFlat, newFlat) => {
      for (const key of ["Uid", "Gid"]) {
        if (oldFlat && !isNil(p[key])) oldFlat.set(key, fmtPrim(p[key]));
        if (newFlat && !isNil(n[key])) newFlat.set(key, fmtPrim(n[key]));
      }
    },
    objects: (p, n) => [
      waitConfigDiff(p["Wait"], n["Wait"], contextual),
      structDiff("ChangeScript", p["ChangeScript"], n["ChangeScript"], contextual, {
        objects: (cp, cn) => [stringSetDiff(cp["Args"], cn["Args"], "Args", contextual)],
      }),
    ],
  });
}

/** waitConfigDiff; Nomad names this object "Template". */
function waitConfigDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  return { Type: type, Name: "Template", Fields: fieldDiffs(p ? flattenAll(p, false) : null, n ? flattenAll(n, false) : null, contextual), Objects: [] };
}

export function templateDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  if (o.length === 1 && n.length === 1) {
    const d = templateDiff(o[0]!, n[0]!, contextual);
    return d ? [d] : [];
  }
  const newMatches = n.map(() => -1);
  const diffs: OD[] = [];
  o.forEach((template, oldIndex) => {
    const newIndex = n.findIndex((candidate, i) => newMatches[i]! < 0 && str(candidate, "DestPath") === str(template, "DestPath"));
    if (newIndex < 0) {
      const d = templateDiff(template, null, contextual);
      if (d) diffs.push(d);
      return;
    }
    newMatches[newIndex] = oldIndex;
    const d = templateDiff(template, n[newIndex]!, contextual);
    if (d) diffs.push(d);
  });
  newMatches.forEach((m, i) => {
    if (m !== -1) return;
    const d = templateDiff(null, n[i]!, contextual);
    if (d) diffs.push(d);
  });
  return sortObjects(diffs);
}
