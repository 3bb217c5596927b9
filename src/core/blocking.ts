/**
 * Parked blocking queries ("long polls").
 *
 * A blocking read says "wake me when one of these tables moves past index N,
 * or when the virtual deadline passes, or when the same span of real time
 * has passed" — the last so that a client long-polling an emulator whose
 * clock nobody moves still returns within its own timeout. Writes wake
 * waiters synchronously at commit; a restore or reset wakes all of them,
 * since any index they were waiting on may now mean something else.
 */
import type { Clock, WallTime } from "./clock.js";
import type { Ids } from "./ids.js";
import { commitIndexFor, type Commit, type Store } from "./store.js";

/**
 * Why a waiter woke. `replaced`: a reset or restore swapped the whole state,
 * so the index a waiter holds belongs to a state that no longer exists.
 */
export type WakeReason = "changed" | "timeout" | "aborted" | "replaced";

export interface WaitOptions {
  /** Tables whose index is watched. */
  tables: readonly string[];
  /** Wake when any watched table's index is greater than this. */
  afterIndex: number;
  /** Virtual instant (ms) at which to give up. */
  virtualDeadline?: number;
  /** Real milliseconds from now after which to give up. */
  realTimeoutMs?: number;
  /** Client went away. */
  signal?: AbortSignal;
}

interface Waiter {
  readonly tables: readonly string[];
  readonly afterIndex: number;
  settle(reason: WakeReason): void;
}

export class Watchers {
  private readonly byTable = new Map<string, Set<Waiter>>();
  private count = 0;
  private readonly parkListeners = new Set<() => void>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly wall: WallTime = clock.wallTime,
  ) {
    store.onCommit((commit) => this.wakeChanged(commit));
    store.onRestore(() => this.wakeAll());
    clock.onRestore(() => this.wakeAll());
  }

  /** Called whenever a waiter parks (idle skipping looks at the clock then). */
  onPark(listener: () => void): () => void {
    this.parkListeners.add(listener);
    return () => this.parkListeners.delete(listener);
  }

  /** Number of parked waiters. */
  get parked(): number {
    return this.count;
  }

  /** The highest index among `tables` now. */
  tablesIndex(tables: readonly string[]): number {
    return Math.max(0, ...tables.map((t) => this.store.tableIndex(t)));
  }

  wait(options: WaitOptions): Promise<WakeReason> {
    if (options.tables.some((t) => this.store.tableIndex(t) > options.afterIndex)) return Promise.resolve("changed");
    if (options.signal?.aborted) return Promise.resolve("aborted");
    if (options.virtualDeadline !== undefined && options.virtualDeadline <= this.clock.now()) return Promise.resolve("timeout");

    return new Promise<WakeReason>((resolve) => {
      let settled = false;
      let cancelVirtual: (() => void) | undefined;
      let realHandle: unknown;
      const onAbort = () => waiter.settle("aborted");
      const waiter: Waiter = {
        tables: options.tables,
        afterIndex: options.afterIndex,
        settle: (reason) => {
          if (settled) return;
          settled = true;
          this.count--;
          for (const table of options.tables) this.byTable.get(table)?.delete(waiter);
          cancelVirtual?.();
          if (realHandle !== undefined) this.wall.clearTimer(realHandle);
          options.signal?.removeEventListener("abort", onAbort);
          resolve(reason);
        },
      };
      this.count++;
      for (const table of options.tables) {
        let set = this.byTable.get(table);
        if (!set) this.byTable.set(table, (set = new Set()));
        set.add(waiter);
      }
      if (options.virtualDeadline !== undefined) {
        cancelVirtual = this.clock.scheduleEphemeral(options.virtualDeadline, () => waiter.settle("timeout"));
      }
      if (options.realTimeoutMs !== undefined) {
        realHandle = this.wall.setTimer(() => waiter.settle("timeout"), Math.max(0, options.realTimeoutMs));
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      for (const listener of this.parkListeners) listener();
    });
  }

  private wakeChanged(commit: Commit): void {
    for (const table of commit.tables) {
      const set = this.byTable.get(table);
      if (!set) continue;
      const index = commitIndexFor(commit, table);
      for (const waiter of [...set]) if (index > waiter.afterIndex) waiter.settle("changed");
    }
  }

  private wakeAll(): void {
    for (const set of [...this.byTable.values()]) for (const waiter of [...set]) waiter.settle("replaced");
  }
}

export interface BlockingLimits {
  /** Used when `wait` is absent or not positive. */
  defaultMs: number;
  /** `wait` is capped here. */
  maxMs: number;
}

/** The specification's figures for both services: default 5 minutes, maximum 10 minutes. */
export const SPEC_BLOCKING_LIMITS: BlockingLimits = { defaultMs: 5 * 60_000, maxMs: 10 * 60_000 };

/**
 * How long a blocking query may park: `wait` (default when absent or <= 0,
 * capped at the maximum) plus a random extra of up to wait/16 drawn from the
 * seeded generator, so wake-ups spread out yet replay identically.
 */
export function blockingTimeoutMs(requestedMs: number | undefined, limits: BlockingLimits, ids: Ids): number {
  let wait = requestedMs === undefined || requestedMs <= 0 ? limits.defaultMs : Math.min(requestedMs, limits.maxMs);
  wait += ids.jitterMs(wait / 16);
  return wait;
}

/** What a blocking query needs of the watchers: all of them, or a scope's view (core/scope). */
export type WatcherView = Pick<Watchers, "wait" | "tablesIndex">;

export interface BlockingQuery<T> {
  readonly watchers: WatcherView;
  readonly clock: Pick<Clock, "now" | "wallTime">;
  /** Tables whose changes may change the result. */
  readonly tables: readonly string[];
  /** The client's `index`; 0 or absent means "answer now". */
  readonly minIndex: number;
  /** Total park time (wait + jitter), virtual and real alike. */
  readonly timeoutMs: number;
  /** The client's abort signal; asked for only if the query parks (making one costs a request an AbortController). */
  readonly signal?: () => AbortSignal;
  /** Runs the query against the current state. */
  run(): { index: number; value: T };
  /**
   * Consul's not-found rule for info: while the result is "not found", keep
   * waiting even if the table moved (the minimum index rises to the current one).
   * Returns true to keep waiting.
   */
  keepWaiting?(result: { index: number; value: T }): boolean;
}

/**
 * Runs a query the blocking way: answer at once when the index already moved
 * past `minIndex`; otherwise park until it does, or the virtual deadline, or
 * the same span of real time passes (whichever first), and answer with the
 * state at that moment.
 *
 * A reset or restore answers at once with the new state and its index, even
 * when that index is lower than `minIndex`: waiting for the new state to
 * climb past an index of the old one would keep a watcher on the old answer
 * for its whole wait. Clients reset their index when it goes backwards, as
 * Consul's blocking-query docs tell them to (consul/api's watch, Prometheus).
 */
export async function runBlockingQuery<T>(query: BlockingQuery<T>): Promise<{ index: number; value: T }> {
  let result = query.run();
  if (query.minIndex <= 0 || result.index > query.minIndex) return result;
  const virtualDeadline = query.clock.now() + query.timeoutMs;
  // One real deadline for the whole wait, however many times the query re-runs.
  const wall = query.clock.wallTime;
  const realDeadline = wall.now() + query.timeoutMs;
  const signal = query.signal?.();
  // Wait for the tables to move past where they are now: the answer's own index (an object's
  // ModifyIndex, say) can stay put while its table moves, and re-arming at that index would
  // wake at once, forever.
  let afterIndex = Math.max(query.minIndex, query.watchers.tablesIndex(query.tables));
  for (;;) {
    const reason = await query.watchers.wait({ tables: query.tables, afterIndex, virtualDeadline, realTimeoutMs: realDeadline - wall.now(), signal });
    result = query.run();
    // The microtask after the wake: a reset has built its whole new state by now (it does so synchronously).
    if (reason !== "changed") return result;
    if (result.index > query.minIndex && !query.keepWaiting?.(result)) return result;
    afterIndex = Math.max(afterIndex, result.index, query.watchers.tablesIndex(query.tables));
  }
}
