/**
 * Large control documents are parsed and checked off the event loop. A 5.9 MB
 * fixture of 500 000 unknown keys took ~0.7 s to parse and check, and every
 * port waited meanwhile; in a worker thread, the event loop only hands the
 * text over and reads the verdict, and a refused document costs it nothing
 * more. A document that passes comes back parsed and checked, in pieces of
 * about a mebibyte (./document-pieces.ts), one per turn of the event loop:
 * the route is handed the value put back together, and neither parses nor
 * checks the text again (a 50 MB document is most of a second of JSON.parse).
 *
 * One worker, started on the first large document and kept. It holds the
 * process open only while a check is pending (unref'd otherwise), and one
 * that stops (crashed, killed) fails the checks in flight with an error
 * answer, pieces taken so far dropped; the next document starts another. A
 * request whose client goes away drops its pieces on both sides. The single
 * executable, which has no script files, starts it from a bundled source
 * (src/sea-main.ts); where there is neither (the sources, as the test runner
 * loads them) the route checks the body itself, on the main thread.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { BodyPrecheck, Precheck, PrecheckSink } from "../http/precheck.js";
import { DOCUMENT_CHECKS, type DocumentCheckName } from "./document-checks.js";
import { DocumentAssembler, type Piece } from "./document-pieces.js";
import type { WorkerAnswer, WorkerRequest } from "./document-worker-thread.js";

/** Bodies from this many bytes on are checked in the worker; smaller ones are parsed and checked by the route (a few ms). */
export const OFF_LOOP_BODY_BYTES = 64 * 1024;

/** The worker thread's code: its module's URL, or (in the single executable, which has no files) its bundled source. */
export type WorkerScript = URL | { readonly source: string };

interface Pending {
  readonly worker: Worker;
  readonly resolve: (verdict: Precheck) => void;
  readonly reject: (error: Error) => void;
  /** The passed document so far, from its first piece on. */
  assembler?: DocumentAssembler;
  /** Stops listening for the client going away. */
  release(): void;
}

export class DocumentWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly heldQueries = new Map<number, (count: number) => void>();
  private nextId = 1;
  /** Checks the worker thread has answered (for tests: the check did run there). */
  answered = 0;
  /** Sees each piece the main thread takes, before it is put in place (a test hook: how large each step is). */
  pieceObserver: ((piece: Piece) => void) | undefined;

  /** `script`: the worker thread's code (undefined: check on the main thread). */
  constructor(private script: WorkerScript | undefined) {}

  /** Checks with another worker script from now on; the running worker is stopped. */
  useScript(script: WorkerScript | undefined): Promise<void> {
    const stopped = this.stop();
    this.script = script;
    return stopped;
  }

  /** The worker thread's code, if any. */
  get scriptUsed(): WorkerScript | undefined {
    return this.script;
  }

  /** Checks sent to the worker thread and not answered (or not handed over) yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Whether checks run in a worker thread. */
  get offLoop(): boolean {
    return this.script !== undefined;
  }

  /** How many passed documents the worker thread still holds pieces of (a test hook: dropped ones are freed there too). */
  held(): Promise<number> {
    const worker = this.worker;
    if (!worker) return Promise.resolve(0);
    const id = this.nextId++;
    worker.ref();
    return new Promise((resolve) => {
      this.heldQueries.set(id, resolve);
      worker.postMessage({ kind: "held", id } satisfies WorkerRequest);
    });
  }

  /**
   * Starts checking a body as the route `name` would, its bytes to follow
   * (undefined without a worker thread: the route checks it). The verdict
   * hands over the body the route's schema check outputs when it passes.
   * `signal`: the client went away, and the body is dropped on both sides.
   */
  begin(name: DocumentCheckName, signal?: AbortSignal): PrecheckSink | undefined {
    if (!this.script) return undefined;
    const worker = (this.worker ??= this.start(this.script));
    const id = this.nextId++;
    // Held open while a check is pending: an in-process caller awaiting it has nothing else keeping the process alive.
    worker.ref();
    let resolve!: (verdict: Precheck) => void;
    let reject!: (error: Error) => void;
    const verdict = new Promise<Precheck>((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    // A check may fail before its body is complete (the worker stopped): the route hears of it at end().
    verdict.catch(() => {});
    const drop = (error: Error) => {
      if (!this.settle(id)) return;
      worker.postMessage({ kind: "drop", id } satisfies WorkerRequest);
      reject(error);
    };
    const onAbort = () => drop(clientGone());
    signal?.addEventListener("abort", onAbort, { once: true });
    this.pending.set(id, { worker, resolve, reject, release: () => signal?.removeEventListener("abort", onAbort) });
    worker.postMessage({ kind: "begin", id, name } satisfies WorkerRequest);
    if (signal?.aborted) onAbort();
    return {
      write: (bytes) => {
        if (!this.pending.has(id)) return;
        // A copy of its own, moved (not copied again) to the worker.
        const copy = new Uint8Array(bytes.byteLength);
        copy.set(bytes);
        worker.postMessage({ kind: "bytes", id, bytes: copy } satisfies WorkerRequest, [copy.buffer]);
      },
      end: () => {
        if (this.pending.has(id)) worker.postMessage({ kind: "end", id } satisfies WorkerRequest);
        return verdict;
      },
      cancel: () => drop(new Error("the request body did not arrive whole")),
    };
  }

  /** Stops the worker (its checks in flight fail); the next check starts another. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  /** Forgets check `id` (its pieces with it); whether it was still pending. */
  private settle(id: number): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    pending.release();
    if (![...this.pending.values()].some((p) => p.worker === pending.worker) && this.heldQueries.size === 0) pending.worker.unref();
    return pending;
  }

  private receive(worker: Worker, message: WorkerAnswer): void {
    if (message.kind === "held") {
      this.heldQueries.get(message.id)?.(message.count);
      this.heldQueries.delete(message.id);
      if (![...this.pending.values()].some((p) => p.worker === worker) && this.heldQueries.size === 0) worker.unref();
      return;
    }
    // A check dropped meanwhile (its client went away): the worker has dropped it too.
    const pending = this.pending.get(message.id);
    if (!pending) return;
    if (message.kind === "verdict") {
      this.answered++;
      this.settle(message.id);
      pending.resolve(message.verdict);
      return;
    }
    if (!pending.assembler) {
      this.answered++;
      pending.assembler = new DocumentAssembler();
    }
    try {
      this.pieceObserver?.(message.piece);
      pending.assembler.add(message.piece);
    } catch (error) {
      this.settle(message.id);
      worker.postMessage({ kind: "drop", id: message.id } satisfies WorkerRequest);
      pending.reject(new Error(`the document's hand-over failed (${(error as Error).message}); send the document again`));
      return;
    }
    if (!message.last) {
      // One piece per turn: the next is asked for only now, so it arrives in a later turn, after other I/O.
      worker.postMessage({ kind: "next", id: message.id } satisfies WorkerRequest);
      return;
    }
    this.settle(message.id);
    // The pieces go with the assembler: from here on only the route holds the value.
    pending.resolve({ ok: true, value: pending.assembler.value });
  }

  private start(script: WorkerScript): Worker {
    const options = { name: "standin document check" };
    const worker = script instanceof URL ? new Worker(script, options) : new Worker(script.source, { ...options, eval: true });
    worker.unref();
    let failure: Error | undefined;
    worker.on("message", (message: WorkerAnswer) => this.receive(worker, message));
    // An uncaught error in the thread is followed by its exit, which fails its checks.
    worker.on("error", (error) => {
      failure = error;
    });
    worker.on("exit", (code) => {
      if (this.worker === worker) this.worker = undefined;
      const error = new Error(`the document check stopped (worker thread exit code ${code}${failure ? `: ${failure.message}` : ""}); send the document again`);
      for (const [id, pending] of this.pending) {
        if (pending.worker !== worker) continue;
        this.settle(id);
        pending.reject(error);
      }
      for (const [id, answer] of this.heldQueries) {
        this.heldQueries.delete(id);
        answer(0);
      }
    });
    return worker;
  }
}

function clientGone(): Error {
  return new Error("the client closed the request before its document was handed over");
}

/** The worker thread's script when it sits beside this module (built as dist/control/); otherwise undefined. */
function workerScript(): URL | undefined {
  try {
    const script = new URL("./document-worker-thread.js", import.meta.url);
    return script.protocol === "file:" && existsSync(fileURLToPath(script)) ? script : undefined;
  } catch {
    // The single executable has no module URL.
    return undefined;
  }
}

/** The process's document checker, shared by every emulator in it. */
export const documentWorker = new DocumentWorker(workerScript());

/**
 * A route's precheck: bodies of {@link OFF_LOOP_BODY_BYTES} or more are
 * checked by the document checker, which hands the route its body checked
 * with the route's own schema (`schema`, the one the route is declared
 * with); smaller ones (and all, without a worker) are left to the route.
 */
export function offLoopCheck(name: DocumentCheckName): BodyPrecheck {
  return { schema: DOCUMENT_CHECKS[name].body, fromBytes: OFF_LOOP_BODY_BYTES, start: (signal) => documentWorker.begin(name, signal) };
}
