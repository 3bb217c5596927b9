/**
 * Spec comparison: whether a re-registered job is a new version
 * (`structs.Job.SpecChanged`). Both sides are canonical jobs (plain JSON).
 */
import { deepEqual } from "../../core/go/deep-equal.js";
import type { Obj } from "./objects.js";
import { SERVER_FIELDS } from "./server-fields.js";

/**
 * `structs.Job.SpecChanged`: the new job with the previous job's server-set
 * fields (Status, StatusDescription, Stable, Version, CreateIndex,
 * ModifyIndex, JobModifyIndex, SubmitTime) is compared deeply with the
 * previous one; nil and empty lists/maps count as different, as in
 * reflect.DeepEqual.
 */
export function specChanged(previous: Record<string, unknown>, next: Record<string, unknown>): boolean {
  const copy: Obj = { ...next };
  for (const key of Object.keys(SERVER_FIELDS)) {
    if (Object.hasOwn(previous, key)) copy[key] = previous[key];
    else delete copy[key];
  }
  return !deepEqual(previous, copy);
}
