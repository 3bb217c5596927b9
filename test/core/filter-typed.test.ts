/**
 * Table tests for Consul's typed filters (src/core/filter/typed: go-bexpr v0.1.2 with
 * `CreateFilter(expr, nil, type)`), in the style of go-bexpr's evaluate_test.go: an expression against a
 * described Go type and a row, and whether it matches or the exact error it is refused with.
 */
import { describe, expect, test } from "vitest";
import { createTypedFilter, TypedEvaluationError, TypedFilterError } from "../../src/core/filter/index.js";
import { goBool, goFloat, goInt, goString, goStruct, goUint, mapOf, pointerTo, sliceOf } from "../../src/core/filter/typed/index.js";
import { parseExpression } from "../../src/core/filter/grammar/parser.js";

// A Consul-like element type: a node with a service and its checks.
const CHECK = goStruct({ CheckID: goString, Status: goString, ServiceTags: sliceOf(goString) }, ["CreateIndex", "ModifyIndex"]);
const SCHEMA = goStruct(
  {
    Node: goString,
    Address: goString,
    Port: goInt,
    Index: goUint,
    Score: goFloat,
    Enabled: goBool,
    Tags: sliceOf(goString),
    Ports: sliceOf(goInt),
    Meta: mapOf(goString),
    TaggedAddresses: mapOf(goStruct({ Address: goString, Port: goInt })),
    Config: mapOf(null),
    Weights: goStruct({ Passing: goInt, Warning: goInt }),
    Proxy: pointerTo(goStruct({ DestinationServiceName: goString })),
    Checks: sliceOf(pointerTo(CHECK)),
  },
  ["CreateIndex", "ModifyIndex"],
);

const ROW = {
  Node: "web-1",
  Address: "10.0.0.1",
  Port: 8080,
  Index: 7,
  Score: 1.5,
  Enabled: true,
  Tags: ["primary", "v2"],
  Ports: [80, 443],
  Meta: { env: "prod", "a.b": "dotted" },
  TaggedAddresses: { lan: { Address: "10.0.0.1", Port: 8080 } },
  Config: { anything: 1 },
  Weights: { Passing: 1, Warning: 1 },
  Proxy: null,
  Checks: [
    { CheckID: "serfHealth", Status: "passing", ServiceTags: [] },
    { CheckID: "service:web", Status: "critical", ServiceTags: ["primary"] },
  ],
  CreateIndex: 3,
};

const P = "Failed to create boolean expression evaluator: ";

function run(expression: string, row: unknown = ROW): boolean {
  return createTypedFilter(expression, SCHEMA).matches(row);
}

function creationError(expression: string): string {
  try {
    createTypedFilter(expression, SCHEMA);
  } catch (e) {
    expect(e).toBeInstanceOf(TypedFilterError);
    return (e as Error).message;
  }
  throw new Error(`${expression} was accepted`);
}

describe("typed filter: matches", () => {
  const cases: Array<[string, boolean]> = [
    // strings: exact ==, substring in/contains, regular expressions (unanchored)
    ['Node == "web-1"', true],
    ["Node == `web-1`", true],
    ['Node == "WEB-1"', false],
    ['Node != "web-1"', false],
    ['"eb" in Node', true],
    ["Node contains web", true],
    ['"x" not in Node', true],
    ['Node matches "^web-[0-9]$"', true],
    ['Node matches "eb"', true],
    ['Node not matches "^db"', true],
    ['Address == "10.0.0.1"', true],
    // numbers and booleans are coerced to the field's kind
    ["Port == 8080", true],
    ["Port != 8080", false],
    ["Index == 7", true],
    ["Score == 1.5", true],
    ["Enabled == true", true],
    ["Enabled == T", true],
    ["Enabled == false", false],
    // slices of primitives: in and emptiness
    ["primary in Tags", true],
    ["Tags contains v2", true],
    ["v3 in Tags", false],
    ["v3 not in Tags", true],
    ["Tags is not empty", true],
    ["Tags is empty", false],
    ["443 in Ports", true],
    ["8080 in Ports", false],
    // maps: keys with in, values through the selector, brackets for keys outside identifiers
    ["env in Meta", true],
    ["prod in Meta", false],
    ["Meta.env == prod", true],
    ['Meta["a.b"] == dotted', true],
    ["Meta is not empty", true],
    ['Meta.env matches "^pr"', true],
    ["TaggedAddresses.lan.Port == 8080", true],
    ["TaggedAddresses.lan.Address == `10.0.0.1`", true],
    ["lan in TaggedAddresses", true],
    ["anything in Config", true],
    // a missing key: ==, in, is not empty are false; everything else (matches too) is true
    ["Meta.missing == x", false],
    ["Meta.missing != x", true],
    ['"x" in Meta.missing', false],
    ['"x" not in Meta.missing', true],
    ['Meta.missing matches "x"', true],
    ['Meta.missing not matches "x"', true],
    ["TaggedAddresses.wan.Port == 0", false],
    ["TaggedAddresses.wan.Port != 0", true],
    // structs and slices of structs: any element matching makes the match true
    ["Weights.Passing == 1", true],
    ["Checks.Status == critical", true],
    ["Checks.Status != passing", true],
    ["Checks.Status == warning", false],
    ["primary in Checks.ServiceTags", true],
    ["Checks is not empty", true],
    // boolean structure, precedence, parentheses
    ['Port == 8080 and Node == "web-1"', true],
    ['Port == 1 or Node == "web-1"', true],
    ["not Port == 1", true],
    ["not (Port == 8080 and Enabled == false)", true],
    ['Port == 1 or Port == 2 and Node == "web-1"', false],
    ["(Port == 8080)", true],
  ];
  test.each(cases)("%s → %s", (expression, want) => {
    expect(run(expression)).toBe(want);
  });

  test("absent fields are Go's zero values; a nil slice or map is empty", () => {
    const sparse = { Node: "n" };
    expect(run("Port == 0", sparse)).toBe(true);
    expect(run("Enabled == false", sparse)).toBe(true);
    expect(run('Address == ""', sparse)).toBe(true);
    expect(run("Tags is empty", { Node: "n", Tags: null })).toBe(true);
    expect(run("Meta is empty", { Node: "n", Meta: null })).toBe(true);
    expect(run("x in Meta", { Node: "n", Meta: null })).toBe(false);
    expect(run("Weights.Passing == 0", sparse)).toBe(true);
    // a slice with no elements matches nothing, whatever the operator
    expect(run("Checks.Status != passing", { Checks: [] })).toBe(false);
    expect(run("Checks is empty", { Checks: [] })).toBe(true);
  });

  test("a selector through a nil struct pointer fails at evaluation (go-bexpr v0.1.2 panics there)", () => {
    const filter = createTypedFilter('Proxy.DestinationServiceName == "web"', SCHEMA);
    expect(() => filter.matches(ROW)).toThrow(TypedEvaluationError);
    expect(() => filter.matches(ROW)).toThrow('Value at selector "Proxy" is a nil pointer');
    expect(filter.matches({ ...ROW, Proxy: { DestinationServiceName: "web" } })).toBe(true);
  });
});

describe("typed filter: errors when the filter is created", () => {
  const cases: Array<[string, string]> = [
    // parse errors (pigeon's text, v0.1.2's grammar): the reference's examples
    ["foo", '1:4 (3): no match found, expected: "!=", ".", "==", "[", [ \\t\\r\\n] or [a-zA-Z0-9_]'],
    ["Address == 10.10.10.10", '1:17 (16): rule "number": Invalid number literal'],
    ['Node == "web', '1:13 (12): rule "string": Unterminated string literal'],
    ["(Node == web", '1:13 (12): rule "grouping": Unmatched parentheses'],
    ["Meta[env] == x", '1:6 (5): rule "index": Invalid index'],
    // a bare value is an identifier: a '-' or a '^' ends it (Consul's users must quote such strings)
    ["Node == web-1", '1:12 (11): no match found, expected: ".", "[", [ \\t\\r\\n], [a-zA-Z0-9_] or EOF'],
    ["Port == 0x1f90", '1:10 (9): rule "number": Invalid number literal'],
    // v0.1.2 has no any/all, JSON pointers, numeric segments or '/' in identifiers
    ["Checks.0.Status == passing", "1:8 (7): no match found, expected: [a-zA-Z]"],
    ['"/Node" == x', '1:9 (8): no match found, expected: "in", "not" or [ \\t\\r\\n]'],
    // selectors checked against the type, up to the first unknown segment
    ["Foo == 1", 'Selector "Foo" is not valid'],
    ["Meta.env.x == 1", 'Selector "Meta.env.x" is not valid'],
    ["Port.x == 1", 'Selector "Port.x" is not valid'],
    ["Weights.Nope == 1", 'Selector "Weights.Nope" is not valid'],
    ["CreateIndex == 3", 'Selector "CreateIndex" is not valid'],
    ["Checks.CreateIndex == 3", 'Selector "Checks.CreateIndex" is not valid'],
    ["Config.anything == 1", 'Selector "Config.anything" is not valid'],
    // operators checked against the field's kind (go-bexpr's operator names)
    ["Port matches 8", 'Invalid match operator "Matches" for selector "Port"'],
    ['"8" in Port', 'Invalid match operator "In" for selector "Port"'],
    ["Port is empty", 'Invalid match operator "Is Empty" for selector "Port"'],
    ["Node is empty", 'Invalid match operator "Is Empty" for selector "Node"'],
    ["Enabled != x or Tags == a", 'Failed to coerce value "x" for selector "Enabled": strconv.ParseBool: parsing "x": invalid syntax'],
    ["Tags == a", 'Invalid match operator "Equal" for selector "Tags"'],
    ["Meta == a", 'Invalid match operator "Equal" for selector "Meta"'],
    ["Meta matches a", 'Invalid match operator "Matches" for selector "Meta"'],
    ["Weights == a", 'Invalid match operator "Equal" for selector "Weights"'],
    ["Weights is empty", 'Invalid match operator "Is Empty" for selector "Weights"'],
    ["x in Checks", 'Invalid match operator "In" for selector "Checks"'],
    ["Checks.Status is empty", 'Invalid match operator "Is Empty" for selector "Checks.Status"'],
    // values coerced to the field's kind
    ["Port == abc", 'Failed to coerce value "abc" for selector "Port": strconv.ParseInt: parsing "abc": invalid syntax'],
    ["Port == 1.5", 'Failed to coerce value "1.5" for selector "Port": strconv.ParseInt: parsing "1.5": invalid syntax'],
    ["Port == 99999999999999999999", 'Failed to coerce value "99999999999999999999" for selector "Port": strconv.ParseInt: parsing "99999999999999999999": value out of range'],
    ["Index == -1", 'Failed to coerce value "-1" for selector "Index": strconv.ParseUint: parsing "-1": invalid syntax'],
    ["Score == x", 'Failed to coerce value "x" for selector "Score": strconv.ParseFloat: parsing "x": invalid syntax'],
    ["Enabled == yes", 'Failed to coerce value "yes" for selector "Enabled": strconv.ParseBool: parsing "yes": invalid syntax'],
    ["x in Ports", 'Failed to coerce value "x" for selector "Ports": strconv.ParseInt: parsing "x": invalid syntax'],
    ['Node matches "[a"', 'Failed to compile regular expression "[a": error parsing regexp: missing closing ]: `[a`'],
    // the first error, left to right, wins
    ["Node == a and Foo == b and Port == x", 'Selector "Foo" is not valid'],
  ];
  test.each(cases)("%s", (expression, message) => {
    expect(creationError(expression)).toBe(P + message);
  });

  test("errors are reported before any row is read", () => {
    expect(() => createTypedFilter("Foo == 1", SCHEMA)).toThrow(TypedFilterError);
  });
});

describe("grammar dialects", () => {
  test("the consul dialect is go-bexpr v0.1.2's; the nomad one keeps its extensions", () => {
    expect(parseExpression("Checks.0.Status == x", "nomad")).toMatchObject({ k: "match", sel: { path: ["Checks", "0", "Status"] } });
    expect(() => parseExpression("Checks.0.Status == x", "consul")).toThrow("no match found");
    expect(parseExpression("a/b == c", "nomad")).toMatchObject({ sel: { path: ["a/b"] } });
    expect(() => parseExpression("a/b == c", "consul")).toThrow("no match found");
    expect(() => parseExpression("Meta['k'] == 1", "consul")).toThrow('rule "index": Invalid index');
    expect(() => parseExpression("any Checks as c { c.Status == x }", "consul")).toThrow("no match found");
    expect(parseExpression('Meta["k"] == 1', "consul")).toMatchObject({ sel: { path: ["Meta", "k"] }, value: { raw: "1" } });
  });
});
