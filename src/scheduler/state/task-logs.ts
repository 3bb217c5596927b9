/**
 * What tasks write to stdout and stderr: the emulator runs no processes, so
 * a task's output is scripted (fixture `scheduler.taskOutput`, the
 * `task-output` action) as lines at virtual instants relative to the task's
 * start, plus lines appended to a running task now (the `task-log` action).
 *
 * A log file's content is a pure function of the state and the clock: the
 * scripted lines whose instant has come (and which the task lived to write:
 * none after it finished) and the appended lines, in time order (at one
 * instant, the script's lines first). So it needs no timers, lives in store
 * tables (snapshots, the state hash), and only grows while the script stays
 * the same.
 *
 * A task nobody scripted writes one line on start to stdout
 * (DEFAULT_START_LINE) and nothing to stderr.
 *
 * Logs rotate as Nomad's logmon rotates them (client/lib/fifo + logging's
 * FileRotator): each stream is written to `<task>.<type>.<n>` until the file
 * holds the task's `logs.max_file_size` MiB (a line that would cross the
 * boundary starts the next file, unless it is longer than the scan limit),
 * and only the newest `logs.max_files` files are kept. Lines appended by
 * the `task-log` action are stored only while they can still be in a kept
 * file: past `max_files × max_file_size` the oldest go, so a task that
 * writes for days holds what Nomad's disk would.
 */
import type { ServiceContext } from "../../core/context.js";
import { nanosToMs, parseGoDuration } from "../../core/durations.js";
import type { TaskOutputEntry } from "../../scenario-files/schema.js";
import type { Table } from "../../core/store.js";
import { versionKey, type AllocRow, type Json, type SchedulerState } from "./model.js";
import type { TaskStateRow, TaskStatesRow } from "./task-states.js";

export const TASK_OUTPUT_TABLE = "scheduler.task-output";
export const TASK_LOG_LINES_TABLE = "scheduler.task-log-lines";

export const LOG_TYPES = ["stdout", "stderr"] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** What an unscripted task writes to stdout when it starts. */
export const DEFAULT_START_LINE = (task: string) => `standin: task "${task}" started\n`;

export interface ScriptedLine {
  /** Virtual ms after the task's start. */
  readonly afterMs: number;
  readonly text: string;
}

/** A task's script; Group "" applies to the task in every group of the job. */
export type TaskOutputRow = {
  readonly Namespace: string;
  readonly JobID: string;
  readonly Group: string;
  readonly Task: string;
  readonly stdout: readonly ScriptedLine[];
  readonly stderr: readonly ScriptedLine[];
};

interface AppendedLine {
  /** Virtual ms. */
  readonly at: number;
  readonly text: string;
}

/** Lines appended to one allocation's task (the `task-log` action). */
export type AppendedLinesRow = {
  readonly AllocID: string;
  readonly Task: string;
  readonly stdout: readonly AppendedLine[];
  readonly stderr: readonly AppendedLine[];
  /** Bytes of appended lines dropped because they were past every kept file (absent: none). */
  readonly droppedStdout?: number;
  readonly droppedStderr?: number;
};

/** A task's `logs` block (structs.LogConfig), as the rotation reads it. */
export interface LogLimits {
  readonly maxFiles: number;
  /** Bytes (MaxFileSizeMB × 1 MiB). */
  readonly maxFileSize: number;
}

/** structs.DefaultLogConfig: 10 files of 10 MiB. */
export const DEFAULT_LOG_LIMITS: LogLimits = { maxFiles: 10, maxFileSize: 10 * 1024 * 1024 };
/** logging.lineScanLimit: how far before a file's end the rotator looks for a newline to keep a line whole. */
const LINE_SCAN_LIMIT = 32 * 1024;
/** What one `task-log` action may append (its lines' bytes together). */
export const TASK_LOG_ACTION_MAX_BYTES = 1024 * 1024;

/** The `logs` block of the task as the allocation's job version has it (Nomad's defaults when it has none). */
export function logLimitsIn(state: SchedulerState): (alloc: AllocRow, task: string) => LogLimits {
  return (alloc, task) => {
    const job = state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? state.job(alloc.Namespace, alloc.JobID);
    const group = (job?.TaskGroups as Json[] | undefined)?.find((g) => g.Name === alloc.TaskGroup);
    const config = ((group?.Tasks as Json[] | undefined)?.find((t) => t.Name === task)?.LogConfig ?? null) as Json | null;
    const files = Number(config?.MaxFiles);
    const sizeMB = Number(config?.MaxFileSizeMB);
    return {
      maxFiles: Number.isInteger(files) && files >= 1 ? files : DEFAULT_LOG_LIMITS.maxFiles,
      maxFileSize: Number.isInteger(sizeMB) && sizeMB >= 1 ? sizeMB * 1024 * 1024 : DEFAULT_LOG_LIMITS.maxFileSize,
    };
  };
}

/** One rotated file: `<task>.<type>.<index>`. */
export interface RotatedFile {
  readonly index: number;
  readonly content: Buffer;
  /** Virtual ms of its last write. */
  readonly modTime: number;
}

/** A log stream as it stands at an instant. */
export interface LogFile {
  /** The kept files, oldest first (at least one: index 0 before anything is written). */
  readonly files: readonly RotatedFile[];
  /** The kept files' bytes end to end (what the logs endpoint reads). */
  readonly content: Buffer;
  /** Virtual ms of the last write (the task's start when nothing was written). */
  readonly modTime: number;
  /** The next scripted instant after now while the task runs (undefined: none). */
  readonly nextAt: number | undefined;
  /** The task is dead: nothing more will be written. */
  readonly finished: boolean;
}

/** A line as given: its text ends with a newline (one is added when missing). */
export function asLine(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`;
}

/** A fixture's (or the `task-output` action's) entry as the row it stores. */
export function scriptRow(entry: TaskOutputEntry): TaskOutputRow {
  const lines = (given: TaskOutputEntry["stdout"]): ScriptedLine[] =>
    (given ?? []).map((line) =>
      typeof line === "string" ? { afterMs: 0, text: asLine(line) } : { afterMs: Math.max(0, nanosToMs(parseGoDuration(line.after))), text: asLine(line.line) },
    );
  return { Namespace: entry.namespace ?? "default", JobID: entry.job, Group: entry.group ?? "", Task: entry.task, stdout: lines(entry.stdout), stderr: lines(entry.stderr) };
}

const scriptKey = (namespace: string, job: string, group: string, task: string) => [namespace, job, group, task].join("\u0000");
const appendedKey = (alloc: string, task: string) => `${alloc}\u0000${task}`;

/** When the task first started (its output is timed from there; a restart does not replay it). */
export function taskOrigin(state: TaskStateRow): number | undefined {
  if (state.StartedAt === null) return undefined;
  let origin = state.StartedAt;
  for (const event of state.Events) if (event.Type === "Started" && event.Time < origin) origin = event.Time;
  return origin;
}

export class TaskLogs {
  private readonly scripts: Table<TaskOutputRow>;
  private readonly appended: Table<AppendedLinesRow>;

  constructor(
    private readonly ctx: ServiceContext,
    /** The task's `logs` block (from the job version the allocation runs). */
    private readonly limitsOf: (alloc: AllocRow, task: string) => LogLimits = () => DEFAULT_LOG_LIMITS,
  ) {
    this.scripts = ctx.store.table<TaskOutputRow>(TASK_OUTPUT_TABLE);
    this.appended = ctx.store.table<AppendedLinesRow>(TASK_LOG_LINES_TABLE);
  }

  /** The tables a log's content depends on, besides the allocations'. */
  get tables(): string[] {
    return [TASK_OUTPUT_TABLE, TASK_LOG_LINES_TABLE];
  }

  /** Sets (replaces) a task's script. Runs inside a write. */
  setScript(row: TaskOutputRow): void {
    this.scripts.put(scriptKey(row.Namespace, row.JobID, row.Group, row.Task), row);
  }

  /** Appends lines to a task's log now. Runs inside a write. */
  append(alloc: AllocRow, task: string, type: LogType, texts: readonly string[]): void {
    const key = appendedKey(alloc.ID, task);
    const current = this.appended.get(key) ?? { AllocID: alloc.ID, Task: task, stdout: [], stderr: [] };
    const at = this.ctx.clock.now();
    const lines = [...current[type], ...texts.map((text) => ({ at, text: asLine(text) }))];
    // Keep only what can still be in a kept file: the newest max_files × max_file_size bytes.
    const limits = this.limitsOf(alloc, task);
    const keep = limits.maxFiles * limits.maxFileSize;
    let bytes = 0;
    let first = lines.length;
    while (first > 0 && bytes + Buffer.byteLength(lines[first - 1]!.text) <= keep) bytes += Buffer.byteLength(lines[--first]!.text);
    const droppedKey = type === "stdout" ? "droppedStdout" : "droppedStderr";
    let dropped = current[droppedKey] ?? 0;
    for (let i = 0; i < first; i++) dropped += Buffer.byteLength(lines[i]!.text);
    this.appended.put(key, { ...current, [type]: first === 0 ? lines : lines.slice(first), ...(dropped > 0 ? { [droppedKey]: dropped } : {}) });
  }

  /** The script for an allocation's task: its group's, else the job's (a dispatched or periodic child takes its parent's). */
  scriptFor(alloc: AllocRow, task: string): TaskOutputRow | undefined {
    const jobs = [alloc.JobID];
    const parent = alloc.JobID.split("/")[0]!;
    if (parent !== alloc.JobID) jobs.push(parent);
    for (const job of jobs) {
      const found = this.scripts.get(scriptKey(alloc.Namespace, job, alloc.TaskGroup, task)) ?? this.scripts.get(scriptKey(alloc.Namespace, job, "", task));
      if (found) return found;
    }
    return undefined;
  }

  /** A started task's log file at the current instant; undefined when the task has not started. */
  file(alloc: AllocRow, task: string, type: LogType): LogFile | undefined {
    const state = (alloc.TaskStates as TaskStatesRow | null | undefined)?.[task];
    if (!state) return undefined;
    const origin = taskOrigin(state);
    if (origin === undefined) return undefined;
    const now = this.ctx.clock.now();
    const finished = state.State === "dead";
    const until = finished && state.FinishedAt !== null ? Math.min(now, state.FinishedAt) : now;
    const script = this.scriptFor(alloc, task);
    const scripted: readonly ScriptedLine[] = script ? script[type] : type === "stdout" ? [{ afterMs: 0, text: DEFAULT_START_LINE(task) }] : [];
    const lines: AppendedLine[] = [];
    let nextAt: number | undefined;
    for (const line of scripted) {
      const at = origin + line.afterMs;
      if (at <= until) lines.push({ at, text: line.text });
      else if (!finished && (nextAt === undefined || at < nextAt)) nextAt = at;
    }
    // Stable: at one instant, the script's lines come before appended ones.
    lines.sort((a, b) => a.at - b.at);
    const row = this.appended.get(appendedKey(alloc.ID, task));
    const merged = mergeByTime(lines, row?.[type] ?? []);
    const dropped = (type === "stdout" ? row?.droppedStdout : row?.droppedStderr) ?? 0;
    const files = rotate(merged, this.limitsOf(alloc, task), dropped, origin);
    const content = files.length === 1 ? files[0]!.content : Buffer.concat(files.map((f) => f.content));
    const modTime = merged.length > 0 ? merged[merged.length - 1]!.at : origin;
    return { files, content, modTime, nextAt, finished };
  }
}

/** Two time-ordered lists as one (at one instant, the first list's lines first). */
function mergeByTime(first: readonly AppendedLine[], second: readonly AppendedLine[]): AppendedLine[] {
  if (second.length === 0) return first as AppendedLine[];
  const out: AppendedLine[] = [];
  let i = 0;
  let j = 0;
  while (i < first.length || j < second.length) {
    if (j >= second.length || (i < first.length && first[i]!.at <= second[j]!.at)) out.push(first[i++]!);
    else out.push(second[j++]!);
  }
  return out;
}

/**
 * FileRotator.Write for each line in turn, then purgeOldFiles: the kept
 * files. `dropped` bytes were written before the first line (lines no kept
 * file holds any more): they advance the rotator as whole files would.
 */
export function rotate(lines: readonly AppendedLine[], limits: LogLimits, dropped: number, origin: number): RotatedFile[] {
  const size = Math.max(1, limits.maxFileSize);
  let index = Math.floor(dropped / size);
  let written = dropped % size;
  const files = new Map<number, { parts: Buffer[]; modTime: number }>();
  const fileAt = (i: number) => {
    let f = files.get(i);
    if (!f) files.set(i, (f = { parts: [], modTime: origin }));
    return f;
  };
  fileAt(index);
  for (const line of lines) {
    const bytes = Buffer.from(line.text, "utf8");
    let n = 0;
    while (n < bytes.length) {
      if (written >= size) {
        index++;
        written = 0;
        fileAt(index);
      }
      const space = size - written;
      const rest = bytes.length - n;
      let take: number;
      if (space - LINE_SCAN_LIMIT < rest) {
        const newline = bytes.indexOf(0x0a, n);
        const line = newline === -1 ? -1 : newline - n + 1; // bytes up to and with the newline
        if (line > 0 && line <= space) take = line;
        else if (written > 0 && (line > 0 || rest <= size)) {
          written = size; // the line (or what is left) does not fit here: the next file takes it
          continue;
        }
        // Longer than a whole file: fill this one (a fresh file never rolls, so a long line cannot loop).
        else take = Math.min(space, rest);
      } else take = rest;
      const f = fileAt(index);
      f.parts.push(bytes.subarray(n, n + take));
      f.modTime = line.at;
      written += take;
      n += take;
    }
  }
  const keepFrom = index - Math.max(1, limits.maxFiles) + 1;
  return [...files]
    .filter(([i]) => i >= keepFrom)
    .sort(([a], [b]) => a - b)
    .map(([i, f]) => ({ index: i, content: f.parts.length === 1 ? f.parts[0]! : Buffer.concat(f.parts), modTime: f.modTime }));
}
