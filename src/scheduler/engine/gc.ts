/**
 * Nomad's core-scheduler garbage collection on the virtual clock
 * (nomad/core_sched.go evalGC, jobGC, deploymentGC, nodeGC; leader.go's
 * periodic GC; System.GarbageCollect's forced GC).
 *
 * How the passes are driven: each kind is a clock interval hook
 * (core/clock.ts `every`) ticking at the multiples of its interval (5m by
 * default) that a clock move crosses, in time order with the timers. A hook
 * is not a timer, so it is not in `fired`, `pendingTimers` or `nextTimerAt`
 * and `next` does not stop at it: what users saw of the clock before GC is
 * unchanged. Its instants are a function of the time alone, and what it
 * collects a function of the rows, so runs are deterministic and a
 * snapshot needs nothing more.
 *
 * Why the work is proportional to what is collected: every row that may
 * become collectable is queued (by Table.watch, as it changes) under the
 * instant it may first be collected at; a pass takes only the entries due
 * and checks each against the rows as they are then. An entry that is not
 * yet collectable is queued again at the instant that would change, or
 * dropped when only a later row change can (that change queues it again).
 * The queues are derived state: rebuilt from the rows after a restore or
 * when the thresholds change.
 *
 * Nomad's core evaluations (`_core`, namespace "-") live only in its eval
 * broker, never in the state, so no API shows them; standin has none either.
 */
import { MinHeap } from "../../core/heap.js";
import { parseDurationMs } from "../../core/durations.js";
import { jobKey, versionKey, type AllocRow, type DeploymentRow, type EvalRow, type JobRow, type NodeRow } from "../state/model.js";
import { CHECK_OVERRIDES_TABLE } from "../services/service-checks.js";
import { TASK_LOG_LINES_TABLE } from "../state/task-logs.js";
import { TIMERS } from "./constants.js";
import type { EngineCore } from "./core.js";
import { allocTerminal, deploymentActive, evalTerminal, gcEval, jobGCable } from "./gc-rules.js";
import { ForcedCollection, type ForcedCollector } from "./gc-force.js";
import { GC_DEFAULTS, type GcSetting, type GcSettings } from "./gc-settings.js";
import { refreshChildren } from "./summaries.js";

/** What jobGC decided: the jobs to reap, with their evaluations and allocations. */
export interface JobDecision {
  jobs: JobRow[];
  evalIds: string[];
  allocIds: string[];
}

type Entry = { readonly at: number; readonly id: string };

/** Candidates by the instant they may first be collected at. */
class CandidateQueue {
  private readonly heap = new MinHeap<Entry>((a, b) => a.at < b.at || (a.at === b.at && a.id < b.id));

  push(at: number, id: string): void {
    this.heap.push({ at, id });
  }

  dueAt(): number | null {
    return this.heap.peek()?.at ?? null;
  }

  /** The distinct ids due at `now`, sorted (the order a pass decides in must not depend on how the queue was built). */
  takeDue(now: number): string[] {
    const ids = new Set<string>();
    for (let head = this.heap.peek(); head && head.at <= now; head = this.heap.peek()) ids.add(this.heap.pop()!.id);
    return [...ids].sort();
  }

  clear(): void {
    this.heap.clear();
  }

  get size(): number {
    return this.heap.size;
  }
}

/** Evaluation-queue ids: an evaluation itself, or an allocation that wakes its evaluation. */
const EVAL = "e:";
const ALLOC = "a:";

export class GarbageCollector implements ForcedCollector {
  private readonly evals = new CandidateQueue();
  private readonly jobs = new CandidateQueue();
  private readonly deployments = new CandidateQueue();
  private readonly nodes = new CandidateQueue();
  /** The settings the queues were built with; other settings (or a restore) mean a rebuild. */
  private builtWith: GcSettings | undefined | null = null;
  /** A forced collection is queued and has not started (forceLater). */
  private forcedWaiting = false;

  constructor(private readonly core: EngineCore) {
    const { state, ctx } = core;
    state.evals.watch((_id, row) => row && this.queueEval(row));
    state.allocs.watch((_id, row, previous) => {
      if (row) this.queueAlloc(row);
      // An in-place update moves a live allocation to the new deployment: the old one may have none left.
      if (previous?.DeploymentID && previous.DeploymentID !== row?.DeploymentID) this.queueDeploymentById(previous.DeploymentID);
    });
    state.jobs.watch((key, row) => this.queueJob(key, row));
    state.deployments.watch((_id, row) => row && this.queueDeployment(row));
    state.nodes.watch((_id, row) => row && this.queueNode(row));
    ctx.store.onRestore(() => {
      this.builtWith = null;
      // A restore forgets deferred work (core/deferred-writes), a queued collection with it.
      this.forcedWaiting = false;
    });
    const every = (name: string, interval: GcSetting, queue: CandidateQueue, pass: (at: number) => void) =>
      ctx.clock.every(`scheduler.gc.${name}`, {
        intervalMs: () => this.setting(interval),
        dueAt: () => {
          this.fresh();
          return queue.dueAt();
        },
        run: (at) => {
          this.fresh();
          pass(at);
        },
      });
    // Job GC before the others at a shared instant, as forceGC orders them; node GC last (its allocations cleared first).
    every("job", "jobGCInterval", this.jobs, (at) => this.jobPass(at));
    every("eval", "evalGCInterval", this.evals, (at) => this.evalPass(at));
    every("deployment", "deploymentGCInterval", this.deployments, (at) => this.deploymentPass(at));
    every("node", "nodeGCInterval", this.nodes, (at) => this.nodePass(at));
  }

  /** Candidates queued (derived state, for tests of boundedness). */
  queued(): number {
    this.fresh();
    return this.evals.size + this.jobs.size + this.deployments.size + this.nodes.size;
  }

  /**
   * System.GarbageCollect: everything collectable whatever its age, in forceGC's order, collected
   * after the request is answered, in slices of at most Nomad's reap size (gc-force.ts).
   */
  forceLater(): void {
    // A collection not yet started will find what this request would: many requests queue one, not many.
    if (this.forcedWaiting) return;
    this.fresh();
    const { state, ctx } = this.core;
    const collection = new ForcedCollection(this, state, (fn) => ctx.store.write(fn), ctx.clock.now());
    this.forcedWaiting = true;
    ctx.store.defer(() => {
      this.forcedWaiting = false;
      return collection.step();
    });
  }

  // ---- the periodic passes ----

  private jobPass(at: number): void {
    const keys = this.jobs.takeDue(at);
    if (keys.length > 0) this.core.ctx.store.write(() => this.reapJobGC(this.decideJobs(keys, at, this.setting("jobGCThreshold"))));
  }

  private evalPass(at: number): void {
    const ids = this.evals.takeDue(at);
    if (ids.length === 0) return;
    const { state } = this.core;
    const evalIds = new Set<string>();
    for (const id of ids) {
      if (id.startsWith(EVAL)) evalIds.add(id.slice(EVAL.length));
      else {
        const alloc = state.allocs.get(id.slice(ALLOC.length));
        if (alloc) evalIds.add(alloc.EvalID);
      }
    }
    this.core.ctx.store.write(() => {
      const { evalIds: evals, allocIds } = this.decideEvals([...evalIds].sort(), at, undefined);
      this.reapEvals(evals, allocIds);
    });
  }

  private deploymentPass(at: number): void {
    const ids = this.deployments.takeDue(at);
    if (ids.length > 0) this.core.ctx.store.write(() => this.reapDeployments(this.decideDeployments(ids, this.setting("deploymentGCThreshold"), at)));
  }

  private nodePass(at: number): void {
    const ids = this.nodes.takeDue(at);
    if (ids.length > 0) this.core.ctx.store.write(() => this.reapNodes(this.decideNodes(ids, this.setting("nodeGCThreshold"), at)));
  }

  // ---- the collections (decided on the rows as they are, then reaped inside a write) ----

  /** jobGC over `keys`: a GC-able job created before the cutoff whose evaluations all go (with allowBatch). */
  decideJobs(keys: readonly string[], now: number, threshold: number): JobDecision {
    const { state } = this.core;
    const cutoff = now - threshold;
    const jobs: JobRow[] = [];
    const evalIds: string[] = [];
    const allocIds: string[] = [];
    for (const key of keys) {
      const job = state.jobs.get(key);
      if (!job || !jobGCable(job)) continue;
      if (job.SubmitTime > cutoff) {
        this.jobs.push(job.SubmitTime + threshold, key);
        continue;
      }
      const jobEvals: string[] = [];
      const jobAllocs: string[] = [];
      let all = true;
      for (const evaluation of state.evalsOfJob(job.Namespace, job.ID)) {
        const verdict = gcEval(state, evaluation, cutoff, threshold, true, now);
        if (!verdict.collect) {
          all = false;
          if (verdict.retryAt !== null && Number.isFinite(verdict.retryAt)) this.jobs.push(verdict.retryAt, key);
          break;
        }
        jobEvals.push(evaluation.ID);
        jobAllocs.push(...verdict.allocIds);
      }
      if (!all) continue;
      jobs.push(job);
      evalIds.push(...jobEvals);
      allocIds.push(...jobAllocs);
    }
    return { jobs, evalIds, allocIds };
  }

  private reapJobGC(decision: JobDecision): void {
    this.reapEvals(decision.evalIds, decision.allocIds);
    this.reapJobs(decision.jobs);
  }

  /** evalGC over `ids` (`threshold` undefined: each evaluation's own, batch or not). */
  decideEvals(ids: readonly string[], now: number, threshold: number | undefined): { evalIds: string[]; allocIds: string[] } {
    const { state } = this.core;
    const evalIds: string[] = [];
    const allocIds: string[] = [];
    for (const id of ids) {
      const evaluation = state.evals.get(id);
      if (!evaluation) continue;
      const own = threshold ?? this.evalThreshold(evaluation.Type);
      const verdict = gcEval(state, evaluation, now - own, own, false, now);
      if (verdict.collect) evalIds.push(id);
      allocIds.push(...verdict.allocIds);
      if (!verdict.collect && verdict.retryAt !== null && Number.isFinite(verdict.retryAt)) this.evals.push(verdict.retryAt, EVAL + id);
    }
    return { evalIds, allocIds };
  }

  /** deploymentGC: a terminal deployment old enough that no live allocation references. */
  decideDeployments(ids: readonly string[], threshold: number, now: number): string[] {
    const { state } = this.core;
    const cutoff = now - threshold;
    const gone: string[] = [];
    for (const id of ids) {
      const deployment = state.deployments.get(id);
      if (!deployment || deploymentActive(deployment)) continue;
      if (deployment.ModifyTime > cutoff) {
        this.deployments.push(deployment.ModifyTime + threshold, id);
        continue;
      }
      if (state.allocsOfDeployment(id).some((a) => !allocTerminal(a))) continue;
      gone.push(id);
    }
    return gone;
  }

  /** Deployment.Reap. */
  reapDeployments(ids: readonly string[]): void {
    for (const id of ids) this.core.state.deployments.delete(id);
  }

  /** nodeGC: a down node, down long enough, with no live allocation. */
  decideNodes(ids: readonly string[], threshold: number, now: number): string[] {
    const { state } = this.core;
    const cutoff = now - threshold;
    const gone: string[] = [];
    for (const id of ids) {
      const node = state.nodes.get(id);
      if (node?.Status !== "down") continue;
      if (downSince(node) > cutoff) {
        this.nodes.push(downSince(node) + threshold, id);
        continue;
      }
      if (state.allocsOnNode(id).some((a) => !allocTerminal(a))) continue;
      gone.push(id);
    }
    return gone;
  }

  /** Node.BatchDeregister. */
  reapNodes(gone: readonly string[]): void {
    if (gone.length === 0) return;
    const { state, ctx } = this.core;
    // Node.BatchDeregister: a raft message Nomad's state store maps to no event type (nomad/state/events.go
    // MsgTypeEvents has Node.Deregister's, a purge's, only), so the stream says nothing of a collected node.
    ctx.events.record("node.collected", { service: "scheduler", subject: gone.join(","), detail: { gc: true, count: gone.length } });
    for (const id of gone) state.nodes.delete(id);
  }

  /** Eval.Reap: the evaluations and allocations deleted, with what standin keeps per allocation (action-made log lines, check results). */
  reapEvals(evalIds: readonly string[], allocIds: readonly string[]): void {
    const { state, ctx } = this.core;
    for (const id of allocIds) state.allocs.delete(id);
    for (const id of evalIds) state.evals.delete(id);
    if (allocIds.length === 0) return;
    // Rows only the `task-log` and `nomad-check-status` actions write: these tables are empty or small, so a scan is cheap.
    const gone = new Set(allocIds);
    for (const name of [TASK_LOG_LINES_TABLE, CHECK_OVERRIDES_TABLE]) {
      const table = ctx.store.table<{ AllocID: string }>(name);
      if (table.size === 0) continue;
      for (const key of [...table.ids()]) if (gone.has(table.get(key)!.AllocID)) table.delete(key);
    }
  }

  /** Job.BatchDeregister with purge. */
  reapJobs(jobs: readonly JobRow[]): void {
    for (const job of jobs) this.reapJob(job);
  }

  /** One job: its versions, summary and scaling events go; its parent counts one child fewer. */
  private reapJob(job: JobRow): void {
    const { state, ctx } = this.core;
    const key = jobKey(job.Namespace, job.ID);
    state.jobs.delete(key);
    for (const version of state.jobVersions(job.Namespace, job.ID)) state.versions.delete(versionKey(job.Namespace, job.ID, version.Version));
    state.summaries.delete(key);
    state.scalingEvents.delete(key);
    ctx.clock.cancelFor(TIMERS.periodic, key);
    if (typeof job.ParentID === "string" && job.ParentID !== "") refreshChildren(this.core, job.Namespace, job.ParentID);
  }

  // ---- queueing (Table.watch) ----

  private queueEval(row: EvalRow): void {
    if (this.builtWith === null || !evalTerminal(row)) return;
    this.evals.push(row.ModifyTime + this.evalThreshold(row.Type), EVAL + row.ID);
  }

  private queueAlloc(row: AllocRow): void {
    if (this.builtWith === null || !allocTerminal(row)) return;
    const { state } = this.core;
    // Wakes its evaluation at the earliest it could go (the evaluation's type, not the job's, picks the threshold).
    this.evals.push(row.ModifyTime + Math.min(this.setting("evalGCThreshold"), this.setting("batchEvalGCThreshold")), ALLOC + row.ID);
    const deployment = row.DeploymentID ? state.deployments.get(row.DeploymentID) : undefined;
    if (deployment) this.queueDeployment(deployment);
    const node = state.nodes.get(row.NodeID);
    if (node && node.Status === "down") this.nodes.push(Math.max(downSince(node) + this.setting("nodeGCThreshold"), row.ModifyTime), node.ID);
  }

  private queueJob(key: string, row: JobRow | undefined): void {
    if (this.builtWith === null) return;
    if (row && jobGCable(row)) this.jobs.push(row.SubmitTime + this.setting("jobGCThreshold"), key);
    // A batch evaluation's fate depends on its job (alive, dead, stopped, gone, re-registered): look at them again.
    if (!row || isBatch(row)) {
      const [namespace, id] = key.split("\u0000") as [string, string];
      for (const evaluation of this.core.state.evalsOfJob(namespace, id)) if (evaluation.Type === "batch") this.queueEval(evaluation);
    }
  }

  private queueDeployment(row: DeploymentRow): void {
    if (this.builtWith === null || deploymentActive(row)) return;
    this.deployments.push(row.ModifyTime + this.setting("deploymentGCThreshold"), row.ID);
  }

  private queueDeploymentById(id: string): void {
    const deployment = this.core.state.deployments.get(id);
    if (deployment) this.queueDeployment(deployment);
  }

  private queueNode(row: NodeRow): void {
    if (this.builtWith === null || row.Status !== "down") return;
    this.nodes.push(downSince(row) + this.setting("nodeGCThreshold"), row.ID);
  }

  /** Rebuilds the queues from the rows when they were built for other settings or before a restore. */
  private fresh(): void {
    const settings = this.core.gc?.();
    if (this.builtWith !== null && this.builtWith === settings) return;
    this.builtWith = settings;
    for (const queue of [this.evals, this.jobs, this.deployments, this.nodes]) queue.clear();
    const { state } = this.core;
    for (const row of state.evals.values()) this.queueEval(row);
    for (const row of state.allocs.values())
      if (allocTerminal(row)) this.evals.push(row.ModifyTime + Math.min(this.setting("evalGCThreshold"), this.setting("batchEvalGCThreshold")), ALLOC + row.ID);
    for (const key of state.jobs.ids()) {
      const row = state.jobs.get(key)!;
      if (jobGCable(row)) this.jobs.push(row.SubmitTime + this.setting("jobGCThreshold"), key);
    }
    for (const row of state.deployments.values()) this.queueDeployment(row);
    for (const row of state.nodes.values()) this.queueNode(row);
  }

  private evalThreshold(type: string): number {
    return this.setting(type === "batch" ? "batchEvalGCThreshold" : "evalGCThreshold");
  }

  private setting(name: GcSetting): number {
    return parseDurationMs(this.core.gc?.()?.[name] ?? GC_DEFAULTS[name]);
  }
}

const isBatch = (job: JobRow) => job.Type === "batch";

/**
 * When nodeGC counts a node down from: Nomad keeps StatusUpdatedAt in whole
 * seconds (`time.Unix(node.StatusUpdatedAt, 0)`), so a node that went down
 * at 10:00:00.700 is as old, to a pass, as one that went down at 10:00:00.
 */
const downSince = (node: NodeRow) => Math.floor(node.StatusUpdatedAt / 1000) * 1000;
