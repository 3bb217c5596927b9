/**
 * The AST a filter expression parses to (go-bexpr grammar/ast.go, v0.1.13): boolean nodes, match
 * expressions (selector, operator, raw value) and the `any`/`all` collection expressions with their
 * name bindings. The grammar (grammar/rules.ts) builds it; the evaluator (evaluate/) walks it.
 */
import type { RE2JS } from "re2js";

export type MatchOp = "eq" | "ne" | "in" | "notin" | "empty" | "notempty" | "matches" | "notmatches";

export interface Selector {
  type: "bexpr" | "jsonptr";
  path: string[];
}

export interface MatchValue {
  raw: string;
  /** compiled regular expression, cached after the first successful compilation (as go-bexpr does) */
  re?: RE2JS;
}

export type BindMode = "Default" | "Index" | "Value" | "IndexAndValue";

export interface NameBinding {
  mode: BindMode;
  def: string;
  index: string;
  value: string;
}

export type Expr =
  | { k: "not"; e: Expr }
  | { k: "and"; l: Expr; r: Expr }
  | { k: "or"; l: Expr; r: Expr }
  | { k: "match"; sel: Selector; op: MatchOp; value: MatchValue | null }
  | { k: "coll"; op: "ALL" | "ANY"; sel: Selector; binding: NameBinding; inner: Expr };

/** `Selector.String()` */
export function selectorString(sel: Selector): string {
  if (sel.path.length === 0) return "";
  return sel.type === "bexpr" ? sel.path.join(".") : sel.path.join("/");
}

/** NotPresentDisposition: the result of an operator when a map key is missing. */
export function notPresentDisposition(op: MatchOp): boolean {
  switch (op) {
    case "ne":
    case "notin":
    case "empty":
    case "notmatches":
      return true;
    default:
      return false;
  }
}

export type MatchExpr = Extract<Expr, { k: "match" }>;
export type CollExpr = Extract<Expr, { k: "coll" }>;
