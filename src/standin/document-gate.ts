/**
 * While a large document (a fixture, a snapshot) is applied a slice at a
 * time (Store.writeStaged, Store.restoreStaged), readers are answered from
 * the state before it, and everything that would write waits until it has
 * landed: requests that may write (the port apps ask `heldBack`), another
 * document, and the clock (its realtime firing is held). Waiters resume in
 * the order they arrived, after the document's tape entry, so the tape and
 * the journal read as if the document had been applied in one step.
 */
import type { Clock } from "../core/clock.js";

/** The control reads of the whole state (snapshot, hash, the tape with its hash): they wait for a document as writes do. */
const WHOLE_STATE_READS = new Set(["/_standin/snapshot", "/_standin/state/hash", "/_standin/tape"]);

export class DocumentGate {
  /** Settles when the document being applied has landed (or failed); undefined when none is. */
  private applying: Promise<void> | undefined;
  /** Told when a document starts and ends being applied (idle skipping counts it as a running request). */
  private readonly busy: { started(): void; ended(): void }[] = [];

  constructor(private readonly clock: Clock) {}

  /** Counts the time a document is applied as activity (the idle skipper must not move the clock meanwhile). */
  countAs(activity: { started(): void; ended(): void }): void {
    this.busy.push(activity);
  }

  /** Whether a document is being applied. */
  get active(): boolean {
    return this.applying !== undefined;
  }

  /**
   * What a request must wait for before it runs: the document being applied, when the request may
   * write (any method but GET and HEAD) or reads the whole state at once (WHOLE_STATE_READS: the
   * generator and the clock's timers move with the document's slices, the tables only when it
   * lands, so only a reading after it is whole); undefined to run it now.
   */
  heldBack(method: string, url: string): Promise<void> | undefined {
    if (this.applying === undefined) return undefined;
    if (method !== "GET" && method !== "HEAD") return this.applying;
    return WHOLE_STATE_READS.has(new URL(url).pathname) ? this.applying : undefined;
  }

  /** Settles once no document is being applied (in process, a reset waits for one sent before it). */
  async settled(): Promise<void> {
    while (this.applying) await this.applying;
  }

  /** Runs `work` (which applies a document in slices) once no other document is being applied, holding writes back until it ends. */
  async apply<T>(work: () => Promise<T>): Promise<T> {
    await this.settled();
    let landed!: () => void;
    this.applying = new Promise<void>((resolve) => (landed = resolve));
    const release = this.clock.hold();
    for (const activity of this.busy) activity.started();
    try {
      return await work();
    } finally {
      this.applying = undefined;
      release();
      for (const activity of this.busy) activity.ended();
      landed();
    }
  }
}
