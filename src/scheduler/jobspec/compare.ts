/**
 * Spec comparison: whether a re-registered job is a new version
 * (`structs.Job.SpecChanged`). Both sides are canonical jobs (plain JSON).
 */
import { isPlainObject, type Obj } from "./objects.js";
import { SERVER_FIELDS } from "./server-fields.js";

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((value, i) => jsonEqual(value, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    if (keysA.length !== keysB.length) return false;
    return keysA.every((key) => Object.prototype.hasOwnProperty.call(b, key) && jsonEqual(a[key], b[key]));
  }
  return false;
}

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
    if (Object.prototype.hasOwnProperty.call(previous, key)) copy[key] = previous[key];
    else delete copy[key];
  }
  return !jsonEqual(previous, copy);
}
