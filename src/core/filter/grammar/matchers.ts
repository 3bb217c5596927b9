/**
 * Grammar nodes compiled once to closures that run against a {@link ParserState} (the parser): sequence, choice,
 * repetition, lookahead (`&`/`!`, which flip the parser's "inverted" flag as pigeon does for its
 * expected-list bookkeeping), rule references and actions. The closures are cached per node and
 * shared by every parse.
 */
import type { ActionFn, PNode, PRule } from "./peg.js";

export const FAIL: unique symbol = Symbol("fail");
export type PResult = unknown | typeof FAIL;

/** A grammar node compiled to a closure (small stack frames keep deep nesting affordable). */
/** What a compiled grammar node asks of the parser running it (parser.ts's ParserState). */
export interface ParserState {
  pos: number;
  invert: boolean;
  parseRule(r: PRule): PResult;
  /** the rule of the parser's grammar (its dialect) with this name */
  rule(name: string): PRule;
  matchLit(cps: number[], want: string): PResult;
  matchClass(val: string, test: (cp: number) => boolean): PResult;
  matchAny(): PResult;
  failWith(msg: string): PResult;
  runAction(fn: ActionFn, v: unknown, start: number): PResult;
}

export type Matcher = (p: ParserState) => PResult;

const COMPILED = new Map<PNode, Matcher>();

export function compileNode(n: PNode): Matcher {
  const cached = COMPILED.get(n);
  if (cached) return cached;
  let m: Matcher;
  switch (n.t) {
    case "lit":
      m = (p) => p.matchLit(n.cps, n.want);
      break;
    case "cls":
      m = (p) => p.matchClass(n.val, n.test);
      break;
    case "any":
      m = (p) => p.matchAny();
      break;
    case "seq": {
      const items = n.items.map(compileNode);
      m = (p) => {
        const start = p.pos;
        const vals: unknown[] = [];
        for (const item of items) {
          const r = item(p);
          if (r === FAIL) {
            p.pos = start;
            return FAIL;
          }
          vals.push(r);
        }
        return vals;
      };
      break;
    }
    case "choice": {
      const alts = n.alts.map(compileNode);
      m = (p) => {
        for (const alt of alts) {
          const r = alt(p);
          if (r !== FAIL) return r;
        }
        return FAIL;
      };
      break;
    }
    case "star":
    case "plus": {
      const e = compileNode(n.e);
      const atLeastOne = n.t === "plus";
      m = (p) => {
        const vals: unknown[] = [];
        for (;;) {
          const before = p.pos;
          const r = e(p);
          if (r === FAIL) break;
          vals.push(r);
          if (p.pos === before) break; // cannot happen with this grammar; guards against looping
        }
        return atLeastOne && vals.length === 0 ? FAIL : vals;
      };
      break;
    }
    case "opt": {
      const e = compileNode(n.e);
      m = (p) => {
        const r = e(p);
        return r === FAIL ? null : r;
      };
      break;
    }
    case "and": {
      const e = compileNode(n.e);
      m = (p) => {
        const start = p.pos;
        const r = e(p);
        p.pos = start;
        return r === FAIL ? FAIL : null;
      };
      break;
    }
    case "not": {
      const e = compileNode(n.e);
      m = (p) => {
        const start = p.pos;
        p.invert = !p.invert;
        const r = e(p);
        p.invert = !p.invert;
        p.pos = start;
        return r === FAIL ? null : FAIL;
      };
      break;
    }
    case "fail":
      m = (p) => p.failWith(n.msg);
      break;
    case "ref":
      // resolved by the running parser: one node tree may serve several dialects' rule tables
      m = (p) => p.parseRule(p.rule(n.name));
      break;
    case "act": {
      const e = compileNode(n.e);
      m = (p) => {
        const start = p.pos;
        const r = e(p);
        return r === FAIL ? FAIL : p.runAction(n.fn, r, start);
      };
      break;
    }
  }
  COMPILED.set(n, m);
  return m;
}
