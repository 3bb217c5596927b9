/**
 * What a recording may hold, counted as the tape counts (control/tape.ts):
 * entries up to TAPE_CAPACITY, bytes of paths, headers and bodies plus
 * ENTRY_OVERHEAD an exchange, up to `--recording-bytes`. Past either, the
 * recording says where it stopped and records nothing more; the proxy goes
 * on forwarding.
 */
import { DEFAULT_TAPE_BYTES, ENTRY_OVERHEAD, TAPE_CAPACITY, type TapeTruncation } from "../../control/tape.js";

export const DEFAULT_RECORDING_BYTES = DEFAULT_TAPE_BYTES;

export class RecordingBudget {
  private held = 0;
  private admitted = 0;
  private stopped: TapeTruncation | undefined;

  constructor(
    readonly limitBytes = DEFAULT_RECORDING_BYTES,
    readonly capacity = TAPE_CAPACITY,
  ) {}

  get truncation(): TapeTruncation | undefined {
    return this.stopped;
  }

  get bytes(): number {
    return this.held;
  }

  /** Exchange `seq` arrived costing `bytes` (its path and headers): true when it is recorded. */
  admit(seq: number, bytes: number): boolean {
    if (this.stopped) return false;
    if (this.admitted >= this.capacity) {
      this.stopped = { seq, reason: "entries", limit: this.capacity };
      return false;
    }
    if (!this.take(seq, ENTRY_OVERHEAD + bytes)) return false;
    this.admitted++;
    return true;
  }

  /**
   * A body of an exchange already recorded: true when its bytes fit. When
   * they do not, the recording stops before `nextSeq` (the first exchange
   * not yet arrived), and the body is kept as its hash.
   */
  take(nextSeq: number, bytes: number): boolean {
    if (this.held + bytes > this.limitBytes) {
      this.stopped ??= { seq: nextSeq, reason: "bytes", limit: this.limitBytes };
      return false;
    }
    this.held += bytes;
    return true;
  }
}
