/**
 * Positions, ranges and diagnostics of HCL2 source text, rendered the way
 * HashiCorp's HCL prints them (`file:line,col-endcol: Summary; Detail`), so
 * callers can reproduce the error text of the Go tools that embed HCL.
 */

export interface Pos {
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, counted in characters (code points). */
  readonly column: number;
  /** 0-based offset into the source string (UTF-16 units, for slicing). */
  readonly offset: number;
}

export interface Range {
  readonly filename: string;
  readonly start: Pos;
  /** Exclusive end. */
  readonly end: Pos;
}

/** HCL's `Range.String()`: `file:L,C-C2` on one line, `file:L,C-L2,C2` across lines. */
export function rangeString(r: Range): string {
  if (r.start.line === r.end.line) return `${r.filename}:${r.start.line},${r.start.column}-${r.end.column}`;
  return `${r.filename}:${r.start.line},${r.start.column}-${r.end.line},${r.end.column}`;
}

export interface Diagnostic {
  readonly severity: "error" | "warning";
  readonly summary: string;
  readonly detail: string;
  /** Absent for diagnostics about no particular place (Go prints `<nil>`). */
  readonly subject?: Range;
}

/** HCL's `Diagnostic.Error()`: `<subject>: <summary>; <detail>`. */
export function diagnosticString(d: Diagnostic): string {
  return `${d.subject ? rangeString(d.subject) : "<nil>"}: ${d.summary}; ${d.detail}`;
}

/** HCL's `Diagnostics.Error()`: the first diagnostic, then how many others there are. */
export function diagnosticsString(diags: readonly Diagnostic[]): string {
  const first = diags[0];
  if (!first) return "no diagnostics";
  if (diags.length === 1) return diagnosticString(first);
  return `${diagnosticString(first)}, and ${diags.length - 1} other diagnostic(s)`;
}

/** Thrown by the parser and evaluator; carries every diagnostic found. */
export class HclDiagnosticsError extends Error {
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[]) {
    super(diagnosticsString(diagnostics));
    this.name = "HclDiagnosticsError";
    this.diagnostics = diagnostics;
  }
}

/**
 * A bound of standin's own (evaluations, value sizes) was reached: not an HCL
 * error a `try()`/`can()` may catch or a caller may collect beside others,
 * so it ends the evaluation of the whole file with its one diagnostic.
 */
export class HclLimitError extends Error {
  readonly diagnostic: Diagnostic;
  constructor(diagnostic: Diagnostic) {
    super(diagnosticString(diagnostic));
    this.name = "HclLimitError";
    this.diagnostic = diagnostic;
  }
}

export function errorDiag(summary: string, detail: string, subject?: Range): Diagnostic {
  return subject ? { severity: "error", summary, detail, subject } : { severity: "error", summary, detail };
}

/** Maps offsets of one source text to line/column positions. */
export class SourceFile {
  readonly filename: string;
  readonly text: string;
  private readonly lineStarts: number[] = [0];

  constructor(filename: string, text: string) {
    this.filename = filename;
    this.text = text;
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  pos(offset: number): Pos {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    const lineStart = this.lineStarts[lo] ?? 0;
    // Columns count code points, as HCL counts characters, not UTF-16 units.
    let column = 1;
    for (let i = lineStart; i < offset; i++) {
      const c = this.text.charCodeAt(i);
      if (c >= 0xdc00 && c <= 0xdfff && i > lineStart) continue;
      column++;
    }
    return { line: lo + 1, column, offset };
  }

  range(start: number, end: number): Range {
    return { filename: this.filename, start: this.pos(start), end: this.pos(end) };
  }
}
