/**
 * The order of diff lists: `FieldDiff.Less`, `ObjectDiff.Less` (ported as is,
 * including its habit of sorting the compared diffs' own fields and objects)
 * and the sorts built on them.
 */
import { deepEqual } from "../../core/go/deep-equal.js";
import { goLess, goSort } from "../../core/go/sort.js";
import type { DiffType, FD, OD } from "./types.js";

function fieldLess(f: FD, other: FD): boolean {
  if (f.Name !== other.Name) return goLess(f.Name, other.Name);
  if (f.Old !== other.Old) return goLess(f.Old, other.Old);
  return goLess(f.New, other.New);
}

function typeLess(d: DiffType, other: DiffType): boolean {
  // Edited > Added > Deleted > None, reverse sorted.
  if (d === other) return false;
  if (d === "Edited") return true;
  if (other === "Edited") return false;
  if (d === "Added") return true;
  if (other === "Added") return false;
  if (d === "Deleted") return true;
  if (other === "Deleted") return false;
  return true;
}

function fieldEqual(a: FD, b: FD): boolean {
  return a.Type === b.Type && a.Name === b.Name && a.Old === b.Old && a.New === b.New && deepEqual(a.Annotations, b.Annotations);
}

function objectEqual(a: OD, b: OD): boolean {
  if (a === b) return true;
  return (
    a.Type === b.Type &&
    a.Name === b.Name &&
    a.Fields.length === b.Fields.length &&
    a.Objects.length === b.Objects.length &&
    a.Fields.every((f, i) => fieldEqual(f, b.Fields[i]!)) &&
    a.Objects.every((o, i) => objectEqual(o, b.Objects[i]!))
  );
}

/** ObjectDiff.Less, side effects included (it sorts both diffs' fields and objects). */
function objectLess(o: OD, other: OD): boolean {
  if (objectEqual(o, other)) return false;
  if (o.Name !== other.Name) return goLess(o.Name, other.Name);
  if (o.Type !== other.Type) return typeLess(o.Type, other.Type);
  if (o.Fields.length !== other.Fields.length) return o.Fields.length < other.Fields.length;
  if (o.Objects.length !== other.Objects.length) return o.Objects.length < other.Objects.length;
  sortFields(o.Fields);
  sortFields(other.Fields);
  for (let i = 0; i < o.Fields.length; i++) if (fieldLess(o.Fields[i]!, other.Fields[i]!)) return true;
  sortObjects(o.Objects);
  sortObjects(other.Objects);
  for (let i = 0; i < o.Objects.length; i++) if (objectLess(o.Objects[i]!, other.Objects[i]!)) return true;
  return false;
}

export function sortFields(fields: FD[]): FD[] {
  return goSort(fields, fieldLess);
}

export function sortObjects(objects: OD[]): OD[] {
  return goSort(objects, objectLess);
}
