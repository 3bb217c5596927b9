/**
 * Large control documents are parsed and checked off the event loop. A 5.9 MB
 * fixture of 500 000 unknown keys took ~0.7 s to parse and check, and every
 * port waited meanwhile; in a worker thread, the event loop only hands the
 * text over and reads the verdict, and a refused document costs it nothing
 * more. A document that passes is then parsed and applied by its route as
 * before (the state lives on the main thread), so what the worker adds for it
 * is a check ahead, not a change in what is applied.
 *
 * One worker, started on the first large document and kept. It holds the
 * process open only while a check is pending (unref'd otherwise), and one
 * that stops (crashed, killed) fails the checks in flight with an error
 * answer; the next document starts another. The single executable, which has
 * no script files, starts it from a bundled source (src/sea-main.ts); where
 * there is neither (the sources, as the test runner loads them) the route
 * checks the body itself, on the main thread.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { Precheck } from "../http/documented-routes.js";
import { type DocumentCheckName, runDocumentCheck } from "./document-checks.js";
import type { CheckRequest } from "./document-worker-thread.js";

/** Bodies from this size on are checked in the worker; smaller ones are parsed and checked by the route (a few ms). */
export const OFF_LOOP_BODY_CHARS = 64 * 1024;

/** The worker thread's code: its module's URL, or (in the single executable, which has no files) its bundled source. */
export type WorkerScript = URL | { readonly source: string };

type Pending = { worker: Worker; resolve: (verdict: Precheck) => void; reject: (error: Error) => void };

export class DocumentWorker {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** Checks the worker thread has answered (for tests: the check did run there). */
  answered = 0;

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

  /** Checks sent to the worker thread and not answered yet. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Whether checks run in a worker thread. */
  get offLoop(): boolean {
    return this.script !== undefined;
  }

  /** The verdict on `text` as the route `name` would give it. */
  check(name: DocumentCheckName, text: string): Promise<Precheck> {
    if (!this.script) return Promise.resolve(runDocumentCheck(name, text));
    const worker = (this.worker ??= this.start(this.script));
    const id = this.nextId++;
    // Held open while a check is pending: an in-process caller awaiting it has nothing else keeping the process alive.
    worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { worker, resolve, reject });
      worker.postMessage({ id, name, text } satisfies CheckRequest);
    });
  }

  /** Stops the worker (its checks in flight fail); the next check starts another. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private start(script: WorkerScript): Worker {
    const options = { name: "standin document check" };
    const worker = script instanceof URL ? new Worker(script, options) : new Worker(script.source, { ...options, eval: true });
    worker.unref();
    let failure: Error | undefined;
    worker.on("message", ({ id, verdict }: { id: number; verdict: Precheck }) => {
      this.answered++;
      this.pending.get(id)?.resolve(verdict);
      this.pending.delete(id);
      if (![...this.pending.values()].some((p) => p.worker === worker)) worker.unref();
    });
    // An uncaught error in the thread is followed by its exit, which fails its checks.
    worker.on("error", (error) => {
      failure = error;
    });
    worker.on("exit", (code) => {
      if (this.worker === worker) this.worker = undefined;
      const error = new Error(`the document check stopped (worker thread exit code ${code}${failure ? `: ${failure.message}` : ""}); send the document again`);
      for (const [id, pending] of this.pending) {
        if (pending.worker !== worker) continue;
        this.pending.delete(id);
        pending.reject(error);
      }
    });
    return worker;
  }
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

/** A route's precheck: large bodies are checked by the document checker; small ones are left to the route. */
export function offLoopCheck(name: DocumentCheckName): (text: string) => Promise<Precheck> | undefined {
  // Without a worker the route checks the body itself, once.
  return (text) => (text.length < OFF_LOOP_BODY_CHARS || !documentWorker.offLoop ? undefined : documentWorker.check(name, text));
}
