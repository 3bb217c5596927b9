/**
 * `standin wait-ready`: waits until a standin answers `GET /_standin/ready`
 * with 200, either at a URL or at the one in a ready file (waiting for the
 * file to appear first). For CI scripts that start standin in the background.
 */
import { readReadyFile } from "./background-files.js";
import { CliFailure } from "./failure.js";
import { send } from "./send.js";
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
  let lastSeen = "";
  for (;;) {
    if (opts.readyFile) {
      // Read again at every look: a file a killed standin left behind is replaced when the new one is ready.
      const ready = await readReadyFile(opts.readyFile);
      // The ready file's CA (start --tls) serves unless one was given.
      target = ready && { url: ready.scheduler, ca: opts.ca ?? ready.ca };
    }
    if (target) {
      const url = readyUrl(target.url);
      lastSeen = await probe(url, target.ca, deadline);
      if (lastSeen === "") return target.url;
      if (deadline.passed()) throw new CliFailure(`standin wait-ready: ${url} not ready within ${opts.timeout.text} (last: ${lastSeen})`);
    } else if (deadline.passed()) {
      throw new CliFailure(`standin wait-ready: ready file ${opts.readyFile} did not appear within ${opts.timeout.text}`);
    }
    await deadline.pause();
  }
}

function readyUrl(base: string): URL {
  try {
    return new URL("/_standin/ready", base);
  } catch {
    throw new CliFailure(`standin wait-ready: not a URL: ${base}`);
  }
}

/** One look: "" when ready, otherwise what it saw (a status or the connection error), for the message at the end. */
async function probe(url: URL, ca: string | undefined, deadline: Deadline): Promise<string> {
  try {
    // A server that accepts and never answers must not outlast the deadline.
    const response = await send(url, "GET", {}, undefined, ca, AbortSignal.timeout(Math.max(deadline.remaining(), 1)));
    return response.status === 200 ? "" : `HTTP ${response.status}`;
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    return ((error as Error).cause as Error | undefined)?.message ?? (error as Error).message;
  }
}
