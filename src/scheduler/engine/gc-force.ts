/**
 * `PUT /v1/system/gc` as Nomad runs it: System.GarbageCollect enqueues a
 * `force-gc` core evaluation and answers; the core scheduler then runs job,
 * evaluation, deployment and node GC with every object old enough
 * (nomad/core_sched.go forceGC) and reaps what they found in requests of at
 * most `structs.MaxUUIDsPerWriteRequest` IDs (partitionEvalReap: the
 * allocations first, then the evaluations; partitionJobReap,
 * partitionDeploymentReap, and the nodes likewise).
 *
 * Here each of those requests is one store write, deferred to a turn of the
 * event loop of its own (core/deferred-writes), so 100,000 objects never hold
 * every port at once. The decisions are made a bounded number of candidates
 * at a time, on the rows as they are then: nothing else writes between the
 * slices (any write, clock move, snapshot or scheduler request settles the
 * rest first), so they see what Nomad's snapshot would, less what this
 * collection already reaped.
 */
import type { JobRow, SchedulerState } from "../state/model.js";

/** structs.MaxUUIDsPerWriteRequest: (1024 × 256) / 36, a quarter MB of UUIDs. */
export const MAX_IDS_PER_REAP = 7281;

/** What the collection asks of the collector (engine/gc.ts). */
export interface ForcedCollector {
  decideJobs(keys: readonly string[], now: number, threshold: number): { jobs: JobRow[]; evalIds: string[]; allocIds: string[] };
  decideEvals(ids: readonly string[], now: number, threshold: number | undefined): { evalIds: string[]; allocIds: string[] };
  decideDeployments(ids: readonly string[], threshold: number, now: number): string[];
  decideNodes(ids: readonly string[], threshold: number, now: number): string[];
  reapEvals(evalIds: readonly string[], allocIds: readonly string[]): void;
  reapJobs(jobs: readonly JobRow[]): void;
  reapDeployments(ids: readonly string[]): void;
  reapNodes(ids: readonly string[]): void;
}

/** A threshold of −∞ puts the cutoff at +∞: every object is old enough (the forced GC's threshold). */
const ANY_AGE = Number.NEGATIVE_INFINITY;

/** A reap: one write of at most MAX_IDS_PER_REAP deletions (a step of its own; the decisions over a batch of candidates are another). */
type Slice = () => void;

export class ForcedCollection {
  private readonly slices: Generator<void, void, undefined>;

  constructor(
    private readonly collector: ForcedCollector,
    private readonly state: SchedulerState,
    private readonly write: (fn: () => void) => void,
    /** The instant the core evaluation runs at (the clock cannot move before the collection is done). */
    private readonly now: number,
  ) {
    this.slices = this.run();
  }

  /** Runs the next slice; true when there is nothing left. */
  step(): boolean {
    return this.slices.next().done === true;
  }

  /** forceGC's order: jobs, evaluations, deployments, then nodes (their allocations cleared first). */
  private *run(): Generator<void, void, undefined> {
    const { collector, state, now } = this;
    const jobWeight = (key: string) => {
      const job = state.jobs.get(key);
      if (!job) return 1;
      const counts = state.jobCounts(job.Namespace, job.ID);
      return 1 + counts.evals + counts.allocs;
    };
    for (const keys of weighed([...state.jobs.ids()].sort(), jobWeight)) {
      const decided = collector.decideJobs(keys, now, ANY_AGE);
      yield;
      yield* this.reapEvalsAndAllocs(decided.evalIds, decided.allocIds);
      for (const jobs of batches(decided.jobs)) yield* this.slice(() => collector.reapJobs(jobs));
    }
    for (const ids of weighed([...state.evals.ids()].sort(), (id) => 1 + state.allocsOfEval(id).length)) {
      // Only those still here: job GC may have reaped some since the list was taken.
      const decided = collector.decideEvals(ids, now, ANY_AGE);
      yield;
      yield* this.reapEvalsAndAllocs(decided.evalIds, decided.allocIds);
    }
    for (const ids of batches([...state.deployments.ids()].sort())) {
      const gone = collector.decideDeployments(ids, ANY_AGE, now);
      yield;
      if (gone.length > 0) yield* this.slice(() => collector.reapDeployments(gone));
    }
    for (const ids of batches([...state.nodes.ids()].sort())) {
      const gone = collector.decideNodes(ids, ANY_AGE, now);
      yield;
      if (gone.length > 0) yield* this.slice(() => collector.reapNodes(gone));
    }
  }

  /** partitionEvalReap: allocations first, then evaluations, at most MAX_IDS_PER_REAP a request. */
  private *reapEvalsAndAllocs(evalIds: readonly string[], allocIds: readonly string[]): Generator<void, void, undefined> {
    let allocs = 0;
    let evals = 0;
    while (allocs < allocIds.length || evals < evalIds.length) {
      const allocPart = allocIds.slice(allocs, allocs + MAX_IDS_PER_REAP);
      allocs += allocPart.length;
      const evalPart = evalIds.slice(evals, evals + (MAX_IDS_PER_REAP - allocPart.length));
      evals += evalPart.length;
      yield* this.slice(() => this.collector.reapEvals(evalPart, allocPart));
    }
  }

  private *slice(reap: Slice): Generator<void, void, undefined> {
    this.write(reap);
    yield;
  }
}

/**
 * The candidates one step decides on: as many as look at MAX_IDS_PER_REAP rows together (a job its
 * evaluations and allocations, an evaluation its allocations), weighed as the run reaches them; a
 * candidate heavier than that alone is a step of its own.
 */
function* weighed(keys: readonly string[], weight: (key: string) => number): Generator<string[], void, undefined> {
  let run: string[] = [];
  let rows = 0;
  for (const key of keys) {
    const w = weight(key);
    if (run.length > 0 && rows + w > MAX_IDS_PER_REAP) {
      yield run;
      run = [];
      rows = 0;
    }
    run.push(key);
    rows += w;
  }
  if (run.length > 0) yield run;
}

/** `items` in runs of at most MAX_IDS_PER_REAP (the candidates one slice decides on). */
function* batches<T>(items: readonly T[]): Generator<T[], void, undefined> {
  for (let at = 0; at < items.length; at += MAX_IDS_PER_REAP) yield items.slice(at, at + MAX_IDS_PER_REAP);
}
