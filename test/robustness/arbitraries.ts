/**
 * Shared fast-check arbitraries for the bad-input fuzz suites
 * (test/robustness/fuzz-*.test.ts): malformed and truncated JSON, bodies
 * with a wrong type in any field, huge strings, invalid UUIDs, awkward path
 * segments, bad durations, indexes and filter expressions, and repeated or
 * oversized headers.
 *
 * Run size and seed come from the environment so CI is reproducible and a
 * longer run is one variable away:
 *   FUZZ_RUNS  runs of a weight-1 property (default 60; `npm run fuzz` uses 20×)
 *   FUZZ_SEED  fast-check's seed (default fixed; printed with every failure)
 */
import fc from "fast-check";

// ---- run parameters -----------------------------------------------------------------------

function intEnv(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(value)}`);
  return n;
}

export const FUZZ_RUNS = intEnv("FUZZ_RUNS", 60);
export const FUZZ_SEED = intEnv("FUZZ_SEED", 20260101);

/** Runs for a property: `weight` × FUZZ_RUNS (at least 1). */
export function runsFor(weight: number): number {
  return Math.max(1, Math.round(FUZZ_RUNS * weight));
}

/** A vitest timeout that grows with the run count (each run is a few requests of at most 2 s each in the worst case). */
export function timeoutFor(weight: number, perRunMs = 60): number {
  return 30_000 + runsFor(weight) * perRunMs;
}

/**
 * fc.assert with the suite's seed and run count; a failure's message starts
 * with how to reproduce it (fast-check adds the counterexample, its shrunk
 * form and the replay path).
 */
export async function fuzz<T>(property: fc.IAsyncPropertyWithHooks<T> | fc.IAsyncProperty<T>, weight = 1): Promise<void> {
  const numRuns = runsFor(weight);
  try {
    await fc.assert(property, { seed: FUZZ_SEED, numRuns, endOnFailure: false });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`fuzz failure (reproduce with FUZZ_SEED=${FUZZ_SEED} FUZZ_RUNS=${FUZZ_RUNS}; this property ran ${numRuns} cases)\n${message}`, { cause: error });
  }
}

// ---- JSON text with raw pieces -----------------------------------------------------------

/**
 * A value that JSON.stringify cannot write (`1e999`, `-0`, a 30-digit number,
 * a 20 000-deep array) is carried as a marked string and spliced in raw by
 * `toJsonText`.
 */
const RAW_MARK = "\u0000raw:";
export const rawJson = (text: string): string => `${RAW_MARK}${text}`;

export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.replace(/"\\u0000raw:((?:[^"\\]|\\.)*)"/g, (_, escaped: string) => JSON.parse(`"${escaped}"`) as string);
}

// ---- strings -----------------------------------------------------------------------------

/** A long run of one character (cheap to build, shrinks to short). */
export const longString = (min = 1_000, max = 200_000): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom("a", "é", "😀", "%", "\\", "/", " ", "0"), fc.integer({ min, max })).map(([c, n]) => c.repeat(n));

export const weirdString: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "",
      " ",
      "null",
      "true",
      "0",
      "-1",
      "1e3",
      "NaN",
      "Infinity",
      "__proto__",
      "constructor",
      "toString",
      "hasOwnProperty",
      "prototype",
      "\u0000",
      "\ud800",
      "\udfff",
      "😀",
      "é",
      "a/b",
      "../..",
      "%2F",
      "${x}",
      "<script>",
      "*",
      "default",
      "global",
      "dc1",
      "10s",
      "-10s",
      "1h",
      "0s",
      "service",
      "batch",
      "system",
      "sysbatch",
      "release",
      "delete",
      "passing",
      "critical",
      "management",
      "client",
      "docker",
      "web",
      "standin",
    ),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 10 }) },
  { weight: 1, arbitrary: longString(1_000, 70_000) },
);

// ---- JSON values ---------------------------------------------------------------------------

const RAW_NUMBERS = [
  "1e999",
  "-1e999",
  "-0",
  "1e-400",
  "123456789012345678901234567890",
  "18446744073709551616",
  "18446744073709551615",
  "9007199254740993",
  "-9223372036854775809",
  "0.1e1",
  "1E2",
  "1.0",
];

export const weirdScalar: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1, 1.5, -0.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 64, -(2 ** 63), 1e308, -1e308, Number.MIN_VALUE) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_NUMBERS).map(rawJson) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 4, arbitrary: weirdString },
);

/** Deep nesting as raw text (arrays or objects), closed or not. */
export const deepNesting: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 50, max: 20_000 }), fc.boolean())
  .map(([n, objects]) => (objects ? `${'{"a":'.repeat(n)}1${"}".repeat(n)}` : `${"[".repeat(n)}1${"]".repeat(n)}`));

export const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: weirdScalar },
  { weight: 2, arbitrary: fc.array(weirdScalar, { maxLength: 4 }) },
  { weight: 2, arbitrary: fc.dictionary(weirdString, weirdScalar, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>([], {}, [null], [[]], [{}], { "": "" }) },
  { weight: 1, arbitrary: deepNesting.map(rawJson) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

// ---- mutating a valid body ---------------------------------------------------------------

export type Path = ReadonlyArray<string | number>;

function pathsOf(value: unknown, path: Path = [], out: Path[] = [], depth = 0): Path[] {
  out.push(path);
  if (depth >= 6 || value === null || typeof value !== "object") return out;
  if (Array.isArray(value)) for (const [i, item] of value.entries()) pathsOf(item, [...path, i], out, depth + 1);
  else for (const [k, v] of Object.entries(value)) pathsOf(v, [...path, k], out, depth + 1);
  return out;
}

type Mutation =
  | { kind: "set"; path: Path; value: unknown }
  | { kind: "delete"; path: Path }
  | { kind: "add"; path: Path; key: string; value: unknown }
  | { kind: "fold"; path: Path };

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // defineProperty, so `__proto__` becomes an own key (as JSON.parse makes it), not the prototype.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function applyMutation(root: unknown, m: Mutation): unknown {
  if (m.path.length === 0) {
    if (m.kind === "set") return m.value;
    if (m.kind === "add" && root !== null && typeof root === "object" && !Array.isArray(root)) setOwn(root as Record<string, unknown>, m.key, m.value);
    return root;
  }
  let parent: unknown = root;
  for (const step of m.path.slice(0, -1)) {
    if (parent === null || typeof parent !== "object") return root;
    parent = (parent as Record<string | number, unknown>)[step];
  }
  if (parent === null || typeof parent !== "object") return root;
  const last = m.path[m.path.length - 1]!;
  const container = parent as Record<string | number, unknown>;
  if (!(last in container)) return root;
  switch (m.kind) {
    case "set":
      if (Array.isArray(container)) container[last as number] = m.value;
      else setOwn(container as Record<string, unknown>, String(last), m.value);
      break;
    case "delete":
      if (Array.isArray(container)) container.splice(last as number, 1);
      else delete container[last];
      break;
    case "add": {
      const target = container[last];
      if (target !== null && typeof target === "object" && !Array.isArray(target)) setOwn(target as Record<string, unknown>, m.key, m.value);
      break;
    }
    case "fold":
      // The same field again under another spelling (Go's decoder folds case; the last one wins).
      if (!Array.isArray(container) && typeof last === "string")
        setOwn(container as Record<string, unknown>, last.toLowerCase() === last ? last.toUpperCase() : last.toLowerCase(), weirdFoldValue(container[last]));
      break;
  }
  return root;
}

function weirdFoldValue(value: unknown): unknown {
  return typeof value === "string" ? 12 : typeof value === "number" ? "12" : null;
}

const addedKey = fc.oneof(fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "", " ", "ID", "id", "Job", "job", "Name", "x"), weirdString);

/**
 * `template` with one to three fields changed: a wrong type, a field removed,
 * an extra key, a case-folded duplicate. `where` limits the fields changed.
 */
export function mutated(template: unknown, where: (path: Path) => boolean = () => true): fc.Arbitrary<unknown> {
  const paths = pathsOf(template).filter(where);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant("set" as const), path: fc.constantFrom(...paths), value: weirdValue }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("delete" as const), path: fc.constantFrom(...paths) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("add" as const), path: fc.constantFrom(...paths), key: addedKey, value: weirdValue }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("fold" as const), path: fc.constantFrom(...paths) }) },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 }).map((mutations) => mutations.reduce<unknown>((doc, m) => applyMutation(doc, m), structuredClone(template)));
}

/** Malformed JSON text near a valid document: truncated, with a stray character, or not JSON at all. */
export function malformedJson(template: unknown): fc.Arbitrary<string> {
  const text = toJsonText(template);
  return fc.oneof(
    { weight: 3, arbitrary: fc.nat({ max: Math.max(0, text.length - 1) }).map((n) => text.slice(0, n)) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.nat({ max: text.length }), fc.constantFrom("}", "]", ",", ":", '"', "\\", "x", "\u0000", "'", "\n", "{", "[", "-", ".", "e", "\ufeff", "é", "\ud800"))
        .map(([at, c]) => text.slice(0, at) + c + text.slice(at)),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "",
        " ",
        "\n\t ",
        "null",
        "true",
        "false",
        "0",
        "-1",
        "1e999",
        '"x"',
        '""',
        "[]",
        "[{}]",
        "[null]",
        "{}",
        '"\\ud800"',
        "\ufeff{}",
        "{}{}",
        "{} x",
        '{"a":1,}',
        "{'a':1}",
        "/*x*/{}",
        '{"a":NaN}',
        '{"a":Infinity}',
        '{"a":01}',
        '{"a":.5}',
        '{"a":"\\x41"}',
        '{"a":"\u0001"}',
        '{"a" 1}',
        '{"a":1 "b":2}',
        "{",
        "[",
        '{"',
        '{"a',
        '{"a":',
        '{"a":"',
        "]",
        "}",
        "nul",
        "tru",
        "undefined",
        "{}\u0000",
      ),
    },
    { weight: 1, arbitrary: deepNesting },
    { weight: 1, arbitrary: deepNesting.map((t) => t.slice(0, Math.ceil(t.length / 2))) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  );
}

/** A body for a route that takes `template`: mostly near-valid documents with wrong types, sometimes malformed, sometimes valid. */
export function jsonBody(template: unknown): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: mutated(template).map(toJsonText) },
    { weight: 3, arbitrary: malformedJson(template) },
    { weight: 1, arbitrary: fc.constant(toJsonText(template)) },
    { weight: 1, arbitrary: weirdValue.map(toJsonText) },
  );
}

// ---- identifiers and path segments ----------------------------------------------------------

export const invalidUuid: fc.Arbitrary<string> = fc.oneof(
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => u.slice(0, -1)),
  fc.uuid().map((u) => `${u}0`),
  fc.uuid().map((u) => u.replace(/-/g, "")),
  fc.uuid().map((u) => `{${u}}`),
  fc.uuid().map((u) => u.replace(/[0-9a-f]/, "g")),
  fc.uuid().map((u) => u.slice(0, 8)),
  fc.constantFrom("", "0", "00000000-0000-0000-0000-000000000000", "not-a-uuid", "zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz", "--------", "self"),
  fc.string({ maxLength: 40 }),
);

/** encodeURIComponent, but a lone surrogate becomes the raw bytes of its WTF-8 form instead of throwing. */
export function encodeSegment(text: string): string {
  let out = "";
  for (const ch of text) {
    try {
      out += encodeURIComponent(ch);
    } catch {
      const code = ch.charCodeAt(0);
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    }
  }
  return out;
}

/** A path segment as it goes on the wire (already percent-encoded where it is encoded at all). */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "%2F",
      "a%2Fb",
      "%2f",
      "..",
      ".",
      "%2E%2E",
      "%2e",
      "...",
      "%",
      "%zz",
      "%0",
      "%00",
      "%C0%AF",
      "%ED%A0%80",
      "%FF",
      "a%20b",
      "%25",
      "%3F",
      "%23",
      "~",
      "a;b",
      "a,b",
      "",
      "\\",
      "%5C",
      "self",
      "default",
      "*",
      "_",
      "%2F..%2F",
      "..%2F..",
      "%E2%80%AE",
      "%F0%9F%98%80",
    ),
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }).map(encodeSegment) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 10 }).map((s) => s.replace(/[?#%]/g, (c) => encodeURIComponent(c))) },
  { weight: 2, arbitrary: invalidUuid.map(encodeSegment) },
  { weight: 1, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 70_000 }).map((n) => "a".repeat(n)) },
);

// ---- durations, indexes, query values ------------------------------------------------------

const DURATION_UNITS = ["ns", "us", "µs", "μs", "ms", "s", "m", "h", "d", "S", "", "sec", "H"];

export const durationText: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "1ms",
      "10ms",
      "1s",
      "0",
      "0s",
      "1h30m",
      "1.5s",
      "100us",
      "1µs",
      "1μs",
      "5ns",
      "",
      "10",
      "-5s",
      "1e3s",
      "1.5.5s",
      "s",
      "10S",
      "1d",
      "1w",
      " 10s",
      "10s ",
      "+10s",
      "--1s",
      ".s",
      "1..s",
      "9223372036854775808ns",
      "9223372036854775807ns",
      "9999999999999999h",
      "2562048h",
      "2562047h",
      "-2562047h",
      "1h-1m",
      "NaN",
      "Infinity",
      "∞",
      "1,5s",
      "0x10s",
      "1_000s",
      "1e-3s",
      ".5s",
      "5.s",
      "00001s",
      "1000000000000000000000000000000s",
      "0.000000001ns",
    ),
  },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(fc.integer(), fc.double({ noNaN: true }).map(String)), fc.constantFrom(...DURATION_UNITS)).map(([n, u]) => `${n}${u}`) },
  {
    weight: 1,
    arbitrary: fc.array(fc.tuple(fc.nat(10_000), fc.constantFrom(...DURATION_UNITS)), { minLength: 1, maxLength: 4 }).map((parts) => parts.map(([n, u]) => `${n}${u}`).join("")),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

export const indexText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "-1",
    "abc",
    "1.5",
    "18446744073709551616",
    "18446744073709551615",
    "9007199254740993",
    "0x10",
    "",
    " 1",
    "1 ",
    "1e3",
    "+1",
    "01",
    "0",
    "9".repeat(40),
    "٣",
    "1\u0000",
  ),
  fc.nat().map(String),
  fc.string({ maxLength: 8 }),
);

export const boolText: fc.Arbitrary<string> = fc.constantFrom("", "true", "false", "1", "0", "t", "F", "TRUE", "True", "yes", "no", "maybe", "tRuE", "2", " true", "true ");

/** An instant (RFC 3339, or not). */
export const instantText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:01:00Z",
    "2026-01-02T00:00:00.123456789Z",
    "2026-01-01T00:00:00+01:00",
    "2025-12-31T23:59:59Z",
    "2026-01-01",
    "now",
    "",
    "2026-13-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:00:60Z",
    "9999-12-31T23:59:59Z",
    "+275760-09-13T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "-000001-01-01T00:00:00Z",
    "1970-01-01T00:00:00Z",
    "2026-01-01T00:00:00",
    "2026-01-01 00:00:00Z",
    "2026-01-01T00:00:00.Z",
    "2026-01-01T00:00:00z",
    "20260101T000000Z",
    "2026-01-01T00:00:00+25:00",
    "1767225600000",
    "Infinity",
  ),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.string({ maxLength: 25 }),
);

// ---- filter expressions (go-bexpr) ----------------------------------------------------------

const SELECTORS = [
  "ID",
  "Status",
  "Name",
  "Namespace",
  "Type",
  "Priority",
  "Meta",
  "Meta.foo",
  'Meta["foo"]',
  "TaskGroups",
  "TaskGroups.0.Name",
  "TaskGroups.5",
  "Datacenters",
  "Periodic.Enabled",
  "Stop",
  "Nope",
  "JobSummary.Summary",
  'Attributes["os.name"]',
  '"/Meta/foo"',
  '"/TaskGroups/0"',
  "CreateIndex",
  "Job.ID",
  "DeploymentStatus.Healthy",
  "Drain",
  "a.b.c.d.e",
  "TaskGroups.0.Tasks.0.Config",
  "ClientStatus",
  "JobID",
  "NodePool",
  "v",
  "v.Name",
  "k",
  "v.Count",
];
const BAD_SELECTORS = ["Meta[", 'Meta["x', "ID.", ".ID", "1ID", "ID..Name", "", "-"];
const VALUES = ['"x"', '"running"', "1", "-1.5", "0x10", "true", "`raw`", "running", '""', "1e5", "9".repeat(30), '"\u00e9"', "web", '"web"', "0"];
const BAD_VALUES = ['"unterminated', '"q"', "(", "-", "`open", "1.2.3"];
const OPS = ["==", "!=", "contains", "not contains"];
const BAD_OPS = ["=", "===", "<", ">=", "is", "in"];
const REGEXES = ["(", "[a-", "a{1000000}", ".*", "\\p{L}", "(?i)x", "a**", "\\", "(a|b)+$", "^web"];

const mostly = (good: readonly string[], bad: readonly string[]) => fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...good) }, { weight: 1, arbitrary: fc.constantFrom(...bad) });
const filterSelector = mostly(SELECTORS, BAD_SELECTORS);
const filterValue = mostly(VALUES, BAD_VALUES);
const filterMatch: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(filterSelector, mostly(OPS, BAD_OPS), filterValue).map(([s, o, v]) => `${s} ${o} ${v}`),
  fc.tuple(filterSelector, mostly(["is empty", "is not empty"], ["is nil", "is not nil", "is"])).map(([s, o]) => `${s} ${o}`),
  fc.tuple(filterValue, fc.constantFrom("in", "not in"), filterSelector).map(([v, o, s]) => `${v} ${o} ${s}`),
  fc.tuple(filterSelector, fc.constantFrom("matches", "not matches"), fc.constantFrom(...REGEXES)).map(([s, o, r]) => `${s} ${o} ${JSON.stringify(r)}`),
  fc.tuple(filterSelector, filterValue).map(([s, v]) => `${s}==${v}`),
);

export const filterExpression: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.letrec<{ expr: string }>((tie) => ({
      expr: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        filterMatch,
        fc.tuple(tie("expr"), mostly(["and", "or"], ["AND", "&&"]), tie("expr")).map(([a, op, b]) => `${a} ${op} ${b}`),
        tie("expr").map((e) => `not ${e}`),
        tie("expr").map((e) => `(${e})`),
        fc
          .tuple(fc.constantFrom("any", "all"), filterSelector, mostly(["v", "k, v", "k, _", "_, v"], ["v, v", "_"]), tie("expr"))
          .map(([q, s, b, e]) => `${q} ${s} as ${b} { ${e} }`),
      ),
    })).expr,
  },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 20_000 }).map((n) => `${"(".repeat(n)}ID == "x"${")".repeat(n)}`) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 20_000 }).map((n) => `${"not ".repeat(n)}ID == "x"`) },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 5_000 }).map((n) => Array.from({ length: n }, () => 'ID == "x"').join(" and ")) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 500 }).map((n) => `${"(".repeat(n)}ID == "x"`) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
);

// ---- query strings ------------------------------------------------------------------------

export type QueryEntries = Array<[string, string]>;

/** Per parameter name, what to put in it (anything else gets a weird string). */
export type QueryShape = Readonly<Record<string, fc.Arbitrary<string>>>;

export const COMMON_QUERY: QueryShape = {
  index: indexText,
  wait: durationText,
  stale: boolText,
  pretty: boolText,
  filter: filterExpression,
};

const VALID_INDEX = /^\d+$/;

/**
 * Keeps every request bounded in time: a blocking read (a valid positive
 * `index`) always gets a short positive `wait`, since the products' default
 * wait (and a zero or negative one) is minutes.
 */
export function boundBlocking(entries: QueryEntries, waitMs: number): QueryEntries {
  const blocks = entries.some(([k, v]) => k === "index" && VALID_INDEX.test(v) && BigInt(v) > 0n);
  if (!blocks) return entries;
  return [...entries.filter(([k]) => k !== "wait"), ["wait", `${waitMs}ms`]];
}

export function queryEntries(shape: QueryShape, maxEntries = 4): fc.Arbitrary<QueryEntries> {
  const names = Object.keys(shape);
  const entry: fc.Arbitrary<[string, string]> = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...names).chain((name) => shape[name]!.map((value) => [name, value] as [string, string])) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...names), weirdString) },
    { weight: 1, arbitrary: fc.tuple(weirdString, weirdString) },
  );
  return fc.tuple(fc.array(entry, { maxLength: maxEntries }), fc.integer({ min: 1, max: 20 })).map(([entries, waitMs]) => boundBlocking(entries, waitMs));
}

/** `?a=b&…`, each name and value percent-encoded (a lone surrogate as its WTF-8 bytes). */
export function queryString(entries: QueryEntries): string {
  if (entries.length === 0) return "";
  return `?${entries.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join("&")}`;
}

// ---- headers ------------------------------------------------------------------------------

const HEADER_CHARS = [..." !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~", "\t", "\u0080", "é", "ÿ"];

/** A value Headers accepts (Latin-1, no CR, LF or NUL). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: fc.constantFrom(...HEADER_CHARS), maxLength: 40 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 100_000 }).map((n) => "x".repeat(n)) },
);

export const tokenValue: fc.Arbitrary<string> = fc.oneof(
  fc.uuid(),
  invalidUuid.map((s) => s.replace(/[^\x20-\x7e]/g, "")),
  fc.constantFrom("", " ", "anonymous", "root", "Bearer", "Bearer ", "Bearer  abc def", "bearer x", "Basic abc", "Bearer\tx", "a,b", "x, y"),
  headerValue,
);

export const contentType: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "application/json",
    "application/json; charset=utf-8",
    "application/json; charset=UTF-16",
    "application/json; charset=utf-16le",
    "application/json; charset=latin1",
    'application/json; charset="utf-8"',
    "application/json;charset=utf-7",
    "application/json; charset=",
    "APPLICATION/JSON",
    "application/json, text/plain",
    "text/plain",
    "text/plain;charset=UTF-8",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/octet-stream",
    "*/*",
    "",
    "json",
    ";",
    "application/json;;",
    "application/vnd.api+json",
    "application/json; charset=utf-8; charset=utf-16",
  ),
  headerValue,
);

export const acceptEncoding: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("gzip", "deflate", "br", "identity", "*", "gzip;q=0", "gzip, gzip", "GZIP", "x-gzip", "gzip;q=1.0, identity; q=0.5, *;q=0", "", ",", "zstd", "compress"),
  headerValue,
);

export type HeaderEntries = Array<[string, string]>;

/** Headers drawn from `shape` (name → values), possibly repeated, plus an odd extra header now and then. */
export function headerEntries(shape: Readonly<Record<string, fc.Arbitrary<string>>>, maxEntries = 4): fc.Arbitrary<HeaderEntries> {
  const names = Object.keys(shape);
  const entry: fc.Arbitrary<[string, string]> = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...names).chain((name) => shape[name]!.map((value) => [name, value] as [string, string])) },
    { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), headerValue) },
  );
  return fc.array(entry, { maxLength: maxEntries });
}

/** Many copies of one header (a client or proxy that repeats it). */
export function repeatedHeader(name: string, value: fc.Arbitrary<string>): fc.Arbitrary<HeaderEntries> {
  return fc.tuple(value, fc.integer({ min: 2, max: 200 })).map(([v, n]) => Array.from({ length: n }, () => [name, v] as [string, string]));
}

export const METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"] as const;
export const method: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...METHODS) },
  { weight: 1, arbitrary: fc.constantFrom("get", "patch", "PROPFIND", "M-SEARCH") },
);

/** The scheduler's ACL section the fuzz suites share: ACLs on, a management token and a default-namespace reader. */
export const SCHEDULER_MGMT_TOKEN = "11111111-2222-3333-4444-555555555555";
export const SCHEDULER_READER_TOKEN = "66666666-7777-8888-9999-aaaaaaaaaaaa";
export const SCHEDULER_ACL = {
  enabled: true,
  policies: [{ Name: "readonly", Rules: 'namespace "default" { policy = "read" }' }],
  tokens: [
    { SecretID: SCHEDULER_MGMT_TOKEN, Name: "root", Type: "management" },
    { SecretID: SCHEDULER_READER_TOKEN, Name: "reader", Type: "client", Policies: ["readonly"] },
  ],
};
