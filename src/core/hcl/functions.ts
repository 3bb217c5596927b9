/**
 * The standard HCL2 function library (go-cty's stdlib and go-cty-funcs), as
 * the functions behave on plain values. Randomness is injected: `uuidv4`
 * draws from the caller's generator so a seeded emulator stays
 * deterministic. Errors use cty's wording where it is known.
 */
import { createHash } from "node:crypto";
import { compileGoRegexp, goReplaceAll } from "../go/regexp.js";
import { ctyJsonEncode, shortestG } from "./encoding.js";
import { valueSize } from "./value-size.js";
import { ctyYamlDecode } from "./yaml-decode.js";
import { ctyYamlEncode } from "./yaml-encode.js";
import { ctySetOrder } from "./types.js";
import { FunctionError, type HclFunction } from "./evaluate.js";
import { asBool, asNumber, asString, entries, isObject, numberToString, typeName, type Value } from "./value.js";

export interface FunctionDeps {
  /** A fresh version-4 UUID (from a seeded generator, for determinism). */
  readonly newUuid: () => string;
}

type Fn = HclFunction;

/**
 * The largest padding, indentation or product standin builds: a bound so a
 * hostile job file cannot exhaust memory (Go's functions have none).
 */
const MAX_BUILT_LENGTH = 100_000;

/**
 * The longest string one function call builds (`join`, `format`,
 * `formatlist`, `indent`, `replace`, `regex_replace`), in characters.
 * Checked before or while the string is built, so a refused call has not
 * allocated it; the evaluator's budgets then count what every call reads
 * and returns.
 */
export const MAX_STRING_LENGTH = 4 * 1024 * 1024;

function tooLong(): FunctionError {
  return new FunctionError(`the result would be longer than standin allows (${MAX_STRING_LENGTH} characters)`);
}

/**
 * How deeply a decoded document (`jsondecode`, `yamldecode`) may nest. Go's
 * decoders go deeper; standin measures, compares and writes values
 * recursively, and 30,000 brackets overflowed its stack (a 500).
 */
const MAX_DECODED_DEPTH = 1000;

function tooDeep(): FunctionError {
  return new FunctionError(`the document nests more than ${MAX_DECODED_DEPTH} levels deep (standin's limit)`);
}

/** The value unchanged, or tooDeep(): walked with a stack of its own, so any depth can be checked. */
function refuseDeepNesting(value: Value): Value {
  const pending: [Value, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [v, depth] = next;
    if (v === null || typeof v !== "object") continue;
    if (depth > MAX_DECODED_DEPTH) throw tooDeep();
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
  }
  return value;
}

/** Go's strings.Replace(s, old, new, -1): an empty `old` matches before every character and at the end. */
function replaceAll(s: string, old: string, replacement: string): string {
  const parts = old === "" ? ["", ...Array.from(s), ""] : s.split(old);
  if (s.length + (parts.length - 1) * replacement.length > MAX_STRING_LENGTH) throw tooLong();
  return parts.join(replacement);
}

function arity(name: string, args: Value[], min: number, max = min, names: readonly string[] = []): void {
  if (args.length < min) {
    const missing = names[args.length];
    throw new FunctionError(`arity:Function "${name}" expects ${min} argument(s).${missing ? ` Missing value for "${missing}".` : ""}`);
  }
  if (args.length > max) throw new FunctionError(`arity:Function "${name}" expects only ${max} argument(s).`);
}

/** A function of a fixed number of parameters (`min` of them required). */
function fixed(name: string, params: readonly string[], body: (args: Value[]) => Value, min = params.length, max = min): Fn {
  return (args) => {
    arity(name, args, min, max, params);
    return body(args);
  };
}

function str(args: Value[], i: number, param: string): string {
  const s = asString(args[i] ?? null);
  if (s === undefined) throw new FunctionError("string required", i, param);
  return s;
}
function num(args: Value[], i: number, param: string): number {
  const n = asNumber(args[i] ?? null);
  if (n === undefined) throw new FunctionError("number required", i, param);
  return n;
}
function int(args: Value[], i: number, param: string): number {
  const n = num(args, i, param);
  if (!Number.isInteger(n)) throw new FunctionError("value must be a whole number", i, param);
  return n;
}
function list(args: Value[], i: number, param: string): Value[] {
  const v = args[i] ?? null;
  if (!Array.isArray(v)) throw new FunctionError("list of any single type required", i, param);
  return v;
}
function obj(args: Value[], i: number, param: string): Record<string, Value> {
  const v = args[i] ?? null;
  if (!isObject(v)) throw new FunctionError("map of any single type required", i, param);
  return v;
}
function strList(args: Value[], i: number, param: string): string[] {
  return list(args, i, param).map((v) => {
    const s = asString(v);
    if (s === undefined) throw new FunctionError("list of string required", i, param);
    return s;
  });
}

const valueKey = (v: Value): string => JSON.stringify(v);
const equal = (a: Value, b: Value): boolean => valueKey(a) === valueKey(b);

/** The values without repeats, first occurrences in order: one pass (a pairwise search made `distinct` of 1,000 items a million comparisons). */
function distinctValues(values: readonly Value[]): Value[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = valueKey(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Evaluation-budget units per character a regular expression scans: re2js
 * is linear but runs at 2 to 4 µs a character on patterns with groups, about
 * eight expression evaluations' worth.
 */
const REGEX_WORK_PER_CHARACTER = 8;

function regexScanCost(args: Value[]): number {
  const text = args[0];
  return typeof text === "string" ? text.length * REGEX_WORK_PER_CHARACTER : 0;
}

function withCost(cost: (args: Value[]) => number, fn: (args: Value[]) => Value): Fn {
  return Object.assign(fn, { cost });
}

function unary(name: string, param: string, f: (s: string) => Value): Fn {
  return (args) => {
    arity(name, args, 1, 1, [param]);
    return f(str(args, 0, param));
  };
}

/**
 * Go's fmt verbs as cty's `format` implements them, for the common cases. A
 * verb is `%`, flags, width, precision, an optional `[n]` argument index (in
 * that order, cty's grammar) and a letter; after `%[n]x` the next verb
 * without an index takes argument n+1.
 */
function format(fmt: string, values: Value[]): string {
  let next = 1;
  let length = fmt.length;
  const verbs = /%([-+# 0]*)(\d+)?(?:\.(\d+))?(?:\[([1-9]\d*)\])?([a-zA-Z%])/g;
  return fmt.replace(verbs, (whole, flags: string, width: string | undefined, precision: string | undefined, index: string | undefined, verb: string, offset: number) => {
    if (verb === "%") return "%";
    const argNum = index !== undefined ? Number(index) : next;
    if (argNum > values.length) {
      throw new FunctionError(`not enough arguments for ${JSON.stringify(whole)} at ${offset}: need index ${argNum} but have ${values.length} total`);
    }
    next = argNum + 1;
    const value = values[argNum - 1] as Value;
    let out: string;
    switch (verb) {
      case "s": {
        const s = asString(value);
        if (s === undefined) throw new FunctionError(`unsupported value for "${whole}" at ${offset}: string required`);
        out = precision !== undefined ? s.slice(0, Number(precision)) : s;
        break;
      }
      case "d": {
        const n = asNumber(value);
        if (n === undefined || !Number.isInteger(n)) throw new FunctionError(`unsupported value for "${whole}" at ${offset}: an integer is required`);
        out = (flags.includes("+") && n >= 0 ? "+" : "") + numberToString(n);
        break;
      }
      case "f":
      case "e":
      case "g": {
        const n = asNumber(value);
        if (n === undefined) throw new FunctionError(`unsupported value for "${whole}" at ${offset}: number required`);
        const p = precision !== undefined ? Number(precision) : 6;
        out = verb === "f" ? n.toFixed(p) : verb === "e" ? n.toExponential(p) : String(n);
        break;
      }
      case "t": {
        const b = asBool(value);
        if (b === undefined) throw new FunctionError(`unsupported value for "${whole}" at ${offset}: bool required`);
        out = String(b);
        break;
      }
      case "q":
        out = JSON.stringify(asString(value) ?? "");
        break;
      case "v":
        // Strings and numbers as themselves unless `#` asks for JSON; anything else as cty's JSON.
        if (!flags.includes("#") && typeof value === "string") out = value;
        else if (!flags.includes("#") && typeof value === "number") out = shortestG(value);
        else out = ctyJsonEncode(value);
        break;
      case "x":
      case "X": {
        const n = asNumber(value);
        out = n !== undefined ? n.toString(16) : Buffer.from(asString(value) ?? "").toString("hex");
        if (verb === "X") out = out.toUpperCase();
        break;
      }
      case "o":
        out = (asNumber(value) ?? 0).toString(8);
        break;
      case "b":
        out = (asNumber(value) ?? 0).toString(2);
        break;
      default:
        throw new FunctionError(`unsupported format verb "${verb}" in "${fmt}"`);
    }
    if (width !== undefined && Number(width) > MAX_BUILT_LENGTH) throw new FunctionError(`width ${width} in "${whole}" is larger than standin allows (${MAX_BUILT_LENGTH})`);
    if (width !== undefined && out.length < Number(width)) {
      out = flags.includes("-") ? out.padEnd(Number(width)) : out.padStart(Number(width), flags.includes("0") && verb !== "s" ? "0" : " ");
    }
    length += out.length;
    if (length > MAX_STRING_LENGTH) throw tooLong();
    return out;
  });
}

function flatten(values: Value[]): Value[] {
  const out: Value[] = [];
  for (const v of values)
    if (Array.isArray(v)) out.push(...flatten(v));
    else out.push(v);
  return out;
}

function ipv4ToInt(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new FunctionError(`invalid CIDR expression: invalid CIDR address: ${ip}`);
  return (((parts[0] ?? 0) << 24) | ((parts[1] ?? 0) << 16) | ((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >>> 0;
}
const intToIpv4 = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join(".");

function parseCidr(prefix: string): { base: number; bits: number } {
  const [ip, bitsText] = prefix.split("/");
  const bits = Number(bitsText);
  if (ip === undefined || bitsText === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) {
    throw new FunctionError(`invalid CIDR expression: invalid CIDR address: ${prefix}`);
  }
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return { base: (ipv4ToInt(ip) & mask) >>> 0, bits };
}

function subnet(prefix: string, newbits: number, netnum: number): string {
  const { base, bits } = parseCidr(prefix);
  const total = bits + newbits;
  if (total > 32) throw new FunctionError(`insufficient address space to extend prefix of ${bits} by ${newbits}`);
  if (netnum < 0 || netnum >= 2 ** newbits) throw new FunctionError(`prefix extension of ${newbits} does not accommodate a subnet numbered ${netnum}`);
  return `${intToIpv4((base + netnum * 2 ** (32 - total)) >>> 0)}/${total}`;
}

function csvDecode(text: string): Value {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...data] = rows;
  if (!header) throw new FunctionError("missing header line");
  return data.map((r, n) => {
    if (r.length !== header.length) throw new FunctionError(`record on line ${n + 2}: wrong number of fields`);
    return Object.fromEntries(header.map((h, i) => [h, r[i] ?? ""]));
  });
}

/** Go's `time` layout letters as `formatdate` spells them, for RFC 3339 input. */
function formatDate(spec: string, timestamp: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(timestamp);
  if (!m) throw new FunctionError(`not a valid RFC3339 timestamp: cannot use "${timestamp}" as year`);
  const [, y, mo, d, h, mi, s, , zone] = m as unknown as string[];
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  const days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
  const hour = Number(h);
  const table: Record<string, string> = {
    YYYY: y ?? "",
    YY: (y ?? "").slice(2),
    MMMM: months[Number(mo) - 1] ?? "",
    MMM: (months[Number(mo) - 1] ?? "").slice(0, 3),
    MM: mo ?? "",
    M: String(Number(mo)),
    DD: d ?? "",
    D: String(Number(d)),
    EEEE: days[date.getUTCDay()] ?? "",
    EEE: (days[date.getUTCDay()] ?? "").slice(0, 3),
    hh: h ?? "",
    h: String(hour),
    HH: String(hour % 12 || 12).padStart(2, "0"),
    H: String(hour % 12 || 12),
    AA: hour < 12 ? "AM" : "PM",
    aa: hour < 12 ? "am" : "pm",
    mm: mi ?? "",
    m: String(Number(mi)),
    ss: s ?? "",
    s: String(Number(s)),
    ZZZZZ: zone === "Z" ? "+00:00" : (zone ?? ""),
    ZZZZ: zone === "Z" ? "+0000" : (zone ?? "").replace(":", ""),
    ZZZ: zone === "Z" ? "UTC" : (zone ?? ""),
    Z: zone ?? "",
  };
  const tokens = Object.keys(table).sort((a, b) => b.length - a.length);
  let out = "";
  for (let i = 0; i < spec.length; ) {
    if (spec[i] === "'") {
      const close = spec.indexOf("'", i + 1);
      if (close < 0) throw new FunctionError("unterminated literal '");
      out += close === i + 1 ? "'" : spec.slice(i + 1, close);
      i = close + 1;
      continue;
    }
    const token = tokens.find((t) => spec.startsWith(t, i));
    if (token) {
      out += table[token];
      i += token.length;
    } else if (/[A-Za-z]/.test(spec[i] ?? "")) {
      throw new FunctionError(`invalid date format verb "${spec[i]}"`);
    } else {
      out += spec[i];
      i++;
    }
  }
  return out;
}

function uuidv5(namespace: string, name: string): string {
  const known: Record<string, string> = {
    dns: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    url: "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
    oid: "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
    x500: "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
  };
  const ns = known[namespace] ?? namespace;
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ns)) throw new FunctionError(`uuid namespace "${namespace}" is not a valid UUID`);
  const hash = createHash("sha1")
    .update(Buffer.from(ns.replace(/-/g, ""), "hex"))
    .update(name)
    .digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x50;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Sets RFC 4122's version-4 and variant bits on 128 random bits written as a UUID. */
function asVersion4(random: string): string {
  const hex = random.replace(/-/g, "").toLowerCase().padEnd(32, "0").slice(0, 32);
  const variant = ((Number.parseInt(hex[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
  const v4 = `${hex.slice(0, 12)}4${hex.slice(13, 16)}${variant}${hex.slice(17)}`;
  return `${v4.slice(0, 8)}-${v4.slice(8, 12)}-${v4.slice(12, 16)}-${v4.slice(16, 20)}-${v4.slice(20)}`;
}

/** `timeadd`: an RFC 3339 timestamp plus a Go duration. */
function timeAdd(timestamp: string, duration: string, parseDuration: (s: string) => bigint): string {
  const date = new Date(timestamp);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(timestamp)) throw new FunctionError(`not a valid RFC3339 timestamp: "${timestamp}"`);
  const ms = Number(parseDuration(duration) / 1_000_000n);
  return new Date(date.getTime() + ms).toISOString().replace(/\.000Z$/, "Z");
}

/** The function table. `parseDuration` is Go's `time.ParseDuration` (for `timeadd`). */
export function standardFunctions(deps: FunctionDeps, parseDuration: (s: string) => bigint): Record<string, Fn> {
  const hash = (algorithm: string) => unary(algorithm, "str", (s) => createHash(algorithm).update(s).digest("hex"));
  const fns: Record<string, Fn> = {
    // numeric
    abs: fixed("abs", ["num"], (a) => Math.abs(num(a, 0, "num")), 1, 1),
    ceil: fixed("ceil", ["num"], (a) => Math.ceil(num(a, 0, "num")), 1, 1),
    floor: fixed("floor", ["num"], (a) => Math.floor(num(a, 0, "num")), 1, 1),
    log: fixed("log", ["num", "base"], (a) => Math.log(num(a, 0, "num")) / Math.log(num(a, 1, "base")), 2, 2),
    pow: fixed("pow", ["num", "power"], (a) => num(a, 0, "num") ** num(a, 1, "power"), 2, 2),
    signum: fixed("signum", ["num"], (a) => Math.sign(num(a, 0, "num")), 1, 1),
    max: (a) => {
      if (a.length === 0) throw new FunctionError("must pass at least one number");
      return Math.max(...a.map((_, i) => num(a, i, "numbers")));
    },
    min: (a) => {
      if (a.length === 0) throw new FunctionError("must pass at least one number");
      return Math.min(...a.map((_, i) => num(a, i, "numbers")));
    },
    parseint: (a) => {
      arity("parseint", a, 2, 2, ["number", "base"]);
      const s = str(a, 0, "number");
      const base = int(a, 1, "base");
      if (base < 2 || base > 62) throw new FunctionError("base must be a whole number between 2 and 62 inclusive", 1, "base");
      const digits = "0123456789abcdefghijklmnopqrstuvwxyz".slice(0, base);
      const body = s.replace(/^[-+]/, "");
      if (!body || [...body.toLowerCase()].some((c) => !digits.includes(c))) throw new FunctionError(`cannot parse "${s}" as a base ${base} integer`);
      return Number.parseInt(s, base);
    },
    // string
    chomp: unary("chomp", "str", (s) => s.replace(/(\r\n|\n|\r)+$/, "")),
    format: (a) => {
      if (a.length === 0) throw new FunctionError('arity:Function "format" expects at least 1 argument(s). Missing value for "format".');
      return format(str(a, 0, "format"), a.slice(1));
    },
    formatlist: (a) => {
      const fmt = str(a, 0, "format");
      const rest = a.slice(1);
      const lengths = rest.filter(Array.isArray).map((l) => (l as Value[]).length);
      const n = lengths.length ? (lengths[0] as number) : 1;
      if (lengths.some((l) => l !== n)) throw new FunctionError("all lists must have the same length");
      let total = 0;
      return Array.from({ length: n }, (_, i) => {
        const line = format(
          fmt,
          rest.map((v) => (Array.isArray(v) ? (v[i] as Value) : v)),
        );
        total += line.length;
        if (total > MAX_STRING_LENGTH) throw tooLong();
        return line;
      });
    },
    indent: (a) => {
      arity("indent", a, 2, 2, ["spaces", "str"]);
      const spaces = int(a, 0, "spaces");
      if (spaces > MAX_BUILT_LENGTH) throw new FunctionError(`more than ${MAX_BUILT_LENGTH} spaces`, 0, "spaces");
      const pad = " ".repeat(Math.max(0, spaces));
      const text = str(a, 1, "str");
      const lines = text.split("\n");
      if (text.length + (lines.length - 1) * pad.length > MAX_STRING_LENGTH) throw tooLong();
      return lines.join(`\n${pad}`);
    },
    join: (a) => {
      if (a.length < 2) throw new FunctionError('arity:Function "join" expects at least 2 argument(s).');
      const sep = str(a, 0, "separator");
      const items = a.slice(1).flatMap((_, i) => strList(a, i + 1, "lists"));
      let length = Math.max(0, items.length - 1) * sep.length;
      for (const item of items) length += item.length;
      if (length > MAX_STRING_LENGTH) throw tooLong();
      return items.join(sep);
    },
    lower: unary("lower", "str", (s) => s.toLowerCase()),
    upper: unary("upper", "str", (s) => s.toUpperCase()),
    title: unary("title", "str", (s) => s.replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_, p: string, c: string) => p + c.toUpperCase())),
    // Go's regexp (RE2: linear in the text, whatever the pattern) and its `$1`/`${name}` expansion.
    regex_replace: withCost(regexScanCost, (a) => {
      arity("regex_replace", a, 3, 3, ["str", "pattern", "replace"]);
      const text = str(a, 0, "str");
      const compiled = compileGoRegexp(str(a, 1, "pattern"));
      if (compiled.error !== undefined) throw new FunctionError(compiled.error);
      const out = goReplaceAll(compiled.re, text, str(a, 2, "replace"), MAX_STRING_LENGTH);
      if (out === undefined) throw tooLong();
      return out;
    }),
    // cty's ReplaceFunc: a plain substring, never a pattern (Terraform's `/re/` form is not Nomad's).
    replace: (a) => {
      arity("replace", a, 3, 3, ["str", "substr", "replace"]);
      return replaceAll(str(a, 0, "str"), str(a, 1, "substr"), str(a, 2, "replace"));
    },
    split: (a) => {
      arity("split", a, 2, 2, ["separator", "str"]);
      return str(a, 1, "str").split(str(a, 0, "separator"));
    },
    strlen: unary("strlen", "str", (s) => [...s].length),
    strrev: unary("strrev", "str", (s) => [...s].reverse().join("")),
    substr: (a) => {
      arity("substr", a, 3, 3, ["str", "offset", "length"]);
      const chars = [...str(a, 0, "str")];
      let offset = int(a, 1, "offset");
      let length = int(a, 2, "length");
      if (offset < 0) offset = Math.max(0, chars.length + offset);
      if (offset > chars.length) throw new FunctionError("offset must be less than or equal to the length of the string", 1, "offset");
      if (length < 0) length = chars.length - offset;
      return chars.slice(offset, offset + length).join("");
    },
    trim: (a) => {
      arity("trim", a, 2, 2, ["str", "cutset"]);
      const cut = new Set([...str(a, 1, "cutset")]);
      const chars = [...str(a, 0, "str")];
      let i = 0;
      let j = chars.length;
      while (i < j && cut.has(chars[i] ?? "")) i++;
      while (j > i && cut.has(chars[j - 1] ?? "")) j--;
      return chars.slice(i, j).join("");
    },
    trimprefix: (a) => {
      arity("trimprefix", a, 2, 2, ["str", "prefix"]);
      const s = str(a, 0, "str");
      const p = str(a, 1, "prefix");
      return s.startsWith(p) ? s.slice(p.length) : s;
    },
    trimsuffix: (a) => {
      arity("trimsuffix", a, 2, 2, ["str", "suffix"]);
      const s = str(a, 0, "str");
      const p = str(a, 1, "suffix");
      return p && s.endsWith(p) ? s.slice(0, -p.length) : s;
    },
    trimspace: unary("trimspace", "str", (s) => s.trim()),
    // collection
    chunklist: (a) => {
      arity("chunklist", a, 2, 2, ["list", "size"]);
      const l = list(a, 0, "list");
      const size = int(a, 1, "size");
      if (size < 0) throw new FunctionError("the size argument must be positive", 1, "size");
      if (size === 0) return [l];
      const out: Value[] = [];
      for (let i = 0; i < l.length; i += size) out.push(l.slice(i, i + size));
      return out;
    },
    // cty's CoalesceFunc (not Terraform's): the first non-null argument, an empty string included;
    // mixed primitive arguments unify to string.
    coalesce: (a) => {
      const unifiesToString = a.some((v) => typeof v === "string");
      for (const v of a) {
        if (v === null) continue;
        return unifiesToString && (typeof v === "number" || typeof v === "boolean") ? (typeof v === "number" ? numberToString(v) : String(v)) : v;
      }
      throw new FunctionError("no non-null arguments");
    },
    coalescelist: (a) => {
      for (let i = 0; i < a.length; i++) if (list(a, i, "vals").length > 0) return a[i] as Value;
      throw new FunctionError("no non-null arguments");
    },
    compact: fixed("compact", ["list"], (a) => strList(a, 0, "list").filter((s) => s !== ""), 1, 1),
    concat: (a) => a.flatMap((_, i) => list(a, i, "seqs")),
    contains: fixed("contains", ["list", "value"], (a) => list(a, 0, "list").some((v) => equal(v, a[1] ?? null)), 2, 2),
    distinct: (a) => {
      arity("distinct", a, 1, 1, ["list"]);
      return distinctValues(list(a, 0, "list"));
    },
    element: (a) => {
      arity("element", a, 2, 2, ["list", "index"]);
      const l = list(a, 0, "list");
      if (l.length === 0) throw new FunctionError("cannot use element function with an empty list");
      const i = int(a, 1, "index");
      if (i < 0) throw new FunctionError("cannot use element function with a negative index");
      return l[i % l.length] as Value;
    },
    flatten: fixed("flatten", ["list"], (a) => flatten(list(a, 0, "list")), 1, 1),
    // cty's IndexFunc (Nomad's `index`): the element at a key, not Terraform's position of a value.
    // Lists and tuples are both arrays here, so the error names a tuple (what a literal list is).
    index: (a) => {
      arity("index", a, 2, 2, ["collection", "key"]);
      const collection = a[0] ?? null;
      const key = a[1] ?? null;
      if (Array.isArray(collection)) {
        if (typeof key !== "number") throw new FunctionError("key for tuple must be number");
        if (!Number.isInteger(key) || key < 0 || key >= collection.length) throw new FunctionError(`key must be between 0 and ${collection.length} inclusive`);
        return collection[key] as Value;
      }
      if (isObject(collection)) {
        if (typeof key !== "string") throw new FunctionError("key for map must be string");
        if (!Object.hasOwn(collection, key)) throw new FunctionError("invalid index");
        return collection[key] as Value;
      }
      throw new FunctionError("collection must be a list, a map or a tuple");
    },
    keys: fixed("keys", ["inputMap"], (a) => Object.keys(obj(a, 0, "inputMap")).sort(), 1, 1),
    values: (a) => {
      arity("values", a, 1, 1, ["mapping"]);
      const m = obj(a, 0, "mapping");
      return Object.keys(m)
        .sort()
        .map((k) => m[k] as Value);
    },
    length: (a) => {
      arity("length", a, 1, 1, ["value"]);
      const v = a[0] ?? null;
      // cty's LengthFunc counts collections only (strlen counts characters).
      if (Array.isArray(v)) return v.length;
      if (isObject(v)) return Object.keys(v).length;
      throw new FunctionError("collection must be a list, a map or a tuple");
    },
    lookup: (a) => {
      arity("lookup", a, 2, 3, ["inputMap", "key", "default"]);
      const m = obj(a, 0, "inputMap");
      const k = str(a, 1, "key");
      if (Object.hasOwn(m, k)) return m[k] as Value;
      if (a.length === 3) return a[2] as Value;
      throw new FunctionError(`lookup failed to find key ${JSON.stringify(k)}`);
    },
    merge: (a) => {
      const out: Record<string, Value> = {};
      for (let i = 0; i < a.length; i++) if (a[i] !== null) Object.assign(out, obj(a, i, "maps"));
      return out;
    },
    range: (a) => {
      if (a.length < 1 || a.length > 3) throw new FunctionError('arity:Function "range" expects 1 to 3 argument(s).');
      const [start, limit, step] = a.length === 1 ? [0, num(a, 0, "params"), 1] : [num(a, 0, "params"), num(a, 1, "params"), a.length === 3 ? num(a, 2, "params") : 1];
      if (step === 0) throw new FunctionError("step must not be zero");
      const out: Value[] = [];
      for (let v = start; step > 0 ? v < limit : v > limit; v += step) {
        out.push(v);
        if (out.length > 1024) throw new FunctionError("more than 1024 values were generated; either decrease the difference between start and end or use a smaller step");
      }
      return out;
    },
    // Nomad maps `reverse` to cty's string ReverseFunc (as `strrev`), not to a list reversal.
    reverse: unary("reverse", "str", (s) => [...s].reverse().join("")),
    setintersection: (a) => {
      const [first, ...rest] = a.map((_, i) => list(a, i, "first_set"));
      const others = rest.map((l) => new Set(l.map(valueKey)));
      return ctySetOrder(distinctValues((first ?? []).filter((v) => others.every((keys) => keys.has(valueKey(v))))));
    },
    setunion: (a) => ctySetOrder(distinctValues(a.flatMap((_, i) => list(a, i, "first_set")))),
    // Charged for the tuples it makes (arguments a few elements long can make a hundred thousand).
    setproduct: withCost(
      // (At most the product the function builds: a larger one is its own error.)
      (a) =>
        a.every(Array.isArray)
          ? Math.floor(
              (Math.min(
                MAX_BUILT_LENGTH,
                a.reduce<number>((n, l) => n * (l as Value[]).length, 1),
              ) *
                a.length) /
                2,
            )
          : 0,
      (a) => {
        if (a.length < 2) throw new FunctionError("at least two arguments are required");
        let out: Value[][] = [[]];
        for (let i = 0; i < a.length; i++) {
          const l = list(a, i, "sets");
          if (out.length * l.length > MAX_BUILT_LENGTH) throw new FunctionError(`the product has more than ${MAX_BUILT_LENGTH} elements`);
          out = out.flatMap((prefix) => l.map((v) => [...prefix, v]));
        }
        return out;
      },
    ),
    slice: (a) => {
      arity("slice", a, 3, 3, ["list", "start_index", "end_index"]);
      const l = list(a, 0, "list");
      const start = int(a, 1, "start_index");
      const end = int(a, 2, "end_index");
      if (start < 0 || end > l.length || start > end) throw new FunctionError("the start and end indexes must be in bounds and in order");
      return l.slice(start, end);
    },
    sort: fixed("sort", ["list"], (a) => strList(a, 0, "list").sort(), 1, 1),
    zipmap: (a) => {
      arity("zipmap", a, 2, 2, ["keys", "values"]);
      const ks = strList(a, 0, "keys");
      const vs = list(a, 1, "values");
      if (ks.length !== vs.length) throw new FunctionError(`number of keys (${ks.length}) does not match number of values (${vs.length})`);
      return Object.fromEntries(ks.map((k, i) => [k, vs[i] as Value]));
    },
    // encoding
    base64decode: unary("base64decode", "str", (s) => {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw new FunctionError(`failed to decode base64 data "${s}"`);
      return Buffer.from(s, "base64").toString("utf8");
    }),
    base64encode: unary("base64encode", "str", (s) => Buffer.from(s, "utf8").toString("base64")),
    csvdecode: unary("csvdecode", "str", csvDecode),
    jsondecode: unary("jsondecode", "str", (s) => {
      let value: Value;
      try {
        value = JSON.parse(s) as Value;
      } catch {
        throw new FunctionError(`invalid JSON: ${JSON.stringify(s)}`);
      }
      return refuseDeepNesting(value);
    }),
    jsonencode: fixed("jsonencode", ["val"], (a) => ctyJsonEncode(a[0] ?? null), 1, 1),
    yamldecode: unary("yamldecode", "src", (s) => {
      try {
        return refuseDeepNesting(ctyYamlDecode(s));
      } catch (e) {
        if (e instanceof RangeError) throw tooDeep();
        throw e;
      }
    }),
    yamlencode: fixed("yamlencode", ["value"], (a) => ctyYamlEncode(a[0] ?? null), 1, 1),
    urlencode: unary("urlencode", "str", (s) =>
      encodeURIComponent(s)
        .replace(/%20/g, "+")
        .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`),
    ),
    // hashes
    md5: hash("md5"),
    sha1: hash("sha1"),
    sha256: hash("sha256"),
    sha512: hash("sha512"),
    // uuid
    uuidv4: fixed("uuidv4", [], () => asVersion4(deps.newUuid()), 0, 0),
    uuidv5: fixed("uuidv5", ["namespace", "name"], (a) => uuidv5(str(a, 0, "namespace"), str(a, 1, "name")), 2, 2),
    // date and time
    formatdate: fixed("formatdate", ["format", "time"], (a) => formatDate(str(a, 0, "format"), str(a, 1, "time")), 2, 2),
    timeadd: (a) => {
      arity("timeadd", a, 2, 2, ["timestamp", "duration"]);
      try {
        return timeAdd(str(a, 0, "timestamp"), str(a, 1, "duration"), parseDuration);
      } catch (e) {
        if (e instanceof FunctionError) throw e;
        throw new FunctionError((e as Error).message);
      }
    },
    // ip networks
    cidrhost: (a) => {
      arity("cidrhost", a, 2, 2, ["prefix", "hostnum"]);
      const { base, bits } = parseCidr(str(a, 0, "prefix"));
      let host = int(a, 1, "hostnum");
      const size = 2 ** (32 - bits);
      if (host < 0) host += size;
      if (host < 0 || host >= size) throw new FunctionError(`prefix of ${bits} does not accommodate a host numbered ${int(a, 1, "hostnum")}`);
      return intToIpv4((base + host) >>> 0);
    },
    cidrnetmask: unary("cidrnetmask", "prefix", (s) => {
      const { bits } = parseCidr(s);
      return intToIpv4(bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);
    }),
    cidrsubnet: fixed("cidrsubnet", ["prefix", "newbits", "netnum"], (a) => subnet(str(a, 0, "prefix"), int(a, 1, "newbits"), int(a, 2, "netnum")), 3, 3),
    cidrsubnets: (a) => {
      const prefix = str(a, 0, "prefix");
      const { base, bits } = parseCidr(prefix);
      let next = base;
      return a.slice(1).map((_, i) => {
        const newbits = int(a, i + 1, "newbits");
        const size = 2 ** (32 - bits - newbits);
        next = Math.ceil(next / size) * size;
        const out = `${intToIpv4(next >>> 0)}/${bits + newbits}`;
        next += size;
        return out;
      });
    },
  };
  for (const [name, weight] of Object.entries(SLOW_FUNCTIONS)) {
    const fn = fns[name];
    if (fn) fns[name] = withCost((args) => Math.floor((weight * args.reduce<number>((sum, v) => sum + valueSize(v), 0)) / 16), fn);
  }
  return fns;
}

/**
 * Functions slower per character or element than the evaluator's charge for
 * what any call reads and returns (one unit per 16 characters or elements):
 * each is charged this many more units per 16 of its arguments, from
 * measurements on the 2-core CI machine (yamldecode: about 2 µs a character).
 */
const SLOW_FUNCTIONS: Readonly<Record<string, number>> = {
  yamldecode: 96,
  yamlencode: 24,
  formatlist: 4,
  jsonencode: 4,
  contains: 2,
  setunion: 1,
  flatten: 2,
  csvdecode: 2,
  sort: 1,
  values: 1,
};

/** Names of the functions that read the filesystem (refused by servers). */
export const FILESYSTEM_FUNCTIONS = ["abspath", "basename", "dirname", "file", "filebase64", "fileexists", "fileset", "pathexpand"] as const;

export { entries, typeName };
