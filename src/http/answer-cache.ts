/**
 * Encoded answers of reads, kept while nothing they depend on has moved.
 *
 * A read's answer is a function of its request (path, query and the few
 * headers the router looks at, which the caller folds into the key), the
 * stored state and the virtual time. The cache is stamped with the store's
 * version (which every commit and every restore moves) and the clock's
 * instant, and forgets everything the moment either differs. So a CI loop
 * polling the same list, or ten thousand parked queries woken by one write,
 * encode the answer once.
 *
 * Only what a route answers as data is kept (never an error, a stream or a
 * hand-built response), and only while the entries stay within a byte budget.
 *
 * So anything else a read's answer comes to depend on (a fault, a setting)
 * must live in the store, as the services' settings rows do, or join the
 * stamp; and a header a route starts reading must join its router's key.
 * test/robustness/fuzz-answer-cache.test.ts checks answers against an
 * emulator restored from the same state.
 */

export interface CachedRead<M> {
  /** The encoded JSON body, as bytes: sending a string would encode it to UTF-8 on every write. */
  readonly body: Uint8Array;
  /** What else the router sends from the answer (index, next page token…). */
  readonly meta: M;
}

export interface AnswerCacheOptions {
  /** Moves whenever the stored state may have changed. */
  readonly version: () => number;
  /** The virtual instant; a moved clock may change answers computed from it. */
  readonly now: () => number;
  /** Total body bytes kept at once (default 32 MiB). */
  readonly budgetBytes?: number;
  /** Entries kept at once (default 1024). */
  readonly maxEntries?: number;
}

export class AnswerCache<M> {
  private readonly entries = new Map<string, CachedRead<M>>();
  private stampVersion = Number.NaN;
  private stampNow = Number.NaN;
  private bytes = 0;
  private readonly budgetBytes: number;
  private readonly maxEntries: number;

  constructor(private readonly options: AnswerCacheOptions) {
    this.budgetBytes = options.budgetBytes ?? 32 * 1024 * 1024;
    this.maxEntries = options.maxEntries ?? 1024;
  }

  get(key: string): CachedRead<M> | undefined {
    this.revalidate();
    return this.entries.get(key);
  }

  /** Keeps `answer` under `key` for as long as the state and the clock stay where they are now. */
  set(key: string, answer: CachedRead<M>): void {
    this.revalidate();
    if (answer.body.byteLength > this.budgetBytes) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= previous.body.byteLength;
    }
    // Oldest first out (a Map iterates in insertion order).
    for (const [oldKey, old] of this.entries) {
      if (this.entries.size < this.maxEntries && this.bytes + answer.body.byteLength <= this.budgetBytes) break;
      this.entries.delete(oldKey);
      this.bytes -= old.body.byteLength;
    }
    this.entries.set(key, answer);
    this.bytes += answer.body.byteLength;
  }

  get size(): number {
    return this.entries.size;
  }

  private revalidate(): void {
    const version = this.options.version();
    const now = this.options.now();
    if (version === this.stampVersion && now === this.stampNow) return;
    this.entries.clear();
    this.bytes = 0;
    this.stampVersion = version;
    this.stampNow = now;
  }
}

/**
 * Values computed for a key at the current state, forgotten as soon as the
 * state or the clock moves (the same stamp as AnswerCache). Parked queries
 * woken by one write all re-run at once, before any of them has encoded its
 * answer: the first computes, the others share its result.
 */
export class StampedMemo<V> {
  private readonly values = new Map<string, V>();
  private stampVersion = Number.NaN;
  private stampNow = Number.NaN;

  constructor(
    private readonly options: Pick<AnswerCacheOptions, "version" | "now">,
    private readonly maxEntries = 1024,
  ) {}

  /** The value for `key` at this state, computing it once. */
  get(key: string, compute: () => V): V {
    const version = this.options.version();
    const now = this.options.now();
    if (version !== this.stampVersion || now !== this.stampNow) {
      this.values.clear();
      this.stampVersion = version;
      this.stampNow = now;
    }
    if (this.values.has(key)) return this.values.get(key)!;
    const value = compute();
    if (this.values.size >= this.maxEntries) this.values.delete(this.values.keys().next().value!);
    this.values.set(key, value);
    return value;
  }
}

/** One key from the parts a read's answer depends on (NUL cannot occur in a URL or a header value). */
export function answerKey(...parts: readonly (string | null | undefined)[]): string {
  return parts.map((part) => part ?? "").join("\u0000");
}

/** The stamp of one service's caches: its store's version and its clock. */
export function stampOf(ctx: { readonly store: { readonly version: number }; readonly clock: { now(): number } }): Pick<AnswerCacheOptions, "version" | "now"> {
  return { version: () => ctx.store.version, now: () => ctx.clock.now() };
}

/** The cache for one service's reads, stamped by its store and clock. */
export function answerCacheOf<M>(ctx: { readonly store: { readonly version: number }; readonly clock: { now(): number } }): AnswerCache<M> {
  return new AnswerCache(stampOf(ctx));
}
