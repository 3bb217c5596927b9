/**
 * The correspondences a parity comparison learns between the recorded world
 * and standin's, value by value as the exchanges are compared: one-to-one
 * maps (IDs, secrets, names, ports, hashes: the first pairing of a value
 * holds, both ways) and an order-preserving map (raft indexes: what rises
 * upstream rises in standin, what stays stays).
 *
 * Comparing a list whose order may differ tries pairings that may be wrong,
 * so every map writes its changes into one shared undo log: a trial takes a
 * mark and rolls back to it when it fails.
 */

export class UndoLog {
  private readonly undo: Array<() => void> = [];

  mark(): number {
    return this.undo.length;
  }

  rollback(mark: number): void {
    while (this.undo.length > mark) this.undo.pop()!();
  }

  push(step: () => void): void {
    this.undo.push(step);
  }
}

/** A one-to-one map, learned by first appearance. */
export class Bijection<T> {
  private readonly forward = new Map<T, T>();
  private readonly backward = new Map<T, T>();

  constructor(private readonly log: UndoLog) {}

  /** True when `recorded` ↔ `local` agrees with what was learned (learning the pair when both are new). */
  pair(recorded: T, local: T): boolean {
    const known = this.forward.get(recorded);
    if (known !== undefined) return known === local;
    if (this.backward.has(local)) return false;
    this.forward.set(recorded, local);
    this.backward.set(local, recorded);
    this.log.push(() => {
      this.forward.delete(recorded);
      this.backward.delete(local);
    });
    return true;
  }

  /** Every pair learned, recorded value first. */
  pairs(): IterableIterator<[T, T]> {
    return this.forward.entries();
  }

  /** standin's counterpart of a recorded value, when learned. */
  localOf(recorded: T): T | undefined {
    return this.forward.get(recorded);
  }

  /** True when a value of standin's is paired with a recorded one already. */
  hasLocal(local: T): boolean {
    return this.backward.has(local);
  }
}

/** An order-preserving map of integers (raft indexes), learned pair by pair. */
export class OrderMap {
  /** Recorded values ascending, each with standin's counterpart; the counterparts ascend too. */
  private readonly pairs: Array<{ recorded: number; local: number }> = [];

  constructor(private readonly log: UndoLog) {}

  /**
   * True when `recorded` ↔ `local` keeps the order of every pair learned:
   * equal to equal, above to above, below to below. A pair that keeps it is
   * learned; one that breaks it is not, so one odd value is reported once.
   */
  pair(recorded: number, local: number): boolean {
    const at = this.firstNotBelow(recorded);
    const here = this.pairs[at];
    if (here?.recorded === recorded) return here.local === local;
    const below = this.pairs[at - 1];
    if ((below && below.local >= local) || (here && here.local <= local)) return false;
    const entry = { recorded, local };
    this.pairs.splice(at, 0, entry);
    this.log.push(() => this.pairs.splice(this.pairs.indexOf(entry), 1));
    return true;
  }

  /**
   * standin's counterpart of a recorded index a client sends back
   * (`?index=` of a blocking query): the learned one, else that of the
   * largest learned index below it, else undefined.
   */
  localOf(recorded: number): number | undefined {
    const at = this.firstNotBelow(recorded);
    if (this.pairs[at]?.recorded === recorded) return this.pairs[at]!.local;
    return this.pairs[at - 1]?.local;
  }

  private firstNotBelow(value: number): number {
    let [low, high] = [0, this.pairs.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.pairs[middle]!.recorded < value) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
