/**
 * Consul's `filter=`: go-bexpr **v0.1.2** as Consul calls it, `bexpr.CreateFilter(expression, nil,
 * dataType)`. Unlike the dynamic evaluator Nomad uses (../index.ts), v0.1.2 knows the Go type being
 * filtered: creating a filter parses the expression (the `consul` dialect of the grammar), then checks
 * every selector and operator against the type and coerces every value to its field's kind, so that
 * mistakes fail at creation — before any data is read — with `Failed to create boolean expression
 * evaluator: …`. Evaluation then follows v0.1.2's reflection walk over the JSON row (typed/evaluate.ts).
 *
 * The type is a {@link FieldSchema} written with the builders in schema.ts; the registry's are in
 * src/registry/filter-schemas.ts.
 */
import { FilterParseError } from "../errors.js";
import { parseExpression } from "../grammar/parser.js";
import { evaluateTyped, TypedEvaluationError } from "./evaluate.js";
import type { StructSchema } from "./schema.js";
import { TypedValidationError, validate, type TypedExpr } from "./validate.js";

export * from "./schema.js";
export { TypedEvaluationError } from "./evaluate.js";

/** filter.go CreateFilter's wrapping of every creation error. */
export const CREATE_FILTER_PREFIX = "Failed to create boolean expression evaluator: ";

/** A filter that could not be created: `message` is Consul's whole text, prefix included. */
export class TypedFilterError extends Error {}

export interface TypedFilter {
  /** Throws a TypedEvaluationError where go-bexpr v0.1.2 would fail (or panic) on this row. */
  matches(row: unknown): boolean;
}

/** Parses and validates against `schema`; throws a TypedFilterError with go-bexpr v0.1.2's text. */
export function createTypedFilter(expression: string, schema: StructSchema): TypedFilter {
  let ast: TypedExpr;
  try {
    ast = validate(parseExpression(expression, "consul"), schema);
  } catch (e) {
    if (e instanceof FilterParseError || e instanceof TypedValidationError) throw new TypedFilterError(CREATE_FILTER_PREFIX + e.message);
    if (e instanceof RangeError) throw new TypedFilterError(`${CREATE_FILTER_PREFIX}1:1 (0): expression nests too deeply`);
    throw e;
  }
  return {
    matches(row: unknown): boolean {
      try {
        return evaluateTyped(ast, row, schema);
      } catch (e) {
        if (e instanceof RangeError) throw new TypedEvaluationError("expression nests too deeply");
        throw e;
      }
    },
  };
}
