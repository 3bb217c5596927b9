/**
 * Prechecks: a route's large bodies checked elsewhere (the control API's
 * document routes check theirs in a worker thread, src/control/document-worker.ts).
 * The body's bytes go there as they arrive, never decoded or copied whole on
 * the event loop: a 50 MB body decoded into text, or copied to another thread
 * in one message, is a hold of tens to hundreds of milliseconds. Each step
 * here handles at most {@link UPLOAD_SLICE_BYTES}.
 */
import type * as v from "valibot";
import { nextTurn } from "../core/json-stream.js";

/**
 * A precheck's verdict: the error answer (a JSON body) to send instead, or
 * go on with `value`, the body parsed and checked with the route's schema
 * (that check's output), which the route takes as it is; or with `text`,
 * the body's text, which the route parses and checks itself (a check that
 * could not conclude).
 */
export type Precheck = { ok: true; value: unknown } | { ok: true; text: string } | { ok: false; status: 400; body: Record<string, unknown> };

/** Where a body being checked elsewhere goes. */
export interface PrecheckSink {
  /** The body's next bytes (copied: the caller keeps its own). */
  write(bytes: Uint8Array): void;
  /** The body is complete: its verdict (rejected: the check stopped or the client went away; an error answer). */
  end(): Promise<Precheck>;
  /** The body could not be read to its end: forget it. */
  cancel(): void;
}

/** Checks a route's bodies from `fromBytes` on elsewhere, with the route's own body schema (`schema`). */
export interface BodyPrecheck {
  readonly schema: v.GenericSchema<unknown, unknown>;
  readonly fromBytes: number;
  /** Starts checking a body (`signal`: the client went away); undefined: no checker here, the route checks it itself. */
  start(signal: AbortSignal): PrecheckSink | undefined;
}

/** The most of a body one step hands to a precheck (a body sent in process arrives as one chunk). */
export const UPLOAD_SLICE_BYTES = 1024 * 1024;

/**
 * Reads `request`'s body: a small one (or one with no checker) as text for
 * the route, a large one into the precheck as it arrives, for its verdict.
 * A body that fails to arrive (past the control body limit, the client gone)
 * throws as reading it would, its precheck forgotten.
 */
export async function readForPrecheck(
  request: Request,
  precheck: BodyPrecheck,
  /** The route's own body limit, if it has one below the control body limit: past it, `tooLarge` (the rest is not read). */
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ text: string } | { verdict: Promise<Precheck> } | { tooLarge: true }> {
  if (request.body === null) return { text: "" };
  const reader = request.body.getReader();
  const held: Uint8Array[] = [];
  let bytes = 0;
  let total = 0;
  let sink: PrecheckSink | undefined;
  let checkHere = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        sink?.cancel();
        await reader.cancel();
        return { tooLarge: true };
      }
      if (sink) {
        await writeInSlices(sink, value);
        continue;
      }
      held.push(value);
      bytes += value.byteLength;
      if (checkHere || bytes < precheck.fromBytes) continue;
      sink = precheck.start(request.signal);
      if (!sink) checkHere = true;
      else for (const chunk of held.splice(0)) await writeInSlices(sink, chunk);
    }
  } catch (error) {
    sink?.cancel();
    throw error;
  }
  if (sink) return { verdict: sink.end() };
  // Decoded as Request.text() decodes (a leading BOM dropped, bad bytes replaced).
  return { text: new TextDecoder().decode(Buffer.concat(held)) };
}

async function writeInSlices(sink: PrecheckSink, chunk: Uint8Array): Promise<void> {
  if (chunk.byteLength <= UPLOAD_SLICE_BYTES) return sink.write(chunk);
  for (let at = 0; at < chunk.byteLength; at += UPLOAD_SLICE_BYTES) {
    if (at > 0) await nextTurn();
    sink.write(chunk.subarray(at, at + UPLOAD_SLICE_BYTES));
  }
}
