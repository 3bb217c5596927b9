/**
 * Value encoders of the HCL function library that must match go-cty's
 * output byte for byte: `jsonencode` (cty/json's marshaller).
 */
import { FunctionError } from "./evaluate.js";
import { isObject, numberToString, type Value } from "./value.js";

/** Go's encoding/json escapes these even in a plain string (its HTML-safe default). */
const GO_HTML_ESCAPES: Readonly<Record<string, string>> = { "<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029" };

/** A string as Go's `json.Marshal` writes it. */
export function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => GO_HTML_ESCAPES[c] ?? c);
}

/** A number as big.Float's `Text('f', -1)` writes it: plain decimal digits, never an exponent. */
export function plainDecimal(n: number): string {
  const text = numberToString(n);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!match) return text;
  const [, sign = "", whole = "", fraction = "", exponent = "0"] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * A number as big.Float's `Text('g', -1)` writes it (cty's `%v`): the
 * shortest digits, in exponent form (`1.234567e+06`, `1e-05`) when the
 * decimal exponent is below -4 or at least 6, else plain.
 */
export function shortestG(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? "+Inf" : "-Inf";
  if (n === 0) return "0";
  const [mantissa = "0", exponentText = "0"] = n.toExponential().split("e");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  return plainDecimal(n);
}

/** Go's `sort.Strings` order: by UTF-8 bytes, which differs from UTF-16 order above U+FFFF. */
export function byUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

/**
 * `jsonencode`: cty's JSON marshaller, which writes object attributes and map
 * keys in sorted order (it iterates them sorted), numbers in plain decimal,
 * and strings through Go's encoder (so `<`, `>` and `&` come out escaped).
 */
export function ctyJsonEncode(value: Value): string {
  if (value === null) return "null";
  if (typeof value === "string") return goJsonString(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new FunctionError("cannot serialize infinity as JSON");
    return plainDecimal(value);
  }
  if (Array.isArray(value)) return `[${value.map(ctyJsonEncode).join(",")}]`;
  if (isObject(value)) {
    const keys = Object.keys(value).sort(byUtf8);
    return `{${keys.map((k) => `${goJsonString(k)}:${ctyJsonEncode(value[k] ?? null)}`).join(",")}}`;
  }
  return "null";
}
