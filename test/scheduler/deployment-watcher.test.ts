/**
 * The deployment watcher's fail-early rule through HTTP (Nomad's
 * deploymentwatcher: shouldFailEarly, handleAllocUpdate, shouldFail): an
 * unhealthy allocation fails its deployment at once only without a progress
 * deadline or without a reschedule left; otherwise it is marked
 * `DesiredTransition.Reschedule` and replaced within the deployment, and
 * only the progress deadline fails the deployment.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const SECOND = 1_000_000_000;

function job(id: string, opts: { image?: string; count?: number; update?: Json; reschedule?: Json } = {}): Json {
  const group: Json = {
    Name: "web",
    Count: opts.count ?? 1,
    Tasks: [{ Name: "server", Driver: "docker", Config: { image: opts.image ?? "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }],
    Update: { MaxParallel: 1, MinHealthyTime: 10 * SECOND, HealthyDeadline: 60 * SECOND, ProgressDeadline: 120 * SECOND, ...opts.update },
  };
  if (opts.reschedule) group.ReschedulePolicy = opts.reschedule;
  return { ID: id, Type: "service", Datacenters: ["dc1"], TaskGroups: [group] };
}

async function call(emu: Standin, method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
  const res = await emu.scheduler.request(path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // a plain-text error
  }
  return { status: res.status, body: parsed, text };
}

async function get(emu: Standin, path: string): Promise<any> {
  const res = await call(emu, "GET", path);
  expect(res.status, path).toBe(200);
  return res.body;
}

async function register(emu: Standin, body: Json): Promise<void> {
  const res = await call(emu, "PUT", "/v1/jobs", { Job: body });
  expect(res.status, res.text).toBe(200);
}

async function allocs(emu: Standin, jobId: string): Promise<Json[]> {
  return ((await get(emu, `/v1/job/${jobId}/allocations`)) as Json[]).sort((a, b) => a.CreateIndex - b.CreateIndex);
}

async function evals(emu: Standin, jobId: string): Promise<Json[]> {
  return ((await get(emu, `/v1/job/${jobId}/evaluations`)) as Json[]).sort((a, b) => a.CreateIndex - b.CreateIndex);
}

/** The job's deployment for `version` (its latest when not given). */
async function deployment(emu: Standin, jobId: string, version?: number): Promise<Json> {
  const all = (await get(emu, `/v1/job/${jobId}/deployments`)) as Json[];
  return version === undefined ? all[0]! : all.find((d) => d.JobVersion === version)!;
}

/** Fails the job's one live allocation of `version` (any version when not given); returns it as it was. */
async function failLive(emu: Standin, jobId: string, version?: number): Promise<Json> {
  const live = (await allocs(emu, jobId)).filter(
    (a) => a.DesiredStatus === "run" && ["pending", "running"].includes(a.ClientStatus) && (version === undefined || a.JobVersion === version),
  );
  expect(live).toHaveLength(1);
  const res = await call(emu, "POST", "/_standin/actions", { do: "alloc-fail", alloc: live[0]!.ID });
  expect(res.status, res.text).toBe(200);
  return live[0]!;
}

/** The full allocation that replaced `failed` (its NextAllocation). */
async function replacementOf(emu: Standin, failed: Json): Promise<Json> {
  const next = (await get(emu, `/v1/allocation/${failed.ID}`)).NextAllocation;
  expect(next, "a replacement").not.toBe("");
  return get(emu, `/v1/allocation/${next}`);
}

/** Version 0 of `id` running and healthy, its deployment successful (so the version is stable). */
async function stableVersion0(emu: Standin, id: string, update: Json = {}, reschedule?: Json): Promise<void> {
  await register(emu, job(id, { update, reschedule }));
  emu.clock.advance("12s");
  expect(await deployment(emu, id, 0)).toMatchObject({ Status: "successful" });
}

describe("the deployment watcher fails early only when nothing else can help", () => {
  it("progress_deadline 0: the first unhealthy allocation fails the deployment at once, and it is not replaced", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { update: { ProgressDeadline: 0 } }));
    emu.clock.advance("5s"); // running, not yet healthy
    const failed = await failLive(emu, "web");
    const d = await deployment(emu, "web");
    expect(d).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    // Not progress based: the group has no deadline to keep.
    expect(d.TaskGroups.web).toMatchObject({ ProgressDeadline: 0, RequireProgressBy: null, UnhealthyAllocs: 1 });
    emu.clock.advance("1h");
    const all = await allocs(emu, "web");
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ ID: failed.ID, ClientStatus: "failed", DesiredStatus: "run" });
    expect(all[0]!.DesiredTransition.Reschedule).toBeNull();
  });

  it("reschedule attempts used up: the first failure is rescheduled within the deployment, the replacement's failure fails it at once", async () => {
    const emu = await createStandin();
    const reschedule = { Attempts: 1, Interval: 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", Unlimited: false };
    await register(emu, job("web", { reschedule }));
    emu.clock.advance("5s");
    const first = await failLive(emu, "web");
    expect((await deployment(emu, "web")).Status).toBe("running");
    emu.clock.advance("6100ms"); // the reschedule delay: the replacement is placed, then runs
    const replacement = await replacementOf(emu, first);
    expect(replacement).toMatchObject({ ClientStatus: "running", PreviousAllocation: first.ID, DeploymentID: (await deployment(emu, "web")).ID });
    expect(replacement.RescheduleTracker.Events).toHaveLength(1);

    await failLive(emu, "web");
    expect(await deployment(emu, "web")).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    emu.clock.advance("1h");
    expect((await allocs(emu, "web")).filter((a) => a.DesiredStatus === "run")).toHaveLength(1); // the failed replacement, kept
  });

  it("an operator's unhealthy report (allocation-health) fails the deployment at once, reschedulable or not", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("5s");
    const [alloc] = await allocs(emu, "web");
    const id = (await deployment(emu, "web")).ID;
    const res = await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id, UnhealthyAllocationIDs: [alloc!.ID] });
    expect(res.status, res.text).toBe(200);
    expect(await deployment(emu, "web")).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
  });
});

describe("a client's unhealthy report", () => {
  it("goes to the watcher: a reschedulable running allocation is marked and keeps running, the deployment keeps waiting", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("5s");
    const [alloc] = await allocs(emu, "web");
    const res = await call(emu, "POST", `/_standin/scheduler/allocations/${alloc!.ID}`, { Healthy: false });
    expect(res.status, res.text).toBe(200);
    const marked = await get(emu, `/v1/allocation/${alloc!.ID}`);
    expect(marked).toMatchObject({ ClientStatus: "running", DesiredStatus: "run", DeploymentStatus: { Healthy: false } });
    expect(marked.DesiredTransition.Reschedule).toBe(true);
    expect(await deployment(emu, "web")).toMatchObject({ Status: "running", TaskGroups: { web: { UnhealthyAllocs: 1, HealthyAllocs: 0 } } });
    emu.clock.advance("30s"); // min_healthy_time passes: the health stays as reported
    expect((await get(emu, `/v1/allocation/${alloc!.ID}`)).DeploymentStatus.Healthy).toBe(false);
    emu.clock.advance("2m"); // the 120s progress deadline
    expect(await deployment(emu, "web")).toMatchObject({ Status: "failed", StatusDescription: "Failed due to progress deadline" });
  });
});

describe("a reschedulable unhealthy allocation is replaced within its deployment", () => {
  it("marked DesiredTransition.Reschedule with a deployment-watcher evaluation, replaced after the delay, and the deployment succeeds", async () => {
    const emu = await createStandin();
    await register(emu, job("web")); // the service default: unlimited, exponential from 30s
    emu.clock.advance("5s");
    const failedAt = emu.clock.now();
    const failed = await failLive(emu, "web");
    const deploymentId = (await deployment(emu, "web")).ID;

    const marked = await get(emu, `/v1/allocation/${failed.ID}`);
    expect(marked).toMatchObject({ ClientStatus: "failed", DesiredStatus: "run", DeploymentStatus: { Healthy: false } });
    expect(marked.DesiredTransition.Reschedule).toBe(true);
    // Node.UpdateAlloc's evaluation and the watcher's, made by the failure's write.
    const all = await evals(emu, "web");
    const made = all.filter((e) => e.CreateIndex === all.at(-1)!.CreateIndex);
    expect(made.map((e) => [e.TriggeredBy, e.DeploymentID ?? ""]).sort()).toEqual([
      ["alloc-failure", ""],
      ["deployment-watcher", deploymentId],
    ]);
    expect(await deployment(emu, "web")).toMatchObject({ Status: "running", StatusDescription: "Deployment is running" });

    // The reconciler finds the reschedule 30s away: a follow-up evaluation waits for it.
    emu.clock.advance("200ms");
    const followUp = (await get(emu, `/v1/allocation/${failed.ID}`)).FollowupEvalID;
    expect(followUp).not.toBe("");
    expect(await get(emu, `/v1/evaluation/${followUp}`)).toMatchObject({
      TriggeredBy: "alloc-failure",
      Status: "pending",
      WaitUntil: new Date(failedAt + 30_000).toISOString().replace(".000", ""),
    });

    emu.clock.advance("29800ms"); // the follow-up runs at the reschedule time
    const replacement = await replacementOf(emu, failed);
    expect(replacement).toMatchObject({ Name: failed.Name, PreviousAllocation: failed.ID, DeploymentID: deploymentId, ClientStatus: "pending" });
    expect(await get(emu, `/v1/allocation/${failed.ID}`)).toMatchObject({ DesiredStatus: "stop", NextAllocation: replacement.ID });
    let d = await deployment(emu, "web");
    expect(d.Status).toBe("running");
    expect(d.TaskGroups.web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 0, UnhealthyAllocs: 1 });

    emu.clock.advance("11s"); // the replacement runs for min_healthy_time
    d = await deployment(emu, "web");
    expect(d).toMatchObject({ Status: "successful", StatusDescription: "Deployment completed successfully" });
    expect(d.TaskGroups.web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 1, UnhealthyAllocs: 1 });
    expect((await get(emu, "/v1/job/web")).Stable).toBe(true);
  });

  it("in a rolling update, the failed allocation halts the next batch; its replacement takes the batch's place and the update rolls on", async () => {
    const emu = await createStandin();
    const reschedule = { Attempts: 3, Interval: 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", Unlimited: false };
    await register(emu, job("web", { count: 3, reschedule }));
    emu.clock.advance("12s");
    expect(await deployment(emu, "web", 0)).toMatchObject({ Status: "successful" });
    await register(emu, job("web", { count: 3, reschedule, image: "nginx:2" }));
    emu.clock.advance("5s");
    const failed = await failLive(emu, "web", 1);
    emu.clock.advance("4s"); // before the reschedule: no new batch while the deployment has an unhealthy allocation
    const live = async () => (await allocs(emu, "web")).filter((a) => a.DesiredStatus === "run" && a.ClientStatus !== "failed");
    expect((await live()).map((a) => a.JobVersion).sort()).toEqual([0, 0]);
    emu.clock.advance("2100ms"); // the replacement is placed, alone in its batch
    const replacement = await replacementOf(emu, failed);
    expect(replacement).toMatchObject({ JobVersion: 1, ClientStatus: "running" });
    expect((await live()).map((a) => a.JobVersion).sort()).toEqual([0, 0, 1]);
    emu.clock.advance("2m"); // healthy, then the two remaining batches
    const d = await deployment(emu, "web", 1);
    expect(d).toMatchObject({ Status: "successful" });
    expect(d.TaskGroups.web).toMatchObject({ DesiredTotal: 3, PlacedAllocs: 4, HealthyAllocs: 3, UnhealthyAllocs: 1 });
    expect((await live()).map((a) => a.JobVersion)).toEqual([1, 1, 1]);
  });

  it("a paused deployment still replaces a rescheduled allocation, and places nothing else", async () => {
    const emu = await createStandin();
    const reschedule = { Attempts: 3, Interval: 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", Unlimited: false };
    await register(emu, job("web", { count: 2, reschedule }));
    emu.clock.advance("12s");
    await register(emu, job("web", { count: 2, reschedule, image: "nginx:2" }));
    emu.clock.advance("5s");
    const id = (await deployment(emu, "web", 1)).ID;
    const failed = await failLive(emu, "web", 1);
    const paused = await call(emu, "PUT", `/v1/deployment/pause/${id}`, { DeploymentID: id, Pause: true });
    expect(paused.status, paused.text).toBe(200);
    emu.clock.advance("1m");
    expect(await replacementOf(emu, failed)).toMatchObject({ JobVersion: 1, DeploymentID: id, ClientStatus: "running" });
    const d = await deployment(emu, "web", 1);
    expect(d).toMatchObject({ Status: "paused" });
    expect(d.TaskGroups.web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 1 });
    // The other old allocation runs on: a paused deployment places no further batch.
    expect(
      (await allocs(emu, "web"))
        .filter((a) => a.DesiredStatus === "run" && a.ClientStatus === "running")
        .map((a) => a.JobVersion)
        .sort(),
    ).toEqual([0, 1]);
  });

  it("a failed canary's replacement is a canary of the same deployment, and auto-promotion counts it", async () => {
    const emu = await createStandin();
    const update = { Canary: 1, AutoPromote: true };
    const reschedule = { Attempts: 3, Interval: 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", Unlimited: false };
    await stableVersion0(emu, "web", update, reschedule);
    await register(emu, job("web", { update, reschedule, image: "nginx:2" }));
    emu.clock.advance("5s");
    const canary = await failLive(emu, "web", 1);
    expect(canary.DeploymentStatus.Canary).toBe(true);
    expect((await deployment(emu, "web", 1)).Status).toBe("running");
    emu.clock.advance("5100ms");
    const replacement = await replacementOf(emu, canary);
    expect(replacement).toMatchObject({ JobVersion: 1, DeploymentID: (await deployment(emu, "web", 1)).ID, DeploymentStatus: { Canary: true } });
    const d = await deployment(emu, "web", 1);
    expect(d.TaskGroups.web.PlacedCanaries).toEqual([canary.ID, replacement.ID]);
    // Only the one canary: the failed one holds no second slot.
    expect((await allocs(emu, "web")).filter((a) => a.JobVersion === 1)).toHaveLength(2);

    emu.clock.advance("11s"); // healthy: auto-promoted, then the update rolls on
    expect((await deployment(emu, "web", 1)).TaskGroups.web.Promoted).toBe(true);
    emu.clock.advance("1m");
    expect(await deployment(emu, "web", 1)).toMatchObject({ Status: "successful" });
  });

  it("a canary's replacement can be promoted by hand once it is healthy", async () => {
    const emu = await createStandin();
    const update = { Canary: 1 };
    const reschedule = { Attempts: 3, Interval: 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", Unlimited: false };
    await stableVersion0(emu, "web", update, reschedule);
    await register(emu, job("web", { update, reschedule, image: "nginx:2" }));
    emu.clock.advance("5s");
    await failLive(emu, "web", 1);
    emu.clock.advance("5100ms");
    const id = (await deployment(emu, "web", 1)).ID;
    const early = await call(emu, "PUT", `/v1/deployment/promote/${id}`, { DeploymentID: id, All: true });
    expect(early.status).toBe(500);
    expect(early.text).toMatch(/is not healthy/);
    emu.clock.advance("11s");
    const promoted = await call(emu, "PUT", `/v1/deployment/promote/${id}`, { DeploymentID: id, All: true });
    expect(promoted.status, promoted.text).toBe(200);
    emu.clock.advance("1m");
    expect(await deployment(emu, "web", 1)).toMatchObject({ Status: "successful" });
  });
});

describe("the progress deadline", () => {
  it("passes while replacements keep failing: Failed due to progress deadline, and auto_revert rolls back", async () => {
    const emu = await createStandin();
    const update = { AutoRevert: true, HealthyDeadline: 30 * SECOND, ProgressDeadline: 60 * SECOND };
    const reschedule = { Attempts: 0, Interval: 0, Delay: 5 * SECOND, DelayFunction: "constant", Unlimited: true };
    await stableVersion0(emu, "web", update, reschedule);
    await register(emu, job("web", { update, reschedule, image: "nginx:broken" }));
    emu.clock.advance("100ms"); // the first allocation of version 1 is placed: RequireProgressBy = now + 60s
    const requireBy = Date.parse((await deployment(emu, "web", 1)).TaskGroups.web.RequireProgressBy);
    expect(requireBy).toBe(emu.clock.now() + 60_000);
    // Each allocation of version 1 fails once it runs; each failure is rescheduled 5s later.
    let failures = 0;
    while (emu.clock.now() + 7_000 < requireBy) {
      emu.clock.advance("2s");
      await failLive(emu, "web", 1);
      failures++;
      expect((await deployment(emu, "web", 1)).Status).toBe("running");
      emu.clock.advance("5100ms");
    }
    expect(failures).toBeGreaterThan(3);
    // Replacements do not move the deadline (only a healthy allocation does).
    expect(Date.parse((await deployment(emu, "web", 1)).TaskGroups.web.RequireProgressBy)).toBe(requireBy);
    emu.clock.advance(`${requireBy - emu.clock.now()}ms`);
    const d = await deployment(emu, "web", 1);
    expect(d).toMatchObject({ Status: "failed", StatusDescription: "Failed due to progress deadline - rolling back to job version 0" });
    expect(d.TaskGroups.web.UnhealthyAllocs).toBe(failures);
    expect((await get(emu, "/v1/job/web")).Version).toBe(2);
    expect((await get(emu, "/v1/job/web")).TaskGroups[0].Tasks[0].Config.image).toBe("nginx:1");
  });

  it("an allocation unhealthy by healthy_deadline keeps running, marked; the update halts until the progress deadline", async () => {
    // Allocations take 2 minutes to start, past version 1's 60s healthy_deadline.
    const emu = await createStandin({ fixture: { scheduler: { timing: { allocStart: "2m" } } } });
    const slow = { HealthyDeadline: 300 * SECOND, ProgressDeadline: 600 * SECOND };
    await register(emu, job("web", { count: 2, update: slow }));
    emu.clock.advance("2m11s");
    expect(await deployment(emu, "web", 0)).toMatchObject({ Status: "successful" });
    await register(emu, job("web", { count: 2, update: { ProgressDeadline: 150 * SECOND }, image: "nginx:2" }));
    emu.clock.advance("100ms");
    const placedAt = emu.clock.now();
    emu.clock.advance("60s");
    const [fresh] = (await allocs(emu, "web")).filter((a) => a.JobVersion === 1);
    expect(fresh).toMatchObject({ ClientStatus: "pending", DesiredStatus: "run", DeploymentStatus: { Healthy: false } });
    expect(fresh!.DesiredTransition.Reschedule).toBe(true);
    expect((await deployment(emu, "web", 1)).Status).toBe("running");
    emu.clock.advance("60s"); // it runs now, but its health stays unhealthy: nothing replaces a running allocation
    expect(await get(emu, `/v1/allocation/${fresh!.ID}`)).toMatchObject({ ClientStatus: "running", DesiredStatus: "run", DeploymentStatus: { Healthy: false } });
    expect((await deployment(emu, "web", 1)).Status).toBe("running");
    // The update halts: no second allocation of version 1, the other old one still runs.
    const versions = (await allocs(emu, "web")).filter((a) => a.DesiredStatus === "run").map((a) => a.JobVersion);
    expect(versions.sort()).toEqual([0, 1]);
    emu.clock.advance(`${placedAt + 150_000 - emu.clock.now()}ms`);
    expect(await deployment(emu, "web", 1)).toMatchObject({ Status: "failed", StatusDescription: "Failed due to progress deadline" });
  });

  it("the client explains each task's part in an unhealthy allocation with an Alloc Unhealthy event", async () => {
    const emu = await createStandin();
    const update = { HealthyDeadline: 20 * SECOND };
    // One task restarts 15s after failing (running again, not long enough), one 30s after (still pending).
    for (const [id, delay] of [
      ["soon", 15],
      ["late", 30],
    ] as const) {
      const body = job(id, { update });
      body.TaskGroups[0].RestartPolicy = { Attempts: 2, Interval: 3600 * SECOND, Delay: delay * SECOND, Mode: "fail" };
      await register(emu, body);
    }
    emu.clock.advance("5s");
    for (const id of ["soon", "late"]) expect((await call(emu, "POST", "/_standin/actions", { do: "task-fail", job: id })).status).toBe(200);
    emu.clock.advance("16s"); // past healthy_deadline (20s after placement)
    const events = async (id: string) => {
      const [stub] = await allocs(emu, id);
      const alloc = await get(emu, `/v1/allocation/${stub!.ID}`);
      expect(alloc.DeploymentStatus.Healthy).toBe(false);
      return alloc.TaskStates.server.Events.filter((e: Json) => e.Type === "Alloc Unhealthy").map((e: Json) => [e.Message, e.DisplayMessage, e.Details]);
    };
    const soon = "Task not running for min_healthy_time of 10s by healthy_deadline of 20s";
    expect(await events("soon")).toEqual([[soon, soon, { message: soon }]]);
    const late = "Task not running by healthy_deadline of 20s";
    expect(await events("late")).toEqual([[late, late, { message: late }]]);
  });

  it("does not fail a deployment that waits for promotion with healthy canaries; promotion restarts the deadline", async () => {
    const emu = await createStandin();
    const update = { Canary: 1, ProgressDeadline: 90 * SECOND };
    await stableVersion0(emu, "web", update);
    await register(emu, job("web", { update, image: "nginx:2" }));
    emu.clock.advance("5m");
    const waiting = await deployment(emu, "web", 1);
    expect(waiting).toMatchObject({ Status: "running", StatusDescription: "Deployment is running but requires manual promotion" });
    const promoted = await call(emu, "PUT", `/v1/deployment/promote/${waiting.ID}`, { DeploymentID: waiting.ID, All: true });
    expect(promoted.status, promoted.text).toBe(200);
    expect(Date.parse((await deployment(emu, "web", 1)).TaskGroups.web.RequireProgressBy)).toBe(emu.clock.now() + 90_000);
    emu.clock.advance("1m");
    expect(await deployment(emu, "web", 1)).toMatchObject({ Status: "successful" });
  });
});
