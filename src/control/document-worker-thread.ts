/**
 * The document checker's worker thread (started by ./document-worker.ts):
 * a body arrives as its bytes (`begin`, `bytes`…, `end`), is decoded, parsed
 * and checked here. A refused body is answered with its verdict; a passed
 * one with its parsed value, a piece at a time (./document-pieces.ts): the
 * first piece at once, each next one when the main thread asks for it, so
 * that it takes one piece per turn of its event loop rather than all of them
 * queued in one. Every message carries its check's id, so documents in flight
 * together never mix. The thread keeps a body only until its last piece is
 * sent, or the main thread drops it (the client went away).
 */
import { parentPort } from "node:worker_threads";
import { type DocumentCheckName, runDocumentCheck } from "./document-checks.js";
import { documentPieces, type Piece } from "./document-pieces.js";
import type { Precheck } from "../http/precheck.js";

export type WorkerRequest =
  | { readonly kind: "begin"; readonly id: number; readonly name: DocumentCheckName }
  /** The body's next bytes (transferred). */
  | { readonly kind: "bytes"; readonly id: number; readonly bytes: Uint8Array }
  /** The body is complete: check it. */
  | { readonly kind: "end"; readonly id: number }
  /** The main thread took the last piece of `id`: the next one, please. */
  | { readonly kind: "next"; readonly id: number }
  /** The main thread no longer wants `id` (its bytes or its pieces). */
  | { readonly kind: "drop"; readonly id: number }
  /** How many bodies this thread still holds, arriving or being handed over (a test hook). */
  | { readonly kind: "held"; readonly id: number };

export type WorkerAnswer =
  /** A refused body, or one the route is to parse itself (its text). */
  | { readonly kind: "verdict"; readonly id: number; readonly verdict: Exclude<Precheck, { value: unknown }> }
  /** A piece of a passed body's value; `last`: the value is complete with it. */
  | { readonly kind: "piece"; readonly id: number; readonly piece: Piece; readonly last: boolean }
  | { readonly kind: "held"; readonly id: number; readonly count: number };

/** Bodies arriving: the check to run, and their bytes so far. */
const uploads = new Map<number, { name: DocumentCheckName; chunks: Uint8Array[] }>();
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

function check(id: number): void {
  const upload = uploads.get(id);
  if (!upload) return;
  uploads.delete(id);
  // Decoded as Request.text() decodes (a leading BOM dropped, bad bytes replaced).
  const text = new TextDecoder().decode(Buffer.concat(upload.chunks));
  const verdict = runDocumentCheck(upload.name, text);
  if (!verdict.ok) answer({ kind: "verdict", id, verdict });
  // A check that could not conclude leaves the body to the route, as text.
  else if (!("value" in verdict)) answer({ kind: "verdict", id, verdict: { ok: true, text } });
  else handOver(id, verdict.value);
}

function handOver(id: number, value: unknown): void {
  const pieces = documentPieces(value);
  handovers.set(id, { pieces, next: pieces.next() });
  sendNext(id);
}

parentPort?.on("message", (request: WorkerRequest) => {
  switch (request.kind) {
    case "begin":
      uploads.set(request.id, { name: request.name, chunks: [] });
      return;
    case "bytes":
      uploads.get(request.id)?.chunks.push(request.bytes);
      return;
    case "end":
      return check(request.id);
    case "next":
      return sendNext(request.id);
    case "drop":
      uploads.delete(request.id);
      handovers.get(request.id)?.pieces.return();
      handovers.delete(request.id);
      return;
    case "held":
      return answer({ kind: "held", id: request.id, count: uploads.size + handovers.size });
  }
});
