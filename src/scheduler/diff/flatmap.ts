/**
 * Port of helper/flatmap (`flatmap.Flatten`): turns a struct into the
 * name → `%v` map diff.go compares field by field, in its primitive-only and
 * its full form (see index.ts for how JSON stands in for Go reflection).
 */
import { fmtPrim, goFloat, isPrim } from "../../core/go/format.js";
import type { Flat, Obj } from "./types.js";
import { isNil, isObj } from "./values.js";

/** Struct fields that are `map[string]string` (flattened as `Name[key]` even for primitive-only flattening). */
const MAP_FIELDS: ReadonlySet<string> = new Set(["Meta", "Env", "CanaryMeta", "TaggedAddresses", "GetterOptions", "GetterHeaders", "Target", "Args", "Add", "Set"]);

export interface FlatOpts {
  /** Keys deleted after flattening (Flatten's filter). */
  readonly filter?: readonly string[];
  /** Pointer-to-primitive fields: skipped by primitive-only flattening inside a struct. */
  readonly skip?: readonly string[];
  /** Zero values of fields the canonical JSON may leave out (omitempty structs). */
  readonly defaults?: Obj;
}

/** `flatmap.Flatten(x, filter, true)` of a struct (or pointer to one). */
export function flattenPrim(value: unknown, opts: FlatOpts = {}): Flat {
  const out: Flat = new Map();
  if (!isObj(value)) return out;
  const src: Obj = opts.defaults ? { ...opts.defaults, ...value } : value;
  for (const [key, v] of Object.entries(src)) {
    if (opts.skip?.includes(key)) continue;
    if (isPrim(v)) out.set(key, fmtPrim(v));
    else if (isObj(v) && MAP_FIELDS.has(key)) {
      for (const [k, e] of Object.entries(v)) if (isPrim(e)) out.set(`${key}[${k}]`, fmtPrim(e));
    }
  }
  for (const f of opts.filter ?? []) out.delete(f);
  return out;
}

/**
 * `flatmap.Flatten(x, nil, false)`: everything, nil as "nil". `floats` says
 * whether numbers are float64s decoded into interface{} (driver config,
 * policies) or typed Go integers (struct fields).
 */
export function flattenAll(value: unknown, floats: boolean): Flat {
  const out: Flat = new Map();
  // Top-level struct fields and map keys both come out bare ("image",
  // "LostAfter"); deeper map keys as "[key]" (no nested structs occur here).
  const walk = (prefix: string, v: unknown): void => {
    if (isNil(v)) {
      out.set(prefix, "nil");
    } else if (Array.isArray(v)) {
      for (const [i, e] of v.entries()) walk(`${prefix}[${i}]`, e);
    } else if (isObj(v)) {
      for (const [k, e] of Object.entries(v)) walk(prefix === "" ? k : `${prefix}[${k}]`, e);
    } else if (typeof v === "number") {
      out.set(prefix, floats ? goFloat(v) : fmtPrim(v));
    } else {
      out.set(prefix, fmtPrim(v));
    }
  };
  if (isObj(value) || Array.isArray(value)) walk("", value);
  return out;
}
