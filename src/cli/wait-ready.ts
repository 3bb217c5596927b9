/**
 * `standin wait-ready`: waits until a standin answers `GET /_standin/ready`
 * with 200, either at a URL or at the one in a ready file (waiting for the
 * file to appear first). For CI scripts that start standin in the background.
 */
import { readReadyFile, readyUrlOf } from "./background-files.js";
import { CliFailure } from "./failure.js";
import { send } from "./send.js";
import { serviceUrl } from "./service-url.js";
import { Deadline, type Timeout } from "./wall-wait.js";

export interface WaitReadyOptions {
  url: string;
  readyFile?: string;
  timeout: Timeout;
  ca?: string;
}

/** Resolves with the URL that answered ready; a CliFailure names what it waited for and what it last saw. */
export async function waitReady(opts: WaitReadyOptions): Promise<string> {
  const deadline = new Deadline(opts.timeout.ms);
  let target: { url: string; ca: string | undefined } | undefined = opts.readyFile ? undefined : { url: opts.url, ca: opts.ca };
  // What the last look that got an outcome saw: a look cut short by the deadline saw nothing worth reporting.
  let lastSeen = "no answer";
  for (;;) {
    if (opts.readyFile) {
      // Read again at every look: a file a killed standin left behind is replaced when the new one is ready.
      const ready = await readReadyFile(opts.readyFile);
      // The ready file's CA (start --tls) serves unless one was given.
      target = ready && { url: readyUrlOf(ready)!, ca: opts.ca ?? ready.ca };
    }
    if (target) {
      const url = readyUrl(target.url);
      const seen = await probe(url, target.ca, deadline);
      if (seen === READY) return target.url;
      if (seen !== CUT_SHORT) lastSeen = seen;
      if (deadline.passed()) throw new CliFailure(`standin wait-ready: ${url} not ready within ${opts.timeout.text} (last: ${lastSeen})`);
    } else if (deadline.passed()) {
      throw new CliFailure(`standin wait-ready: ready file ${opts.readyFile} did not appear within ${opts.timeout.text}`);
    }
    await deadline.pause();
  }
}

function readyUrl(base: string): URL {
  return new URL("/_standin/ready", serviceUrl(base, "standin wait-ready"));
}

/** The least time a look is given, even when the deadline is nearer. */
const LOOK_FLOOR_MS = 1000;

const READY = Symbol("ready");
const CUT_SHORT = Symbol("cut short by the deadline");

/** One look: READY, or what it saw (a status or the connection error) for the message at the end, or CUT_SHORT. */
async function probe(url: URL, ca: string | undefined, deadline: Deadline): Promise<string | typeof READY | typeof CUT_SHORT> {
  // A server that accepts and never answers must not hold the command much past the deadline; the floor
  // gives the last look (and the only one, with --timeout 0s) time to get an answer.
  const signal = AbortSignal.timeout(Math.max(deadline.remaining(), LOOK_FLOOR_MS));
  try {
    const response = await send(url, "GET", {}, undefined, ca, signal);
    return response.status === 200 ? READY : `HTTP ${response.status}`;
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    if (signal.aborted) return CUT_SHORT;
    return ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
  }
}
