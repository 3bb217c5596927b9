/**
 * GC age as Nomad 1.9.7 judges it (nomad/core_sched.go since 1.9.2: the
 * objects' own times against now − threshold, an object collected when its
 * time is not after the cutoff): at the threshold's edges, with the passes
 * made to tick every millisecond so the edge itself is tried; a node's
 * StatusUpdatedAt counted in whole seconds; a lost allocation collected as
 * any other (Nomad 1.9 has no prevent_reschedule_on_lost rule in GC).
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { callScheduler as req } from "../support/call.js";
import { smallJob } from "../support/jobs.js";

type Json = Record<string, any>;
const status = async (emu: Standin, path: string) => (await req(emu, "GET", path)).status;
const START = Date.parse("2026-01-01T00:00:00Z");
const HOUR = 3_600_000;

describe("GC age at the threshold's edges", () => {
  it.each([
    ["1 ms before eval_gc_threshold", -1, 200],
    ["at eval_gc_threshold (the cutoff itself: not after it)", 0, 404],
  ])("a purged job's evaluation, %s", async (_what, offsetMs, expected) => {
    const emu = await createStandin({ fixture: { scheduler: { gc: { evalGCInterval: "1ms", jobGCInterval: "1ms" } } } as never });
    const reg = await req(emu, "PUT", "/v1/jobs", { Job: smallJob("web") });
    emu.clock.advance("1m");
    const [alloc] = (await req(emu, "GET", "/v1/job/web/allocations")).body as Json[];
    expect((await req(emu, "DELETE", "/v1/job/web?purge=true")).status).toBe(200);
    emu.clock.advance("1m");
    // The last change of the evaluation and of its allocation (nanoseconds on the wire).
    const evaluation = (await req(emu, "GET", `/v1/evaluation/${reg.body.EvalID}`)).body as Json;
    const stopped = (await req(emu, "GET", `/v1/allocation/${alloc!.ID}`)).body as Json;
    expect(evaluation.Status).toBe("complete");
    const changed = Math.max(evaluation.ModifyTime, stopped.ModifyTime) / 1e6;
    emu.clock.advanceTo(changed + HOUR + offsetMs);
    expect(await status(emu, `/v1/evaluation/${reg.body.EvalID}`)).toBe(expected);
    expect(await status(emu, `/v1/allocation/${alloc!.ID}`)).toBe(expected);
  });

  it.each([
    ["1 ms before job_gc_threshold", -1, 200],
    ["at job_gc_threshold", 0, 404],
  ])("a dead batch job, %s after its last change", async (_what, offsetMs, expected) => {
    const emu = await createStandin({ fixture: { scheduler: { gc: { jobGCInterval: "1ms" } } } as never });
    expect((await req(emu, "PUT", "/v1/jobs", { Job: smallJob("once", { type: "batch" }) })).status).toBe(200);
    emu.clock.advance("1m");
    const job = (await req(emu, "GET", "/v1/job/once")).body as Json;
    expect(job.Status).toBe("dead");
    const evals = (await req(emu, "GET", "/v1/job/once/evaluations")).body as Json[];
    const allocs = (await req(emu, "GET", "/v1/job/once/allocations")).body as Json[];
    // Job GC needs the job submitted and every evaluation and allocation changed before the cutoff.
    const changed = Math.max(job.SubmitTime, ...evals.map((e) => e.ModifyTime), ...allocs.map((a) => a.ModifyTime)) / 1e6;
    emu.clock.advanceTo(changed + 4 * HOUR + offsetMs);
    expect(await status(emu, "/v1/job/once")).toBe(expected);
  });

  it.each([
    // Down at 00:00:00.700: Nomad reads StatusUpdatedAt as 00:00:00, so the pass at 24:00:00.000 takes it.
    ["23:59:59.999 (the 23:55 pass)", "2026-01-01T23:59:59.999Z", 200],
    ["24:00:00.000, 0.7 s before 24 h after it went down", "2026-01-02T00:00:00.000Z", 404],
  ])("a node down at 00:00:00.700, at %s", async (_what, at, expected) => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "gone" }] } } as never });
    const gone = ((await req(emu, "GET", "/v1/nodes")).body as Json[]).find((n) => n.Name === "gone")!;
    emu.clock.advanceTo(START + 700);
    const fault = await emu.scheduler.request(`/_standin/scheduler/nodes/${gone.ID}`, { method: "POST", body: JSON.stringify({ Status: "down" }) });
    expect(fault.status).toBe(200);
    expect(((await req(emu, "GET", `/v1/node/${gone.ID}`)).body as Json).StatusUpdatedAt).toBe(START / 1000);
    emu.clock.advanceTo(at);
    expect(await status(emu, `/v1/node/${gone.ID}`)).toBe(expected);
  });
});

describe("GC eligibility as Nomad 1.9 has it", () => {
  it("collects a lost allocation of a running job whose group prevents rescheduling on lost", async () => {
    const emu = await createStandin();
    const job = smallJob("web");
    job.TaskGroups[0].PreventRescheduleOnLost = true;
    expect((await req(emu, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
    emu.clock.advance("1m");
    const [alloc] = (await req(emu, "GET", "/v1/job/web/allocations")).body as Json[];
    await emu.scheduler.request(`/_standin/scheduler/nodes/${alloc!.NodeID}`, { method: "POST", body: JSON.stringify({ Status: "down" }) });
    emu.clock.advance("1m");
    expect(((await req(emu, "GET", `/v1/allocation/${alloc!.ID}`)).body as Json).ClientStatus).toBe("lost");
    expect(((await req(emu, "GET", "/v1/job/web")).body as Json).Stop).toBe(false);
    emu.clock.advance("2h");
    expect(await status(emu, `/v1/allocation/${alloc!.ID}`)).toBe(404);
  });
});
