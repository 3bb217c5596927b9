/**
 * A parsed JSON document carried from the document checker's thread to the
 * main thread in pieces. Structured clone (`postMessage`) copies a value in
 * one step on the receiving side: a 50 MB document would be one long hold of
 * the event loop, as long as parsing it there. So the checker's thread cuts
 * the value into pieces of at most {@link PIECE_BUDGET} (of JSON text, and of
 * values, which is what deserialising costs), and the main thread takes one
 * piece per turn of its event loop and puts the value back together.
 *
 * A piece is a list of operations on a stack of open containers, in document
 * order: any array, object or string too large for one piece is opened, filled
 * a run of members at a time, and closed; everything smaller travels whole.
 * Objects get their members in the order the parsed value enumerates them,
 * so the reassembled value lists its keys as `JSON.parse` did, and a
 * `"__proto__"` member becomes an own property, as `JSON.parse` makes it.
 */

/** What one piece may carry at most: `chars` of JSON text and `values` (each array, object, string, number, boolean, null). */
export interface PieceBudget {
  readonly chars: number;
  readonly values: number;
}

/**
 * About a mebibyte of document per piece, and at most 32,768 values: a
 * mebibyte of small objects (`{"a":1}`) is 150,000 of them and takes tens of
 * milliseconds to deserialise, while 32,768 values take a few.
 */
export const PIECE_BUDGET: PieceBudget = { chars: 1024 * 1024, values: 32 * 1024 };

export type PieceOp =
  /** A whole value: the document itself, or the next member of the open container (`key` in an object). */
  | { readonly op: "value"; readonly value: unknown; readonly key?: string }
  /** Opens a container that comes in several pieces (`key` in an object); its members follow. */
  | { readonly op: "open"; readonly kind: "array" | "object" | "string"; readonly key?: string }
  /** Elements appended to the open array. */
  | { readonly op: "items"; readonly items: unknown[] }
  /** Members added to the open object, in order. */
  | { readonly op: "entries"; readonly keys: string[]; readonly values: unknown[] }
  /** Text appended to the open string. */
  | { readonly op: "text"; readonly text: string }
  /** Closes the innermost open container: it becomes a member of the one around it (or the document). */
  | { readonly op: "close" };

/** One piece: what the main thread takes in one turn. */
export type Piece = PieceOp[];

/** How much of the budget a value uses (its JSON text's length and its count of values), counted up to `limit`. */
interface Size {
  chars: number;
  values: number;
}

// Characters JSON.stringify writes escaped (and surrogates, which it escapes when unpaired).
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string's length as JSON text (quotes and escapes included). */
function jsonStringChars(text: string): number {
  return ESCAPED.test(text) ? JSON.stringify(text).length : text.length + 2;
}

/** Adds `value`'s size to `size`, stopping as soon as it exceeds `limit` (the caller only needs to know that it does). */
function measure(value: unknown, size: Size, limit: PieceBudget): void {
  size.values++;
  if (value === null) size.chars += 4;
  else if (typeof value === "string") size.chars += jsonStringChars(value);
  else if (typeof value === "number") size.chars += Number.isFinite(value) ? String(value).length : 4;
  else if (typeof value === "boolean") size.chars += value ? 4 : 5;
  else if (Array.isArray(value)) {
    size.chars += 2 + Math.max(0, value.length - 1);
    for (const item of value) {
      measure(item, size, limit);
      if (over(size, limit)) return;
    }
  } else if (typeof value === "object") {
    const members = value as Record<string, unknown>;
    const keys = Object.keys(members);
    size.chars += 2 + Math.max(0, keys.length - 1);
    for (const key of keys) {
      size.chars += jsonStringChars(key) + 1;
      measure(members[key], size, limit);
      if (over(size, limit)) return;
    }
  } else size.chars += 4; // undefined (not from JSON): written as null
}

function over(size: Size, limit: PieceBudget): boolean {
  return size.chars > limit.chars || size.values > limit.values;
}

/** `value`'s size as a piece member (counted only up to just over `limit`). */
function sizeOf(value: unknown, limit: PieceBudget): Size {
  const size = { chars: 0, values: 0 };
  measure(value, size, limit);
  return size;
}

/** Collects operations into pieces of at most the budget. */
class PieceWriter {
  private ops: PieceOp[] = [];
  private used: Size = { chars: 0, values: 0 };
  /** The run of members being filled (appended to until the piece is full or another operation comes). */
  private run: { op: "items"; items: unknown[] } | { op: "entries"; keys: string[]; values: unknown[] } | undefined;

  constructor(private readonly budget: PieceBudget) {}

  /** Whether `size` more still fits in this piece. */
  fits(size: Size): boolean {
    return this.used.chars + size.chars <= this.budget.chars && this.used.values + size.values <= this.budget.values;
  }

  /** Takes the piece so far (if any), and starts the next one. */
  take(): Piece | undefined {
    if (this.ops.length === 0) return undefined;
    const piece = this.ops;
    this.ops = [];
    this.used = { chars: 0, values: 0 };
    this.run = undefined;
    return piece;
  }

  /** An operation that carries no members (open, close). */
  mark(op: PieceOp): void {
    this.ops.push(op);
    this.run = undefined;
  }

  item(value: unknown, size: Size): void {
    if (this.run?.op !== "items") this.ops.push((this.run = { op: "items", items: [] }));
    this.run.items.push(value);
    this.count(size);
  }

  entry(key: string, value: unknown, size: Size): void {
    if (this.run?.op !== "entries") this.ops.push((this.run = { op: "entries", keys: [], values: [] }));
    this.run.keys.push(key);
    this.run.values.push(value);
    this.count(size);
  }

  text(text: string): void {
    this.ops.push({ op: "text", text });
    this.run = undefined;
    this.count({ chars: text.length, values: 1 });
  }

  private count(size: Size): void {
    this.used.chars += size.chars;
    this.used.values += size.values;
  }
}

/** Cuts `document` (a parsed JSON value) into pieces of at most `budget`, in order. */
export function* documentPieces(document: unknown, budget: PieceBudget = PIECE_BUDGET): Generator<Piece, void, undefined> {
  const writer = new PieceWriter(budget);
  if (!over(sizeOf(document, budget), budget)) {
    yield [{ op: "value", value: document }];
    return;
  }
  yield* splitMember(writer, document, undefined, budget);
  const last = writer.take();
  if (last) yield last;
}

/** Adds one member (`key` when the container is an object) to the writer, whole or opened and split; yields each piece filled. */
function* splitMember(writer: PieceWriter, value: unknown, key: string | undefined, budget: PieceBudget): Generator<Piece, void, undefined> {
  const size = sizeOf(value, budget);
  // A member's text in its container: the value, a separating comma, and in an object its key and colon.
  const member = { chars: size.chars + 1 + (key === undefined ? 0 : jsonStringChars(key) + 1), values: size.values };
  // Only arrays, objects and strings can be split (a container's key goes with its opening, outside the budget);
  // anything else (a number under a mebibyte-long key) travels whole.
  if (!over(member, budget) || (typeof value !== "string" && (value === null || typeof value !== "object"))) {
    if (!writer.fits(member)) {
      const full = writer.take();
      if (full) yield full;
    }
    if (key === undefined) writer.item(value, member);
    else writer.entry(key, value, member);
    return;
  }
  const kind = typeof value === "string" ? "string" : Array.isArray(value) ? "array" : "object";
  writer.mark(key === undefined ? { op: "open", kind } : { op: "open", kind, key });
  if (typeof value === "string") {
    for (let at = 0; at < value.length; at += budget.chars) {
      const full = writer.take();
      if (full) yield full;
      writer.text(value.slice(at, at + budget.chars));
    }
  } else if (Array.isArray(value)) {
    for (const item of value) yield* splitMember(writer, item, undefined, budget);
  } else {
    const members = value as Record<string, unknown>;
    for (const name of Object.keys(members)) yield* splitMember(writer, members[name], name, budget);
  }
  writer.mark({ op: "close" });
}

type Frame =
  | { readonly kind: "array"; readonly key?: string; readonly value: unknown[] }
  | { readonly kind: "object"; readonly key?: string; readonly value: Record<string, unknown> }
  | { readonly kind: "string"; readonly key?: string; readonly parts: string[] };

/** Puts a document back together from its pieces, taken in order. */
export class DocumentAssembler {
  private readonly open: Frame[] = [];
  private document: unknown;
  private complete = false;

  /** Whether the whole document has been put together. */
  get done(): boolean {
    return this.complete;
  }

  /** The document, once {@link done}. */
  get value(): unknown {
    if (!this.complete) throw new Error("the document is not complete");
    return this.document;
  }

  add(piece: Piece): void {
    for (const op of piece) this.apply(op);
  }

  private apply(op: PieceOp): void {
    switch (op.op) {
      case "value":
        this.place(op.value, op.key);
        return;
      case "open":
        this.open.push(
          op.kind === "string"
            ? { kind: "string", key: op.key, parts: [] }
            : op.kind === "array"
              ? { kind: "array", key: op.key, value: [] }
              : { kind: "object", key: op.key, value: {} },
        );
        return;
      case "items": {
        const top = this.top("array");
        for (const item of op.items) top.value.push(item);
        return;
      }
      case "entries": {
        const top = this.top("object");
        for (let i = 0; i < op.keys.length; i++) setMember(top.value, op.keys[i]!, op.values[i]);
        return;
      }
      case "text":
        this.top("string").parts.push(op.text);
        return;
      case "close": {
        const frame = this.open.pop();
        if (!frame) throw new Error("a document piece closes more than it opened");
        this.place(frame.kind === "string" ? frame.parts.join("") : frame.value, frame.key);
        return;
      }
    }
  }

  private top<K extends Frame["kind"]>(kind: K): Extract<Frame, { kind: K }> {
    const top = this.open.at(-1);
    if (top?.kind !== kind) throw new Error(`a document piece adds to an open ${kind} where there is none`);
    return top as Extract<Frame, { kind: K }>;
  }

  private place(value: unknown, key: string | undefined): void {
    const top = this.open.at(-1);
    if (!top) {
      this.document = value;
      this.complete = true;
    } else if (top.kind === "array") top.value.push(value);
    else if (top.kind === "object" && key !== undefined) setMember(top.value, key, value);
    else throw new Error("a document piece places a member where it cannot go");
  }
}

/** Adds a member as JSON.parse does: `"__proto__"` too becomes an own property (assigning it would set the prototype). */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  else target[key] = value;
}
