/**
 * What an operator does to a node and an allocation through Nomad's API:
 * scheduling eligibility, drains, purge, and stopping one allocation
 * (scheduler-breadth-nomad.md §5 and §3.4; Nomad's node_endpoint.go,
 * drainer/*.go, alloc_endpoint.go).
 *
 * The drainer runs on the virtual clock as persistent timers, so drains
 * survive snapshots and replay byte for byte. Each pass migrates, per service
 * group, up to the group's `migrate.max_parallel` allocations (stopped with
 * "alloc is being migrated", replaced through a `node-drain` evaluation on an
 * eligible node), and the next pass comes once the replacements can have
 * become healthy: the time to schedule and start them plus the group's
 * `migrate.min_healthy_time`. Batch allocations are left to finish and
 * stopped at the deadline; system allocations go last, unless
 * `IgnoreSystemJobs`. A finished drain leaves the node ineligible.
 */
import type { ServiceContext } from "../../core/context.js";
import { formatInstant } from "../../core/instant.js";
import { CodedError, NON_TERMINAL_CLIENT, type SchedulerEngine } from "../engine/index.js";
import { jobKey, type AllocRow, type JobRow, type NodeRow, type SchedulerState } from "../state/model.js";

export const DRAIN_TIMER = "scheduler.node-drain";
export const DRAIN_DEADLINE_TIMER = "scheduler.node-drain-deadline";
/** Nomad keeps a node's last 10 events (structs.MaxRetainedNodeEvents). */
const MAX_NODE_EVENTS = 10;
/** The drainer batches its allocation transitions for a second (BatchUpdateInterval). */
const DRAIN_BATCH_MS = 1000;
/** api.DefaultMigrateStrategy's min_healthy_time: 10 s. */
const DEFAULT_MIGRATE_MIN_HEALTHY_NS = 10_000_000_000;

/** The answer of the eligibility, drain and purge writes (Node*UpdateResponse). */
export type NodeUpdateAnswer = { EvalCreateIndex: number; EvalIDs: string[] | null; Index: number; NodeModifyIndex: number };

type DrainStrategy = { Deadline: number; ForceDeadline: string | null; IgnoreSystemJobs: boolean; StartedAt: string };
type Group = { Name: string; Count: number; Migrate?: { MaxParallel?: number; MinHealthyTime?: number } | null };

export class NodeOperations {
  constructor(
    private readonly state: SchedulerState,
    private readonly ctx: ServiceContext,
    private readonly engine: SchedulerEngine,
    /** Milliseconds from an allocation's placement to its running (the timing's evalProcess + allocStart). */
    private readonly startupMs: () => number,
  ) {
    ctx.clock.handle(DRAIN_TIMER, (t) => this.drainPass(t.subject));
    ctx.clock.handle(DRAIN_DEADLINE_TIMER, (t) => this.deadlineReached(t.subject));
  }

  /** `PUT /v1/node/:id/eligibility`: the same value is a no-op with an all-zero answer. */
  setEligibility(nodeId: string, eligibility: string): NodeUpdateAnswer {
    if (eligibility !== "eligible" && eligibility !== "ineligible") throw new CodedError(500, `invalid scheduling eligibility "${eligibility}"`);
    const node = this.node(nodeId);
    if (node.DrainStrategy && eligibility === "eligible") throw new CodedError(500, "can not set node's scheduling eligibility to eligible while it is draining");
    if (node.SchedulingEligibility === eligibility) return { EvalCreateIndex: 0, EvalIDs: null, Index: 0, NodeModifyIndex: 0 };
    return this.ctx.store.write(() => {
      const updated = this.putNode(node, { SchedulingEligibility: eligibility }, { Subsystem: "Cluster", Message: `Node marked as ${eligibility} for scheduling` });
      const evals = eligibility === "eligible" ? this.nodeEvals(updated) : [];
      return this.answer(updated, evals);
    });
  }

  /** `PUT /v1/node/:id/drain`: a DrainSpec starts or updates a drain; null cancels it. */
  updateDrain(nodeId: string, spec: { Deadline: number; IgnoreSystemJobs: boolean } | null, markEligible: boolean, meta: Record<string, string> | null): NodeUpdateAnswer {
    const node = this.node(nodeId);
    const now = this.ctx.clock.now();
    return this.ctx.store.write(() => {
      this.ctx.clock.cancelFor(DRAIN_TIMER, node.ID);
      this.ctx.clock.cancelFor(DRAIN_DEADLINE_TIMER, node.ID);
      if (spec === null) {
        const lastDrain = node.LastDrain as Record<string, unknown> | null;
        const updated = this.putNode(
          node,
          {
            Drain: false,
            DrainStrategy: null,
            SchedulingEligibility: markEligible ? "eligible" : node.SchedulingEligibility,
            LastDrain: lastDrain && node.DrainStrategy ? { ...lastDrain, Status: "canceled", UpdatedAt: wholeSeconds(now) } : lastDrain,
          },
          { Subsystem: "Drain", Message: "Node drain disabled" },
        );
        return this.answer(updated, markEligible && node.SchedulingEligibility !== "eligible" ? this.nodeEvals(updated) : []);
      }
      const previous = node.DrainStrategy as DrainStrategy | null;
      const strategy: DrainStrategy = {
        Deadline: spec.Deadline,
        ForceDeadline: spec.Deadline > 0 ? formatInstant(now + Math.ceil(spec.Deadline / 1e6)) : spec.Deadline < 0 ? formatInstant(now) : null,
        IgnoreSystemJobs: spec.IgnoreSystemJobs,
        StartedAt: previous?.StartedAt ?? formatInstant(now),
      };
      const updated = this.putNode(
        node,
        {
          Drain: true,
          DrainStrategy: strategy,
          SchedulingEligibility: "ineligible",
          LastDrain: {
            AccessorID: "",
            Meta: meta,
            StartedAt: previous ? (node.LastDrain as { StartedAt: string }).StartedAt : wholeSeconds(now),
            Status: "draining",
            UpdatedAt: wholeSeconds(now),
          },
        },
        { Subsystem: "Drain", Message: previous ? "Node drain strategy updated" : "Node drain strategy set" },
      );
      if (spec.Deadline < 0) this.deadlineReached(node.ID);
      else {
        if (spec.Deadline > 0) this.ctx.clock.schedule({ at: now + Math.ceil(spec.Deadline / 1e6), kind: DRAIN_DEADLINE_TIMER, subject: node.ID });
        this.ctx.clock.schedule({ at: now + DRAIN_BATCH_MS, kind: DRAIN_TIMER, subject: node.ID });
      }
      return this.answer(updated, []);
    });
  }

  /**
   * `PUT /v1/node/:id/evaluate` (Node.Evaluate): node-update evaluations for
   * the jobs with allocations on the node and every system job; the answer's
   * index is the evaluations' (0 when there are none), its NodeModifyIndex unset.
   */
  evaluate(nodeId: string): NodeUpdateAnswer {
    const node = this.node(nodeId);
    return this.ctx.store.write(() => {
      const evals = this.nodeEvals(node);
      const index = evals[0]?.CreateIndex ?? 0;
      return { EvalCreateIndex: index, EvalIDs: evals.length ? evals.map((e) => e.ID) : null, Index: index, NodeModifyIndex: 0 };
    });
  }

  /** `PUT /v1/node/:id/purge`: the node is deregistered; its allocations are lost and replaced. */
  purge(nodeId: string): NodeUpdateAnswer {
    const node = this.node(nodeId);
    return this.ctx.store.write(() => {
      this.ctx.clock.cancelFor(DRAIN_TIMER, node.ID);
      this.ctx.clock.cancelFor(DRAIN_DEADLINE_TIMER, node.ID);
      const jobs = this.jobsOnNode(node.ID);
      for (const alloc of this.state.allocsOnNode(node.ID)) {
        if (alloc.DesiredStatus !== "run" || !NON_TERMINAL_CLIENT.has(alloc.ClientStatus)) continue;
        this.engine.loseAlloc(alloc, "alloc is lost since its node is down");
      }
      this.state.nodes.delete(node.ID);
      this.ctx.events.record("node.purged", { service: "scheduler", subject: node.ID });
      const evals = this.evalsFor(jobs, node);
      const index = this.ctx.store.writeIndex();
      return { EvalCreateIndex: evals[0]?.CreateIndex ?? 0, EvalIDs: evals.length ? evals.map((e) => e.ID) : null, Index: index, NodeModifyIndex: index };
    });
  }

  /**
   * `PUT /v1/allocation/:id/stop` (Alloc.Stop): the allocation is marked for
   * migration and stopped; an `alloc-stop` evaluation places its replacement.
   */
  stopAllocation(alloc: AllocRow, noShutdownDelay = false): { EvalID: string; Index: number } {
    return this.ctx.store.write(() => {
      const job = this.state.job(alloc.Namespace, alloc.JobID);
      this.ctx.events.record("alloc.desired-transition", { service: "scheduler", subject: alloc.ID, detail: { migrate: true } });
      this.migrate(alloc, noShutdownDelay ? { NoShutdownDelay: true } : {});
      const evaluation = job ? this.engine.createEval(job, "alloc-stop") : undefined;
      return { EvalID: evaluation?.ID ?? "", Index: this.ctx.store.writeIndex() };
    });
  }

  // ---- the drainer ---------------------------------------------------------------------------

  private drainPass(nodeId: string): unknown {
    const node = this.state.nodes.get(nodeId);
    const strategy = node?.DrainStrategy as DrainStrategy | null | undefined;
    if (!node || !strategy) return { node: nodeId, draining: false };
    return this.ctx.store.write(() => {
      const live = this.liveAllocs(node.ID);
      const jobs = new Map<string, JobRow>();
      let nextPassMs = DRAIN_BATCH_MS;
      // Service groups: max_parallel at a time, each batch after the last one's replacements are healthy.
      const byGroup = new Map<string, AllocRow[]>();
      for (const alloc of live) {
        const job = this.state.job(alloc.Namespace, alloc.JobID);
        if (!job || job.Type !== "service") continue;
        const key = `${jobKey(alloc.Namespace, alloc.JobID)}\u0000${alloc.TaskGroup}`;
        const group = byGroup.get(key);
        if (group) group.push(alloc);
        else byGroup.set(key, [alloc]);
        jobs.set(jobKey(job.Namespace, job.ID), job);
      }
      const migrated: string[] = [];
      for (const allocs of byGroup.values()) {
        const job = jobs.get(jobKey(allocs[0]!.Namespace, allocs[0]!.JobID))!;
        const group = (job.TaskGroups as unknown as Group[]).find((g) => g.Name === allocs[0]!.TaskGroup);
        const maxParallel = Math.max(1, Number(group?.Migrate?.MaxParallel ?? 1));
        for (const alloc of allocs.slice(0, maxParallel)) {
          this.migrate(alloc);
          migrated.push(alloc.ID);
        }
        const minHealthyMs = Math.ceil(Number(group?.Migrate?.MinHealthyTime ?? DEFAULT_MIGRATE_MIN_HEALTHY_NS) / 1e6);
        nextPassMs = Math.max(nextPassMs, this.startupMs() + minHealthyMs);
      }
      const drainEvals = this.evalsFor([...jobs.values()], node, "node-drain");
      // Done with everything but batch (left to finish) and system allocations, once a pass finds
      // nothing more to migrate: system ones go last.
      const remaining = this.liveAllocs(node.ID);
      const blocking = remaining.filter((a) => !this.isSystem(a));
      if (blocking.length === 0 && migrated.length === 0) {
        const system = strategy.IgnoreSystemJobs ? [] : remaining.filter((a) => this.isSystem(a));
        for (const alloc of system) this.migrate(alloc);
        this.complete(node, false);
        return { node: node.ID, migrated: [...migrated, ...system.map((a) => a.ID)], complete: true };
      }
      const batchOnly = blocking.every((a) => this.state.job(a.Namespace, a.JobID)?.Type === "batch");
      // Only batch work left: look again after a while (it finishes by itself, or the deadline stops it).
      this.ctx.clock.schedule({ at: this.ctx.clock.now() + (batchOnly && migrated.length === 0 ? 10 * DRAIN_BATCH_MS : nextPassMs), kind: DRAIN_TIMER, subject: node.ID });
      return { node: node.ID, migrated, evals: drainEvals.map((e) => e.ID) };
    });
  }

  private deadlineReached(nodeId: string): unknown {
    const node = this.state.nodes.get(nodeId);
    const strategy = node?.DrainStrategy as DrainStrategy | null | undefined;
    if (!node || !strategy) return { node: nodeId, draining: false };
    return this.ctx.store.write(() => {
      const forced = this.liveAllocs(node.ID).filter((a) => !(strategy.IgnoreSystemJobs && this.isSystem(a)));
      const jobs = new Map<string, JobRow>();
      for (const alloc of forced) {
        this.migrate(alloc);
        const job = this.state.job(alloc.Namespace, alloc.JobID);
        if (job && job.Type !== "system" && job.Type !== "sysbatch") jobs.set(jobKey(job.Namespace, job.ID), job);
      }
      this.evalsFor([...jobs.values()], node, "node-drain");
      this.ctx.clock.cancelFor(DRAIN_TIMER, node.ID);
      this.complete(node, true);
      return { node: node.ID, forced: forced.map((a) => a.ID), complete: true };
    });
  }

  private complete(node: NodeRow, deadlineReached: boolean): void {
    this.ctx.clock.cancelFor(DRAIN_DEADLINE_TIMER, node.ID);
    const current = this.state.nodes.get(node.ID)!;
    const lastDrain = current.LastDrain as Record<string, unknown> | null;
    this.putNode(
      current,
      { Drain: false, DrainStrategy: null, LastDrain: { ...lastDrain, Status: "complete", UpdatedAt: wholeSeconds(this.ctx.clock.now()) } },
      { Subsystem: "Drain", Message: "Node drain complete", Details: deadlineReached ? { deadline_reached: "true" } : null },
    );
  }

  // ---- pieces ---------------------------------------------------------------------------------

  private migrate(alloc: AllocRow, extra: Record<string, unknown> = {}): void {
    const current = this.state.allocs.get(alloc.ID) ?? alloc;
    const transition = { ...(current.DesiredTransition as Record<string, unknown> | null), Migrate: true, ...extra };
    this.state.allocs.put(current.ID, { ...current, DesiredTransition: transition });
    this.engine.stopAlloc(this.state.allocs.get(current.ID)!, "alloc is being migrated");
  }

  private liveAllocs(nodeId: string): AllocRow[] {
    return this.state.allocsOnNode(nodeId).filter((a) => a.DesiredStatus === "run" && NON_TERMINAL_CLIENT.has(a.ClientStatus));
  }

  private isSystem(alloc: AllocRow): boolean {
    const type = this.state.job(alloc.Namespace, alloc.JobID)?.Type;
    return type === "system" || type === "sysbatch";
  }

  private node(nodeId: string): NodeRow {
    const node = this.state.nodes.get(nodeId);
    if (!node) throw new CodedError(500, "node not found");
    return node;
  }

  /** Writes the node's new fields and appends a node event (the last ten are kept). */
  private putNode(node: NodeRow, change: Partial<NodeRow>, event: { Subsystem: string; Message: string; Details?: Record<string, string> | null }): NodeRow {
    const index = this.ctx.store.writeIndex();
    const events = [
      ...((node.Events as unknown[] | null) ?? []),
      { CreateIndex: index, Details: event.Details ?? null, Message: event.Message, Subsystem: event.Subsystem, Timestamp: formatInstant(this.ctx.clock.now()) },
    ];
    const { CreateIndex: _c, ModifyIndex: _m, ...fields } = { ...node, ...change, Events: events.slice(-MAX_NODE_EVENTS) };
    this.ctx.events.record("node.updated", { service: "scheduler", subject: node.ID, detail: { message: event.Message } });
    return this.state.nodes.putIndexed(node.ID, fields);
  }

  /** Jobs with allocations on the node, by job key. */
  private jobsOnNode(nodeId: string): JobRow[] {
    const jobs = new Map<string, JobRow>();
    for (const alloc of this.state.allocsOnNode(nodeId)) {
      const job = this.state.job(alloc.Namespace, alloc.JobID);
      if (job) jobs.set(jobKey(job.Namespace, job.ID), job);
    }
    return [...jobs.values()];
  }

  /** Nomad's createNodeEvals: one per job with allocations on the node, plus every system job; blocked evaluations may fit now. */
  private nodeEvals(node: NodeRow) {
    const evals = this.evalsFor(this.jobsOnNode(node.ID), node);
    this.engine.unblock();
    return evals;
  }

  private evalsFor(jobs: readonly JobRow[], node: NodeRow, triggeredBy = "node-update") {
    const seen = new Set(jobs.map((j) => jobKey(j.Namespace, j.ID)));
    const system =
      triggeredBy === "node-update" ? this.state.jobs.sorted().filter((j) => (j.Type === "system" || j.Type === "sysbatch") && !seen.has(jobKey(j.Namespace, j.ID))) : [];
    return [...jobs, ...system].filter((j) => !j.Stop).map((job) => this.engine.createEval(job, triggeredBy, { NodeID: node.ID, NodeModifyIndex: node.ModifyIndex }));
  }

  private answer(node: NodeRow, evals: ReadonlyArray<{ ID: string; CreateIndex: number }>): NodeUpdateAnswer {
    const index = this.ctx.store.writeIndex();
    return { EvalCreateIndex: evals[0]?.CreateIndex ?? 0, EvalIDs: evals.length ? evals.map((e) => e.ID) : null, Index: index, NodeModifyIndex: node.ModifyIndex };
  }
}

/** DrainMetadata's times are whole seconds (time.Unix(updatedAt, 0)). */
function wholeSeconds(ms: number): string {
  return formatInstant(Math.floor(ms / 1000) * 1000);
}
