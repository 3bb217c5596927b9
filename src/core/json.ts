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

const KEEP_ORDER = Symbol("standin.keep-key-order");

/**
 * Marks an object whose keys `sortKeys` leaves in insertion order: what a Go
 * type with its own MarshalJSON writes (encoding/json keeps struct order),
 * e.g. Nomad's VariableLock `{"TTL","LockDelay","ID"}`.
 */
export function keepKeyOrder<T extends object>(value: T): T {
  Object.defineProperty(value, KEEP_ORDER, { value: true, enumerable: false });
  return value;
}

export function encodeJSON(value: unknown, options: EncodeOptions = {}): string {
  const text = options.sortKeys || containsBigInt(value) ? serialize(value, options) : nativeSerialize(value, options.pretty ?? false);
  const escaped = options.escapeHTML ? escapeHTML(text) : text;
  return options.pretty ? escaped + "\n" : escaped;
}

/** Canonical form for hashing: keys sorted, compact, bigint exact. */
export function canonicalJSON(value: unknown): string {
  return writeCanonical(resolveToJSON(value)) ?? "null";
}

/**
 * The canonical JSON of `value` (exactly the text of `canonicalJSON`), handed
 * to `emit` in pieces of about `chunkChars` characters instead of as one
 * string. For hashing a whole state: one string of tens of megabytes built
 * by concatenation is a rope of millions of pieces that the hash must first
 * flatten, and building and collecting it cost several times the hashing.
 * Arrays and objects down to `streamDepth` levels are written member by
 * member; anything deeper (a store row) is written whole, as one piece.
 */
export function canonicalJSONChunks(value: unknown, emit: (chunk: string) => void, options: { streamDepth?: number; chunkChars?: number } = {}): void {
  const streamDepth = options.streamDepth ?? 5;
  const chunkChars = options.chunkChars ?? 1 << 16;
  let pending = "";
  const write = (piece: string): void => {
    pending += piece;
    if (pending.length >= chunkChars) {
      emit(pending);
      pending = "";
    }
  };
  if (!streamCanonical(resolveToJSON(value), 0, streamDepth, write)) write("null");
  if (pending !== "") emit(pending);
}

/**
 * The same chunks as {@link canonicalJSONChunks}, with a turn of the event
 * loop after each `turnChars` characters: hashing a state of 100 000 rows
 * takes a few hundred milliseconds, which other requests need not wait out.
 * The value must not change meanwhile (a captured snapshot does not: its
 * rows are frozen and its tables its own).
 */
export async function canonicalJSONChunksInTurns(
  value: unknown,
  emit: (chunk: string) => void,
  turn: () => Promise<void>,
  options: { streamDepth?: number; chunkChars?: number; turnChars?: number } = {},
): Promise<void> {
  const turnChars = options.turnChars ?? 1 << 20;
  let sinceTurn = 0;
  for (const chunk of canonicalChunks(value, options)) {
    emit(chunk);
    sinceTurn += chunk.length;
    if (sinceTurn >= turnChars) {
      sinceTurn = 0;
      await turn();
    }
  }
}

/** canonicalJSONChunks' chunks, one at a time. */
function* canonicalChunks(value: unknown, options: { streamDepth?: number; chunkChars?: number }): Generator<string> {
  const streamDepth = options.streamDepth ?? 5;
  const chunkChars = options.chunkChars ?? 1 << 16;
  let pending = "";
  const pieces = canonicalPieces(resolveToJSON(value), 0, streamDepth);
  let next = pieces.next();
  for (; !next.done; next = pieces.next()) {
    pending += next.value;
    if (pending.length >= chunkChars) {
      yield pending;
      pending = "";
    }
  }
  if (!next.value) pending += "null";
  if (pending !== "") yield pending;
}

/**
 * streamCanonical as a generator, so the walk can stop for a turn between
 * pieces. Kept apart from streamCanonical, which the synchronous hash uses:
 * a generator's yields cost that one ~10% (test/core/json-chunks.test.ts
 * holds the two to the same bytes).
 */
function* canonicalPieces(v: unknown, depth: number, streamDepth: number): Generator<string, boolean> {
  if (depth >= streamDepth || v === null || typeof v !== "object") {
    const text = writeCanonical(v);
    if (text === undefined) return false;
    yield text;
    return true;
  }
  if (Array.isArray(v)) {
    yield "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ",";
      if (!(yield* canonicalPieces(resolveToJSON(v[i]), depth + 1, streamDepth))) yield "null";
    }
    yield "]";
    return true;
  }
  const record = v as Record<string, unknown>;
  const own = Object.keys(record);
  const keys = own.length > MAX_REMEMBERED_KEYS ? sortBytewise(own) : sortedKeys(own);
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const child = resolveToJSON(record[key]);
    // What writeCanonical leaves out of an object (its text would be undefined): known before writing the key.
    const kind = typeof child;
    if (kind === "undefined" || kind === "function" || kind === "symbol") continue;
    yield (first ? "{" : ",") + quoteKey(key) + ":";
    first = false;
    yield* canonicalPieces(child, depth + 1, streamDepth);
  }
  yield first ? "{}" : "}";
  return true;
}

/** Writes a value whose `toJSON` has been applied; false (and nothing written) where writeCanonical gives undefined. */
function streamCanonical(v: unknown, depth: number, streamDepth: number, write: (piece: string) => void): boolean {
  if (depth >= streamDepth || v === null || typeof v !== "object") {
    const text = writeCanonical(v);
    if (text === undefined) return false;
    write(text);
    return true;
  }
  if (Array.isArray(v)) {
    write("[");
    for (let i = 0; i < v.length; i++) {
      if (i > 0) write(",");
      if (!streamCanonical(resolveToJSON(v[i]), depth + 1, streamDepth, write)) write("null");
    }
    write("]");
    return true;
  }
  const record = v as Record<string, unknown>;
  const own = Object.keys(record);
  const keys = own.length > MAX_REMEMBERED_KEYS ? sortBytewise(own) : sortedKeys(own);
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const child = resolveToJSON(record[key]);
    // What writeCanonical leaves out of an object (its text would be undefined): known before writing the key.
    const kind = typeof child;
    if (kind === "undefined" || kind === "function" || kind === "symbol") continue;
    write((first ? "{" : ",") + quoteKey(key) + ":");
    first = false;
    streamCanonical(child, depth + 1, streamDepth, write);
  }
  write(first ? "{}" : "}");
  return true;
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
  return writeValue(resolveToJSON(value), "", options.pretty ?? false, options.sortKeys ?? false) ?? "null";
}

const COMPOUND = Symbol("array or object");

/** A scalar's text (null's too); undefined for what JSON leaves out; COMPOUND for arrays and objects. */
function writeScalar(v: unknown): string | undefined | typeof COMPOUND {
  switch (typeof v) {
    case "string":
      return quote(v);
    case "number":
      return Number.isFinite(v) ? String(v) : "null";
    case "bigint":
      return v.toString();
    case "boolean":
      return v ? "true" : "false";
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
  }
  if (v === null) return "null";
  return COMPOUND;
}

/**
 * The text of a value whose `toJSON` has been applied; undefined for what JSON
 * leaves out (undefined, functions, symbols). Built by string concatenation
 * (V8 joins the pieces once, when the text is used): this runs on every list
 * answer of the scheduler, so it avoids per-value arrays, closures and calls
 * into JSON.stringify for strings that need no escaping.
 */
function writeValue(v: unknown, indent: string, pretty: boolean, sort: boolean): string | undefined {
  const scalar = writeScalar(v);
  if (scalar !== COMPOUND) return scalar;
  const inner = pretty ? indent + "    " : "";
  const separator = pretty ? ",\n" + inner : ",";
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    let text = pretty ? "[\n" + inner : "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) text += separator;
      text += writeValue(resolveToJSON(v[i]), inner, pretty, sort) ?? "null";
    }
    return text + (pretty ? "\n" + indent + "]" : "]");
  }
  const record = v as Record<string, unknown>;
  const keys = sort && !(KEEP_ORDER in record) ? sortedKeys(Object.keys(record)) : Object.keys(record);
  let text = "";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const child = writeValue(resolveToJSON(record[key]), inner, pretty, sort);
    if (child === undefined) continue;
    text += (text === "" ? (pretty ? "{\n" + inner : "{") : separator) + quoteKey(key) + (pretty ? ": " : ":") + child;
  }
  return text === "" ? "{}" : text + (pretty ? "\n" + indent + "}" : "}");
}

/**
 * writeValue's compact, sorted-keys case (canonicalJSON, the state hash), on
 * its own: each key sequence's byte order comes with its keys already quoted
 * (see keyLayout), so an object costs one concatenation per member. The
 * text is the same as `writeValue(v, "", false, true)`.
 */
function writeCanonical(v: unknown): string | undefined {
  const scalar = writeScalar(v);
  if (scalar !== COMPOUND) return scalar;
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    let text = "[";
    for (let i = 0; i < v.length; i++) {
      if (i > 0) text += ",";
      text += writeCanonical(resolveToJSON(v[i])) ?? "null";
    }
    return text + "]";
  }
  const record = v as Record<string, unknown>;
  const layout = keyLayout(Object.keys(record));
  const keys = layout.keys;
  let text = "";
  for (let i = 0; i < keys.length; i++) {
    const child = writeCanonical(resolveToJSON(record[keys[i]!]));
    if (child === undefined) continue;
    text = text === "" ? layout.first[i] + child : text + layout.next[i] + child;
  }
  return text === "" ? "{}" : text + "}";
}

/** What JSON.stringify escapes in a string: `"`, `\\`, control characters, and (lone) surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const SURROGATE = /[\ud800-\udfff]/;

function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : '"' + text + '"';
}

/** Object keys repeat from answer to answer (field names): their quoted form is kept, up to a bound. */
const quotedKeys = new Map<string, string>();

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = quote(key);
    if (quotedKeys.size < 10_000) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** Sorts byte-wise: the default order (UTF-16 code units) is the same unless a key holds a surrogate. */
/**
 * Objects of one kind have the same keys in the same order, so their sorted
 * order is remembered: a trie over the key sequence (exact, no joined-string
 * collisions) leads to the sorted list. Bounded, for maps with ever-new keys.
 */
interface KeyOrderNode {
  readonly next: Map<string, KeyOrderNode>;
  sorted?: readonly string[];
  /** For writeCanonical: the sorted keys with their quoted heads. */
  layout?: KeyLayout;
}
const keyOrders: KeyOrderNode = { next: new Map() };
const KEY_ORDER_NODES = 50_000;
let keyOrderNodes = 0;

/** The trie node of a key sequence; undefined once the trie is full and the sequence is not in it. */
function keyOrderNode(keys: readonly string[]): KeyOrderNode | undefined {
  let node = keyOrders;
  for (const key of keys) {
    let child = node.next.get(key);
    if (child === undefined) {
      if (keyOrderNodes >= KEY_ORDER_NODES) return undefined;
      child = { next: new Map() };
      node.next.set(key, child);
      keyOrderNodes++;
    }
    node = child;
  }
  return node;
}

function sortedKeys(keys: string[]): readonly string[] {
  if (keys.length < 2) return keys;
  const node = keyOrderNode(keys);
  if (node === undefined) return sortBytewise(keys);
  return (node.sorted ??= sortBytewise(keys.slice()));
}

/** Keys in byte order, each with what precedes its value: `{"key":` as the first member written, `,"key":` after another. */
interface KeyLayout {
  readonly keys: readonly string[];
  readonly first: readonly string[];
  readonly next: readonly string[];
}

const NO_KEYS: KeyLayout = { keys: [], first: [], next: [] };

/**
 * Objects with more keys than this are maps keyed by IDs (a snapshot's rows),
 * whose key sequences never repeat: the canonical writers sort them directly
 * instead of filling the trie with them (10,000 nodes per table).
 */
const MAX_REMEMBERED_KEYS = 256;

/**
 * The last key sequence seen per first key, with its layout: objects of one
 * kind come one after another (a table's rows), and comparing their keys to
 * the last sequence (interned strings, compared by reference) is cheaper than
 * walking the trie, which hashes every key.
 */
const lastLayouts = new Map<string, { readonly keys: readonly string[]; readonly layout: KeyLayout }>();
const LAST_LAYOUTS = 1_000;

function keyLayout(keys: string[]): KeyLayout {
  if (keys.length === 0) return NO_KEYS;
  if (keys.length > MAX_REMEMBERED_KEYS) return buildKeyLayout(sortBytewise(keys));
  const last = lastLayouts.get(keys[0]!);
  if (last !== undefined && sameKeys(last.keys, keys)) return last.layout;
  // One key needs no sorting; like sortedKeys, leave it out of the trie (maps with one ever-new key would fill it).
  const node = keys.length === 1 ? undefined : keyOrderNode(keys);
  const layout = node === undefined ? buildKeyLayout(sortBytewise(keys.slice())) : (node.layout ??= buildKeyLayout((node.sorted ??= sortBytewise(keys.slice()))));
  if (last !== undefined || lastLayouts.size < LAST_LAYOUTS) lastLayouts.set(keys[0]!, { keys, layout });
  return layout;
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function buildKeyLayout(sorted: readonly string[]): KeyLayout {
  const quoted = sorted.map((key) => quote(key) + ":");
  return { keys: sorted, first: quoted.map((q) => "{" + q), next: quoted.map((q) => "," + q) };
}

function sortBytewise(keys: string[]): string[] {
  if (keys.length < 2) return keys;
  for (const key of keys) if (SURROGATE.test(key)) return keys.sort(compareBytewise);
  return keys.sort();
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
 * How many values a request body may hold (members and elements at any
 * depth). Parsing, decoding and storing a document takes the event loop for
 * a time that grows with its values (500,000 keys: seconds, during which no
 * other client of any port is answered), so a body past this is refused
 * before it is parsed. At 100,000 a valid job of that many Meta values still
 * held every port 200–380 ms while it was decoded, canonicalized and stored
 * (in process, quiet machine); at 25,000 it is about 50 ms once warm. No real
 * client sends a fraction of it.
 */
export const MAX_BODY_VALUES = 25_000;

/**
 * Whether a JSON text holds more than `limit` values: counts the commas
 * outside strings (each value past the first in a container follows one;
 * containers of one value each nest, which the depth limits bound), stopping
 * once past the limit. Linear, and cheap: strings are skipped quote to quote.
 */
export function exceedsValueCount(text: string, limit = MAX_BODY_VALUES): boolean {
  if (text.length <= limit) return false; // each value takes at least a character
  let count = 1;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      if (i < 0) return false;
    } else if (c === 0x2c) {
      if (++count > limit) return true;
    }
  }
  return false;
}

/** The words every port answers a body past MAX_BODY_VALUES with (413, plain text). */
export const TOO_MANY_VALUES = `Request body too large: more than ${MAX_BODY_VALUES} JSON values (standin's limit, which keeps one request from holding up every other client)`;

const PARSED = Symbol("standin.parsed-body");
type Parsed = { text: string; value?: unknown; error?: unknown };

/**
 * JSON.parse of a request's body text, once per request: a router that picks
 * a region or datacenter from the body and the handler that decodes it share
 * the parse (7 MB take ~250 ms). The value is shared too: read it, do not change it.
 */
export function parseBodyOnce(request: Request, text: string): unknown {
  const held = (request as unknown as { [PARSED]?: Parsed })[PARSED];
  if (held !== undefined && held.text === text) {
    if ("error" in held) throw held.error;
    return held.value;
  }
  const record: Parsed = { text };
  (request as unknown as { [PARSED]?: Parsed })[PARSED] = record;
  try {
    return (record.value = JSON.parse(text));
  } catch (error) {
    record.error = error;
    throw error;
  }
}

/**
 * The index of the quote that closes the JSON string opening at `start`, or
 * -1 when it is never closed. Strings are most of a document: this jumps
 * from quote to quote (indexOf) instead of walking them character by
 * character; a quote ends the string unless an odd run of backslashes precedes it.
 */
function stringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    if (end < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === 0x5c) backslashes++;
    if ((backslashes & 1) === 0) return end;
  }
}

/**
 * The index of the bracket at which a JSON text first nests deeper than
 * `limit` arrays and objects (brackets inside strings do not count), or -1.
 */
export function excessiveNesting(text: string, limit = MAX_JSON_DEPTH): number {
  if (text.length <= limit) return -1;
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = stringEnd(text, i);
      if (i < 0) return -1; // unterminated: nothing after it counts
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}
