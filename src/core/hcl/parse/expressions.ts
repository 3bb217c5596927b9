/**
 * HCL's expression grammar: conditionals, binary and unary operators by
 * precedence, traversals, index and splat steps, literals, parentheses and
 * function calls. Tuples, objects and `for` expressions (collections.ts) and
 * string templates and heredocs (templates.ts) are the subclasses' part.
 */
import type { BinaryOp, Expr, Span, Step } from "../ast.js";
import { isIdentStart, Scanner } from "./scanner.js";

const FULL_SPLAT = /[ \t\r\n]*\*[ \t\r\n]*\]/y;
const SPLAT_STAR = /[ \t\r\n]*\*/y;
const DIGITS = /[0-9]+/y;
const NUMBER = /[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

const BINARY_LEVELS: readonly (readonly BinaryOp[])[] = [["||"], ["&&"], ["==", "!="], ["<", ">", "<=", ">="], ["+", "-"], ["*", "/", "%"]];
const BINARY_LEVELS_LONGEST_FIRST = BINARY_LEVELS.map((ops) => [...ops].sort((a, b) => b.length - a.length));

export abstract class ExpressionParser extends Scanner {
  parseStandaloneExpression(): Expr {
    this.skip(true);
    const expr = this.withNesting(() => this.parseExpression());
    this.skip(true);
    if (this.pos < this.text.length)
      this.fail("Extra characters after expression", "An expression was successfully parsed, but extra characters were found after it.", this.pos, this.tokenEnd(this.pos));
    return expr;
  }

  protected parseExpression(): Expr {
    return this.deeper(() => this.parseConditional());
  }

  protected parseConditional(): Expr {
    const condition = this.parseBinary(0);
    this.skip();
    if (this.peek() !== "?") return condition;
    this.pos++;
    const whenTrue = this.withNesting(() => this.parseExpression());
    this.skip();
    if (this.peek() !== ":") {
      this.fail(
        "Missing false expression in conditional",
        "The conditional operator (...?...:...) requires a false expression, delimited by a colon.",
        this.pos,
        this.tokenEnd(this.pos),
      );
    }
    this.pos++;
    const whenFalse = this.parseExpression();
    return { k: "conditional", condition, whenTrue, whenFalse, start: condition.start, end: whenFalse.end };
  }

  protected parseBinary(level: number): Expr {
    if (level >= BINARY_LEVELS.length) return this.parseUnary();
    let left = this.parseBinary(level + 1);
    for (;;) {
      this.skip();
      const op = this.binaryOperator(level);
      if (!op) return left;
      this.pos += op.length;
      const right = this.parseBinary(level + 1);
      left = { k: "binary", op, left, right, start: left.start, end: right.end };
    }
  }

  protected binaryOperator(level: number): BinaryOp | undefined {
    // Longest match first, and never mistake `=>`/`==` or a comment for an operator.
    for (const op of BINARY_LEVELS_LONGEST_FIRST[level] ?? []) {
      if (!this.startsWith(op)) continue;
      if ((op === "<" || op === ">") && this.peek(1) === "=") continue;
      if (op === "/" && (this.peek(1) === "/" || this.peek(1) === "*")) continue;
      if (op === "<" && this.peek(1) === "<") continue;
      return op;
    }
    return undefined;
  }

  protected parseUnary(): Expr {
    return this.deeper(() => this.parseUnaryOperand());
  }

  protected parseUnaryOperand(): Expr {
    this.skip();
    const c = this.peek();
    if (c === "!" || (c === "-" && !isIdentStart(this.peek(1)))) {
      const start = this.pos;
      this.pos++;
      const operand = this.parseUnary();
      if (c === "-" && operand.k === "literal" && typeof operand.value === "number") {
        return { k: "literal", value: -operand.value, start, end: operand.end };
      }
      return { k: "unary", op: c, operand, start, end: operand.end };
    }
    return this.parsePostfix(this.parsePrimary());
  }

  protected parsePostfix(source: Expr): Expr {
    let expr = source;
    for (;;) {
      const before = this.pos;
      this.skip();
      const c = this.peek();
      if (c === "." && this.peek(1) === "*") {
        this.pos += 2;
        const each = this.parseSplatSteps({ k: "splatItem", start: this.pos, end: this.pos }, true);
        expr = { k: "splat", source: expr, each, start: expr.start, end: this.pos };
      } else if (c === "[" && this.matchAt(FULL_SPLAT, this.pos + 1) !== undefined) {
        this.pos = this.text.indexOf("]", this.pos) + 1;
        const each = this.parseSplatSteps({ k: "splatItem", start: this.pos, end: this.pos }, false);
        expr = { k: "splat", source: expr, each, start: expr.start, end: this.pos };
      } else if (c === "." || c === "[") {
        const step = this.parseStep();
        if (step.literal) {
          if (expr.k === "traversal") expr = { ...expr, steps: [...expr.steps, step.literal], end: this.pos };
          else if (expr.k === "relative") expr = { ...expr, steps: [...expr.steps, step.literal], end: this.pos };
          else expr = { k: "relative", source: expr, steps: [step.literal], start: expr.start, end: this.pos };
        } else if (step.key) {
          expr = { k: "index", collection: expr, key: step.key, start: expr.start, end: this.pos };
        }
      } else {
        this.pos = before;
        return expr;
      }
    }
  }

  /** Steps after a splat operator, applied to each element (`.*` takes attribute steps only). */
  protected parseSplatSteps(item: Expr, attributesOnly: boolean): Expr {
    let expr = item;
    for (;;) {
      const before = this.pos;
      this.skip();
      const c = this.peek();
      if (c === "." && this.peek(1) !== "*") {
        const step = this.parseStep();
        if (step.literal) expr = { k: "relative", source: expr, steps: [step.literal], start: expr.start, end: this.pos };
      } else if (c === "[" && !attributesOnly && this.matchAt(SPLAT_STAR, this.pos + 1) === undefined) {
        const step = this.parseStep();
        if (step.literal) expr = { k: "relative", source: expr, steps: [step.literal], start: expr.start, end: this.pos };
        else if (step.key) expr = { k: "index", collection: expr, key: step.key, start: expr.start, end: this.pos };
      } else {
        this.pos = before;
        return expr;
      }
    }
  }

  /** `.name`, `.0`, `[literal]` (a traversal step) or `[expression]` (an index). */
  protected parseStep(): { literal?: Step; key?: Expr } {
    const start = this.pos;
    if (this.peek() === ".") {
      this.pos++;
      const digits = this.matchAt(DIGITS, this.pos);
      if (digits) {
        this.pos += digits.length;
        return { literal: { k: "key", key: Number(digits), start, end: this.pos } };
      }
      const name = this.identifier();
      if (name === undefined) {
        this.fail("Invalid attribute name", "An attribute name is required after a dot.", this.pos, this.tokenEnd(this.pos));
      }
      return { literal: { k: "attr", name, start, end: this.pos } };
    }
    this.pos++; // [
    const key = this.withNesting(() => this.parseExpression());
    this.withNesting(() => this.skip());
    if (this.peek() !== "]") this.fail("Missing close bracket on index", 'The index operator must end with a closing bracket ("]").', this.pos, this.tokenEnd(this.pos));
    this.pos++;
    if (key.k === "literal" && (typeof key.value === "string" || typeof key.value === "number")) {
      return { literal: { k: "key", key: key.value, start, end: this.pos } };
    }
    if (key.k === "template" && key.parts.every((p) => typeof p === "string")) {
      return { literal: { k: "key", key: key.parts.join(""), start, end: this.pos } };
    }
    return { key };
  }

  protected parsePrimary(): Expr {
    this.skip();
    const start = this.pos;
    const c = this.peek();
    if (c === "") return this.invalidExpression(start);
    if (c === '"') return this.parseQuoted();
    if (c === "<" && this.peek(1) === "<") return this.parseHeredoc();
    if (/[0-9]/.test(c)) return this.parseNumber();
    if (c === "(") {
      this.pos++;
      const inner = this.withNesting(() => {
        const e = this.parseExpression();
        this.skip();
        return e;
      });
      if (this.peek() !== ")") this.fail("Unbalanced parentheses", "Expected a closing parenthesis to terminate the expression.", this.pos, this.tokenEnd(this.pos));
      this.pos++;
      return { k: "paren", inner, start, end: this.pos };
    }
    if (c === "[") return this.withNesting(() => this.parseTupleOrFor());
    if (c === "{") return this.withNesting(() => this.parseObjectOrFor());
    if (isIdentStart(c)) {
      const name = this.identifier() ?? "";
      const nameSpan = { start, end: this.pos };
      if (name === "true" || name === "false") return { k: "literal", value: name === "true", start, end: this.pos };
      if (name === "null") return { k: "literal", value: null, start, end: this.pos };
      const afterName = this.pos;
      this.skip();
      if (this.peek() === "(") return this.parseCall(name, nameSpan);
      this.pos = afterName;
      return { k: "traversal", root: name, steps: [], start, end: this.pos };
    }
    return this.invalidExpression(start);
  }

  protected parseNumber(): Expr {
    const start = this.pos;
    const lexeme = this.matchAt(NUMBER, this.pos) ?? "";
    this.pos += lexeme.length;
    return { k: "literal", value: Number(lexeme), start, end: this.pos };
  }

  protected parseCall(name: string, nameSpan: Span): Expr {
    this.pos++; // (
    return this.withNesting(() => {
      const args: Expr[] = [];
      let expandFinal = false;
      for (;;) {
        this.skip();
        if (this.peek() === ")") break;
        args.push(this.parseExpression());
        this.skip();
        if (this.startsWith("...")) {
          expandFinal = true;
          this.pos += 3;
          this.skip();
          if (this.peek() !== ")")
            this.fail(
              "Missing closing parenthesis",
              "An expanded function argument (with ...) must be immediately followed by closing parentheses.",
              this.pos,
              this.tokenEnd(this.pos),
            );
          break;
        }
        if (this.peek() === ",") {
          this.pos++;
          continue;
        }
        if (this.peek() !== ")") {
          this.fail("Missing argument separator", "A comma is required to separate each function argument from the next.", this.pos, this.tokenEnd(this.pos));
        }
      }
      this.pos++; // )
      return { k: "call", name, nameSpan, args, expandFinal, start: nameSpan.start, end: this.pos } as Expr;
    });
  }

  /** `[…]`: a tuple or a `for` expression building one (collections.ts). */
  protected abstract parseTupleOrFor(): Expr;
  /** `{…}`: an object or a `for` expression building one (collections.ts). */
  protected abstract parseObjectOrFor(): Expr;
  /** A quoted string template (templates.ts). */
  protected abstract parseQuoted(): Expr & { k: "template" };
  /** A `<<MARKER` heredoc template (templates.ts). */
  protected abstract parseHeredoc(): Expr;
}
