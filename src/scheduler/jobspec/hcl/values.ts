/**
 * Converting evaluated HCL values into the Go field types of the api structs,
 * the way gohcl (cty conversion, then gocty) and jobspec2's duration decoder
 * do, with their error texts.
 */
import type { Span } from "../../../core/hcl/ast.js";
import { asString, isObject, numberToString, type Value } from "../../../core/hcl/index.js";
import { DurationError, parseGoDuration } from "../../../core/durations.js";

export type Converted = { ok: true; value: unknown } | { ok: false; summary: string; detail: string };

const unsuitable = (message: string): Converted => ({ ok: false, summary: "Unsuitable value type", detail: `Unsuitable value: ${message}` });

function toInt(value: Value, range: string): Converted {
  let n: number;
  if (typeof value === "number") n = value;
  else if (typeof value === "string") {
    const parsed = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value) ? Number(value) : Number.NaN;
    if (Number.isNaN(parsed)) return unsuitable("a number is required");
    n = parsed;
  } else return unsuitable("number required");
  if (!Number.isInteger(n)) return unsuitable(`value must be a whole number, between ${range}`);
  return { ok: true, value: n };
}

const INT_RANGE = "-9223372036854775808 and 9223372036854775807";

/** Converts `value` (non-null) to the Go type named by an api-structs type (without `?`). */
export function convertToGo(value: Value, type: string, field: string): Converted {
  switch (type) {
    case "str": {
      const s = asString(value);
      return s === undefined ? unsuitable("string required") : { ok: true, value: s };
    }
    case "int":
      return toInt(value, field === "Weight" ? "-128 and 127" : field === "Percent" ? "0 and 255" : INT_RANGE);
    case "bool": {
      if (typeof value === "boolean") return { ok: true, value };
      if (value === "true" || value === "false") return { ok: true, value: value === "true" };
      return unsuitable(typeof value === "string" ? "a bool is required" : "bool required");
    }
    case "dur":
      return convertDuration(value);
    case "strs": {
      if (!Array.isArray(value)) return unsuitable("list of string required");
      const out: string[] = [];
      for (const [i, v] of value.entries()) {
        const s = v === null ? undefined : asString(v);
        if (s === undefined) return unsuitable(`element ${i}: string required`);
        out.push(s);
      }
      return { ok: true, value: out };
    }
    case "ints": {
      if (!Array.isArray(value)) return unsuitable("list of number required");
      const out: number[] = [];
      for (const v of value) {
        const c = toInt(v, INT_RANGE);
        if (!c.ok) return c;
        out.push(c.value as number);
      }
      return { ok: true, value: out };
    }
    case "strmap":
      return toStringMap(value);
    default:
      return unsuitable(`${type} required`);
  }
}

/** jobspec2's duration decoder: Go duration strings, or numbers taken as nanoseconds. */
export function convertDuration(value: Value): Converted {
  if (value === null) return { ok: false, summary: "Unsuitable value", detail: "Unsuitable duration value: nil" };
  if (typeof value === "string") {
    try {
      return { ok: true, value: Number(parseGoDuration(value)) };
    } catch (e) {
      if (!(e instanceof DurationError)) throw e;
      return { ok: false, summary: "Unsuitable value type", detail: `Unsuitable duration value: ${e.message}` };
    }
  }
  if (typeof value !== "number") return unsuitable(`expected a string but found ${Array.isArray(value) ? "tuple" : isObject(value) ? "object" : "bool"}`);
  if (!Number.isInteger(value)) return unsuitable(`value must be a whole number, between ${INT_RANGE}`);
  return { ok: true, value };
}

/** A `map[string]string` from an object value (meta, env in attribute form). */
export function toStringMap(value: Value): Converted {
  if (!isObject(value)) return unsuitable("map of string required");
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    const s = v === null ? undefined : asString(v);
    if (s === undefined) return unsuitable(`element ${JSON.stringify(k)}: string required`);
    out[k] = s;
  }
  return { ok: true, value: out };
}

export { numberToString };
export type { Span };
