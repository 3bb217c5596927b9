/**
 * A batch's encoded lines, shared by every subscriber that takes it.
 *
 * A write fanned out to N streams is serialised (JSON, then UTF-8) once per
 * distinct set of events the subscribers' filters let through, not once per
 * subscriber: every stream queues the same bytes. With hundreds of
 * subscribers and a large write, encoding per subscriber was most of what
 * the write cost the event loop. The streams' budgets still count each
 * stream's unread bytes as its own (docs/limits.md), though the memory behind
 * them is shared; nothing downstream writes into a chunk it was handed (the
 * transports only read them), which is what makes sharing them safe.
 *
 * The lines are kept only while something holds them (a subscriber's waiting
 * batch, a replay in progress): the broker's buffer of EVENT_BUFFER_SIZE
 * batches does not also keep their encoded copies, which could be far larger
 * than the rows the batches point at.
 */
import { brokerWork, encodeBatch, type EventBatch, type StreamEvent } from "./stream-event.js";

const utf8 = new TextEncoder();

/** One batch's lines: the whole batch's, and each filtered subset's, encoded on first use. */
export class BatchFrames {
  private whole: Uint8Array | undefined;
  /** Subsets by the positions of their events in the batch (`0,2,2`: a key that matched twice yields its event twice). */
  private readonly subsets = new Map<string, Uint8Array>();
  private positions: Map<StreamEvent, number> | undefined;

  constructor(readonly batch: EventBatch) {}

  /** The line (frame and newline) for `events`, the subset of the batch one subscriber's filter let through. */
  lineFor(events: readonly StreamEvent[]): Uint8Array {
    const all = this.batch.events;
    if (events.length === all.length && events.every((event, i) => event === all[i])) return (this.whole ??= encodeLine(this.batch));
    this.positions ??= new Map(all.map((event, i) => [event, i]));
    const key = events.map((event) => this.positions!.get(event)).join(",");
    let line = this.subsets.get(key);
    if (!line) {
      line = encodeLine({ index: this.batch.index, events });
      this.subsets.set(key, line);
    }
    return line;
  }
}

/**
 * The frames of each batch while anything still holds them. Weak both ways:
 * a batch that left the buffer, or frames nobody waits on, are collected as
 * if this map were not there.
 */
export class SharedFrames {
  private readonly byBatch = new WeakMap<EventBatch, WeakRef<BatchFrames>>();

  of(batch: EventBatch): BatchFrames {
    const held = this.byBatch.get(batch)?.deref();
    if (held) return held;
    const frames = new BatchFrames(batch);
    this.byBatch.set(batch, new WeakRef(frames));
    return frames;
  }
}

/** `{"Events":…,"Index":N}` and its newline, as the bytes a stream sends. */
function encodeLine(batch: EventBatch): Uint8Array {
  const line = utf8.encode(`${encodeBatch(batch)}\n`);
  brokerWork.linesEncoded++;
  brokerWork.bytesEncoded += line.byteLength;
  return line;
}
