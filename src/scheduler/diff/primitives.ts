/**
 * diff.go's building blocks: a field diff, the field diffs of two flattened
 * structs, string-set diffs and the primitive object (set) diffs that blocks
 * made only of primitive fields use.
 */
import { type FlatOpts, flattenPrim } from "./flatmap.js";
import { hashKey } from "./hash-key.js";
import { sortFields, sortObjects } from "./order.js";
import type { DiffType, FD, Flat, OD, Obj } from "./types.js";
import { isObj, list, strList } from "./values.js";

export function fieldDiff(oldV: string, newV: string, name: string, contextual: boolean): FD | null {
  if (oldV === newV) {
    if (!contextual) return null;
    return { Type: "None", Name: name, Old: oldV, New: newV, Annotations: null };
  }
  if (oldV === "") return { Type: "Added", Name: name, Old: "", New: newV, Annotations: null };
  if (newV === "") return { Type: "Deleted", Name: name, Old: oldV, New: "", Annotations: null };
  return { Type: "Edited", Name: name, Old: oldV, New: newV, Annotations: null };
}

export function fieldDiffs(oldFlat: Flat | null, newFlat: Flat | null, contextual: boolean): FD[] {
  const diffs: FD[] = [];
  const o = oldFlat ?? new Map<string, string>();
  const n = newFlat ?? new Map<string, string>();
  for (const [k, oldV] of o) {
    const d = fieldDiff(oldV, n.get(k) ?? "", k, contextual);
    if (d) diffs.push(d);
  }
  for (const [k, newV] of n) {
    if (o.has(k)) continue;
    const d = fieldDiff("", newV, k, contextual);
    if (d) diffs.push(d);
  }
  return sortFields(diffs);
}

/** Type of a diff from its fields (primitiveObjectDiff's rule); null when nothing changed. */
export function typeFromFields(fields: readonly FD[]): DiffType | null {
  let added = false;
  let deleted = false;
  for (const f of fields) {
    if (f.Type === "Edited") return "Edited";
    if (f.Type === "Deleted") deleted = true;
    if (f.Type === "Added") added = true;
  }
  if (added && deleted) return "Edited";
  if (added) return "Added";
  if (deleted) return "Deleted";
  return null;
}

export function stringSetDiff(oldList: unknown, newList: unknown, name: string, contextual: boolean): OD | null {
  const oldSet = new Set(strList(oldList));
  const newSet = new Set(strList(newList));
  const same = oldSet.size === newSet.size && [...oldSet].every((k) => newSet.has(k));
  if (same && !contextual) return null;
  const fields: FD[] = [];
  let added = false;
  let removed = false;
  for (const k of oldSet) {
    if (!newSet.has(k)) {
      fields.push(fieldDiff(k, "", name, contextual)!);
      removed = true;
    } else if (contextual) {
      fields.push(fieldDiff(k, k, name, contextual)!);
    }
  }
  for (const k of newSet) {
    if (!oldSet.has(k)) {
      fields.push(fieldDiff("", k, name, contextual)!);
      added = true;
    }
  }
  sortFields(fields);
  let type: DiffType;
  if (added && removed) type = "Edited";
  else if (added) type = "Added";
  else if (removed) type = "Deleted";
  else {
    if (fields.length === 0) return null;
    type = "None";
  }
  return { Type: type, Name: name, Fields: fields, Objects: [] };
}

export function primitiveObjectDiff(oldV: unknown, newV: unknown, filter: readonly string[] | null, name: string, contextual: boolean, defaults?: Obj): OD | null {
  const flatOpts: FlatOpts = filter ? { filter, ...(defaults ? { defaults } : {}) } : defaults ? { defaults } : {};
  const oldFlat = flattenPrim(oldV, flatOpts);
  const newFlat = flattenPrim(newV, flatOpts);
  oldFlat.delete("");
  newFlat.delete("");
  const fields = fieldDiffs(oldFlat, newFlat, contextual);
  const type = typeFromFields(fields);
  if (!type) return null;
  return { Type: type, Name: name, Fields: fields, Objects: [] };
}

export function primitiveObjectSetDiff(oldList: unknown, newList: unknown, filter: readonly string[] | null, name: string, contextual: boolean, diffId?: (o: Obj) => string): OD[] {
  const makeSet = (items: unknown): Map<string, unknown> => {
    const set = new Map<string, unknown>();
    for (const item of list(items)) {
      let key = diffId && isObj(item) ? diffId(item) : "";
      if (key === "") key = hashKey(item);
      set.set(key, item);
    }
    return set;
  };
  const oldSet = makeSet(oldList);
  const newSet = makeSet(newList);
  const diffs: OD[] = [];
  for (const [k, o] of oldSet) {
    const d = primitiveObjectDiff(o, newSet.get(k) ?? null, filter, name, contextual);
    if (d) diffs.push(d);
  }
  for (const [k, n] of newSet) {
    if (oldSet.has(k)) continue;
    const d = primitiveObjectDiff(null, n, filter, name, contextual);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}
