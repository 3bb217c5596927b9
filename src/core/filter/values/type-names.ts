/**
 * Go's names for a value's kind and type, as go-bexpr prints them in error messages (`Cannot perform
 * in/contains operations on type int64 …`, `Value of type []*structs.TaskGroup is not convertible to
 * []byte`): the known Go type of a common field where its shape agrees, else an approximation from the
 * JSON.
 */
import { GO_TYPE_NAMES, INT64_FIELDS } from "./fields.js";
import type { GoValue, Kind } from "./go-value.js";

/** reflect.Kind's name for the value (an int64 field is int64, a uint64 one uint64). */
export function kindName(k: Kind, field?: string): string {
  if (k === "int" && field !== undefined && INT64_FIELDS.has(field)) return "int64";
  return k === "nil" ? "invalid" : k === "float" ? "float64" : k === "uint" ? "uint64" : k;
}

export function typeName(g: GoValue): string {
  const known = g.field !== undefined ? GO_TYPE_NAMES[g.field] : undefined;
  // Only where the shape agrees (a field name may mean a slice in one struct and a map in another).
  if (known !== undefined && (known.startsWith("[]") ? g.kind === "slice" : known.startsWith("map") ? g.kind === "map" : g.kind === "struct")) return known;
  if (g.kind === "int" && g.field !== undefined && INT64_FIELDS.has(g.field)) return "int64";
  switch (g.kind) {
    case "nil":
      return "<nil>";
    case "float":
      return "float64";
    case "uint":
      return "uint64";
    case "slice":
      return g.bytes ? "[]uint8" : "[]interface {}";
    case "map":
      return "map[string]interface {}";
    default:
      return g.kind;
  }
}
