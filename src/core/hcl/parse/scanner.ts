/**
 * The character cursor under HCL's native-syntax parser: position, nesting
 * (where newlines are plain space), the recursion bound, diagnostics, and the
 * low-level scanning every construct's parser shares (spaces and comments,
 * identifiers, keywords).
 */
import { type Diagnostic, errorDiag, HclDiagnosticsError, type SourceFile } from "../source.js";

/** How deep blocks and expressions may nest (standin's bound; HCL has none). */
const MAX_DEPTH = 200;

export function isIdentStart(c: string): boolean {
  return /[\p{L}_]/u.test(c);
}
export function isIdentChar(c: string): boolean {
  return /[\p{L}\p{N}_-]/u.test(c);
}

/** The cursor and the shared scanning; each construct's parser extends it (bodies → templates → collections → expressions → scanner). */
export abstract class Scanner {
  protected pos = 0;
  /** While > 0 (inside brackets, parentheses, objects, interpolations) newlines are plain space. */
  protected nesting = 0;
  protected depth = 0;
  protected readonly text: string;

  constructor(private readonly file: SourceFile) {
    this.text = file.text;
  }

  // ---- errors -------------------------------------------------------------

  protected fail(summary: string, detail: string, start: number, end = start + 1): never {
    const clampedEnd = Math.min(Math.max(end, start), this.text.length);
    const diag: Diagnostic = errorDiag(summary, detail, this.file.range(Math.min(start, this.text.length), clampedEnd));
    throw new HclDiagnosticsError([diag]);
  }

  protected invalidExpression(at: number): never {
    return this.fail("Invalid expression", "Expected the start of an expression, but found an invalid expression token.", at, this.tokenEnd(at));
  }

  /** End of the "token" at `at`, for diagnostic ranges. */
  protected tokenEnd(at: number): number {
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
  protected deeper<T>(fn: () => T): T {
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
  protected matchAt(pattern: RegExp, at: number): string | undefined {
    pattern.lastIndex = at;
    return pattern.exec(this.text)?.[0];
  }

  protected peek(offset = 0): string {
    return this.text[this.pos + offset] ?? "";
  }

  protected startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  /** Skips spaces and comments; newlines too when nested or when `newlines` is set. */
  protected skip(newlines = this.nesting > 0): void {
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

  protected identifier(): string | undefined {
    if (!isIdentStart(this.peek())) return undefined;
    const start = this.pos;
    while (this.pos < this.text.length && isIdentChar(this.peek())) this.pos++;
    return this.text.slice(start, this.pos);
  }

  protected withNesting<T>(fn: () => T): T {
    const saved = this.nesting;
    this.nesting = saved + 1;
    try {
      return fn();
    } finally {
      this.nesting = saved;
    }
  }

  protected withoutNesting<T>(fn: () => T): T {
    const saved = this.nesting;
    this.nesting = 0;
    try {
      return fn();
    } finally {
      this.nesting = saved;
    }
  }

  protected atKeyword(word: string): boolean {
    if (!this.startsWith(word)) return false;
    return !isIdentChar(this.text[this.pos + word.length] ?? "");
  }
}
