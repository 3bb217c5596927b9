/**
 * `PUT /v1/system/gc` as Nomad runs it (nomad/system_endpoint.go, the core
 * scheduler's forceGC): the request is answered before anything is
 * collected, no `force-gc` evaluation is ever listed, and the collection is
 * written in slices of at most Nomad's reap size (7281 IDs,
 * structs.MaxUUIDsPerWriteRequest), one a turn of the event loop. Any
 * scheduler request, other write, clock move or snapshot finishes it first,
 * so state and indexes do not depend on how many slices had run, and a tape
 * of it replays the same. Counts, never times.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { MAX_IDS_PER_REAP } from "../../src/scheduler/engine/gc-force.js";
import { replayTape } from "../../src/replay.js";
import { callScheduler as req, send } from "../support/call.js";
import { turnsDuring } from "../support/turns.js";

type Json = Record<string, any>;

const ALLOCS = "scheduler.allocs";
const EVALS = "scheduler.evals";
const JOBS = "scheduler.jobs";
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One node big enough, and a service job of `count` tiny allocations, stopped: every allocation terminal. */
async function stoppedJob(count: number): Promise<Standin> {
  const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "big", Resources: { CPU: 10_000_000, MemoryMB: 10_000_000 } }] } } as never });
  const job = {
    ID: "wide",
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Count: count, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 1, MemoryMB: 10 } }] }],
  };
  expect((await req(emu, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
  emu.clock.advance("1m");
  expect((await req(emu, "DELETE", "/v1/job/wide")).status).toBe(200);
  emu.clock.advance("1m");
  return emu;
}

const size = (emu: Standin, table: string) => emu.store.table(table).size;

describe("PUT /v1/system/gc", () => {
  it("answers 200 with an empty body and no index before collecting anything; no core evaluation is listed", async () => {
    const emu = await stoppedJob(3);
    const evalsBefore = ((await req(emu, "GET", "/v1/evaluations")).body as Json[]).map((e) => e.ID);
    const index = emu.store.index;
    const res = await req(emu, "PUT", "/v1/system/gc");
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect(res.headers.get("X-Nomad-Index")).toBeNull();
    expect(res.headers.get("Content-Type")).toBeNull();
    // Answered, nothing written yet: the core evaluation lives in Nomad's broker, not the state.
    expect(emu.store.index).toBe(index);
    expect(size(emu, ALLOCS)).toBe(3);
    // The next scheduler request sees it all collected, and no `_core` evaluation anywhere.
    expect((await req(emu, "GET", "/v1/job/wide")).status).toBe(404);
    const evalsAfter = (await req(emu, "GET", "/v1/evaluations")).body as Json[];
    expect(evalsAfter.filter((e) => e.Type === "_core" || e.JobID === "force-gc")).toEqual([]);
    expect(evalsAfter.filter((e) => evalsBefore.includes(e.ID))).toEqual([]);
    expect(size(emu, ALLOCS)).toBe(0);
  });

  it("collects 9,000 allocations in writes of at most 7281 IDs, allocations first, one write a turn of the event loop", async () => {
    const count = 9_000;
    const emu = await stoppedJob(count);
    expect(size(emu, ALLOCS)).toBe(count);
    const evals = size(emu, EVALS);
    const writes: Array<{ allocs: number; evals: number; jobs: number }> = [];
    let last = { allocs: size(emu, ALLOCS), evals: size(emu, EVALS), jobs: size(emu, JOBS) };
    emu.store.onCommit(() => {
      const now = { allocs: size(emu, ALLOCS), evals: size(emu, EVALS), jobs: size(emu, JOBS) };
      writes.push({ allocs: last.allocs - now.allocs, evals: last.evals - now.evals, jobs: last.jobs - now.jobs });
      last = now;
    });
    expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
    // Each turn runs at most one write: watch them one by one.
    let turns = 0;
    for (; size(emu, JOBS) > 0 && turns < 20; turns++) {
      const before = writes.length;
      await turn();
      expect(writes.length - before).toBeLessThanOrEqual(1);
    }
    expect(writes).toEqual([
      { allocs: MAX_IDS_PER_REAP, evals: 0, jobs: 0 },
      { allocs: count - MAX_IDS_PER_REAP, evals, jobs: 0 },
      { allocs: 0, evals: 0, jobs: 1 },
    ]);
    for (const w of writes) expect(w.allocs + w.evals + w.jobs).toBeLessThanOrEqual(MAX_IDS_PER_REAP);
    expect(turns).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it("gives the same state and indexes whether the slices ran on their turns or a request finished them", async () => {
    const run = async (turnsBetween: number) => {
      // Two slices: the allocations and evaluations, then the job.
      const emu = await stoppedJob(50);
      expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
      for (let i = 0; i < turnsBetween; i++) await turn();
      // A registry write and a scheduler read after it: the same index whatever ran before.
      const kv = await send(emu.registry, "/v1/kv/after", { method: "PUT", body: "x" });
      expect(kv.text).toBe("true");
      const jobs = await req(emu, "GET", "/v1/jobs");
      return { hash: emu.stateHash(), index: jobs.headers.get("X-Nomad-Index"), kvIndex: (await send(emu.registry, "/v1/kv/after")).headers.get("x-consul-index") };
    };
    const settledAtOnce = await run(0);
    const oneSlice = await run(1);
    const allOnTurns = await run(10);
    expect(oneSlice).toEqual(settledAtOnce);
    expect(allOnTurns).toEqual(settledAtOnce);
  });

  it("serves a request that reads none of it (the clock) between slices", async () => {
    const emu = await stoppedJob(50);
    expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
    // A turn to decide, a turn for the first write.
    await turn();
    await turn();
    const clock = await emu.scheduler.request("/_standin/clock");
    expect(clock.status).toBe(200);
    // The clock answered while the collection was still under way: the allocations gone, the job not yet.
    expect([size(emu, ALLOCS), size(emu, JOBS)]).toEqual([0, 1]);
    expect((await req(emu, "GET", "/v1/jobs")).body).toEqual([]);
    expect(size(emu, JOBS)).toBe(0);
  });

  it("makes a scheduler request or a registry write wait for the rest without holding the event loop", async () => {
    const emu = await stoppedJob(50);
    expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
    const read = await turnsDuring(() => req(emu, "GET", "/v1/job/wide"));
    expect(read.result.status).toBe(404);
    // The slices ran on turns of their own while the read waited (a synchronous finish would give none).
    expect(read.turns).toBeGreaterThanOrEqual(2);
    expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
    const write = await turnsDuring(() => send(emu.registry, "/v1/kv/k", { method: "PUT", body: "v" }));
    expect(write.result.text).toBe("true");
    expect(write.turns).toBeGreaterThanOrEqual(1);
  });

  it("queues one collection for many requests that come together (a request waits for the one under way first)", async () => {
    const slicesFor = async (requests: number) => {
      const emu = await stoppedJob(50);
      const before = emu.store.deferredSlices;
      const answers = await Promise.all(Array.from({ length: requests }, () => req(emu, "PUT", "/v1/system/gc")));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      await emu.store.settled();
      return emu.store.deferredSlices - before;
    };
    const one = await slicesFor(1);
    expect(one).toBeGreaterThanOrEqual(3);
    const empty = await slicesFor(2);
    // The first request's collection, then one for all the others (they waited for it together).
    expect(await slicesFor(50)).toBe(empty);
  });

  it("replays from its tape to the same answers and state", async () => {
    const emu = await stoppedJob(50);
    expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
    await turn();
    await send(emu.registry, "/v1/kv/mid", { method: "PUT", body: "y" });
    expect((await req(emu, "GET", "/v1/job/wide")).status).toBe(404);
    await req(emu, "GET", "/v1/jobs");
    const tape = await emu.exportTape();
    const report = await replayTape(JSON.parse(JSON.stringify(tape)));
    expect(report.divergences).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("is forgotten by a restore: the restored state is what it was", async () => {
    const emu = await stoppedJob(50);
    const saved = emu.snapshot();
    expect((await req(emu, "PUT", "/v1/system/gc")).status).toBe(200);
    emu.restore(saved);
    for (let i = 0; i < 5; i++) await turn();
    expect(size(emu, ALLOCS)).toBe(50);
    expect((await req(emu, "GET", "/v1/job/wide")).status).toBe(200);
  });
});
