/**
 * Job.Scale and scale status: a group's count set (a new version and a
 * `job-scaling` eval), with the scaling events kept per group.
 */
import { jobKey, nanos, TRACKED_SCALING_EVENTS, type ScalingEvent } from "../state/model.js";
import { ACTIVE_DEPLOYMENT, NON_TERMINAL_CLIENT } from "./constants.js";
import type { EngineCore, Group } from "./core.js";
import { CodedError } from "./errors.js";
import { register } from "./register.js";

/** Job.Scale: sets a group's count (a new version and an eval), refused during an active deployment. */
/**
 * `PUT /v1/job/:id/scale` (Nomad's Job.Scale): with a Count, the group is
 * re-registered at it and a `job-scaling` evaluation made; either way a
 * scaling event is recorded (newest first, 20 per group) and returned by
 * scale status. Without a Count (an autoscaler reporting, say, an error)
 * only the event is recorded.
 */
export function scale(
  core: EngineCore,
  namespace: string,
  id: string,
  request: { group: string; count: number | undefined; jobModifyIndex: number; message: string; error: boolean; meta: Record<string, unknown> | null },
) {
  const { state, ctx } = core;
  const job = state.job(namespace, id);
  if (!job) throw new CodedError(404, `job "${id}" not found`);
  if (job.Type === "system" && (request.count ?? 0) > 1) throw new CodedError(400, 'jobs of type "system" can only be scaled to 1 or 0');
  const groups = job.TaskGroups as unknown as Array<Group & { Scaling?: { Min?: number; Max?: number } | null }>;
  const group = groups.find((g) => g.Name === request.group);
  if (!group) throw new CodedError(400, `task group "${request.group}" specified for scaling does not exist in job`);
  const event = (evalId: string): ScalingEvent => ({
    Count: request.count ?? null,
    CreateIndex: ctx.store.writeIndex(),
    Error: request.error,
    EvalID: evalId === "" ? null : evalId,
    Message: request.message,
    Meta: request.meta,
    PreviousCount: group.Count,
    Time: nanos(ctx.clock.now()),
  });
  if (request.count === undefined) {
    return ctx.store.write(() => {
      recordScalingEvent(core, namespace, id, request.group, event(""));
      return { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: job.JobModifyIndex, Index: ctx.store.writeIndex() };
    });
  }
  if (group.Scaling) {
    if (request.count < Number(group.Scaling.Min ?? 0)) throw new CodedError(400, `group count was less than scaling policy minimum: ${request.count} < ${group.Scaling.Min}`);
    if (Number(group.Scaling.Max ?? Infinity) < request.count)
      throw new CodedError(400, `group count was greater than scaling policy maximum: ${request.count} > ${group.Scaling.Max}`);
  }
  const latest = state.deploymentsOfJob(namespace, id)[0];
  if (latest && ACTIVE_DEPLOYMENT.has(latest.Status) && latest.JobCreateIndex === job.CreateIndex) throw new CodedError(400, "job scaling blocked due to active deployment");
  if (request.jobModifyIndex > 0 && request.jobModifyIndex !== job.JobModifyIndex) {
    throw new CodedError(500, `Enforcing job modify index ${request.jobModifyIndex}: job exists with conflicting job modify index: ${job.JobModifyIndex}`);
  }
  const scaled = { ...job, TaskGroups: groups.map((g) => (g.Name === request.group ? { ...g, Count: request.count } : g)) };
  return ctx.store.write(() => {
    const result = register(core, scaled, { alwaysNewVersion: true, triggeredBy: "job-scaling" });
    recordScalingEvent(core, namespace, id, request.group, event(result.EvalID));
    return { ...result, Index: ctx.store.writeIndex() };
  });
}

function recordScalingEvent(core: EngineCore, namespace: string, jobId: string, group: string, event: ScalingEvent): void {
  const key = jobKey(namespace, jobId);
  const existing = core.state.scalingEvents.get(key);
  const events = [event, ...(existing?.ScalingEvents[group] ?? [])].slice(0, TRACKED_SCALING_EVENTS);
  core.state.scalingEvents.putIndexed(key, { Namespace: namespace, JobID: jobId, ScalingEvents: { ...existing?.ScalingEvents, [group]: events } });
}

/** Scale status (`GET /v1/job/:id/scale`): desired/placed/running/healthy per group, canaries left out. */
export function scaleStatus(core: EngineCore, namespace: string, id: string) {
  const { state } = core;
  const job = state.job(namespace, id);
  if (!job) return undefined;
  const events = state.scalingEvents.get(jobKey(namespace, id))?.ScalingEvents ?? {};
  const groups: Record<string, { Desired: number; Events: ScalingEvent[] | null; Healthy: number; Placed: number; Running: number; Unhealthy: number }> = {};
  for (const g of job.TaskGroups as unknown as Group[]) groups[g.Name] = { Desired: g.Count, Events: events[g.Name] ?? null, Healthy: 0, Placed: 0, Running: 0, Unhealthy: 0 };
  for (const alloc of state.allocsOfJob(namespace, id)) {
    const status = alloc.DeploymentStatus as { Canary?: boolean; Healthy?: boolean | null } | null;
    if (status?.Canary || alloc.DesiredStatus !== "run" || !NON_TERMINAL_CLIENT.has(alloc.ClientStatus)) continue;
    const g = groups[alloc.TaskGroup];
    if (!g) continue;
    g.Placed++;
    if (alloc.ClientStatus === "running") g.Running++;
    if (status?.Healthy === true) g.Healthy++;
    else if (status?.Healthy === false) g.Unhealthy++;
  }
  return { JobCreateIndex: job.CreateIndex, JobID: job.ID, JobModifyIndex: job.ModifyIndex, JobStopped: job.Stop, Namespace: job.Namespace, TaskGroups: groups };
}
