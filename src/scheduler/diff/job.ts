/**
 * The job level of diff.go (`Job.Diff`) and the public `jobDiff` that returns
 * it in wire shape. Job fields that are server state are filtered out.
 */
import { structDiff } from "./combinators.js";
import { flattenPrim } from "./flatmap.js";
import { goQuote } from "../../core/go/strconv.js";
import { multiregionDiff, periodicDiff, uiDiff } from "./job-blocks.js";
import { outFields, outObjects } from "./output.js";
import { fieldDiffs, primitiveObjectSetDiff, stringSetDiff } from "./primitives.js";
import { taskGroupDiffs } from "./task-group.js";
import type { DiffType, FD, Flat, JobDiff, OD, Obj, TGD } from "./types.js";
import { str } from "./values.js";

const JOB_FILTER = ["ID", "Status", "StatusDescription", "Version", "Stable", "CreateIndex", "ModifyIndex", "JobModifyIndex", "Update", "SubmitTime", "NomadTokenID", "VaultToken"];

function diffJob(j: Obj | null, other: Obj | null, contextual: boolean): { type: DiffType; id: string; fields: FD[]; objects: OD[]; groups: TGD[] } {
  let type: DiffType = "None";
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  let id: string;
  if (!j && !other) return { type, id: "", fields: [], objects: [], groups: [] };
  if (!j) {
    type = "Added";
    newFlat = flattenPrim(other, { filter: JOB_FILTER });
    id = str(other, "ID");
  } else if (!other) {
    type = "Deleted";
    oldFlat = flattenPrim(j, { filter: JOB_FILTER });
    id = str(j, "ID");
  } else {
    if (str(j, "ID") !== str(other, "ID")) {
      throw new Error(`can not diff jobs with different IDs: ${goQuote(str(j, "ID"))} and ${goQuote(str(other, "ID"))}`);
    }
    oldFlat = flattenPrim(j, { filter: JOB_FILTER });
    newFlat = flattenPrim(other, { filter: JOB_FILTER });
    id = str(other, "ID");
  }
  const a: Obj = j ?? {};
  const b: Obj = other ?? {};

  const fields = fieldDiffs(oldFlat, newFlat, false);
  const objects: OD[] = [];
  const dcs = stringSetDiff(a["Datacenters"], b["Datacenters"], "Datacenters", contextual);
  if (dcs && dcs.Type !== "None") objects.push(dcs);
  objects.push(...primitiveObjectSetDiff(a["Constraints"], b["Constraints"], ["str"], "Constraint", contextual));
  objects.push(...primitiveObjectSetDiff(a["Affinities"], b["Affinities"], ["str"], "Affinity", contextual));
  const groups = taskGroupDiffs(a["TaskGroups"], b["TaskGroups"], contextual);
  const periodic = periodicDiff(a["Periodic"], b["Periodic"], contextual);
  if (periodic) objects.push(periodic);
  const parameterized = structDiff("ParameterizedJob", a["ParameterizedJob"], b["ParameterizedJob"], contextual, {
    objects: (p, n) => [
      stringSetDiff(p["MetaOptional"], n["MetaOptional"], "MetaOptional", contextual),
      stringSetDiff(p["MetaRequired"], n["MetaRequired"], "MetaRequired", contextual),
    ],
  });
  if (parameterized) objects.push(parameterized);
  const multiregion = multiregionDiff(a["Multiregion"], b["Multiregion"], contextual);
  if (multiregion) objects.push(multiregion);
  const ui = uiDiff(a["UI"], b["UI"], contextual);
  if (ui) objects.push(ui);

  if (type === "None") {
    if (fields.some((f) => f.Type !== "None") || objects.some((o) => o.Type !== "None") || groups.some((g) => g.Type !== "None")) type = "Edited";
  }
  return { type, id, fields, objects, groups };
}

/**
 * Nomad's `Job.Diff(other, contextual)`. `previous` undefined = the job is new
 * (Type "Added"); `next` undefined = deleted. Inputs are canonical job objects
 * (server fields may be present and are ignored). Throws Nomad's error when
 * both jobs exist with different IDs.
 */
export function jobDiff(previous: Record<string, unknown> | undefined, next: Record<string, unknown> | undefined, contextual: boolean): Record<string, unknown> {
  const d = diffJob(previous ?? null, next ?? null, contextual);
  const out: JobDiff = {
    Type: d.type,
    ID: d.id,
    Fields: outFields(d.fields),
    Objects: outObjects(d.objects),
    TaskGroups:
      d.groups.length === 0
        ? null
        : d.groups.map((g) => ({
            Type: g.Type,
            Name: g.Name,
            Fields: outFields(g.Fields),
            Objects: outObjects(g.Objects),
            Tasks:
              g.Tasks.length === 0 ? null : g.Tasks.map((t) => ({ Type: t.Type, Name: t.Name, Fields: outFields(t.Fields), Objects: outObjects(t.Objects), Annotations: null })),
            Updates: null,
          })),
  };
  return out as unknown as Record<string, unknown>;
}
