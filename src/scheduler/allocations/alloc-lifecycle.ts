/**
 * What a Nomad client does when asked to restart or signal an allocation's
 * tasks (scheduler-breadth-nomad.md §3.2–3.3; client/client.go
 * RestartAllocation and SignalAllocation, allocrunner/alloc_runner.go,
 * taskrunner/lifecycle.go): which tasks are touched, the errors, and the
 * allocation's new TaskStates. The writes themselves are the caller's.
 *
 * Every task of a running allocation runs in this emulator (lifecycle hooks
 * are not sequenced), so restarting "all tasks" touches the same tasks as
 * restarting the running ones; both refuse an allocation that should not run.
 */
import { formatMultierror } from "../../core/go/multierror.js";
import { CodedError } from "../engine/index.js";
import { goQuote } from "../../core/go/strconv.js";
import type { ServiceContext } from "../../core/context.js";
import type { AllocRow, SchedulerState } from "../state/model.js";
import { taskRestarted, taskSignaled, type TaskStateRow, type TaskStatesRow } from "../state/task-states.js";

/** taskrunner.ErrTaskNotRunning. */
const TASK_NOT_RUNNING = "Task not running";

export interface RestartRequest {
  readonly TaskName: string;
  readonly AllTasks: boolean;
}

/**
 * The allocation as its client knows it: one the client has not reported on
 * yet (no TaskStates) is unknown to it (structs.NewErrUnknownAllocation).
 */
export function clientAlloc(alloc: AllocRow | undefined, id: string): AllocRow & { TaskStates: TaskStatesRow } {
  if (!alloc?.TaskStates) throw new CodedError(404, `Unknown allocation ${goQuote(id)}`);
  return alloc as AllocRow & { TaskStates: TaskStatesRow };
}

/** allocRunner.shouldRun: neither the server nor the client has ended it. */
function shouldRun(alloc: AllocRow): boolean {
  return alloc.DesiredStatus === "run" && (alloc.ClientStatus === "pending" || alloc.ClientStatus === "running");
}

/** The TaskStates after a user restart; throws Nomad's error (as a CodedError) when it is refused. */
export function restartTasks(alloc: AllocRow & { TaskStates: TaskStatesRow }, request: RestartRequest, now: number): TaskStatesRow {
  if (request.AllTasks && request.TaskName !== "") throw new CodedError(500, "task name cannot be set when restarting all tasks");
  const states = alloc.TaskStates;
  if (request.TaskName !== "") {
    const state = states[request.TaskName];
    if (!state) throw new CodedError(500, `Could not find task runner for task: ${request.TaskName}`);
    if (state.State !== "running") throw new CodedError(500, TASK_NOT_RUNNING);
    return { ...states, [request.TaskName]: taskRestarted(state, "User requested task to restart", now) };
  }
  if (!shouldRun(alloc)) throw new CodedError(500, "restart of an alloc that should not run");
  const reason = request.AllTasks ? "User requested all tasks to restart" : "User requested running tasks to restart";
  // Tasks that are not running are skipped silently (restartTasks ignores ErrTaskNotRunning).
  return mapStates(states, (state) => (state.State === "running" ? taskRestarted(state, reason, now) : state));
}

/** The TaskStates after a signal to one task (or, with no task, every task). */
export function signalTasks(alloc: AllocRow & { TaskStates: TaskStatesRow }, task: string, signal: string, now: number): TaskStatesRow {
  const states = alloc.TaskStates;
  if (task !== "") {
    const state = states[task];
    if (!state) throw new CodedError(500, "Task not found");
    if (state.State !== "running") throw new CodedError(500, TASK_NOT_RUNNING);
    return { ...states, [task]: taskSignaled(state, signal, now) };
  }
  // Nomad walks a Go map (random order); the failures are listed by task name here.
  const failures = Object.keys(states)
    .sort()
    .filter((name) => states[name]!.State !== "running")
    .map((name) => `Failed to signal task: ${name}, err: ${TASK_NOT_RUNNING}`);
  const signaled = mapStates(states, (state) => (state.State === "running" ? taskSignaled(state, signal, now) : state));
  if (failures.length > 0) throw new SignalFailures(formatMultierror(failures), signaled);
  return signaled;
}

/** Some tasks could not be signaled: the running ones were, and still got their event. */
export class SignalFailures extends CodedError {
  constructor(
    message: string,
    readonly states: TaskStatesRow,
  ) {
    super(500, message);
  }
}

function mapStates(states: TaskStatesRow, change: (state: TaskStateRow) => TaskStateRow): TaskStatesRow {
  return Object.fromEntries(Object.entries(states).map(([name, state]) => [name, change(state)]));
}

/** Writes an allocation's new TaskStates as the client's update does (a new ModifyIndex). */
export function putTaskStates(state: SchedulerState, ctx: ServiceContext, alloc: AllocRow, states: TaskStatesRow, what: string): void {
  state.allocs.put(alloc.ID, { ...alloc, TaskStates: states, ModifyIndex: ctx.store.writeIndex(), ModifyTime: ctx.clock.now() });
  ctx.events.record(`alloc.${what}`, { service: "scheduler", subject: alloc.ID });
}

/** `POST /v1/client/allocation/:id/restart` as the route and the `alloc-restart` action run it. */
export function restartAllocation(state: SchedulerState, ctx: ServiceContext, alloc: AllocRow & { TaskStates: TaskStatesRow }, request: RestartRequest): void {
  const states = restartTasks(alloc, request, ctx.clock.now());
  ctx.store.write(() => putTaskStates(state, ctx, alloc, states, "restart"));
}
