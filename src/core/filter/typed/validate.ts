/**
 * go-bexpr v0.1.2's validation pass (validate.go validateRecurse), run when a filter is created: each
 * match expression, left to right, has its selector checked against the type (`Selector "Foo" is not
 * valid`, naming the selector up to the first unknown segment), its operator against what the field
 * allows (`Invalid match operator "In" for selector "Port"`), its value coerced to the field's kind
 * (`Failed to coerce value "x" for selector "Port": strconv.ParseInt: …`) and, for `matches`, compiled
 * (`Failed to compile regular expression "…": …`). Selectors and operators print with go-bexpr's
 * `String()` methods (a dotted selector, the operator's name), as `%q` does for a Stringer.
 */
import type { RE2JS } from "re2js";
import type { Expr, MatchOp } from "../ast.js";
import { compileGoRegexp } from "../../go/regexp.js";
import { goQuote } from "../../go/strconv.js";
import { coerce } from "../values/coerce.js";
import { coercionKind, OPERATOR_NAMES, supportedOperations } from "./operations.js";
import { subField, type FieldSchema, type StructSchema } from "./schema.js";

/** A value after validation: coerced to the field's kind (bigint for integers), or a compiled pattern. */
export type Converted = string | boolean | bigint | number | RE2JS;

export type TypedExpr =
  | { k: "not"; e: TypedExpr }
  | { k: "and"; l: TypedExpr; r: TypedExpr }
  | { k: "or"; l: TypedExpr; r: TypedExpr }
  | { k: "match"; path: readonly string[]; op: MatchOp; value: Converted | null };

export class TypedValidationError extends Error {}

const dotted = (path: readonly string[]) => goQuote(path.join("."));

export function validate(ast: Expr, root: StructSchema): TypedExpr {
  switch (ast.k) {
    case "not":
      return { k: "not", e: validate(ast.e, root) };
    case "and":
    case "or": {
      const l = validate(ast.l, root);
      return { k: ast.k, l, r: validate(ast.r, root) };
    }
    case "match": {
      const path = ast.sel.path;
      let field: FieldSchema = root;
      for (let i = 0; i < path.length; i++) {
        const next = subField(field, path[i]!);
        if (next === undefined) throw new TypedValidationError(`Selector ${dotted(path.slice(0, i + 1))} is not valid`);
        field = next;
      }
      if (!supportedOperations(field).includes(ast.op)) {
        throw new TypedValidationError(`Invalid match operator ${goQuote(OPERATOR_NAMES[ast.op])} for selector ${dotted(path)}`);
      }
      if (ast.value === null) {
        if (ast.op === "empty" || ast.op === "notempty") return { k: "match", path, op: ast.op, value: null };
        throw new TypedValidationError(`Match operator ${goQuote(OPERATOR_NAMES[ast.op])} requires a non-nil value`);
      }
      const raw = ast.value.raw;
      const kind = coercionKind(field);
      let value: Converted = raw;
      if (kind !== null) {
        const coerced = coerce(raw, kind);
        if (!coerced.ok) throw new TypedValidationError(`Failed to coerce value ${goQuote(raw)} for selector ${dotted(path)}: ${coerced.msg}`);
        value = coerced.v as Converted;
      }
      if (ast.op === "matches" || ast.op === "notmatches") {
        // only string fields allow these operators, so the value is the coerced string
        const compiled = compileGoRegexp(value as string);
        if (compiled.error !== undefined) throw new TypedValidationError(`Failed to compile regular expression ${goQuote(value as string)}: ${compiled.error}`);
        value = compiled.re;
      }
      return { k: "match", path, op: ast.op, value };
    }
    case "coll":
      // the consul dialect's grammar has no collection expressions
      throw new TypedValidationError("Cannot validate: Invalid AST");
  }
}
