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
import type { Table } from "../core/store.js";

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
  constructor(
    private readonly table: Table,
    private readonly now: () => number,
  ) {}

  view(): LeaderView {
    const row = this.table.get(ROW_ID) as LeaderRow | undefined;
    if (!row || row.known) return KNOWN;
    return { known: false, lastContactMs: Math.max(0, this.now() - (row.lostAt ?? this.now())) };
  }

  get known(): boolean {
    return this.view().known;
  }

  /**
   * Loses or restores the leader (inside a store write); returns the view
   * after it and whether anything changed. Losing it again keeps the instant
   * it was first lost (the last contact does not move).
   */
  set(known: boolean): { changed: boolean; leader: LeaderView } {
    const wasKnown = this.known;
    if (known !== wasKnown) {
      if (known) this.table.delete(ROW_ID);
      else this.table.put(ROW_ID, { known: false, lostAt: this.now() } satisfies LeaderRow);
    }
    return { changed: known !== wasKnown, leader: this.view() };
  }
}
