/**
 * Whether a cluster knows its leader: the leader-loss fault both stateful
 * services offer. Kept as a row of the service's config table, so snapshot,
 * restore, reset and the hash cover it, and every answer that depends on it
 * changes with the state's version.
 *
 * While no leader is known, the real products fail writes and default-mode
 * reads with 500 `No cluster leader` and still serve `stale` reads, whose
 * `…-KnownLeader` is then `false` and `…-LastContact` the milliseconds since
 * the server last heard from a leader: here, on the virtual clock, since the
 * leader was lost.
 */
import * as v from "valibot";
import type { TimerHandler } from "../core/clock.js";
import type { ServiceClock } from "../core/context.js";
import type { Table } from "../core/store.js";
import { action, type ActionSpec } from "./actions.js";

export interface LeaderRow {
  readonly [key: string]: unknown;
  readonly known: boolean;
  /** Virtual instant the leader was lost (null while it is known). */
  readonly lostAt: number | null;
}

/** What a read's meta headers say of the leader. */
export interface LeaderView {
  readonly known: boolean;
  /** `…-LastContact`: 0 while the leader is known. */
  readonly lastContactMs: number;
}

export const NO_CLUSTER_LEADER = "No cluster leader";

const ROW_ID = "leader";
const KNOWN: LeaderView = Object.freeze({ known: true, lastContactMs: 0 });

export class Leadership {
  private readonly electedListeners: Array<() => void> = [];

  constructor(
    private readonly table: Table,
    private readonly now: () => number,
    private readonly write: <R>(fn: () => R) => R,
  ) {}

  view(): LeaderView {
    const row = this.table.get(ROW_ID) as LeaderRow | undefined;
    if (!row || row.known) return KNOWN;
    return { known: false, lastContactMs: Math.max(0, this.now() - (row.lostAt ?? this.now())) };
  }

  get known(): boolean {
    return this.view().known;
  }

  /** What a newly elected leader does first (inside the election's write): restart TTLs, take up work set aside. */
  onElected(listener: () => void): void {
    this.electedListeners.push(listener);
  }

  /**
   * Loses or elects the leader inside the open store write; returns the view
   * after it. Losing it again keeps the instant it was first lost (the last
   * contact does not move); electing it when known changes nothing.
   */
  change(known: boolean): LeaderView {
    if (known !== this.known) {
      if (known) {
        this.table.delete(ROW_ID);
        for (const listener of this.electedListeners) listener();
      } else this.table.put(ROW_ID, { known: false, lostAt: this.now() } satisfies LeaderRow);
    }
    return this.view();
  }

  /** The same in a store write of its own (the control API's fault). */
  set(known: boolean): LeaderView {
    return this.write(() => this.change(known));
  }

  /** The fault as a timeline action (`{"do": <name>, "known": false}`). */
  action(summary: string): ActionSpec<never> {
    return action({ summary, args: v.strictObject({ known: v.boolean() }), run: ({ known }) => this.change(known) });
  }
}

/** A timer that came due while no leader was known, kept for the next leader. */
interface DeferredTimer {
  readonly [key: string]: unknown;
  readonly id: number;
  readonly at: number;
  /** The kind as the service registered it (a scope's prefix not included). */
  readonly kind: string;
  readonly subject: string;
  readonly data: unknown;
}

/**
 * A clock whose timers only a leader acts on: a timer that comes due while
 * no leader is known is set aside (in the state, so snapshots keep it) and
 * acted on, in order, when a leader is elected again (`release`). So a
 * cluster's own work — evaluations, deployments, periodic launches — waits
 * out a leader election, as the real servers' does. `release` runs inside
 * a store write, once a leader is known.
 */
export function leaderGatedClock(
  clock: ServiceClock,
  leadership: Leadership,
  deferred: Table<DeferredTimer>,
  write: <R>(fn: () => R) => R,
): { clock: ServiceClock; release(): number } {
  const handlers = new Map<string, TimerHandler>();
  // Keys sort as the timers came due: by the id the clock gave them (zero-padded).
  const keyOf = (id: number) => String(id).padStart(16, "0");
  const gated: ServiceClock = {
    now: () => clock.now(),
    get wallTime() {
      return clock.wallTime;
    },
    schedule: (spec) => clock.schedule(spec),
    cancel: (id) => clock.cancel(id),
    timersFor: (kind, subject) => clock.timersFor(kind, subject),
    scheduleEphemeral: (at, fire) => clock.scheduleEphemeral(at, fire),
    onRestore: (listener) => clock.onRestore(listener),
    // Housekeeping is the leader's work too (Nomad's core scheduler runs on the leader): skipped while none is known.
    every: (name, hook) =>
      clock.every(name, {
        intervalMs: () => hook.intervalMs(),
        dueAt: () => hook.dueAt(),
        run: (at) => {
          if (leadership.known) hook.run(at);
        },
      }),
    cancelFor: (kind, subject) => {
      let count = clock.cancelFor(kind, subject);
      if (deferred.size === 0) return count; // the usual case: a leader is known and nothing waits
      for (const key of [...deferred.ids()]) {
        const row = deferred.get(key)!;
        if (row.kind === kind && row.subject === subject && deferred.delete(key)) count++;
      }
      return count;
    },
    handle: (kind, handler) => {
      handlers.set(kind, handler);
      clock.handle(kind, (timer) => {
        if (leadership.known) return handler(timer);
        write(() => deferred.put(keyOf(timer.id), { id: timer.id, at: timer.at, kind, subject: timer.subject, data: timer.data }));
        return { deferred: NO_CLUSTER_LEADER };
      });
    },
  };
  return {
    clock: gated,
    release() {
      const keys = [...deferred.ids()].sort();
      for (const key of keys) {
        const row = deferred.get(key)!;
        deferred.delete(key);
        handlers.get(row.kind)?.({ id: row.id as number, at: row.at, kind: row.kind, subject: row.subject, data: row.data });
      }
      return keys.length;
    },
  };
}
