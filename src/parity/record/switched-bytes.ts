/**
 * The bytes of a switched protocol (the WebSocket frames of `nomad alloc
 * exec`), one direction of them, as the recording keeps them: the first
 * UPGRADED_BYTES of what passed, as they passed (frames, masks and all; no
 * redaction looks inside), and how many passed in all. What is left out says
 * why (`truncated`): the per-direction limit, or the recording's budget.
 */
import { keptBody } from "../../control/tape.js";
import type { UpgradedBytes } from "../recording.js";

/** At most this much of each direction is kept (the limit of a body kept whole). */
export const UPGRADED_BYTES = 1 << 20;

export class SwitchedBytes {
  private chunks: Buffer[] = [];
  private held = 0;
  private passed = 0;

  add(chunk: Buffer): void {
    this.passed += chunk.length;
    const room = UPGRADED_BYTES - this.held;
    if (room <= 0) return;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    // A copy: the stream may reuse its buffer once the chunk has passed on.
    this.chunks.push(Buffer.from(kept));
    this.held += kept.length;
  }

  /** What the recording keeps of this direction; `take` says whether the budget has room for the kept bytes. */
  recorded(take: (bytes: number) => boolean): UpgradedBytes {
    if (this.held === 0) return { bytes: this.passed };
    if (!take(this.held)) return { bytes: this.passed, truncated: "budget" };
    return {
      bytes: this.passed,
      kept: keptBody(new Uint8Array(Buffer.concat(this.chunks, this.held))),
      ...(this.held < this.passed && { truncated: "limit" as const }),
    };
  }
}
