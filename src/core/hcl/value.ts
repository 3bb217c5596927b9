/**
 * HCL's values as plain JSON-like data (null, boolean, number, string, arrays
 * for lists/tuples/sets, plain objects for maps and objects) and cty's rules
 * for reading one as a primitive: what the evaluator, the type system and
 * the functions all share, so none of them imports another for it.
 */

export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

export function isObject(v: Value | undefined): v is { [key: string]: Value } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** cty's friendly name of a value's type, as used in conversion messages. */
export function typeName(v: Value): string {
  if (v === null) return "null";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return "number";
  if (typeof v === "boolean") return "bool";
  if (Array.isArray(v)) return "tuple";
  return "object";
}

/** cty's number-to-string conversion: integers as digits, others as the shortest exact decimal. */
export function numberToString(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  return String(n);
}

/** Converts a primitive to a string as cty's `convert` does, or undefined when it cannot. */
export function asString(v: Value): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number") return numberToString(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  return undefined;
}

export function asNumber(v: Value): number | undefined {
  if (typeof v === "number") return v;
  if (typeof v === "string" && /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()) && v.trim() === v) return Number(v);
  return undefined;
}

export function asBool(v: Value): boolean | undefined {
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  return undefined;
}

/** Elements of a collection in cty's iteration order (object/map keys sorted). */
export function entries(v: Value): [Value, Value][] | undefined {
  if (Array.isArray(v)) return v.map((x, i) => [i, x]);
  if (isObject(v)) {
    return Object.keys(v)
      .sort()
      .map((k) => [k, v[k] as Value]);
  }
  return undefined;
}
