/**
 * HCL's bodies: arguments (`name = expression`) and blocks (`type "label" {
 * … }`), including the single-line block form, with HCL's diagnostics for
 * each malformed shape. The top of the parser's class chain.
 */
import type { Attribute, Block, Body, Span } from "../ast.js";
import { isIdentStart } from "./scanner.js";
import { TemplateParser } from "./templates.js";

const ARGUMENT_REQUIRED_DETAIL = 'An argument or block definition is required here. To set an argument, use the equals sign "=" to introduce the argument value.';

export class BodyParser extends TemplateParser {
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
  protected itemName(): { name: string; nameSpan: { start: number; end: number } } {
    const start = this.pos;
    if (this.peek() === '"') this.fail("Invalid argument name", "Argument names must not be quoted.", start);
    const name = this.identifier();
    if (name === undefined) {
      this.fail("Argument or block definition required", "An argument or block definition is required here.", this.pos, this.tokenEnd(this.pos));
    }
    return { name, nameSpan: { start, end: this.pos } };
  }

  /** After an attribute or block: a newline, a comment, the end of file or the enclosing `}`. */
  protected endOfItem(summary: string, detail: string): void {
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
  protected parseSingleAttrBody(openBrace: number): Body {
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

  protected parseBlock(type: string, typeSpan: Span): Block {
    return this.deeper(() => this.parseBlockAfterType(type, typeSpan));
  }

  protected parseBlockAfterType(type: string, typeSpan: Span): Block {
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
}
