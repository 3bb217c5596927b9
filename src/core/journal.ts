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

export class CappedLog<T extends Sequenced> {
  private entries: T[] = [];
  private head = 0; // index of the oldest entry in `entries`
  private nextSeq = 1;
  private dropped = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError("journal capacity must be a positive integer");
  }

  append(entry: Omit<T, "seq">): T {
    const full = { seq: this.nextSeq++, ...entry } as T;
    this.entries.push(full);
    if (this.entries.length - this.head > this.capacity) {
      this.head++;
      this.dropped++;
      // Compact occasionally instead of shifting on every append.
      if (this.head > this.capacity) {
        this.entries = this.entries.slice(this.head);
        this.head = 0;
      }
    }
    return full;
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
    this.head = 0;
    this.dropped = 0;
  }
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
  body: string | null;
  bodyTruncated: boolean;
  status: number;
  /** Store index after the request. */
  index: number;
}
