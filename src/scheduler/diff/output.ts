/**
 * From the internal representation to the wire shapes: empty lists become
 * `null` (Go's nil slices) and annotations are copied.
 */
import type { FD, FieldDiff, OD, ObjectDiff } from "./types.js";

export function outFields(fields: FD[]): FieldDiff[] | null {
  return fields.length === 0 ? null : fields.map((f) => ({ Type: f.Type, Name: f.Name, Old: f.Old, New: f.New, Annotations: f.Annotations ? [...f.Annotations] : null }));
}

export function outObjects(objects: OD[]): ObjectDiff[] | null {
  return objects.length === 0 ? null : objects.map((o) => ({ Type: o.Type, Name: o.Name, Fields: outFields(o.Fields), Objects: outObjects(o.Objects) }));
}
