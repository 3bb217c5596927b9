/**
 * `yamldecode` as Nomad 1.9 has it (go-cty-yaml 1.1's `Standard.Unmarshal`).
 * The `yaml` library parses the text into nodes with every scalar left as
 * written (its failsafe schema), and this module then resolves scalars the
 * way go-cty-yaml does, which is neither YAML 1.1 nor 1.2 exactly:
 *
 * - quoted scalars and `!!str` are strings; unquoted `y/yes/on/true` (and
 *   their capitalisations) are true, `n/no/off/false` false, `~`, `null` and
 *   the empty scalar null, `.inf`/`-.inf` infinities, `.nan` an error;
 * - plain text starting with a digit or sign is a timestamp when Go's parser
 *   accepts it (written back as RFC 3339), else a number when it is a decimal,
 *   `0o` octal or `0x` hexadecimal integer or a decimal float; anything else
 *   stays a string (`1_000`, `0b1`, `-0x1`);
 * - explicit `!!int`, `!!float`, `!!bool`, `!!null`, `!!timestamp` and
 *   `!!binary` tags force their type or fail; other tags are refused;
 * - mappings become objects (keys converted to strings, a null key refused,
 *   a repeated key keeping its last value, `<<` merging a mapping's
 *   entries), sequences tuples; aliases repeat their anchor's value, and an
 *   alias inside its own anchor is refused; one document only.
 *
 * Errors are FunctionErrors worded and placed as go-cty-yaml places them
 * (`on line N, column M: …` from the failing event, none on the first line);
 * syntax errors carry the `yaml` library's message rather than libyaml's.
 */
import { type Document, isAlias, isMap, isScalar, isSeq, type Node, parseAllDocuments, Scalar } from "yaml";
import { FunctionError } from "./evaluate.js";
import { numberToString, type Value } from "./value.js";

const TAG = "tag:yaml.org,2002:";
const RESOLVABLE = new Set(["", `${TAG}str`, `${TAG}bool`, `${TAG}int`, `${TAG}float`, `${TAG}null`, `${TAG}timestamp`, `${TAG}binary`]);

const TRUE = ["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"];
const FALSE = ["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"];
const NULL = ["", "~", "null", "Null", "NULL"];
const KNOWN = new Map<string, Value>([
  ...TRUE.map((s): [string, Value] => [s, true]),
  ...FALSE.map((s): [string, Value] => [s, false]),
  ...NULL.map((s): [string, Value] => [s, null]),
  ...[".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"].map((s): [string, Value] => [s, Number.POSITIVE_INFINITY]),
  ...["-.inf", "-.Inf", "-.INF"].map((s): [string, Value] => [s, Number.NEGATIVE_INFINITY]),
]);

const INTEGER = /^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;
/** What big.ParseFloat accepts in base 10 (cty's ParseNumberVal). */
const DECIMAL = /^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/** A marker for the `<<` merge key, which is only meaningful as a mapping key. */
const MERGE = Symbol("merge");

/**
 * The most nodes one call converts, aliases counted each time they repeat: a
 * bound so a document of nested aliases ("billion laughs") cannot exhaust
 * memory (cty shares such values; standin's plain values would copy them).
 */
const MAX_NODES = 100_000;

function parseDecimal(s: string): number | undefined {
  if (DECIMAL.test(s)) return Number(s);
  if (/^[-+]?(?:inf|Inf)$/.test(s)) return s.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return undefined;
}

/** strconv.ParseInt/ParseUint with base 0 (sign, then `0x`, `0o`, `0b` or a leading `0` for octal), 64-bit. */
function parseGoInteger(s: string): number | undefined {
  const match = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(s);
  if (!match) return undefined;
  const [, sign = "", digits = ""] = match;
  const body = /^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits;
  const n = BigInt(body.replace(/^0([XOB])/, (_, p: string) => `0${p.toLowerCase()}`));
  const signed = sign === "-" ? -n : n;
  if (signed < -(2n ** 63n) || signed > 2n ** 64n - 1n) return undefined;
  return Number(signed);
}

const DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

/**
 * The timestamp forms go-cty-yaml tries with Go's time.Parse: `Y-M-D`,
 * `Y-M-D h:m:s[.frac]` and `Y-M-DTh:m:s[.frac](Z|±hh:mm)` (month, day and
 * time fields of one or two digits), written back as RFC 3339 without the
 * fraction.
 */
function parseTimestamp(s: string): string | undefined {
  const match = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:([Tt ])(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?(Z|[-+]\d{2}:\d{2})?)?$/.exec(s);
  if (!match) return undefined;
  const [, y = "", mo = "", d = "", sep, h = "0", mi = "0", se = "0", zone] = match;
  if (zone && zoneText(zone) === undefined) return undefined;
  // The space form has no zone; the T form requires one.
  if (sep === " " ? zone !== undefined : sep !== undefined && zone === undefined) return undefined;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, se].map(Number) as [number, number, number, number, number, number];
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (month < 1 || month > 12 || day < 1 || day > (month === 2 && !leap ? 28 : (DAYS[month - 1] ?? 31)) || hour > 23 || minute > 59 || second > 59) return undefined;
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}${zone ? (zoneText(zone) ?? "") : "Z"}`;
}

/** A `Z`/`±hh:mm` zone as Go's RFC 3339 layout writes it back (a zero offset is `Z`); undefined when time.Parse refuses it. */
function zoneText(zone: string): string | undefined {
  if (zone === "Z") return "Z";
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4));
  if (hours > 24 || minutes > 60) return undefined;
  const total = hours * 60 + minutes;
  return total === 0 ? "Z" : `${zone[0] ?? "+"}${pad(Math.floor(total / 60))}:${pad(total % 60)}`;
}

function resolveScalar(node: Scalar): Value | typeof MERGE {
  // The text as written: the library resolves a few tags (`!!binary`) even in its failsafe schema.
  const src = typeof node.source === "string" ? node.source : String(node.value);
  const tag = node.tag ?? "";
  if (!RESOLVABLE.has(tag)) throw new FunctionError(`unsupported tag ${JSON.stringify(tag)}`);
  const quoted = node.type === Scalar.QUOTE_DOUBLE || node.type === Scalar.QUOTE_SINGLE;
  let forced = tag;
  const first = src[0] ?? "";
  const hint = src === "" ? "N" : /[-+]/.test(first) ? "S" : /[0-9]/.test(first) ? "D" : /[yYnNtTfFoO~]/.test(first) ? "M" : first === "." ? "." : "";
  if (hint && tag !== `${TAG}str` && tag !== `${TAG}binary`) {
    if (quoted) return src;
    if (KNOWN.has(src)) return KNOWN.get(src) ?? null;
    if (tag === "" && /^\.(nan|NaN|NAN)$/.test(src)) throw new FunctionError("floating point NaN is not supported");
    if (hint === ".") {
      const n = parseDecimal(src);
      if (n !== undefined) return n;
    } else if (hint === "D" || hint === "S") {
      if (tag === "" || tag === `${TAG}timestamp`) {
        const time = parseTimestamp(src);
        if (time !== undefined) return time;
      }
      if (INTEGER.test(src)) forced = `${TAG}int`;
      else if (FLOAT.test(src)) forced = `${TAG}float`;
    }
  }
  if (forced === "" && src === "<<") return MERGE;
  const cannot = (): never => {
    throw new FunctionError(`cannot parse ${JSON.stringify(src)} as ${forced}`);
  };
  switch (forced) {
    case `${TAG}binary`:
      if (!/^[A-Za-z0-9+/\r\n]*={0,2}$/.test(src) || src.replace(/[\r\n]/g, "").length % 4 !== 0) {
        throw new FunctionError(`cannot parse ${JSON.stringify(src)} as ${forced}: not valid base64`);
      }
      return src;
    case `${TAG}bool`: {
      const value = KNOWN.get(src);
      return typeof value === "boolean" ? value : cannot();
    }
    case `${TAG}int`:
    case `${TAG}float`: {
      const plain = src.replace(/_/g, "");
      return parseDecimal(plain) ?? parseGoInteger(plain) ?? cannot();
    }
    case `${TAG}timestamp`:
      return parseTimestamp(src) ?? cannot();
    case `${TAG}null`:
      return null;
    default:
      return src;
  }
}

/**
 * go-cty-yaml's position prefix: libyaml's 0-based line of the event that
 * failed (so the second line is "line 1") and its 1-based column, with no
 * prefix at all for an event on the first line (its `parseEventErrorWrap`).
 */
function at(text: string, offset: number, message: string): string {
  const before = text.slice(0, offset);
  const line = before.split(/\r\n|\r|\n/).length - 1;
  if (line === 0) return message;
  const column = [...before.slice(Math.max(before.lastIndexOf("\n"), before.lastIndexOf("\r")) + 1)].length;
  return `on line ${line}, column ${column + 1}: ${message}`;
}

/** Where libyaml's event for a node starts: at its tag or anchor when it has them, which the library's range leaves out. */
function eventStart(text: string, node: Node): number {
  let start = node.range?.[0] ?? 0;
  if (isAlias(node) || (!node.tag && !node.anchor)) return start;
  for (let props = 0; props < 2; props++) {
    const before = text.slice(0, start).replace(/\s+$/, "");
    const token = /[!&]\S*$/.exec(before);
    if (!token) break;
    start = token.index;
  }
  return start;
}

/** cty's friendly name of a decoded value's type, as "cannot merge … into mapping" names it. */
function friendlyName(value: Value): string {
  if (value === null) return "dynamic";
  if (Array.isArray(value)) return "tuple";
  if (typeof value === "boolean") return "bool";
  return typeof value === "object" ? "object" : typeof value;
}

/** Walks the parsed nodes into a value; `open` holds the nodes being converted (an alias into one is a cycle). */
function toValue(doc: Document, text: string): Value {
  const open = new Set<Node>();
  let budget = MAX_NODES;
  const fail = (node: Node, message: string): never => {
    throw new FunctionError(at(text, eventStart(text, node), message));
  };
  return convert(doc.contents as Node | null);

  function convert(n: Node | null): Value {
    if (n === null) return null;
    if (--budget < 0) throw new FunctionError(`the document expands to more than ${MAX_NODES} values`);
    if (isAlias(n)) {
      const target = n.resolve(doc) as Node | undefined;
      if (!target) return fail(n, `reference to undefined anchor ${JSON.stringify(n.source)}`);
      if (open.has(target)) return fail(n, `cannot refer to anchor ${JSON.stringify(n.source)} from inside its own definition`);
      return convert(target);
    }
    open.add(n);
    try {
      if (isScalar(n)) {
        let value: Value | typeof MERGE;
        try {
          value = resolveScalar(n);
        } catch (e) {
          if (!(e instanceof FunctionError)) throw e;
          return fail(n, e.message);
        }
        return value === MERGE ? "<<" : value;
      }
      if (isSeq(n)) {
        if (n.tag && n.tag !== `${TAG}seq`) return fail(n, `can't interpret sequence as ${n.tag}`);
        return n.items.map((item) => convert(item as Node | null));
      }
      if (isMap(n)) {
        if (n.tag && n.tag !== `${TAG}map`) return fail(n, `can't interpret mapping as ${n.tag}`);
        const out: Record<string, Value> = {};
        for (const pair of n.items) {
          const keyNode = pair.key as Node | null;
          if (keyNode !== null && !isScalar(keyNode)) return fail(keyNode, "only strings are allowed as mapping keys");
          // A key's own resolution error carries no position (go-cty-yaml returns it unwrapped).
          const key = keyNode === null ? null : resolveScalar(keyNode);
          if (key === MERGE && keyNode) {
            const merged = convert(pair.value as Node | null);
            if (merged === null || typeof merged !== "object" || Array.isArray(merged)) return fail(keyNode, `cannot merge ${friendlyName(merged)} into mapping`);
            Object.assign(out, merged);
            continue;
          }
          if (key === null || key === MERGE) {
            if (keyNode) return fail(keyNode, "mapping key cannot be null");
            throw new FunctionError("mapping key cannot be null");
          }
          out[typeof key === "number" ? numberToString(key) : String(key)] = convert(pair.value as Node | null);
        }
        return out;
      }
      return null;
    } finally {
      open.delete(n);
    }
  }
}

/** The line libyaml's stream end sits on: after the last line break, or on a new line when the text does not end with one. */
function streamEndLine(text: string): number {
  const breaks = text.split(/\r\n|\r|\n/).length - 1;
  return /[\r\n]$/.test(text) ? breaks : breaks + 1;
}

/** `yamldecode(src)`. */
export function ctyYamlDecode(src: string): Value {
  const text = src === "" ? "\n" : src; // go-cty-yaml reads empty input as one empty line
  const [doc, second] = parseAllDocuments(text, { schema: "failsafe", uniqueKeys: false, merge: false, strict: false });
  if (!doc) throw new FunctionError(`on line ${streamEndLine(text)}, column 1: missing start of document`);
  const error = doc.errors[0];
  if (error) throw new FunctionError(error.message.split("\n")[0] ?? error.message);
  const value = toValue(doc, text);
  if (second) throw new FunctionError(at(text, second.range[0], "only a single document is allowed"));
  return value;
}
