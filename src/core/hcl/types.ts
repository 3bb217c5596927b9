/**
 * HCL type constraints (`string`, `list(number)`, `object({a = string})`…)
 * read from their expression syntax, and value conversion to a constraint
 * with cty's error wording. Values are plain JSON-like data, so lists, sets
 * and tuples are all arrays and maps and objects are all plain objects.
 */
import type { Expr, Span } from "./ast.js";
import { asBool, asNumber, asString, isObject, numberToString, type Value } from "./value.js";

export type HclType =
  | { readonly k: "string" | "number" | "bool" | "any" }
  | { readonly k: "list" | "set" | "map"; readonly elem: HclType }
  | { readonly k: "object"; readonly attrs: Readonly<Record<string, HclType>> }
  | { readonly k: "tuple"; readonly elems: readonly HclType[] };

/** An `Invalid type specification` diagnostic's detail and where hcl points it. */
export interface TypeSpecError {
  readonly detail: string;
  readonly span: Span;
}

export const isTypeSpecError = (t: HclType | TypeSpecError): t is TypeSpecError => "detail" in t;

/**
 * Reads a type expression as hcl's ext/typeexpr does: `exact` is
 * `typeexpr.Type` (what jobspec2 reads a variable's `type` with: no `any`,
 * no `optional`), otherwise `TypeConstraint` (`convert`'s second argument).
 * An error carries the range hcl reports it at (the keyword, the call's name
 * or the offending part).
 */
export function typeFromExpr(expr: Expr, exact = false): HclType | TypeSpecError {
  const fail = (detail: string, span: Span = expr): TypeSpecError => ({ detail, span: { start: span.start, end: span.end } });
  if (expr.k === "traversal" && expr.steps.length === 0) {
    if (expr.root === "any" && exact) return fail('The keyword "any" cannot be used in this type specification: an exact type is required.');
    if (expr.root === "string" || expr.root === "number" || expr.root === "bool" || expr.root === "any") return { k: expr.root };
    if (expr.root === "list" || expr.root === "set" || expr.root === "map") {
      return fail(`The ${expr.root} type constructor requires one argument specifying the element type.`);
    }
    return fail(`The keyword "${expr.root}" is not a valid type specification.`);
  }
  if (expr.k === "call") {
    const [arg] = expr.args;
    if (expr.name === "list" || expr.name === "set" || expr.name === "map") {
      if (expr.args.length !== 1 || !arg) return fail(`The ${expr.name} type constructor requires one argument specifying the element type.`);
      return withElem(expr.name, typeFromExpr(arg, exact));
    }
    if (expr.name === "object") {
      if (expr.args.length !== 1 || arg?.k !== "object") return fail("The object type constructor requires one argument specifying the attribute types as a map.");
      const attrs: Record<string, HclType> = {};
      for (const item of arg.items) {
        const key = item.key.k === "literal" ? String(item.key.value) : undefined;
        if (key === undefined) return fail("Object constructor map keys must be attribute names.", item.key);
        if (exact && item.value.k === "call" && item.value.name === "optional") {
          return fail("Optional attribute modifier is only for type constraints, not for exact types.", item.value.nameSpan);
        }
        const t = typeFromExpr(item.value, exact);
        if (isTypeSpecError(t)) return t;
        attrs[key] = t;
      }
      return { k: "object", attrs };
    }
    if (expr.name === "tuple") {
      if (expr.args.length !== 1 || arg?.k !== "tuple") return fail("The tuple type constructor requires one argument specifying the element types as a list.");
      const elems: HclType[] = [];
      for (const item of arg.items) {
        const t = typeFromExpr(item, exact);
        if (isTypeSpecError(t)) return t;
        elems.push(t);
      }
      return { k: "tuple", elems };
    }
    return fail(`Keyword "${expr.name}" is not a valid type constructor.`);
  }
  return fail("A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).");
}

function withElem(k: "list" | "set" | "map", elem: HclType | TypeSpecError): HclType | TypeSpecError {
  return isTypeSpecError(elem) ? elem : { k, elem };
}

/** cty's friendly name of a type constraint (`list of string`, `map of number`). */
export function friendlyTypeName(t: HclType): string {
  switch (t.k) {
    case "list":
    case "set":
    case "map":
      return `${t.k} of ${friendlyTypeName(t.elem)}`;
    case "object":
      return "object";
    case "tuple":
      return "tuple";
    case "any":
      return "any";
    default:
      return t.k;
  }
}

export class ConversionError extends Error {}

/** Converts a value to a type constraint as cty's `convert.Convert` does, or throws its message. */
export function convertValue(value: Value, t: HclType, path = ""): Value {
  if (value === null || t.k === "any") return value;
  const at = (msg: string): ConversionError => new ConversionError(path ? `${path}: ${msg}` : msg);
  switch (t.k) {
    case "string": {
      const s = asString(value);
      if (s === undefined) throw at("string required");
      return s;
    }
    case "number": {
      if (typeof value === "string") {
        const n = asNumber(value);
        if (n === undefined) throw at("a number is required");
        return n;
      }
      if (typeof value !== "number") throw at("number required");
      return value;
    }
    case "bool": {
      if (typeof value === "string") {
        const b = asBool(value);
        if (b === undefined) throw at("a bool is required");
        return b;
      }
      if (typeof value !== "boolean") throw at("bool required");
      return value;
    }
    case "list":
    case "set": {
      if (!Array.isArray(value)) throw at(`${friendlyTypeName(t)} required`);
      const out = value.map((v, i) => convertValue(v, t.elem, `element ${i}`));
      if (t.k === "set") return ctySetOrder(out.filter((v, i) => out.findIndex((o) => JSON.stringify(o) === JSON.stringify(v)) === i));
      return out;
    }
    case "map": {
      if (!isObject(value)) throw at(`${friendlyTypeName(t)} required`);
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convertValue(v, t.elem, `element ${JSON.stringify(k)}`)]));
    }
    case "object": {
      if (!isObject(value)) throw at("object required");
      const out: Record<string, Value> = {};
      for (const [name, attrType] of Object.entries(t.attrs)) {
        if (!Object.hasOwn(value, name)) throw at(`attribute ${JSON.stringify(name)} is required`);
        out[name] = convertValue(value[name] as Value, attrType, `attribute ${JSON.stringify(name)}`);
      }
      return out;
    }
    case "tuple": {
      if (!Array.isArray(value)) throw at("tuple required");
      if (value.length !== t.elems.length) throw at(`tuple required with exactly ${t.elems.length} elements`);
      return value.map((v, i) => convertValue(v, t.elems[i] as HclType, `element ${i}`));
    }
  }
}

export { numberToString };

/**
 * A cty set of strings or of numbers is iterated in order (strings by their
 * bytes, numbers by value), whatever order its elements came in; other sets
 * keep the order they were built in here (cty orders them by hash).
 */
export function ctySetOrder(values: Value[]): Value[] {
  if (values.every((v) => typeof v === "number")) return [...values].sort((x, y) => (x as number) - (y as number));
  if (values.every((v) => typeof v === "string")) return [...values].sort((x, y) => Buffer.compare(Buffer.from(x as string), Buffer.from(y as string)));
  return values;
}
