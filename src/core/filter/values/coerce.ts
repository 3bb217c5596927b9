/**
 * Coercion (go-bexpr coerce.go and getMatchExprValue): a match value reaches the evaluator as raw text
 * and is converted to the kind of the field it is compared with; primitive equality compares the
 * converted value with the field's, and a JSON array's element kind says which Go slice it stands for.
 */
import { goParseBool, goParseFloat, goParseInt, goParseUint, type Coerced } from "../../go/strconv.js";
import type { GoValue, Kind } from "./go-value.js";

export function isPrimitive(k: Kind): boolean {
  return k === "string" || k === "bool" || k === "int" || k === "uint" || k === "float";
}

/** getMatchExprValue: the raw value coerced to the kind of the field */
export function coerce(raw: string, kind: Kind): Coerced {
  switch (kind) {
    case "bool":
      return goParseBool(raw);
    case "int":
      return goParseInt(raw);
    case "uint":
      return goParseUint(raw);
    case "float":
      return goParseFloat(raw);
    default:
      return { ok: true, v: raw };
  }
}

export function primitiveEqual(matchValue: unknown, value: GoValue): boolean {
  switch (value.kind) {
    case "int":
    case "uint":
      return (matchValue as bigint) === BigInt(value.v as number | bigint);
    case "float":
      return (matchValue as number) === Number(value.v);
    default:
      return matchValue === value.v;
  }
}

/** The element kind of a JSON array that stands for a typed Go slice, or null for a mixed ([]interface{}) one. */
export function elementKind(items: GoValue[]): Kind | null {
  const kinds = new Set(items.filter((g) => g.kind !== "nil").map((g) => g.kind));
  if (kinds.size === 2 && kinds.has("int") && kinds.has("float")) return "float";
  return kinds.size === 1 ? [...kinds][0]! : null;
}
