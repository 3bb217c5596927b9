/**
 * Port of scheduler/annotate.go: the plan annotations added to a job diff
 * (desired updates per group, "forces …" on counts and tasks).
 */
import { goQuote } from "../../core/go/strconv.js";
import type { JobDiff, TaskDiff, TaskGroupDiff } from "./types.js";

export const ANNOTATION_FORCES_CREATE = "forces create";
export const ANNOTATION_FORCES_DESTROY = "forces destroy";
export const ANNOTATION_FORCES_INPLACE_UPDATE = "forces in-place update";
export const ANNOTATION_FORCES_DESTRUCTIVE_UPDATE = "forces create/destroy update";

/** structs.DesiredUpdates as the plan's Annotations.DesiredTGUpdates carries them (per group). */
export interface DesiredUpdates {
  Ignore?: number;
  Place?: number;
  Migrate?: number;
  Stop?: number;
  InPlaceUpdate?: number;
  DestructiveUpdate?: number;
  Canary?: number;
  [other: string]: number | undefined;
}

/** Update type names of annotate.go, in the order Nomad fills them. */
const UPDATE_TYPES: ReadonlyArray<readonly [keyof DesiredUpdates & string, string]> = [
  ["Ignore", "ignore"],
  ["Place", "create"],
  ["Migrate", "migrate"],
  ["Stop", "destroy"],
  ["Canary", "canary"],
  ["InPlaceUpdate", "in-place update"],
  ["DestructiveUpdate", "create/destroy update"],
];

/**
 * `scheduler.Annotate`, applied in place to a `jobDiff` result (and returned):
 * - with `desiredTGUpdates` (the plan's `Annotations.DesiredTGUpdates`), each
 *   listed group gets `Updates` ({"create": 1, "in-place update": 2, …});
 * - a group's `Count` field gets "forces create" / "forces destroy";
 * - every non-"None" task gets "forces create" / "forces destroy" when its
 *   whole group is added/deleted, else "forces create/destroy update" unless
 *   only `KillTimeout` and Service/Constraint/Affinity/Spread objects (or a
 *   LogConfig not touching `Disabled`) changed, which is "forces in-place update".
 */
export function annotateTaskDiffs(diff: Record<string, unknown>, desiredTGUpdates?: Readonly<Record<string, DesiredUpdates>> | null): Record<string, unknown> {
  const groups = (diff as unknown as JobDiff).TaskGroups;
  if (!groups || groups.length === 0) return diff;
  for (const group of groups) {
    if (desiredTGUpdates) {
      const desired = desiredTGUpdates[group.Name];
      if (desired) {
        group.Updates ??= {};
        for (const [key, label] of UPDATE_TYPES) {
          const count = desired[key] ?? 0;
          if (count !== 0) group.Updates[label] = count;
        }
      }
    }
    annotateCountChange(group);
    for (const task of group.Tasks ?? []) annotateTask(task, group);
  }
  return diff;
}

function annotateCountChange(group: TaskGroupDiff): void {
  const count = (group.Fields ?? []).find((f) => f.Name === "Count");
  if (!count) return;
  const parse = (v: string): number => {
    if (v === "") return 0;
    if (!/^[+-]?\d+$/.test(v)) throw new Error(`strconv.Atoi: parsing ${goQuote(v)}: invalid syntax`);
    return Number(v);
  };
  const oldV = parse(count.Old);
  const newV = parse(count.New);
  if (oldV < newV) count.Annotations = [...(count.Annotations ?? []), ANNOTATION_FORCES_CREATE];
  else if (newV < oldV) count.Annotations = [...(count.Annotations ?? []), ANNOTATION_FORCES_DESTROY];
}

function annotateTask(task: TaskDiff, parent: TaskGroupDiff): void {
  if (task.Type === "None") return;
  const add = (a: string): void => {
    task.Annotations = [...(task.Annotations ?? []), a];
  };
  if (parent.Type === "Added" || parent.Type === "Deleted") {
    if (task.Type === "Added") {
      add(ANNOTATION_FORCES_CREATE);
      return;
    }
    if (task.Type === "Deleted") {
      add(ANNOTATION_FORCES_DESTROY);
      return;
    }
  }
  // Every primitive field change is destructive except KillTimeout.
  let destructive = (task.Fields ?? []).some((f) => f.Name !== "KillTimeout");
  if (!destructive) {
    for (const o of task.Objects ?? []) {
      if (o.Name === "Service" || o.Name === "Constraint" || o.Name === "Affinity" || o.Name === "Spread") continue;
      if (o.Name === "LogConfig") {
        if ((o.Fields ?? []).some((f) => f.Name === "Disabled")) {
          destructive = true;
          break;
        }
        continue;
      }
      destructive = true;
      break;
    }
  }
  add(destructive ? ANNOTATION_FORCES_DESTRUCTIVE_UPDATE : ANNOTATION_FORCES_INPLACE_UPDATE);
}
