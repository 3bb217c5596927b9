/**
 * The files `start --ready-file` / `--pid-file` leave for scripts that run
 * standin in the background, and the reading side used by `wait-ready` and
 * `stop`. Each is written to a temporary file beside it and renamed, so a
 * reader that finds the file finds it whole.
 */
import { readFileSync, unlinkSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { replaceFile } from "../core/atomic-file.js";
import { CliFailure } from "./failure.js";
import { fileErrorReason } from "./files.js";

/**
 * What the ready file says: everything a script needs to reach and to stop
 * this standin. A recorder's (`standin record`) names only the ports it
 * listens on, one per upstream, and has no control URL.
 */
export interface ReadyFile {
  pid: number;
  scheduler?: string;
  registry?: string;
  echo?: string;
  control?: string;
  /** With `--tls` (a generated certificate): the CA certificate file to trust. */
  ca?: string;
}

/** Writes the files once every port listens, and takes them away again as the process ends. */
export class BackgroundFiles {
  private readonly written = new Map<string, string>();

  constructor(private readonly paths: { readyFile?: string; pidFile?: string }) {}

  /** The pid file first: whoever sees the ready file can count on the pid file being there too. */
  async write(ready: ReadyFile): Promise<void> {
    if (this.paths.pidFile) await this.writeOne("--pid-file", this.paths.pidFile, `${ready.pid}\n`);
    if (this.paths.readyFile) await this.writeOne("--ready-file", this.paths.readyFile, `${JSON.stringify(ready)}\n`);
  }

  /** At the start of shutdown: the emulator is no longer ready, so the ready file goes first. */
  removeReadyFile(): void {
    if (this.paths.readyFile) this.removeOne(this.paths.readyFile);
  }

  /** At process exit (synchronous: it runs in the `exit` event). */
  removeAll(): void {
    for (const path of [...this.written.keys()]) this.removeOne(path);
  }

  private async writeOne(flag: string, path: string, text: string): Promise<void> {
    try {
      await replaceFile(path, text);
    } catch (error) {
      throw new CliFailure(`standin: cannot write ${flag} ${path}: ${fileErrorReason(error)}`);
    }
    this.written.set(path, text);
  }

  /** Only while it still holds what this process wrote: a newer standin may have taken the same path over. */
  private removeOne(path: string): void {
    const text = this.written.get(path);
    if (text === undefined) return;
    this.written.delete(path);
    try {
      if (readFileSync(path, "utf8") === text) unlinkSync(path);
    } catch {
      // Already gone: nothing to clean.
    }
  }
}

/** The ready file's contents, or undefined while it does not exist. */
export async function readReadyFile(path: string): Promise<ReadyFile | undefined> {
  const text = await readIfPresent(path);
  if (text === undefined) return undefined;
  let parsed: Partial<ReadyFile> | undefined;
  try {
    parsed = JSON.parse(text) as Partial<ReadyFile>;
  } catch {
    parsed = undefined;
  }
  if (!parsed || !isPid(parsed.pid) || readyUrlOf(parsed) === undefined) throw new CliFailure(`standin: ${path} is not a standin ready file`);
  return parsed as ReadyFile;
}

/** The URL to ask whether it is ready: the scheduler's, or a recorder's first port. */
export function readyUrlOf(ready: Partial<ReadyFile>): string | undefined {
  return [ready.scheduler, ready.registry, ready.echo].find((url) => typeof url === "string");
}

/** The pid in a pid file, or undefined while it does not exist. */
export async function readPidFile(path: string): Promise<number | undefined> {
  const text = await readIfPresent(path);
  if (text === undefined) return undefined;
  const pid = /^\s*(\d+)\s*$/.exec(text) ? Number(text.trim()) : Number.NaN;
  if (!isPid(pid)) throw new CliFailure(`standin: ${path} does not hold a pid`);
  return pid;
}

/** A real process id: 0 and negative numbers would signal whole process groups. */
function isPid(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliFailure(`standin: cannot read ${path}: ${fileErrorReason(error)}`);
  }
}
