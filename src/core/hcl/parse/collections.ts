/**
 * HCL's collection expressions: tuples `[…]`, objects `{…}` and the `for`
 * expressions that build either, with the `for` header a template's
 * `%{for}` directive shares.
 */
import type { Expr, ObjectItem } from "../ast.js";
import { ExpressionParser } from "./expressions.js";

/** The diagnostics of a malformed `for` header: HCL words them differently in expressions and in template directives. */
export interface ForWords {
  readonly summary: string;
  readonly noName: string;
  readonly noValueName: string;
  readonly noIn: string;
}

const FOR_EXPRESSION: ForWords = {
  summary: "Invalid 'for' expression",
  noName: "For expression requires variable name after 'for'.",
  noValueName: "For expression requires value variable name after comma.",
  noIn: "For expression requires the 'in' keyword after its name declarations.",
};

export const FOR_DIRECTIVE: ForWords = {
  summary: "Invalid 'for' directive",
  noName: "For directive requires variable name after 'for'.",
  noValueName: "For directive requires value variable name after comma.",
  noIn: "For directive requires 'in' keyword after names.",
};

export abstract class CollectionParser extends ExpressionParser {
  protected override parseTupleOrFor(): Expr {
    const start = this.pos;
    this.pos++; // [
    this.skip();
    if (this.atKeyword("for")) return this.parseFor(start, false);
    const items: Expr[] = [];
    for (;;) {
      this.skip();
      if (this.peek() === "]") break;
      items.push(this.parseExpression());
      this.skip();
      if (this.peek() === ",") {
        this.pos++;
        continue;
      }
      if (this.peek() !== "]") {
        this.fail("Missing item separator", "Expected a comma to mark the beginning of the next item.", this.pos, this.tokenEnd(this.pos));
      }
    }
    this.pos++;
    return { k: "tuple", items, start, end: this.pos };
  }

  protected override parseObjectOrFor(): Expr {
    const start = this.pos;
    this.pos++; // {
    this.skip();
    if (this.atKeyword("for")) return this.parseFor(start, true);
    const items: ObjectItem[] = [];
    for (;;) {
      this.skip();
      if (this.peek() === "}") break;
      let key = this.parseExpression();
      let bareKey = false;
      if (key.k === "traversal" && key.steps.length === 0) {
        key = { k: "literal", value: key.root, start: key.start, end: key.end };
        bareKey = true;
      }
      this.skip();
      const c = this.peek();
      if (!(c === "=" || c === ":") || this.startsWith("==") || this.startsWith("=>")) {
        this.fail("Missing key/value separator", 'Expected an equals sign ("=") to mark the beginning of the attribute value.', this.pos, this.tokenEnd(this.pos));
      }
      this.pos++;
      const value = this.parseExpression();
      items.push({ key, bareKey, value });
      // Items are separated by commas or newlines: look again from the value's end,
      // since the operator lookahead inside brackets already stepped over newlines.
      this.pos = value.end;
      const beforeSep = this.pos;
      this.skip(false);
      if (this.peek() === ",") this.pos++;
      else if (this.peek() === "\n") this.pos++;
      else if (this.peek() !== "}") {
        this.pos = beforeSep;
        this.skip(true);
        if (this.peek() !== "}") {
          this.fail("Missing attribute separator", "Expected a newline or comma to mark the beginning of the next attribute.", this.pos, this.tokenEnd(this.pos));
        }
      }
    }
    this.pos++;
    return { k: "object", items, start, end: this.pos };
  }

  /** `[key,] value in collection` after `for`, in a for expression or a template's for directive (each has its own wording). */
  protected parseForHeader(words: ForWords): { keyVar: string | undefined; valueVar: string; collection: Expr } {
    const first = this.identifier();
    if (first === undefined) this.fail(words.summary, words.noName, this.pos, this.tokenEnd(this.pos));
    this.skip();
    let keyVar: string | undefined;
    let valueVar = first;
    if (this.peek() === ",") {
      this.pos++;
      this.skip();
      const second = this.identifier();
      if (second === undefined) this.fail(words.summary, words.noValueName, this.pos, this.tokenEnd(this.pos));
      keyVar = first;
      valueVar = second;
      this.skip();
    }
    if (!this.atKeyword("in")) this.fail(words.summary, words.noIn, this.pos, this.tokenEnd(this.pos));
    this.pos += 2;
    const collection = this.parseExpression();
    this.skip();
    return { keyVar, valueVar, collection };
  }

  protected parseFor(start: number, object: boolean): Expr {
    this.pos += 3; // for
    this.skip();
    const { keyVar, valueVar, collection } = this.parseForHeader(FOR_EXPRESSION);
    if (this.peek() !== ":") this.fail("Invalid 'for' expression", "For expression requires a colon after the collection expression.", this.pos, this.tokenEnd(this.pos));
    this.pos++;
    let keyExpr: Expr | undefined;
    let valueExpr = this.parseExpression();
    this.skip();
    if (object) {
      if (!this.startsWith("=>")) this.fail("Invalid 'for' expression", "Key expression is required when building an object.", this.pos, this.tokenEnd(this.pos));
      this.pos += 2;
      keyExpr = valueExpr;
      valueExpr = this.parseExpression();
      this.skip();
    }
    let group = false;
    if (object && this.startsWith("...")) {
      group = true;
      this.pos += 3;
      this.skip();
    }
    let condition: Expr | undefined;
    if (this.atKeyword("if")) {
      this.pos += 2;
      condition = this.parseExpression();
      this.skip();
    }
    const close = object ? "}" : "]";
    if (this.peek() !== close) this.fail("Invalid 'for' expression", `Extra characters after the end of the 'for' expression.`, this.pos, this.tokenEnd(this.pos));
    this.pos++;
    return { k: "for", keyVar, valueVar, collection, keyExpr, valueExpr, condition, group, start, end: this.pos };
  }
}
