/**
 * Large JSON documents written in slices. `JSON.stringify` of a 36 MB tape or
 * a 60 MB snapshot holds the event loop for seconds, and every other client
 * of all three ports waits (an HA tool's leader demoted itself over it). Here
 * the document is serialised a part at a time into a stream that the socket
 * pulls from (backpressure: nothing is made faster than the client reads),
 * and the event loop gets a turn between slices.
 *
 * The bytes are exactly `JSON.stringify(value)`'s for plain data (objects,
 * arrays, strings, numbers, booleans, null; undefined members skipped as
 * stringify skips them, values with `toJSON` written by stringify).
 */

/** About this many characters per slice: serialising one takes a few milliseconds. */
const SLICE_CHARS = 256 * 1024;
/**
 * Containers deeper than this are written whole (their parts are small by
 * then): a snapshot's rows sit at depth 5 (`store.tables.<table>.rows.<id>`),
 * each a row of a few kilobytes.
 */
const MAX_SPLIT_DEPTH = 5;

/** A value whose parts are produced while it is written: `items` is walked lazily (each item made only when its turn comes). */
export class LazyArray<T> {
  constructor(
    readonly length: number,
    readonly item: (index: number) => T,
  ) {}
}

/** The pieces of `value`'s JSON text, in order. */
function* pieces(value: unknown, depth: number): Generator<string> {
  if (value instanceof LazyArray) {
    yield "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ",";
      yield* pieces(value.item(i) ?? null, depth + 1);
    }
    yield "]";
    return;
  }
  if (depth >= MAX_SPLIT_DEPTH || value === null || typeof value !== "object" || typeof (value as { toJSON?: unknown }).toJSON === "function") {
    yield JSON.stringify(value) ?? "null";
    return;
  }
  if (Array.isArray(value)) {
    yield "[";
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield ",";
      const item = value[i];
      yield* pieces(item === undefined || typeof item === "function" || typeof item === "symbol" ? null : item, depth + 1);
    }
    yield "]";
    return;
  }
  yield "{";
  let first = true;
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    if (member === undefined || typeof member === "function" || typeof member === "symbol") continue;
    yield `${first ? "" : ","}${JSON.stringify(key)}:`;
    first = false;
    yield* pieces(member, depth + 1);
  }
  yield "}";
}

/** A turn of the event loop (I/O and timers get theirs before the promise settles). */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** `value` as a stream of UTF-8 JSON, a slice per pull, with a turn of the event loop before each slice after the first. */
export function jsonStream(value: unknown): ReadableStream<Uint8Array> {
  const source = pieces(value, 0);
  const encoder = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (started) await nextTurn();
        started = true;
        let slice = "";
        for (let next = source.next(); ; next = source.next()) {
          if (next.done) {
            if (slice) controller.enqueue(encoder.encode(slice));
            controller.close();
            return;
          }
          slice += next.value;
          if (slice.length >= SLICE_CHARS) break;
        }
        controller.enqueue(encoder.encode(slice));
      },
      cancel() {
        source.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** A JSON response streamed in slices (see above). */
export function jsonStreamResponse(value: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(jsonStream(value), { status: init.status ?? 200, headers: { "Content-Type": "application/json", ...init.headers } });
}
