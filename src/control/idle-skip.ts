/**
 * Idle time skipping (`--clock auto`), as Temporal's test server skips time:
 * when every open request is a parked blocking query (nothing else is
 * running), the clock jumps to the next due timer, which either changes
 * something the queries wait on or ends their wait at its virtual deadline.
 *
 * A lock counter turns skipping off around a section of a test that must
 * observe intermediate states (`POST /_standin/clock/lock` … `/unlock`).
 * Checks are deferred to the next turn of the event loop, so a request that
 * is about to park, or a client about to send the next request, is seen
 * first; the wall clock is never read.
 */
import type { Watchers } from "../core/blocking.js";
import type { Clock } from "../core/clock.js";
import { ControlError } from "./errors.js";

export class IdleSkipper {
  private inFlight = 0;
  private locks = 0;
  private scheduled = false;
  private skips = 0;

  constructor(
    private readonly enabled: boolean,
    private readonly clock: Clock,
    private readonly watchers: Watchers,
    private readonly record: (detail: { from: number; to: number; fired: number }) => void,
    private readonly onError: (error: unknown) => void,
  ) {
    watchers.onPark(() => this.poke());
  }

  /** The port apps report every request: skipping waits while any is running (not parked). */
  readonly activity = {
    started: () => {
      this.inFlight++;
    },
    ended: () => {
      this.inFlight--;
      this.poke();
    },
  };

  status(): { locks: number; skips: number } {
    return { locks: this.locks, skips: this.skips };
  }

  lock(): number {
    return ++this.locks;
  }

  unlock(): number {
    if (this.locks === 0) throw new ControlError(409, "the clock is not locked");
    this.locks--;
    this.poke();
    return this.locks;
  }

  /** Forgets locks (reset: a new test starts unlocked). */
  clearLocks(): void {
    this.locks = 0;
  }

  /** Asks for a check on the next turn of the event loop (once, however often poked). */
  poke(): void {
    if (!this.enabled || this.scheduled || this.clock.currentMode !== "auto") return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      try {
        this.skipIfIdle();
      } catch (error) {
        this.onError(error);
      }
    });
  }

  private skipIfIdle(): void {
    if (this.clock.currentMode !== "auto" || this.locks > 0) return;
    const parked = this.watchers.parked;
    if (parked === 0 || this.inFlight > parked) return;
    const at = this.clock.nextDueAt();
    if (at === null) return;
    const from = this.clock.now();
    const fired = this.clock.advanceTo(Math.max(at, from));
    this.skips++;
    this.record({ from, to: this.clock.now(), fired: fired.length });
    // Queries the jump did not end are still parked: look again.
    this.poke();
  }
}
