/**
 * Job register and deregister: the writes that start every pass of the
 * engine. A new or changed spec becomes a new job version; a periodic or
 * parameterized parent only arms its launches, any other job gets an eval.
 */
import { specChanged } from "../jobspec/index.js";
import { jobKey, versionKey, type JobRow } from "../state/model.js";
import { TIMERS } from "./constants.js";
import type { EngineCore, RegisterResult } from "./core.js";
import { createEval } from "./evaluations.js";
import { isParentJob } from "./job-kinds.js";
import { schedulePeriodic } from "./periodic-schedule.js";
import { ensureSummaryGroups, initSummary, refreshJobStatus } from "./summaries.js";
import { storeVersion } from "./versions.js";

/**
 * Upserts a canonical job. A changed (or new) spec (`specChanged`) becomes
 * a new version written with its eval in one index; an unchanged spec keeps
 * its version and only gets an eval. `alwaysNewVersion` writes a new
 * version even for an unchanged spec (revert, dispatch, periodic launch,
 * scale).
 */
export function register(core: EngineCore, job: Record<string, unknown>, { alwaysNewVersion = false, triggeredBy = "job-register" } = {}): RegisterResult {
  const { state, ctx } = core;
  return ctx.store.write(() => {
    const ns = job.Namespace as string;
    const id = job.ID as string;
    const existing = state.job(ns, id);
    let row = existing;
    if (!existing || alwaysNewVersion || specChanged(existing, job)) {
      const index = ctx.store.writeIndex();
      row = {
        ...(job as JobRow),
        Status: "pending",
        StatusDescription: "",
        Stable: false,
        Version: existing ? existing.Version + 1 : 0,
        SubmitTime: ctx.clock.now(),
        CreateIndex: existing?.CreateIndex ?? index,
        ModifyIndex: index,
        JobModifyIndex: index,
      };
      row = state.jobs.put(jobKey(ns, id), row);
      storeVersion(core, row);
      if (!state.summaries.get(jobKey(ns, id))) initSummary(core, row);
      else ensureSummaryGroups(core, row);
      ctx.events.record("job.registered", { service: "scheduler", subject: id, detail: { namespace: ns, version: row.Version } });
    }
    if (isParentJob(row!)) {
      schedulePeriodic(core, row!);
      refreshJobStatus(core, ns, id);
      const index = ctx.store.writeIndex();
      return { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: row!.JobModifyIndex, Index: index };
    }
    const evaluation = createEval(core, row!, triggeredBy);
    refreshJobStatus(core, ns, id);
    return { EvalID: evaluation.ID, EvalCreateIndex: evaluation.CreateIndex, JobModifyIndex: row!.JobModifyIndex, Index: evaluation.CreateIndex };
  });
}

/** Stops a job (a new version with Stop: true), or purges it; its allocations stop and its deployment is cancelled by the eval. */
export function deregister(core: EngineCore, namespace: string, id: string, purge: boolean): RegisterResult & { found: boolean } {
  const { state, ctx } = core;
  return ctx.store.write(() => {
    const existing = state.job(namespace, id);
    if (!existing) return { found: false, EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 };
    const index = ctx.store.writeIndex();
    let job: JobRow;
    if (purge) {
      state.jobs.delete(jobKey(namespace, id));
      for (const version of state.jobVersions(namespace, id)) state.versions.delete(versionKey(namespace, id, version.Version));
      state.summaries.delete(jobKey(namespace, id));
      state.scalingEvents.delete(jobKey(namespace, id));
      job = existing;
    } else {
      job = { ...existing, Stop: true, Version: existing.Version + 1, SubmitTime: ctx.clock.now(), ModifyIndex: index, JobModifyIndex: index, Stable: false };
      job = state.jobs.put(jobKey(namespace, id), job);
      storeVersion(core, job);
    }
    ctx.clock.cancelFor(TIMERS.periodic, jobKey(namespace, id));
    ctx.events.record(purge ? "job.purged" : "job.stopped", { service: "scheduler", subject: id, detail: { namespace } });
    if (isParentJob(existing)) return { found: true, EvalID: "", EvalCreateIndex: 0, JobModifyIndex: index, Index: index };
    // Nomad hard-codes the deregister eval's type to "service".
    const evaluation = createEval(core, job, "job-deregister", { Type: "service" });
    if (!purge) refreshJobStatus(core, namespace, id);
    return { found: true, EvalID: evaluation.ID, EvalCreateIndex: evaluation.CreateIndex, JobModifyIndex: index, Index: index };
  });
}
