/**
 * What the scheduler's long-lived streams (`GET /v1/event/stream`, followed
 * `/v1/client/fs/logs` and `/v1/client/fs/stream`) may hold for clients that
 * do not read them.
 *
 * A stream's unread frames wait in its own queue and are handed to the
 * transport one at a time, when it asks for them (a pull stream with no
 * read-ahead), so the queue is exactly what the client has not taken and
 * the budget can count it as it grows and shrinks, with no scan.
 *
 * Two bounds: each stream may hold STREAM_BACKLOG_BYTES unread; all the
 * streams of a budget together EVENT_STREAMS_BUDGET_BYTES. A stream past its
 * own bound, or the stream holding the most when the total is past the
 * budget, overflows: its owner drops it (the event stream ends it with
 * Nomad's "event dropped from buffer", what a subscriber too slow for the
 * broker's buffer gets), its unread frames are discarded and their bytes
 * released at once.
 */

/** Bytes one stream may hold for a client that does not read them. */
export const STREAM_BACKLOG_BYTES = 8 * 1024 * 1024;
/** Bytes all the event streams of a scheduler may hold unread, together (and its followed file streams, apart). */
export const EVENT_STREAMS_BUDGET_BYTES = 64 * 1024 * 1024;

export class StreamBudget {
  private used = 0;
  private readonly streams = new Set<BacklogStream>();

  constructor(
    readonly perStream: number = STREAM_BACKLOG_BYTES,
    readonly total: number = EVENT_STREAMS_BUDGET_BYTES,
  ) {}

  /** Unread bytes held by every open stream of this budget. */
  get unreadBytes(): number {
    return this.used;
  }

  /** A new stream charged to this budget; `onOverflow` is called (once) when it must be dropped. */
  open(onOverflow: () => void): BacklogStream {
    const stream = new BacklogStream(this, onOverflow);
    this.streams.add(stream);
    return stream;
  }

  /** @internal */ charge(stream: BacklogStream, bytes: number): void {
    this.used += bytes;
    if (stream.unreadBytes > this.perStream) stream.overflow();
    // Over the total, the stream holding the most goes first: it is the one furthest behind.
    while (this.used > this.total) {
      let largest: BacklogStream | undefined;
      for (const s of this.streams) if (!s.overflowed && s.unreadBytes > (largest?.unreadBytes ?? 0)) largest = s;
      if (!largest) break;
      largest.overflow();
    }
  }

  /** @internal */ release(bytes: number): void {
    this.used -= bytes;
  }

  /** @internal */ forget(stream: BacklogStream): void {
    this.streams.delete(stream);
  }
}

/** One stream's body and its queue of frames the client has not taken yet. */
export class BacklogStream {
  readonly body: ReadableStream<Uint8Array>;
  private readonly encoder = new TextEncoder();
  private queue: Uint8Array[] = [];
  private head = 0;
  private bytes = 0;
  private ending = false;
  private finished = false;
  /** Set once the budget has asked for this stream to be dropped. */
  overflowed = false;
  private wake: (() => void) | undefined;
  private cancelled: () => void = () => {};
  private drained: () => void = () => {};

  constructor(
    private readonly budget: StreamBudget,
    private readonly onOverflow: () => void,
  ) {
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.pull(controller),
        cancel: () => {
          this.finish();
          this.cancelled();
        },
      },
      // No read-ahead: a frame leaves the queue only when the transport reads it.
      { highWaterMark: 0 },
    );
  }

  /** Bytes queued that the client has not taken. */
  get unreadBytes(): number {
    return this.bytes;
  }

  /** Whether frames can still be written. */
  get open(): boolean {
    return !this.ending && !this.finished;
  }

  /** Called when the client cancels the body (it went away). */
  onCancel(handler: () => void): void {
    this.cancelled = handler;
  }

  /** Called each time the client has read everything queued. */
  onDrain(handler: () => void): void {
    this.drained = handler;
  }

  /** Queues a frame; may overflow the stream (or another one) on the budget. */
  write(frame: string | Uint8Array): void {
    if (!this.open) return;
    const chunk = typeof frame === "string" ? this.encoder.encode(frame) : frame;
    this.queue.push(chunk);
    this.bytes += chunk.byteLength;
    this.wakeReader();
    this.budget.charge(this, chunk.byteLength);
  }

  /** Ends the stream once the client has read what is queued (still charged, and droppable, until then). */
  end(): void {
    if (!this.open) return;
    this.ending = true;
    this.wakeReader();
  }

  /** Discards what the client has not read, queues `lastWords` (no newline, as Nomad appends its error) and ends. */
  drop(lastWords: string): void {
    if (!this.open) return;
    this.discard();
    this.write(lastWords);
    this.end();
  }

  /** @internal Called by the budget: the owner decides how the stream ends (once). */
  overflow(): void {
    if (this.overflowed || this.finished) return;
    this.overflowed = true;
    if (this.ending) {
      // Already ending (a reset, a revoked token): what it still holds goes, the end stays.
      this.discard();
      return;
    }
    this.onOverflow();
    // An owner that did nothing still frees the budget.
    if (this.open) this.drop("");
  }

  private discard(): void {
    this.budget.release(this.bytes);
    this.queue = [];
    this.head = 0;
    this.bytes = 0;
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.discard();
    this.budget.forget(this);
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      if (this.finished) return;
      if (this.head < this.queue.length) {
        const chunk = this.queue[this.head]!;
        this.queue[this.head++] = EMPTY;
        const emptied = this.head === this.queue.length;
        if (emptied) {
          this.queue = [];
          this.head = 0;
        }
        this.bytes -= chunk.byteLength;
        this.budget.release(chunk.byteLength);
        if (emptied && !this.ending) this.drained();
        if (chunk.byteLength > 0) {
          controller.enqueue(chunk);
          return;
        }
        continue;
      }
      if (this.ending) {
        this.finish();
        controller.close();
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

const EMPTY = new Uint8Array(0);
