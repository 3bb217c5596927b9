/**
 * Stopping a job in Nomad's order, as a consumer of the event stream sees it:
 * the deregister writes the job (Stop) and a `job-deregister` evaluation; the
 * scheduler's plan sets the allocations' DesiredStatus to stop (PlanResult,
 * still running); each client then reports its allocation complete in a
 * write of its own (AllocationUpdated). `?purge=true` goes the same way.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

/** The buffered batches from `index` through the newest write, replayed by a stream opened now (StartAtClosest). */
async function replay(emu: Standin, query: string): Promise<Json[]> {
  const controller = new AbortController();
  controllers.push(controller);
  const res = await emu.scheduler.request(`/v1/event/stream?${query}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const last = emu.index;
  const frames: Json[] = [];
  let pending = "";
  while (!frames.some((f) => f.Index >= last)) {
    const { done, value } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const frame = JSON.parse(pending.slice(0, nl)) as Json;
      pending = pending.slice(nl + 1);
      if (frame.Events) frames.push(frame);
    }
  }
  controller.abort();
  return frames;
}

/** One line per event: `<Topic> <Type> <DesiredStatus>/<ClientStatus>` for allocations. */
function lines(frames: Json[]): string[] {
  return frames.flatMap((f) =>
    f.Events.map((e: Json) =>
      e.Topic === "Allocation" ? `${e.Topic} ${e.Type} ${e.Payload.Allocation.DesiredStatus}/${e.Payload.Allocation.ClientStatus}` : `${e.Topic} ${e.Type}`,
    ),
  );
}

async function runningJob(count: number): Promise<Standin> {
  const emu = await createStandin();
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: webJob("web", { count }) }) });
  expect(res.status).toBe(200);
  emu.clock.advance("1100ms");
  return emu;
}

describe("stopping a job: deregister, plan, then the clients' updates", () => {
  for (const purge of [false, true]) {
    it(`DELETE /v1/job/:id${purge ? "?purge=true" : ""}: the plan's PlanResult leaves the allocations running; each completes in a later AllocationUpdated`, async () => {
      const emu = await runningJob(2);
      const from = emu.index + 1;
      const stop = await emu.scheduler.request(`/v1/job/web${purge ? "?purge=true" : ""}`, { method: "DELETE" });
      expect(stop.status).toBe(200);
      emu.clock.advance("100ms");
      // The plan has run: every allocation is asked to stop, none has stopped yet.
      const planned = (await (await emu.scheduler.request("/v1/allocations")).json()) as Json[];
      expect(planned.map((a) => `${a.DesiredStatus}/${a.ClientStatus}`)).toEqual(["stop/running", "stop/running"]);
      emu.clock.advance("200ms");
      const done = (await (await emu.scheduler.request("/v1/allocations")).json()) as Json[];
      expect(done.map((a) => `${a.DesiredStatus}/${a.ClientStatus}`)).toEqual(["stop/complete", "stop/complete"]);
      // Killed by the client: each task ends with Killed.
      const full = (await (await emu.scheduler.request(`/v1/allocation/${done[0]!.ID}`)).json()) as Json;
      expect(full.TaskStates.server.Events.at(-1).Type).toBe("Killed");

      const frames = await replay(emu, `index=${from}`);
      const deregistered = purge ? [] : ["Job JobDeregistered"];
      expect(lines(frames)).toEqual([
        ...deregistered,
        "Evaluation JobDeregistered",
        ...(purge ? [] : ["Job PlanResult"]),
        "Deployment PlanResult",
        "Allocation PlanResult stop/running",
        "Allocation PlanResult stop/running",
        "Evaluation EvaluationUpdated",
        "Allocation AllocationUpdated stop/complete",
        "Allocation AllocationUpdated stop/complete",
      ]);
      // The clients' updates are writes of their own, after the plan's: one per node (a client batches its updates).
      const planIndex = frames.find((f) => f.Events.some((e: Json) => e.Type === "PlanResult"))!.Index;
      const updates = frames.filter((f) => f.Events.some((e: Json) => e.Type === "AllocationUpdated"));
      expect(updates.every((f) => f.Index > planIndex)).toBe(true);
      expect(updates.length).toBe(new Set(done.map((a) => a.NodeID)).size);
    });
  }

  it("a client batches: what the plans stop on one node within 200 ms is reported in one write", async () => {
    const emu = await createStandin();
    for (const id of ["a", "b"]) {
      const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: webJob(id, { count: 2 }) }) });
      expect(res.status).toBe(200);
    }
    emu.clock.advance("1100ms");
    const from = emu.index + 1;
    expect((await emu.scheduler.request("/v1/job/a", { method: "DELETE" })).status).toBe(200);
    emu.clock.advance("50ms");
    expect((await emu.scheduler.request("/v1/job/b", { method: "DELETE" })).status).toBe(200);
    emu.clock.advance("1s");
    const updates = (await replay(emu, `index=${from}`)).filter((f) => f.Events.some((e: Json) => e.Type === "AllocationUpdated"));
    const allocs = (await (await emu.scheduler.request("/v1/allocations")).json()) as Json[];
    const nodes = [...new Set(allocs.map((a) => a.NodeID))].sort();
    // One write per node, each carrying that node's allocations of both jobs (b's stop joined a's pending batch).
    const byFrame = updates.map((f) => f.Events.map((e: Json) => `${e.Payload.Allocation.NodeID} ${e.Payload.Allocation.JobID}`).sort());
    expect(byFrame.flat().sort()).toEqual(allocs.map((a) => `${a.NodeID} ${a.JobID}`).sort());
    expect(updates.length).toBe(nodes.length);
    for (const frame of byFrame) expect(new Set(frame.map((line: string) => line.split(" ")[1])).size).toBe(2);
  });

  it("a stopped allocation frees its node at the plan: re-registering places at once, while the old ones finish", async () => {
    const emu = await runningJob(1);
    expect((await emu.scheduler.request("/v1/job/web", { method: "DELETE" })).status).toBe(200);
    emu.clock.advance("100ms");
    const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: webJob("web", { count: 1 }) }) });
    expect(res.status).toBe(200);
    emu.clock.advance("2s");
    const all = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    expect(all.map((a) => `v${a.JobVersion} ${a.DesiredStatus}/${a.ClientStatus}`).sort()).toEqual(["v0 stop/complete", "v2 run/running"]);
    expect(((await (await emu.scheduler.request("/v1/job/web/summary")).json()) as Json).Summary.web).toMatchObject({ Running: 1, Complete: 1 });
  });
});
