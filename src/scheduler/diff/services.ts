/**
 * Services (group and task) and their checks, matched the way diff.go's
 * `serviceDiffs` scores candidates.
 */
import { keyedDiffs, structDiff } from "./combinators.js";
import { connectDiff } from "./connect.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenAll } from "./flatmap.js";
import { idDiff } from "./identity.js";
import { sortObjects } from "./order.js";
import { fieldDiffs, stringSetDiff } from "./primitives.js";
import type { DiffType, Flat, OD, Obj } from "./types.js";
import { obj, objList, str } from "./values.js";

function serviceDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Service", prev, next, contextual, {
    objects: (p, n) => [
      stringSetDiff(p["CanaryTags"], n["CanaryTags"], "CanaryTags", contextual),
      stringSetDiff(p["Tags"], n["Tags"], "Tags", contextual),
      keyedDiffs(
        p["Checks"],
        n["Checks"],
        (c) => str(c, "Name"),
        (o, nn) => serviceCheckDiff(o, nn, contextual),
      ),
      connectDiff(p["Connect"], n["Connect"], contextual),
      idDiff(p["Identity"], n["Identity"], contextual),
      // diff.go weightsDiff: the service's DNS SRV weights (structs.ServiceWeights).
      structDiff("Weights", p["Weights"], n["Weights"], contextual),
    ],
  });
}

export function serviceDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  if (o.length === 1 && n.length === 1) {
    const d = serviceDiff(o[0]!, n[0]!, contextual);
    return d ? [d] : [];
  }
  const newMatches = n.map(() => -1);
  const diffs: OD[] = [];
  o.forEach((service, oldIndex) => {
    const newIndex = findServiceMatch(service, oldIndex, n, newMatches);
    if (newIndex < 0) {
      const d = serviceDiff(service, null, contextual);
      if (d) diffs.push(d);
      return;
    }
    newMatches[newIndex] = oldIndex;
    const d = serviceDiff(service, n[newIndex]!, contextual);
    if (d) diffs.push(d);
  });
  newMatches.forEach((m, i) => {
    if (m !== -1) return;
    const d = serviceDiff(null, n[i]!, contextual);
    if (d) diffs.push(d);
  });
  return sortObjects(diffs);
}

/** Scores candidates by position (1), port label (2) and name (3); a match needs more than 2. */
function findServiceMatch(service: Obj, serviceIndex: number, services: Obj[], matches: number[]): number {
  const minScoreThreshold = 2;
  let highestScore = 0;
  let indexMatch = -1;
  services.forEach((s, i) => {
    if (matches[i]! >= 0) return;
    let score = 0;
    if (i === serviceIndex) score += 1;
    if (str(service, "PortLabel") === str(s, "PortLabel")) score += 2;
    if (str(service, "Name") === str(s, "Name")) score += 3;
    if (score > minScoreThreshold && score > highestScore) {
      highestScore = score;
      indexMatch = i;
    }
  });
  return indexMatch;
}

function serviceCheckDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Check", prev, next, contextual, {
    objects: (p, n) => [checkHeaderDiff(p["Header"], n["Header"], contextual), structDiff("CheckRestart", p["CheckRestart"], n["CheckRestart"], contextual)],
  });
}

function checkHeaderDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev);
  const n = obj(next);
  let type: DiffType;
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  if (!p || Object.keys(p).length === 0) {
    type = "Added";
    newFlat = flattenAll(n, false);
  } else if (!n || Object.keys(n).length === 0) {
    type = "Deleted";
    oldFlat = flattenAll(p, false);
  } else {
    type = "Edited";
    oldFlat = flattenAll(p, false);
    newFlat = flattenAll(n, false);
  }
  return { Type: type, Name: "Header", Fields: fieldDiffs(oldFlat, newFlat, contextual), Objects: [] };
}
