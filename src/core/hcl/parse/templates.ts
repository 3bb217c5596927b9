/**
 * HCL's string templates: quoted strings with their escapes, heredocs, and
 * the `${…}` interpolations and `%{…}` directives inside both, scanned into
 * tokens that template-tree.ts nests and trims.
 */
import type { Expr, Span } from "../ast.js";
import { CollectionParser, FOR_DIRECTIVE } from "./collections.js";
import { buildTemplate, type TemplateToken } from "./template-tree.js";

export abstract class TemplateParser extends CollectionParser {
  protected override parseQuoted(): Expr & { k: "template" } {
    const start = this.pos;
    this.pos++; // "
    const tokens = this.scanTemplate({ quoted: true, end: this.text.length });
    return { k: "template", parts: buildTemplate(tokens, this, false), heredoc: false, start, end: this.pos };
  }

  protected override parseHeredoc(): Expr {
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
  protected scanTemplate(opts: { quoted: boolean; end: number }): TemplateToken[] {
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

  protected scanEscape(): string {
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

  protected scanInterpolation(): TemplateToken {
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
  protected closeTemplateSequence(what: string): boolean {
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

  protected scanDirective(): TemplateToken {
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
