/**
 * `--state-file`: loaded at start, written behind while running (at most once
 * per interval, when the state changed) and once more at shutdown. Every write
 * goes to a temporary file beside the target and is renamed over it, so a
 * crash (SIGKILL, out of memory) leaves the last whole file, never half of one.
 */
import { existsSync } from "node:fs";
import { readdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { replaceFile } from "./core/atomic-file.js";
import { basename, dirname, join } from "node:path";
import type { Standin } from "./standin/standin.js";
import { FixtureError } from "./scenario-files/load.js";
import { SnapshotError, type StateSnapshot } from "./core/snapshot.js";
import { jsonStream } from "./core/json-stream.js";
import { TABLES as REGISTRY_TABLES } from "./registry/state.js";
import { TABLES as SCHEDULER_TABLES } from "./scheduler/state/model.js";

/** Default for `stateFileIntervalMs` / `--state-file-interval`. */
export const DEFAULT_STATE_FILE_INTERVAL_MS = 1000;

/** What a loaded state file brought back, for the start banner. */
export interface ResumedState {
  /** The store index it was saved at. */
  index: number;
  /** Its virtual now (ms since epoch), before any clock setting given at start. */
  nowMs: number;
  /** Rows of the tables a user recognises, across every region and datacenter. */
  counts: { jobs: number; allocations: number; nodes: number; sessions: number; keys: number };
}

export async function loadStateFile(emulator: Standin, path: string): Promise<ResumedState> {
  let document: unknown;
  try {
    document = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new FixtureError(path, [`cannot read state file: ${(error as Error).message}`], "state file");
  }
  try {
    // Parsed here for this restore alone: the state can keep its objects instead of copying them.
    emulator.restore(document, { adopt: true });
  } catch (error) {
    if (error instanceof SnapshotError) throw new FixtureError(path, error.problems, "state file");
    throw error;
  }
  return resumedState(emulator, document as StateSnapshot);
}

/** Counted from the restored document (valid by now): a region's or datacenter's table is `<scope>/<table>`. */
function resumedState(emulator: Standin, document: StateSnapshot): ResumedState {
  const tables = Object.entries(document.store.tables);
  const rows = (table: string) => tables.filter(([name]) => name === table || name.endsWith(`/${table}`)).reduce((sum, [, t]) => sum + Object.keys(t.rows).length, 0);
  return {
    index: emulator.index,
    nowMs: emulator.clock.now(),
    counts: {
      jobs: rows(SCHEDULER_TABLES.jobs),
      allocations: rows(SCHEDULER_TABLES.allocs),
      nodes: rows(SCHEDULER_TABLES.nodes),
      sessions: rows(REGISTRY_TABLES.sessions),
      keys: rows(REGISTRY_TABLES.kv),
    },
  };
}

/** Whether the state file can be written where it is asked for: its directory exists and takes a new file, and it is not a directory. */
export async function checkStateFileWritable(path: string): Promise<void> {
  const probe = `${path}.tmp-${process.pid}`;
  try {
    if (existsSync(path) && (await stat(path)).isDirectory()) throw Object.assign(new Error("it is a directory"), { code: "EISDIR" });
    await writeFile(probe, "");
    await unlink(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT"
        ? "its directory does not exist"
        : code === "EACCES" || code === "EPERM"
          ? "permission denied"
          : code === "EISDIR"
            ? "it is a directory"
            : (error as Error).message;
    throw new FixtureError(path, [`cannot write state file: ${reason}`], "state file");
  }
}

/** Writes to a temporary file beside the target, then renames (core/atomic-file): a crash mid-write never leaves half a state file. */
export async function writeStateFile(snapshot: StateSnapshot, path: string): Promise<void> {
  // Written in slices (core/json-stream): a large state written whole would hold every port while it is serialised.
  await replaceFile(path, async (file) => {
    const reader = jsonStream(snapshot).getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) await file.write(next.value);
    await file.write("\n");
  });
}

/**
 * Removes the temporary files a killed process left beside the state file
 * (`<file>.tmp-<pid>[-<n>]` of a process that no longer runs). Best effort.
 */
export async function removeStaleTemporaries(path: string): Promise<void> {
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(\d+)(?:-\d+)?$/.exec(name.slice(prefix.length));
    if (!match) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || isRunning(pid)) continue;
    await unlink(join(dirname(path), name)).catch(() => {});
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/**
 * What a state file would differ by, cheaply: the store's version (every
 * commit and restore), the generator, pending timers, the clock's settings,
 * and virtual time where it moves only when asked (manual and auto modes; in
 * realtime it moves with wall time, which alone is no reason to write).
 */
function stateKey(emulator: Standin): string {
  const { nowMs, mode, speed, paused, pendingTimers, nextTimerAt } = emulator.clock.status();
  const time = mode === "realtime" ? null : nowMs;
  return JSON.stringify([emulator.store.version, emulator.ids.state().words, mode, speed, paused, time, pendingTimers, nextTimerAt]);
}

export interface StateFileWriterOptions {
  /** How often to look for a change; also the most often the file is written. 0: never (only `close()` writes). */
  intervalMs: number;
  /** Whether the file holds the current state already (it was just loaded); otherwise the first look writes it. */
  upToDate: boolean;
  /** Where a failed write is reported: once, then again only after a write succeeded. Default: a line on stderr. */
  report?: (message: string) => void;
}

/**
 * Write-behind for the state file: looks every `intervalMs` whether the state
 * changed and, if so, writes it (atomically). Never two writes at once: a look
 * that comes while a write runs is made when it ends. A failed write is
 * reported once and tried again at the next look; the emulator keeps running.
 */
export class StateFileWriter {
  private timer: NodeJS.Timeout | undefined;
  private written: string | undefined;
  private writing: Promise<void> | undefined;
  private missedLook = false;
  private failing = false;
  private done = 0;
  private readonly report: (message: string) => void;

  constructor(
    private readonly emulator: Standin,
    private readonly path: string,
    private readonly options: StateFileWriterOptions,
  ) {
    this.written = options.upToDate ? stateKey(emulator) : undefined;
    this.report = options.report ?? ((message) => process.stderr.write(message + "\n"));
  }

  start(): void {
    if (this.options.intervalMs <= 0 || this.timer) return;
    // A real timer, on purpose: how often the file is written is a wall-time promise (lose at most about a
    // second of acknowledged writes), and it only reads the state, never changes it, so determinism is untouched.
    this.timer = setInterval(() => this.look(), this.options.intervalMs);
    this.timer.unref();
  }

  /** How many writes have succeeded. */
  get writes(): number {
    return this.done;
  }

  /** Looks now (after a write under way, never beside it): writes if the state changed since the last write. */
  async check(): Promise<void> {
    while (this.writing) await this.writing;
    this.look();
    await this.writing;
  }

  /** Stops looking and waits for a write under way. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.missedLook = false;
    await this.writing;
  }

  private look(): void {
    // A document being applied a slice at a time: the state is whole again once it lands (the next look).
    if (this.emulator.documents.active) return;
    if (this.writing) {
      this.missedLook = true;
      return;
    }
    const key = stateKey(this.emulator);
    if (key === this.written) return;
    this.writing = this.write(key).finally(() => {
      this.writing = undefined;
      if (this.missedLook && this.timer) {
        this.missedLook = false;
        this.look();
      }
    });
  }

  private async write(key: string): Promise<void> {
    try {
      // The snapshot and its key are taken in the same turn: nothing commits in between.
      await writeStateFile(this.emulator.snapshot(), this.path);
      this.written = key;
      this.done++;
      if (this.failing) {
        this.failing = false;
        this.report(`standin: state file ${this.path} written again`);
      }
    } catch (error) {
      if (!this.failing) {
        this.failing = true;
        this.report(`standin: cannot write state file ${this.path} (will keep trying): ${(error as Error).message}`);
      }
    }
  }
}
