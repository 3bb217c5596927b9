/**
 * `standin stop`: sends SIGTERM to the standin named by a pid file (or a
 * ready file) and waits until the process is gone. Where the system shows a
 * process's command line (Linux), a pid that is not a standin's is refused. `start` shuts down
 * gracefully on SIGTERM (ports closed, state file written, its pid and ready
 * files removed), so once the process is gone all of that is done.
 */
import { readFileSync } from "node:fs";
import { readPidFile, readReadyFile } from "./background-files.js";
import { CliFailure } from "./failure.js";
import { Deadline, type Timeout } from "./wall-wait.js";

export interface StopOptions {
  pidFile?: string;
  readyFile?: string;
  timeout: Timeout;
}

/** Resolves with the line to print; a CliFailure when the process could not be signalled or outlived the timeout. */
export async function stopStandin(opts: StopOptions): Promise<string> {
  if ((opts.pidFile === undefined) === (opts.readyFile === undefined)) throw new CliFailure("standin stop: give --pid-file or --ready-file (one of them)");
  const file = (opts.pidFile ?? opts.readyFile)!;
  const pid = opts.pidFile !== undefined ? await readPidFile(opts.pidFile) : (await readReadyFile(file))?.pid;
  if (pid === undefined) return `standin stop: not running (no ${file})`;
  if (!isRunning(pid)) return `standin stop: not running (pid ${pid} from ${file} is gone)`;
  // A stale pid file may name a pid the system has since given to another program: never signal that.
  const command = commandLineOf(pid);
  if (command !== undefined && !command.includes("standin")) {
    throw new CliFailure(`standin stop: pid ${pid} from ${file} is not a standin (it runs ${JSON.stringify(command.slice(0, 80))}); not signalled`);
  }

  try {
    process.kill(pid, "SIGTERM");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return `standin stop: not running (pid ${pid} from ${file} is gone)`;
    throw new CliFailure(`standin stop: cannot signal pid ${pid}: ${(error as Error).message}`);
  }
  const deadline = new Deadline(opts.timeout.ms);
  while (isRunning(pid)) {
    if (deadline.passed()) throw new CliFailure(`standin stop: pid ${pid} still running ${opts.timeout.text} after SIGTERM`);
    await deadline.pause();
  }
  return `standin stopped (pid ${pid})`;
}

/**
 * Signal 0 tells whether the pid exists. A zombie (exited, its parent has not
 * collected it yet, as a shell's background job can be) still exists but has
 * finished: on Linux /proc says so.
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to someone else; the SIGTERM will say so.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    // "pid (comm) S …": the state follows the last ")" (comm may itself hold parentheses).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return false;
  }
}

/**
 * The process's command line (its arguments joined by spaces), where the
 * system tells it (Linux's /proc); undefined elsewhere, and then stop trusts
 * the pid file as before.
 */
function commandLineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    return undefined;
  }
}
