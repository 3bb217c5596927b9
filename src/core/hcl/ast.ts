/**
 * The syntax tree of HCL2's native syntax, as far as a configuration reader
 * needs it. Every node keeps its source offsets so diagnostics can name the
 * exact range and so unresolved references can be given back as written.
 */

export interface Span {
  /** Offset of the first character. */
  readonly start: number;
  /** Offset just past the last character. */
  readonly end: number;
}

export type Expr =
  | ({ readonly k: "literal"; readonly value: null | boolean | number | string } & Span)
  | ({ readonly k: "template"; readonly parts: readonly TemplatePart[]; readonly heredoc: boolean } & Span)
  | ({ readonly k: "traversal"; readonly root: string; readonly steps: readonly Step[] } & Span)
  | ({ readonly k: "relative"; readonly source: Expr; readonly steps: readonly Step[] } & Span)
  | ({ readonly k: "index"; readonly collection: Expr; readonly key: Expr } & Span)
  | ({ readonly k: "splat"; readonly source: Expr; readonly each: Expr } & Span)
  | ({ readonly k: "splatItem" } & Span)
  | ({ readonly k: "call"; readonly name: string; readonly nameSpan: Span; readonly args: readonly Expr[]; readonly expandFinal: boolean } & Span)
  | ({ readonly k: "tuple"; readonly items: readonly Expr[] } & Span)
  | ({ readonly k: "object"; readonly items: readonly ObjectItem[] } & Span)
  | ({
      readonly k: "for";
      readonly keyVar: string | undefined;
      readonly valueVar: string;
      readonly collection: Expr;
      readonly keyExpr: Expr | undefined;
      readonly valueExpr: Expr;
      readonly condition: Expr | undefined;
      readonly group: boolean;
    } & Span)
  | ({ readonly k: "conditional"; readonly condition: Expr; readonly whenTrue: Expr; readonly whenFalse: Expr } & Span)
  | ({ readonly k: "binary"; readonly op: BinaryOp; readonly left: Expr; readonly right: Expr } & Span)
  | ({ readonly k: "unary"; readonly op: "!" | "-"; readonly operand: Expr } & Span)
  | ({ readonly k: "paren"; readonly inner: Expr } & Span);

export type BinaryOp = "||" | "&&" | "==" | "!=" | "<" | ">" | "<=" | ">=" | "+" | "-" | "*" | "/" | "%";

/** One literal step of a traversal: `.name`, `.0` or `["key"]` / `[0]`. */
export type Step = ({ readonly k: "attr"; readonly name: string } & Span) | ({ readonly k: "key"; readonly key: string | number } & Span);

export interface ObjectItem {
  readonly key: Expr;
  /** True when the key was written as a bare identifier (`name = …`). */
  readonly bareKey: boolean;
  readonly value: Expr;
}

export type TemplatePart =
  | string
  | ({ readonly k: "interp"; readonly expr: Expr } & Span)
  | ({ readonly k: "if"; readonly condition: Expr; readonly whenTrue: readonly TemplatePart[]; readonly whenFalse: readonly TemplatePart[] } & Span)
  | ({ readonly k: "for"; readonly keyVar: string | undefined; readonly valueVar: string; readonly collection: Expr; readonly body: readonly TemplatePart[] } & Span);

export interface Attribute extends Span {
  readonly name: string;
  readonly nameSpan: Span;
  readonly expr: Expr;
}

export interface Block extends Span {
  readonly type: string;
  readonly typeSpan: Span;
  readonly labels: readonly string[];
  readonly labelSpans: readonly Span[];
  readonly body: Body;
  readonly openBrace: Span;
}

export interface Body extends Span {
  readonly attributes: readonly Attribute[];
  readonly blocks: readonly Block[];
  /** Where HCL reports a missing required argument: the body's closing brace (or end of file). */
  readonly missingItem: Span;
}

/**
 * HCL's `Expression.StartRange()`: the part of an expression a diagnostic
 * about its value points at — a quoted string's first literal (inside the
 * quotes), a call's name and parenthesis, a collection's opening bracket, an
 * operation's first operand.
 */
export function startSpan(expr: Expr): Span {
  switch (expr.k) {
    case "template": {
      if (expr.heredoc) return expr;
      const [first, second] = expr.parts;
      if (first === undefined) return { start: expr.start + 1, end: expr.start + 1 };
      if (typeof first === "string") {
        const end = second !== undefined && typeof second !== "string" ? second.start : expr.end - 1;
        return { start: expr.start + 1, end };
      }
      return first.k === "interp" ? startSpan(first.expr) : first;
    }
    case "call":
      return { start: expr.nameSpan.start, end: expr.nameSpan.end + 1 };
    case "tuple":
    case "object":
    case "for":
    case "unary":
      return { start: expr.start, end: expr.start + 1 };
    case "binary": {
      // Down the left side in a loop: an operator chain is as deep as it is long.
      let left: Expr = expr.left;
      while (left.k === "binary") left = left.left;
      return startSpan(left);
    }
    case "conditional":
      return startSpan(expr.condition);
    default:
      return expr;
  }
}
