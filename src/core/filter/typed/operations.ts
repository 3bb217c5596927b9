/**
 * What go-bexpr v0.1.2 (field_config.go) allows on a field of each kind, and how it coerces a value
 * compared with it: primitives take `==`/`!=` (strings also `in`, `not in`, `matches`, `not matches`,
 * where `in` is a substring test); slices take `in`/`not in` (of primitives only) and `is empty`/`is not
 * empty`; maps take `is empty`, `is not empty`, `in`, `not in` (a key test); structs take nothing. Also
 * go-bexpr's names for the operators (`MatchOperator.String()`), which its errors print.
 */
import type { MatchOp } from "../ast.js";
import { isPrimitive, type FieldSchema, type PrimitiveKind } from "./schema.js";

export const OPERATOR_NAMES: Readonly<Record<MatchOp, string>> = {
  eq: "Equal",
  ne: "Not Equal",
  in: "In",
  notin: "Not In",
  empty: "Is Empty",
  notempty: "Is Not Empty",
  matches: "Matches",
  notmatches: "Not Matches",
};

export function supportedOperations(s: FieldSchema): readonly MatchOp[] {
  if (isPrimitive(s)) return s.kind === "string" ? ["eq", "ne", "in", "notin", "matches", "notmatches"] : ["eq", "ne"];
  switch (s.kind) {
    case "slice":
      return isPrimitive(s.elements) ? ["in", "notin", "empty", "notempty"] : ["empty", "notempty"];
    case "map":
      return ["empty", "notempty", "in", "notin"];
    default:
      return [];
  }
}

/** The kind a value compared with the field is coerced to (its CoerceFn), or null when it has none. */
export function coercionKind(s: FieldSchema): PrimitiveKind | null {
  if (isPrimitive(s)) return s.kind;
  if (s.kind === "slice" && isPrimitive(s.elements)) return s.elements.kind;
  if (s.kind === "map") return "string";
  return null;
}
