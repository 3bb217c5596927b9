/**
 * Match expressions (go-bexpr evaluate.go, v0.1.13): `==`/`!=`, `in`/`contains`, `is empty` and
 * `matches`, each with go-bexpr's rules for which kinds it accepts and its error texts. Where go-bexpr
 * panics this answers a FilterEvaluationError instead (see the module comment in ../index.ts).
 */
import { notPresentDisposition, selectorString, type MatchExpr, type Selector } from "../ast.js";
import { evalError } from "../errors.js";
import { goParseUint, goQuote } from "../../go/strconv.js";
import { compileGoRegexp } from "../../go/regexp.js";
import { coerce, elementKind, isPrimitive, primitiveEqual } from "../values/coerce.js";
import { classify, hasOwn, ownKeys, type GoValue } from "../values/go-value.js";
import { kindName, typeName } from "../values/type-names.js";
import { getValue, type LocalVariable } from "./resolve.js";

export function evaluateMatch(m: MatchExpr, datum: GoValue, locals: LocalVariable[]): boolean {
  const r = getValue(datum, m.sel.path, locals);
  if (!r.present) return notPresentDisposition(m.op);
  const value = r.val;
  switch (m.op) {
    case "eq":
      return doMatchEqual(m, value);
    case "ne":
      return !doMatchEqual(m, value);
    case "in":
      return doMatchIn(m, value);
    case "notin":
      return !doMatchIn(m, value);
    case "empty":
      return doMatchIsEmpty(m, value);
    case "notempty":
      return !doMatchIsEmpty(m, value);
    case "matches":
      return doMatchMatches(m, value);
    case "notmatches":
      return !doMatchMatches(m, value);
  }
}

function rawValue(m: MatchExpr): string {
  return m.value?.raw ?? "";
}

function doMatchEqual(m: MatchExpr, value: GoValue): boolean {
  if (!isPrimitive(value.kind)) evalError("unable to find suitable primitive comparison function for matching");
  const mv = coerce(rawValue(m), value.kind);
  if (!mv.ok) evalError(`error getting match value in expression: ${mv.msg}`);
  return primitiveEqual(mv.v, value);
}

function doMatchIn(m: MatchExpr, value: GoValue): boolean {
  const raw = rawValue(m);
  const mv = coerce(raw, value.kind);
  if (!mv.ok) evalError(`error getting match value in expression: ${mv.msg}`);
  switch (value.kind) {
    case "map":
      return hasOwn(value.v, raw);
    case "slice": {
      if (value.bytes) {
        // []uint8: the value is coerced to the element type, a byte
        const ev = goParseUint(raw);
        if (!ev.ok) evalError(`error getting match value in expression: ${ev.msg}`);
        return (value.v as number[]).some((b) => BigInt(b) === ev.v);
      }
      // a slice of structs: no primitive comparison for its element type, even with no elements
      if (value.structElems) evalError('unable to find suitable primitive comparison function for "in" comparison');
      const items = (value.v as unknown[]).map((x) => classify(x, { of: "slice", free: value.free }));
      if (items.length === 0) return false;
      // a slice below a free-form map (a task's Config) is a Go []interface{}, whatever its elements
      const kind = value.free ? null : elementKind(items);
      if (kind !== null) {
        // a typed slice: coerce once to the element kind
        const ev = coerce(raw, kind);
        if (!ev.ok) evalError(`error getting match value in expression: ${ev.msg}`);
        if (!isPrimitive(kind)) evalError('unable to find suitable primitive comparison function for "in" comparison');
        return items.some((item) => item.kind !== "nil" && primitiveEqual(ev.v, kind === "float" ? { ...item, kind } : item));
      }
      // []interface{}: per element, skipping elements the value cannot be coerced to
      for (const item of items) {
        if (item.kind === "nil") {
          // go-bexpr asks a nil interface{} element for its type and panics (Nomad fails the request)
          if (value.free) evalError(`in over ${goQuote(selectorString(m.sel))}, a []interface {} holding nil: go-bexpr panics on it (Nomad fails the request)`);
          continue;
        }
        const ev = coerce(raw, item.kind);
        if (!ev.ok) {
          if (ev.syntax) continue;
          evalError("error getting interface slice match value in expression");
        }
        if (!isPrimitive(item.kind)) {
          evalError(`unable to find suitable primitive comparison function for "in" comparison in interface slice: ${kindName(item.kind)}`);
        }
        if (primitiveEqual(ev.v, item)) return true;
      }
      return false;
    }
    case "string":
      return (value.v as string).includes(raw);
    case "nil":
      // A nil struct pointer is an invalid value to go-bexpr; a nil slice or map holds nothing.
      if (!value.nilStruct) return false;
      return evalError(`Cannot perform in/contains operations on type ${kindName(value.kind, value.field)} for selector: ${goQuote(selectorString(m.sel))}`);
    default:
      return evalError(`Cannot perform in/contains operations on type ${kindName(value.kind, value.field)} for selector: ${goQuote(selectorString(m.sel))}`);
  }
}

function doMatchIsEmpty(m: MatchExpr, value: GoValue): boolean {
  switch (value.kind) {
    case "string":
      return value.v === "";
    case "slice":
      return (value.v as unknown[]).length === 0;
    case "map":
      return ownKeys(value.v).length === 0;
    case "nil":
      if (value.nilStruct) return nilStructPanic("is empty", m.sel);
      return true;
    default:
      return evalError(`cannot perform is-empty operations on type ${kindName(value.kind, value.field)} for selector: ${goQuote(selectorString(m.sel))}`);
  }
}

/** go-bexpr calls Len() on the invalid value of a nil struct pointer and panics; Nomad fails the request. Here: a 400 that says so. */
export function nilStructPanic(operation: string, sel: Selector): never {
  return evalError(`${operation} over ${goQuote(selectorString(sel))}, a nil struct pointer: go-bexpr panics on it (Nomad fails the request)`);
}

function doMatchMatches(m: MatchExpr, value: GoValue): boolean {
  if (value.kind !== "string" && !value.bytes) evalError(`Value of type ${typeName(value)} is not convertible to []byte`);
  const mv = m.value!;
  let re = mv.re;
  if (!re) {
    const compiled = compileGoRegexp(mv.raw);
    if (compiled.error !== undefined) return evalError(`Failed to compile regular expression ${goQuote(mv.raw)}: ${compiled.error}`);
    re = mv.re = compiled.re;
  }
  // []byte: Go's regexp matches the raw bytes; Latin-1 keeps one character per byte.
  return re.test(value.bytes ? Buffer.from(value.v as number[]).toString("latin1") : (value.v as string));
}
