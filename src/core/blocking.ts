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
import { MinHeap } from "./heap.js";
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

/** A parked waiter's real deadline (wall milliseconds), in the one queue of them all. */
interface RealDeadline {
  readonly at: number;
  /** Parking order: waiters with the same deadline time out in the order they parked, as their own timers did. */
  readonly seq: number;
  readonly waiter: Waiter;
  /** Settled another way: skipped when it comes due, dropped in bulk (see dropStaleDeadlines). */
  stale: boolean;
}

/** The waiters parked with one abort signal, on the signal itself (one listener per signal, however many waits). */
const SIGNAL_WAITERS = Symbol("standin.signal-waiters");
type SignalWithWaiters = AbortSignal & { [SIGNAL_WAITERS]?: Set<Waiter> };

export class Watchers {
  private readonly byTable = new Map<string, Set<Waiter>>();
  private count = 0;
  private readonly parkListeners = new Set<() => void>();
  /**
   * Every parked waiter's real deadline, under ONE wall timer armed for the
   * earliest. A timer of its own per waiter cost a setTimeout to park and a
   * clearTimeout to settle: with ten thousand queries woken by one write,
   * the clearTimeouts alone were a tenth of the wake. A settled waiter's
   * deadline is only marked stale here.
   */
  private readonly deadlines = new MinHeap<RealDeadline>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  private nextDeadlineSeq = 0;
  private liveDeadlines = 0;
  private staleDeadlines = 0;
  private armed: { at: number; handle: unknown } | undefined;

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
      let deadline: RealDeadline | undefined;
      const signal = options.signal as SignalWithWaiters | undefined;
      const waiter: Waiter = {
        tables: options.tables,
        afterIndex: options.afterIndex,
        settle: (reason) => {
          if (settled) return;
          settled = true;
          this.count--;
          for (const table of options.tables) this.byTable.get(table)?.delete(waiter);
          cancelVirtual?.();
          if (deadline) this.forgetDeadline(deadline);
          signal?.[SIGNAL_WAITERS]?.delete(waiter);
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
      if (options.realTimeoutMs !== undefined) deadline = this.addDeadline(waiter, Math.max(0, options.realTimeoutMs));
      if (signal) watchSignal(signal, waiter);
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

  // ---- real deadlines --------------------------------------------------------

  private addDeadline(waiter: Waiter, timeoutMs: number): RealDeadline {
    const deadline: RealDeadline = { at: this.wall.now() + timeoutMs, seq: this.nextDeadlineSeq++, waiter, stale: false };
    this.deadlines.push(deadline);
    this.liveDeadlines++;
    if (this.armed === undefined || deadline.at < this.armed.at) this.arm(deadline.at);
    return deadline;
  }

  private forgetDeadline(deadline: RealDeadline): void {
    if (deadline.stale) return;
    deadline.stale = true;
    this.liveDeadlines--;
    this.staleDeadlines++;
    if (this.liveDeadlines === 0) {
      // Nothing left to time out: no timer pending, no queue kept.
      this.disarm();
      this.deadlines.clear();
      this.staleDeadlines = 0;
    } else if (this.staleDeadlines > 1024 && this.staleDeadlines > this.deadlines.size / 2) {
      this.deadlines.retain((d) => !d.stale);
      this.staleDeadlines = 0;
    }
  }

  private arm(at: number): void {
    this.disarm();
    const armed = { at, handle: undefined as unknown };
    armed.handle = this.wall.setTimer(() => this.deadlineReached(armed.at), Math.max(0, at - this.wall.now()));
    this.armed = armed;
  }

  private disarm(): void {
    if (this.armed !== undefined) this.wall.clearTimer(this.armed.handle);
    this.armed = undefined;
  }

  /** The timer armed for `at` fired: every deadline up to `at` has come (the wall clock may read a little less). */
  private deadlineReached(at: number): void {
    this.armed = undefined;
    for (let next = this.deadlines.peek(); next !== undefined && next.at <= at; next = this.deadlines.peek()) {
      this.deadlines.pop();
      if (next.stale) {
        this.staleDeadlines--;
        continue;
      }
      // Out of the queue already: marked so that settling does not count it as a stale entry still in it.
      next.stale = true;
      this.liveDeadlines--;
      next.waiter.settle("timeout");
    }
    const next = this.firstLiveDeadline();
    if (next !== undefined && this.armed === undefined) this.arm(next.at);
  }

  private firstLiveDeadline(): RealDeadline | undefined {
    for (let next = this.deadlines.peek(); next !== undefined; next = this.deadlines.peek()) {
      if (!next.stale) return next;
      this.deadlines.pop();
      this.staleDeadlines--;
    }
    return undefined;
  }
}

/**
 * Settles `waiter` "aborted" when `signal` aborts. One listener per signal,
 * added the first time a waiter parks with it and never removed: a waiter
 * that settles another way only leaves the signal's set. (Removing a
 * listener from an AbortSignal costs several microseconds, a good part of
 * waking a parked query; a request's signal goes with its request.)
 */
function watchSignal(signal: SignalWithWaiters, waiter: Waiter): void {
  let waiters = signal[SIGNAL_WAITERS];
  if (!waiters) {
    const parked = new Set<Waiter>();
    signal[SIGNAL_WAITERS] = waiters = parked;
    signal.addEventListener("abort", () => {
      for (const parkedWaiter of [...parked]) parkedWaiter.settle("aborted");
    });
  }
  waiters.add(waiter);
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
