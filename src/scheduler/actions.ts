/**
 * The scheduler's actions (node and allocation faults, job registration and
 * stop) and conditions (job, deployment, allocation and evaluation states),
 * for fixture timelines, `POST /_standin/actions` and `POST /_standin/await`.
 * The control routes for node and allocation faults run the same code.
 */
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import { ActionError, action, condition, type ActionTable, type ConditionTable } from "../http/actions.js";
import { CodedError, type SchedulerEngine } from "./engine/index.js";
import type { NodeOperations } from "./nodes/node-ops.js";
import { isBuiltInPool, NODE_POOLS_TABLE } from "./nodes/node-pools.js";
import { parseGoDuration } from "../core/durations.js";
import { admitJob, JobDecodeError, type AdmittedJob } from "./jobspec/index.js";
import { hclFixtureJob, isHclJobDocument } from "./jobspec/hcl/fixture-job.js";
import { formatMultierror } from "../core/go/multierror.js";
import type { AllocRow, NodeRow, SchedulerState } from "./state/model.js";
import { variableActions, variableConditions } from "./variables/variable-actions.js";
import { serviceConditions } from "./services/service-registrations.js";
import { serviceChecksOf } from "./services/service-checks.js";
import { taskOutputEntry } from "../scenario-files/schema.js";
import { LOG_TYPES, scriptRow, TASK_LOG_ACTION_MAX_BYTES, type TaskLogs } from "./state/task-logs.js";
import type { TaskStatesRow } from "./state/task-states.js";
import { clientAlloc, restartAllocation } from "./allocations/alloc-lifecycle.js";

const NODE_STATUSES = ["ready", "down", "initializing", "disconnected"] as const;
const ACTIVE_CLIENT = new Set(["pending", "running"]);

/** Picks allocations by ID, or by job (and group, canary, position among the live ones, oldest first). */
const allocSelector = {
  alloc: v.optional(v.string()),
  job: v.optional(v.string()),
  namespace: v.optional(v.string()),
  group: v.optional(v.string()),
  canary: v.optional(v.boolean()),
  nth: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
};

type AllocSelection = { alloc?: string; job?: string; namespace?: string; group?: string; canary?: boolean; nth?: number };

export interface SchedulerActionsDeps {
  readonly state: SchedulerState;
  readonly engine: SchedulerEngine;
  readonly nodeOps: NodeOperations;
  readonly ctx: ServiceContext;
  readonly region: () => string;
  /** Scripted task output; without it the task-output and task-log actions are not offered. */
  readonly taskLogs?: TaskLogs;
}

export function schedulerActions({ state, engine, nodeOps, ctx, region, taskLogs }: SchedulerActionsDeps) {
  const findNode = (idOrName: string): NodeRow => {
    const node = state.nodes.get(idOrName) ?? [...state.nodes.values()].find((n) => n.Name === idOrName);
    if (!node) throw new ActionError(404, `no node "${idOrName}"`);
    return node;
  };

  /** Node faults: status, eligibility, drain (what `POST /_standin/scheduler/nodes/<id>` does). */
  const updateNode = (node: NodeRow, change: { Status?: string; SchedulingEligibility?: string; Drain?: boolean }) => {
    const { Status: status, SchedulingEligibility: eligibility, Drain: drain } = change;
    const updated = {
      ...node,
      Status: status ?? node.Status,
      // Draining makes a node ineligible; ending a drain makes it eligible again (Nomad's default, without -keep-ineligible).
      SchedulingEligibility: drain === true ? "ineligible" : drain === false && node.Drain ? "eligible" : (eligibility ?? node.SchedulingEligibility),
      Drain: drain ?? node.Drain,
      StatusUpdatedAt: status !== undefined ? ctx.clock.now() : node.StatusUpdatedAt,
    };
    const { CreateIndex: _c, ModifyIndex: _m, ...fields } = updated;
    state.nodes.putIndexed(node.ID, fields);
    ctx.events.record("node.updated", {
      service: "scheduler",
      subject: node.ID,
      detail: { status: updated.Status, eligibility: updated.SchedulingEligibility, drain: updated.Drain },
    });
    if (status === "down" && node.Status !== "down") engine.nodeDown({ ...node, ...updated });
    // Blocked evals may fit now; system jobs follow the node either way.
    engine.capacityChanged(state.nodes.get(node.ID));
    const now = state.nodes.get(node.ID)!;
    return { ID: now.ID, Name: now.Name, Status: now.Status, SchedulingEligibility: now.SchedulingEligibility };
  };

  const selectAlloc = (args: AllocSelection): AllocRow => {
    if (args.alloc !== undefined) {
      const alloc = state.allocs.get(args.alloc);
      if (!alloc) throw new ActionError(404, `no allocation "${args.alloc}"`);
      return alloc;
    }
    if (args.job === undefined) throw new ActionError(400, "name the allocation: alloc, or job (with group, canary, nth)");
    const live = state
      .allocsOfJob(args.namespace ?? "default", args.job)
      .filter((a) => a.DesiredStatus === "run" && ACTIVE_CLIENT.has(a.ClientStatus))
      .filter((a) => args.group === undefined || a.TaskGroup === args.group)
      .filter((a) => args.canary === undefined || Boolean((a.DeploymentStatus as { Canary?: boolean } | null)?.Canary) === args.canary)
      .sort((a, b) => a.CreateIndex - b.CreateIndex || (a.ID < b.ID ? -1 : 1));
    const alloc = live[args.nth ?? 0];
    if (!alloc) throw new ActionError(409, `job "${args.job}" has no live allocation matching ${JSON.stringify({ ...args, job: undefined })} (live: ${live.length})`);
    return alloc;
  };

  /** Allocation faults (what `POST /_standin/scheduler/allocations/<id>` does). */
  const allocFault = (alloc: AllocRow, change: { ClientStatus?: "failed" | "complete"; Healthy?: boolean }) => {
    if (change.ClientStatus === "failed") engine.failAlloc(alloc);
    else if (change.ClientStatus === "complete") engine.completeAlloc(alloc);
    else if (change.Healthy !== undefined) {
      // A health report as the client would send it: counts for the allocation's deployment, or the watcher judges it unhealthy.
      if (!alloc.DeploymentID) throw new ActionError(409, `allocation "${alloc.ID}" is not part of a deployment`);
      try {
        engine.setAllocHealth(alloc.DeploymentID, change.Healthy ? [alloc.ID] : [], change.Healthy ? [] : [alloc.ID], "client");
      } catch (error) {
        throw new ActionError(409, (error as Error).message);
      }
    } else throw new ActionError(400, 'give {"ClientStatus": "failed" | "complete"} or {"Healthy": true | false}');
    const updated = state.allocs.get(alloc.ID)!;
    return { ID: updated.ID, ClientStatus: updated.ClientStatus, DesiredStatus: updated.DesiredStatus };
  };

  /** Registers a job document as `PUT /v1/jobs` takes its `Job` (canonicalized and validated the same way). */
  const registerJob = (given: Record<string, unknown>, where: string) => {
    let document = given;
    if (isHclJobDocument(given)) {
      try {
        document = hclFixtureJob(given, () => ctx.ids.uuid());
      } catch (error) {
        throw new ActionError(400, `${where}: ${(error as Error).message}`);
      }
    }
    const namespace = (document.Namespace as string | undefined) || "default";
    let admitted: AdmittedJob;
    try {
      admitted = admitJob(document, { region: (document.Region as string | undefined) || region(), namespace });
    } catch (error) {
      // A field of the wrong type: the 400 PUT /v1/jobs gives, naming the step.
      if (error instanceof JobDecodeError) throw new ActionError(400, `${where}: ${error.message}`);
      throw error;
    }
    const { job, errors } = admitted;
    if (errors.length) throw new ActionError(400, `${where}: ${formatMultierror(errors).trim()}`);
    if (!state.namespaces.get(namespace)) throw new ActionError(400, `${where}: job "${String(job.ID)}" is in nonexistent namespace "${namespace}"`);
    if (!isBuiltInPool(String(job.NodePool)) && !ctx.store.table(NODE_POOLS_TABLE).has(String(job.NodePool)))
      throw new ActionError(400, `${where}: job "${String(job.ID)}" is in nonexistent node pool "${job.NodePool}"`);
    const result = engine.register(job);
    return { JobID: job.ID, EvalID: result.EvalID, Index: result.Index };
  };

  const nodeArg = { node: v.pipe(v.string(), v.nonEmpty()) };

  const actions: ActionTable = {
    "node-down": action({
      summary: "a client node goes down: its allocations are lost and replaced elsewhere",
      args: v.strictObject(nodeArg),
      run: (a) => updateNode(findNode(a.node), { Status: "down" }),
    }),
    "node-up": action({ summary: "a node is ready again", args: v.strictObject(nodeArg), run: (a) => updateNode(findNode(a.node), { Status: "ready" }) }),
    "node-status": action({
      summary: "sets a node's status",
      args: v.strictObject({ ...nodeArg, status: v.picklist(NODE_STATUSES) }),
      run: (a) => updateNode(findNode(a.node), { Status: a.status }),
    }),
    "node-drain": action({
      summary:
        "drains a node as `PUT /v1/node/:id/drain` does (allocations migrate per their group's migrate block; deadline: a Go duration, -1s forces at once, 0 or none waits as long as it takes) or, with drain: false, cancels the drain",
      args: v.strictObject({ ...nodeArg, drain: v.optional(v.boolean(), true), deadline: v.optional(v.string()), ignoreSystemJobs: v.optional(v.boolean(), false) }),
      run: (a) => {
        const node = findNode(a.node);
        let deadline = 0;
        try {
          if (a.deadline !== undefined) deadline = Number(parseGoDuration(a.deadline));
        } catch (error) {
          throw new ActionError(400, `deadline: ${(error as Error).message}`);
        }
        try {
          // Ending a drain marks the node eligible again, as the CLI's `node drain -disable` does (without -keep-ineligible).
          const answer = nodeOps.updateDrain(node.ID, a.drain ? { Deadline: deadline, IgnoreSystemJobs: a.ignoreSystemJobs } : null, !a.drain, null);
          const now = state.nodes.get(node.ID)!;
          return { ID: now.ID, Name: now.Name, Status: now.Status, SchedulingEligibility: now.SchedulingEligibility, Drain: now.Drain, EvalIDs: answer.EvalIDs };
        } catch (error) {
          if (error instanceof CodedError) throw new ActionError(409, error.message);
          throw error;
        }
      },
    }),
    "node-eligibility": action({
      summary: "marks a node eligible or ineligible for placements",
      args: v.strictObject({ ...nodeArg, eligible: v.boolean() }),
      run: (a) => updateNode(findNode(a.node), { SchedulingEligibility: a.eligible ? "eligible" : "ineligible" }),
    }),
    "alloc-fail": action({
      summary: "an allocation fails: its active deployment fails, or (progress based, reschedulable) lets it be rescheduled within the deployment",
      args: v.strictObject(allocSelector),
      run: (a) => allocFault(selectAlloc(a), { ClientStatus: "failed" }),
    }),
    "task-fail": action({
      summary:
        "a running task exits (exitCode, default 1; task: one task, else every running task): the client restarts it per the group's restart policy, or the allocation fails (and is rescheduled per its reschedule policy) or, a batch task exiting 0, completes",
      args: v.strictObject({ ...allocSelector, task: v.optional(v.pipe(v.string(), v.nonEmpty())), exitCode: v.optional(v.pipe(v.number(), v.integer()), 1) }),
      run: (a) => {
        const selected = selectAlloc(a);
        let updated: AllocRow;
        try {
          updated = engine.tasksExited(selected, a.task === undefined ? undefined : [a.task], a.exitCode);
        } catch (error) {
          if (error instanceof CodedError) throw new ActionError(error.status === 404 ? 404 : 409, error.message);
          throw error;
        }
        const states = updated.TaskStates as TaskStatesRow;
        const tasks = Object.fromEntries(Object.entries(states).map(([name, s]) => [name, { State: s.State, Failed: s.Failed, Restarts: s.Restarts }]));
        return { ID: updated.ID, ClientStatus: updated.ClientStatus, DesiredStatus: updated.DesiredStatus, Tasks: tasks };
      },
    }),
    "alloc-complete": action({
      summary: "an allocation's tasks exit successfully",
      args: v.strictObject(allocSelector),
      run: (a) => allocFault(selectAlloc(a), { ClientStatus: "complete" }),
    }),
    "alloc-health": action({
      summary: "the client reports an allocation healthy or unhealthy",
      args: v.strictObject({ ...allocSelector, healthy: v.boolean() }),
      run: (a) => allocFault(selectAlloc(a), { Healthy: a.healthy }),
    }),
    "alloc-restart": action({
      summary: "restarts an allocation's tasks as `POST /v1/client/allocation/:id/restart` does: task restarts one task, allTasks every task, neither the running ones",
      args: v.strictObject({ ...allocSelector, task: v.optional(v.pipe(v.string(), v.nonEmpty())), allTasks: v.optional(v.boolean(), false) }),
      run: (a) => {
        const selected = selectAlloc(a);
        try {
          restartAllocation(state, ctx, clientAlloc(selected, selected.ID), { TaskName: a.task ?? "", AllTasks: a.allTasks });
        } catch (error) {
          if (error instanceof CodedError) throw new ActionError(409, error.message);
          throw error;
        }
        const states = state.allocs.get(selected.ID)!.TaskStates as TaskStatesRow;
        return { ID: selected.ID, Restarts: Object.fromEntries(Object.entries(states).map(([name, s]) => [name, s.Restarts])) };
      },
    }),
    "nomad-check-status": action({
      summary:
        "sets the status of an allocation's native service checks (all, or a service's, or one by check name) from now, as if they ran now; auto goes back to the status derived from the allocation",
      args: v.strictObject({
        ...allocSelector,
        service: v.optional(v.pipe(v.string(), v.nonEmpty())),
        check: v.optional(v.pipe(v.string(), v.nonEmpty())),
        status: v.picklist(["success", "failure", "auto"]),
        output: v.optional(v.string()),
      }),
      run: (a) => {
        const alloc = selectAlloc(a);
        const checks = serviceChecksOf(state);
        const chosen = checks.select(alloc, a.service, a.check);
        if (chosen.length === 0)
          throw new ActionError(404, `allocation "${alloc.ID}" has no native service check${a.service ? ` of service "${a.service}"` : ""}${a.check ? ` named "${a.check}"` : ""}`);
        for (const { id } of chosen) checks.override(alloc.ID, id, a.status, a.output, ctx.clock.now());
        engine.checksChanged(alloc.ID);
        return { AllocID: alloc.ID, Status: a.status, Checks: chosen.map(({ id, service, check }) => ({ ID: id, Service: service, Check: check })) };
      },
    }),
    "job-register": action({
      summary: "registers (or updates) a job, as PUT /v1/jobs",
      args: v.strictObject({ job: v.record(v.string(), v.unknown()) }),
      run: (a) => registerJob(a.job, "job-register"),
    }),
    "job-stop": action({
      summary: "stops (or purges) a job, as DELETE /v1/job/:id",
      args: v.strictObject({ job: v.string(), namespace: v.optional(v.string()), purge: v.optional(v.boolean()) }),
      run: (a) => {
        const result = engine.deregister(a.namespace ?? "default", a.job, a.purge ?? false);
        if (!result.found) throw new ActionError(404, `job "${a.job}" not found`);
        return { JobID: a.job, EvalID: result.EvalID, Index: result.Index };
      },
    }),
    ...variableActions(state, ctx),
  };

  if (taskLogs) Object.assign(actions, taskLogActions(taskLogs, selectAlloc));

  const jobArgs = { job: v.string(), namespace: v.optional(v.string()) };
  const conditions: ConditionTable = {
    job: condition({
      summary: "a job has a status (pending, running, dead), or is gone",
      args: v.strictObject({ ...jobArgs, status: v.optional(v.string()), gone: v.optional(v.boolean()) }),
      check: (a) => {
        const job = state.job(a.namespace ?? "default", a.job);
        if (a.gone) return { met: !job, observed: job ? { Status: job.Status } : null };
        return { met: job !== undefined && (a.status === undefined || job.Status === a.status), observed: job ? { Status: job.Status, Version: job.Version } : null };
      },
    }),
    deployment: condition({
      summary: "a job's latest deployment has a status (running, successful, failed, …); version picks a job version's",
      args: v.strictObject({ ...jobArgs, status: v.string(), version: v.optional(v.number()) }),
      check: (a) => {
        const ns = a.namespace ?? "default";
        const candidates = [...state.deployments.values()]
          .filter((d) => d.Namespace === ns && d.JobID === a.job && (a.version === undefined || d.JobVersion === a.version))
          .sort((x, y) => y.CreateIndex - x.CreateIndex);
        const latest = candidates[0];
        return {
          met: latest?.Status === a.status,
          observed: latest ? { ID: latest.ID, Status: latest.Status, StatusDescription: latest.StatusDescription, JobVersion: latest.JobVersion } : null,
        };
      },
    }),
    allocations: condition({
      summary:
        "a job has at least (or exactly) `count` allocations with a client status (default running); rescheduled: only those that replace a failed one after at least that many reschedules (RescheduleTracker events)",
      args: v.strictObject({
        ...jobArgs,
        clientStatus: v.optional(v.string(), "running"),
        count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1),
        exactly: v.optional(v.boolean()),
        rescheduled: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
      }),
      check: (a) => {
        const reschedules = (x: AllocRow) => (x.RescheduleTracker as { Events?: unknown[] } | null | undefined)?.Events?.length ?? 0;
        const matching = state
          .allocsOfJob(a.namespace ?? "default", a.job)
          .filter((x) => x.ClientStatus === a.clientStatus && (a.rescheduled === undefined || reschedules(x) >= a.rescheduled)).length;
        const key = a.rescheduled === undefined ? a.clientStatus : `${a.clientStatus}, rescheduled ${a.rescheduled}+`;
        return { met: a.exactly ? matching === a.count : matching >= a.count, observed: { [key]: matching } };
      },
    }),
    evaluations: condition({
      summary: "none of a job's evaluations is pending or blocked (the scheduler is idle for it)",
      args: v.strictObject({ ...jobArgs, settled: v.literal(true) }),
      check: (a) => {
        const open = state.evalsOfJob(a.namespace ?? "default", a.job).filter((e) => e.Status === "pending" || e.Status === "blocked").length;
        return { met: open === 0, observed: { open } };
      },
    }),
    // One evaluation by ID: what `standin job run` waits for, as `nomad job run` monitors its eval.
    evaluation: condition({
      summary: "an evaluation has been processed (its status is no longer pending), or has a given status",
      args: v.strictObject({ id: v.string(), status: v.optional(v.string()) }),
      check: (a) => {
        const evaluation = state.evals.get(a.id);
        if (!evaluation) return { met: false, observed: null };
        return { met: a.status === undefined ? evaluation.Status !== "pending" : evaluation.Status === a.status, observed: { Status: evaluation.Status } };
      },
    }),
    ...variableConditions(state),
    ...serviceConditions(state),
  };

  return { actions, conditions, findNode, updateNode, allocFault, registerJob };
}

/** Scripting what tasks write (task-logs.ts): a task's script, and lines a running task writes now. */
function taskLogActions(taskLogs: TaskLogs, selectAlloc: (args: AllocSelection) => AllocRow): ActionTable {
  return {
    "task-output": action({
      summary:
        'sets what a task writes (stdout, stderr: lines, each "text" at the task\'s start or {"after": "2s", "line": "text"}) for the job\'s allocations (group: only that group\'s), as the fixture\'s scheduler.taskOutput',
      args: taskOutputEntry,
      run: (a) => {
        const row = scriptRow(a);
        taskLogs.setScript(row);
        return { JobID: row.JobID, Namespace: row.Namespace, Group: row.Group, Task: row.Task, Stdout: row.stdout.length, Stderr: row.stderr.length };
      },
    }),
    "task-log": action({
      summary: "a running task writes lines to its stdout (or stderr, type) now",
      args: v.strictObject({
        ...allocSelector,
        task: v.pipe(v.string(), v.nonEmpty()),
        type: v.optional(v.picklist(LOG_TYPES), "stdout"),
        lines: v.array(v.string()),
      }),
      run: (a) => {
        const alloc = selectAlloc(a);
        const state = (alloc.TaskStates as TaskStatesRow | null)?.[a.task];
        if (!state) throw new ActionError(404, `allocation "${alloc.ID}" has no task "${a.task}"`);
        if (state.State !== "running") throw new ActionError(409, `task "${a.task}" of allocation "${alloc.ID}" is ${state.State}, not running`);
        const bytes = a.lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
        if (bytes > TASK_LOG_ACTION_MAX_BYTES)
          throw new ActionError(400, `lines: ${bytes} bytes, more than one task-log action appends (${TASK_LOG_ACTION_MAX_BYTES}); send them in several`);
        taskLogs.append(alloc, a.task, a.type, a.lines);
        const file = taskLogs.file(alloc, a.task, a.type);
        return { AllocID: alloc.ID, Task: a.task, Type: a.type, Size: file?.content.length ?? 0 };
      },
    }),
  };
}

export type SchedulerActions = ReturnType<typeof schedulerActions>;
