/**
 * Tasks that exit while their allocation runs, and the client restarting
 * them in place per the group's restart policy (restart-tracker.ts) on the
 * virtual clock: the task waits out the delay `pending` (the allocation
 * with it, as getClientStatus derives it), then starts again. A task the
 * policy does not restart fails the allocation (its live siblings killed)
 * and so, per the reschedule policy, the allocation may be replaced; a
 * batch task that exits 0 ends, and the allocation completes with its last
 * task.
 */
import type { AllocRow } from "../state/model.js";
import { decideRestart, restartsOnSuccess } from "../state/restart-tracker.js";
import { clientStatusOf, siblingFailed, taskExited, taskStartedAgain, tasksFinished, type TaskStatesRow } from "../state/task-states.js";
import { allocGroup } from "../services/service-checks.js";
import { armRunTimers, restartPolicy, taskSpecs, transitionAlloc } from "./allocations.js";
import { TIMERS } from "./constants.js";
import type { EngineCore } from "./core.js";
import { CodedError } from "./errors.js";
import { completeAlloc, failAlloc } from "./faults.js";

/**
 * Running tasks of a running allocation exit with `exitCode` (`tasks`: by
 * name; none named: every running task). Throws CodedError 409 when a named
 * task is not running, 404 when the allocation has no such task.
 */
export function tasksExited(core: EngineCore, alloc: AllocRow, tasks: readonly string[] | undefined, exitCode: number): AllocRow {
  const { ctx } = core;
  const states = alloc.TaskStates as TaskStatesRow | null;
  if (alloc.DesiredStatus !== "run" || alloc.ClientStatus !== "running" || !states) throw new CodedError(409, `allocation "${alloc.ID}" is ${alloc.ClientStatus}, not running`);
  for (const name of tasks ?? []) {
    if (!states[name]) throw new CodedError(404, `allocation "${alloc.ID}" has no task "${name}"`);
    if (states[name].State !== "running") throw new CodedError(409, `task "${name}" of allocation "${alloc.ID}" is ${states[name].State}, not running`);
  }
  const names = tasks && tasks.length > 0 ? [...new Set(tasks)] : Object.keys(states).filter((n) => states[n]!.State === "running");
  const group = allocGroup(core.state, alloc);
  const policy = restartPolicy(group);
  const onSuccess = restartsOnSuccess(alloc.JobType);
  return ctx.store.write(() => {
    const now = ctx.clock.now();
    const next: Record<string, (typeof states)[string]> = { ...states };
    for (const name of names) {
      const state = next[name]!;
      const window = state.RestartWindow ?? { Count: 0, Start: alloc.CreateTime };
      const outcome = decideRestart(policy, window, { exitCode, onSuccess, now });
      next[name] = taskExited(state, exitCode, outcome.decision, outcome.window, now);
    }
    const failedTask = names.find((n) => next[n]!.State === "dead" && next[n]!.Failed);
    if (failedTask !== undefined) {
      // The alloc runner kills the failed task's live siblings; the allocation fails (and may be rescheduled).
      const siblings = Object.keys(next).filter((n) => next[n]!.State !== "dead");
      for (const name of siblings) next[name] = siblingFailed(next[name]!, failedTask, now);
      const killed = tasksFinished(next, taskSpecs(group), "killed", { placedAt: alloc.CreateTime, now }, policy);
      failAlloc(core, alloc, { ...next, ...killed });
      return core.state.allocs.get(alloc.ID)!;
    }
    const { status, description } = clientStatusOf(next);
    if (status === "complete") {
      completeAlloc(core, alloc, next);
      return core.state.allocs.get(alloc.ID)!;
    }
    const updated = updateClientState(core, alloc, status, description, next);
    // A restarting task starts its run (and its health) over: the timers go, and come back when it runs again.
    if (status !== "running") for (const kind of [TIMERS.allocHealthy, TIMERS.batchDone]) ctx.clock.cancelFor(kind, alloc.ID);
    const due = new Set(names.map((n) => next[n]!.RestartDueAt).filter((at): at is number => at !== undefined));
    for (const at of due) ctx.clock.schedule({ at, kind: TIMERS.taskRestart, subject: alloc.ID });
    return updated;
  });
}

/** A restart delay passed: the tasks due start again, and the allocation runs once every task does. */
export function restartDue(core: EngineCore, allocId: string): unknown {
  const { state, ctx } = core;
  const alloc = state.allocs.get(allocId);
  const states = alloc?.TaskStates as TaskStatesRow | null | undefined;
  if (!alloc || !states || alloc.DesiredStatus !== "run" || alloc.ClientStatus !== "pending") return { alloc: allocId, skipped: true };
  return ctx.store.write(() => {
    const now = ctx.clock.now();
    const next: Record<string, (typeof states)[string]> = { ...states };
    const started: string[] = [];
    for (const [name, task] of Object.entries(states)) {
      if (task.State === "pending" && task.RestartDueAt !== undefined && task.RestartDueAt <= now) {
        next[name] = taskStartedAgain(task, now);
        started.push(name);
      }
    }
    if (started.length === 0) return { alloc: allocId, skipped: true };
    const { status, description } = clientStatusOf(next);
    const updated = updateClientState(core, alloc, status, description, next);
    if (status === "running") armRunTimers(core, updated, now);
    return { alloc: allocId, started, status };
  });
}

/** The client's update: a status change goes through transitionAlloc (summary, journal); new task states alone are a plain write. */
function updateClientState(core: EngineCore, alloc: AllocRow, status: string, description: string, taskStates: TaskStatesRow): AllocRow {
  if (status !== alloc.ClientStatus) return transitionAlloc(core, alloc, status, description, { TaskStates: taskStates });
  const { ctx } = core;
  return core.state.allocs.put(alloc.ID, { ...alloc, TaskStates: taskStates, ModifyIndex: ctx.store.writeIndex(), ModifyTime: ctx.clock.now() });
}
