/**
 * The document checker's worker thread (started by ./document-worker.ts):
 * each `check` is a body to parse and check. A refused body is answered with
 * its verdict; a passed one with its parsed value, a piece at a time
 * (./document-pieces.ts): the first piece at once, each next one when the
 * main thread asks for it, so that it takes one piece per turn of its event
 * loop rather than all of them queued in one. Every message carries its
 * check's id, so documents in flight together never mix. The thread keeps a
 * passed document only until its last piece is sent, or the main thread
 * drops it (the client went away).
 */
import { parentPort } from "node:worker_threads";
import { type DocumentCheckName, runDocumentCheck, type DocumentVerdict } from "./document-checks.js";
import { documentPieces, type Piece } from "./document-pieces.js";

export type WorkerRequest =
  | { readonly kind: "check"; readonly id: number; readonly name: DocumentCheckName; readonly text: string }
  /** The main thread took the last piece of `id`: the next one, please. */
  | { readonly kind: "next"; readonly id: number }
  /** The main thread no longer wants `id`'s pieces. */
  | { readonly kind: "drop"; readonly id: number }
  /** How many passed documents this thread still holds (a test hook). */
  | { readonly kind: "held"; readonly id: number };

export type WorkerAnswer =
  /** A refused body, or one the route is to parse itself (no value). */
  | { readonly kind: "verdict"; readonly id: number; readonly verdict: DocumentVerdict }
  /** A piece of a passed body's value; `last`: the value is complete with it. */
  | { readonly kind: "piece"; readonly id: number; readonly piece: Piece; readonly last: boolean }
  | { readonly kind: "held"; readonly id: number; readonly count: number };

/** Passed documents whose pieces are still to send: each with the piece to send next (looked ahead, to know the last). */
const handovers = new Map<number, { pieces: Generator<Piece, void, undefined>; next: IteratorResult<Piece, void> }>();

function answer(message: WorkerAnswer): void {
  parentPort!.postMessage(message);
}

function sendNext(id: number): void {
  const handover = handovers.get(id);
  if (!handover || handover.next.done) return;
  const piece = handover.next.value;
  handover.next = handover.pieces.next();
  const last = handover.next.done === true;
  if (last) handovers.delete(id);
  answer({ kind: "piece", id, piece, last });
}

parentPort?.on("message", (request: WorkerRequest) => {
  switch (request.kind) {
    case "check": {
      const verdict = runDocumentCheck(request.name, request.text);
      if (!verdict.ok || !("value" in verdict)) return answer({ kind: "verdict", id: request.id, verdict });
      const pieces = documentPieces(verdict.value);
      handovers.set(request.id, { pieces, next: pieces.next() });
      return sendNext(request.id);
    }
    case "next":
      return sendNext(request.id);
    case "drop":
      handovers.get(request.id)?.pieces.return();
      handovers.delete(request.id);
      return;
    case "held":
      return answer({ kind: "held", id: request.id, count: handovers.size });
  }
});
