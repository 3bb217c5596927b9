/**
 * The virtual clock and its timer queue.
 *
 * Every time-dependent behaviour in standin (session TTLs, deployment
 * progress, blocking-query deadlines, token expiry) is a timer on this clock.
 * In `manual` mode time moves only when told to, so a test can skip an hour in
 * a millisecond and get the same result every run. In `realtime` mode it
 * follows wall time times `speed`, driven by one real timer.
 *
 * Two kinds of timer share one queue:
 * - persistent timers are data ({kind, subject, data}) fired through a handler
 *   registered for their kind, so they can be written into a snapshot and
 *   re-created on restore;
 * - ephemeral timers hold a callback and belong to something outside the
 *   state (a parked blocking request). They are never snapshotted.
 *
 * This is the only module that reads wall time or sets real timers; the
 * global timers are never used for virtual events, so a test that fakes
 * `setTimeout` cannot hang the emulator.
 */
import { MinHeap } from "./heap.js";
import { parseDurationMs } from "./durations.js";
import { formatInstant, parseInstant } from "./instant.js";

/**
 * `manual`: time moves only when asked; `auto`: manual, plus idle skipping
 * (when every open request is a parked blocking query, the emulator jumps to
 * the next due timer); `realtime`: time follows the wall clock × speed.
 */
export type ClockMode = "manual" | "auto" | "realtime";

/** A persistent timer as it lives in the state. */
export interface TimerRecord {
  readonly id: number;
  readonly at: number;
  readonly kind: string;
  readonly subject: string;
  readonly data: unknown;
}

export interface TimerSpec {
  /** Virtual instant (ms since epoch) at which it fires. Instants in the past fire at the next advance. */
  at: number;
  kind: string;
  subject?: string;
  data?: unknown;
}

/** What a fired timer reports: the handler's return value becomes `detail`. */
export interface FiredTimer {
  at: number;
  kind: string;
  subject: string;
  detail: unknown;
}

export type TimerHandler = (timer: TimerRecord) => unknown;

/**
 * Housekeeping the clock runs at fixed instants (every multiple of
 * `intervalMs()` since the epoch) that a move crosses, in time order with
 * the timers, without being a timer: it is not in the state (a pure
 * function of the instant), not in `fired`, `pendingTimers` or
 * `nextTimerAt`, and `next` does not stop at it. A hook says when it next
 * has work (`dueAt`); the instants before that are skipped, so an idle hook
 * costs nothing however far the clock moves.
 */
export interface IntervalHook {
  /** The interval in virtual ms (read at each move: a fixture may change it). */
  intervalMs(): number;
  /** The earliest instant the hook has work at, or null when it has none. */
  dueAt(): number | null;
  /** Does the work due at `at` (the clock reads `at` meanwhile). */
  run(at: number): void;
}

/** What the clock was asked to do, as the tape records it. */
export type ClockOperation = { op: "advance-to"; to: number } | { op: "mode"; mode: ClockMode; speed: number };

export interface ClockSnapshot {
  nowMs: number;
  nextTimerId: number;
  mode: ClockMode;
  speed: number;
  paused: boolean;
  timers: TimerRecord[];
}

/** The wall-time side, injectable so realtime behaviour can be tested without sleeping. */
export interface WallTime {
  now(): number;
  setTimer(fire: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
}

export const systemWallTime: WallTime = {
  now: () => Date.now(),
  setTimer: (fire, delayMs) => {
    const handle = setTimeout(fire, delayMs);
    // The emulator's own servers keep the process alive; a pending virtual timer must not.
    handle.unref?.();
    return handle;
  },
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Reads the wall clock: for `--start-time now`, and for the real times `standin record` writes down (parity/record). */
export function wallNow(): number {
  return systemWallTime.now();
}

export class ClockError extends Error {
  constructor(
    message: string,
    /** `backwards`: advance-to an earlier instant; `loop`: the loop guard tripped; `reentrant`; `mode`; `invalid`. */
    readonly code: "backwards" | "loop" | "reentrant" | "mode" | "invalid",
  ) {
    super(message);
    this.name = "ClockError";
  }
}

export interface ClockOptions {
  startMs: number;
  mode?: ClockMode;
  speed?: number;
  wall?: WallTime;
  /**
   * Most timers one advance may fire that were themselves scheduled during
   * that advance. Timers pending before the advance are bounded already, so
   * only self-rescheduling can exceed this. Default 100 000.
   */
  loopLimit?: number;
  /** Lets a surrounding transaction undo timer changes when it rolls back. */
  undoSink?: () => ((undo: () => void) => void) | undefined;
  /** Called when a timer fired by the real timer (realtime mode) throws: there is no caller to throw to. */
  onBackgroundError?: (error: unknown) => void;
}

interface QueueEntry {
  readonly id: number;
  readonly at: number;
  readonly ephemeral: boolean;
  /** Persistent timers: the record. */
  readonly record?: TimerRecord;
  /** Ephemeral timers: what to call. */
  readonly fire?: () => void;
  cancelled: boolean;
}

/** Same-instant timers fire in insertion order; persistent ones before ephemeral ones (a wait ending at the instant of a change sees the change). */
function fireOrder(a: QueueEntry, b: QueueEntry): boolean {
  if (a.at !== b.at) return a.at < b.at;
  if (a.ephemeral !== b.ephemeral) return !a.ephemeral;
  return a.id < b.id;
}

export class Clock {
  private nowMs: number;
  private mode: ClockMode;
  private speed: number;
  private paused = false;
  /** Open holds (see hold()). */
  private holds = 0;
  private nextTimerId = 1;
  private nextEphemeralId = 1;
  private readonly queue = new MinHeap<QueueEntry>(fireOrder);
  private readonly live = new Map<number, QueueEntry>();
  /** Pending persistent timer ids by kind and subject, so a service can find "the TTL timer of session X" without storing its id. */
  /**
   * Pending persistent timers by kind, then subject: the timer's id, or a set
   * of ids when a subject has several. Nested maps and a bare id for the
   * common single timer, because a state with 100k session TTLs holds 100k of
   * these: a joined key string and a one-element Set each cost ~170 bytes.
   */
  private readonly bySubject = new Map<string, Map<string, number | Set<number>>>();
  private readonly liveEphemeral = new Map<number, QueueEntry>();
  private cancelledInQueue = 0;
  private readonly handlers = new Map<string, TimerHandler>();
  private readonly intervalHooks = new Map<string, IntervalHook>();
  private readonly operationListeners = new Set<(operation: ClockOperation) => void>();
  private readonly restoreListeners = new Set<() => void>();
  private readonly firedListeners = new Set<(fired: FiredTimer) => void>();
  private firing = false;
  private readonly wall: WallTime;
  private readonly loopLimit: number;
  private readonly undoSink: ClockOptions["undoSink"];
  private readonly onBackgroundError: (error: unknown) => void;
  // Realtime anchors: virtual now = anchorVirtual + (wall - anchorWall) * speed.
  private anchorVirtual = 0;
  private anchorWall = 0;
  private realTimer: unknown = undefined;
  private realTimerAt = Infinity;

  constructor(options: ClockOptions) {
    assertInstant(options.startMs);
    this.nowMs = options.startMs;
    this.mode = options.mode ?? "manual";
    this.speed = options.speed ?? 1;
    assertSpeed(this.speed);
    this.wall = options.wall ?? systemWallTime;
    this.loopLimit = options.loopLimit ?? 100_000;
    this.undoSink = options.undoSink;
    this.onBackgroundError =
      options.onBackgroundError ??
      ((error) => {
        throw error;
      });
    this.anchorHere();
    this.armRealTimer();
  }

  // ---- reading -------------------------------------------------------------

  /** The current virtual instant, ms since the Unix epoch. */
  now(): number {
    if (this.mode === "realtime" && !this.paused) {
      const projected = this.anchorVirtual + Math.floor((this.wall.now() - this.anchorWall) * this.speed);
      return Math.max(this.nowMs, projected);
    }
    return this.nowMs;
  }

  /** The wall-time source this clock follows; real deadlines (blocking queries) use it too. */
  /** The mode alone (status() also looks for the next timer). */
  get currentMode(): ClockMode {
    return this.mode;
  }

  get wallTime(): WallTime {
    return this.wall;
  }

  nowText(): string {
    return formatInstant(this.now());
  }

  status(): { nowMs: number; mode: ClockMode; speed: number; paused: boolean; pendingTimers: number; nextTimerAt: number | null } {
    return {
      nowMs: this.now(),
      mode: this.mode,
      speed: this.speed,
      paused: this.paused,
      pendingTimers: this.live.size,
      nextTimerAt: this.nextPersistentAt(),
    };
  }

  /** Pending persistent timers, in firing order. */
  timers(): TimerRecord[] {
    return [...this.live.values()].sort((a, b) => (fireOrder(a, b) ? -1 : 1)).map((e) => e.record!);
  }

  getTimer(id: number): TimerRecord | undefined {
    return this.live.get(id)?.record;
  }

  /** Pending persistent timers of `kind` for `subject`, in firing order. */
  timersFor(kind: string, subject: string): TimerRecord[] {
    const ids = this.bySubject.get(kind)?.get(subject);
    if (ids === undefined) return [];
    const list = typeof ids === "number" ? [ids] : [...ids];
    return list.map((id) => this.live.get(id)!.record!).sort((a, b) => a.at - b.at || a.id - b.id);
  }

  /** Cancels every pending timer of `kind` for `subject`; returns how many. */
  cancelFor(kind: string, subject: string): number {
    let count = 0;
    for (const timer of this.timersFor(kind, subject)) if (this.cancel(timer.id)) count++;
    return count;
  }

  // ---- scheduling ----------------------------------------------------------

  /** Told of every clock move and mode change asked of the clock (not of what timers do inside a move). */
  onOperation(listener: (operation: ClockOperation) => void): () => void {
    this.operationListeners.add(listener);
    return () => this.operationListeners.delete(listener);
  }

  /** Registers the handler that fires persistent timers of `kind`. */
  handle(kind: string, handler: TimerHandler): void {
    if (this.handlers.has(kind)) throw new Error(`a handler for timer kind "${kind}" is already registered`);
    this.handlers.set(kind, handler);
  }

  /** Registers an interval hook under a unique name (see IntervalHook). */
  every(name: string, hook: IntervalHook): void {
    if (this.intervalHooks.has(name)) throw new Error(`an interval hook "${name}" is already registered`);
    this.intervalHooks.set(name, hook);
  }

  /** Schedules a persistent timer; returns its id (stable across snapshot and restore). */
  schedule(spec: TimerSpec): number {
    assertInstant(spec.at);
    if (!this.handlers.has(spec.kind)) throw new Error(`no handler registered for timer kind "${spec.kind}"`);
    const record: TimerRecord = Object.freeze({ id: this.nextTimerId++, at: spec.at, kind: spec.kind, subject: spec.subject ?? "", data: spec.data ?? null });
    this.enqueue(record);
    this.recordUndo(() => {
      this.cancel(record.id);
      this.nextTimerId = Math.min(this.nextTimerId, record.id);
    });
    return record.id;
  }

  /** Schedules `fire` at `at`; not part of the state. Returns a cancel function. */
  scheduleEphemeral(at: number, fire: () => void): () => void {
    assertInstant(at);
    const entry: QueueEntry = { id: this.nextEphemeralId++, at, ephemeral: true, fire, cancelled: false };
    this.liveEphemeral.set(entry.id, entry);
    this.queue.push(entry);
    this.armRealTimer();
    return () => this.cancelEntry(entry, this.liveEphemeral);
  }

  /** Cancels a persistent timer. Returns false when it was not pending. */
  cancel(id: number): boolean {
    const entry = this.live.get(id);
    if (!entry) return false;
    this.cancelEntry(entry, this.live);
    this.recordUndo(() => this.enqueue(entry.record!));
    return true;
  }

  // ---- moving time ---------------------------------------------------------

  /** Moves forward by a Go duration string or a number of milliseconds, firing every timer due on the way. */
  advance(by: string | number): FiredTimer[] {
    const ms = typeof by === "number" ? by : parseDurationMs(by);
    if (!Number.isFinite(ms) || ms < 0) throw new ClockError(`cannot advance by a negative or invalid duration (${String(by)})`, "invalid");
    return this.advanceTo(this.now() + Math.ceil(ms));
  }

  /** Moves to `target` (ms or RFC 3339), firing every timer due up to and including it. */
  advanceTo(target: number | string): FiredTimer[] {
    const to = typeof target === "string" ? parseInstant(target) : target;
    assertInstant(to);
    const now = this.now();
    if (to < now) {
      throw new ClockError(`cannot move the clock backwards from ${formatInstant(now)} to ${formatInstant(to)}`, "backwards");
    }
    // Every move (advance, next, await, idle skips) passes here: the tape records it as one absolute instant.
    if (!this.firing) for (const listener of this.operationListeners) listener({ op: "advance-to", to });
    const fired = this.fireUntil(to);
    this.nowMs = to;
    // Skipping ahead changes how virtual time maps to wall time.
    this.anchorHere();
    this.armRealTimer();
    return fired;
  }

  /** Jumps to the next persistent timer and fires it together with every timer due at the same instant. */
  next(): FiredTimer[] {
    const at = this.nextPersistentAt();
    if (at === null) return [];
    return this.advanceTo(Math.max(at, this.now()));
  }

  /**
   * Realtime mode: fires whatever wall time has made due. A no-op in manual
   * mode or while paused. It settles to the instant it read once (wall time
   * may tick again meanwhile, which is no reason to fail) and keeps the
   * wall-time anchor, so frequent syncs cannot make the clock drift.
   */
  sync(): FiredTimer[] {
    if (this.mode !== "realtime" || this.paused || this.firing || this.holds > 0) return [];
    const target = this.now();
    const fired = this.fireUntil(target);
    if (target > this.nowMs) this.nowMs = target;
    this.armRealTimer();
    return fired;
  }

  setMode(mode: ClockMode, speed: number = this.speed): void {
    assertSpeed(speed);
    for (const listener of this.operationListeners) listener({ op: "mode", mode, speed });
    this.nowMs = this.now();
    this.mode = mode;
    this.speed = speed;
    this.paused = false;
    this.anchorHere();
    this.armRealTimer();
  }

  pause(): void {
    this.requireRealtime("pause");
    this.nowMs = this.now();
    this.paused = true;
    this.armRealTimer();
  }

  resume(): void {
    this.requireRealtime("resume");
    this.paused = false;
    this.anchorHere();
    this.armRealTimer();
  }

  // ---- observers -----------------------------------------------------------

  onFired(listener: (fired: FiredTimer) => void): () => void {
    this.firedListeners.add(listener);
    return () => this.firedListeners.delete(listener);
  }

  /** Called after `restore`: ephemeral timers are gone, their owners must re-evaluate. */
  onRestore(listener: () => void): () => void {
    this.restoreListeners.add(listener);
    return () => this.restoreListeners.delete(listener);
  }

  // ---- snapshot ------------------------------------------------------------

  snapshot(): ClockSnapshot {
    return {
      nowMs: this.now(),
      nextTimerId: this.nextTimerId,
      mode: this.mode,
      speed: this.speed,
      paused: this.paused,
      timers: this.timers().map((t) => ({ ...t })),
    };
  }

  restore(snapshot: ClockSnapshot): void {
    assertInstant(snapshot.nowMs);
    assertSpeed(snapshot.speed);
    for (const t of snapshot.timers) {
      if (!this.handlers.has(t.kind)) throw new Error(`snapshot has a timer of unknown kind "${t.kind}"`);
      assertInstant(t.at);
    }
    this.queue.clear();
    this.live.clear();
    this.bySubject.clear();
    this.liveEphemeral.clear();
    this.cancelledInQueue = 0;
    this.nowMs = snapshot.nowMs;
    this.mode = snapshot.mode;
    this.speed = snapshot.speed;
    this.paused = snapshot.paused;
    this.nextTimerId = snapshot.nextTimerId;
    for (const t of snapshot.timers) {
      this.enqueue(Object.freeze({ id: t.id, at: t.at, kind: t.kind, subject: t.subject, data: t.data }));
      if (t.id >= this.nextTimerId) this.nextTimerId = t.id + 1;
    }
    this.anchorHere();
    this.armRealTimer();
    for (const listener of [...this.restoreListeners]) listener();
  }

  /** Stops the real timer (realtime mode); the clock stays usable. */
  dispose(): void {
    this.disarmRealTimer();
  }

  /**
   * Holds realtime firing back until the returned release is called: sync() fires nothing and no
   * real timer is armed. A document applied in slices holds it, since nothing else may write until
   * the document lands (Store.writeStaged); due timers fire at the next sync after the release.
   */
  hold(): () => void {
    this.holds++;
    this.disarmRealTimer();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds--;
      this.armRealTimer();
    };
  }

  // ---- internals -----------------------------------------------------------

  private fireUntil(target: number): FiredTimer[] {
    if (this.firing) throw new ClockError("the clock cannot be moved from inside a timer handler", "reentrant");
    this.firing = true;
    const fired: FiredTimer[] = [];
    const firstIdOfThisAdvance = this.nextTimerId;
    let selfScheduled = 0;
    // Interval hooks tick at the instants in (start, target]: `tickedThrough` is each one's last tick in this move.
    const tickedThrough = new Map<string, number>();
    const start = this.nowMs;
    try {
      for (;;) {
        let head = this.queue.peek();
        while (head?.cancelled) {
          this.queue.pop();
          this.cancelledInQueue--;
          head = this.queue.peek();
        }
        const headAt = head && head.at <= target ? head.at : Infinity;
        // A tick at the instant of a timer runs after it, so it sees what that instant changed.
        const tick = this.intervalHooks.size === 0 ? undefined : this.nextTick(tickedThrough, start, Math.min(headAt - 1, target));
        if (tick) {
          if (tick.at > this.nowMs) this.nowMs = tick.at;
          tickedThrough.set(tick.name, tick.at);
          tick.hook.run(tick.at);
          continue;
        }
        if (!head || headAt === Infinity) break;
        this.queue.pop();
        if (head.at > this.nowMs) this.nowMs = head.at;
        if (head.ephemeral) {
          this.liveEphemeral.delete(head.id);
          head.fire!();
          continue;
        }
        this.live.delete(head.id);
        const record = head.record!;
        this.forgetSubject(record);
        if (record.id >= firstIdOfThisAdvance && ++selfScheduled > this.loopLimit) {
          throw new ClockError(
            `loop guard: more than ${this.loopLimit} timers scheduled during this advance have fired ` +
              `(last: kind "${record.kind}", subject "${record.subject}" at ${formatInstant(record.at)}); ` +
              `a timer handler probably keeps rescheduling itself. The clock stopped at ${formatInstant(this.nowMs)}.`,
            "loop",
          );
        }
        const handler = this.handlers.get(record.kind)!;
        const event: FiredTimer = { at: this.nowMs, kind: record.kind, subject: record.subject, detail: handler(record) ?? null };
        fired.push(event);
        for (const listener of this.firedListeners) listener(event);
      }
    } finally {
      this.firing = false;
    }
    return fired;
  }

  /** The earliest interval-hook tick at or before `limit`, if any. */
  private nextTick(tickedThrough: Map<string, number>, start: number, limit: number): { name: string; hook: IntervalHook; at: number } | undefined {
    let earliest: { name: string; hook: IntervalHook; at: number } | undefined;
    for (const [name, hook] of this.intervalHooks) {
      const due = hook.dueAt();
      if (due === null) continue;
      const interval = hook.intervalMs();
      if (!(interval > 0)) continue;
      const from = Math.max((tickedThrough.get(name) ?? start) + 1, due);
      const at = Math.ceil(from / interval) * interval;
      if (at <= limit && (earliest === undefined || at < earliest.at)) earliest = { name, hook, at };
    }
    return earliest;
  }

  private enqueue(record: TimerRecord): void {
    const entry: QueueEntry = { id: record.id, at: record.at, ephemeral: false, record, cancelled: false };
    this.live.set(record.id, entry);
    let subjects = this.bySubject.get(record.kind);
    if (!subjects) this.bySubject.set(record.kind, (subjects = new Map()));
    const ids = subjects.get(record.subject);
    if (ids === undefined) subjects.set(record.subject, record.id);
    else if (typeof ids === "number") subjects.set(record.subject, new Set([ids, record.id]));
    else ids.add(record.id);
    this.queue.push(entry);
    this.armRealTimer();
  }

  private cancelEntry(entry: QueueEntry, index: Map<number, QueueEntry>): void {
    if (entry.cancelled || !index.delete(entry.id)) return;
    if (entry.record) this.forgetSubject(entry.record);
    entry.cancelled = true;
    this.cancelledInQueue++;
    // Cancelled entries are dropped lazily when they reach the top; compact
    // when they dominate so mass cancellation cannot bloat the heap.
    if (this.cancelledInQueue > 1024 && this.cancelledInQueue > this.queue.size / 2) {
      this.queue.retain((e) => !e.cancelled);
      this.cancelledInQueue = 0;
    }
  }

  private forgetSubject(record: TimerRecord): void {
    const subjects = this.bySubject.get(record.kind);
    const ids = subjects?.get(record.subject);
    if (ids === undefined) return;
    if (ids === record.id) subjects!.delete(record.subject);
    else if (typeof ids !== "number" && ids.delete(record.id) && ids.size === 0) subjects!.delete(record.subject);
    if (subjects!.size === 0) this.bySubject.delete(record.kind);
  }

  /** The instant of the next pending timer of either kind (where idle skipping jumps), or null. */
  nextDueAt(): number | null {
    let earliest: number | null = null;
    for (const e of this.live.values()) if (earliest === null || e.at < earliest) earliest = e.at;
    for (const e of this.liveEphemeral.values()) if (earliest === null || e.at < earliest) earliest = e.at;
    return earliest;
  }

  private nextPersistentAt(): number | null {
    let earliest: number | null = null;
    const head = this.queue.peek();
    if (head && !head.cancelled && !head.ephemeral) return head.at;
    for (const e of this.live.values()) if (earliest === null || e.at < earliest) earliest = e.at;
    return earliest;
  }

  private recordUndo(undo: () => void): void {
    this.undoSink?.()?.(undo);
  }

  private requireRealtime(action: string): void {
    if (this.mode !== "realtime") throw new ClockError(`cannot ${action}: the clock is in ${this.mode} mode`, "mode");
  }

  /**
   * Re-anchors virtual time to wall time. The mapping changes here (advance,
   * restore, mode, speed, resume), so an armed real timer's delay is stale:
   * drop it; the caller re-arms.
   */
  private anchorHere(): void {
    this.anchorVirtual = this.nowMs;
    this.anchorWall = this.mode === "realtime" ? this.wall.now() : 0;
    this.disarmRealTimer();
  }

  /** Keeps exactly one real timer armed for the earliest pending virtual timer (realtime mode only). */
  private armRealTimer(): void {
    if (this.mode !== "realtime" || this.paused || this.firing || this.holds > 0) {
      this.disarmRealTimer();
      return;
    }
    let head = this.queue.peek();
    while (head?.cancelled) {
      this.queue.pop();
      this.cancelledInQueue--;
      head = this.queue.peek();
    }
    if (!head) {
      this.disarmRealTimer();
      return;
    }
    if (this.realTimer !== undefined && this.realTimerAt <= head.at) return;
    this.disarmRealTimer();
    const delay = Math.min(2_147_483_647, Math.max(0, Math.ceil((head.at - this.now()) / this.speed)));
    this.realTimerAt = head.at;
    this.realTimer = this.wall.setTimer(() => {
      this.realTimer = undefined;
      this.realTimerAt = Infinity;
      try {
        this.sync();
      } catch (error) {
        this.onBackgroundError(error);
      }
      this.armRealTimer();
    }, delay);
  }

  private disarmRealTimer(): void {
    if (this.realTimer !== undefined) this.wall.clearTimer(this.realTimer);
    this.realTimer = undefined;
    this.realTimerAt = Infinity;
  }
}

function assertInstant(ms: number): void {
  if (!Number.isSafeInteger(ms)) throw new ClockError(`virtual instants are integer milliseconds, got ${ms}`, "invalid");
}

function assertSpeed(speed: number): void {
  if (!Number.isFinite(speed) || speed <= 0) throw new ClockError(`speed must be a positive number, got ${speed}`, "invalid");
}
