/**
 * go-bexpr v0.1.2's evaluation (evaluate.go evaluateMatchExpressionRecurse) over a JSON row described by
 * a schema. A selector walks struct fields and map keys; crossing a slice of structs evaluates the rest
 * of the match against every element and is true when any element matches (so `Checks.Status !=
 * passing` means "some check is not passing", and is false when there are no checks). A map key that is
 * missing (or a nil map) decides by the operator: `==`, `in`, `is not empty` are false, every other
 * operator (including `matches`) true. At the end of the selector: `==` compares the coerced value with
 * the field exactly, `in` tests a map's keys, a slice's elements or a substring, `is empty` a length,
 * `matches` runs the regular expression unanchored.
 *
 * A field absent from the row is its Go zero value (Consul's JSON omits `omitempty` fields). A nil
 * pointer to a struct on the selector's path (`null` in the JSON) makes go-bexpr v0.1.2 panic
 * (reflect's Interface on a zero Value); here that is a TypedEvaluationError saying so.
 */
import type { RE2JS } from "re2js";
import { goQuote } from "../../go/strconv.js";
import { isPrimitive, type FieldSchema, type StructSchema } from "./schema.js";
import type { Converted, TypedExpr } from "./validate.js";

type Match = Extract<TypedExpr, { k: "match" }>;

export class TypedEvaluationError extends Error {}

export function evaluateTyped(ast: TypedExpr, row: unknown, root: StructSchema): boolean {
  switch (ast.k) {
    case "not":
      return !evaluateTyped(ast.e, row, root);
    case "and":
      return evaluateTyped(ast.l, row, root) && evaluateTyped(ast.r, row, root);
    case "or":
      return evaluateTyped(ast.l, row, root) || evaluateTyped(ast.r, row, root);
    case "match":
      return matchAt(ast, 0, row, root);
  }
}

function matchAt(m: Match, depth: number, value: unknown, schema: FieldSchema): boolean {
  if (depth >= m.path.length) return applyOperator(m, value, schema);
  switch (schema.kind) {
    case "struct": {
      const name = m.path[depth]!;
      const field = schema.fields[name]!;
      const child = fieldValue(value, name, field);
      if (child === null && field.kind === "struct" && field.pointer) {
        throw new TypedEvaluationError(
          `Value at selector ${goQuote(m.path.slice(0, depth + 1).join("."))} is a nil pointer: go-bexpr v0.1.2 panics on it (Consul fails the request)`,
        );
      }
      return matchAt(m, depth + 1, child, field);
    }
    case "slice": {
      const items = Array.isArray(value) ? value : [];
      for (const item of items) {
        if (item === null || item === undefined) {
          throw new TypedEvaluationError(`Value at selector ${goQuote(m.path.slice(0, depth).join("."))} with type invalid does not support nested field selection`);
        }
        if (matchAt(m, depth, item, schema.elements)) return true;
      }
      return false;
    }
    case "map": {
      const key = m.path[depth]!;
      const entry = isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;
      if (entry === undefined || entry === null) return missingKeyResult(m.op);
      return matchAt(m, depth + 1, entry, schema.values!);
    }
    default:
      // validation lets no selector continue below a primitive
      throw new TypedEvaluationError(`Value at selector ${goQuote(m.path.slice(0, depth).join("."))} with type ${schema.kind} does not support nested field selection`);
  }
}

function missingKeyResult(op: Match["op"]): boolean {
  return !(op === "eq" || op === "notempty" || op === "in");
}

function applyOperator(m: Match, value: unknown, schema: FieldSchema): boolean {
  switch (m.op) {
    case "eq":
      return primitiveEqual(m.value!, value, schema);
    case "ne":
      return !primitiveEqual(m.value!, value, schema);
    case "in":
      return contains(m.value!, value, schema);
    case "notin":
      return !contains(m.value!, value, schema);
    case "empty":
      return length(value) === 0;
    case "notempty":
      return length(value) !== 0;
    case "matches":
      return (m.value as RE2JS).test(typeof value === "string" ? value : "");
    case "notmatches":
      return !(m.value as RE2JS).test(typeof value === "string" ? value : "");
  }
}

function primitiveEqual(expected: Converted, value: unknown, schema: FieldSchema): boolean {
  const actual = value ?? zeroValue(schema);
  switch (schema.kind) {
    case "int":
    case "uint":
      return typeof actual === "number" && Number.isInteger(actual) ? BigInt(actual) === expected : typeof actual === "bigint" && actual === expected;
    default:
      return actual === expected;
  }
}

function contains(expected: Converted, value: unknown, schema: FieldSchema): boolean {
  switch (schema.kind) {
    case "map":
      return isObject(value) && Object.hasOwn(value, expected as string) && value[expected as string] !== undefined;
    case "slice":
      return Array.isArray(value) && value.some((item) => primitiveEqual(expected, item, schema.elements));
    case "string":
      return typeof value === "string" && value.includes(expected as string);
    default:
      return false;
  }
}

function length(value: unknown): number {
  if (typeof value === "string" || Array.isArray(value)) return value.length;
  if (isObject(value)) return Object.keys(value).filter((k) => value[k] !== undefined).length;
  return 0;
}

/** A struct field's value in the row: absent keys are Go's zero value for the field's type. */
function fieldValue(row: unknown, name: string, field: FieldSchema): unknown {
  const v = isObject(row) && Object.hasOwn(row, name) ? row[name] : undefined;
  return v === undefined ? zeroValue(field) : v;
}

function zeroValue(s: FieldSchema): unknown {
  if (isPrimitive(s)) return s.kind === "string" ? "" : s.kind === "bool" ? false : 0;
  if (s.kind === "struct") return s.pointer ? null : {};
  return null;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
