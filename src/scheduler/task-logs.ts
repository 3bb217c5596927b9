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
 */
import type { ServiceContext } from "../core/context.js";
import { nanosToMs, parseGoDuration } from "../core/durations.js";
import type { TaskOutputEntry } from "../scenario-files/schema.js";
import type { Table } from "../core/store.js";
import type { AllocRow } from "./model.js";
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
};

/** A log file as it stands at an instant. */
export interface LogFile {
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

  constructor(private readonly ctx: ServiceContext) {
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
    this.appended.put(key, { ...current, [type]: [...current[type], ...texts.map((text) => ({ at, text: asLine(text) }))] });
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
    for (const line of this.appended.get(appendedKey(alloc.ID, task))?.[type] ?? []) {
      let i = lines.length;
      while (i > 0 && lines[i - 1]!.at > line.at) i--;
      lines.splice(i, 0, line);
    }
    const content = Buffer.from(lines.map((l) => l.text).join(""), "utf8");
    const modTime = lines.length > 0 ? lines[lines.length - 1]!.at : origin;
    return { content, modTime, nextAt, finished };
  }
}
