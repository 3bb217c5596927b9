/**
 * The eval broker's per-job queue (Nomad 1.4.3+ nomad/eval_broker.go Ack and
 * leader.go cancelCancelableEvals): the broker runs one evaluation of a job
 * at a time; when it is acked, every evaluation of the job that waited behind
 * it but the first in queue order (highest priority, then newest) is marked
 * `canceled`, "canceled after more recent eval was processed".
 *
 * Through HTTP: N failures of one job's allocations make N `alloc-failure`
 * evaluations; two run, the N-2 between them are canceled, and the
 * replacements are placed. By counts: the one advance that reschedules N
 * allocations of one job, and the N failures before it, read a number of
 * table rows linear in N (each evaluation used to reconcile all N failed
 * allocations: N² rows). No test measures time.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { countRowReads, rowsReadDuring } from "../support/row-reads.js";

type Json = Record<string, any>;

afterEach(() => vi.restoreAllMocks());

const SECOND = 1_000_000_000;
const CANCELED = "canceled after more recent eval was processed";
/** Hundreds of allocations failed one request at a time; on a loaded machine that can pass the default 20 s. */
const LARGE = 120_000;

/** Reschedule after 5s, constant: every failure is replaced by the one follow-up evaluation 5s later. */
const RESCHEDULE = { Attempts: 1, Interval: 3600 * SECOND, Delay: 5 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };

function job(id: string, count: number, extra: Json = {}): Json {
  return {
    ID: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Count: count, ReschedulePolicy: RESCHEDULE, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 1, MemoryMB: 10 } }] }],
    ...extra,
  };
}

async function ok(emu: Standin, method: string, path: string, body?: unknown): Promise<any> {
  const res = await call(emu.scheduler, method, path, body);
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(200);
  return res.body;
}

const byCreation = (rows: Json[]) => [...rows].sort((a, b) => a.CreateIndex - b.CreateIndex);

/** A node big enough for every test here, a job of `count` allocations running on it. */
async function running(count: number, id = "web"): Promise<Standin> {
  const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "big", Resources: { CPU: 10_000_000, MemoryMB: 10_000_000 } }] } } as never });
  await ok(emu, "PUT", "/v1/jobs", { Job: job(id, count) });
  emu.clock.advance("30s");
  return emu;
}

/** Fails every running allocation of the job through the control API, one request each; returns their IDs. */
async function failAll(emu: Standin, jobId: string): Promise<string[]> {
  const ids = ((await ok(emu, "GET", `/v1/job/${jobId}/allocations`)) as Json[]).filter((a) => a.ClientStatus === "running").map((a) => a.ID as string);
  for (const id of ids) await ok(emu, "POST", `/_standin/scheduler/allocations/${id}`, { ClientStatus: "failed" });
  return ids;
}

describe("the eval broker runs one evaluation of a job at a time and cancels the ones it superseded", () => {
  it("5 failures: the first and the newest alloc-failure evaluations run, the 3 between are canceled, all 5 are replaced", async () => {
    const emu = await running(5);
    const before = new Set(((await ok(emu, "GET", "/v1/evaluations")) as Json[]).map((e) => e.ID));
    const failed = await failAll(emu, "web");
    const failures = byCreation(((await ok(emu, "GET", "/v1/evaluations")) as Json[]).filter((e) => !before.has(e.ID)));
    expect(failures.map((e) => [e.TriggeredBy, e.Status])).toEqual(Array(5).fill(["alloc-failure", "pending"]));

    emu.clock.advance("1s");
    const after = new Map(((await ok(emu, "GET", "/v1/evaluations")) as Json[]).map((e) => [e.ID, e]));
    const [first, ...rest] = failures.map((e) => after.get(e.ID)!);
    const newest = rest.pop()!;
    expect(first).toMatchObject({ Status: "complete" });
    expect(newest).toMatchObject({ Status: "complete" });
    for (const e of rest) {
      expect(e).toMatchObject({ Status: "canceled", StatusDescription: CANCELED, TriggeredBy: "alloc-failure", JobID: "web" });
      // Canceled by the reaper after the first was acked (its own write), before the newest ran.
      expect(e.ModifyIndex).toBeGreaterThan(first!.ModifyIndex);
      expect(e.ModifyIndex).toBeLessThan(newest.ModifyIndex);
      expect(e.ModifyTime).toBeGreaterThan(e.CreateTime);
    }
    // The one evaluation by ID says the same; the job's list too.
    expect(await ok(emu, "GET", `/v1/evaluation/${rest[0]!.ID}`)).toMatchObject({ Status: "canceled", StatusDescription: CANCELED });
    const ofJob = (await ok(emu, "GET", "/v1/job/web/evaluations")) as Json[];
    expect(ofJob.filter((e) => e.Status === "canceled")).toHaveLength(3);

    // The first run made the follow-up for the delay; it is not in the broker's queue until then, so it is never canceled.
    const followUps = [...after.values()].filter((e) => e.StatusDescription === "created for delayed rescheduling");
    expect(followUps).toHaveLength(1);
    expect(followUps[0]).toMatchObject({ Status: "pending", TriggeredBy: "alloc-failure" });
    emu.clock.advance("30s");
    expect(await ok(emu, "GET", `/v1/evaluation/${followUps[0]!.ID}`)).toMatchObject({ Status: "complete" });
    const allocs = (await ok(emu, "GET", "/v1/job/web/allocations")) as Json[];
    // The list's stubs carry no PreviousAllocation: a replacement names the failed allocation in its tracker.
    const replacements = allocs.filter((a) => a.RescheduleTracker);
    expect(replacements.map((a) => a.ClientStatus)).toEqual(Array(5).fill("running"));
    expect(new Set(replacements.map((a) => a.RescheduleTracker.Events[0].PrevAllocID))).toEqual(new Set(failed));
    // Nothing else was canceled, and nothing is left to run.
    const final = (await ok(emu, "GET", "/v1/evaluations")) as Json[];
    expect(final.filter((e) => e.Status === "canceled")).toHaveLength(3);
    expect(final.filter((e) => e.Status === "pending" || e.Status === "blocked")).toEqual([]);
    expect(await ok(emu, "GET", "/v1/job/web")).toMatchObject({ Status: "running" });
  });

  it("two evaluations of a job: the one queued behind is kept and runs (nothing to cancel); other jobs' queues are their own", async () => {
    const emu = await running(2);
    await ok(emu, "PUT", "/v1/jobs", { Job: job("other", 2) });
    emu.clock.advance("30s");
    const before = new Set(((await ok(emu, "GET", "/v1/evaluations")) as Json[]).map((e) => e.ID));
    await failAll(emu, "web");
    await failAll(emu, "other");
    emu.clock.advance("1s");
    const made = ((await ok(emu, "GET", "/v1/evaluations")) as Json[]).filter((e) => !before.has(e.ID) && e.TriggeredBy === "alloc-failure" && !e.WaitUntil);
    expect(made).toHaveLength(4);
    expect(made.map((e) => e.Status)).toEqual(Array(4).fill("complete"));
  });

  it("the kept evaluation is the first in the broker's order: higher priority before newer", async () => {
    const emu = await running(1);
    const before = new Set(((await ok(emu, "GET", "/v1/evaluations")) as Json[]).map((e) => e.ID));
    // Three evaluations at one instant: a re-register at priority 70, then one at 30, then Job.Evaluate (at 30).
    await ok(emu, "PUT", "/v1/jobs", { Job: job("web", 1, { Priority: 70, Meta: { v: "1" } }) });
    await ok(emu, "PUT", "/v1/jobs", { Job: job("web", 1, { Priority: 30, Meta: { v: "2" } }) });
    await ok(emu, "PUT", "/v1/job/web/evaluate", {});
    emu.clock.advance("1s");
    const made = byCreation(((await ok(emu, "GET", "/v1/evaluations")) as Json[]).filter((e) => !before.has(e.ID) && e.TriggeredBy !== "deployment-watcher"));
    // The first ran; of the two behind it, the priority-70 one was kept (and ran), the newer priority-30 one canceled.
    expect(made.slice(0, 3).map((e) => [e.Priority, e.Status, e.StatusDescription ?? ""])).toEqual([
      [70, "complete", ""],
      [30, "canceled", CANCELED],
      [30, "complete", ""],
    ]);
  });
});

describe("the work of N failures of one job and their reschedules is linear in N", () => {
  /** Rows read by the N failures (one request each), and by the one advance that replaces them all. */
  async function rowsRead(n: number): Promise<{ failures: number; advance: number; canceled: number }> {
    const reads = countRowReads();
    const emu = await running(n, "many");
    const failures = await rowsReadDuring(reads, () => failAll(emu, "many"));
    const advance = await rowsReadDuring(reads, () => emu.clock.advance("30s"));
    const allocs = (await ok(emu, "GET", "/v1/job/many/allocations")) as Json[];
    expect(allocs.filter((a) => a.RescheduleTracker && a.ClientStatus === "running")).toHaveLength(n);
    const evals = (await ok(emu, "GET", "/v1/job/many/evaluations")) as Json[];
    vi.restoreAllMocks();
    return { failures, advance, canceled: evals.filter((e) => e.Status === "canceled").length };
  }

  it(
    "200 then 400 allocations: twice the allocations read at most 2.5 times the rows, a few per allocation",
    async () => {
      const small = await rowsRead(200);
      const large = await rowsRead(400);
      // Every alloc-failure evaluation reconciled all N failed allocations before: N² rows (about 160,000 for the
      // 400 failed here, four times 200's). Now two evaluations read them, the follow-up replaces them.
      expect(large.advance / small.advance).toBeLessThanOrEqual(2.5);
      expect(large.advance).toBeLessThanOrEqual(20 * 400);
      expect(large.failures / small.failures).toBeLessThanOrEqual(2.5);
      expect(large.failures).toBeLessThanOrEqual(20 * 400);
      expect([small.canceled, large.canceled]).toEqual([198, 398]);
    },
    LARGE,
  );
});
