/**
 * go-bexpr's grammar (grammar/grammar.peg, v0.1.13) transcribed rule for rule into PEG nodes, with the
 * actions that build the AST (ast.ts). {@link GRAMMARS} holds one rule table per dialect, the table the
 * parser starts from (`Input`) and resolves `ref`s in. One cohesive transcription, kept in one file so
 * that it can be read against grammar.peg side by side.
 *
 * Dialects: `nomad` is v0.1.13 (Nomad's pin) plus the single-quoted index keys the specification uses;
 * `consul` is **v0.1.2** (the version Consul's `CreateFilter(expr, nil, type)` pins), whose grammar is
 * v0.1.13's without `any`/`all` collection expressions, without JSON-pointer selectors (`"/a/b"`),
 * without numeric selector segments (`.0`), with identifiers of `[a-zA-Z0-9_]` (no `/`) after the first
 * letter, and with index keys that are string literals only. Everything else (precedence, operators,
 * values, numbers, strings, error rules) is the same in both.
 */
import type { BindMode, Expr, MatchOp, NameBinding, Selector } from "../ast.js";
import { selectorString } from "../ast.js";
import { parseJsonPointer } from "../values/pointer.js";
import { act, and, ANY, choice, cls, fail, lit, not, ok, opt, plus, ref, seq, star, type PNode, type PRule } from "./peg.js";
import { goUnquote } from "./unquote.js";

export type Dialect = "nomad" | "consul";

function buildGrammar(dialect: Dialect): Map<string, PRule> {
  const rules = new Map<string, PRule>();
  const rule = (name: string, display: string | null, e: PNode): void => {
    rules.set(name, { id: rules.size, name, display: display === null ? null : `"${display}"`, e });
  };
  const nomad = dialect === "nomad";
  // grammar/grammar.peg (v0.1.13). The rules up to EOF are transcribed from the generated parser. The two
  // collection rules (added in v0.1.13 by "Add any and all expression support") follow the grammar as documented
  // (`("any"|"all") _ Selector _ "as" _ Binding _? "{" _? Or _? "}"`, an alternative of OrExpression only); their
  // exact PEG text was not available, so "no match found" expected-lists around them may differ from pigeon's.
  const WS = ref("_");
  const OWS = opt(WS);
  const MATCH_OP = (name: string, op: MatchOp, node: PNode) =>
    rule(
      name,
      null,
      act(node, () => ok(op)),
    );

  rule(
    "Input",
    null,
    choice(
      act(seq(OWS, lit("("), OWS, ref("OrExpression"), OWS, lit(")"), OWS, ref("EOF")), (v) => ok(v[3])),
      act(seq(OWS, ref("OrExpression"), OWS, ref("EOF")), (v) => ok(v[1])),
    ),
  );
  rule(
    "OrExpression",
    null,
    choice(
      act(seq(ref("AndExpression"), WS, lit("or"), WS, ref("OrExpression")), (v) => ok({ k: "or", l: v[0], r: v[4] })),
      ref("AndExpression"),
      ...(nomad ? [ref("CollectionExpression")] : []),
    ),
  );
  rule(
    "AndExpression",
    null,
    choice(
      act(seq(ref("NotExpression"), WS, lit("and"), WS, ref("AndExpression")), (v) => ok({ k: "and", l: v[0], r: v[4] })),
      ref("NotExpression"),
    ),
  );
  rule(
    "NotExpression",
    null,
    choice(
      act(seq(lit("not"), WS, ref("NotExpression")), (v) => {
        const inner = v[2] as Expr;
        // `not not x` collapses to `x`
        return ok(inner.k === "not" ? inner.e : { k: "not", e: inner });
      }),
      ref("ParenthesizedExpression"),
    ),
  );
  rule(
    "ParenthesizedExpression",
    "grouping",
    choice(
      act(seq(lit("("), OWS, ref("OrExpression"), OWS, lit(")")), (v) => ok(v[2])),
      ref("MatchExpression"),
      seq(lit("("), OWS, ref("OrExpression"), OWS, not(lit(")")), fail("Unmatched parentheses")),
    ),
  );
  rule("MatchExpression", "match", choice(ref("MatchSelectorOpValue"), ref("MatchSelectorOp"), ref("MatchValueOpSelector")));
  rule(
    "MatchSelectorOpValue",
    "match",
    act(
      seq(
        ref("Selector"),
        choice(ref("MatchEqual"), ref("MatchNotEqual"), ref("MatchContains"), ref("MatchNotContains"), ref("MatchMatches"), ref("MatchNotMatches")),
        ref("Value"),
      ),
      (v) => ok({ k: "match", sel: v[0], op: v[1], value: v[2] }),
    ),
  );
  rule(
    "MatchSelectorOp",
    "match",
    act(seq(ref("Selector"), choice(ref("MatchIsEmpty"), ref("MatchIsNotEmpty"))), (v) => ok({ k: "match", sel: v[0], op: v[1], value: null })),
  );
  rule(
    "MatchValueOpSelector",
    "match",
    choice(
      act(seq(ref("Value"), choice(ref("MatchIn"), ref("MatchNotIn")), ref("Selector")), (v) => ok({ k: "match", sel: v[2], op: v[1], value: v[0] })),
      seq(ref("Value"), choice(ref("MatchIn"), ref("MatchNotIn")), not(ref("Selector")), fail("Invalid selector")),
    ),
  );
  MATCH_OP("MatchEqual", "eq", seq(OWS, lit("=="), OWS));
  MATCH_OP("MatchNotEqual", "ne", seq(OWS, lit("!="), OWS));
  MATCH_OP("MatchIsEmpty", "empty", seq(WS, lit("is"), WS, lit("empty")));
  MATCH_OP("MatchIsNotEmpty", "notempty", seq(WS, lit("is"), WS, lit("not"), WS, lit("empty")));
  MATCH_OP("MatchIn", "in", seq(WS, lit("in"), WS));
  MATCH_OP("MatchNotIn", "notin", seq(WS, lit("not"), WS, lit("in"), WS));
  MATCH_OP("MatchContains", "in", seq(WS, lit("contains"), WS));
  MATCH_OP("MatchNotContains", "notin", seq(WS, lit("not"), WS, lit("contains"), WS));
  MATCH_OP("MatchMatches", "matches", seq(WS, lit("matches"), WS));
  MATCH_OP("MatchNotMatches", "notmatches", seq(WS, lit("not"), WS, lit("matches"), WS));
  rule(
    "Selector",
    "selector",
    choice(
      act(seq(ref("Identifier"), star(ref("SelectorOrIndex"))), (v) => ok({ type: "bexpr", path: [v[0], ...v[1]] })),
      ...(nomad ? [act(seq(lit('"'), star(ref("JsonPointerSegment")), lit('"')), (v) => ok({ type: "jsonptr", path: parseJsonPointer(v[1]) }))] : []),
    ),
  );
  rule(
    "JsonPointerSegment",
    null,
    act(seq(lit("/"), plus(cls("[\\pL\\pN-_.~:|]", /^[\p{L}\p{N}\-_.~:|]$/u))), (_v, text) => ok(text.slice(1))),
  );
  rule(
    "Identifier",
    null,
    act(seq(cls("[a-zA-Z]", /^[a-zA-Z]$/), star(nomad ? cls("[a-zA-Z0-9_/]", /^[a-zA-Z0-9_/]$/) : cls("[a-zA-Z0-9_]", /^[a-zA-Z0-9_]$/))), (_v, text) => ok(text)),
  );
  rule(
    "SelectorOrIndex",
    null,
    choice(
      act(seq(lit("."), ref("Identifier")), (v) => ok(v[1])),
      ref("IndexExpression"),
      ...(nomad ? [act(seq(lit("."), plus(cls("[0-9]", /^[0-9]$/))), (_v, text) => ok(text.slice(1)))] : []),
    ),
  );
  // v0.1.2 reads a string literal between the brackets, v0.1.13 (with the extension below) an IndexKey.
  const indexKey = nomad ? ref("IndexKey") : ref("StringLiteral");
  rule(
    "IndexExpression",
    "index",
    choice(
      act(seq(lit("["), OWS, indexKey, OWS, lit("]")), (v) => ok(v[2])),
      seq(lit("["), OWS, not(indexKey), fail("Invalid index")),
      seq(lit("["), OWS, indexKey, OWS, not(lit("]")), fail("Unclosed index expression")),
    ),
  );
  // The specification writes map keys as ['<key>'], a form go-bexpr lacks: a single-quoted key is taken
  // literally (no escapes), alongside go-bexpr's double-quoted and backtick strings.
  if (nomad) {
    rule(
      "IndexKey",
      null,
      choice(
        ref("StringLiteral"),
        act(seq(lit("'"), star(seq(not(lit("'")), ANY)), lit("'")), (_v, text) => ok(text.slice(1, -1))),
      ),
    );
  }
  rule(
    "Value",
    "value",
    choice(
      act(ref("Selector"), (v) => ok({ raw: selectorString(v as Selector) })),
      act(ref("NumberLiteral"), (v) => ok({ raw: v })),
      act(ref("StringLiteral"), (v) => ok({ raw: v })),
    ),
  );
  rule(
    "NumberLiteral",
    "number",
    choice(
      act(seq(opt(lit("-")), ref("IntegerOrFloat"), and(ref("AfterNumbers"))), (_v, text) => ok(text)),
      seq(opt(lit("-")), ref("IntegerOrFloat"), not(ref("AfterNumbers")), fail("Invalid number literal")),
    ),
  );
  rule("AfterNumbers", null, and(choice(WS, ref("EOF"), lit(")"))));
  rule("IntegerOrFloat", null, seq(choice(lit("0"), seq(cls("[1-9]", /^[1-9]$/), star(cls("[0-9]", /^[0-9]$/)))), opt(seq(lit("."), plus(cls("[0-9]", /^[0-9]$/))))));
  rule(
    "StringLiteral",
    "string",
    choice(
      act(choice(seq(lit("`"), star(ref("RawStringChar")), lit("`")), seq(lit('"'), star(ref("DoubleStringChar")), lit('"'))), (_v, text) => goUnquote(text)),
      seq(choice(seq(lit("`"), star(ref("RawStringChar"))), seq(lit('"'), star(ref("DoubleStringChar")))), ref("EOF"), fail("Unterminated string literal")),
    ),
  );
  rule("RawStringChar", null, seq(not(lit("`")), ANY));
  rule("DoubleStringChar", null, seq(not(lit('"')), ANY));
  rule("_", "whitespace", plus(cls("[ \\t\\r\\n]", /^[ \t\r\n]$/)));
  rule("EOF", null, not(ANY));
  if (!nomad) return rules;
  rule(
    "CollectionExpression",
    "collection",
    act(seq(choice(lit("any"), lit("all")), WS, ref("Selector"), WS, lit("as"), WS, ref("CollectionNameBinding"), OWS, lit("{"), OWS, ref("OrExpression"), OWS, lit("}")), (v) =>
      ok({ k: "coll", op: v[0] === "any" ? "ANY" : "ALL", sel: v[2], binding: v[6], inner: v[10] }),
    ),
  );
  const binding = (mode: BindMode, def: string, index: string, value: string): NameBinding => ({ mode, def, index, value });
  rule(
    "CollectionNameBinding",
    null,
    choice(
      act(seq(ref("Identifier"), OWS, lit(","), OWS, ref("Identifier")), (v) => ok(binding("IndexAndValue", "", v[0], v[4]))),
      act(seq(ref("Identifier"), OWS, lit(","), OWS, lit("_")), (v) => ok(binding("Index", "", v[0], ""))),
      act(seq(lit("_"), OWS, lit(","), OWS, ref("Identifier")), (v) => ok(binding("Value", "", "", v[4]))),
      act(ref("Identifier"), (v) => ok(binding("Default", v, "", ""))),
    ),
  );
  return rules;
}

/** The rule table of each dialect, built once. */
export const GRAMMARS: Readonly<Record<Dialect, ReadonlyMap<string, PRule>>> = { nomad: buildGrammar("nomad"), consul: buildGrammar("consul") };
