/**
 * The recurring shapes of diff.go's per-block diffs, factored once: a pointer
 * struct with nested objects, lists matched by key or by position, and an
 * opaque fully flattened map (driver config, scaling policy).
 */
import { deepEqual } from "../../core/go/deep-equal.js";
import { type FlatOpts, flattenAll, flattenPrim } from "./flatmap.js";
import { sortObjects } from "./order.js";
import { fieldDiffs } from "./primitives.js";
import type { DiffType, Flat, OD, Obj } from "./types.js";
import { obj, objList } from "./values.js";

/**
 * The common shape of diff.go's pointer-struct diffs: nil on deep equality,
 * Added/Deleted/Edited by nil-ness, primitive fields, then nested objects
 * computed against the zero value where one side is nil.
 */
export function structDiff(
  name: string,
  prev: unknown,
  next: unknown,
  contextual: boolean,
  opts: {
    flat?: FlatOpts;
    /** Fields diffed contextually (most do; the scaling and sidecar-task ones do not). */
    fieldsContextual?: boolean;
    /** Adds pointer fields by hand (only called with the maps that exist). */
    extraFields?: (prev: Obj, next: Obj, oldFlat: Flat | null, newFlat: Flat | null) => void;
    objects?: (prev: Obj, next: Obj) => Array<OD | OD[] | null>;
    sortObjects?: boolean;
  } = {},
): OD | null {
  if (deepEqual(prev, next)) return null;
  let type: DiffType;
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  const p = obj(prev);
  const n = obj(next);
  if (!p) {
    type = "Added";
    newFlat = flattenPrim(n, opts.flat);
  } else if (!n) {
    type = "Deleted";
    oldFlat = flattenPrim(p, opts.flat);
  } else {
    type = "Edited";
    oldFlat = flattenPrim(p, opts.flat);
    newFlat = flattenPrim(n, opts.flat);
  }
  opts.extraFields?.(p ?? {}, n ?? {}, oldFlat, newFlat);
  const fields = fieldDiffs(oldFlat, newFlat, opts.fieldsContextual ?? contextual);
  const objects = collect(opts.objects?.(p ?? {}, n ?? {}) ?? []);
  if (opts.sortObjects) sortObjects(objects);
  return { Type: type, Name: name, Fields: fields, Objects: objects };
}

export function collect(parts: Array<OD | OD[] | null>): OD[] {
  const out: OD[] = [];
  for (const part of parts) {
    if (!part) continue;
    if (Array.isArray(part)) out.push(...part);
    else out.push(part);
  }
  return out;
}

/** Diffs of two lists matched by a key (old order first, then the added ones), sorted. */
export function keyedDiffs(oldList: unknown, newList: unknown, key: (o: Obj) => string, diff: (o: Obj | null, n: Obj | null) => OD | null): OD[] {
  const oldMap = new Map<string, Obj>();
  const newMap = new Map<string, Obj>();
  for (const o of objList(oldList)) oldMap.set(key(o), o);
  for (const n of objList(newList)) newMap.set(key(n), n);
  const diffs: OD[] = [];
  for (const [k, o] of oldMap) {
    const d = diff(o, newMap.get(k) ?? null);
    if (d) diffs.push(d);
  }
  for (const [k, n] of newMap) {
    if (oldMap.has(k)) continue;
    const d = diff(null, n);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}

/** Diffs of two lists matched by position (actions, volume mounts), sorted. */
export function indexedDiffs(oldList: unknown, newList: unknown, diff: (o: Obj | null, n: Obj | null) => OD | null): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  const diffs: OD[] = [];
  for (let i = 0; i < o.length && i < n.length; i++) {
    const d = diff(o[i]!, n[i]!);
    if (d) diffs.push(d);
  }
  for (let i = n.length; i < o.length; i++) {
    const d = diff(o[i]!, null);
    if (d) diffs.push(d);
  }
  for (let i = o.length; i < n.length; i++) {
    const d = diff(null, n[i]!);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}

/** configDiff (and policyDiff): an opaque map[string]interface{}, fully flattened. */
export function configDiff(name: string, oldV: unknown, newV: unknown, contextual: boolean): OD | null {
  const o = obj(oldV);
  const n = obj(newV);
  if (deepEqual(oldV, newV)) return null;
  let type: DiffType;
  if (!o || Object.keys(o).length === 0) type = "Added";
  else if (!n || Object.keys(n).length === 0) type = "Deleted";
  else type = "Edited";
  const fields = fieldDiffs(flattenAll(o, true), flattenAll(n, true), contextual);
  return { Type: type, Name: name, Fields: fields, Objects: [] };
}
