/**
 * A recursive-descent parser for HCL2's native syntax (the language of
 * HashiCorp's hclsyntax package): bodies of attributes and blocks, the full
 * expression grammar (operators, conditionals, `for` expressions, splats,
 * function calls with `...` expansion) and string templates with `${}`
 * interpolations, `%{if}`/`%{for}` directives, strip markers and heredocs.
 *
 * It works on characters rather than a separate token stream because HCL's
 * lexical rules change inside templates (a `"` inside `${…}` opens a nested
 * string). Syntax errors are reported with HCL's summaries and positions;
 * parsing stops at the first one, as the rest of a broken file tells little.
 */
import type { Attribute, BinaryOp, Block, Body, Expr, ObjectItem, Span, Step, TemplatePart } from "./ast.js";
import { type Diagnostic, errorDiag, HclDiagnosticsError, SourceFile } from "./source.js";

/** Parses a whole configuration file into its top-level body. */
export function parseConfig(text: string, filename: string): { body: Body; file: SourceFile } {
  const file = new SourceFile(filename, text);
  const parser = new Parser(file);
  const body = parser.parseBody(true);
  return { body, file };
}

/** Parses a standalone expression (e.g. a type constraint or a `-var` value). */
export function parseExpression(text: string, filename: string): { expr: Expr; file: SourceFile } {
  const file = new SourceFile(filename, text);
  const parser = new Parser(file);
  const expr = parser.parseStandaloneExpression();
  return { expr, file };
}

const FULL_SPLAT = /[ \t\r\n]*\*[ \t\r\n]*\]/y;
const SPLAT_STAR = /[ \t\r\n]*\*/y;
const DIGITS = /[0-9]+/y;
const NUMBER = /[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

/** How deep blocks and expressions may nest (standin's bound; HCL has none). */
const MAX_DEPTH = 200;

const ARGUMENT_REQUIRED_DETAIL = 'An argument or block definition is required here. To set an argument, use the equals sign "=" to introduce the argument value.';

const BINARY_LEVELS: readonly (readonly BinaryOp[])[] = [["||"], ["&&"], ["==", "!="], ["<", ">", "<=", ">="], ["+", "-"], ["*", "/", "%"]];
const BINARY_LEVELS_LONGEST_FIRST = BINARY_LEVELS.map((ops) => [...ops].sort((a, b) => b.length - a.length));

function isIdentStart(c: string): boolean {
  return /[\p{L}_]/u.test(c);
}
function isIdentChar(c: string): boolean {
  return /[\p{L}\p{N}_-]/u.test(c);
}

/** The diagnostics of a malformed `for` header: HCL words them differently in expressions and in template directives. */
interface ForWords {
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

const FOR_DIRECTIVE: ForWords = {
  summary: "Invalid 'for' directive",
  noName: "For directive requires variable name after 'for'.",
  noValueName: "For directive requires value variable name after comma.",
  noIn: "For directive requires 'in' keyword after names.",
};

class Parser {
  private pos = 0;
  /** While > 0 (inside brackets, parentheses, objects, interpolations) newlines are plain space. */
  private nesting = 0;
  private depth = 0;
  private readonly text: string;

  constructor(private readonly file: SourceFile) {
    this.text = file.text;
  }

  // ---- errors -------------------------------------------------------------

  private fail(summary: string, detail: string, start: number, end = start + 1): never {
    const clampedEnd = Math.min(Math.max(end, start), this.text.length);
    const diag: Diagnostic = errorDiag(summary, detail, this.file.range(Math.min(start, this.text.length), clampedEnd));
    throw new HclDiagnosticsError([diag]);
  }

  private invalidExpression(at: number): never {
    return this.fail("Invalid expression", "Expected the start of an expression, but found an invalid expression token.", at, this.tokenEnd(at));
  }

  /** End of the "token" at `at`, for diagnostic ranges. */
  private tokenEnd(at: number): number {
    if (at >= this.text.length) return at;
    const c = this.text[at] ?? "";
    if (isIdentStart(c)) {
      let i = at + 1;
      while (i < this.text.length && isIdentChar(this.text[i] ?? "")) i++;
      return i;
    }
    if (c === "\n") return at + 1;
    return at + (this.text.codePointAt(at)! > 0xffff ? 2 : 1);
  }

  /**
   * Bounds recursion (nested blocks, brackets, operators) so that hostile
   * input is a diagnostic, not a stack overflow; real job files nest a few
   * levels deep.
   */
  private deeper<T>(fn: () => T): T {
    if (this.depth >= MAX_DEPTH) {
      this.fail("Nesting too deep", `This configuration nests blocks or expressions more than ${MAX_DEPTH} levels deep.`, this.pos, this.tokenEnd(this.pos));
    }
    this.depth++;
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  // ---- low-level scanning -------------------------------------------------

  /** The text a sticky pattern matches at `at`, without copying the rest of the source. */
  private matchAt(pattern: RegExp, at: number): string | undefined {
    pattern.lastIndex = at;
    return pattern.exec(this.text)?.[0];
  }

  private peek(offset = 0): string {
    return this.text[this.pos + offset] ?? "";
  }

  private startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  /** Skips spaces and comments; newlines too when nested or when `newlines` is set. */
  private skip(newlines = this.nesting > 0): void {
    for (;;) {
      const c = this.peek();
      if (c === " " || c === "\t" || c === "\r") this.pos++;
      else if (c === "\n" && newlines) this.pos++;
      else if (c === "#" || (c === "/" && this.peek(1) === "/")) {
        while (this.pos < this.text.length && this.peek() !== "\n") this.pos++;
      } else if (c === "/" && this.peek(1) === "*") {
        const close = this.text.indexOf("*/", this.pos + 2);
        if (close < 0) this.fail("Unterminated block comment", "There is no closing marker for this block comment.", this.pos, this.pos + 2);
        this.pos = close + 2;
      } else return;
    }
  }

  private identifier(): string | undefined {
    if (!isIdentStart(this.peek())) return undefined;
    const start = this.pos;
    while (this.pos < this.text.length && isIdentChar(this.peek())) this.pos++;
    return this.text.slice(start, this.pos);
  }

  private withNesting<T>(fn: () => T): T {
    const saved = this.nesting;
    this.nesting = saved + 1;
    try {
      return fn();
    } finally {
      this.nesting = saved;
    }
  }

  private withoutNesting<T>(fn: () => T): T {
    const saved = this.nesting;
    this.nesting = 0;
    try {
      return fn();
    } finally {
      this.nesting = saved;
    }
  }

  // ---- bodies -------------------------------------------------------------

  parseBody(topLevel: boolean, bodyStart = 0): Body {
    const attributes: Attribute[] = [];
    const blocks: Block[] = [];
    for (;;) {
      this.skip(true);
      if (this.pos >= this.text.length) {
        if (!topLevel) {
          this.fail(
            "Unclosed configuration block",
            "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
            bodyStart - 1,
            bodyStart,
          );
        }
        return { attributes, blocks, start: bodyStart, end: this.pos, missingItem: { start: this.pos, end: this.pos } };
      }
      if (this.peek() === "}") {
        if (topLevel) this.fail("Argument or block definition required", "An argument or block definition is required here.", this.pos);
        return { attributes, blocks, start: bodyStart, end: this.pos, missingItem: { start: this.pos, end: this.pos + 1 } };
      }
      const { name, nameSpan } = this.itemName();
      this.skip(false);
      const next = this.peek();
      if (next === "=" && this.peek(1) !== "=") {
        this.pos++;
        const expr = this.withoutNesting(() => this.parseExpression());
        attributes.push({ name, nameSpan, expr, start: nameSpan.start, end: expr.end });
        this.endOfItem("Missing newline after argument", "An argument definition must end with a newline.");
      } else if (next === "{" || next === '"' || isIdentStart(next)) {
        blocks.push(this.parseBlock(name, nameSpan));
      } else {
        this.fail("Argument or block definition required", ARGUMENT_REQUIRED_DETAIL, nameSpan.start, nameSpan.end);
      }
    }
  }

  /** The name an argument or a block starts with, and where it stands; anything else is HCL's "definition required". */
  private itemName(): { name: string; nameSpan: { start: number; end: number } } {
    const start = this.pos;
    if (this.peek() === '"') this.fail("Invalid argument name", "Argument names must not be quoted.", start);
    const name = this.identifier();
    if (name === undefined) {
      this.fail("Argument or block definition required", "An argument or block definition is required here.", this.pos, this.tokenEnd(this.pos));
    }
    return { name, nameSpan: { start, end: this.pos } };
  }

  /** After an attribute or block: a newline, a comment, the end of file or the enclosing `}`. */
  private endOfItem(summary: string, detail: string): void {
    this.skip(false);
    const c = this.peek();
    if (c === "\n") {
      this.pos++;
      return;
    }
    if (c === "" || c === "}") return;
    if (c === "," && summary === "Missing newline after argument") {
      this.fail("Unexpected comma after argument", `Argument definitions must be separated by newlines, not commas. ${detail}`, this.pos, this.pos + 1);
    }
    this.fail(summary, detail, this.pos, this.tokenEnd(this.pos));
  }

  /** `name { arg = value }`: a block body on one line holds exactly one argument. */
  private parseSingleAttrBody(openBrace: number): Body {
    const bodyStart = this.pos;
    const { name, nameSpan } = this.itemName();
    this.skip(false);
    const next = this.peek();
    if (next === "{" || next === '"' || isIdentStart(next)) {
      this.fail(
        "Argument definition required",
        `A single-line block definition can contain only a single argument. If you meant to define argument ${JSON.stringify(name)}, use an equals sign to assign it a value. To define a nested block, place it on a line of its own within its parent block.`,
        nameSpan.start,
        this.tokenEnd(this.pos),
      );
    }
    if (next !== "=" || this.peek(1) === "=") this.fail("Argument or block definition required", ARGUMENT_REQUIRED_DETAIL, nameSpan.start, nameSpan.end);
    this.pos++;
    const expr = this.withoutNesting(() => this.parseExpression());
    this.skip(false);
    const close = this.peek();
    if (close === ",") {
      this.fail(
        "Invalid single-argument block definition",
        "Single-line block syntax can include only one argument definition. To define multiple arguments, use the multi-line block syntax with one argument definition per line.",
        this.pos,
        this.pos + 1,
      );
    } else if (close === "\n") {
      this.fail(
        "Invalid single-argument block definition",
        "An argument definition on the same line as its containing block creates a single-line block definition, which must also be closed on the same line. Place the block's closing brace immediately after the argument definition.",
        this.pos,
        this.pos + 1,
      );
    } else if (close === "") {
      this.fail(
        "Unclosed configuration block",
        "There is no closing brace for this block before the end of the file. This may be caused by incorrect brace nesting elsewhere in this file.",
        openBrace,
        openBrace + 1,
      );
    } else if (close !== "}") {
      this.fail(
        "Invalid single-argument block definition",
        "A single-line block definition must end with a closing brace immediately after its single argument definition.",
        this.pos,
        this.tokenEnd(this.pos),
      );
    }
    return {
      attributes: [{ name, nameSpan, expr, start: nameSpan.start, end: expr.end }],
      blocks: [],
      start: bodyStart,
      end: this.pos,
      missingItem: { start: this.pos, end: this.pos + 1 },
    };
  }

  private parseBlock(type: string, typeSpan: Span): Block {
    return this.deeper(() => this.parseBlockAfterType(type, typeSpan));
  }

  private parseBlockAfterType(type: string, typeSpan: Span): Block {
    const labels: string[] = [];
    const labelSpans: Span[] = [];
    for (;;) {
      this.skip(false);
      const c = this.peek();
      if (c === "{") break;
      const start = this.pos;
      if (c === '"') {
        const template = this.parseQuoted();
        const sequence = template.parts.find((p) => typeof p !== "string");
        if (sequence !== undefined) {
          // hcl points at the sequence's opening token: `${` or `%{`, with its `~` strip marker.
          const opener = this.text[sequence.start + 2] === "~" ? 3 : 2;
          this.fail(
            "Invalid string literal",
            'Template sequences are not allowed in this string. To include a literal "$", double it (as "$$") to escape it.',
            sequence.start,
            sequence.start + opener,
          );
        }
        labels.push(template.parts.join(""));
      } else if (isIdentStart(c)) {
        labels.push(this.identifier() ?? "");
      } else if (c === "=") {
        this.fail("Invalid block definition", 'The equals sign "=" indicates an argument definition, and must not be used when defining a block.', this.pos, this.pos + 1);
      } else if (c === "\n" || c === "#" || (c === "/" && this.peek(1) === "/")) {
        this.fail(
          "Invalid block definition",
          'A block definition must have block content delimited by "{" and "}", starting on the same line as the block header.',
          start,
          start + 1,
        );
      } else {
        this.fail("Invalid block definition", 'Either a quoted string block label or an opening brace ("{") is expected here.', this.pos, this.tokenEnd(this.pos));
      }
      labelSpans.push({ start, end: this.pos });
    }
    const openStart = this.pos;
    this.pos++; // {
    this.skip(false);
    const first = this.peek();
    const multiLine = first === "\n" || first === "" || first === "}" || first === "#" || (first === "/" && this.peek(1) === "/");
    const body = this.withoutNesting(() => (multiLine ? this.parseBody(false, openStart + 1) : this.parseSingleAttrBody(openStart)));
    this.pos++; // }
    const block: Block = { type, typeSpan, labels, labelSpans, body, openBrace: { start: openStart, end: openStart + 1 }, start: typeSpan.start, end: this.pos };
    this.endOfItem("Missing newline after block definition", "A block definition must end with a newline.");
    return block;
  }

  // ---- expressions --------------------------------------------------------

  parseStandaloneExpression(): Expr {
    this.skip(true);
    const expr = this.withNesting(() => this.parseExpression());
    this.skip(true);
    if (this.pos < this.text.length)
      this.fail("Extra characters after expression", "An expression was successfully parsed, but extra characters were found after it.", this.pos, this.tokenEnd(this.pos));
    return expr;
  }

  private parseExpression(): Expr {
    return this.deeper(() => this.parseConditional());
  }

  private parseConditional(): Expr {
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

  private parseBinary(level: number): Expr {
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

  private binaryOperator(level: number): BinaryOp | undefined {
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

  private parseUnary(): Expr {
    return this.deeper(() => this.parseUnaryOperand());
  }

  private parseUnaryOperand(): Expr {
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

  private parsePostfix(source: Expr): Expr {
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
  private parseSplatSteps(item: Expr, attributesOnly: boolean): Expr {
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
  private parseStep(): { literal?: Step; key?: Expr } {
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

  private parsePrimary(): Expr {
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

  private parseNumber(): Expr {
    const start = this.pos;
    const lexeme = this.matchAt(NUMBER, this.pos) ?? "";
    this.pos += lexeme.length;
    return { k: "literal", value: Number(lexeme), start, end: this.pos };
  }

  private parseCall(name: string, nameSpan: Span): Expr {
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

  private atKeyword(word: string): boolean {
    if (!this.startsWith(word)) return false;
    return !isIdentChar(this.text[this.pos + word.length] ?? "");
  }

  private parseTupleOrFor(): Expr {
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

  private parseObjectOrFor(): Expr {
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
  private parseForHeader(words: ForWords): { keyVar: string | undefined; valueVar: string; collection: Expr } {
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

  private parseFor(start: number, object: boolean): Expr {
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

  // ---- templates ----------------------------------------------------------

  private parseQuoted(): Expr & { k: "template" } {
    const start = this.pos;
    this.pos++; // "
    const tokens = this.scanTemplate({ quoted: true, end: this.text.length });
    return { k: "template", parts: buildTemplate(tokens, this, false), heredoc: false, start, end: this.pos };
  }

  private parseHeredoc(): Expr {
    const start = this.pos;
    this.pos += 2;
    const flush = this.peek() === "-";
    if (flush) this.pos++;
    const marker = this.identifier();
    if (marker === undefined || this.peek() !== "\n") {
      this.fail("Invalid heredoc introducer", "A heredoc introducer must be followed by an identifier and a newline.", start, this.pos);
    }
    this.pos++; // newline
    const contentStart = this.pos;
    // Find the closing marker: a line holding only the marker (maybe indented).
    let lineStart = contentStart;
    let contentEnd = -1;
    let after = -1;
    while (lineStart <= this.text.length) {
      const nl = this.text.indexOf("\n", lineStart);
      const lineEnd = nl < 0 ? this.text.length : nl;
      if (this.text.slice(lineStart, lineEnd).trim() === marker) {
        contentEnd = lineStart;
        after = lineEnd;
        break;
      }
      if (nl < 0) break;
      lineStart = nl + 1;
    }
    if (contentEnd < 0) {
      this.fail("Unterminated template string", "No closing marker was found for the string.", start, this.pos);
    }
    this.pos = contentStart;
    const tokens = this.scanTemplate({ quoted: false, end: contentEnd });
    this.pos = after;
    return { k: "template", parts: buildTemplate(tokens, this, flush), heredoc: true, start, end: after };
  }

  /**
   * Scans template text into literal strings, interpolations and directive
   * markers. In a heredoc every literal ends at its line's newline, as HCL's
   * scanner cuts them (`heredocLiteralEOL`): strip markers and `<<-` work on
   * those tokens, not on the text as a whole.
   */
  private scanTemplate(opts: { quoted: boolean; end: number }): TemplateToken[] {
    const tokens: TemplateToken[] = [];
    let literal = "";
    const flush = (): void => {
      if (literal) tokens.push({ t: "text", text: literal });
      literal = "";
    };
    while (this.pos < opts.end) {
      const c = this.peek();
      if (opts.quoted && c === '"') {
        this.pos++;
        flush();
        return tokens;
      }
      if (opts.quoted && c === "\n") {
        this.fail(
          "Invalid multi-line string",
          'Quoted strings may not be split over multiple lines. To produce a multi-line string, either use the \\n escape to represent a newline character or use the "heredoc" multi-line template syntax.',
          this.pos,
          this.pos + 1,
        );
      }
      if ((c === "$" || c === "%") && this.peek(1) === c && this.peek(2) === "{") {
        literal += `${c}{`;
        this.pos += 3;
        continue;
      }
      if ((c === "$" || c === "%") && this.peek(1) === "{") {
        flush();
        tokens.push(c === "$" ? this.scanInterpolation() : this.scanDirective());
        continue;
      }
      if (opts.quoted && c === "\\") {
        literal += this.scanEscape();
        continue;
      }
      literal += c;
      this.pos++;
      if (c === "\n") flush();
    }
    if (opts.quoted) this.fail("Unterminated template string", "No closing marker was found for the string.", this.pos - 1, this.pos);
    flush();
    return tokens;
  }

  private scanEscape(): string {
    const start = this.pos;
    const c = this.peek(1);
    this.pos += 2;
    switch (c) {
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case '"':
        return '"';
      case "\\":
        return "\\";
      case "u":
      case "U": {
        const len = c === "u" ? 4 : 8;
        const hex = this.text.slice(this.pos, this.pos + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) {
          this.fail("Invalid escape sequence", `The \\${c} escape sequence must be followed by ${len} hexadecimal digits.`, start, this.pos);
        }
        this.pos += len;
        return String.fromCodePoint(Number.parseInt(hex, 16));
      }
      default:
        return this.fail("Invalid escape sequence", `The symbol "${c}" is not a valid escape sequence selector.`, start + 1, start + 2);
    }
  }

  private scanInterpolation(): TemplateToken {
    const start = this.pos;
    this.pos += 2; // ${
    let stripLeft = false;
    if (this.peek() === "~") {
      stripLeft = true;
      this.pos++;
    }
    const expr = this.withNesting(() => {
      const e = this.parseExpression();
      this.skip();
      return e;
    });
    const stripRight = this.closeTemplateSequence("interpolation");
    return { t: "interp", expr, stripLeft, stripRight, start, end: this.pos };
  }

  /** `~}` or `}` closing an interpolation or directive; returns whether `~` was present. */
  private closeTemplateSequence(what: string): boolean {
    let strip = false;
    if (this.peek() === "~") {
      strip = true;
      this.pos++;
    }
    if (this.peek() !== "}") {
      this.fail(
        `Extra characters after ${what} expression`,
        "Expected a closing brace to end the interpolation expression, but found extra characters.",
        this.pos,
        this.tokenEnd(this.pos),
      );
    }
    this.pos++;
    return strip;
  }

  private scanDirective(): TemplateToken {
    const start = this.pos;
    this.pos += 2; // %{
    let stripLeft = false;
    if (this.peek() === "~") {
      stripLeft = true;
      this.pos++;
    }
    return this.withNesting(() => {
      this.skip();
      const keywordStart = this.pos;
      const keyword = this.identifier();
      this.skip();
      let token: TemplateToken;
      if (keyword === "if") {
        const condition = this.parseExpression();
        this.skip();
        token = { t: "if", condition, stripLeft, stripRight: false, start, end: 0 };
      } else if (keyword === "else" || keyword === "endif" || keyword === "endfor") {
        token = { t: keyword, stripLeft, stripRight: false, start, end: 0 };
      } else if (keyword === "for") {
        const { keyVar, valueVar, collection } = this.parseForHeader(FOR_DIRECTIVE);
        token = { t: "for", keyVar, valueVar, collection, stripLeft, stripRight: false, start, end: 0 };
      } else {
        return this.fail(
          "Invalid template directive",
          'A template directive keyword ("if", "for", etc) is expected at the beginning of a %{ sequence.',
          keywordStart,
          this.tokenEnd(keywordStart),
        );
      }
      const stripRight = this.closeTemplateSequence("directive");
      return { ...token, stripRight, end: this.pos } as TemplateToken;
    });
  }

  /** Raised by the template builder for unbalanced directives. */
  directiveError(summary: string, detail: string, span: Span): never {
    return this.fail(summary, detail, span.start, span.end);
  }
}

type TemplateToken =
  | { t: "text"; text: string }
  | ({ t: "interp"; expr: Expr; stripLeft: boolean; stripRight: boolean } & Span)
  | ({ t: "if"; condition: Expr; stripLeft: boolean; stripRight: boolean } & Span)
  | ({ t: "else" | "endif" | "endfor"; stripLeft: boolean; stripRight: boolean } & Span)
  | ({ t: "for"; keyVar: string | undefined; valueVar: string; collection: Expr; stripLeft: boolean; stripRight: boolean } & Span);

/** Go's `unicode.IsSpace`, the whitespace strip markers and `<<-` act on. */
const GO_SPACE = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const LEADING_SPACE = new RegExp(`^[${GO_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${GO_SPACE}]+$`);

/**
 * Applies strip markers (`~`), the flush heredoc rule (`<<-`) and nests
 * `%{if}`/`%{for}` directives into a tree, in the order of HCL's
 * `parseTemplateInner`.
 */
function buildTemplate(tokens: TemplateToken[], parser: Parser, flushHeredoc: boolean): TemplatePart[] {
  const texts = tokens.map((t) => (t.t === "text" ? t.text : undefined));
  // `~}` trims the leading whitespace of the next literal token and `${~`/`%{~` the trailing whitespace of the
  // previous one: in a heredoc that is one line's worth (parseTemplateParts), never the lines beyond.
  tokens.forEach((t, i) => {
    if (t.t === "text") return;
    const prev = texts[i - 1];
    const next = texts[i + 1];
    if (t.stripLeft && prev !== undefined) texts[i - 1] = prev.replace(TRAILING_SPACE, "");
    if (t.stripRight && next !== undefined) texts[i + 1] = next.replace(LEADING_SPACE, "");
  });
  if (flushHeredoc) flushHeredocLines(texts);
  let index = 0;
  const parseSeq = (terminators: readonly string[]): { parts: TemplatePart[]; end?: TemplateToken } => {
    const parts: TemplatePart[] = [];
    while (index < tokens.length) {
      const token = tokens[index] as TemplateToken;
      const i = index++;
      if (token.t === "text") {
        const text = texts[i] ?? "";
        if (text) parts.push(text);
      } else if (token.t === "interp") {
        parts.push({ k: "interp", expr: token.expr, start: token.start, end: token.end });
      } else if (terminators.includes(token.t)) {
        return { parts, end: token };
      } else if (token.t === "if") {
        const thenSeq = parseSeq(["else", "endif"]);
        let elseParts: TemplatePart[] = [];
        if (thenSeq.end?.t === "else") {
          const elseSeq = parseSeq(["endif"]);
          if (!elseSeq.end) parser.directiveError("Unterminated template directive", "There is no matching %{ endif } for this %{ if }.", token);
          elseParts = elseSeq.parts;
        } else if (!thenSeq.end) parser.directiveError("Unterminated template directive", "There is no matching %{ endif } for this %{ if }.", token);
        parts.push({ k: "if", condition: token.condition, whenTrue: thenSeq.parts, whenFalse: elseParts, start: token.start, end: token.end });
      } else if (token.t === "for") {
        const bodySeq = parseSeq(["endfor"]);
        if (!bodySeq.end) parser.directiveError("Unterminated template directive", "There is no matching %{ endfor } for this %{ for }.", token);
        parts.push({ k: "for", keyVar: token.keyVar, valueVar: token.valueVar, collection: token.collection, body: bodySeq.parts, start: token.start, end: token.end });
      } else {
        parser.directiveError("Unexpected template directive", `The directive %{ ${token.t} } is not expected here.`, token);
      }
    }
    return { parts };
  };
  const parts = parseSeq([]).parts;
  // HCL passes a template's value through unconverted only when the template is one interpolation and nothing
  // else (parseTemplateInner's passthru); a literal that a strip marker emptied still counts as something else.
  const [only] = parts;
  if (tokens.length > 1 && parts.length === 1 && typeof only === "object" && only.k === "interp") return [only, ""];
  return parts;
}

/**
 * The `<<-` rule as HCL's `flushHeredocTemplateParts` applies it, after the
 * strip markers: a token starts a line when it is the first one or follows a
 * literal ending in a newline; the fewest leading spaces (in characters) of
 * those line starts is cut from each of them. A whitespace-only line is not
 * counted and keeps its spaces; a line that starts with `${` or `%{` counts as
 * zero; a line whose newline a `~}` removed no longer starts the next one.
 */
function flushHeredocLines(texts: (string | undefined)[]): void {
  let fewest = Number.POSITIVE_INFINITY;
  let lineStart = true;
  const adjust: number[] = [];
  texts.forEach((text, i) => {
    if (lineStart) {
      lineStart = false;
      if (text === undefined) fewest = 0;
      else {
        const prefix = LEADING_SPACE.exec(text)?.[0] ?? "";
        if (!(prefix.length === text.length && text.endsWith("\n"))) {
          fewest = Math.min(fewest, spaceCount(prefix));
          adjust.push(i);
        }
      }
    }
    if (text?.endsWith("\n")) lineStart = true;
  });
  if (!Number.isFinite(fewest) || fewest === 0) return;
  for (const i of adjust) texts[i] = cutSpaces(texts[i] ?? "", fewest);
}

/** Characters in a run of whitespace as grapheme clusters count them (`\r\n` is one). */
function spaceCount(prefix: string): number {
  return [...prefix].length - (prefix.match(/\r\n/g)?.length ?? 0);
}

/** `text` less its first `count` whitespace characters (all in the BMP; a `\r\n` counting once). */
function cutSpaces(text: string, count: number): string {
  let at = 0;
  for (let n = 0; n < count && at < text.length; n++) at += text.startsWith("\r\n", at) ? 2 : 1;
  return text.slice(at);
}
