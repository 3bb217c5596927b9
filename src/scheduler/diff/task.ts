/**
 * The task level of diff.go (`Task.Diff`): primitive fields (driver config
 * diffed apart as an opaque map) and every task block.
 */
import { collect, configDiff, indexedDiffs, keyedDiffs, structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { type FlatOpts, flattenPrim } from "./flatmap.js";
import { goLess, goSort } from "../../core/go/sort.js";
import { idDiff } from "./identity.js";
import { fieldDiffs, primitiveObjectDiff, primitiveObjectSetDiff, stringSetDiff } from "./primitives.js";
import { resourcesDiff } from "./resources.js";
import { serviceDiffs } from "./services.js";
import { templateDiffs } from "./templates.js";
import type { DiffType, Flat, OD, Obj, TD } from "./types.js";
import { obj, objList, str } from "./values.js";

export function taskDiffs(oldList: unknown, newList: unknown, contextual: boolean): TD[] {
  const oldMap = new Map<string, Obj>();
  const newMap = new Map<string, Obj>();
  for (const t of objList(oldList)) oldMap.set(str(t, "Name"), t);
  for (const t of objList(newList)) newMap.set(str(t, "Name"), t);
  const diffs: TD[] = [];
  for (const [name, t] of oldMap) diffs.push(taskDiff(t, newMap.get(name) ?? null, contextual));
  for (const [name, t] of newMap) if (!oldMap.has(name)) diffs.push(taskDiff(null, t, contextual));
  return goSort(diffs, (x, y) => goLess(x.Name, y.Name));
}

function taskDiff(t: Obj | null, other: Obj | null, contextual: boolean): TD {
  const flat: FlatOpts = { filter: ["Name", "Config"] };
  let type: DiffType = "None";
  let name = "";
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  if (!t && !other) return { Type: type, Name: name, Fields: [], Objects: [] };
  if (!t) {
    type = "Added";
    name = str(other, "Name");
    newFlat = flattenPrim(other, flat);
  } else if (!other) {
    type = "Deleted";
    name = str(t, "Name");
    oldFlat = flattenPrim(t, flat);
  } else {
    if (!deepEqual(t, other)) type = "Edited";
    name = str(other, "Name");
    oldFlat = flattenPrim(t, flat);
    newFlat = flattenPrim(other, flat);
  }
  const a: Obj = t ?? {};
  const b: Obj = other ?? {};
  const fields = fieldDiffs(oldFlat, newFlat, false);
  const objects = collect([
    primitiveObjectSetDiff(a["Constraints"], b["Constraints"], ["str"], "Constraint", contextual),
    primitiveObjectSetDiff(a["Affinities"], b["Affinities"], ["str"], "Affinity", contextual),
    configDiff("Config", a["Config"], b["Config"], contextual),
    resourcesDiff(a["Resources"], b["Resources"], contextual),
    primitiveObjectDiff(a["LogConfig"], b["LogConfig"], null, "LogConfig", contextual),
    primitiveObjectDiff(a["DispatchPayload"], b["DispatchPayload"], null, "DispatchPayload", contextual),
    primitiveObjectSetDiff(a["Artifacts"], b["Artifacts"], null, "Artifact", contextual),
    serviceDiffs(a["Services"], b["Services"], contextual),
    structDiff("Vault", a["Vault"], b["Vault"], contextual, {
      objects: (p, n) => [stringSetDiff(p["Policies"], n["Policies"], "Policies", contextual)],
    }),
    primitiveObjectDiff(a["Consul"], b["Consul"], null, "Consul", contextual),
    templateDiffs(a["Templates"], b["Templates"], contextual),
    idDiff(a["Identity"], b["Identity"], contextual),
    keyedDiffs(
      a["Identities"],
      b["Identities"],
      (i) => str(i, "Name"),
      (o, n) => idDiff(o, n, contextual),
    ),
    indexedDiffs(a["Actions"], b["Actions"], (o, n) =>
      structDiff("Action", o, n, contextual, {
        objects: (p, nn) => [stringSetDiff(p["Args"], nn["Args"], "Args", contextual)],
      }),
    ),
    indexedDiffs(a["VolumeMounts"], b["VolumeMounts"], (o, n) => structDiff("VolumeMount", o, n, contextual)),
    scheduleDiff(a["Schedule"], b["Schedule"], contextual),
  ]);
  return { Type: type, Name: name, Fields: fields, Objects: objects };
}

function scheduleDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  return primitiveObjectDiff(obj(prev)?.["Cron"] ?? null, obj(next)?.["Cron"] ?? null, null, "Schedule", contextual);
}
