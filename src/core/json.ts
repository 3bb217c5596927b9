/**
 * JSON encoding in the real products' wire styles.
 *
 * Both products write compact JSON with no trailing newline, and with
 * `?pretty` a 4-space indent followed by one newline. They differ in details
 * this module makes explicit options:
 * - Nomad's encoder emits struct fields sorted by name byte-wise (`sortKeys`);
 *   maps come out in Go's random order, which we make deterministic by sorting too.
 * - Consul uses Go's encoding/json, which escapes `<`, `>`, `&` (`escapeHTML`);
 *   Nomad's encoder leaves them as they are.
 * - Go's encoding/json always escapes U+2028 and U+2029 (done with `escapeHTML`).
 * - int64 values beyond 2^53 (Nomad's Unix-nanosecond timestamps) are given
 *   as `bigint` and printed exactly.
 */

export interface EncodeOptions {
  pretty?: boolean;
  /** Sort every object's keys byte-wise (by UTF-8 bytes, i.e. by code point). */
  sortKeys?: boolean;
  /** Escape <, >, &, U+2028, U+2029 as \u003c … like Go's encoding/json. */
  escapeHTML?: boolean;
}

export function encodeJSON(value: unknown, options: EncodeOptions = {}): string {
  const text = options.sortKeys || containsBigInt(value) ? serialize(value, options) : nativeSerialize(value, options.pretty ?? false);
  const escaped = options.escapeHTML ? escapeHTML(text) : text;
  return options.pretty ? escaped + "\n" : escaped;
}

/** Canonical form for hashing: keys sorted, compact, bigint exact. */
export function canonicalJSON(value: unknown): string {
  return serialize(value, { sortKeys: true });
}

/** Byte-wise comparison of the UTF-8 encodings of two strings (code point order, unlike JS's UTF-16 `<`). */
export function compareBytewise(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF, which sort
    // after every BMP character in UTF-8 even though 0xE000–0xFFFF are larger code units.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** Returns a copy of `value` with every object's keys in byte-wise order (for code that needs the object, not the text). */
export function sortKeysDeep<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeysDeep) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort(compareBytewise)) out[key] = sortKeysDeep((value as Record<string, unknown>)[key]);
    return out as T;
  }
  return value;
}

function nativeSerialize(value: unknown, pretty: boolean): string {
  const text = JSON.stringify(value, null, pretty ? 4 : undefined);
  // JSON.stringify(undefined) is undefined; the products would send null.
  return text ?? "null";
}

const HTML_UNSAFE = /[<>&\u2028\u2029]/g;
const HTML_ESCAPES: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** Safe on the whole document: these characters can only occur inside strings. */
function escapeHTML(text: string): string {
  return text.replace(HTML_UNSAFE, (c) => HTML_ESCAPES[c]!);
}

function containsBigInt(value: unknown, depth = 0): boolean {
  if (typeof value === "bigint") return true;
  if (depth > 64 || value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((v) => containsBigInt(v, depth + 1));
  for (const key in value) if (containsBigInt((value as Record<string, unknown>)[key], depth + 1)) return true;
  return false;
}

/** A serializer matching JSON.stringify's output (including `null` for non-finite numbers) plus bigint and key sorting. */
function serialize(value: unknown, options: EncodeOptions): string {
  const indentUnit = options.pretty ? "    " : "";
  const sort = options.sortKeys ?? false;
  const parts: string[] = [];

  const write = (raw: unknown, indent: string, inArray: boolean): boolean => {
    const v = resolveToJSON(raw);
    switch (typeof v) {
      case "string":
        parts.push(JSON.stringify(v));
        return true;
      case "number":
        parts.push(Number.isFinite(v) ? String(v) : "null");
        return true;
      case "bigint":
        parts.push(v.toString());
        return true;
      case "boolean":
        parts.push(v ? "true" : "false");
        return true;
      case "undefined":
      case "function":
      case "symbol":
        if (inArray) parts.push("null");
        return inArray;
    }
    if (v === null) {
      parts.push("null");
      return true;
    }
    const inner = indent + indentUnit;
    const open = options.pretty ? "\n" + inner : "";
    const sep = options.pretty ? ",\n" + inner : ",";
    const close = options.pretty ? "\n" + indent : "";
    if (Array.isArray(v)) {
      if (v.length === 0) {
        parts.push("[]");
        return true;
      }
      parts.push("[" + open);
      v.forEach((item, i) => {
        if (i > 0) parts.push(sep);
        write(item, inner, true);
      });
      parts.push(close + "]");
      return true;
    }
    const record = v as Record<string, unknown>;
    const keys = sort ? Object.keys(record).sort(compareBytewise) : Object.keys(record);
    let first = true;
    const start = parts.length;
    parts.push("{" + open);
    for (const key of keys) {
      const child = resolveToJSON(record[key]);
      if (child === undefined || typeof child === "function" || typeof child === "symbol") continue;
      if (!first) parts.push(sep);
      first = false;
      parts.push(JSON.stringify(key) + (options.pretty ? ": " : ":"));
      write(child, inner, false);
    }
    if (first) {
      parts.length = start;
      parts.push("{}");
    } else {
      parts.push(close + "}");
    }
    return true;
  };

  if (!write(value, "", false)) return "null";
  return parts.join("");
}

/** Applies `toJSON` first, as JSON.stringify does, so a `toJSON` returning undefined drops the property. */
function resolveToJSON(value: unknown): unknown {
  const withToJSON = value as { toJSON?: () => unknown } | null;
  return withToJSON !== null && typeof withToJSON === "object" && typeof withToJSON.toJSON === "function" ? withToJSON.toJSON() : value;
}

/**
 * How deeply a request body may nest arrays and objects. Everything that
 * walks a parsed document (encoding, hashing, cloning, snapshots) recurses,
 * and V8's own JSON.stringify and structuredClone give up a few thousand
 * levels down, so bodies are refused well before that. (Go's decoder, which
 * the products use, refuses past 10 000 levels.)
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * The index of the bracket at which a JSON text first nests deeper than
 * `limit` arrays and objects (brackets inside strings do not count), or -1.
 */
export function excessiveNesting(text: string, limit = MAX_JSON_DEPTH): number {
  if (text.length <= limit) return -1;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}
