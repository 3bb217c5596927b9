/**
 * Evaluation (go-bexpr evaluate.go, v0.1.13): walks the AST over the Go-typed datum. `and`/`or`
 * short-circuit; match expressions are in match.ts; `any`/`all` iterate a slice or map, binding the
 * index/key and value names for the inner expression.
 */
import { selectorString, type CollExpr, type Expr } from "../ast.js";
import { evalError } from "../errors.js";
import { goQuote } from "../../go/strconv.js";
import { ownKeys, type GoValue } from "../values/go-value.js";
import { evaluateMatch, nilStructPanic } from "./match.js";
import { getValue, type LocalVariable } from "./resolve.js";

export function evaluate(ast: Expr, datum: GoValue, locals: LocalVariable[]): boolean {
  switch (ast.k) {
    case "not":
      return !evaluate(ast.e, datum, locals);
    case "and":
      return evaluate(ast.l, datum, locals) && evaluate(ast.r, datum, locals);
    case "or":
      return evaluate(ast.l, datum, locals) || evaluate(ast.r, datum, locals);
    case "match":
      return evaluateMatch(ast, datum, locals);
    case "coll":
      return evaluateCollection(ast, datum, locals);
  }
}

function evaluateCollection(c: CollExpr, datum: GoValue, locals: LocalVariable[]): boolean {
  const r = getValue(datum, c.sel.path, locals);
  const all = c.op === "ALL";
  if (!r.present) return all;
  const v = r.val;
  let entries: Array<{ key: GoValue; path: string[] }>;
  if (v.kind === "slice") {
    entries = (v.v as unknown[]).map((_x, i) => ({ key: { kind: "int", v: i, free: false }, path: [...c.sel.path, String(i)] }));
  } else if (v.kind === "map") {
    entries = ownKeys(v.v).map((k) => ({ key: { kind: "string", v: k, free: false }, path: [...c.sel.path, k] }));
  } else if (v.kind === "nil") {
    if (v.nilStruct) return nilStructPanic(all ? "all" : "any", c.sel);
    entries = [];
  } else {
    return evalError(`${selectorString(c.sel)} is not a list or a map`);
  }
  const b = c.binding;
  for (const entry of entries) {
    if (b.mode === "IndexAndValue" && b.index === b.value) {
      evalError(`${goQuote(b.index)} cannot be used as a placeholder for both the index and the value`);
    }
    const inner = [...locals];
    if (v.kind === "map") {
      if (b.def !== "") inner.push({ name: b.def, path: null, value: entry.key });
      if (b.index !== "") inner.push({ name: b.index, path: null, value: entry.key });
      if (b.value !== "") inner.push({ name: b.value, path: entry.path, value: null });
    } else {
      if (b.index !== "") inner.push({ name: b.index, path: null, value: entry.key });
      if (b.def !== "") inner.push({ name: b.def, path: entry.path, value: null });
      if (b.value !== "") inner.push({ name: b.value, path: entry.path, value: null });
    }
    const result = evaluate(c.inner, datum, inner);
    if (result && !all) return true;
    if (!result && all) return false;
  }
  return all;
}
