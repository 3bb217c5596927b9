/**
 * Table tests for the filter grammar (src/core/filter/grammar), after go-bexpr's grammar_test.go:
 * an expression and the AST it parses to, or the pigeon-shaped error it is refused with. The HTTP-level
 * behaviour of filters is covered in filter.test.ts, filter-typing.test.ts and list-filter.test.ts;
 * these pin the parser on its own, so that a change in precedence, selector or value parsing shows up
 * here first.
 */
import { describe, expect, test } from "vitest";
import type { Expr } from "../../src/core/filter/ast.js";
import { FilterParseError } from "../../src/core/filter/errors.js";
import { parseExpression } from "../../src/core/filter/grammar/parser.js";

const sel = (...path: string[]) => ({ type: "bexpr" as const, path });
const ptr = (...path: string[]) => ({ type: "jsonptr" as const, path });
const eq = (path: string[], raw: string): Expr => ({ k: "match", sel: sel(...path), op: "eq", value: { raw } });

describe("filter grammar: expressions and their AST", () => {
  const cases: Array<[string, unknown]> = [
    // precedence: not binds tighter than and, and tighter than or; `not not` collapses
    ["a == 1 and not b == 2 or c == 3", { k: "or", l: { k: "and", l: eq(["a"], "1"), r: { k: "not", e: eq(["b"], "2") } }, r: eq(["c"], "3") }],
    ["a == 1 and (b == 2 or c == 3)", { k: "and", l: eq(["a"], "1"), r: { k: "or", l: eq(["b"], "2"), r: eq(["c"], "3") } }],
    ["not not a == 1", eq(["a"], "1")],
    ["(a == 1)", eq(["a"], "1")],
    // selectors: dotted identifiers, numeric segments, bracketed keys (double, backtick, single quotes), JSON pointers
    ["Meta.foo == bar", eq(["Meta", "foo"], "bar")],
    ["TaskGroups.0.Name == web", eq(["TaskGroups", "0", "Name"], "web")],
    ['Meta["a.b"] == `x`', eq(["Meta", "a.b"], "x")],
    ["Meta['k'] == 1", eq(["Meta", "k"], "1")],
    ['"/Meta/a~1b" == x', { k: "match", sel: ptr("Meta", "a/b"), op: "eq", value: { raw: "x" } }],
    ['"" == x', { k: "match", sel: ptr(""), op: "eq", value: { raw: "x" } }],
    // values are raw text: a selector written as a value is its own text, strings are unquoted Go-style
    ["Status == running", eq(["Status"], "running")],
    ['x == "/a/b"', eq(["x"], "a/b")],
    ["x == -1.5", eq(["x"], "-1.5")],
    ['x == "a\\tb"', eq(["x"], "a\tb")],
    // operators: contains is in with the operands swapped
    ["a != 1", { k: "match", sel: sel("a"), op: "ne", value: { raw: "1" } }],
    ['"v" in Tags', { k: "match", sel: sel("Tags"), op: "in", value: { raw: "v" } }],
    ["Tags contains v", { k: "match", sel: sel("Tags"), op: "in", value: { raw: "v" } }],
    ["v not in Tags", { k: "match", sel: sel("Tags"), op: "notin", value: { raw: "v" } }],
    ["Tags not contains v", { k: "match", sel: sel("Tags"), op: "notin", value: { raw: "v" } }],
    ['Name matches "^w"', { k: "match", sel: sel("Name"), op: "matches", value: { raw: "^w" } }],
    ["Name not matches x", { k: "match", sel: sel("Name"), op: "notmatches", value: { raw: "x" } }],
    ["Meta is empty", { k: "match", sel: sel("Meta"), op: "empty", value: null }],
    ["Meta is not empty", { k: "match", sel: sel("Meta"), op: "notempty", value: null }],
    // collections and their name bindings
    [
      "any TaskGroups as tg { tg.Name == web }",
      { k: "coll", op: "ANY", sel: sel("TaskGroups"), binding: { mode: "Default", def: "tg", index: "", value: "" }, inner: eq(["tg", "Name"], "web") },
    ],
    ["all Meta as k, v { v == x }", { k: "coll", op: "ALL", sel: sel("Meta"), binding: { mode: "IndexAndValue", def: "", index: "k", value: "v" }, inner: eq(["v"], "x") }],
    ["all Meta as k, _ { k == x }", { k: "coll", op: "ALL", sel: sel("Meta"), binding: { mode: "Index", def: "", index: "k", value: "" }, inner: eq(["k"], "x") }],
    ["any Meta as _, v { v == x }", { k: "coll", op: "ANY", sel: sel("Meta"), binding: { mode: "Value", def: "", index: "", value: "v" }, inner: eq(["v"], "x") }],
  ];
  test.each(cases)("%s", (expression, ast) => {
    expect(parseExpression(expression)).toEqual(ast);
  });
});

describe("filter grammar: refusals in pigeon’s shape", () => {
  const cases: Array<[string, string]> = [
    ['x == "abc', '1:10 (9): rule "string": Unterminated string literal'],
    ["x == 1a", '1:7 (6): rule "number": Invalid number literal'],
    ["Meta[ == 1", '1:7 (6): rule "index": Invalid index'],
    ['Meta["a" == 1', '1:10 (9): rule "index": Unclosed index expression'],
    ["1 in ==", '1:6 (5): rule "match": Invalid selector'],
    ["(a == 1", '1:8 (7): rule "grouping": Unmatched parentheses'],
    ['x == "\\q"', '1:6 (5): rule "string": invalid syntax'],
    ["a ==", '1:5 (4): no match found, expected: "-", "0", "\\"", "`", [ \\t\\r\\n], [1-9] or [a-zA-Z]'],
    // `is nil` arrived after v0.1.13
    ["a is nil", '1:6 (5): no match found, expected: "empty", "not" or [ \\t\\r\\n]'],
    // a bare selector is not an expression
    ["a and b == 1", '1:3 (2): no match found, expected: "!=", "==", "contains", "in", "is", "matches", "not" or [ \\t\\r\\n]'],
  ];
  test.each(cases)("%s", (expression, message) => {
    let error: unknown;
    try {
      parseExpression(expression);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FilterParseError);
    expect((error as FilterParseError).message).toBe(message);
  });
});
