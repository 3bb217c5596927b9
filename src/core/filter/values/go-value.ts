/**
 * Values: JSON data seen through Go's reflect kinds. A value of the datum is classified by where it sits
 * (the root, a struct field and which one, a map or slice element, below a free-form `Config` map) into
 * the kind go-bexpr would see (see "Datum model" in ../index.ts, and the field tables in fields.ts). The
 * datum is read as JSON.stringify renders it.
 */
import { BYTES_FIELDS, FREEFORM_MAP_FIELDS, STRING_FIELDS_BY_OWNER, MAP_FIELDS, STRUCT_POINTER_FIELDS, STRUCT_SLICE_FIELDS, TIME_FIELDS, UNSIGNED_FIELDS } from "./fields.js";

export type Kind = "string" | "bool" | "int" | "uint" | "float" | "nil" | "slice" | "map" | "struct";

export interface GoValue {
  kind: Kind;
  v: unknown;
  /** a nil pointer to a struct (see STRUCT_POINTER_FIELDS), not a nil slice or map */
  nilStruct?: boolean;
  /** a []byte field (see BYTES_FIELDS): `v` holds the bytes as numbers */
  bytes?: boolean;
  /** a slice of structs or struct pointers (see STRUCT_SLICE_FIELDS), even when empty or nil */
  structElems?: boolean;
  /** the struct field that holds it, for its Go type name */
  field?: string;
  /** below a free-form map (`Config`): nested objects are maps */
  free: boolean;
}

/** Where a value sits; a struct field also names the field holding its struct (`owner`), when known. */
type Parent = { of: "root" } | { of: "struct"; key: string; owner?: string } | { of: "map" | "slice"; free: boolean };

export function classify(value: unknown, parent: Parent): GoValue {
  const classified = classifyValue(value, parent);
  if (parent.of === "struct") classified.field = parent.key;
  return classified;
}

function classifyValue(value: unknown, parent: Parent): GoValue {
  const raw = jsonView(value);
  const free = parent.of === "map" || parent.of === "slice" ? parent.free : false;
  const mapField = parent.of === "struct" && MAP_FIELDS.has(parent.key);
  const freeField = parent.of === "struct" && FREEFORM_MAP_FIELDS.has(parent.key);
  const structField = parent.of === "struct" ? parent.key : undefined;
  // a field a table misnames in one struct (ParameterizedJob.Payload is a string, a job's Payload []byte)
  const plainString = parent.of === "struct" && parent.owner !== undefined && STRING_FIELDS_BY_OWNER.has(`${parent.owner}.${parent.key}`);
  // a time.Time is a struct with no exported fields, whatever JSON shows (a string, or null for the zero time)
  if (structField !== undefined && TIME_FIELDS.has(structField) && (raw === null || raw === undefined || typeof raw === "string")) return { kind: "struct", v: {}, free: false };
  if (raw === null || raw === undefined) {
    if (mapField) return { kind: "map", v: {}, free: freeField };
    // a nil slice of structs and a nil []byte keep their element type
    if (structField !== undefined && STRUCT_SLICE_FIELDS.has(structField)) return { kind: "slice", v: [], free: false, structElems: true };
    if (structField !== undefined && BYTES_FIELDS.has(structField) && !plainString) return { kind: "slice", v: [], free: false, bytes: true };
    // A null map value or slice element is a nil pointer (or a nil interface{}) in every map and slice
    // Nomad filters on (`map[string]*structs.TaskLifecycleConfig`, a task Config's `map[string]interface{}`),
    // which go-bexpr sees as the invalid value, as it does a nil struct pointer.
    if (parent.of === "map" || parent.of === "slice") return { kind: "nil", v: null, free, nilStruct: true };
    return parent.of === "struct" && STRUCT_POINTER_FIELDS.has(parent.key) ? { kind: "nil", v: null, free, nilStruct: true } : { kind: "nil", v: null, free };
  }
  switch (typeof raw) {
    case "string":
      if (parent.of === "struct" && BYTES_FIELDS.has(parent.key) && !plainString) return { kind: "slice", v: [...Buffer.from(raw, "base64")], free: false, bytes: true };
      return { kind: "string", v: raw, free };
    case "boolean":
      return { kind: "bool", v: raw, free };
    case "number":
      // Numbers in a free-form map (a task's Config) were decoded by Nomad as float64.
      if (free || !Number.isInteger(raw)) return { kind: "float", v: raw, free };
      return { kind: unsigned(parent) ? "uint" : "int", v: raw, free };
    case "bigint":
      return { kind: unsigned(parent) ? "uint" : "int", v: raw, free };
    case "object":
      if (Array.isArray(raw)) {
        // an empty one: JSON has no elements to tell its type by (elements that are objects say it themselves)
        if (raw.length === 0 && structField !== undefined && STRUCT_SLICE_FIELDS.has(structField) && !free) return { kind: "slice", v: raw, free: false, structElems: true };
        return { kind: "slice", v: raw, free: free || freeField };
      }
      if (mapField || free) return { kind: "map", v: raw, free: free || freeField };
      return { kind: "struct", v: raw, free: false };
    default:
      return { kind: "nil", v: null, free };
  }
}

function unsigned(parent: Parent): boolean {
  return parent.of === "struct" && UNSIGNED_FIELDS.has(parent.key);
}

export function rootValue(datum: unknown): GoValue {
  return classify(datum, { of: "root" });
}

/** What JSON.stringify would render: `toJSON()` results (e.g. of a Date) stand for the object. */
function jsonView(value: unknown): unknown {
  if (typeof value === "object" && value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function") {
    return (value as { toJSON: () => unknown }).toJSON();
  }
  return value;
}

/** A key of a rendered object: present, and not `undefined` (JSON.stringify drops those). */
export function hasOwn(o: unknown, k: string): boolean {
  return typeof o === "object" && o !== null && Object.hasOwn(o, k) && (o as Record<string, unknown>)[k] !== undefined;
}

export function ownKeys(o: unknown): string[] {
  return Object.keys(o as object).filter((k) => hasOwn(o, k));
}
