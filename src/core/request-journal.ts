/**
 * The request journal: a CappedLog of RecordedRequest (same caps, same
 * numbering, same answers to `query`) that keeps its entries field by field
 * in a ring of columns instead of as one object each.
 *
 * Every service request appends an entry that lives for the next ten
 * thousand requests: as objects, each one was copied twice by the young
 * generation's collector, promoted, and later swept by a full collection, a
 * good part of a small request's cost. In columns, an append writes numbers
 * into typed arrays and references into arrays that are already old; the
 * strings and header records it points to are shared with the previous
 * entries when the client repeats itself (http/middleware's journalEntry).
 * `query` builds the entries again, with their fields in the order they were
 * appended with.
 */
import type { RecordedRequest } from "./journal.js";

/** Slots a journal starts with; it grows by doubling up to its entry cap. */
const INITIAL_SLOTS = 64;

export class RequestJournal {
  private slots = 0;
  /** Physical slot of the oldest entry. */
  private start = 0;
  private count = 0;
  /** Sequence number of the oldest entry (entries are numbered without gaps). */
  private firstSeq = 1;
  private nextSeq = 1;
  private dropped = 0;
  private held = 0;

  private at = new Float64Array(0);
  private index = new Float64Array(0);
  private status = new Float64Array(0);
  /** NaN where the entry has no `bodyBytes`. */
  private bodyBytes = new Float64Array(0);
  private sizes = new Float64Array(0);
  private truncated = new Uint8Array(0);
  private service: string[] = [];
  private method: string[] = [];
  private path: string[] = [];
  private query_: string[] = [];
  private headers: Array<Record<string, string>> = [];
  private body: Array<string | null> = [];
  private bodyDigest: Array<string | undefined> = [];

  constructor(
    private maxEntries: number,
    private maxBytes = Infinity,
    private readonly sizeOf: (entry: RecordedRequest) => number = () => 0,
  ) {
    checkCaps(maxEntries, maxBytes);
  }

  get capacity(): number {
    return this.maxEntries;
  }

  /** The byte budget (Infinity: none). */
  get budget(): number {
    return this.maxBytes;
  }

  /** Bytes held by the kept entries, as `sizeOf` counts them. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.count;
  }

  /** Entries dropped by the cap since the last clear. */
  get droppedCount(): number {
    return this.dropped;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /** New caps; entries over them go at once. */
  setCaps(maxEntries: number, maxBytes: number): void {
    checkCaps(maxEntries, maxBytes);
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.trim();
    // A ring larger than the new cap gives its slack back.
    if (this.slots > maxEntries) this.resize(Math.max(this.count, Math.min(maxEntries, INITIAL_SLOTS)));
  }

  /** Numbers `entry` (its `seq` is overwritten) and keeps its fields; the newest entry is kept whatever its size. */
  append(entry: RecordedRequest): RecordedRequest {
    entry.seq = this.nextSeq++;
    if (this.count === this.maxEntries) this.dropOldest();
    if (this.count === this.slots) this.resize(Math.min(this.maxEntries, Math.max(INITIAL_SLOTS, this.slots * 2)));
    const size = this.sizeOf(entry);
    let slot = this.start + this.count;
    if (slot >= this.slots) slot -= this.slots;
    this.at[slot] = entry.at;
    this.index[slot] = entry.index;
    this.status[slot] = entry.status;
    this.bodyBytes[slot] = entry.bodyBytes ?? Number.NaN;
    this.sizes[slot] = size;
    this.truncated[slot] = entry.bodyTruncated ? 1 : 0;
    this.service[slot] = entry.service;
    this.method[slot] = entry.method;
    this.path[slot] = entry.path;
    this.query_[slot] = entry.query;
    this.headers[slot] = entry.headers;
    this.body[slot] = entry.body;
    this.bodyDigest[slot] = entry.bodyDigest;
    this.count++;
    this.held += size;
    this.trim();
    return entry;
  }

  /** Entries after `since` (and passing `where`), oldest first; the newest `limit` of them. */
  query(options: { since?: number; limit?: number; where?: (entry: RecordedRequest) => boolean } = {}): RecordedRequest[] {
    const since = options.since ?? 0;
    // Numbered without gaps: the first entry after `since` is found by arithmetic.
    let from = Math.max(0, Math.min(this.count, since - this.firstSeq + 1));
    if (!options.where && options.limit !== undefined) from = Math.max(from, this.count - options.limit);
    let out: RecordedRequest[] = [];
    for (let i = from; i < this.count; i++) {
      const entry = this.entry(i);
      if (!options.where || options.where(entry)) out.push(entry);
    }
    if (options.limit !== undefined && out.length > options.limit) out = out.slice(out.length - options.limit);
    return out;
  }

  clear(): void {
    this.slots = 0;
    this.start = 0;
    this.count = 0;
    this.firstSeq = this.nextSeq;
    this.dropped = 0;
    this.held = 0;
    this.allocate(0);
  }

  /** The `i`th oldest entry, built again: fields in journalEntry's order, `bodyBytes` and `bodyDigest` only where present. */
  private entry(i: number): RecordedRequest {
    let slot = this.start + i;
    if (slot >= this.slots) slot -= this.slots;
    const entry: RecordedRequest = {
      seq: this.firstSeq + i,
      at: this.at[slot]!,
      service: this.service[slot]!,
      method: this.method[slot]!,
      path: this.path[slot]!,
      query: this.query_[slot]!,
      headers: this.headers[slot]!,
      body: this.body[slot]!,
      bodyTruncated: this.truncated[slot] === 1,
      status: this.status[slot]!,
      index: this.index[slot]!,
    };
    const bodyBytes = this.bodyBytes[slot]!;
    if (!Number.isNaN(bodyBytes)) entry.bodyBytes = bodyBytes;
    const digest = this.bodyDigest[slot];
    if (digest !== undefined) entry.bodyDigest = digest;
    return entry;
  }

  private trim(): void {
    while (this.count > this.maxEntries || (this.held > this.maxBytes && this.count > 1)) this.dropOldest();
  }

  private dropOldest(): void {
    const slot = this.start;
    this.held -= this.sizes[slot]!;
    // Let go of what the entry points to now: the slot may not be written again for a long time.
    this.path[slot] = "";
    this.query_[slot] = "";
    this.headers[slot] = EMPTY_RECORD;
    this.body[slot] = null;
    this.bodyDigest[slot] = undefined;
    this.start = slot + 1 === this.slots ? 0 : slot + 1;
    this.count--;
    this.firstSeq++;
    this.dropped++;
  }

  /** Moves the entries, oldest first, into columns of `slots` slots. */
  private resize(slots: number): void {
    const old = { ...this.columns(), slots: this.slots, start: this.start };
    this.allocate(slots);
    for (let i = 0; i < this.count; i++) {
      let from = old.start + i;
      if (from >= old.slots) from -= old.slots;
      this.at[i] = old.at[from]!;
      this.index[i] = old.index[from]!;
      this.status[i] = old.status[from]!;
      this.bodyBytes[i] = old.bodyBytes[from]!;
      this.sizes[i] = old.sizes[from]!;
      this.truncated[i] = old.truncated[from]!;
      this.service[i] = old.service[from]!;
      this.method[i] = old.method[from]!;
      this.path[i] = old.path[from]!;
      this.query_[i] = old.query_[from]!;
      this.headers[i] = old.headers[from]!;
      this.body[i] = old.body[from]!;
      this.bodyDigest[i] = old.bodyDigest[from];
    }
    this.slots = slots;
    this.start = 0;
  }

  private columns() {
    const { at, index, status, bodyBytes, sizes, truncated, service, method, path, query_, headers, body, bodyDigest } = this;
    return { at, index, status, bodyBytes, sizes, truncated, service, method, path, query_, headers, body, bodyDigest };
  }

  private allocate(slots: number): void {
    this.at = new Float64Array(slots);
    this.index = new Float64Array(slots);
    this.status = new Float64Array(slots);
    this.bodyBytes = new Float64Array(slots);
    this.sizes = new Float64Array(slots);
    this.truncated = new Uint8Array(slots);
    // Filled up front, so each column is one packed array of its kind from the start.
    this.service = new Array<string>(slots).fill("");
    this.method = new Array<string>(slots).fill("");
    this.path = new Array<string>(slots).fill("");
    this.query_ = new Array<string>(slots).fill("");
    this.headers = new Array<Record<string, string>>(slots).fill(EMPTY_RECORD);
    this.body = new Array<string | null>(slots).fill(null);
    this.bodyDigest = new Array<string | undefined>(slots).fill(undefined);
  }
}

const EMPTY_RECORD: Record<string, string> = Object.freeze({}) as Record<string, string>;

function checkCaps(maxEntries: number, maxBytes: number): void {
  if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError("journal capacity must be a positive integer");
  if (maxBytes !== Infinity && (!Number.isInteger(maxBytes) || maxBytes < 1)) throw new RangeError("journal byte budget must be a positive integer");
}
