/**
 * How many bytes the long-lived streams hand to their transports in one turn
 * of the event loop.
 *
 * One write fanned out to hundreds of event streams queues a frame on each,
 * and every transport that was waiting takes its frame at once: 200 streams
 * and a 100 KB frame were 20 MB of socket writes in the turn that committed
 * the write, while every other request waited. Past TURN_HANDOVER_BYTES in a
 * turn, a stream's next frame waits for the next turn (after the loop has
 * polled for I/O), so other requests are answered between the slices.
 *
 * Only when the bytes leave changes: each stream still sends the same bytes
 * in the same order, and a frame waiting here is still the stream's unread
 * backlog (stream-budget.ts counts it until the transport takes it).
 */

/** Bytes handed to transports per turn before further frames wait for the next turn (one frame always goes). */
export const TURN_HANDOVER_BYTES = 1024 * 1024;

/** Counts of the pacer's work, for tests: turns it opened, and frames it made wait for one. */
export const pacerWork = { turns: 0, deferred: 0 };

export class TurnPacer {
  private spent = 0;
  private waiting: (() => void)[] = [];
  private turnScheduled = false;

  constructor(readonly perTurn: number = TURN_HANDOVER_BYTES) {}

  /**
   * Asks to hand over `bytes` now: undefined when they fit in this turn
   * (they are counted), else a promise for the next turn, after which the
   * caller asks again. Callers are let through in the order they asked.
   */
  admit(bytes: number): Promise<void> | undefined {
    if (this.waiting.length === 0 && (this.spent === 0 || this.spent + bytes <= this.perTurn)) {
      this.spent += bytes;
      this.scheduleTurn();
      return undefined;
    }
    pacerWork.deferred++;
    this.scheduleTurn();
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    // setImmediate runs after the loop's I/O poll: requests that arrived meanwhile are read first.
    setImmediate(() => this.nextTurn());
  }

  private nextTurn(): void {
    this.turnScheduled = false;
    this.spent = 0;
    pacerWork.turns++;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resume of waiting) resume();
  }
}

/** The process's pacer: the event loop is the process's, whichever emulator or budget the streams belong to. */
export const handOver = new TurnPacer();
