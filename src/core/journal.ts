/**
 * Capped, append-only logs for diagnostics: the request journal and the
 * internal event journal. They are not part of the state (a snapshot does not
 * carry them); reset clears them. Each entry gets a sequence number so that
 * clients can page with `since`, and the cap keeps a long CI run from growing
 * without bound (the WireMock out-of-memory class of complaint).
 */

export interface Sequenced {
  seq: number;
}

export interface LogQuery {
  /** Only entries with seq greater than this. */
  since?: number;
  /** At most this many (the newest are kept when limiting). */
  limit?: number;
  filter?: (entry: never) => boolean;
}

/**
 * Capped by entries and, when given a way to size an entry, by bytes too:
 * the oldest entries go first, whichever cap is reached (the newest entry is
 * always kept, whatever its size).
 */
export class CappedLog<T extends Sequenced> {
  private entries: T[] = [];
  private sizes: number[] = [];
  private head = 0; // index of the oldest entry in `entries`
  private nextSeq = 1;
  private dropped = 0;
  private held = 0;

  constructor(
    private maxEntries: number,
    private maxBytes = Infinity,
    private readonly sizeOf: (entry: T) => number = () => 0,
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

  /** New caps; entries over them go at once. */
  setCaps(maxEntries: number, maxBytes: number): void {
    checkCaps(maxEntries, maxBytes);
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
    this.trim();
  }

  /** An entry that already has a `seq` slot (first, so it lists first) is numbered in place instead of copied. */
  append(entry: Omit<T, "seq"> | T): T {
    let full: T;
    if ("seq" in entry) {
      full = entry as T;
      full.seq = this.nextSeq++;
    } else full = { seq: this.nextSeq++, ...entry } as T;
    const size = this.sizeOf(full);
    this.entries.push(full);
    this.sizes.push(size);
    this.held += size;
    this.trim();
    return full;
  }

  private trim(): void {
    while (this.entries.length - this.head > this.maxEntries || (this.held > this.maxBytes && this.entries.length - this.head > 1)) {
      this.held -= this.sizes[this.head]!;
      // Let go of the entry now: a compaction may be a long way off.
      (this.entries as Array<T | undefined>)[this.head] = undefined;
      this.head++;
      this.dropped++;
    }
    // Compact occasionally instead of shifting on every append.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
  }

  query(options: { since?: number; limit?: number; where?: (entry: T) => boolean } = {}): T[] {
    const since = options.since ?? 0;
    let out: T[] = [];
    for (let i = this.head; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (e.seq > since && (!options.where || options.where(e))) out.push(e);
    }
    if (options.limit !== undefined && out.length > options.limit) out = out.slice(out.length - options.limit);
    return out;
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  /** Entries dropped by the cap since the last clear. */
  get droppedCount(): number {
    return this.dropped;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  clear(): void {
    this.entries = [];
    this.sizes = [];
    this.head = 0;
    this.dropped = 0;
    this.held = 0;
  }
}

function checkCaps(maxEntries: number, maxBytes: number): void {
  if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError("journal capacity must be a positive integer");
  if (maxBytes !== Infinity && (!Number.isInteger(maxBytes) || maxBytes < 1)) throw new RangeError("journal byte budget must be a positive integer");
}

/** One internal transition, stamped with virtual time and the store index it happened at. */
export interface EmulatorEvent extends Sequenced {
  /** Virtual instant, ms since epoch. */
  at: number;
  index: number;
  /** e.g. `timer.fired`, `clock.advanced`, `state.reset`, `session.invalidated`. */
  type: string;
  service?: string;
  subject?: string;
  detail?: unknown;
}

export interface RecordedRequest extends Sequenced {
  /** Virtual instant the request arrived at. */
  at: number;
  service: string;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** The body as text (its first JOURNAL_BODY_BYTES bytes when longer); null without one, or when only its digest is kept. */
  body: string | null;
  bodyTruncated: boolean;
  /** The body's length in bytes (when it had one). */
  bodyBytes?: number;
  /** `sha256:<hex>` of a rejected request's body (answered 4xx or 5xx), kept instead of the body. */
  bodyDigest?: string;
  status: number;
  /** Store index after the request. */
  index: number;
}
