/**
 * Reschedule policies through HTTP: a failed allocation is replaced per its
 * group's `reschedule` block on the virtual clock. The alloc-failure
 * evaluation, the follow-up evaluation waiting until the delay (its exact
 * body), the replacement's PreviousAllocation and RescheduleTracker, the
 * failed allocation's NextAllocation / FollowupEvalID / DesiredDescription,
 * each delay function, max_delay and its reset, attempts within an
 * interval, unlimited (five events carried), the deployment hold, the job
 * summary and blocking queries.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { untilParked } from "../support/parked.js";

type Json = Record<string, any>;

const SECOND = 1_000_000_000;
const NS_PER_MS = 1_000_000n;

function job(id: string, opts: { type?: string; reschedule?: Json; update?: Json; count?: number } = {}): Json {
  const group: Json = { Name: "g", Count: opts.count ?? 1, Tasks: [{ Name: "app", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }] };
  if (opts.reschedule) group.ReschedulePolicy = opts.reschedule;
  if (opts.update) group.Update = opts.update;
  return { ID: id, Type: opts.type ?? "service", Datacenters: ["dc1"], TaskGroups: [group] };
}

async function register(emu: Standin, body: Json): Promise<void> {
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: body }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function get(emu: Standin, path: string): Promise<any> {
  const res = await emu.scheduler.request(path);
  expect(res.status, path).toBe(200);
  return res.json();
}

async function act(emu: Standin, body: Json): Promise<Json> {
  const res = await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify(body) });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Json;
}

/** The job's allocations, oldest first. */
async function allocs(emu: Standin, jobId: string): Promise<Json[]> {
  return ((await get(emu, `/v1/job/${jobId}/allocations`)) as Json[]).sort((a, b) => a.CreateIndex - b.CreateIndex);
}

async function evals(emu: Standin, jobId: string): Promise<Json[]> {
  return ((await get(emu, `/v1/job/${jobId}/evaluations`)) as Json[]).sort((a, b) => a.CreateIndex - b.CreateIndex);
}

/** The running allocation (there is one), failed now; returns it as it was. */
async function failRunning(emu: Standin, jobId: string): Promise<Json> {
  const running = (await allocs(emu, jobId)).filter((a) => a.ClientStatus === "running");
  expect(running).toHaveLength(1);
  await act(emu, { do: "alloc-fail", alloc: running[0]!.ID });
  return running[0]!;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(".000", "");
const delays = (alloc: Json) => (alloc.RescheduleTracker?.Events ?? []).map((e: Json) => e.Delay / SECOND);

describe("reschedule policies", () => {
  it("service default (unlimited, exponential from 30s): a follow-up eval waits out the delay, then the replacement carries the tracker", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("30s"); // running, its deployment successful
    const failedAt = emu.clock.now();
    const first = await failRunning(emu, "web");

    // Node.UpdateAlloc's eval: alloc-failure, without a JobModifyIndex.
    let list = await evals(emu, "web");
    const retry = list.at(-1)!;
    expect(retry).toMatchObject({ TriggeredBy: "alloc-failure", Status: "pending" });
    expect(retry).not.toHaveProperty("JobModifyIndex");
    emu.clock.advance("100ms");

    // The reconciler found the reschedule 30s away: a follow-up eval waits until then.
    list = await evals(emu, "web");
    expect(list.at(-2)).toMatchObject({ ID: retry.ID, Status: "complete" });
    const followUp = list.at(-1)!;
    const job1 = await get(emu, "/v1/job/web");
    expect(followUp).toEqual({
      CreateIndex: followUp.CreateIndex,
      CreateTime: followUp.CreateTime,
      ID: followUp.ID,
      JobID: "web",
      JobModifyIndex: job1.ModifyIndex,
      ModifyIndex: followUp.CreateIndex,
      ModifyTime: followUp.CreateTime,
      Namespace: "default",
      Priority: 50,
      Status: "pending",
      StatusDescription: "created for delayed rescheduling",
      TriggeredBy: "alloc-failure",
      Type: "service",
      WaitUntil: iso(failedAt + 30_000),
    });
    expect(Math.round(followUp.CreateTime / 1e6)).toBe(failedAt + 100); // made by the alloc-failure eval's pass
    expect(await get(emu, `/v1/evaluation/${followUp.ID}`)).toMatchObject({ WaitUntil: iso(failedAt + 30_000), Status: "pending" });
    const failed = await get(emu, `/v1/allocation/${first.ID}`);
    expect(failed).toMatchObject({ ClientStatus: "failed", DesiredStatus: "run", FollowupEvalID: followUp.ID });
    expect(failed).not.toHaveProperty("NextAllocation");
    expect(failed).not.toHaveProperty("RescheduleTracker"); // omitempty: never rescheduled

    // Not a millisecond early.
    emu.clock.advance(30_000 - 100 - 1);
    expect(await allocs(emu, "web")).toHaveLength(1);
    emu.clock.advance("1ms");
    const [old, replacement] = await allocs(emu, "web");
    expect(old).toMatchObject({
      ID: first.ID,
      ClientStatus: "failed",
      DesiredStatus: "stop",
      DesiredDescription: "alloc was rescheduled because it failed",
      NextAllocation: replacement!.ID,
    });
    expect(replacement).toMatchObject({ Name: "web.g[0]", ClientStatus: "pending", DesiredStatus: "run", EvalID: followUp.ID });
    expect(replacement!.RescheduleTracker).toEqual({
      Events: [{ Delay: 30 * SECOND, PrevAllocID: first.ID, PrevNodeID: first.NodeID, RescheduleTime: Number(BigInt(failedAt + 30_000) * NS_PER_MS) }],
      LastReschedule: "ok",
    });
    const full = await get(emu, `/v1/allocation/${replacement!.ID}`);
    expect(full.PreviousAllocation).toBe(first.ID);
    expect(full.DeploymentID ?? "").toBe(""); // the deployment had succeeded: the replacement is no part of it
    expect(await get(emu, `/v1/evaluation/${followUp.ID}`)).toMatchObject({ Status: "complete" });

    // The replacement fails in turn: the delay doubles, and the tracker carries both reschedules.
    emu.clock.advance("2s");
    await failRunning(emu, "web");
    emu.clock.advance("100ms");
    expect((await evals(emu, "web")).at(-1)).toMatchObject({ StatusDescription: "created for delayed rescheduling", WaitUntil: iso(failedAt + 32_000 + 60_000) });
    emu.clock.advance(60_000 - 100);
    const third = (await allocs(emu, "web")).at(-1)!;
    expect(delays(third)).toEqual([30, 60]);
    expect(third.RescheduleTracker.Events[1].PrevAllocID).toBe(replacement!.ID);

    const summary = await get(emu, "/v1/job/web/summary");
    expect(summary.Summary.g).toMatchObject({ Failed: 2, Running: 0, Starting: 1, Queued: 0 });
    emu.clock.advance("1s");
    expect((await get(emu, "/v1/job/web/summary")).Summary.g).toMatchObject({ Failed: 2, Running: 1, Starting: 0 });
  });

  it("batch default (1 attempt in 24h, constant 5s): one replacement, then no more", async () => {
    const emu = await createStandin();
    await register(emu, { ...job("report", { type: "batch" }), Meta: { "standin.batch_run": "1h" } });
    emu.clock.advance("2s");
    const first = await failRunning(emu, "report");
    emu.clock.advance("5s");
    const [, second] = await allocs(emu, "report");
    expect(second!.RescheduleTracker.Events).toEqual([expect.objectContaining({ Delay: 5 * SECOND, PrevAllocID: first.ID })]);
    emu.clock.advance("2s");
    const evalsBefore = (await evals(emu, "report")).length;
    await failRunning(emu, "report");
    // Attempts used up within the interval: no alloc-failure eval, no follow-up, the allocation stays failed.
    expect(await evals(emu, "report")).toHaveLength(evalsBefore);
    emu.clock.advance("1h");
    const all = await allocs(emu, "report");
    expect(all).toHaveLength(2);
    expect(all[1]).toMatchObject({ ClientStatus: "failed", DesiredStatus: "run", FollowupEvalID: "", NextAllocation: "" });
    expect((await get(emu, "/v1/job/report")).Status).toBe("dead");
  });

  it("attempts count within the interval before the failure: used up, the allocation stays failed; later failures count only recent reschedules", async () => {
    const emu = await createStandin();
    const policy = { Attempts: 1, Interval: 60 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
    await register(emu, job("web", { reschedule: policy }));
    emu.clock.advance("30s");
    await failRunning(emu, "web");
    emu.clock.advance("5s"); // replaced at 35s
    emu.clock.advance("2s");
    await failRunning(emu, "web"); // one reschedule 2s before this failure, within 60s: not eligible
    emu.clock.advance("2m");
    expect(await allocs(emu, "web")).toHaveLength(2);
    // Eligibility is counted back from the failure, not from now: a later evaluation changes nothing.
    expect((await emu.scheduler.request("/v1/job/web/evaluate", { method: "POST", body: "{}" })).status).toBe(200);
    emu.clock.advance("1s");
    expect(await allocs(emu, "web")).toHaveLength(2);

    // With two attempts, a failure more than 60s after the first reschedule counts none of it, and drops it from the tracker.
    await register(emu, job("api", { reschedule: { ...policy, Attempts: 2 } }));
    emu.clock.advance("30s");
    await failRunning(emu, "api");
    emu.clock.advance("5s");
    emu.clock.advance("70s");
    await failRunning(emu, "api");
    emu.clock.advance("5s");
    const all = await allocs(emu, "api");
    expect(all).toHaveLength(3);
    expect(all[2]!.RescheduleTracker.Events).toEqual([expect.objectContaining({ PrevAllocID: all[1]!.ID, Delay: 5 * SECOND })]);
  });

  it("fibonacci capped at max_delay, starting over once a capped delay has fully passed", async () => {
    const emu = await createStandin();
    const policy = { Attempts: 0, Interval: 0, Delay: 5 * SECOND, DelayFunction: "fibonacci", MaxDelay: 12 * SECOND, Unlimited: true };
    await register(emu, job("web", { reschedule: policy }));
    emu.clock.advance("30s");
    const waits: number[] = [];
    // Each failure comes 2s after the replacement is placed (running after 1s).
    for (let i = 0; i < 5; i++) {
      await failRunning(emu, "web");
      emu.clock.advance("100ms");
      const followUp = (await evals(emu, "web")).at(-1)!;
      waits.push((Date.parse(followUp.WaitUntil) - (emu.clock.now() - 100)) / 1000);
      emu.clock.advance(Date.parse(followUp.WaitUntil) - emu.clock.now());
      emu.clock.advance("2s");
    }
    expect(waits).toEqual([5, 5, 10, 12, 12]);
    expect(delays((await allocs(emu, "web")).at(-1)!)).toEqual([5, 5, 10, 12, 12]);
    // A failure more than max_delay after the last reschedule starts the sequence over: 5s, then 5s (12 then 5 restarts it).
    emu.clock.advance("20s");
    await failRunning(emu, "web");
    emu.clock.advance("100ms");
    const followUp = (await evals(emu, "web")).at(-1)!;
    expect(Date.parse(followUp.WaitUntil) - (emu.clock.now() - 100)).toBe(5_000);
    emu.clock.advance(Date.parse(followUp.WaitUntil) - emu.clock.now() + 2_000);
    await failRunning(emu, "web");
    emu.clock.advance("100ms");
    expect(Date.parse((await evals(emu, "web")).at(-1)!.WaitUntil) - (emu.clock.now() - 100)).toBe(5_000);
    // Unlimited: the tracker carries the last five events and this one.
    emu.clock.advance("5s");
    expect(delays((await allocs(emu, "web")).at(-1)!)).toEqual([5, 10, 12, 12, 5, 5]);
  });

  it("exponential capped at max_delay", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { reschedule: { Attempts: 0, Interval: 0, Delay: 5 * SECOND, DelayFunction: "exponential", MaxDelay: 15 * SECOND, Unlimited: true } }));
    emu.clock.advance("30s");
    for (let i = 0; i < 4; i++) {
      await failRunning(emu, "web");
      emu.clock.advance("100ms");
      emu.clock.advance(Date.parse((await evals(emu, "web")).at(-1)!.WaitUntil) - emu.clock.now());
      emu.clock.advance("2s");
    }
    expect(delays((await allocs(emu, "web")).at(-1)!)).toEqual([5, 10, 15, 15]);
  });

  it("failures due within 5s of the first share one follow-up eval, which replaces them all", async () => {
    // A slow scheduler (evalProcess 10s) sees the three failures in one pass.
    const emu = await createStandin({ fixture: { scheduler: { timing: { evalProcess: "10s" } } } });
    const batch = job("web", { type: "batch", count: 3, reschedule: { Attempts: 0, Interval: 0, Delay: 30 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: true } });
    await register(emu, { ...batch, Meta: { "standin.batch_run": "1h" } });
    emu.clock.advance("20s"); // placed at 10s, running at 11s
    const [a, b, c] = await allocs(emu, "web");
    await act(emu, { do: "alloc-fail", alloc: a!.ID }); // due 50s
    emu.clock.advance("3s");
    await act(emu, { do: "alloc-fail", alloc: b!.ID }); // due 53s
    emu.clock.advance("4s");
    await act(emu, { do: "alloc-fail", alloc: c!.ID }); // due 57s
    emu.clock.advance("3s"); // the first alloc-failure eval runs at 30s
    const byId = new Map((await allocs(emu, "web")).map((x) => [x.ID, x]));
    const [fa, fb, fc] = [byId.get(a!.ID)!, byId.get(b!.ID)!, byId.get(c!.ID)!];
    expect(fa.FollowupEvalID).not.toBe("");
    expect(fb.FollowupEvalID).toBe(fa.FollowupEvalID);
    expect(fc.FollowupEvalID).not.toBe(fa.FollowupEvalID);
    expect(await get(emu, `/v1/evaluation/${fa.FollowupEvalID}`)).toMatchObject({ WaitUntil: "2026-01-01T00:00:50Z", StatusDescription: "created for delayed rescheduling" });
    const second = await get(emu, `/v1/evaluation/${fc.FollowupEvalID}`);
    expect(second).toMatchObject({ WaitUntil: "2026-01-01T00:00:57Z", TriggeredBy: "alloc-failure", Status: "pending" });
    expect(second).not.toHaveProperty("StatusDescription");
    // At 50s the first follow-up replaces a and b (b is its allocation too, though due at 53s); c waits for 57s.
    emu.clock.advance(Date.parse("2026-01-01T00:00:50Z") - emu.clock.now());
    const live = async () =>
      (await allocs(emu, "web"))
        .filter((x) => x.DesiredStatus === "run" && x.ClientStatus !== "failed")
        .map((x) => x.Name)
        .sort();
    expect(await live()).toEqual([a!.Name, b!.Name].sort());
    emu.clock.advance(Date.parse("2026-01-01T00:00:57Z") - emu.clock.now());
    expect(await live()).toEqual(["web.g[0]", "web.g[1]", "web.g[2]"]);
  });

  it("an evaluation within 1s of the reschedule time replaces the allocation at once", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { reschedule: { Attempts: 0, Interval: 0, Delay: 10 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: true } }));
    emu.clock.advance("30s");
    const failed = await failRunning(emu, "web"); // due at 40s; the follow-up waits until then
    emu.clock.advance(8_950);
    await emu.scheduler.request("/v1/job/web/evaluate", { method: "POST", body: "{}" });
    emu.clock.advance("100ms"); // 39.05s: due in 0.95s
    const all = await allocs(emu, "web");
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ ID: failed.ID, DesiredStatus: "stop", NextAllocation: all[1]!.ID });
    expect(all[1]!.RescheduleTracker.Events[0].RescheduleTime).toBe(Number(BigInt(Date.parse("2026-01-01T00:00:39.050Z")) * NS_PER_MS));
    // The follow-up then finds nothing to do.
    emu.clock.advance("1s");
    expect(await allocs(emu, "web")).toHaveLength(2);
    expect(await get(emu, `/v1/evaluation/${all[0]!.FollowupEvalID}`)).toMatchObject({ Status: "complete" });
  });

  it("a deployment holds rescheduling: an allocation of a failed deployment is not replaced", async () => {
    const emu = await createStandin();
    // No progress deadline: the watcher fails the deployment at the first failure (deployment-watcher.test.ts has the rest).
    await register(emu, job("web", { update: { MaxParallel: 1, MinHealthyTime: 10 * SECOND, HealthyDeadline: 60 * SECOND, ProgressDeadline: 0 } }));
    emu.clock.advance("5s"); // running, not yet healthy: the deployment is active
    const failed = await failRunning(emu, "web");
    const deployment = (await get(emu, "/v1/job/web/deployments"))[0];
    expect(deployment.Status).toBe("failed");
    emu.clock.advance("100ms");
    const list = await evals(emu, "web");
    expect(list.at(-1)).toMatchObject({ TriggeredBy: "alloc-failure", Status: "complete" });
    emu.clock.advance("1h");
    const all = await allocs(emu, "web");
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ ID: failed.ID, ClientStatus: "failed", DesiredStatus: "run", FollowupEvalID: "" });
  });

  it("a blocking query on the allocations wakes when the replacement is placed", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("30s");
    await failRunning(emu, "web");
    emu.clock.advance("100ms");
    const index = (await emu.scheduler.request("/v1/job/web/allocations")).headers.get("X-Nomad-Index");
    const parked = emu.scheduler.request(`/v1/job/web/allocations?index=${index}&wait=10m`);
    await untilParked(emu, 1);
    emu.clock.advance("30s");
    const answer = await parked;
    expect(Number(answer.headers.get("X-Nomad-Index"))).toBeGreaterThan(Number(index));
    expect(((await answer.json()) as Json[]).map((a) => a.ClientStatus).sort()).toEqual(["failed", "pending"]);
  });

  it("a batch allocation that completed keeps its slot when a sibling is rescheduled (regression)", async () => {
    const emu = await createStandin();
    await register(emu, { ...job("report", { type: "batch", count: 2 }), Meta: { "standin.batch_run": "1h" } });
    emu.clock.advance("2s");
    const [done, crash] = await allocs(emu, "report");
    await act(emu, { do: "alloc-complete", alloc: done!.ID });
    await act(emu, { do: "alloc-fail", alloc: crash!.ID });
    emu.clock.advance("10s");
    const all = await allocs(emu, "report");
    expect(all).toHaveLength(3);
    expect(all[2]).toMatchObject({ Name: crash!.Name, ClientStatus: "running" });
    expect((await get(emu, `/v1/allocation/${all[2]!.ID}`)).PreviousAllocation).toBe(crash!.ID);
  });

  it("stopping a job counts its failed allocation once in the summary (regression)", async () => {
    const emu = await createStandin();
    await register(emu, job("report", { type: "batch" }));
    emu.clock.advance("2s");
    await failRunning(emu, "report");
    const stop = await emu.scheduler.request("/v1/job/report", { method: "DELETE" });
    expect(stop.status).toBe(200);
    emu.clock.advance("1m");
    expect((await get(emu, "/v1/job/report/summary")).Summary.g).toMatchObject({ Failed: 1, Running: 0, Starting: 0, Complete: 0 });
    // The follow-up eval ran against a stopped job: nothing was placed.
    expect(await allocs(emu, "report")).toHaveLength(1);
  });

  it("a job update replaces a failed allocation kept from the previous version", async () => {
    const emu = await createStandin();
    await register(emu, job("report", { type: "batch" }));
    emu.clock.advance("2s");
    await failRunning(emu, "report");
    emu.clock.advance("5s");
    emu.clock.advance("2s");
    const kept = await failRunning(emu, "report"); // attempts used up: kept, failed
    const next = job("report", { type: "batch" });
    next.TaskGroups[0].Tasks[0].Config = { image: "y" };
    await register(emu, next);
    emu.clock.advance("100ms");
    const all = await allocs(emu, "report");
    expect(all.find((a) => a.ID === kept.ID)).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc is being updated due to job update" });
    expect(all.at(-1)).toMatchObject({ JobVersion: 1, ClientStatus: "pending" });
  });

  it("from a fixture timeline: a task fails past its restarts, the allocation fails and is replaced; await waits for the rescheduled allocation", async () => {
    const crash = job("web", { reschedule: { Attempts: 3, Interval: 3600 * SECOND, Delay: 10 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: false } });
    crash.TaskGroups[0].RestartPolicy = { Attempts: 1, Interval: 300 * SECOND, Delay: 5 * SECOND, Mode: "fail" };
    const emu = await createStandin({
      fixture: {
        timeline: [
          { at: "0s", do: "job-register", job: crash },
          { at: "30s", do: "task-fail", job: "web" },
          { at: "40s", do: "task-fail", job: "web" },
        ],
      },
    });
    const res = await emu.scheduler.request("/_standin/await", {
      method: "POST",
      body: JSON.stringify({ until: { allocations: { job: "web", rescheduled: 1 } }, within: "5m" }),
    });
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(200);
    // Failed at 40s (restarted once at 35s), rescheduled at 50s, running at 51s.
    expect(body).toMatchObject({ met: true, waited: "51s", observed: { allocations: { "running, rescheduled 1+": 1 } } });
    const [failed, replacement] = await allocs(emu, "web");
    expect(failed!.TaskStates.app.Restarts).toBe(1);
    expect(failed).toMatchObject({ ClientStatus: "failed", DesiredStatus: "stop", NextAllocation: replacement!.ID });
    expect(replacement!.RescheduleTracker.Events).toEqual([expect.objectContaining({ PrevAllocID: failed!.ID, Delay: 10 * SECOND })]);
  });

  it("Job.Evaluate with EvalOptions.ForceReschedule replaces a failed allocation whose attempts are used up", async () => {
    const emu = await createStandin();
    await register(emu, { ...job("report", { type: "batch" }), Meta: { "standin.batch_run": "1h" } });
    emu.clock.advance("2s");
    await failRunning(emu, "report");
    emu.clock.advance("5s");
    emu.clock.advance("2s");
    const kept = await failRunning(emu, "report"); // the one attempt is used up
    const bad = await emu.scheduler.request("/v1/job/report/evaluate", { method: "PUT", body: JSON.stringify({ JobID: "report", EvalOptions: { ForceReschedule: "yes" } }) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe("json: cannot unmarshal string into Go struct field JobEvaluateRequest.EvalOptions.ForceReschedule of type bool");
    expect(await allocs(emu, "report")).toHaveLength(2);
    const forced = await emu.scheduler.request("/v1/job/report/evaluate", { method: "PUT", body: JSON.stringify({ JobID: "report", EvalOptions: { ForceReschedule: true } }) });
    expect(forced.status).toBe(200);
    expect((await get(emu, `/v1/allocation/${kept.ID}`)).DesiredTransition).toMatchObject({ ForceReschedule: true, Reschedule: null });
    emu.clock.advance("100ms");
    const all = await allocs(emu, "report");
    expect(all).toHaveLength(3);
    expect(all[1]).toMatchObject({ ID: kept.ID, DesiredStatus: "stop", NextAllocation: all[2]!.ID, DesiredDescription: "alloc was rescheduled because it failed" });
    expect(delays(all[2]!)).toEqual([5, 5]);
  });

  it("stopping a failed allocation that waits for its follow-up replaces it at once; the follow-up then finds nothing to do", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("30s");
    const failed = await failRunning(emu, "web");
    emu.clock.advance("100ms");
    const followUpId = (await get(emu, `/v1/allocation/${failed.ID}`)).FollowupEvalID;
    expect(followUpId).not.toBe("");
    const stop = await emu.scheduler.request(`/v1/allocation/${failed.ID}/stop`, { method: "PUT" });
    expect(stop.status).toBe(200);
    emu.clock.advance("100ms");
    let all = await allocs(emu, "web");
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ ClientStatus: "failed", DesiredStatus: "stop", DesiredDescription: "alloc is being migrated", NextAllocation: all[1]!.ID });
    // A migration's replacement, not a reschedule's: no tracker.
    expect(all[1]!.RescheduleTracker).toBeNull();
    emu.clock.advance("1m");
    all = await allocs(emu, "web");
    expect(all).toHaveLength(2);
    expect(await get(emu, `/v1/evaluation/${followUpId}`)).toMatchObject({ Status: "complete" });
    expect((await get(emu, "/v1/job/web/summary")).Summary.g).toMatchObject({ Failed: 1, Running: 1 });
  });

  it("the event stream carries the follow-up evaluation and the rescheduled allocations", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("30s");
    const failed = await failRunning(emu, "web");
    const index = Number((await emu.scheduler.request("/v1/job/web/allocations")).headers.get("X-Nomad-Index"));
    emu.clock.advance("31s");
    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/event/stream?index=${index}&topic=Evaluation&topic=Allocation`, { signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    // Replayed from the buffer at once: read until the replacement's event has come, then hang up.
    while (!text.includes('"PreviousAllocation"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("{") && line !== "{}")
      .flatMap((line) => (JSON.parse(line) as Json).Events as Json[]);
    const followUp = events.find((e) => e.Topic === "Evaluation" && e.Payload.Evaluation.StatusDescription === "created for delayed rescheduling");
    expect(followUp?.Payload.Evaluation).toMatchObject({ TriggeredBy: "alloc-failure", Status: "pending", WaitUntil: "2026-01-01T00:01:00Z" });
    const marked = events.find((e) => e.Topic === "Allocation" && e.Key === failed.ID && e.Payload.Allocation.FollowupEvalID);
    expect(marked?.Payload.Allocation.FollowupEvalID).toBe(followUp!.Key);
    const replacement = events.find((e) => e.Topic === "Allocation" && e.Payload.Allocation.PreviousAllocation === failed.ID);
    expect(replacement?.Payload.Allocation.RescheduleTracker.Events[0]).toMatchObject({ PrevAllocID: failed.ID, Delay: 30 * SECOND });
  });

  it('a replacement that finds no node leaves the failed allocation marked "no placement", replaced once a node is eligible', async () => {
    const emu = await createStandin();
    await register(emu, { ...job("report", { type: "batch" }), Meta: { "standin.batch_run": "1h" } });
    emu.clock.advance("2s");
    const failed = await failRunning(emu, "report");
    await act(emu, { do: "node-eligibility", node: "standin", eligible: false });
    emu.clock.advance("5s"); // the follow-up runs: no eligible node
    let all = await allocs(emu, "report");
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ ID: failed.ID, DesiredStatus: "run", RescheduleTracker: { Events: null, LastReschedule: "no placement" } });
    const blocked = (await evals(emu, "report")).find((e) => e.Status === "blocked");
    expect(blocked).toMatchObject({ TriggeredBy: "queued-allocs" });
    await act(emu, { do: "node-eligibility", node: "standin", eligible: true });
    emu.clock.advance("100ms");
    all = await allocs(emu, "report");
    expect(all).toHaveLength(2);
    expect(all[0]).toMatchObject({ DesiredStatus: "stop", NextAllocation: all[1]!.ID });
    expect(all[1]!.RescheduleTracker).toMatchObject({ LastReschedule: "ok", Events: [expect.objectContaining({ PrevAllocID: failed.ID, Delay: 5 * SECOND })] });
  });

  it("a plan counts a failed allocation the policy keeps as ignored, and one due now as a place and a stop", async () => {
    const emu = await createStandin();
    const body = { ...job("report", { type: "batch" }), Meta: { "standin.batch_run": "1h" } };
    await register(emu, body);
    emu.clock.advance("2s");
    await failRunning(emu, "report");
    emu.clock.advance("5s");
    emu.clock.advance("2s");
    await failRunning(emu, "report"); // attempts used up: kept
    const plan = async () => {
      const res = await emu.scheduler.request("/v1/job/report/plan", { method: "PUT", body: JSON.stringify({ Job: body }) });
      expect(res.status).toBe(200);
      return ((await res.json()) as Json).Annotations.DesiredTGUpdates.g;
    };
    expect(await plan()).toMatchObject({ Place: 0, Stop: 0, Ignore: 1 });
    // Marked ForceReschedule (its evaluation not yet run): a reschedule now.
    await emu.scheduler.request("/v1/job/report/evaluate", { method: "PUT", body: JSON.stringify({ JobID: "report", EvalOptions: { ForceReschedule: true } }) });
    expect(await plan()).toMatchObject({ Place: 1, Stop: 1, Ignore: 0 });
    emu.clock.advance("100ms");
    expect(await plan()).toMatchObject({ Place: 0, Stop: 0, Ignore: 1 });
  });
});
