/**
 * The document checker's worker thread (started by ./document-worker.ts):
 * each message is a body to check, each answer its verdict. It holds no
 * state, so a body is checked the same here as on the main thread.
 */
import { parentPort } from "node:worker_threads";
import { type DocumentCheckName, runDocumentCheck } from "./document-checks.js";

export interface CheckRequest {
  readonly id: number;
  readonly name: DocumentCheckName;
  readonly text: string;
}

parentPort?.on("message", ({ id, name, text }: CheckRequest) => {
  parentPort!.postMessage({ id, verdict: runDocumentCheck(name, text) });
});
