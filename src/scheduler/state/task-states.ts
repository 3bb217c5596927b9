/**
 * An allocation's `TaskStates`: what the Nomad client reports about each
 * task (state, failure, times, the last ten task events), simulated from the
 * allocation's client transitions on the virtual clock.
 *
 * Nomad facts followed (nomad/structs TaskState, TaskEvent,
 * PopulateEventDisplayMessage; client/allocrunner/taskrunner):
 * - the scheduler leaves TaskStates nil (`null`) until the client's first
 *   update;
 * - a started task has Received ("Task received by client"), Task Setup
 *   ("Building Task Directory") and Started ("Task started by client");
 * - a task that exits: Terminated ("Exit Code: N", details exit_code,
 *   signal, oom_killed); a failed one then Not Restarting with the restart
 *   policy's words and FailsTask, and the task state's Failed is true;
 * - a stopped one: Killing ("Sent interrupt. Waiting 5s before force
 *   killing", its kill_timeout), Terminated, Killed ("Task successfully
 *   killed");
 * - at most ten events are kept, the oldest dropped.
 *
 * Rows keep times in virtual milliseconds; the view renders Nomad's shape
 * (event Time in unix nanoseconds, task times RFC 3339, zero times null).
 */
import { formatGoDuration } from "../../core/durations.js";
import { formatInstant } from "../../core/instant.js";
import { REASON_WITHIN_POLICY, type RestartDecision, type RestartPolicy, type RestartWindow } from "./restart-tracker.js";

/** One task event as stored: only what differs from Nomad's zero values. */
export interface TaskEventRow {
  readonly Type: string;
  /** Virtual ms. */
  readonly Time: number;
  readonly DisplayMessage: string;
  readonly Message?: string;
  readonly Details?: Readonly<Record<string, string>>;
  readonly ExitCode?: number;
  /** Nanoseconds. */
  readonly KillTimeout?: number;
  readonly FailsTask?: boolean;
  readonly RestartReason?: string;
  /** Nanoseconds. */
  readonly StartDelay?: number;
  readonly FailedSibling?: string;
}

export interface TaskStateRow {
  readonly State: "pending" | "running" | "dead";
  readonly Failed: boolean;
  readonly Restarts: number;
  readonly LastRestart: number | null;
  readonly StartedAt: number | null;
  readonly FinishedAt: number | null;
  readonly Events: readonly TaskEventRow[];
  /** The client's restart tracker (restart-tracker.ts); not part of Nomad's TaskState. */
  readonly RestartWindow?: RestartWindow;
  /** When a task the restart policy restarts starts again (virtual ms); not part of Nomad's TaskState. */
  readonly RestartDueAt?: number;
}

export type TaskStatesRow = Readonly<Record<string, TaskStateRow>>;

/** What the simulation needs of a task and its group. */
export interface TaskSpec {
  readonly Name: string;
  /** Nanoseconds (Nomad's default 5 s). */
  readonly KillTimeout: number;
}

/** client.go's defaultMaxEvents. */
const MAX_EVENTS = 10;
/** The client clamps a task's kill_timeout to its max_kill_timeout (default 30 s). */
const MAX_KILL_TIMEOUT_NS = 30_000_000_000;

function appendEvents(events: readonly TaskEventRow[], added: readonly TaskEventRow[]): TaskEventRow[] {
  return [...events, ...added].slice(-MAX_EVENTS);
}

/** The client picked the allocation up at `placedAt` and its tasks started at `now`. */
export function tasksStarted(tasks: readonly TaskSpec[], placedAt: number, now: number): TaskStatesRow {
  const states: Record<string, TaskStateRow> = {};
  for (const task of tasks) {
    states[task.Name] = {
      State: "running",
      Failed: false,
      Restarts: 0,
      LastRestart: null,
      StartedAt: now,
      FinishedAt: null,
      Events: [
        { Type: "Received", Time: placedAt, DisplayMessage: "Task received by client" },
        { Type: "Task Setup", Time: placedAt, DisplayMessage: "Building Task Directory", Message: "Building Task Directory", Details: { message: "Building Task Directory" } },
        { Type: "Started", Time: now, DisplayMessage: "Task started by client" },
      ],
    };
  }
  return states;
}

export function terminated(now: number, exitCode: number): TaskEventRow {
  return {
    Type: "Terminated",
    Time: now,
    DisplayMessage: `Exit Code: ${exitCode}`,
    ExitCode: exitCode,
    Details: { exit_code: String(exitCode), signal: "0", oom_killed: "false" },
  };
}

/**
 * The tasks end: `complete` (exit 0), `failed` (exit 1, restart attempts
 * used up) or `killed` (the allocation was stopped). Tasks the client never
 * reported (no state yet) are reported as received first.
 */
export function tasksFinished(
  current: TaskStatesRow | null | undefined,
  tasks: readonly TaskSpec[],
  outcome: "complete" | "failed" | "killed",
  times: { placedAt: number; now: number },
  restart: RestartPolicy,
): TaskStatesRow {
  const { now } = times;
  const base = current ?? tasksStarted(tasks, times.placedAt, times.placedAt);
  const states: Record<string, TaskStateRow> = {};
  for (const task of tasks) {
    const state = base[task.Name];
    if (!state) continue;
    if (state.State === "dead") {
      states[task.Name] = state;
      continue;
    }
    let added: TaskEventRow[];
    if (outcome === "killed") {
      const timeout = Math.min(task.KillTimeout, MAX_KILL_TIMEOUT_NS);
      added = [
        {
          Type: "Killing",
          Time: now,
          DisplayMessage: `Sent interrupt. Waiting ${formatGoDuration(BigInt(timeout))} before force killing`,
          KillTimeout: timeout,
          Details: { kill_timeout: formatGoDuration(BigInt(timeout)) },
        },
        terminated(now, 0),
        { Type: "Killed", Time: now, DisplayMessage: "Task successfully killed" },
      ];
    } else if (outcome === "failed") {
      const reason = `Exceeded allowed attempts ${restart.Attempts} in interval ${formatGoDuration(BigInt(restart.Interval))} and mode is "${restart.Mode}"`;
      added = [
        terminated(now, 1),
        { Type: "Not Restarting", Time: now, DisplayMessage: reason, RestartReason: reason, FailsTask: true, Details: { restart_reason: reason, fails_task: "true" } },
      ];
    } else {
      added = [terminated(now, 0)];
    }
    states[task.Name] = { ...state, State: "dead", Failed: outcome === "failed", FinishedAt: now, Events: appendEvents(state.Events, added) };
  }
  return states;
}

/**
 * A user restart of a running task (lifecycle.go restartImpl, then the task
 * runner's loop): Restart Signaled with the reason, the task killed
 * (Terminated), Restarting at once ("Task restarting in 0s": a user restart
 * skips the restart policy's delay and attempts, and the Restarting event
 * carries no reason), Started again. Restarts and LastRestart count the
 * Restarting event (appendEvent); StartedAt is the new start.
 */
export function taskRestarted(state: TaskStateRow, reason: string, now: number): TaskStateRow {
  const added: TaskEventRow[] = [
    { Type: "Restart Signaled", Time: now, DisplayMessage: reason, RestartReason: reason, Details: { restart_reason: reason } },
    terminated(now, 0),
    { Type: "Restarting", Time: now, DisplayMessage: "Task restarting in 0s", StartDelay: 0, Details: { start_delay: "0", restart_reason: "" } },
    { Type: "Started", Time: now, DisplayMessage: "Task started by client" },
  ];
  return { ...state, State: "running", Restarts: state.Restarts + 1, LastRestart: now, StartedAt: now, Events: appendEvents(state.Events, added) };
}

/**
 * A running task exited (`exitCode`) and the restart tracker decided
 * (restart-tracker.ts): Terminated, then Restarting (the task pending until
 * its delay has passed; Restarts and LastRestart count it), Not Restarting
 * (dead and failed) or nothing more (dead, done).
 */
export function taskExited(state: TaskStateRow, exitCode: number, decision: RestartDecision, window: RestartWindow, now: number): TaskStateRow {
  const exited = terminated(now, exitCode);
  if (decision.kind === "restart") {
    const delay = formatGoDuration(BigInt(Math.round(decision.delayNs)));
    // PopulateEventDisplayMessage leaves the routine reason out of the display.
    const display = decision.reason === REASON_WITHIN_POLICY ? `Task restarting in ${delay}` : `${decision.reason} - Task restarting in ${delay}`;
    const restarting: TaskEventRow = {
      Type: "Restarting",
      Time: now,
      DisplayMessage: display,
      RestartReason: decision.reason,
      StartDelay: decision.delayNs,
      Details: { start_delay: String(decision.delayNs), restart_reason: decision.reason },
    };
    return {
      ...state,
      State: "pending",
      Restarts: state.Restarts + 1,
      LastRestart: now,
      Events: appendEvents(state.Events, [exited, restarting]),
      RestartWindow: window,
      RestartDueAt: now + Math.ceil(decision.delayNs / 1_000_000),
    };
  }
  if (decision.kind === "not-restarting") {
    const notRestarting: TaskEventRow = {
      Type: "Not Restarting",
      Time: now,
      DisplayMessage: decision.reason,
      RestartReason: decision.reason,
      FailsTask: true,
      Details: { restart_reason: decision.reason, fails_task: "true" },
    };
    return { ...state, State: "dead", Failed: true, FinishedAt: now, Events: appendEvents(state.Events, [exited, notRestarting]), RestartWindow: window };
  }
  return { ...state, State: "dead", FinishedAt: now, Events: appendEvents(state.Events, [exited]), RestartWindow: window };
}

/** A task the restart policy restarted starts again once its delay has passed. */
export function taskStartedAgain(state: TaskStateRow, now: number): TaskStateRow {
  const { RestartDueAt: _due, ...rest } = state;
  return { ...rest, State: "running", StartedAt: now, Events: appendEvents(state.Events, [{ Type: "Started", Time: now, DisplayMessage: "Task started by client" }]) };
}

/** The alloc runner kills a failed task's live siblings, each told why first (then tasksFinished "killed"). */
export function siblingFailed(state: TaskStateRow, sibling: string, now: number): TaskStateRow {
  const event: TaskEventRow = {
    Type: "Sibling Task Failed",
    Time: now,
    DisplayMessage: `Task's sibling "${sibling}" failed`,
    FailedSibling: sibling,
    Details: { failed_sibling: sibling },
  };
  const { RestartDueAt: _due, ...rest } = state;
  return { ...rest, Events: appendEvents(state.Events, [event]) };
}

/**
 * The health tracker's reasons, by healthy_deadline, that a task kept its
 * allocation from being healthy (allochealth tracker.go taskHealthState.event),
 * each an `Alloc Unhealthy` event on the task (alloc_runner_hooks.go SetHealth).
 * Only the task-state reasons: a task that runs long enough but whose checks
 * fail gets none here.
 */
export function unhealthyByDeadline(states: TaskStatesRow, timing: { healthyDeadlineMs: number; minHealthyMs: number; now: number }): TaskStatesRow {
  const deadline = `healthy_deadline of ${formatGoDuration(BigInt(timing.healthyDeadlineMs) * 1_000_000n)}`;
  const reason = (task: TaskStateRow): string | undefined => {
    if (task.Failed) return "Unhealthy because of failed task";
    if (task.State === "pending") return `Task not running by ${deadline}`;
    if (task.State === "dead") return "Unhealthy because of dead task";
    if (task.StartedAt !== null && task.StartedAt + timing.minHealthyMs > timing.now)
      return `Task not running for min_healthy_time of ${formatGoDuration(BigInt(timing.minHealthyMs) * 1_000_000n)} by ${deadline}`;
    return undefined;
  };
  const next: Record<string, TaskStateRow> = {};
  for (const [name, task] of Object.entries(states)) {
    const message = reason(task);
    if (message === undefined) next[name] = task;
    else
      next[name] = { ...task, Events: appendEvents(task.Events, [{ Type: "Alloc Unhealthy", Time: timing.now, DisplayMessage: message, Message: message, Details: { message } }]) };
  }
  return next;
}

/** The allocation's client status from its tasks (alloc_runner getClientStatus): any failed, else any pending, else any running, else complete. */
export function clientStatusOf(states: TaskStatesRow): { status: string; description: string } {
  const all = Object.values(states);
  if (all.some((s) => s.State === "dead" && s.Failed)) return { status: "failed", description: "Failed tasks" };
  if (all.some((s) => s.State === "pending")) return { status: "pending", description: "No tasks have started" };
  if (all.some((s) => s.State === "running")) return { status: "running", description: "Tasks are running" };
  return { status: "complete", description: "All tasks have completed" };
}

/** A signal sent to a running task (allocRunner.Signal): SetSignalText fills only Details, so the generic message. */
export function taskSignaled(state: TaskStateRow, signal: string, now: number): TaskStateRow {
  const event: TaskEventRow = { Type: "Signaling", Time: now, DisplayMessage: "Task being sent a signal", Details: { signal } };
  return { ...state, Events: appendEvents(state.Events, [event]) };
}

/** Nomad's JSON for the map (keys are sorted by the encoder). */
export function taskStatesView(states: TaskStatesRow | null | undefined): Record<string, unknown> | null {
  if (!states) return null;
  const time = (ms: number | null) => (ms === null ? null : formatInstant(ms));
  const view: Record<string, unknown> = {};
  for (const [name, state] of Object.entries(states)) {
    view[name] = {
      State: state.State,
      Failed: state.Failed,
      Restarts: state.Restarts,
      LastRestart: time(state.LastRestart),
      StartedAt: time(state.StartedAt),
      FinishedAt: time(state.FinishedAt),
      Events: state.Events.map(eventView),
      TaskHandle: null,
    };
  }
  return view;
}

function eventView(e: TaskEventRow): Record<string, unknown> {
  return {
    Type: e.Type,
    Time: BigInt(e.Time) * 1_000_000n,
    Message: e.Message ?? "",
    DisplayMessage: e.DisplayMessage,
    Details: { ...(e.Details ?? {}) },
    FailsTask: e.FailsTask ?? false,
    RestartReason: e.RestartReason ?? "",
    SetupError: "",
    DriverError: "",
    ExitCode: e.ExitCode ?? 0,
    Signal: 0,
    KillTimeout: e.KillTimeout ?? 0,
    KillError: "",
    KillReason: "",
    StartDelay: e.StartDelay ?? 0,
    DownloadError: "",
    ValidationError: "",
    DiskLimit: 0,
    FailedSibling: e.FailedSibling ?? "",
    VaultError: "",
    TaskSignalReason: "",
    TaskSignal: "",
    DriverMessage: "",
    GenericSource: "",
  };
}
