/**
 * Writes a service has answered for but does later, in slices, one slice a
 * turn of the event loop (Nomad's forced GC: the request is answered, then
 * its core scheduler reaps in batches). Each slice is a write of its own, so
 * a large piece of work never holds every port at once.
 *
 * What keeps it deterministic: nothing else may see the state between
 * slices in a way that depends on how many have run. The store settles
 * (runs every remaining slice at once) before any other write and before a
 * snapshot, and a service settles before serving a request that reads what
 * the slices change; a restore forgets them (the state they were planned
 * on is gone). So the same requests give the same state and indexes
 * whether the slices ran on their turns or were settled, and a replayed
 * tape sees what the recording saw. Requests that read none of it (another
 * service's reads, the clock) are served between slices.
 */

/** One slice of deferred work; true when the work is done (nothing left to slice). */
export type DeferredStep = () => boolean;

export class DeferredWrites {
  private readonly queue: DeferredStep[] = [];
  /** Told when the queue is empty again (`whenDone`). */
  private waiters: Array<() => void> = [];
  private scheduled = false;
  private running = false;
  /** Slices run so far (tests count them). */
  private slices = 0;

  constructor(
    /** Runs `fn` on a later turn of the event loop. */
    private readonly nextTurn: (fn: () => void) => void = (fn) => setImmediate(fn),
  ) {}

  /** Adds work; its first slice runs on a later turn. */
  add(step: DeferredStep): void {
    this.queue.push(step);
    this.schedule();
  }

  /** Whether work is waiting (and a settle would run some). */
  get pending(): boolean {
    return this.queue.length > 0;
  }

  /** Whether a slice is running now (its own writes must not settle again). */
  get busy(): boolean {
    return this.running;
  }

  get slicesRun(): number {
    return this.slices;
  }

  /**
   * A promise of the moment nothing is left, while slices go on running on
   * their turns (other ports are served between them); undefined when
   * nothing is waiting. Those who wait are let go in the order they came.
   */
  whenDone(): Promise<void> | undefined {
    if (this.queue.length === 0) return undefined;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Runs every remaining slice now, in order. */
  settle(): void {
    if (this.running) return;
    while (this.queue.length > 0) this.runOne();
    this.release();
  }

  /** Forgets the work (a restore replaced the state it was planned on). */
  clear(): void {
    this.queue.length = 0;
    this.release();
  }

  private release(): void {
    if (this.queue.length > 0 || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    this.nextTurn(() => {
      this.scheduled = false;
      if (this.running || this.queue.length === 0) return;
      try {
        this.runOne();
      } catch {
        // No request is at hand on a turn of its own: the failed work is dropped (runOne) and the rest goes on.
      }
      this.release();
      this.schedule();
    });
  }

  private runOne(): void {
    const step = this.queue[0]!;
    this.running = true;
    let done: boolean;
    try {
      done = step();
    } catch (error) {
      // A failing slice must not stall every later write: the work is dropped, the failure reported to the caller at hand.
      this.queue.shift();
      throw error;
    } finally {
      this.running = false;
      this.slices++;
    }
    if (done) this.queue.shift();
  }
}
