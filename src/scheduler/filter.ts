/**
 * Nomad `filter=` expressions: a TypeScript port of hashicorp/go-bexpr **v0.1.13** (the version Nomad's
 * `go.mod` pins) together with the parts of mitchellh/pointerstructure v1.2.x it relies on.
 *
 * Parsing mirrors the pigeon PEG grammar (`grammar/grammar.peg`) rule for rule, and a small PEG interpreter
 * reproduces pigeon's error reporting: `line:col (offset): rule "name": message` for the grammar's own errors
 * (`Unterminated string literal`, `Invalid number literal`, `Invalid index`, `Unclosed index expression`,
 * `Invalid selector`, `Unmatched parentheses`, and `invalid syntax` from `strconv.Unquote`), and
 * `line:col (offset): no match found, expected: …` (farthest failure) otherwise. Several errors are joined
 * with a newline, after pigeon's de-duplication. Columns count runes, offsets count UTF-8 bytes.
 * Differences from the generated Go parser: rule results are memoised (pigeon without `Memoize` is
 * exponential on nested parentheses; the memo is invisible in the results because every side effect it
 * skips is idempotent), and nesting deeper than {@link MAX_RULE_DEPTH} rules, or more than 2,000,000
 * parsing steps, is refused with a {@link FilterParseError} instead of exhausting the stack.
 *
 * Language (v0.1.13): `or` / `and` / `not` / parentheses (`a and not b or c` is `(a and (not b)) or c`);
 * matches `S == V`, `S != V`, `S is empty`, `S is not empty`, `V in S`, `V not in S`, `S contains V`,
 * `S not contains V`, `S matches V`, `S not matches V`; and the collection forms
 * `any S as v { … }` / `all S as k, v { … }` (alternatives of `or` only, so wrap them in parentheses
 * to combine them). A selector is `Ident(.Ident | .123 | ["key"] | [`key`])*` (identifiers may contain
 * `_` and `/`) or a JSON pointer in double quotes (`"/Meta/foo"`). A value is a number, a double-quoted
 * string (Go escapes), a backtick raw string, or a *selector written as a value*, which in v0.1.13 is
 * **not** looked up: it is its own text (`Status == running` ≡ `Status == "running"`, and a
 * double-quoted value that looks like a JSON pointer, `"/a/b"`, is the text `a/b`). Values always reach
 * the evaluator as raw text and are coerced to the kind of the selected field (`strconv.ParseBool`,
 * `strconv.ParseInt(raw, 0, 64)`, `strconv.ParseFloat`; strings compare exactly).
 * (Selector-valued right-hand sides that are resolved against the datum do not exist in v0.1.13;
 * `is nil` / `is not nil` arrived in later versions and are parse errors here, as in Nomad.)
 *
 * Datum model. The datum is the JSON rendering of a Nomad struct. Go's reflection tells a struct from a map;
 * JSON does not, so this module decides:
 *  - the top-level object, array elements and the values of maps are **structs**: a selector segment
 *    naming a key they lack is an error (`error finding value in datum: /Foo at part 0: couldn't find
 *    key: struct field with name "Foo"`), as pointerstructure reports for Go structs;
 *  - an object (or `null`) held by a struct field whose name is in {@link MAP_FIELDS} is a **map**: a
 *    missing key as the *last* selector segment is "not present", and the operator decides
 *    (`==`, `in`, `contains`, `matches`, `is not empty` are false; their negations and `is empty` are true);
 *  - objects nested anywhere below a `Config` map (a Go `map[string]interface{}`) are maps too;
 *  - a JSON integer is an `int`, any other number a `float64`; `null` elsewhere is a nil pointer;
 *  - the datum is seen as JSON.stringify renders it: keys holding `undefined` are absent, and an object with
 *    `toJSON()` (a Date) is its JSON value.
 * A selector crossing an array needs a numeric segment (`TaskGroups.0.Name`); `TaskGroups.Name` on an
 * array is an error, as in go-bexpr (the filter runs on the main object only, and `any`/`all` are the
 * way to look inside arrays).
 *
 * Where go-bexpr v0.1.13 panics (the Nomad server would fail) this port raises a FilterEvaluationError:
 * `is empty` on a non-collection uses v0.1.16's wording, and `matches` on a nil value reports type `<nil>`.
 * On `null` in a field Nomad declares as a pointer to a struct ({@link STRUCT_POINTER_FIELDS}) `in` /
 * `contains` are go-bexpr's invalid-type error and `is empty`, `any`, `all` (a panic in go-bexpr) a
 * FilterEvaluationError saying so; on any other `null` (a nil slice or map) `is empty` is true, `in` /
 * `contains` find nothing and `any`/`all` see an empty collection. Integer fields Nomad declares
 * `uint64` ({@link UNSIGNED_FIELDS}) coerce with ParseUint; numbers below `Config` are float64. Go type names in messages are
 * approximations (`int`, `float64`, `[]interface {}`, `map[string]interface {}`, `struct`).
 */
import { RE2JS } from 're2js';

/** A parse failure; `message` in pigeon's shape: `1:12 (11): rule "string": Unterminated string literal`, or `1:14 (13): no match found, expected: …` (the expected list may differ from pigeon's). */
export class FilterParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterParseError';
  }
}

/** An evaluation failure (e.g. a selector naming a struct field the datum lacks): `message` as go-bexpr/pointerstructure word it, e.g. `error finding value in datum: /Foo at part 0: couldn't find key: struct field with name "Foo"`. */
export class FilterEvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FilterEvaluationError';
  }
}

export interface Filter {
  matches(datum: unknown): boolean;
}

/**
 * Struct fields whose object value is a Go map rather than a struct (see the module comment). Mutable: a
 * caller whose data holds other map-typed fields may add their names.
 */
export const MAP_FIELDS: Set<string> = new Set([
  'Meta',
  'Attributes',
  'Links',
  'TaskGroups',
  'Drivers',
  'HostVolumes',
  'Summary',
  'QueuedAllocations',
  'FailedTGAllocs',
  'Config',
  'Env',
  'TaggedAddresses',
  // Allocation, AllocMetric, Evaluation and Node maps (Go map[string]…)
  'TaskStates',
  'TaskResources',
  'ClassEligibility',
  'NodesAvailable',
  'ClassFiltered',
  'ConstraintFiltered',
  'ClassExhausted',
  'DimensionExhausted',
  'ResourcesExhausted',
  'Scores',
  'CSIControllerPlugins',
  'CSINodePlugins',
  'HostNetworks',
  // AllocatedResources: per-task resources and lifecycles are maps by task name (a task group's
  // Tasks is a JSON array, which stays a slice whatever its name)
  'Tasks',
  'TaskLifecycles',
]);

/** Map fields whose nested objects are maps as well (Go `map[string]interface{}`). */
const FREEFORM_MAP_FIELDS: ReadonlySet<string> = new Set(['Config']);

/**
 * Struct fields Nomad declares `uint64` (raft indexes, job versions, a task's
 * restart count): go-bexpr coerces a literal compared with one of them with
 * `strconv.ParseUint(raw, 0, 64)`, so `-1` or `1.5` is an error there and
 * `18446744073709551615` a valid value; every other integer field is a signed
 * `int`/`int64` (ParseInt).
 */
/**
 * Struct fields Nomad declares as a pointer to a struct (`*PeriodicConfig`,
 * `*ParameterizedJobConfig`, a group's `*RestartPolicy`, …): `null` there is a
 * nil struct pointer, not a nil slice or map. go-bexpr treats one as an
 * invalid value: `in`/`contains` fail with "Cannot perform in/contains
 * operations on type invalid", and `is empty`, `any` and `all` panic (Nomad
 * then fails the request), which this port answers with a 400 saying so.
 */
const STRUCT_POINTER_FIELDS: ReadonlySet<string> = new Set([
  'ParameterizedJob',
  'Periodic',
  'Multiregion',
  'DispatchPayload',
  'EphemeralDisk',
  'RestartPolicy',
  'ReschedulePolicy',
  'Migrate',
  'Scaling',
  'Lifecycle',
  'LogConfig',
  'Vault',
  'Consul',
  'Disconnect',
  'DeploymentStatus',
  'RescheduleTracker',
  'DrainStrategy',
  'LastDrain',
  'Identity',
]);

/**
 * `[]byte` struct fields (a dispatched job's `Payload`): base64 in the JSON,
 * bytes to go-bexpr, which sees a slice of uint8: `is empty` is its length,
 * `in`/`contains` compare a byte (ParseUint), `matches` runs over the raw
 * bytes, and `==` has no comparison for a slice.
 */
const BYTES_FIELDS: ReadonlySet<string> = new Set(['Payload']);

/** int64 struct fields (Unix-nanosecond times, durations): their reflect kind is int64, not int. */
const INT64_FIELDS: ReadonlySet<string> = new Set([
  'SubmitTime',
  'CreateTime',
  'ModifyTime',
  'StatusUpdatedAt',
  'Wait',
  'KillTimeout',
  'ShutdownDelay',
  'MinHealthyTime',
  'HealthyDeadline',
  'ProgressDeadline',
  'Stagger',
  'Interval',
  'Delay',
  'MaxDelay',
]);

/**
 * The Go types of the struct fields people filter on most, as go-bexpr names
 * them in `Value of type … is not convertible to []byte` (Nomad's structs);
 * anything else gets the JSON-derived approximation.
 */
const GO_TYPE_NAMES: Readonly<Record<string, string>> = {
  TaskGroups: '[]*structs.TaskGroup',
  Tasks: '[]*structs.Task',
  Datacenters: '[]string',
  Constraints: '[]*structs.Constraint',
  Affinities: '[]*structs.Affinity',
  Spreads: '[]*structs.Spread',
  Services: '[]*structs.Service',
  Networks: '[]*structs.NetworkResource',
  Meta: 'map[string]string',
  Attributes: 'map[string]string',
  Update: 'structs.UpdateStrategy',
  Periodic: '*structs.PeriodicConfig',
  ParameterizedJob: '*structs.ParameterizedJobConfig',
  DeploymentStatus: '*structs.AllocDeploymentStatus',
  TaskStates: 'map[string]*structs.TaskState',
};

const UNSIGNED_FIELDS: ReadonlySet<string> = new Set([
  'CreateIndex',
  'ModifyIndex',
  'JobModifyIndex',
  'AllocModifyIndex',
  'NodeModifyIndex',
  'SnapshotIndex',
  'JobSpecModifyIndex',
  'JobCreateIndex',
  'EvalCreateIndex',
  'JobVersion',
  'Version',
  'Restarts',
]);

/** Rule nesting refused beyond this depth (about 150 levels of parentheses, or 600 chained `and`s): about half of what a cold V8 stack holds. */
const MAX_RULE_DEPTH = 600;
/** Parsing steps refused beyond this count (go-bexpr v0.1.15's default for pigeon's MaxExpressions). */
const MAX_EXPRESSIONS = 2_000_000;

/** Parses once; throws FilterParseError. */
export function compileFilter(expression: string): Filter {
  let ast: Expr;
  try {
    ast = parseExpression(expression);
  } catch (e) {
    if (e instanceof FilterParseError) throw e;
    if (e instanceof RangeError) throw new FilterParseError('1:1 (0): expression nests too deeply');
    throw e;
  }
  return {
    matches(datum: unknown): boolean {
      try {
        return evaluate(ast, rootValue(datum), []);
      } catch (e) {
        if (e instanceof FilterEvaluationError) throw e;
        if (e instanceof RangeError) throw new FilterEvaluationError('expression nests too deeply');
        throw e;
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// AST (grammar/ast.go)

type MatchOp = 'eq' | 'ne' | 'in' | 'notin' | 'empty' | 'notempty' | 'matches' | 'notmatches';

interface Selector {
  type: 'bexpr' | 'jsonptr';
  path: string[];
}

interface MatchValue {
  raw: string;
  /** compiled regular expression, cached after the first successful compilation (as go-bexpr does) */
  re?: RE2JS;
}

type BindMode = 'Default' | 'Index' | 'Value' | 'IndexAndValue';

interface NameBinding {
  mode: BindMode;
  def: string;
  index: string;
  value: string;
}

type Expr =
  | { k: 'not'; e: Expr }
  | { k: 'and'; l: Expr; r: Expr }
  | { k: 'or'; l: Expr; r: Expr }
  | { k: 'match'; sel: Selector; op: MatchOp; value: MatchValue | null }
  | { k: 'coll'; op: 'ALL' | 'ANY'; sel: Selector; binding: NameBinding; inner: Expr };

/** `Selector.String()` */
function selectorString(sel: Selector): string {
  if (sel.path.length === 0) return '';
  return sel.type === 'bexpr' ? sel.path.join('.') : sel.path.join('/');
}

/** NotPresentDisposition: the result of an operator when a map key is missing. */
function notPresentDisposition(op: MatchOp): boolean {
  switch (op) {
    case 'ne':
    case 'notin':
    case 'empty':
    case 'notmatches':
      return true;
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------------
// A PEG interpreter with pigeon's semantics (generated_static_code.go)

type ActionResult = { v: unknown; err?: string };
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ActionFn = (v: any, text: string) => ActionResult;

type PNode =
  | { t: 'lit'; cps: number[]; want: string }
  | { t: 'cls'; val: string; test: (cp: number) => boolean }
  | { t: 'any' }
  | { t: 'seq'; items: PNode[] }
  | { t: 'choice'; alts: PNode[] }
  | { t: 'star'; e: PNode }
  | { t: 'plus'; e: PNode }
  | { t: 'opt'; e: PNode }
  | { t: 'and'; e: PNode }
  | { t: 'not'; e: PNode }
  | { t: 'fail'; msg: string }
  | { t: 'ref'; name: string }
  | { t: 'act'; e: PNode; fn: ActionFn };

interface PRule {
  id: number;
  name: string;
  display: string | null;
  e: PNode;
}

const lit = (s: string): PNode => ({ t: 'lit', cps: Array.from(s, (c) => c.codePointAt(0)!), want: goQuote(s) });
const cls = (val: string, re: RegExp): PNode => ({ t: 'cls', val, test: (cp) => re.test(String.fromCodePoint(cp)) });
const ANY: PNode = { t: 'any' };
const seq = (...items: PNode[]): PNode => ({ t: 'seq', items });
const choice = (...alts: PNode[]): PNode => ({ t: 'choice', alts });
const star = (e: PNode): PNode => ({ t: 'star', e });
const plus = (e: PNode): PNode => ({ t: 'plus', e });
const opt = (e: PNode): PNode => ({ t: 'opt', e });
const and = (e: PNode): PNode => ({ t: 'and', e });
const not = (e: PNode): PNode => ({ t: 'not', e });
const fail = (msg: string): PNode => ({ t: 'fail', msg });
const ref = (name: string): PNode => ({ t: 'ref', name });
const act = (e: PNode, fn: ActionFn): PNode => ({ t: 'act', e, fn });
const ok = (v: unknown): ActionResult => ({ v });

const RULES = new Map<string, PRule>();
function rule(name: string, display: string | null, e: PNode): void {
  RULES.set(name, { id: RULES.size, name, display: display === null ? null : `"${display}"`, e });
}

// grammar/grammar.peg (v0.1.13). The rules up to EOF are transcribed from the generated parser. The two
// collection rules (added in v0.1.13 by "Add any and all expression support") follow the grammar as documented
// (`("any"|"all") _ Selector _ "as" _ Binding _? "{" _? Or _? "}"`, an alternative of OrExpression only); their
// exact PEG text was not available, so "no match found" expected-lists around them may differ from pigeon's.
const WS = ref('_');
const OWS = opt(WS);
const MATCH_OP = (name: string, op: MatchOp, node: PNode) => rule(name, null, act(node, () => ok(op)));

rule(
  'Input',
  null,
  choice(
    act(seq(OWS, lit('('), OWS, ref('OrExpression'), OWS, lit(')'), OWS, ref('EOF')), (v) => ok(v[3])),
    act(seq(OWS, ref('OrExpression'), OWS, ref('EOF')), (v) => ok(v[1])),
  ),
);
rule(
  'OrExpression',
  null,
  choice(
    act(seq(ref('AndExpression'), WS, lit('or'), WS, ref('OrExpression')), (v) => ok({ k: 'or', l: v[0], r: v[4] })),
    ref('AndExpression'),
    ref('CollectionExpression'),
  ),
);
rule(
  'AndExpression',
  null,
  choice(
    act(seq(ref('NotExpression'), WS, lit('and'), WS, ref('AndExpression')), (v) => ok({ k: 'and', l: v[0], r: v[4] })),
    ref('NotExpression'),
  ),
);
rule(
  'NotExpression',
  null,
  choice(
    act(seq(lit('not'), WS, ref('NotExpression')), (v) => {
      const inner = v[2] as Expr;
      // `not not x` collapses to `x`
      return ok(inner.k === 'not' ? inner.e : { k: 'not', e: inner });
    }),
    ref('ParenthesizedExpression'),
  ),
);
rule(
  'ParenthesizedExpression',
  'grouping',
  choice(
    act(seq(lit('('), OWS, ref('OrExpression'), OWS, lit(')')), (v) => ok(v[2])),
    ref('MatchExpression'),
    seq(lit('('), OWS, ref('OrExpression'), OWS, not(lit(')')), fail('Unmatched parentheses')),
  ),
);
rule('MatchExpression', 'match', choice(ref('MatchSelectorOpValue'), ref('MatchSelectorOp'), ref('MatchValueOpSelector')));
rule(
  'MatchSelectorOpValue',
  'match',
  act(
    seq(
      ref('Selector'),
      choice(
        ref('MatchEqual'),
        ref('MatchNotEqual'),
        ref('MatchContains'),
        ref('MatchNotContains'),
        ref('MatchMatches'),
        ref('MatchNotMatches'),
      ),
      ref('Value'),
    ),
    (v) => ok({ k: 'match', sel: v[0], op: v[1], value: v[2] }),
  ),
);
rule(
  'MatchSelectorOp',
  'match',
  act(seq(ref('Selector'), choice(ref('MatchIsEmpty'), ref('MatchIsNotEmpty'))), (v) =>
    ok({ k: 'match', sel: v[0], op: v[1], value: null }),
  ),
);
rule(
  'MatchValueOpSelector',
  'match',
  choice(
    act(seq(ref('Value'), choice(ref('MatchIn'), ref('MatchNotIn')), ref('Selector')), (v) =>
      ok({ k: 'match', sel: v[2], op: v[1], value: v[0] }),
    ),
    seq(ref('Value'), choice(ref('MatchIn'), ref('MatchNotIn')), not(ref('Selector')), fail('Invalid selector')),
  ),
);
MATCH_OP('MatchEqual', 'eq', seq(OWS, lit('=='), OWS));
MATCH_OP('MatchNotEqual', 'ne', seq(OWS, lit('!='), OWS));
MATCH_OP('MatchIsEmpty', 'empty', seq(WS, lit('is'), WS, lit('empty')));
MATCH_OP('MatchIsNotEmpty', 'notempty', seq(WS, lit('is'), WS, lit('not'), WS, lit('empty')));
MATCH_OP('MatchIn', 'in', seq(WS, lit('in'), WS));
MATCH_OP('MatchNotIn', 'notin', seq(WS, lit('not'), WS, lit('in'), WS));
MATCH_OP('MatchContains', 'in', seq(WS, lit('contains'), WS));
MATCH_OP('MatchNotContains', 'notin', seq(WS, lit('not'), WS, lit('contains'), WS));
MATCH_OP('MatchMatches', 'matches', seq(WS, lit('matches'), WS));
MATCH_OP('MatchNotMatches', 'notmatches', seq(WS, lit('not'), WS, lit('matches'), WS));
rule(
  'Selector',
  'selector',
  choice(
    act(seq(ref('Identifier'), star(ref('SelectorOrIndex'))), (v) => ok({ type: 'bexpr', path: [v[0], ...v[1]] })),
    act(seq(lit('"'), star(ref('JsonPointerSegment')), lit('"')), (v) => ok({ type: 'jsonptr', path: parseJsonPointer(v[1]) })),
  ),
);
rule(
  'JsonPointerSegment',
  null,
  act(seq(lit('/'), plus(cls('[\\pL\\pN-_.~:|]', /^[\p{L}\p{N}\-_.~:|]$/u))), (_v, text) => ok(text.slice(1))),
);
rule('Identifier', null, act(seq(cls('[a-zA-Z]', /^[a-zA-Z]$/), star(cls('[a-zA-Z0-9_/]', /^[a-zA-Z0-9_/]$/))), (_v, text) => ok(text)));
rule(
  'SelectorOrIndex',
  null,
  choice(
    act(seq(lit('.'), ref('Identifier')), (v) => ok(v[1])),
    ref('IndexExpression'),
    act(seq(lit('.'), plus(cls('[0-9]', /^[0-9]$/))), (_v, text) => ok(text.slice(1))),
  ),
);
rule(
  'IndexExpression',
  'index',
  choice(
    act(seq(lit('['), OWS, ref('IndexKey'), OWS, lit(']')), (v) => ok(v[2])),
    seq(lit('['), OWS, not(ref('IndexKey')), fail('Invalid index')),
    seq(lit('['), OWS, ref('IndexKey'), OWS, not(lit(']')), fail('Unclosed index expression')),
  ),
);
// The specification writes map keys as ['<key>'], a form go-bexpr lacks: a single-quoted key is taken
// literally (no escapes), alongside go-bexpr's double-quoted and backtick strings.
rule('IndexKey', null, choice(ref('StringLiteral'), act(seq(lit("'"), star(seq(not(lit("'")), ANY)), lit("'")), (_v, text) => ok(text.slice(1, -1)))));
rule(
  'Value',
  'value',
  choice(
    act(ref('Selector'), (v) => ok({ raw: selectorString(v as Selector) })),
    act(ref('NumberLiteral'), (v) => ok({ raw: v })),
    act(ref('StringLiteral'), (v) => ok({ raw: v })),
  ),
);
rule(
  'NumberLiteral',
  'number',
  choice(
    act(seq(opt(lit('-')), ref('IntegerOrFloat'), and(ref('AfterNumbers'))), (_v, text) => ok(text)),
    seq(opt(lit('-')), ref('IntegerOrFloat'), not(ref('AfterNumbers')), fail('Invalid number literal')),
  ),
);
rule('AfterNumbers', null, and(choice(WS, ref('EOF'), lit(')'))));
rule(
  'IntegerOrFloat',
  null,
  seq(choice(lit('0'), seq(cls('[1-9]', /^[1-9]$/), star(cls('[0-9]', /^[0-9]$/)))), opt(seq(lit('.'), plus(cls('[0-9]', /^[0-9]$/))))),
);
rule(
  'StringLiteral',
  'string',
  choice(
    act(
      choice(seq(lit('`'), star(ref('RawStringChar')), lit('`')), seq(lit('"'), star(ref('DoubleStringChar')), lit('"'))),
      (_v, text) => goUnquote(text),
    ),
    seq(
      choice(seq(lit('`'), star(ref('RawStringChar'))), seq(lit('"'), star(ref('DoubleStringChar')))),
      ref('EOF'),
      fail('Unterminated string literal'),
    ),
  ),
);
rule('RawStringChar', null, seq(not(lit('`')), ANY));
rule('DoubleStringChar', null, seq(not(lit('"')), ANY));
rule('_', 'whitespace', plus(cls('[ \\t\\r\\n]', /^[ \t\r\n]$/)));
rule('EOF', null, not(ANY));
rule(
  'CollectionExpression',
  'collection',
  act(
    seq(
      choice(lit('any'), lit('all')),
      WS,
      ref('Selector'),
      WS,
      lit('as'),
      WS,
      ref('CollectionNameBinding'),
      OWS,
      lit('{'),
      OWS,
      ref('OrExpression'),
      OWS,
      lit('}'),
    ),
    (v) => ok({ k: 'coll', op: v[0] === 'any' ? 'ANY' : 'ALL', sel: v[2], binding: v[6], inner: v[10] }),
  ),
);
const binding = (mode: BindMode, def: string, index: string, value: string): NameBinding => ({ mode, def, index, value });
rule(
  'CollectionNameBinding',
  null,
  choice(
    act(seq(ref('Identifier'), OWS, lit(','), OWS, ref('Identifier')), (v) => ok(binding('IndexAndValue', '', v[0], v[4]))),
    act(seq(ref('Identifier'), OWS, lit(','), OWS, lit('_')), (v) => ok(binding('Index', '', v[0], ''))),
    act(seq(lit('_'), OWS, lit(','), OWS, ref('Identifier')), (v) => ok(binding('Value', '', '', v[4]))),
    act(ref('Identifier'), (v) => ok(binding('Default', v, '', ''))),
  ),
);

/** pointerstructure.Parse("/" + segments.join("/")).Parts */
function parseJsonPointer(segments: string[]): string[] {
  const parts = segments.length === 0 ? [''] : segments;
  return parts.map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

const FAIL: unique symbol = Symbol('fail');
type PResult = unknown | typeof FAIL;

interface Position {
  line: number;
  col: number;
  offset: number;
}

/** A grammar node compiled to a closure (small stack frames keep deep nesting affordable). */
type Matcher = (p: PegParser) => PResult;

const COMPILED = new Map<PNode, Matcher>();

function compileNode(n: PNode): Matcher {
  const cached = COMPILED.get(n);
  if (cached) return cached;
  let m: Matcher;
  switch (n.t) {
    case 'lit':
      m = (p) => p.matchLit(n.cps, n.want);
      break;
    case 'cls':
      m = (p) => p.matchClass(n.val, n.test);
      break;
    case 'any':
      m = (p) => p.matchAny();
      break;
    case 'seq': {
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
    case 'choice': {
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
    case 'star':
    case 'plus': {
      const e = compileNode(n.e);
      const atLeastOne = n.t === 'plus';
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
    case 'opt': {
      const e = compileNode(n.e);
      m = (p) => {
        const r = e(p);
        return r === FAIL ? null : r;
      };
      break;
    }
    case 'and': {
      const e = compileNode(n.e);
      m = (p) => {
        const start = p.pos;
        const r = e(p);
        p.pos = start;
        return r === FAIL ? FAIL : null;
      };
      break;
    }
    case 'not': {
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
    case 'fail':
      m = (p) => p.failWith(n.msg);
      break;
    case 'ref': {
      let r: PRule | undefined;
      m = (p) => p.parseRule((r ??= RULES.get(n.name)!));
      break;
    }
    case 'act': {
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

const RULE_MATCHERS = new Map<PRule, Matcher>();

class PegParser {
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

  constructor(input: string) {
    this.input = input;
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
    const r = this.parseRule(RULES.get('Input')!);
    if (r === FAIL && this.errs.length === 0) {
      const wants = new Set(this.maxFailExpected);
      const eof = wants.delete('!.');
      const expected = [...wants].sort(compareBytes);
      if (eof) expected.push('EOF');
      this.addErrAt(`no match found, expected: ${listJoin(expected, ', ', 'or')}`, this.maxFailPos);
    }
    if (this.errs.length > 0) throw new FilterParseError([...new Set(this.errs)].join('\n'));
    return r as Expr;
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
      this.failAt(false, start, '.');
      return FAIL;
    }
    this.read();
    this.failAt(true, start, '.');
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
    if (++this.exprCnt > MAX_EXPRESSIONS) this.refuse('max number of expressions parsed');
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
    if (cp !== undefined && cp >= 0xd800 && cp <= 0xdfff) this.addErrAt('invalid encoding', this.positions[this.pos]!);
  }

  private text(start: number): string {
    return this.input.slice(this.u16[start], this.u16[this.pos]);
  }
}

function parseExpression(expression: string): Expr {
  return new PegParser(expression).run();
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
  if (list.length === 0) return '';
  if (list.length === 1) return list[0]!;
  return `${list.slice(0, -1).join(sep)} ${lastSep} ${list[list.length - 1]}`;
}

// ---------------------------------------------------------------------------------------------------
// Go string helpers: strconv.Quote, strconv.Unquote, ParseBool, ParseInt(s, 0, 64), ParseFloat(s, 64)

/** strconv.Quote (also what `%q` and `%#v` print for a string) */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x22) out += '\\"';
    else if (cp === 0x5c) out += '\\\\';
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp < 0x80) {
      const esc: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };
      out += esc[cp] ?? `\\x${cp.toString(16).padStart(2, '0')}`;
    } else if (cp >= 0xd800 && cp <= 0xdfff) out += '\\ufffd';
    else if (/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** strconv.Unquote for the two literal forms the grammar produces (text includes the quotes). */
function goUnquote(text: string): ActionResult {
  const invalid: ActionResult = { v: '', err: 'invalid syntax' };
  if (text.startsWith('`')) {
    return ok(text.slice(1, -1).replaceAll('\r', ''));
  }
  const body = Array.from(text.slice(1));
  // the final '"' is part of the text; the body may still end with an escaping backslash
  body.pop();
  const bytes: number[] = [];
  const pushRune = (cp: number) => bytes.push(...new TextEncoder().encode(String.fromCodePoint(cp)));
  for (let i = 0; i < body.length; ) {
    const ch = body[i]!;
    if (ch === '\n') return invalid;
    if (ch !== '\\') {
      pushRune(ch.codePointAt(0)!);
      i++;
      continue;
    }
    const c = body[i + 1];
    if (c === undefined) return invalid;
    i += 2;
    const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 0x5c, '"': 0x22 };
    if (c in simple) {
      bytes.push(simple[c]!);
    } else if (c === 'x' || c === 'u' || c === 'U') {
      const n = c === 'x' ? 2 : c === 'u' ? 4 : 8;
      const hex = body.slice(i, i + n).join('');
      if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) return invalid;
      i += n;
      const v = parseInt(hex, 16);
      if (c === 'x') bytes.push(v);
      else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return invalid;
      else pushRune(v);
    } else if (c >= '0' && c <= '7') {
      const oct = c + body.slice(i, i + 2).join('');
      if (!/^[0-7]{3}$/.test(oct)) return invalid;
      i += 2;
      const v = parseInt(oct, 8);
      if (v > 255) return invalid;
      bytes.push(v);
    } else {
      return invalid;
    }
  }
  return ok(new TextDecoder().decode(new Uint8Array(bytes)));
}

type Coerced = { ok: true; v: unknown } | { ok: false; msg: string; syntax: boolean };

function numError(fn: string, s: string, syntax: boolean): Coerced {
  return { ok: false, msg: `strconv.${fn}: parsing ${goQuote(s)}: ${syntax ? 'invalid syntax' : 'value out of range'}`, syntax };
}

function goParseBool(s: string): Coerced {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return { ok: true, v: true };
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return { ok: true, v: false };
  return numError('ParseBool', s, true);
}

/** Go's underscoreOK: underscores only between digits (a base prefix counts as a digit). */
function underscoreOK(s0: string): boolean {
  let s = s0;
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0' && 'box'.includes(s[1]!.toLowerCase())) {
    i = 2;
    saw = '0';
    hex = s[1]!.toLowerCase() === 'x';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= '0' && c <= '9') || (hex && c.toLowerCase() >= 'a' && c.toLowerCase() <= 'f')) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/** strconv.ParseInt(s, 0, 64), as a BigInt */
function goParseInt(s0: string): Coerced {
  if (s0 === '') return numError('ParseInt', s0, true);
  let s = s0;
  let neg = false;
  if (s[0] === '+') s = s.slice(1);
  else if (s[0] === '-') {
    neg = true;
    s = s.slice(1);
  }
  // ParseUint(s, 0, 64)
  if (s === '') return numError('ParseInt', s0, true);
  const u = s;
  let base = 10n;
  if (s[0] === '0') {
    const p = s.length >= 3 ? s[1]!.toLowerCase() : '';
    if (p === 'b') [base, s] = [2n, s.slice(2)];
    else if (p === 'o') [base, s] = [8n, s.slice(2)];
    else if (p === 'x') [base, s] = [16n, s.slice(2)];
    else [base, s] = [8n, s.slice(1)];
  }
  const maxU = (1n << 64n) - 1n;
  let n = 0n;
  let underscores = false;
  for (const c of s) {
    let d: bigint;
    const lc = c.toLowerCase();
    if (c === '_') {
      underscores = true;
      continue;
    } else if (c >= '0' && c <= '9') d = BigInt(c.charCodeAt(0) - 48);
    else if (lc >= 'a' && lc <= 'z' && lc.length === 1) d = BigInt(lc.charCodeAt(0) - 87);
    else return numError('ParseInt', s0, true);
    if (d >= base) return numError('ParseInt', s0, true);
    n = n * base + d;
    if (n > maxU) return numError('ParseInt', s0, false);
  }
  if (underscores && !underscoreOK(u)) return numError('ParseInt', s0, true);
  const cutoff = 1n << 63n;
  if (!neg && n >= cutoff) return numError('ParseInt', s0, false);
  if (neg && n > cutoff) return numError('ParseInt', s0, false);
  return { ok: true, v: neg ? -n : n };
}

/** strconv.ParseUint(s, 0, 64), as a BigInt: no sign allowed, the whole 64 bits */
function goParseUint(s: string): Coerced {
  if (s === '' || s[0] === '+' || s[0] === '-') return numError('ParseUint', s, true);
  const parsed = goParseInt(s);
  if (parsed.ok) return parsed;
  // ParseInt refused it as out of range for int64: ParseUint takes up to 2^64 - 1.
  const digits = /^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]+|[1-9][0-9_]*)$/.test(s) ? BigInt(s.replace(/_/g, '').replace(/^0([0-7])/, '0o$1')) : undefined;
  if (digits !== undefined && digits <= (1n << 64n) - 1n) return { ok: true, v: digits };
  return numError('ParseUint', s, digits === undefined);
}

/** strconv.ParseFloat(s, 64) (decimal, hexadecimal mantissa with p exponent, inf/infinity/nan) */
function goParseFloat(s: string): Coerced {
  const special = /^([+-]?)(inf|infinity)$/i.exec(s);
  if (special) return { ok: true, v: special[1] === '-' ? -Infinity : Infinity };
  if (/^nan$/i.test(s)) return { ok: true, v: NaN };
  const D = '[0-9](?:_?[0-9])*';
  const H = '[0-9a-fA-F](?:_?[0-9a-fA-F])*';
  const dec = new RegExp(`^[+-]?(?:${D}(?:\\.(?:${D})?)?|\\.${D})(?:[eE][+-]?${D})?$`);
  const hexf = new RegExp(`^([+-]?)0[xX]_?(?:(${H})(?:\\.(${H})?)?|\\.(${H}))[pP]([+-]?${D})$`);
  let v: number;
  if (dec.test(s)) {
    v = Number(s.replaceAll('_', ''));
  } else {
    const m = hexf.exec(s);
    if (!m) return numError('ParseFloat', s, true);
    const intPart = (m[2] ?? '').replaceAll('_', '');
    const frac = (m[3] ?? m[4] ?? '').replaceAll('_', '');
    const mant = BigInt(`0x${intPart + frac || '0'}`);
    const exp = Number(m[5]!.replaceAll('_', '')) - 4 * frac.length;
    v = Number(mant) * 2 ** exp;
    if (m[1] === '-') v = -v;
  }
  if (!Number.isFinite(v)) return numError('ParseFloat', s, false);
  return { ok: true, v };
}

// ---------------------------------------------------------------------------------------------------
// Values: JSON data seen through Go's reflect kinds

type Kind = 'string' | 'bool' | 'int' | 'uint' | 'float' | 'nil' | 'slice' | 'map' | 'struct';

interface GoValue {
  kind: Kind;
  v: unknown;
  /** a nil pointer to a struct (see STRUCT_POINTER_FIELDS), not a nil slice or map */
  nilStruct?: boolean;
  /** a []byte field (see BYTES_FIELDS): `v` holds the bytes as numbers */
  bytes?: boolean;
  /** the struct field that holds it, for its Go type name */
  field?: string;
  /** below a free-form map (`Config`): nested objects are maps */
  free: boolean;
}

type Parent = { of: 'root' } | { of: 'struct'; key: string } | { of: 'map' | 'slice'; free: boolean };

function classify(value: unknown, parent: Parent): GoValue {
  const classified = classifyValue(value, parent);
  if (parent.of === 'struct') classified.field = parent.key;
  return classified;
}

function classifyValue(value: unknown, parent: Parent): GoValue {
  const raw = jsonView(value);
  const free = parent.of === 'map' || parent.of === 'slice' ? parent.free : false;
  const mapField = parent.of === 'struct' && MAP_FIELDS.has(parent.key);
  const freeField = parent.of === 'struct' && FREEFORM_MAP_FIELDS.has(parent.key);
  if (raw === null || raw === undefined) {
    if (mapField) return { kind: 'map', v: {}, free: freeField };
    return parent.of === 'struct' && STRUCT_POINTER_FIELDS.has(parent.key) ? { kind: 'nil', v: null, free, nilStruct: true } : { kind: 'nil', v: null, free };
  }
  switch (typeof raw) {
    case 'string':
      if (parent.of === 'struct' && BYTES_FIELDS.has(parent.key)) return { kind: 'slice', v: [...Buffer.from(raw, 'base64')], free: false, bytes: true };
      return { kind: 'string', v: raw, free };
    case 'boolean':
      return { kind: 'bool', v: raw, free };
    case 'number':
      // Numbers in a free-form map (a task's Config) were decoded by Nomad as float64.
      if (free || !Number.isInteger(raw)) return { kind: 'float', v: raw, free };
      return { kind: unsigned(parent) ? 'uint' : 'int', v: raw, free };
    case 'bigint':
      return { kind: unsigned(parent) ? 'uint' : 'int', v: raw, free };
    case 'object':
      if (Array.isArray(raw)) return { kind: 'slice', v: raw, free: free || freeField };
      if (mapField || free) return { kind: 'map', v: raw, free: free || freeField };
      return { kind: 'struct', v: raw, free: false };
    default:
      return { kind: 'nil', v: null, free };
  }
}

function unsigned(parent: Parent): boolean {
  return parent.of === 'struct' && UNSIGNED_FIELDS.has(parent.key);
}

function rootValue(datum: unknown): GoValue {
  return classify(datum, { of: 'root' });
}

/** reflect.Kind's name for the value (an int64 field is int64, a uint64 one uint64). */
function kindName(k: Kind, field?: string): string {
  if (k === 'int' && field !== undefined && INT64_FIELDS.has(field)) return 'int64';
  return k === 'nil' ? 'invalid' : k === 'float' ? 'float64' : k === 'uint' ? 'uint64' : k;
}

function typeName(g: GoValue): string {
  const known = g.field !== undefined ? GO_TYPE_NAMES[g.field] : undefined;
  // Only where the shape agrees (a field name may mean a slice in one struct and a map in another).
  if (known !== undefined && (known.startsWith('[]') ? g.kind === 'slice' : known.startsWith('map') ? g.kind === 'map' : g.kind === 'struct')) return known;
  if (g.kind === 'int' && g.field !== undefined && INT64_FIELDS.has(g.field)) return 'int64';
  switch (g.kind) {
    case 'nil':
      return '<nil>';
    case 'float':
      return 'float64';
    case 'uint':
      return 'uint64';
    case 'slice':
      return g.bytes ? '[]uint8' : '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
    default:
      return g.kind;
  }
}

/** What JSON.stringify would render: `toJSON()` results (e.g. of a Date) stand for the object. */
function jsonView(value: unknown): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return (value as { toJSON: () => unknown }).toJSON();
  }
  return value;
}

/** A key of a rendered object: present, and not `undefined` (JSON.stringify drops those). */
function hasOwn(o: unknown, k: string): boolean {
  return typeof o === 'object' && o !== null && Object.prototype.hasOwnProperty.call(o, k) && (o as Record<string, unknown>)[k] !== undefined;
}

function ownKeys(o: unknown): string[] {
  return Object.keys(o as object).filter((k) => hasOwn(o, k));
}

/** pointerstructure Pointer.String() */
function pointerString(parts: string[]): string {
  if (parts.length === 0) return '';
  return `/${parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
}

type Lookup = { ok: true; val: GoValue } | { ok: false; notFound: boolean; msg: string };

/** pointerstructure Pointer.Get */
function pointerGet(root: GoValue, parts: string[]): Lookup {
  const p = pointerString(parts);
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    switch (cur.kind) {
      case 'struct':
        if (!hasOwn(cur.v, part)) {
          return { ok: false, notFound: true, msg: `${p} at part ${i}: couldn't find key: struct field with name ${goQuote(part)}` };
        }
        cur = classify((cur.v as Record<string, unknown>)[part], { of: 'struct', key: part });
        break;
      case 'map':
        if (!hasOwn(cur.v, part)) return { ok: false, notFound: true, msg: `${p} at part ${i}: couldn't find key ${goQuote(part)}` };
        cur = classify((cur.v as Record<string, unknown>)[part], { of: 'map', free: cur.free });
        break;
      case 'slice': {
        const arr = cur.v as unknown[];
        // mapstructure.WeakDecode(string → int): "" is 0, else strconv.ParseInt(s, 0, 64)
        const idx = goParseInt(part === '' ? '0' : part);
        if (!idx.ok) return { ok: false, notFound: false, msg: `${p} at part ${i}: couldn't convert value ${goQuote(part)} to type int` };
        const n = idx.v as bigint;
        if (n < 0n || n >= BigInt(arr.length)) {
          return { ok: false, notFound: false, msg: `${p} at part ${i}: index ${n} is out of range (length = ${arr.length})` };
        }
        cur = classify(arr[Number(n)], { of: 'slice', free: cur.free });
        break;
      }
      default:
        return { ok: false, notFound: false, msg: `${p}: at part ${i}, invalid value kind: ${kindName(cur.kind)}` };
    }
  }
  return { ok: true, val: cur };
}

// ---------------------------------------------------------------------------------------------------
// Evaluation (evaluate.go v0.1.13)

interface LocalVariable {
  name: string;
  /** the selector path the name stands for, or null when it is a key/index with a known value */
  path: string[] | null;
  value: GoValue | null;
}

type Resolved = { present: true; val: GoValue } | { present: false };

function evalError(msg: string): never {
  throw new FilterEvaluationError(msg);
}

/** getValue: local variables first, then the datum; a missing last key under a map is "not present". */
function getValue(datum: GoValue, path0: string[], locals: LocalVariable[]): Resolved {
  let path = path0;
  if (path.length !== 0 && locals.length > 0) {
    for (let i = locals.length - 1; i >= 0; i--) {
      const name = path[0]!;
      const lv = locals[i]!;
      if (name !== lv.name) continue;
      if (lv.path === null) {
        if (path.length > 1) {
          const goType = lv.value!.kind === 'int' ? 'int' : 'string';
          evalError(`${pointerString([name])} references a ${goType} so ${pointerString(path)} is invalid`);
        }
        return { present: true, val: lv.value! };
      }
      path = [...lv.path, ...path.slice(1)];
    }
  }
  const r = pointerGet(datum, path);
  if (r.ok) return { present: true, val: r.val };
  if (r.notFound && path.length >= 2) {
    const parent = pointerGet(datum, path.slice(0, -1));
    if (parent.ok && parent.val.kind === 'map') return { present: false };
  }
  return evalError(`error finding value in datum: ${r.msg}`);
}

function evaluate(ast: Expr, datum: GoValue, locals: LocalVariable[]): boolean {
  switch (ast.k) {
    case 'not':
      return !evaluate(ast.e, datum, locals);
    case 'and':
      return evaluate(ast.l, datum, locals) && evaluate(ast.r, datum, locals);
    case 'or':
      return evaluate(ast.l, datum, locals) || evaluate(ast.r, datum, locals);
    case 'match':
      return evaluateMatch(ast, datum, locals);
    case 'coll':
      return evaluateCollection(ast, datum, locals);
  }
}

type MatchExpr = Extract<Expr, { k: 'match' }>;
type CollExpr = Extract<Expr, { k: 'coll' }>;

function evaluateMatch(m: MatchExpr, datum: GoValue, locals: LocalVariable[]): boolean {
  const r = getValue(datum, m.sel.path, locals);
  if (!r.present) return notPresentDisposition(m.op);
  const value = r.val;
  switch (m.op) {
    case 'eq':
      return doMatchEqual(m, value);
    case 'ne':
      return !doMatchEqual(m, value);
    case 'in':
      return doMatchIn(m, value);
    case 'notin':
      return !doMatchIn(m, value);
    case 'empty':
      return doMatchIsEmpty(m, value);
    case 'notempty':
      return !doMatchIsEmpty(m, value);
    case 'matches':
      return doMatchMatches(m, value);
    case 'notmatches':
      return !doMatchMatches(m, value);
  }
}

function isPrimitive(k: Kind): boolean {
  return k === 'string' || k === 'bool' || k === 'int' || k === 'uint' || k === 'float';
}

/** getMatchExprValue: the raw value coerced to the kind of the field */
function coerce(raw: string, kind: Kind): Coerced {
  switch (kind) {
    case 'bool':
      return goParseBool(raw);
    case 'int':
      return goParseInt(raw);
    case 'uint':
      return goParseUint(raw);
    case 'float':
      return goParseFloat(raw);
    default:
      return { ok: true, v: raw };
  }
}

function primitiveEqual(matchValue: unknown, value: GoValue): boolean {
  switch (value.kind) {
    case 'int':
    case 'uint':
      return (matchValue as bigint) === BigInt(value.v as number | bigint);
    case 'float':
      return (matchValue as number) === Number(value.v);
    default:
      return matchValue === value.v;
  }
}

function rawValue(m: MatchExpr): string {
  return m.value?.raw ?? '';
}

function doMatchEqual(m: MatchExpr, value: GoValue): boolean {
  if (!isPrimitive(value.kind)) evalError('unable to find suitable primitive comparison function for matching');
  const mv = coerce(rawValue(m), value.kind);
  if (!mv.ok) evalError(`error getting match value in expression: ${mv.msg}`);
  return primitiveEqual(mv.v, value);
}

/** The element kind of a JSON array that stands for a typed Go slice, or null for a mixed ([]interface{}) one. */
function elementKind(items: GoValue[]): Kind | null {
  const kinds = new Set(items.filter((g) => g.kind !== 'nil').map((g) => g.kind));
  if (kinds.size === 2 && kinds.has('int') && kinds.has('float')) return 'float';
  return kinds.size === 1 ? [...kinds][0]! : null;
}

function doMatchIn(m: MatchExpr, value: GoValue): boolean {
  const raw = rawValue(m);
  const mv = coerce(raw, value.kind);
  if (!mv.ok) evalError(`error getting match value in expression: ${mv.msg}`);
  switch (value.kind) {
    case 'map':
      return hasOwn(value.v, raw);
    case 'slice': {
      if (value.bytes) {
        // []uint8: the value is coerced to the element type, a byte
        const ev = goParseUint(raw);
        if (!ev.ok) evalError(`error getting match value in expression: ${ev.msg}`);
        return (value.v as number[]).some((b) => BigInt(b) === ev.v);
      }
      const items = (value.v as unknown[]).map((x) => classify(x, { of: 'slice', free: value.free }));
      if (items.length === 0) return false;
      const kind = elementKind(items);
      if (kind !== null) {
        // a typed slice: coerce once to the element kind
        const ev = coerce(raw, kind);
        if (!ev.ok) evalError(`error getting match value in expression: ${ev.msg}`);
        if (!isPrimitive(kind)) evalError('unable to find suitable primitive comparison function for "in" comparison');
        return items.some((item) => item.kind !== 'nil' && primitiveEqual(ev.v, kind === 'float' ? { ...item, kind } : item));
      }
      // []interface{}: per element, skipping elements the value cannot be coerced to
      for (const item of items) {
        if (item.kind === 'nil') continue;
        const ev = coerce(raw, item.kind);
        if (!ev.ok) {
          if (ev.syntax) continue;
          evalError('error getting interface slice match value in expression');
        }
        if (!isPrimitive(item.kind)) {
          evalError(`unable to find suitable primitive comparison function for "in" comparison in interface slice: ${kindName(item.kind)}`);
        }
        if (primitiveEqual(ev.v, item)) return true;
      }
      return false;
    }
    case 'string':
      return (value.v as string).includes(raw);
    case 'nil':
      // A nil struct pointer is an invalid value to go-bexpr; a nil slice or map holds nothing.
      if (!value.nilStruct) return false;
      return evalError(`Cannot perform in/contains operations on type ${kindName(value.kind, value.field)} for selector: ${goQuote(selectorString(m.sel))}`);
    default:
      return evalError(`Cannot perform in/contains operations on type ${kindName(value.kind, value.field)} for selector: ${goQuote(selectorString(m.sel))}`);
  }
}

function doMatchIsEmpty(m: MatchExpr, value: GoValue): boolean {
  switch (value.kind) {
    case 'string':
      return value.v === '';
    case 'slice':
      return (value.v as unknown[]).length === 0;
    case 'map':
      return ownKeys(value.v).length === 0;
    case 'nil':
      if (value.nilStruct) return nilStructPanic('is empty', m.sel);
      return true;
    default:
      return evalError(`cannot perform is-empty operations on type ${kindName(value.kind, value.field)} for selector: ${goQuote(selectorString(m.sel))}`);
  }
}

/** go-bexpr calls Len() on the invalid value of a nil struct pointer and panics; Nomad fails the request. Here: a 400 that says so. */
function nilStructPanic(operation: string, sel: Selector): never {
  return evalError(`${operation} over ${goQuote(selectorString(sel))}, a nil struct pointer: go-bexpr panics on it (Nomad fails the request)`);
}

/** Go's regexp/syntax error text; re2js words it the same way, except for an empty expression part. */
function goRegexpError(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return /`$/.test(msg) ? msg : `${msg}: \`\``;
}

function doMatchMatches(m: MatchExpr, value: GoValue): boolean {
  if (value.kind !== 'string' && !value.bytes) evalError(`Value of type ${typeName(value)} is not convertible to []byte`);
  const mv = m.value!;
  let re = mv.re;
  if (!re) {
    try {
      re = RE2JS.compile(mv.raw);
    } catch (e) {
      return evalError(`Failed to compile regular expression ${goQuote(mv.raw)}: ${goRegexpError(e)}`);
    }
    mv.re = re;
  }
  // []byte: Go's regexp matches the raw bytes; Latin-1 keeps one character per byte.
  return re.test(value.bytes ? Buffer.from(value.v as number[]).toString('latin1') : (value.v as string));
}

function evaluateCollection(c: CollExpr, datum: GoValue, locals: LocalVariable[]): boolean {
  const r = getValue(datum, c.sel.path, locals);
  const all = c.op === 'ALL';
  if (!r.present) return all;
  const v = r.val;
  let entries: Array<{ key: GoValue; path: string[] }>;
  if (v.kind === 'slice') {
    entries = (v.v as unknown[]).map((_x, i) => ({ key: { kind: 'int', v: i, free: false }, path: [...c.sel.path, String(i)] }));
  } else if (v.kind === 'map') {
    entries = ownKeys(v.v).map((k) => ({ key: { kind: 'string', v: k, free: false }, path: [...c.sel.path, k] }));
  } else if (v.kind === 'nil') {
    if (v.nilStruct) return nilStructPanic(all ? 'all' : 'any', c.sel);
    entries = [];
  } else {
    return evalError(`${selectorString(c.sel)} is not a list or a map`);
  }
  const b = c.binding;
  for (const entry of entries) {
    if (b.mode === 'IndexAndValue' && b.index === b.value) {
      evalError(`${goQuote(b.index)} cannot be used as a placeholder for both the index and the value`);
    }
    const inner = [...locals];
    if (v.kind === 'map') {
      if (b.def !== '') inner.push({ name: b.def, path: null, value: entry.key });
      if (b.index !== '') inner.push({ name: b.index, path: null, value: entry.key });
      if (b.value !== '') inner.push({ name: b.value, path: entry.path, value: null });
    } else {
      if (b.index !== '') inner.push({ name: b.index, path: null, value: entry.key });
      if (b.def !== '') inner.push({ name: b.def, path: entry.path, value: null });
      if (b.value !== '') inner.push({ name: b.value, path: entry.path, value: null });
    }
    const result = evaluate(c.inner, datum, inner);
    if (result && !all) return true;
    if (!result && all) return false;
  }
  return all;
}
