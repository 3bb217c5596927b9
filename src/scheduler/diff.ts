/**
 * Job diffs for `PUT /v1/job/:id/plan` with `"Diff": true`: a port of Nomad's
 * `structs.Job.Diff(other, contextual)` (nomad/structs/diff.go), of the
 * `flatmap.Flatten` helper it is built on (helper/flatmap/flatmap.go) and of
 * the plan annotations the scheduler adds afterwards (scheduler/annotate.go).
 *
 * TARGET VERSION: Nomad 1.9.x. The diff.go revision read is a 1.8+/1.9-era one
 * (group `Disconnect`, job `UI`, task `Identities`, `Actions`, `Schedule`,
 * `VolumeMounts`, `Periodic.Specs`, network `CNI`); blocks a 1.9 job does not
 * carry are simply absent and produce nothing.
 *
 * Inputs are canonical `structs.Job` objects as produced by
 * `canonicalizeJob` (jobspec.ts): plain JSON whose keys are the Go field names.
 * Go's reflection-driven flattening is reproduced on that JSON:
 * - "primitive" flattening (`Flatten(x, filter, true)`) keeps the top level
 *   bool/int/float/string fields and the entries of `map[string]string`
 *   fields (rendered `Meta[key]`); nested structs, pointers, slices and
 *   `interface{}` values are skipped. JSON cannot tell a map from a struct or a
 *   `*int` from an `int`, so the map fields (`MAP_FIELDS`) and the pointer
 *   fields (per call site) are named explicitly;
 * - full flattening (`Flatten(x, nil, false)`, used for task driver `Config`,
 *   scaling `Policy`, check `Header`, `Disconnect`, template `Wait`) follows
 *   everything: `image`, `args[0]`, `port_map[0][http]`, nil as `"nil"`;
 * - values are rendered with Go's `%v`: integers in decimal (durations are
 *   their integer nanoseconds), booleans `true`/`false`, and numbers decoded
 *   into `interface{}` (driver config, scaling policy) as Go float64s, so
 *   `1000000` there prints `1e+06` as Go does.
 *
 * Faithful details worth knowing:
 * - the job, group and task primitive `Fields` are never contextual (Nomad
 *   passes `false` there); `contextual` only fills unchanged fields (Type
 *   "None") into object diffs (Update, Config, Resources, Service …). So two
 *   identical jobs give a "None" diff with no fields at all;
 * - Fields lists are sorted by (Name, Old, New); TaskGroups and Tasks by name;
 *   lists of like objects (constraints, services, ports …) with Nomad's
 *   `ObjectDiff.Less` (name, then Edited < Added < Deleted < None, then …);
 *   the job/group/task `Objects` lists keep Nomad's append order
 *   (Datacenters, Constraint, Affinity, Periodic, …) — they are not sorted;
 * - job fields ID, Status, StatusDescription, Version, Stable, CreateIndex,
 *   ModifyIndex, JobModifyIndex, Update, SubmitTime, NomadTokenID and
 *   VaultToken are ignored; a group or task is "Edited" whenever it differs
 *   deeply (reflect.DeepEqual), even in a block that diff.go does not diff
 *   (e.g. Spreads, Migrate, Lifecycle), in which case it has no fields;
 * - empty lists come out as `null`, like Go's nil slices.
 *
 * Known approximations:
 * - Go sorts with an unstable sort and, for lists built from maps, starts from
 *   random map order; here the input order is deterministic and Go's
 *   insertion sort (what `sort.Sort` does for up to 12 elements) is used for
 *   every list, with `ObjectDiff.Less` ported as is (including its sorting of
 *   the compared diffs' own fields and objects);
 * - `hashstructure` keys (constraints, affinities, artifacts, networks) are
 *   replaced by a canonical JSON key: equal content, equal key;
 * - group volume requests come out in name order (Go: map order);
 * - a constraint/affinity/artifact whose fields are all empty yields no
 *   object (Go appends a nil entry);
 * - `Template.DiffID()` is taken to be the destination path.
 */
import { formatGoDuration } from "../core/durations.js";
import { compareBytewise } from "../core/json.js";

type Obj = Record<string, unknown>;
type Flat = Map<string, string>;

export type DiffType = "None" | "Added" | "Deleted" | "Edited";

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

// ---------------------------------------------------------------------------
// Internal (mutable, arrays never null) representation

interface FD {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

interface OD {
  Type: DiffType;
  Name: string;
  Fields: FD[];
  Objects: OD[];
}

interface TD {
  Type: DiffType;
  Name: string;
  Fields: FD[];
  Objects: OD[];
}

interface TGD {
  Type: DiffType;
  Name: string;
  Fields: FD[];
  Objects: OD[];
  Tasks: TD[];
}

// ---------------------------------------------------------------------------
// JSON helpers

function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNil(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

function obj(value: unknown): Obj | null {
  return isObj(value) ? value : null;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function objList(value: unknown): Obj[] {
  return list(value).filter(isObj);
}

function strList(value: unknown): string[] {
  return list(value).map((v) => (typeof v === "string" ? v : fmtPrim(v)));
}

function str(o: Obj | null, key: string): string {
  const v = o?.[key];
  return typeof v === "string" ? v : isNil(v) ? "" : fmtPrim(v);
}

/** reflect.DeepEqual on decoded JSON: null and [] / {} differ, key order does not matter. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isNil(a) && isNil(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Stand-in for hashstructure.Hash: equal content gives equal keys (nil and empty collections hash alike). */
function hashKey(value: unknown): string {
  if (isNil(value)) return "~";
  if (Array.isArray(value)) return value.length === 0 ? "~" : `[${value.map(hashKey).join(",")}]`;
  if (isObj(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort(compareBytewise);
    if (keys.length === 0) return "~";
    return `{${keys.map((k) => `${JSON.stringify(k)}:${hashKey(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function goLess(a: string, b: string): boolean {
  return compareBytewise(a, b) < 0;
}

function goQuote(s: string): string {
  return JSON.stringify(s);
}

// ---------------------------------------------------------------------------
// Go's %v

/** fmt's %v of an integer. */
function goInt(n: number): string {
  if (Math.abs(n) >= 1e21) return BigInt(n).toString();
  return String(n);
}

/** fmt's %v of a float64 (strconv 'g' with the shortest digits). */
function goFloat(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  // Shortest round-trip digits, as both Go and JavaScript produce them.
  const [mantissa, expText] = n.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  // strconv.FormatFloat(f, 'g', -1, 64): with the shortest precision, %e is
  // used when the exponent is < -4 or >= 6 (hence 1e+06, 1.5e+07, 1e-05).
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mantissa}e${exp < 0 ? "-" : "+"}${abs < 10 ? "0" : ""}${abs}`;
  }
  return String(n); // plain decimal in this range, same digits
}

/** %v of a JSON primitive sitting in a typed Go field (numbers are Go integers). */
function fmtPrim(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return Number.isInteger(value) ? goInt(value) : goFloat(value);
  if (typeof value === "bigint") return value.toString();
  return String(value);
}

function isPrim(value: unknown): value is string | number | boolean | bigint {
  const t = typeof value;
  return t === "string" || t === "number" || t === "boolean" || t === "bigint";
}

// ---------------------------------------------------------------------------
// helper/flatmap

/** Struct fields that are `map[string]string` (flattened as `Name[key]` even for primitive-only flattening). */
const MAP_FIELDS: ReadonlySet<string> = new Set(["Meta", "Env", "CanaryMeta", "TaggedAddresses", "GetterOptions", "GetterHeaders", "Target", "Args", "Add", "Set"]);

interface FlatOpts {
  /** Keys deleted after flattening (Flatten's filter). */
  readonly filter?: readonly string[];
  /** Pointer-to-primitive fields: skipped by primitive-only flattening inside a struct. */
  readonly skip?: readonly string[];
  /** Zero values of fields the canonical JSON may leave out (omitempty structs). */
  readonly defaults?: Obj;
}

/** `flatmap.Flatten(x, filter, true)` of a struct (or pointer to one). */
function flattenPrim(value: unknown, opts: FlatOpts = {}): Flat {
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
function flattenAll(value: unknown, floats: boolean): Flat {
  const out: Flat = new Map();
  // Top-level struct fields and map keys both come out bare ("image",
  // "LostAfter"); deeper map keys as "[key]" (no nested structs occur here).
  const walk = (prefix: string, v: unknown): void => {
    if (isNil(v)) {
      out.set(prefix, "nil");
    } else if (Array.isArray(v)) {
      v.forEach((e, i) => walk(`${prefix}[${i}]`, e));
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

// ---------------------------------------------------------------------------
// FieldDiff / ObjectDiff primitives

function fieldDiff(oldV: string, newV: string, name: string, contextual: boolean): FD | null {
  if (oldV === newV) {
    if (!contextual) return null;
    return { Type: "None", Name: name, Old: oldV, New: newV, Annotations: null };
  }
  if (oldV === "") return { Type: "Added", Name: name, Old: "", New: newV, Annotations: null };
  if (newV === "") return { Type: "Deleted", Name: name, Old: oldV, New: "", Annotations: null };
  return { Type: "Edited", Name: name, Old: oldV, New: newV, Annotations: null };
}

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

/** Go's insertionSort (what sort.Sort runs for short slices). */
function goSort<T>(items: T[], less: (a: T, b: T) => boolean): T[] {
  for (let i = 1; i < items.length; i++) {
    for (let j = i; j > 0 && less(items[j]!, items[j - 1]!); j--) {
      const t = items[j]!;
      items[j] = items[j - 1]!;
      items[j - 1] = t;
    }
  }
  return items;
}

function sortFields(fields: FD[]): FD[] {
  return goSort(fields, fieldLess);
}

function sortObjects(objects: OD[]): OD[] {
  return goSort(objects, objectLess);
}

function fieldDiffs(oldFlat: Flat | null, newFlat: Flat | null, contextual: boolean): FD[] {
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
function typeFromFields(fields: readonly FD[]): DiffType | null {
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

function stringSetDiff(oldList: unknown, newList: unknown, name: string, contextual: boolean): OD | null {
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

function primitiveObjectDiff(oldV: unknown, newV: unknown, filter: readonly string[] | null, name: string, contextual: boolean, defaults?: Obj): OD | null {
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

function primitiveObjectSetDiff(oldList: unknown, newList: unknown, filter: readonly string[] | null, name: string, contextual: boolean, diffId?: (o: Obj) => string): OD[] {
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

/**
 * The common shape of diff.go's pointer-struct diffs: nil on deep equality,
 * Added/Deleted/Edited by nil-ness, primitive fields, then nested objects
 * computed against the zero value where one side is nil.
 */
function structDiff(
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

function collect(parts: Array<OD | OD[] | null>): OD[] {
  const out: OD[] = [];
  for (const part of parts) {
    if (!part) continue;
    if (Array.isArray(part)) out.push(...part);
    else out.push(part);
  }
  return out;
}

/** Diffs of two lists matched by a key (old order first, then the added ones), sorted. */
function keyedDiffs(oldList: unknown, newList: unknown, key: (o: Obj) => string, diff: (o: Obj | null, n: Obj | null) => OD | null): OD[] {
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
function indexedDiffs(oldList: unknown, newList: unknown, diff: (o: Obj | null, n: Obj | null) => OD | null): OD[] {
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
function configDiff(name: string, oldV: unknown, newV: unknown, contextual: boolean): OD | null {
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

// ---------------------------------------------------------------------------
// Job

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
    objects: (p, n) => [stringSetDiff(p["MetaOptional"], n["MetaOptional"], "MetaOptional", contextual), stringSetDiff(p["MetaRequired"], n["MetaRequired"], "MetaRequired", contextual)],
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

function periodicDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const d = structDiff("Periodic", prev, next, contextual, {
    objects: (p, n) => {
      const specs = stringSetDiff(p["Specs"], n["Specs"], "Specs", contextual);
      return [specs && specs.Type !== "None" ? specs : null];
    },
  });
  if (d) sortFields(d.Fields);
  return d;
}

function multiregionDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const type: DiffType = !obj(prev) ? "Added" : !obj(next) ? "Deleted" : "Edited";
  // An added block is diffed against a canonicalized empty Multiregion, a deleted one against an empty one.
  const p: Obj = obj(prev) ?? { Strategy: { MaxParallel: 0, OnFailure: "" }, Regions: [] };
  const n: Obj = obj(next) ?? {};
  const objects: OD[] = [];
  const strategy = primitiveObjectDiff(p["Strategy"], n["Strategy"], [], "Strategy", contextual);
  if (strategy) objects.push(strategy);
  const oldMap = new Map<string, Obj>();
  const newMap = new Map<string, Obj>();
  for (const r of objList(p["Regions"])) oldMap.set(str(r, "Name"), r);
  for (const r of objList(n["Regions"])) newMap.set(str(r, "Name"), r);
  for (const [name, r] of oldMap) {
    const d = multiregionRegionDiff(r, newMap.get(name) ?? null, contextual);
    if (d) objects.push(d);
  }
  for (const [name, r] of newMap) {
    if (oldMap.has(name)) continue;
    const d = multiregionRegionDiff(null, r, contextual);
    if (d) objects.push(d);
  }
  sortObjects(objects);
  return { Type: type, Name: "Multiregion", Fields: [], Objects: objects };
}

function multiregionRegionDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  const d = structDiff("Region", prev, next, contextual, {
    objects: (p, n) => {
      const dcs = stringSetDiff(p["Datacenters"], n["Datacenters"], "Datacenters", contextual);
      return [dcs && dcs.Type !== "None" ? dcs : null];
    },
    sortObjects: true,
  });
  if (!d) return null;
  const type = typeFromFields(d.Fields);
  if (!type) return null;
  d.Type = type;
  return d;
}

function uiDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const d = structDiff("UI", prev, next, contextual, {
    objects: (p, n) => [linkDiffs(p["Links"], n["Links"], contextual)],
    sortObjects: true,
  });
  if (d) sortFields(d.Fields);
  return d;
}

function linkDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  const diffs: OD[] = [];
  const link = (a: Obj, b: Obj): OD | null => {
    if (deepEqual(a, b)) return null;
    return { Type: "Edited", Name: "Link", Fields: fieldDiffs(flattenPrim(a), flattenPrim(b), contextual), Objects: [] };
  };
  for (let i = 0; i < o.length && i < n.length; i++) {
    const d = link(o[i]!, n[i]!);
    if (d) diffs.push(d);
  }
  for (let i = n.length; i < o.length; i++) {
    const d = link(o[i]!, { Label: "", URL: "" });
    if (d) diffs.push({ ...d, Type: "Deleted" });
  }
  for (let i = o.length; i < n.length; i++) {
    const d = link({ Label: "", URL: "" }, n[i]!);
    if (d) diffs.push({ ...d, Type: "Added" });
  }
  return sortObjects(diffs);
}

// ---------------------------------------------------------------------------
// Task groups

const GROUP_POINTER_DURATIONS = ["ShutdownDelay", "StopAfterClientDisconnect", "MaxClientDisconnect"];

function taskGroupDiffs(oldList: unknown, newList: unknown, contextual: boolean): TGD[] {
  const oldMap = new Map<string, Obj>();
  const newMap = new Map<string, Obj>();
  for (const g of objList(oldList)) oldMap.set(str(g, "Name"), g);
  for (const g of objList(newList)) newMap.set(str(g, "Name"), g);
  const diffs: TGD[] = [];
  for (const [name, g] of oldMap) diffs.push(taskGroupDiff(g, newMap.get(name) ?? null, contextual));
  for (const [name, g] of newMap) if (!oldMap.has(name)) diffs.push(taskGroupDiff(null, g, contextual));
  return goSort(diffs, (x, y) => goLess(x.Name, y.Name));
}

function taskGroupDiff(tg: Obj | null, other: Obj | null, contextual: boolean): TGD {
  const flat: FlatOpts = { filter: ["Name"], skip: GROUP_POINTER_DURATIONS };
  let type: DiffType = "None";
  let name = "";
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  if (!tg && !other) return { Type: type, Name: name, Fields: [], Objects: [], Tasks: [] };
  if (!tg) {
    type = "Added";
    name = str(other, "Name");
    newFlat = flattenPrim(other, flat);
  } else if (!other) {
    type = "Deleted";
    name = str(tg, "Name");
    oldFlat = flattenPrim(tg, flat);
  } else {
    if (!deepEqual(tg, other)) type = "Edited";
    name = str(other, "Name");
    oldFlat = flattenPrim(tg, flat);
    newFlat = flattenPrim(other, flat);
  }
  const a: Obj = tg ?? {};
  const b: Obj = other ?? {};

  // The *time.Duration fields, compared by hand when both sides exist.
  if (oldFlat && newFlat) {
    for (const key of GROUP_POINTER_DURATIONS) {
      oldFlat.set(key, isNil(a[key]) ? "" : fmtPrim(a[key]));
      newFlat.set(key, isNil(b[key]) ? "" : fmtPrim(b[key]));
    }
  }

  const fields = fieldDiffs(oldFlat, newFlat, false);
  const objects = collect([
    primitiveObjectSetDiff(a["Constraints"], b["Constraints"], ["str"], "Constraint", contextual),
    primitiveObjectSetDiff(a["Affinities"], b["Affinities"], ["str"], "Affinity", contextual),
    primitiveObjectDiff(a["RestartPolicy"], b["RestartPolicy"], null, "RestartPolicy", contextual),
    primitiveObjectDiff(a["ReschedulePolicy"], b["ReschedulePolicy"], null, "ReschedulePolicy", contextual),
    primitiveObjectDiff(a["EphemeralDisk"], b["EphemeralDisk"], null, "EphemeralDisk", contextual),
    primitiveObjectDiff(a["Consul"], b["Consul"], null, "Consul", contextual),
    primitiveObjectDiff(a["Update"], b["Update"], ["Stagger"], "Update", contextual),
    disconnectDiff(a["Disconnect"], b["Disconnect"], contextual),
    networkResourceDiffs(a["Networks"], b["Networks"], contextual),
    scalingDiff(a["Scaling"], b["Scaling"], contextual),
    serviceDiffs(a["Services"], b["Services"], contextual),
    volumeDiffs(a["Volumes"], b["Volumes"], contextual),
  ]);
  const tasks = taskDiffs(a["Tasks"], b["Tasks"], contextual);
  return { Type: type, Name: name, Fields: fields, Objects: objects, Tasks: tasks };
}

function disconnectDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  const fields = fieldDiffs(p ? flattenAll(p, false) : null, n ? flattenAll(n, false) : null, contextual);
  return { Type: type, Name: "Disconnect", Fields: fields, Objects: [] };
}

function scalingDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const d = structDiff("Scaling", prev, next, contextual, {
    flat: { filter: ["CreateIndex", "ModifyIndex", "ID", "Type", "Target[Job]", "Target[Group]", "Target[Namespace]"] },
    fieldsContextual: false,
    objects: (p, n) => [configDiff("Policy", p["Policy"], n["Policy"], false)],
    sortObjects: true,
  });
  if (d) sortFields(d.Fields);
  return d;
}

function volumeDiffs(oldMap: unknown, newMap: unknown, contextual: boolean): OD[] {
  if (deepEqual(oldMap, newMap)) return [];
  const o = obj(oldMap) ?? {};
  const n = obj(newMap) ?? {};
  const diffs: OD[] = [];
  for (const name of Object.keys(o).sort(compareBytewise)) {
    const d = volumeDiff(o[name], n[name], contextual);
    if (d) diffs.push(d);
  }
  for (const name of Object.keys(n).sort(compareBytewise)) {
    if (Object.prototype.hasOwnProperty.call(o, name)) continue;
    const d = volumeDiff(null, n[name], contextual);
    if (d) diffs.push(d);
  }
  return diffs;
}

function volumeDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Volume", prev, next, contextual, {
    objects: (p, n) => [
      structDiff("MountOptions", p["MountOptions"], n["MountOptions"], contextual, {
        objects: (mp, mn) => [stringSetDiff(mp["MountFlags"], mn["MountFlags"], "MountFlags", contextual)],
      }),
    ],
  });
}

// ---------------------------------------------------------------------------
// Networks, resources

/** NetworkResource and Port are omitempty in the canonical JSON; Go flattens their zero fields. */
const NETWORK_ZERO: Obj = { Mode: "", Device: "", CIDR: "", IP: "", Hostname: "", MBits: 0 };
const PORT_ZERO: Obj = { Label: "", Value: 0, To: 0, HostNetwork: "", IgnoreCollision: false };

function networkResourceDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const makeSet = (items: unknown): Map<string, Obj> => {
    const set = new Map<string, Obj>();
    for (const n of objList(items)) set.set(hashKey({ ...NETWORK_ZERO, ...n }), n);
    return set;
  };
  const oldSet = makeSet(oldList);
  const newSet = makeSet(newList);
  const diffs: OD[] = [];
  for (const [k, o] of oldSet) {
    if (newSet.has(k)) continue;
    const d = networkResourceDiff(o, null, contextual);
    if (d) diffs.push(d);
  }
  for (const [k, n] of newSet) {
    if (oldSet.has(k)) continue;
    const d = networkResourceDiff(null, n, contextual);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}

function networkResourceDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Network", prev, next, contextual, {
    flat: { filter: ["_struct", "Device", "CIDR", "IP", "MBits"], defaults: NETWORK_ZERO },
    objects: (p, n) => [
      portDiffs(p["ReservedPorts"], n["ReservedPorts"], false, contextual),
      portDiffs(p["DynamicPorts"], n["DynamicPorts"], true, contextual),
      dnsDiff(p["DNS"], n["DNS"], contextual),
      cniDiff(p["CNI"], n["CNI"], contextual),
    ],
  });
}

function portDiffs(oldList: unknown, newList: unknown, dynamic: boolean, contextual: boolean): OD[] {
  const filter = dynamic ? ["_struct", "Value", "IgnoreCollision"] : ["_struct"];
  const name = dynamic ? "Dynamic Port" : "Static Port";
  const oldPorts = new Map<string, Obj>();
  const newPorts = new Map<string, Obj>();
  for (const p of objList(oldList)) oldPorts.set(str(p, "Label"), p);
  for (const p of objList(newList)) newPorts.set(str(p, "Label"), p);
  const diffs: OD[] = [];
  for (const [label, p] of oldPorts) {
    const d = primitiveObjectDiff(p, newPorts.get(label) ?? null, filter, name, contextual, PORT_ZERO);
    if (d) diffs.push(d);
  }
  for (const [label, p] of newPorts) {
    if (oldPorts.has(label)) continue;
    const d = primitiveObjectDiff(null, p, filter, name, contextual, PORT_ZERO);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}

function dnsDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const flatten = (conf: Obj): Flat => {
    const m: Flat = new Map();
    for (const key of ["Servers", "Searches", "Options"]) {
      const values = strList(conf[key]);
      if (values.length > 0) m.set(key, values.join(","));
    }
    return m;
  };
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  return { Type: type, Name: "DNS", Fields: fieldDiffs(p ? flatten(p) : null, n ? flatten(n) : null, contextual), Objects: [] };
}

function cniDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const p = obj(obj(prev)?.["Args"]) ?? {};
  const n = obj(obj(next)?.["Args"]) ?? {};
  if (deepEqual(p, n)) return null;
  const fields = fieldDiffs(flattenAll(p, false), flattenAll(n, false), contextual);
  const type = typeFromFields(fields);
  return type ? { Type: type, Name: "CNIConfig", Fields: fields, Objects: [] } : null;
}

function resourcesDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Resources", prev, next, contextual, {
    objects: (p, n) => [
      networkResourceDiffs(p["Networks"], n["Networks"], contextual),
      keyedDiffs(p["Devices"], n["Devices"], (d) => str(d, "Name"), (o, nn) => structDiff("Device", o, nn, contextual)),
      numaDiff(p["NUMA"], n["NUMA"], contextual),
    ],
  });
}

function numaDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const p = obj(prev);
  const n = obj(next);
  if (!p || !n) {
    if (!p && !n) return null;
  } else if (str(p, "Affinity") === str(n, "Affinity") && deepEqual(strList(p["Devices"]), strList(n["Devices"]))) {
    return null;
  }
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  return { Type: type, Name: "NUMA", Fields: fieldDiffs(p ? flattenPrim(p) : null, n ? flattenPrim(n) : null, contextual), Objects: [] };
}

// ---------------------------------------------------------------------------
// Services and checks

function serviceDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Service", prev, next, contextual, {
    objects: (p, n) => [
      stringSetDiff(p["CanaryTags"], n["CanaryTags"], "CanaryTags", contextual),
      stringSetDiff(p["Tags"], n["Tags"], "Tags", contextual),
      keyedDiffs(p["Checks"], n["Checks"], (c) => str(c, "Name"), (o, nn) => serviceCheckDiff(o, nn, contextual)),
      connectDiff(p["Connect"], n["Connect"], contextual),
      idDiff(p["Identity"], n["Identity"], contextual),
    ],
  });
}

function serviceDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  if (o.length === 1 && n.length === 1) {
    const d = serviceDiff(o[0]!, n[0]!, contextual);
    return d ? [d] : [];
  }
  const newMatches = n.map(() => -1);
  const diffs: OD[] = [];
  o.forEach((service, oldIndex) => {
    const newIndex = findServiceMatch(service, oldIndex, n, newMatches);
    if (newIndex < 0) {
      const d = serviceDiff(service, null, contextual);
      if (d) diffs.push(d);
      return;
    }
    newMatches[newIndex] = oldIndex;
    const d = serviceDiff(service, n[newIndex]!, contextual);
    if (d) diffs.push(d);
  });
  newMatches.forEach((m, i) => {
    if (m !== -1) return;
    const d = serviceDiff(null, n[i]!, contextual);
    if (d) diffs.push(d);
  });
  return sortObjects(diffs);
}

/** Scores candidates by position (1), port label (2) and name (3); a match needs more than 2. */
function findServiceMatch(service: Obj, serviceIndex: number, services: Obj[], matches: number[]): number {
  const minScoreThreshold = 2;
  let highestScore = 0;
  let indexMatch = -1;
  services.forEach((s, i) => {
    if (matches[i]! >= 0) return;
    let score = 0;
    if (i === serviceIndex) score += 1;
    if (str(service, "PortLabel") === str(s, "PortLabel")) score += 2;
    if (str(service, "Name") === str(s, "Name")) score += 3;
    if (score > minScoreThreshold && score > highestScore) {
      highestScore = score;
      indexMatch = i;
    }
  });
  return indexMatch;
}

function serviceCheckDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Check", prev, next, contextual, {
    objects: (p, n) => [checkHeaderDiff(p["Header"], n["Header"], contextual), structDiff("CheckRestart", p["CheckRestart"], n["CheckRestart"], contextual)],
  });
}

function checkHeaderDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev);
  const n = obj(next);
  let type: DiffType;
  let oldFlat: Flat | null = null;
  let newFlat: Flat | null = null;
  if (!p || Object.keys(p).length === 0) {
    type = "Added";
    newFlat = flattenAll(n, false);
  } else if (!n || Object.keys(n).length === 0) {
    type = "Deleted";
    oldFlat = flattenAll(p, false);
  } else {
    type = "Edited";
    oldFlat = flattenAll(p, false);
    newFlat = flattenAll(n, false);
  }
  return { Type: type, Name: "Header", Fields: fieldDiffs(oldFlat, newFlat, contextual), Objects: [] };
}

/** WorkloadIdentity (task identity, alternate identities, service identity). */
function idDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Identity", prev, next, contextual, {
    objects: (p, n) => [stringSetDiff(p["Audience"], n["Audience"], "Audience", contextual)],
  });
}

// Consul Connect (kept as the client sent it, so shapes are those of api.*).

function connectDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("ConsulConnect", prev, next, contextual, {
    objects: (p, n) => [
      structDiff("SidecarService", p["SidecarService"], n["SidecarService"], contextual, {
        objects: (sp, sn) => [consulProxyDiff(sp["Proxy"], sn["Proxy"], contextual)],
      }),
      structDiff("SidecarTask", p["SidecarTask"], n["SidecarTask"], contextual, {
        flat: { skip: ["KillTimeout", "ShutdownDelay"] },
        fieldsContextual: false,
        objects: (tp, tn) => [
          configDiff("Config", tp["Config"], tn["Config"], contextual),
          resourcesDiff(tp["Resources"], tn["Resources"], contextual),
          primitiveObjectDiff(tp["LogConfig"], tn["LogConfig"], null, "LogConfig", contextual),
        ],
      }),
      gatewayDiff(p["Gateway"], n["Gateway"], contextual),
    ],
  });
}

function consulProxyDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("ConsulProxy", prev, next, contextual, {
    objects: (p, n) => [
      keyedDiffs(
        p["Upstreams"],
        n["Upstreams"],
        (u) => `${str(u, "Datacenter")}/${str(u, "DestinationName")}`,
        (o, nn) =>
          structDiff("ConsulUpstreams", o, nn, contextual, {
            objects: (up, un) => [primitiveObjectDiff(up["MeshGateway"], un["MeshGateway"], null, "MeshGateway", contextual)],
          }),
      ),
      exposeDiff(p["Expose"] ?? p["ExposeConfig"], n["Expose"] ?? n["ExposeConfig"], contextual),
      transparentProxyDiff(p["TransparentProxy"], n["TransparentProxy"], contextual),
      configDiff("Config", p["Config"], n["Config"], contextual),
    ],
  });
}

function exposeDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const paths = (e: unknown): unknown => obj(e)?.["Paths"] ?? obj(e)?.["Path"] ?? null;
  const empty = (e: unknown): boolean => !isObj(e) || list(paths(e)).length === 0;
  const type: DiffType = empty(prev) ? "Added" : empty(next) ? "Deleted" : "Edited";
  return { Type: type, Name: "Expose", Fields: [], Objects: primitiveObjectSetDiff(paths(prev), paths(next), null, "Paths", contextual) };
}

/** consulTProxyDiff; like Nomad it yields an empty "None" diff when both sides are equal. */
function transparentProxyDiff(prev: unknown, next: unknown, contextual: boolean): OD {
  if (deepEqual(prev, next)) return { Type: "None", Name: "TransparentProxy", Fields: [], Objects: [] };
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  const fields = fieldDiffs(p ? flattenPrim(p) : null, n ? flattenPrim(n) : null, contextual);
  const objects: OD[] = [];
  for (const key of ["ExcludeInboundPorts", "ExcludeOutboundPorts", "ExcludeOutboundCIDRs", "ExcludeUIDs"]) {
    const d = stringSetDiff(p?.[key], n?.[key], key, contextual);
    if (d && d.Type !== "None") objects.push(d);
  }
  return { Type: type, Name: "TransparentProxy", Fields: fields, Objects: objects };
}

function gatewayDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Gateway", prev, next, contextual, {
    objects: (p, n) => [
      structDiff("Proxy", p["Proxy"], n["Proxy"], contextual, {
        flat: { skip: ["ConnectTimeout"] },
        extraFields: (pp, pn, oldFlat, newFlat) => {
          if (!oldFlat || !newFlat) return;
          oldFlat.set("ConnectTimeout", typeof pp["ConnectTimeout"] === "number" ? formatGoDuration(BigInt(pp["ConnectTimeout"])) : "");
          newFlat.set("ConnectTimeout", typeof pn["ConnectTimeout"] === "number" ? formatGoDuration(BigInt(pn["ConnectTimeout"])) : "");
        },
        objects: (pp, pn) => [bindAddressesDiff(pp["EnvoyGatewayBindAddresses"], pn["EnvoyGatewayBindAddresses"], contextual), configDiff("Config", pp["Config"], pn["Config"], contextual)],
      }),
      structDiff("Ingress", p["Ingress"], n["Ingress"], contextual, {
        objects: (ip, inn) => [
          gatewayTLSDiff(ip["TLS"], inn["TLS"], contextual),
          keyedDiffs(
            ip["Listeners"],
            inn["Listeners"],
            (l) => `${str(l, "Protocol")}/${str(l, "Port") || "0"}`,
            (lo, ln) =>
              structDiff("Listener", lo, ln, contextual, {
                objects: (lp, lnn) => [keyedDiffs(lp["Services"], lnn["Services"], (s) => str(s, "Name"), (so, sn) => ingressServiceDiff(so, sn, contextual))],
              }),
          ),
        ],
      }),
      structDiff("Terminating", p["Terminating"], n["Terminating"], contextual, {
        objects: (tp, tn) => [keyedDiffs(tp["Services"], tn["Services"], (s) => str(s, "Name"), (so, sn) => structDiff("Service", so, sn, contextual))],
      }),
      deepEqual(p["Mesh"], n["Mesh"]) ? null : { Type: isNil(p["Mesh"]) ? "Added" : isNil(n["Mesh"]) ? "Deleted" : "Edited", Name: "Mesh", Fields: [], Objects: [] },
    ],
  });
}

function gatewayTLSDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("TLS", prev, next, contextual, {
    objects: (p, n) => [stringSetDiff(p["CipherSuites"], n["CipherSuites"], "CipherSuites", contextual), primitiveObjectDiff(p["SDS"], n["SDS"], null, "SDS", contextual)],
  });
}

function ingressServiceDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  const pointers = ["MaxConnections", "MaxPendingRequests", "MaxConcurrentRequests"];
  return structDiff("ConsulIngressService", prev, next, contextual, {
    flat: { skip: pointers },
    extraFields: (p, n, oldFlat, newFlat) => {
      for (const key of pointers) {
        if (oldFlat && !isNil(p[key])) oldFlat.set(key, fmtPrim(p[key]));
        if (newFlat && !isNil(n[key])) newFlat.set(key, fmtPrim(n[key]));
      }
    },
    objects: (p, n) => [
      stringSetDiff(p["Hosts"], n["Hosts"], "Hosts", contextual),
      gatewayTLSDiff(p["TLS"], n["TLS"], contextual),
      headerModifiersDiff("RequestHeaders", p["RequestHeaders"], n["RequestHeaders"], contextual),
      headerModifiersDiff("ResponseHeaders", p["ResponseHeaders"], n["ResponseHeaders"], contextual),
    ],
  });
}

function headerModifiersDiff(name: string, prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff(name, prev, next, contextual, {
    objects: (p, n) => [stringSetDiff(p["Remove"], n["Remove"], "Remove", contextual)],
  });
}

function bindAddressesDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev) ?? {};
  const n = obj(next) ?? {};
  const type: DiffType = Object.keys(p).length === 0 ? "Added" : Object.keys(n).length === 0 ? "Deleted" : "Edited";
  const join = (m: Obj): Flat => {
    const out: Flat = new Map();
    for (const [k, v] of Object.entries(m)) {
      const host = str(obj(v), "Address");
      const port = str(obj(v), "Port") || "0";
      out.set(k, host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);
    }
    return out;
  };
  return { Type: type, Name: "EnvoyGatewayBindAddresses", Fields: fieldDiffs(join(p), join(n), contextual), Objects: [] };
}

// ---------------------------------------------------------------------------
// Tasks

function taskDiffs(oldList: unknown, newList: unknown, contextual: boolean): TD[] {
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
    keyedDiffs(a["Identities"], b["Identities"], (i) => str(i, "Name"), (o, n) => idDiff(o, n, contextual)),
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

function templateDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Template", prev, next, contextual, {
    flat: { skip: ["Uid", "Gid"] },
    extraFields: (p, n, oldFlat, newFlat) => {
      for (const key of ["Uid", "Gid"]) {
        if (oldFlat && !isNil(p[key])) oldFlat.set(key, fmtPrim(p[key]));
        if (newFlat && !isNil(n[key])) newFlat.set(key, fmtPrim(n[key]));
      }
    },
    objects: (p, n) => [
      waitConfigDiff(p["Wait"], n["Wait"], contextual),
      structDiff("ChangeScript", p["ChangeScript"], n["ChangeScript"], contextual, {
        objects: (cp, cn) => [stringSetDiff(cp["Args"], cn["Args"], "Args", contextual)],
      }),
    ],
  });
}

/** waitConfigDiff; Nomad names this object "Template". */
function waitConfigDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  return { Type: type, Name: "Template", Fields: fieldDiffs(p ? flattenAll(p, false) : null, n ? flattenAll(n, false) : null, contextual), Objects: [] };
}

function templateDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const o = objList(oldList);
  const n = objList(newList);
  if (o.length === 1 && n.length === 1) {
    const d = templateDiff(o[0]!, n[0]!, contextual);
    return d ? [d] : [];
  }
  const newMatches = n.map(() => -1);
  const diffs: OD[] = [];
  o.forEach((template, oldIndex) => {
    const newIndex = n.findIndex((candidate, i) => newMatches[i]! < 0 && str(candidate, "DestPath") === str(template, "DestPath"));
    if (newIndex < 0) {
      const d = templateDiff(template, null, contextual);
      if (d) diffs.push(d);
      return;
    }
    newMatches[newIndex] = oldIndex;
    const d = templateDiff(template, n[newIndex]!, contextual);
    if (d) diffs.push(d);
  });
  newMatches.forEach((m, i) => {
    if (m !== -1) return;
    const d = templateDiff(null, n[i]!, contextual);
    if (d) diffs.push(d);
  });
  return sortObjects(diffs);
}

// ---------------------------------------------------------------------------
// Output

function outFields(fields: FD[]): FieldDiff[] | null {
  return fields.length === 0 ? null : fields.map((f) => ({ Type: f.Type, Name: f.Name, Old: f.Old, New: f.New, Annotations: f.Annotations ? [...f.Annotations] : null }));
}

function outObjects(objects: OD[]): ObjectDiff[] | null {
  return objects.length === 0 ? null : objects.map((o) => ({ Type: o.Type, Name: o.Name, Fields: outFields(o.Fields), Objects: outObjects(o.Objects) }));
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
            Tasks: g.Tasks.length === 0 ? null : g.Tasks.map((t) => ({ Type: t.Type, Name: t.Name, Fields: outFields(t.Fields), Objects: outObjects(t.Objects), Annotations: null })),
            Updates: null,
          })),
  };
  return out as unknown as Record<string, unknown>;
}

// ---------------------------------------------------------------------------
// scheduler/annotate.go

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
    if (task.Type === "Added") return add(ANNOTATION_FORCES_CREATE);
    if (task.Type === "Deleted") return add(ANNOTATION_FORCES_DESTROY);
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
