import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compileFilter, FilterEvaluationError, FilterParseError, MAP_FIELDS } from "../../src/core/filter/index.js";

// ---------------------------------------------------------------------------------------------------
// Fixtures: JSON renderings of Nomad structs (PascalCase, maps as objects, nil as null)

const job = {
  ID: "web",
  Name: "web",
  Namespace: "default",
  Type: "service",
  Status: "running",
  Priority: 50,
  Stop: false,
  Version: 3,
  SubmitTime: 1700000000000000000,
  Ratio: 0.5,
  Datacenters: ["dc1", "dc2"],
  Tags: ["1", "2"],
  Ports: [80, 443],
  Mixed: ["foobar", 1, true],
  Spreads: [],
  Constraints: null,
  Periodic: null,
  Path: "C:\\dir\\n",
  Text: "a\nb",
  Meta: { owner: "team-a", "co:lon": "colon", "a/b": "slash", empty: "" },
  TaskGroups: [
    {
      Name: "web",
      Count: 2,
      Meta: null,
      Tasks: [
        {
          Name: "server",
          Driver: "docker",
          Config: { image: "nginx:1.25", ports: ["http"], mounts: { source: "/data" } },
          Env: { PORT: "8080" },
        },
      ],
    },
    { Name: "db", Count: 1, Meta: { tier: "data" }, Tasks: [] },
  ],
};

const node = {
  ID: "f3c1d2e4-0000-4000-8000-000000000001",
  Name: "client-1",
  Datacenter: "dc1",
  HTTPAddr: "10.0.0.1:4646",
  Status: "ready",
  SchedulingEligibility: "eligible",
  Drain: false,
  NodeClass: "",
  NodePool: "default",
  Attributes: { "kernel.name": "linux", "cpu.numcores": "4" },
  Meta: {},
  Drivers: { docker: { Detected: true, Healthy: true, Attributes: { "driver.docker.version": "24.0.7" } } },
};

// the shape of the Deployments example in Nomad's API docs
const deployment = {
  ID: "58fd0616-ce64-d14b-6917-03d0ab5af67e",
  JobID: "countdash",
  JobVersion: 0,
  Namespace: "default",
  Status: "cancelled",
  StatusDescription: "Cancelled due to newer version of job",
  TaskGroups: {
    dashboard: { AutoRevert: false, DesiredCanaries: 0, DesiredTotal: 1, HealthyAllocs: 0, PlacedCanaries: null, ProgressDeadline: 600000000000 },
    api: { AutoRevert: false, DesiredCanaries: 0, DesiredTotal: 1, HealthyAllocs: 0, PlacedCanaries: null, ProgressDeadline: 600000000000 },
  },
};

type Expected = boolean | { error: string | RegExp };
type Row = [expression: string, datum: unknown, expected: Expected];

function check([expression, datum, expected]: Row): void {
  const filter = compileFilter(expression);
  if (typeof expected === "boolean") {
    expect(filter.matches(datum)).toBe(expected);
    return;
  }
  let thrown: unknown;
  try {
    filter.matches(datum);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(FilterEvaluationError);
  const message = (thrown as Error).message;
  if (typeof expected.error === "string") expect(message).toBe(expected.error);
  else expect(message).toMatch(expected.error);
}

function parseError(expression: string): string {
  try {
    compileFilter(expression);
  } catch (e) {
    expect(e).toBeInstanceOf(FilterParseError);
    return (e as Error).message;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(expression)}`);
}

const err = (error: string | RegExp): Expected => ({ error });

// ---------------------------------------------------------------------------------------------------

describe("operators", () => {
  const rows: Row[] = [
    // == and !=
    ['Name == "web"', job, true],
    ['Name == "WEB"', job, false],
    ['Name != "web"', job, false],
    ['Name != "api"', job, true],
    ["Status==running", job, true],
    // is empty / is not empty
    ["Spreads is empty", job, true],
    ["Datacenters is empty", job, false],
    ["Datacenters is not empty", job, true],
    ["Meta is not empty", job, true],
    ["Meta.empty is empty", job, true],
    ["Name is not empty", job, true],
    ["Constraints is empty", job, true],
    ["Constraints is not empty", job, false],
    ["Node.NodeClass is empty", { Node: node }, true],
    // in / not in / contains / not contains on arrays, maps and strings
    ['"dc1" in Datacenters', job, true],
    ["dc3 in Datacenters", job, false],
    ['"dc3" not in Datacenters', job, true],
    ["Datacenters contains dc2", job, true],
    ['Datacenters not contains "dc2"', job, false],
    ["owner in Meta", job, true],
    ["Meta contains nobody", job, false],
    ["nobody not in Meta", job, true],
    ["eb in Name", job, true],
    ['Name contains "x"', job, false],
    ['Name not contains "x"', job, true],
    // a nil []*Constraint: go-bexpr finds no primitive comparison for a struct element, empty or not
    ["x in Constraints", job, err('unable to find suitable primitive comparison function for "in" comparison')],
    ["x not in Constraints", job, err('unable to find suitable primitive comparison function for "in" comparison')],
    // matches / not matches (RE2, unanchored)
    ['Name matches "^w.b$"', job, true],
    ['Name matches "e"', job, true],
    ['Name matches "E"', job, false],
    ['Name not matches "^x"', job, true],
    ['Name not matches "b$"', job, false],
  ];
  test.each(rows)("%s", (...row) => check(row));
});

describe("precedence and connectives", () => {
  const d = { A: 1, B: 2, C: 3 };
  const rows: Row[] = [
    // a and not b or c  ==  (a and (not b)) or c
    ["A == 1 and not B == 2 or C == 3", d, true],
    ["(A == 1 and (not B == 2)) or C == 3", d, true],
    ["A == 1 and not (B == 2 or C == 3)", d, false],
    ["A == 0 and B == 2 or C == 3", d, true],
    ["A == 0 and (B == 2 or C == 3)", d, false],
    ["not A == 0 and B == 0", d, false],
    ["not (A == 0 and B == 0)", d, true],
    ["not not A == 1", d, true],
    ["not not not A == 1", d, false],
    ["(A == 1)", d, true],
    [" ( A == 1 ) ", d, true],
    ["((A == 1) and ((B == 2)))", d, true],
    ["A == 1 or B == 0 and C == 0", d, true],
    ["A == 1\nand\tB == 2\r\n", d, true],
    // and/or short-circuit: the right side is not evaluated (so it cannot fail)
    ["A == 1 or Missing == 1", d, true],
    ["A == 0 and Missing == 1", d, false],
    ["A == 0 or Missing == 1", d, err('error finding value in datum: /Missing at part 0: couldn\'t find key: struct field with name "Missing"')],
    ["not Missing == 1", d, err(/struct field with name "Missing"/)],
  ];
  test.each(rows)("%s", (...row) => check(row));
});

describe("values and coercion to the field kind", () => {
  const rows: Row[] = [
    // integers: strconv.ParseInt(raw, 0, 64)
    ["Priority == 50", job, true],
    ['Priority == "50"', job, true],
    ["Priority == `50`", job, true],
    ['Priority == "0x32"', job, true],
    ['Priority == "0o62"', job, true],
    ['Priority == "0b110010"', job, true],
    ['Priority == "062"', job, true],
    ['Priority == "5_0"', job, true],
    ['Priority == "+50"', job, true],
    ["Priority == -50", job, false],
    ["Priority != 51", job, true],
    ["Priority == 50.0", job, err('error getting match value in expression: strconv.ParseInt: parsing "50.0": invalid syntax')],
    ["Priority == abc", job, err('error getting match value in expression: strconv.ParseInt: parsing "abc": invalid syntax')],
    ['Priority == "5__0"', job, err('error getting match value in expression: strconv.ParseInt: parsing "5__0": invalid syntax')],
    ["Priority == 99999999999999999999", job, err('error getting match value in expression: strconv.ParseInt: parsing "99999999999999999999": value out of range')],
    // int64 precision beyond 2^53
    ["SubmitTime == 1700000000000000000", job, true],
    ["SubmitTime == 1700000000000000001", job, false],
    ["SubmitTime != 1700000000000000001", job, true],
    // booleans: strconv.ParseBool
    ["Stop == false", job, true],
    ["Stop == F", job, true],
    ["Stop == 0", job, true],
    ["Stop != true", job, true],
    ['Stop == "True"', job, false],
    ["Stop == no", job, err('error getting match value in expression: strconv.ParseBool: parsing "no": invalid syntax')],
    // floats: strconv.ParseFloat
    ["Ratio == 0.5", job, true],
    ['Ratio == "5e-1"', job, true],
    ['Ratio == "0x1p-1"', job, true],
    ["Ratio == 1", job, false],
    ["Ratio == half", job, err('error getting match value in expression: strconv.ParseFloat: parsing "half": invalid syntax')],
    // strings compare with the raw text of any value form
    ["Tags.0 == 1", job, true],
    ["Name == 1", job, false],
    ["Name == true", job, false],
    ["Name == web.x", job, false],
    ["Meta.owner == `team-a`", job, true],
    // a double-quoted value shaped like a JSON pointer is parsed as a selector and becomes its path text
    ['Meta["a/b"] == "/slash"', job, true],
    ['TaskGroups.0.Tasks.0.Config.mounts.source == "/data"', job, false],
    ["TaskGroups.0.Tasks.0.Config.mounts.source == `/data`", job, true],
    // non-primitive fields cannot be compared
    ["Meta == x", job, err("unable to find suitable primitive comparison function for matching")],
    ["Datacenters == dc1", job, err("unable to find suitable primitive comparison function for matching")],
    ["Periodic == x", job, err("unable to find suitable primitive comparison function for matching")],
  ];
  test.each(rows)("%s", (...row) => check(row));

  test("raw and double-quoted strings", () => {
    check(["Path == `C:\\dir\\n`", job, true]); // raw: no escape processing
    check(['Path == "C:\\\\dir\\\\n"', job, true]); // Go escapes
    check(['Text == "a\\nb"', job, true]);
    check(["Text == `a\nb`", job, true]); // a raw string may span lines
    check(["Text == `a\r\nb`", job, true]); // carriage returns are dropped from raw strings (strconv.Unquote)
    check(['Text == "\\x41\\u00e9\\101\\U0001F600"', { Text: "AéA😀" }, true]);
    check(['Text == "\\a\\b\\f\\r\\t\\v\\\\"', { Text: "\x07\b\f\r\t\v\\" }, true]);
  });
});

describe("in / contains by kind", () => {
  const rows: Row[] = [
    // typed arrays coerce the value to the element kind
    ["443 in Ports", job, true],
    ['"0x50" in Ports', job, true],
    ["8080 in Ports", job, false],
    ["abc in Ports", job, err('error getting match value in expression: strconv.ParseInt: parsing "abc": invalid syntax')],
    ["1 in Tags", job, true],
    // mixed arrays ([]interface{}) compare element by element, skipping elements the value cannot be coerced to
    ['"foobar" in Mixed', job, true],
    ['"1" in Mixed', job, true],
    ['"2" in Mixed', job, false],
    ['"true" in Mixed', job, true],
    // arrays of structs, scalars and structs
    ["web in TaskGroups", job, err('unable to find suitable primitive comparison function for "in" comparison')],
    ["50 in Priority", job, err('Cannot perform in/contains operations on type int for selector: "Priority"')],
    ["x in TaskGroups.0", job, err('Cannot perform in/contains operations on type struct for selector: "TaskGroups.0"')],
    ['x in "/TaskGroups/0"', job, err('Cannot perform in/contains operations on type struct for selector: "TaskGroups/0"')],
    ["x in Stop", job, err('error getting match value in expression: strconv.ParseBool: parsing "x": invalid syntax')],
    ["true in Stop", job, err('Cannot perform in/contains operations on type bool for selector: "Stop"')],
  ];
  test.each(rows)("%s", (...row) => check(row));
});

describe("selectors: structs, maps, arrays", () => {
  const rows: Row[] = [
    ['Meta.owner == "team-a"', job, true],
    ['Meta["owner"] == "team-a"', job, true],
    ['Meta[`owner`] == "team-a"', job, true],
    ['Meta[ "co:lon" ] == colon', job, true],
    ["Meta.a/b == slash", job, true], // identifiers may contain '/'
    ['"/Meta/owner" == "team-a"', job, true],
    ['"/Meta/a~1b" == slash', job, true],
    ['"/TaskGroups/1/Name" == db', job, true],
    ["TaskGroups.1.Name == db", job, true],
    ['TaskGroups["1"].Name == db', job, true],
    ['TaskGroups["0x1"].Name == db', job, true], // the index goes through strconv.ParseInt(s, 0, 64)
    ['TaskGroups[""].Name == web', job, true], // mapstructure decodes "" as 0
    ["TaskGroups.1.Meta.tier == data", job, true],
    ['TaskGroups.0.Tasks.0.Env.PORT == "8080"', job, true],
    ['TaskGroups.0.Tasks.0.Config.image == "nginx:1.25"', job, true],
    ["http in TaskGroups.0.Tasks.0.Config.ports", job, true],
    // missing map keys (last segment, parent is a map): the operator's "not present" result, no error
    ["Meta.nope == x", job, false],
    ["Meta.nope != x", job, true],
    ["x in Meta.nope", job, false],
    ["x not in Meta.nope", job, true],
    ["Meta.nope contains x", job, false],
    ["Meta.nope not contains x", job, true],
    ["Meta.nope is empty", job, true],
    ["Meta.nope is not empty", job, false],
    ['Meta.nope matches ".*"', job, false],
    ['Meta.nope not matches ".*"', job, true],
    ['Meta.nope matches "("', job, false], // the regex is never compiled
    ["TaskGroups.0.Meta.tier == data", job, false], // a null map is an empty map
    ["TaskGroups.0.Meta is empty", job, true],
    ["TaskGroups.0.Tasks.0.Config.mounts.nope == x", job, false], // below Config everything is a map
    // ... but a missing key that is not the last segment is an error
    ["Meta.nope.deeper == x", job, err('error finding value in datum: /Meta/nope/deeper at part 1: couldn\'t find key "nope"')],
    // missing struct fields are errors, whatever the operator
    ["Missing == 1", job, err('error finding value in datum: /Missing at part 0: couldn\'t find key: struct field with name "Missing"')],
    ["Missing != 1", job, err(/couldn't find key: struct field with name "Missing"/)],
    ["Missing is empty", job, err(/couldn't find key: struct field with name "Missing"/)],
    ["x not in Missing", job, err(/couldn't find key: struct field with name "Missing"/)],
    ["Missing not matches x", job, err(/couldn't find key: struct field with name "Missing"/)],
    ["TaskGroups.0.Missing == 1", job, err('error finding value in datum: /TaskGroups/0/Missing at part 2: couldn\'t find key: struct field with name "Missing"')],
    ["name == web", job, err('error finding value in datum: /name at part 0: couldn\'t find key: struct field with name "name"')],
    // arrays need an index: the filter applies to the main object, not to array elements
    ["TaskGroups.Name == web", job, err('error finding value in datum: /TaskGroups/Name at part 1: couldn\'t convert value "Name" to type int')],
    ["TaskGroups.5.Name == x", job, err("error finding value in datum: /TaskGroups/5/Name at part 1: index 5 is out of range (length = 2)")],
    ['TaskGroups["-1"].Name == x', job, err(/index -1 is out of range \(length = 2\)/)],
    // walking into a scalar or a nil pointer
    ["Name.Foo == x", job, err("error finding value in datum: /Name/Foo: at part 1, invalid value kind: string")],
    ["Periodic.Enabled == true", job, err("error finding value in datum: /Periodic/Enabled: at part 1, invalid value kind: invalid")],
    ["Meta.owner.x == 1", job, err("error finding value in datum: /Meta/owner/x: at part 2, invalid value kind: string")],
  ];
  test.each(rows)("%s", (...row) => check(row));

  test("MAP_FIELDS can be extended by the caller", () => {
    const datum = { Labels: { a: "1" } };
    check(["Labels.b == x", datum, err(/struct field with name "b"/)]);
    MAP_FIELDS.add("Labels");
    try {
      check(["Labels.b == x", datum, false]);
      check(["Labels.a == 1", datum, true]);
    } finally {
      MAP_FIELDS.delete("Labels");
    }
  });

  test("the datum is seen as JSON renders it", () => {
    check(["Gone == 1", { Gone: undefined }, err(/struct field with name "Gone"/)]);
    check(["Meta.gone == 1", { Meta: { gone: undefined } }, false]);
    check(["gone in Meta", { Meta: { gone: undefined } }, false]);
    check(["Meta is empty", { Meta: { gone: undefined } }, true]);
    check(['SubmitTime matches "^2024-01-02T"', { SubmitTime: new Date("2024-01-02T03:04:05Z") }, true]);
  });

  test("values of maps are structs, unless below Config", () => {
    // Deployment.TaskGroups is map[string]*DeploymentState: a key named like a map field is still a struct value
    check(["TaskGroups.Meta.Nope == 1", { TaskGroups: { Meta: { DesiredTotal: 1 } } }, err(/struct field with name "Nope"/)]);
  });
});

describe("regular expressions (RE2 via re2js)", () => {
  const rows: Row[] = [
    ['Name matches "(?i)WEB"', job, true], // inline flags
    ['Name matches "b\\\\z"', job, true], // \z (end of text) is RE2, not JavaScript
    ['Name matches "^(?P<n>w)"', job, true], // Python-style named group
    ["Name matches `^\\pL+$`", job, true],
    ['Text matches "^b"', job, false], // ^ anchors at the start of the text, not of a line
    ['Text matches "(?m)^b"', job, true],
    ['Text matches "a.b"', job, false], // . does not match \n
    ['Drivers.docker.Attributes["driver.docker.version"] matches "^24\\\\."', node, true],
    // RE2 has no look-around and no back-references: these are compile errors
    ['Name matches "(?=w)"', job, err('Failed to compile regular expression "(?=w)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`')],
    ["Name matches `(w)\\1`", job, err('Failed to compile regular expression "(w)\\\\1": error parsing regexp: invalid escape sequence: `\\1`')],
    ['Name matches "a++"', job, err('Failed to compile regular expression "a++": error parsing regexp: invalid nested repetition operator: `++`')],
    ['Name matches "("', job, err('Failed to compile regular expression "(": error parsing regexp: missing closing ): `(`')],
    ['Name not matches "("', job, err(/^Failed to compile regular expression "\(": /)],
    ['Name matches "\\\\"', job, err('Failed to compile regular expression "\\\\": error parsing regexp: trailing backslash at end of expression: ``')],
    // only strings can be matched
    ['Priority matches "5"', job, err("Value of type int is not convertible to []byte")],
    ['Stop not matches "x"', job, err("Value of type bool is not convertible to []byte")],
  ];
  test.each(rows)("%s", (...row) => check(row));

  test("a bad regular expression is an evaluation error, raised only when evaluated", () => {
    const filter = compileFilter('Name == "api" and Name matches "("');
    expect(filter.matches(job)).toBe(false);
    expect(() => filter.matches({ ...job, Name: "api" })).toThrow(FilterEvaluationError);
  });

  test("the compiled expression is reused", () => {
    const filter = compileFilter('Name matches "^d"');
    expect([job, { ...job, Name: "db" }, job].map((d) => filter.matches(d))).toEqual([false, true, false]);
  });
});

describe("is empty on non-collections", () => {
  const rows: Row[] = [
    ["Priority is empty", job, err('cannot perform is-empty operations on type int for selector: "Priority"')],
    ["Stop is not empty", job, err('cannot perform is-empty operations on type bool for selector: "Stop"')],
    ["TaskGroups.0 is empty", job, err('cannot perform is-empty operations on type struct for selector: "TaskGroups.0"')],
  ];
  test.each(rows)("%s", (...row) => check(row));
});

describe("any / all", () => {
  const rows: Row[] = [
    ['any TaskGroups as tg { tg.Name == "db" }', job, true],
    ['any TaskGroups as tg { tg.Name == "api" }', job, false],
    ["all TaskGroups as tg { tg.Count != 0 }", job, true],
    ["all TaskGroups as i, tg { tg.Count == 2 }", job, false],
    ["any TaskGroups as i, _ { i == 1 }", job, true],
    ["any TaskGroups as tg { any tg.Tasks as t { t.Driver == docker } }", job, true],
    ['any "/TaskGroups" as tg { "/tg/Name" == db }', job, true],
    ["any Meta as k { k == owner }", job, true],
    ['any Meta as k, v { k == owner and v == "team-a" }', job, true],
    ["all Meta as k, _ { k != nope }", job, true],
    ["any Meta as _, v { v == colon }", job, true],
    ["any Datacenters as _, dc { dc == dc2 }", job, true],
    ["any Datacenters as dc { dc == dc3 }", job, false],
    ["any Spreads as s { s.X == 1 }", job, false],
    ["all Spreads as s { s.X == 1 }", job, true],
    ["all Constraints as c { c.X == 1 }", job, true],
    ["any Meta.nope as x { x == 1 }", job, false],
    ["all Meta.nope as x { x == 1 }", job, true],
    ["(any TaskGroups as tg { tg.Name == db }) and Status == running", job, true],
    ["any Name as c { c == w }", job, err("Name is not a list or a map")],
    ["all Meta as k, k { k == x }", job, err('"k" cannot be used as a placeholder for both the index and the value')],
    ["any Meta as k { k.Color == red }", job, err("/k references a string so /k/Color is invalid")],
    ['any Datacenters as i, _ { i.Color == "red" }', job, err("/i references a int so /i/Color is invalid")],
    ["all TaskGroups as tg { tg.Missing == 1 }", job, err('error finding value in datum: /TaskGroups/0/Missing at part 2: couldn\'t find key: struct field with name "Missing"')],
  ];
  test.each(rows)("%s", (...row) => check(row));

  test("a collection expression is an alternative of `or` only", () => {
    expect(parseError("any TaskGroups as tg { tg.Name == db } and Status == running")).toMatch(/^1:\d+ \(\d+\): no match found, expected: /);
  });
});

describe("the specification's examples", () => {
  test("a node is filtered as the full Node struct: HTTPAddr works, Address (a stub field) is a missing field", () => {
    check(['HTTPAddr == "10.0.0.1:4646"', node, true]);
    check(['Address == "10.0.0.1"', node, err('error finding value in datum: /Address at part 0: couldn\'t find key: struct field with name "Address"')]);
  });

  const rows: Row[] = [
    ['Datacenters contains "dc2"', job, true],
    ['Status != "successful"', deployment, true],
    ["TaskGroups.dashboard.DesiredTotal == 1", deployment, true],
    ['TaskGroups["api"].HealthyAllocs == 0', deployment, true],
    ["TaskGroups.api.ProgressDeadline == 600000000000", deployment, true],
    ["TaskGroups.api.PlacedCanaries is empty", deployment, true],
    ["api in TaskGroups", deployment, true],
    ["TaskGroups contains cache", deployment, false],
    ["TaskGroups.cache is empty", deployment, true],
    ["TaskGroups.cache.DesiredTotal == 1", deployment, err('error finding value in datum: /TaskGroups/cache/DesiredTotal at part 1: couldn\'t find key "cache"')],
    ["Status == ready and Drain == false and SchedulingEligibility == eligible", node, true],
    ['Attributes["kernel.name"] == linux', node, true],
    ['Attributes["os.name"] == linux', node, false],
    ["Attributes.kernel.name == linux", node, err('error finding value in datum: /Attributes/kernel/name at part 1: couldn\'t find key "kernel"')],
    ["Drivers.docker.Healthy == true", node, true],
    ["Drivers.podman.Healthy == true", node, err('error finding value in datum: /Drivers/podman/Healthy at part 1: couldn\'t find key "podman"')],
    ["Drivers.docker.Nope == 1", node, err('error finding value in datum: /Drivers/docker/Nope at part 2: couldn\'t find key: struct field with name "Nope"')],
  ];
  test.each(rows)("%s", (...row) => check(row));
});

describe("parse errors", () => {
  const rows: Array<[string, string]> = [
    ['Name == "ab', '1:12 (11): rule "string": Unterminated string literal'],
    ["Name == `ab", '1:12 (11): rule "string": Unterminated string literal'],
    ['Name == "web" and\nStatus == "run', '2:15 (32): rule "string": Unterminated string literal'],
    ['Name == "é', '1:11 (11): rule "string": Unterminated string literal'], // columns count runes, offsets bytes
    ["Priority == 1x", '1:14 (13): rule "number": Invalid number literal'],
    ["Priority == 1.", '1:14 (13): rule "number": Invalid number literal'],
    ["Priority == 0x32", '1:14 (13): rule "number": Invalid number literal'],
    ['(Name == "web"', '1:15 (14): rule "grouping": Unmatched parentheses'],
    ['((Name == "web")', '1:17 (16): rule "grouping": Unmatched parentheses'],
    ['"dc1" in 123', '1:10 (9): rule "match": Invalid selector'],
    ["Meta[owner] == x", '1:6 (5): rule "index": Invalid index'],
    ['Meta["owner" == x', '1:14 (13): rule "index": Unclosed index expression'],
    ['Name == "\\q"', '1:9 (8): rule "string": invalid syntax'], // strconv.Unquote
    ['Name == "a\\"', '1:9 (8): rule "string": invalid syntax'],
    // several errors are reported together, one per line
    ['Name == "\\q" and Meta[1] == x', '1:9 (8): rule "string": invalid syntax\n1:23 (22): rule "index": Invalid index'],
  ];
  test.each(rows)("%s", (expression, message) => {
    expect(parseError(expression)).toBe(message);
  });

  test("nothing matched: the farthest position and what was expected there", () => {
    expect(parseError("NotValid")).toBe('1:9 (8): no match found, expected: "!=", ".", "==", "[", [ \\t\\r\\n] or [a-zA-Z0-9_/]');
    expect(parseError("Meta is nil")).toBe('1:9 (8): no match found, expected: "empty", "not" or [ \\t\\r\\n]'); // `is nil` is v0.1.16
    expect(parseError("Name = web")).toMatch(/^1:6 \(5\): no match found, expected: .*"==".*$/);
    expect(parseError('Name == "web")')).toMatch(/^1:14 \(13\): no match found, expected: /);
    expect(parseError('Name == "web" and')).toMatch(/^1:18 \(17\): no match found, expected: /);
    expect(parseError("Name ==")).toMatch(/^1:8 \(7\): no match found, expected: /);
    expect(parseError("Meta.owner == team-a")).toMatch(/^1:\d+ \(\d+\): no match found, expected: /);
    expect(parseError("")).toMatch(/^1:1 \(0\): no match found, expected: .*"\(".*$/);
    expect(parseError("name ~= x")).toMatch(/^1:6 \(5\): no match found/);
  });

  test("pathological nesting is refused quickly instead of exhausting the stack", () => {
    const started = Date.now();
    expect(parseError("(".repeat(10_000))).toMatch(/nests too deeply/);
    expect(parseError(`${"not ".repeat(5000)}A == 1`)).toMatch(/nests too deeply/);
    expect(parseError(`${"(".repeat(5000)}A == 1${")".repeat(5000)}`)).toMatch(/nests too deeply/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test("deep but reasonable nesting parses in linear time", () => {
    const depth = 120;
    const started = Date.now();
    const filter = compileFilter(`${"(".repeat(depth)}A == 1${")".repeat(depth)} and ${"(not ".repeat(50)}A == 1${")".repeat(50)}`);
    expect(filter.matches({ A: 1 })).toBe(true);
    const chain = compileFilter(Array.from({ length: 500 }, (_, i) => `A == ${i}`).join(" or "));
    expect(chain.matches({ A: 499 })).toBe(true);
    expect(parseError(Array.from({ length: 700 }, (_, i) => `A == ${i}`).join(" or "))).toMatch(/nests too deeply/);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

// ---------------------------------------------------------------------------------------------------
// Property: arbitrary input never throws anything but the two filter errors, and terminates

const KEYS = ["Name", "Meta", "Tags", "TaskGroups", "Count", "Config", "Stop", "Attributes", "a", "0", "k"];

const { datum: datumArb } = fc.letrec<{ datum: unknown; leaf: unknown }>((tie) => ({
  leaf: fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.double({ noNaN: false }), fc.boolean(), fc.constant(null), fc.constantFrom("web", "1", "true", "0x10", "")),
  datum: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tie("leaf"),
    fc.array(tie("datum"), { maxLength: 4 }),
    fc.dictionary(fc.constantFrom(...KEYS), tie("datum"), { maxKeys: 5 }),
  ),
}));

/** a top-level datum: a struct holding every key the selectors start with */
const rootArb = fc.record(Object.fromEntries([...KEYS, "tg", "v"].map((k) => [k, datumArb])) as Record<string, fc.Arbitrary<unknown>>);

const segment = fc.oneof(
  fc.constantFrom(...KEYS.filter((k) => /^[A-Za-z]/.test(k))).map((k) => `.${k}`),
  fc.nat({ max: 3 }).map((n) => `.${n}`),
  fc.constantFrom(...KEYS).map((k) => `["${k}"]`),
  fc.string({ maxLength: 4 }).map((s) => `[\`${s.replaceAll("`", "")}\`]`),
);
const selectorArb = fc.oneof(
  fc.tuple(fc.constantFrom(...KEYS.filter((k) => /^[A-Za-z]/.test(k)), "tg", "v"), fc.array(segment, { maxLength: 3 })).map(([head, rest]) => head + rest.join("")),
  fc.array(fc.constantFrom(...KEYS, "tg"), { maxLength: 3 }).map((parts) => `"${parts.map((p) => `/${p}`).join("")}"`),
);
const valueArb = fc.oneof(
  fc.integer().map(String),
  fc.tuple(fc.nat(1000), fc.nat(99)).map(([a, b]) => `${a}.${b}`),
  fc.string({ maxLength: 8 }).map((s) => `\`${s.replaceAll("`", "")}\``),
  fc.string({ maxLength: 8 }).map((s) => JSON.stringify(s)),
  fc.constantFrom("web", "true", "F", '"0x10"', '"(?=x)"', '"("', '"^w"', '"\\\\q"', '"a++"', "`(a)\\1`", '"/a/b"', '""', "1e5"),
  selectorArb,
);
const matchArb = fc.oneof(
  fc.tuple(selectorArb, fc.constantFrom("==", "!=", "contains", "not contains", "matches", "not matches"), valueArb).map(([s, op, v]) => `${s} ${op} ${v}`),
  fc.tuple(selectorArb, fc.constantFrom("is empty", "is not empty")).map(([s, op]) => `${s} ${op}`),
  fc.tuple(valueArb, fc.constantFrom("in", "not in"), selectorArb).map(([v, op, s]) => `${v} ${op} ${s}`),
);
const { expr: exprArb } = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    matchArb,
    fc.tuple(tie("expr"), fc.constantFrom("and", "or"), tie("expr")).map(([l, op, r]) => `${l} ${op} ${r}`),
    tie("expr").map((e) => `not ${e}`),
    tie("expr").map((e) => `(${e})`),
    fc
      .tuple(fc.constantFrom("any", "all"), selectorArb, fc.constantFrom("tg", "k, v", "k, _", "_, v", "v, v"), tie("expr"))
      .map(([op, s, b, e]) => `(${op} ${s} as ${b} { ${e} })`),
  ),
}));
const TOKENS = [
  "(",
  ")",
  "and",
  "or",
  "not",
  "==",
  "!=",
  "is",
  "empty",
  "in",
  "contains",
  "matches",
  "any",
  "all",
  "as",
  "{",
  "}",
  ",",
  "_",
  '"x"',
  "`y`",
  '"/a/b"',
  "Name",
  "Meta.k",
  'Meta["k"]',
  "TaskGroups.0",
  "1",
  "-1.5",
  "[",
  "]",
  '"',
  "`",
  "\\",
  ".",
  "tg",
  "\n",
  "é",
  "😀",
];
const soupArb = fc
  .array(fc.constantFrom(...TOKENS), { maxLength: 12 })
  .chain((tokens) => fc.array(fc.constantFrom("", " ", "  "), { minLength: tokens.length, maxLength: tokens.length }).map((gaps) => tokens.map((t, i) => t + gaps[i]).join("")));
const randomArb = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 }), soupArb);

function exercise(expression: string, data: unknown[]): void {
  let filter: ReturnType<typeof compileFilter>;
  try {
    filter = compileFilter(expression);
  } catch (e) {
    if (!(e instanceof FilterParseError)) throw e;
    expect(e.message).toMatch(/^\d+:\d+ \(\d+\): /);
    return;
  }
  for (const d of data) {
    try {
      expect(typeof filter.matches(d)).toBe("boolean");
    } catch (e) {
      if (!(e instanceof FilterEvaluationError)) throw e;
    }
  }
}

describe("property: only FilterParseError / FilterEvaluationError, and termination", () => {
  test("grammar-shaped expressions over random JSON", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(exprArb, fc.array(fc.oneof(rootArb, datumArb), { minLength: 1, maxLength: 3 }), (expression, data) => {
        exercise(expression, [...data, job, node, deployment]);
      }),
      { numRuns: 2000 },
    );
  });

  test("random strings and token soup over random JSON", { timeout: 120_000 }, () => {
    fc.assert(
      fc.property(randomArb, rootArb, (expression, d) => {
        exercise(expression, [d, job]);
      }),
      { numRuns: 2000 },
    );
  });

  test("results are deterministic", () => {
    fc.assert(
      fc.property(exprArb, rootArb, (expression, d) => {
        let filter: ReturnType<typeof compileFilter>;
        try {
          filter = compileFilter(expression);
        } catch {
          return;
        }
        const run = () => {
          try {
            return filter.matches(d);
          } catch (e) {
            return (e as Error).message;
          }
        };
        expect(run()).toEqual(run());
      }),
      { numRuns: 300 },
    );
  });
});
