/**
 * The vocabulary the grammar is written in: PEG expression nodes with pigeon's semantics
 * (pigeon's generated_static_code.go), the small constructors grammar/rules.ts uses to transcribe
 * grammar.peg (`seq`, `choice`, `star`, `act`, …), and the shape of an action's result (a value,
 * and optionally an error recorded at the start of the match, as a pigeon action returning an error).
 */
import { goQuote } from "../../go/strconv.js";

export type ActionResult = { v: unknown; err?: string };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ActionFn = (v: any, text: string) => ActionResult;

export type PNode =
  | { t: "lit"; cps: number[]; want: string }
  | { t: "cls"; val: string; test: (cp: number) => boolean }
  | { t: "any" }
  | { t: "seq"; items: PNode[] }
  | { t: "choice"; alts: PNode[] }
  | { t: "star"; e: PNode }
  | { t: "plus"; e: PNode }
  | { t: "opt"; e: PNode }
  | { t: "and"; e: PNode }
  | { t: "not"; e: PNode }
  | { t: "fail"; msg: string }
  | { t: "ref"; name: string }
  | { t: "act"; e: PNode; fn: ActionFn };

export interface PRule {
  id: number;
  name: string;
  display: string | null;
  e: PNode;
}

export const lit = (s: string): PNode => ({ t: "lit", cps: Array.from(s, (c) => c.codePointAt(0)!), want: goQuote(s) });
export const cls = (val: string, re: RegExp): PNode => ({ t: "cls", val, test: (cp) => re.test(String.fromCodePoint(cp)) });
export const ANY: PNode = { t: "any" };
export const seq = (...items: PNode[]): PNode => ({ t: "seq", items });
export const choice = (...alts: PNode[]): PNode => ({ t: "choice", alts });
export const star = (e: PNode): PNode => ({ t: "star", e });
export const plus = (e: PNode): PNode => ({ t: "plus", e });
export const opt = (e: PNode): PNode => ({ t: "opt", e });
export const and = (e: PNode): PNode => ({ t: "and", e });
export const not = (e: PNode): PNode => ({ t: "not", e });
export const fail = (msg: string): PNode => ({ t: "fail", msg });
export const ref = (name: string): PNode => ({ t: "ref", name });
export const act = (e: PNode, fn: ActionFn): PNode => ({ t: "act", e, fn });
export const ok = (v: unknown): ActionResult => ({ v });
