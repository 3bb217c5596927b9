/**
 * `filter=` expressions, shared by the services (hashicorp/go-bexpr ported to TypeScript). Two flavours
 * over one grammar (grammar/, with a dialect per go-bexpr version) and one AST:
 *  - this file: the dynamic evaluator Nomad uses, go-bexpr **v0.1.13** (the version Nomad's `go.mod`
 *    pins) together with the parts of mitchellh/pointerstructure v1.2.x it relies on; its datum model
 *    knows Nomad's structs by field name (values/fields.ts);
 *  - typed/: Consul's, go-bexpr **v0.1.2**, which validates selectors and coerces values against a
 *    described Go type when the filter is created (see typed/index.ts).
 * The rest of this comment is about the first.
 *
 * This is the module's public face: {@link compileFilter} parses an expression once (grammar/) and
 * returns a {@link Filter} that evaluates it against a datum (evaluate/, over the Go-typed view of
 * the datum in values/). The layout follows go-bexpr's own: `grammar/` (grammar.peg, the generated
 * parser and ast.go) → `ast.ts` and `grammar/`; `evaluate.go` → `evaluate/`; `coerce.go` and
 * pointerstructure → `values/`; Go's strconv → `strconv.ts`; the two error types → `errors.ts`.
 *
 * Language (v0.1.13): `or` / `and` / `not` / parentheses (`a and not b or c` is `(a and (not b)) or c`);
 * matches `S == V`, `S != V`, `S is empty`, `S is not empty`, `V in S`, `V not in S`, `S contains V`,
 * `S not contains V`, `S matches V`, `S not matches V`; and the collection forms
 * `any S as v { … }` / `all S as k, v { … }` (alternatives of `or` only, so wrap them in parentheses
 * to combine them). A selector is `Ident(.Ident | .123 | ["key"] | [`key`])*` (identifiers may contain
 * `_` and `/`) or a JSON pointer in double quotes (`"/Meta/foo"`). A value is a number, a double-quoted
 * string (Go escapes), a backtick raw string, or a *selector written as a value*, which in v0.1.13 is
 * **not** looked up: it is its own text (`Status == running` ≡ `Status == "running"`, and a
 * double-quoted value that looks like a JSON pointer, `"/a/b"`, is the text `a/b`). Values always reach
 * the evaluator as raw text and are coerced to the kind of the selected field (`strconv.ParseBool`,
 * `strconv.ParseInt(raw, 0, 64)`, `strconv.ParseFloat`; strings compare exactly).
 * (Selector-valued right-hand sides that are resolved against the datum do not exist in v0.1.13;
 * `is nil` / `is not nil` arrived in later versions and are parse errors here, as in Nomad.)
 *
 * Datum model. The datum is the JSON rendering of a Nomad struct. Go's reflection tells a struct from a map;
 * JSON does not, so this module decides:
 *  - the top-level object, array elements and the values of maps are **structs**: a selector segment
 *    naming a key they lack is an error (`error finding value in datum: /Foo at part 0: couldn't find
 *    key: struct field with name "Foo"`), as pointerstructure reports for Go structs;
 *  - an object (or `null`) held by a struct field whose name is in {@link MAP_FIELDS} is a **map**: a
 *    missing key as the *last* selector segment is "not present", and the operator decides
 *    (`==`, `in`, `contains`, `matches`, `is not empty` are false; their negations and `is empty` are true);
 *  - objects nested anywhere below a `Config` map (a Go `map[string]interface{}`) are maps too;
 *  - a JSON integer is an `int`, any other number a `float64`; `null` elsewhere is a nil pointer;
 *  - the datum is seen as JSON.stringify renders it: keys holding `undefined` are absent, and an object with
 *    `toJSON()` (a Date) is its JSON value.
 * A selector crossing an array needs a numeric segment (`TaskGroups.0.Name`); `TaskGroups.Name` on an
 * array is an error, as in go-bexpr (the filter runs on the main object only, and `any`/`all` are the
 * way to look inside arrays).
 *
 * Where go-bexpr v0.1.13 panics (the Nomad server would fail) this port raises a FilterEvaluationError:
 * `is empty` on a non-collection uses v0.1.16's wording, and `matches` on a nil value reports type `<nil>`.
 * On `null` in a field Nomad declares as a pointer to a struct ({@link STRUCT_POINTER_FIELDS}) `in` /
 * `contains` are go-bexpr's invalid-type error and `is empty`, `any`, `all` (a panic in go-bexpr) a
 * FilterEvaluationError saying so; on any other `null` (a nil slice or map) `is empty` is true, `in` /
 * `contains` find nothing and `any`/`all` see an empty collection. Integer fields Nomad declares
 * `uint64` ({@link UNSIGNED_FIELDS}) coerce with ParseUint; numbers below `Config` are float64. Go type names in messages are
 * approximations (`int`, `float64`, `[]interface {}`, `map[string]interface {}`, `struct`).
 * (The field tables named here live in `values/fields.ts`.)
 */
import type { Expr } from "./ast.js";
import { FilterEvaluationError, FilterParseError } from "./errors.js";
import { evaluate } from "./evaluate/evaluate.js";
import { parseExpression } from "./grammar/parser.js";
import { rootValue } from "./values/go-value.js";

export { FilterEvaluationError, FilterParseError } from "./errors.js";
export { MAP_FIELDS } from "./values/fields.js";

export interface Filter {
  matches(datum: unknown): boolean;
}

/** Parses once; throws FilterParseError. */
export function compileFilter(expression: string): Filter {
  let ast: Expr;
  try {
    ast = parseExpression(expression);
  } catch (e) {
    if (e instanceof FilterParseError) throw e;
    if (e instanceof RangeError) throw new FilterParseError("1:1 (0): expression nests too deeply");
    throw e;
  }
  return {
    matches(datum: unknown): boolean {
      try {
        return evaluate(ast, rootValue(datum), []);
      } catch (e) {
        if (e instanceof FilterEvaluationError) throw e;
        if (e instanceof RangeError) throw new FilterEvaluationError("expression nests too deeply");
        throw e;
      }
    },
  };
}

/** Consul's flavour (go-bexpr v0.1.2, typed): see typed/index.ts. */
export { createTypedFilter, CREATE_FILTER_PREFIX, TypedEvaluationError, TypedFilterError, type TypedFilter } from "./typed/index.js";
