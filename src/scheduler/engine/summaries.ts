/**
 * Job summaries (per group: queued, starting, running, complete, failed,
 * lost; a parent's children by status) and the job status derived from its
 * allocations and evals (Nomad's getJobStatus).
 */
import { jobKey, type JobRow, type TaskGroupSummary } from "../state/model.js";
import type { EngineCore, Group } from "./core.js";
import { isParentJob } from "./job-kinds.js";

export function initSummary(core: EngineCore, job: JobRow): void {
  const index = core.ctx.store.writeIndex();
  core.state.summaries.put(jobKey(job.Namespace, job.ID), {
    JobID: job.ID,
    Namespace: job.Namespace,
    Summary: Object.fromEntries((job.TaskGroups as unknown as Group[]).map((g) => [g.Name, emptyGroupSummary()])),
    Children: { Dead: 0, Pending: 0, Running: 0 },
    CreateIndex: index,
    ModifyIndex: index,
  });
}

export function ensureSummaryGroups(core: EngineCore, job: JobRow): void {
  const key = jobKey(job.Namespace, job.ID);
  const summary = core.state.summaries.get(key)!;
  const missing = (job.TaskGroups as unknown as Group[]).filter((g) => !summary.Summary[g.Name]);
  if (missing.length === 0) return;
  const index = core.ctx.store.writeIndex();
  core.state.summaries.put(key, { ...summary, Summary: { ...summary.Summary, ...Object.fromEntries(missing.map((g) => [g.Name, emptyGroupSummary()])) }, ModifyIndex: index });
}

export function bumpSummary(core: EngineCore, namespace: string, jobId: string, group: string, update: (s: TaskGroupSummary) => TaskGroupSummary): void {
  const key = jobKey(namespace, jobId);
  const summary = core.state.summaries.get(key);
  if (!summary) return;
  const index = core.ctx.store.writeIndex();
  core.state.summaries.put(key, { ...summary, Summary: { ...summary.Summary, [group]: update(summary.Summary[group] ?? emptyGroupSummary()) }, ModifyIndex: index });
}

export function setQueued(core: EngineCore, namespace: string, jobId: string, queued: Record<string, number>): void {
  for (const [group, count] of Object.entries(queued)) bumpSummary(core, namespace, jobId, group, (s) => (s.Queued === count ? s : { ...s, Queued: count }));
}

/** getJobStatus (§6.5). `evalDelete`: after a user's eval delete a job left with no allocation or eval is dead, not pending. */
export function refreshJobStatus(core: EngineCore, namespace: string, jobId: string, { evalDelete = false }: { evalDelete?: boolean } = {}): void {
  const { state, ctx } = core;
  const job = state.job(namespace, jobId);
  if (!job) return;
  // Counted from the store's groupings, not listed: this runs after every evaluation and allocation change,
  // and listing (and sorting) the job's rows each time made N reschedules or placements O(N²).
  const counts = state.jobCounts(namespace, jobId);
  let status: string;
  if (state.liveAllocCount(namespace, jobId) > 0) status = "running";
  else if (counts.openEvals > 0) status = "pending";
  else if (job.Type === "system") status = job.Stop ? "dead" : "running";
  else if (counts.allocs > 0 || counts.evals > 0) status = "dead";
  else if (isParentJob(job)) status = job.Stop ? "dead" : "running";
  else status = evalDelete ? "dead" : "pending";
  if (status !== job.Status) {
    const index = ctx.store.writeIndex();
    state.jobs.put(jobKey(namespace, jobId), { ...job, Status: status, ModifyIndex: index });
    ctx.events.record("job.status", { service: "scheduler", subject: jobId, detail: { namespace, status } });
  }
  if (job.ParentID) refreshChildren(core, namespace, job.ParentID as string);
}

/** A parent's summary counts its children by status (Pending, Running, Dead); collected children are no longer counted. */
export function refreshChildren(core: EngineCore, namespace: string, parentId: string): void {
  const { state, ctx } = core;
  const key = jobKey(namespace, parentId);
  const summary = state.summaries.get(key);
  if (!summary) return;
  const children = { Dead: 0, Pending: 0, Running: 0 };
  // The parent's own children only (an index): a scan of every job made each launch cost more than the last.
  for (const child of state.childrenOf(namespace, parentId)) {
    if (child.Status === "dead") children.Dead++;
    else if (child.Status === "running") children.Running++;
    else children.Pending++;
  }
  if (children.Dead === summary.Children.Dead && children.Pending === summary.Children.Pending && children.Running === summary.Children.Running) return;
  state.summaries.put(key, { ...summary, Children: children, ModifyIndex: ctx.store.writeIndex() });
}

function emptyGroupSummary(): TaskGroupSummary {
  return { Complete: 0, Failed: 0, Lost: 0, Queued: 0, Running: 0, Starting: 0, Unknown: 0 };
}
