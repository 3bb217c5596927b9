/**
 * Reading standin's in-process answers without wall time: an answer is
 * "there" when it settles within a number of turns of the event loop, and
 * a stream is read as it comes, so what it sent by an instant of the
 * virtual clock is what has arrived once the loop has gone quiet.
 */
import { setImmediate as nextTurn } from "node:timers/promises";

/** Turns of the event loop an in-process answer is given before the replay calls it still waiting (no wall time involved). */
export const ANSWER_TURNS = 50;

/** The promise's value if it settles within ANSWER_TURNS turns, else undefined (a rejection too). */
export async function within<T>(promise: Promise<T>): Promise<T | undefined> {
  let settled = false;
  const value = promise.then(
    (v) => {
      settled = true;
      return v;
    },
    () => {
      settled = true;
      return undefined;
    },
  );
  for (let turn = 0; turn < ANSWER_TURNS && !settled; turn++) await nextTurn();
  return settled ? value : undefined;
}

/** The body's bytes as far as they have come (complete: false for a stream still open). */
export async function readAvailable(response: Response): Promise<{ bytes: Uint8Array; complete: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(), complete: true };
  const chunks: Uint8Array[] = [];
  for (;;) {
    const read = await within(reader.read());
    if (!read) return { bytes: Buffer.concat(chunks), complete: false };
    if (read.done) return { bytes: Buffer.concat(chunks), complete: true };
    chunks.push(read.value);
  }
}

/**
 * A streamed answer read from the moment it is answered (a stream nobody
 * reads fills its budget and is dropped, as a slow client's is), kept until
 * it is cut.
 */
export class StreamCapture {
  private readonly chunks: Uint8Array[] = [];
  private readonly reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private ended = false;

  constructor(response: Response) {
    this.reader = response.body?.getReader();
    if (!this.reader) this.ended = true;
    else void this.pump(this.reader);
  }

  /** What arrived until the loop went quiet, then the stream closed (complete: the stream had ended by itself). */
  async cut(): Promise<{ bytes: Uint8Array; complete: boolean }> {
    let seen = this.chunks.length;
    for (let quiet = 0; quiet < ANSWER_TURNS && !this.ended; quiet++) {
      await nextTurn();
      if (this.chunks.length !== seen) [seen, quiet] = [this.chunks.length, 0];
    }
    const complete = this.ended;
    if (!complete) await this.reader?.cancel().catch(() => undefined);
    return { bytes: Buffer.concat(this.chunks), complete };
  }

  private async pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      for (;;) {
        const read = await reader.read();
        if (read.done) break;
        this.chunks.push(read.value);
      }
    } catch {
      // Cancelled or aborted: what came is kept.
    }
    this.ended = true;
  }
}
