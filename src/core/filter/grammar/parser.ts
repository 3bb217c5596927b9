/**
 * Parsing mirrors the pigeon PEG grammar (`grammar/grammar.peg`, transcribed in rules.ts) rule for rule,
 * and a small PEG interpreter (this file, with matchers.ts) reproduces pigeon's error reporting: `line:col (offset): rule "name": message` for the grammar's own errors
 * (`Unterminated string literal`, `Invalid number literal`, `Invalid index`, `Unclosed index expression`,
 * `Invalid selector`, `Unmatched parentheses`, and `invalid syntax` from `strconv.Unquote`), and
 * `line:col (offset): no match found, expected: …` (farthest failure) otherwise. Several errors are joined
 * with a newline, after pigeon's de-duplication. Columns count runes, offsets count UTF-8 bytes.
 * Differences from the generated Go parser: rule results are memoised (pigeon without `Memoize` is
 * exponential on nested parentheses; the memo is invisible in the results because every side effect it
 * skips is idempotent), and nesting deeper than {@link MAX_RULE_DEPTH} rules, or more than 2,000,000
 * parsing steps, is refused with a {@link FilterParseError} instead of exhausting the stack.
 */
import type { Expr } from "../ast.js";
import { FilterParseError } from "../errors.js";
import { compileNode, FAIL, type Matcher, type ParserState, type PResult } from "./matchers.js";
import type { ActionFn, PRule } from "./peg.js";
import { GRAMMARS, type Dialect } from "./rules.js";

/** Rule nesting refused beyond this depth (about 150 levels of parentheses, or 600 chained `and`s): about half of what a cold V8 stack holds. */
const MAX_RULE_DEPTH = 600;
/** Parsing steps refused beyond this count (go-bexpr v0.1.15's default for pigeon's MaxExpressions). */
const MAX_EXPRESSIONS = 2_000_000;

interface Position {
  line: number;
  col: number;
  offset: number;
}

const RULE_MATCHERS = new Map<PRule, Matcher>();

export class PegParser implements ParserState {
  pos = 0;
  invert = false;
  private readonly input: string;
  private readonly cps: number[];
  /** UTF-16 index of each rune (and of the end) */
  private readonly u16: number[];
  private readonly positions: Position[];
  private readonly errs: string[] = [];
  private maxFailPos: Position = { line: 1, col: 1, offset: 0 };
  private readonly maxFailExpected = new Set<string>();
  private readonly rstack: PRule[] = [];
  private readonly memo = new Map<string, { r: PResult; end: number }>();
  private exprCnt = 0;

  private readonly rules: ReadonlyMap<string, PRule>;

  constructor(input: string, dialect: Dialect = "nomad") {
    this.input = input;
    this.rules = GRAMMARS[dialect];
    this.cps = [];
    this.u16 = [];
    for (let i = 0; i < input.length; ) {
      const cp = input.codePointAt(i)!;
      this.cps.push(cp);
      this.u16.push(i);
      i += cp > 0xffff ? 2 : 1;
    }
    this.u16.push(input.length);
    // pigeon's read(): col counts runes, a '\n' moves to the next line at column 0, offsets are UTF-8 bytes
    this.positions = [];
    let line = 1;
    let col = 0;
    let offset = 0;
    for (let i = 0; i <= this.cps.length; i++) {
      col++;
      const cp = i < this.cps.length ? this.cps[i]! : -1;
      if (cp === 0x0a) {
        line++;
        col = 0;
      }
      this.positions.push({ line, col, offset });
      if (cp >= 0) offset += utf8Length(cp);
    }
  }

  run(): Expr {
    this.checkEncoding();
    const r = this.parseRule(this.rule("Input"));
    if (r === FAIL && this.errs.length === 0) {
      const wants = new Set(this.maxFailExpected);
      const eof = wants.delete("!.");
      const expected = [...wants].sort(compareBytes);
      if (eof) expected.push("EOF");
      this.addErrAt(`no match found, expected: ${listJoin(expected, ", ", "or")}`, this.maxFailPos);
    }
    if (this.errs.length > 0) throw new FilterParseError([...new Set(this.errs)].join("\n"));
    return r as Expr;
  }

  rule(name: string): PRule {
    return this.rules.get(name)!;
  }

  parseRule(r: PRule): PResult {
    const key = `${r.id}:${this.pos}:${this.invert ? 1 : 0}`;
    const hit = this.memo.get(key);
    if (hit) {
      this.pos = hit.end;
      return hit.r;
    }
    if (this.rstack.length >= MAX_RULE_DEPTH) this.refuse(`rule ${r.display ?? r.name}: expression nests too deeply`);
    this.count();
    let m = RULE_MATCHERS.get(r);
    if (!m) {
      m = compileNode(r.e);
      RULE_MATCHERS.set(r, m);
    }
    this.rstack.push(r);
    const res = m(this);
    this.rstack.pop();
    this.memo.set(key, { r: res, end: this.pos });
    return res;
  }

  matchLit(cps: number[], want: string): PResult {
    this.count();
    const start = this.pos;
    for (const cp of cps) {
      if (this.cps[this.pos] !== cp) {
        this.failAt(false, start, want);
        this.pos = start;
        return FAIL;
      }
      this.read();
    }
    this.failAt(true, start, want);
    return this.text(start);
  }

  matchClass(val: string, test: (cp: number) => boolean): PResult {
    this.count();
    const start = this.pos;
    const cp = this.cps[this.pos];
    if (cp === undefined || !test(cp)) {
      this.failAt(false, start, val);
      return FAIL;
    }
    this.read();
    this.failAt(true, start, val);
    return this.text(start);
  }

  matchAny(): PResult {
    this.count();
    const start = this.pos;
    if (start >= this.cps.length) {
      this.failAt(false, start, ".");
      return FAIL;
    }
    this.read();
    this.failAt(true, start, ".");
    return this.text(start);
  }

  /** an and-code block returning an error: the error is recorded at the current position and the match fails */
  failWith(msg: string): PResult {
    this.addErrAt(msg, this.positions[this.pos]!);
    return FAIL;
  }

  /** an action's error is recorded at the start of its match; the match still succeeds with the action's value */
  runAction(fn: ActionFn, v: unknown, start: number): PResult {
    const res = fn(v, this.text(start));
    if (res.err !== undefined) this.addErrAt(res.err, this.positions[start]!);
    return res.v;
  }

  private count(): void {
    if (++this.exprCnt > MAX_EXPRESSIONS) this.refuse("max number of expressions parsed");
  }

  private refuse(msg: string): never {
    const p = this.positions[this.pos]!;
    throw new FilterParseError(`${p.line}:${p.col} (${p.offset}): ${msg}`);
  }

  private addErrAt(msg: string, p: Position): void {
    let prefix = `${p.line}:${p.col} (${p.offset})`;
    const top = this.rstack[this.rstack.length - 1];
    if (top) prefix += `: rule ${top.display ?? top.name}`;
    this.errs.push(`${prefix}: ${msg}`);
  }

  private failAt(failed: boolean, at: number, want: string): void {
    if (failed !== this.invert) return;
    const p = this.positions[at]!;
    if (p.offset < this.maxFailPos.offset) return;
    if (p.offset > this.maxFailPos.offset) {
      this.maxFailPos = p;
      this.maxFailExpected.clear();
    }
    this.maxFailExpected.add(this.invert ? `!${want}` : want);
  }

  private read(): void {
    this.pos++;
    this.checkEncoding();
  }

  /** A lone surrogate cannot be UTF-8: pigeon reports invalid input bytes as "invalid encoding". */
  private checkEncoding(): void {
    const cp = this.cps[this.pos];
    if (cp !== undefined && cp >= 0xd800 && cp <= 0xdfff) this.addErrAt("invalid encoding", this.positions[this.pos]!);
  }

  private text(start: number): string {
    return this.input.slice(this.u16[start], this.u16[this.pos]);
  }
}

/** Parses in the dialect of a go-bexpr version: `nomad` (v0.1.13, the default) or `consul` (v0.1.2); see rules.ts. */
export function parseExpression(expression: string, dialect: Dialect = "nomad"): Expr {
  return new PegParser(expression, dialect).run();
}

function utf8Length(cp: number): number {
  if (cp < 0x80) return 1;
  if (cp < 0x800) return 2;
  if (cp < 0x10000) return 3;
  return 4;
}

function compareBytes(a: string, b: string): number {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(ea.length, eb.length); i++) if (ea[i] !== eb[i]) return ea[i]! - eb[i]!;
  return ea.length - eb.length;
}

function listJoin(list: string[], sep: string, lastSep: string): string {
  if (list.length === 0) return "";
  if (list.length === 1) return list[0]!;
  return `${list.slice(0, -1).join(sep)} ${lastSep} ${list[list.length - 1]}`;
}
