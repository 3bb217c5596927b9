/**
 * Node operations the official client calls (scheduler-breadth-nomad.md §5,
 * §3.4): eligibility, drains migrating allocations batch by batch on the
 * virtual clock, deadlines, purge, and stopping one allocation.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

const get = async (emu: Standin, path: string) => (await call(emu.scheduler, "GET", path)).body;
const put = (emu: Standin, path: string, body: unknown = {}) => call(emu.scheduler, "PUT", path, body);

function job(id: string, count: number, opts: { type?: string; migrate?: Json } = {}): Json {
  const j = webJob(id, { type: opts.type, count, group: "g", task: "t" });
  if (opts.migrate) j.TaskGroups[0].Migrate = opts.migrate;
  return j;
}

/** Two nodes: `standin` (the default one) and `spare`, which starts ineligible so everything lands on `standin`. */
async function twoNodes(): Promise<{ emu: Standin; first: string; spare: string }> {
  const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "spare", SchedulingEligibility: "ineligible" }] } } as never });
  const nodes = (await get(emu, "/v1/nodes")) as Json[];
  return { emu, first: nodes.find((n) => n.Name === "standin")!.ID, spare: nodes.find((n) => n.Name === "spare")!.ID };
}

async function register(emu: Standin, body: Json): Promise<void> {
  const res = await put(emu, "/v1/jobs", { Job: body });
  expect(res.status, res.text).toBe(200);
}

const liveOn = async (emu: Standin, jobId: string, nodeId: string) =>
  ((await get(emu, `/v1/job/${jobId}/allocations`)) as Json[]).filter((a) => a.NodeID === nodeId && a.DesiredStatus === "run" && ["pending", "running"].includes(a.ClientStatus))
    .length;

describe("eligibility", () => {
  it("toggles, creates node evaluations when made eligible, and is a no-op with an all-zero answer when unchanged", async () => {
    const { emu, first, spare } = await twoNodes();
    await register(emu, job("web", 1));
    emu.clock.advance("1m");
    const same = await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "ineligible" });
    expect(same.status).toBe(200);
    expect(same.text).toBe('{"EvalCreateIndex":0,"EvalIDs":null,"Index":0,"NodeModifyIndex":0}');

    const off = await put(emu, `/v1/node/${first}/eligibility`, { Eligibility: "ineligible" });
    expect(off.body).toMatchObject({ EvalIDs: null, EvalCreateIndex: 0 });
    expect(off.body.Index).toBeGreaterThan(0);
    const node = await get(emu, `/v1/node/${first}`);
    expect(node.SchedulingEligibility).toBe("ineligible");
    expect(node.ModifyIndex).toBe(off.body.NodeModifyIndex);
    expect(node.Events.at(-1)).toMatchObject({ Subsystem: "Cluster", Message: "Node marked as ineligible for scheduling" });

    const on = await put(emu, `/v1/node/${first}/eligibility`, { Eligibility: "eligible" });
    expect(on.body.EvalIDs).toHaveLength(1); // the job with an allocation there
    expect((await get(emu, `/v1/evaluation/${on.body.EvalIDs[0]}`)).TriggeredBy).toBe("node-update");
  });

  it.each([
    ["/v1/node/00000000-0000-0000-0000-000000000000/eligibility", { Eligibility: "eligible" }, "node not found"],
    ["FIRST/eligibility", { Eligibility: "maybe" }, 'invalid scheduling eligibility "maybe"'],
  ])("%s %j → 500 %s", async (path, body, text) => {
    const { emu, first } = await twoNodes();
    const hash = emu.stateHash();
    const res = await put(emu, path.startsWith("FIRST") ? `/v1/node/${first}/${path.split("/")[1]}` : path, body);
    expect(res.status).toBe(500);
    expect(res.text).toBe(text);
    expect(emu.stateHash()).toBe(hash);
  });

  it("refuses eligible while draining", async () => {
    const { emu, first } = await twoNodes();
    await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: 3_600_000_000_000 } });
    const res = await put(emu, `/v1/node/${first}/eligibility`, { Eligibility: "eligible" });
    expect(res.status).toBe(500);
    expect(res.text).toBe("can not set node's scheduling eligibility to eligible while it is draining");
  });
});

describe("drain", () => {
  it("migrates a service group max_parallel at a time, each batch after the last one's replacements are healthy, and leaves the node ineligible", async () => {
    const { emu, first, spare } = await twoNodes();
    await register(emu, job("web", 3, { migrate: { MaxParallel: 1, MinHealthyTime: 10_000_000_000 } }));
    emu.clock.advance("1m");
    expect(await liveOn(emu, "web", first)).toBe(3);
    expect((await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "eligible" })).status).toBe(200);

    const res = await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: 3_600_000_000_000, IgnoreSystemJobs: false }, Meta: { reason: "kernel" } });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(["EvalCreateIndex", "EvalIDs", "Index", "NodeModifyIndex"]);
    const draining = await get(emu, `/v1/node/${first}`);
    expect(draining).toMatchObject({ Drain: true, SchedulingEligibility: "ineligible", LastDrain: { Status: "draining", Meta: { reason: "kernel" } } });
    expect(draining.DrainStrategy).toMatchObject({ Deadline: 3_600_000_000_000, IgnoreSystemJobs: false, ForceDeadline: "2026-01-01T01:01:00Z" });

    emu.clock.advance("1s"); // first pass: one migrates
    expect(await liveOn(emu, "web", first)).toBe(2);
    emu.clock.advance("5s"); // its replacement is not healthy yet: no second batch
    expect(await liveOn(emu, "web", first)).toBe(2);
    expect(await liveOn(emu, "web", spare)).toBe(1);
    emu.clock.advance("7s"); // 1.1 s to start + 10 s min_healthy_time after the first batch
    expect(await liveOn(emu, "web", first)).toBe(1);
    emu.clock.advance("12s");
    expect(await liveOn(emu, "web", first)).toBe(0);
    emu.clock.advance("12s");
    const done = await get(emu, `/v1/node/${first}`);
    expect(done).toMatchObject({ Drain: false, DrainStrategy: null, SchedulingEligibility: "ineligible", LastDrain: { Status: "complete" } });
    expect(done.Events.at(-1)).toMatchObject({ Subsystem: "Drain", Message: "Node drain complete" });
    expect(await liveOn(emu, "web", spare)).toBe(3);

    const migrated = ((await get(emu, "/v1/job/web/allocations")) as Json[]).filter((a) => a.NodeID === first);
    for (const stub of migrated) {
      const alloc = await get(emu, `/v1/allocation/${stub.ID}`);
      expect(alloc).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc is being migrated", DesiredTransition: { Migrate: true } });
      const next = await get(emu, `/v1/allocation/${alloc.NextAllocation}`);
      expect(next.PreviousAllocation).toBe(alloc.ID);
      expect(next.NodeID).toBe(spare);
    }
    const evals = (await get(emu, "/v1/job/web/evaluations")) as Json[];
    expect(evals.filter((e) => e.TriggeredBy === "node-drain").length).toBeGreaterThanOrEqual(3);
  });

  it("the deadline forces what is left, batch allocations included, and says so in the node event", async () => {
    const { emu, first, spare } = await twoNodes();
    await register(emu, job("web", 2, { migrate: { MaxParallel: 1, MinHealthyTime: 10_000_000_000 } }));
    await register(emu, { ...job("report", 1, { type: "batch" }), Meta: { "standin.batch_run": "1h" } });
    emu.clock.advance("1m");
    await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "eligible" });
    await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: 5_000_000_000 } });
    emu.clock.advance("2s");
    expect(await liveOn(emu, "web", first)).toBe(1);
    expect(await liveOn(emu, "report", first)).toBe(1); // batch is never migrated before the deadline
    emu.clock.advance("4s");
    expect(await liveOn(emu, "web", first)).toBe(0);
    expect(await liveOn(emu, "report", first)).toBe(0);
    const node = await get(emu, `/v1/node/${first}`);
    expect(node.LastDrain.Status).toBe("complete");
    expect(node.Events.at(-1)).toMatchObject({ Message: "Node drain complete", Details: { deadline_reached: "true" } });
  });

  it("a negative deadline forces everything at once; system allocations go too unless IgnoreSystemJobs", async () => {
    const { emu, first, spare } = await twoNodes();
    await register(emu, job("web", 1));
    await register(emu, job("agent", 1, { type: "system" }));
    emu.clock.advance("1m");
    await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "eligible" });
    emu.clock.advance("1m");
    expect(await liveOn(emu, "agent", first)).toBe(1);
    await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: -1, IgnoreSystemJobs: true } });
    expect(await liveOn(emu, "web", first)).toBe(0);
    expect(await liveOn(emu, "agent", first)).toBe(1); // ignored
    expect((await get(emu, `/v1/node/${first}`)).LastDrain.Status).toBe("complete");
  });

  it("system allocations drain last, once everything else has left", async () => {
    const { emu, first, spare } = await twoNodes();
    await register(emu, job("web", 1, { migrate: { MaxParallel: 1, MinHealthyTime: 10_000_000_000 } }));
    await register(emu, job("agent", 1, { type: "system" }));
    emu.clock.advance("1m");
    await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "eligible" });
    emu.clock.advance("1m");
    await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: 0 } });
    emu.clock.advance("1s");
    expect(await liveOn(emu, "web", first)).toBe(0);
    expect(await liveOn(emu, "agent", first)).toBe(1);
    emu.clock.advance("12s");
    expect(await liveOn(emu, "agent", first)).toBe(0);
    expect((await get(emu, `/v1/node/${first}`)).LastDrain.Status).toBe("complete");
  });

  it("DrainSpec null cancels: the node stays ineligible unless MarkEligible, which makes node evaluations", async () => {
    const { emu, first } = await twoNodes();
    await register(emu, job("web", 1));
    emu.clock.advance("1m");
    await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: 0 } });
    const cancelled = await put(emu, `/v1/node/${first}/drain`, { DrainSpec: null });
    expect(cancelled.body.EvalIDs).toBeNull();
    expect(await get(emu, `/v1/node/${first}`)).toMatchObject({ Drain: false, DrainStrategy: null, SchedulingEligibility: "ineligible", LastDrain: { Status: "canceled" } });
    await put(emu, `/v1/node/${first}/drain`, { DrainSpec: { Deadline: 0 } });
    const eligible = await put(emu, `/v1/node/${first}/drain`, { DrainSpec: null, MarkEligible: true });
    expect(eligible.body.EvalIDs).toHaveLength(1);
    expect((await get(emu, `/v1/node/${first}`)).SchedulingEligibility).toBe("eligible");
  });

  it("the node-drain timeline action drains the same way, and a drain replays byte for byte", async () => {
    const run = async () => {
      const { emu, first, spare } = await twoNodes();
      await register(emu, job("web", 2, { migrate: { MaxParallel: 1, MinHealthyTime: 10_000_000_000 } }));
      emu.clock.advance("1m");
      await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "eligible" });
      emu.act("node-drain", { node: "standin", deadline: "1h" });
      emu.clock.advance("1m");
      expect(await liveOn(emu, "web", first)).toBe(0);
      expect(await liveOn(emu, "web", spare)).toBe(2);
      return emu.stateHash();
    };
    expect(await run()).toBe(await run());
  });
});

describe("purge and allocation stop", () => {
  it("purge deregisters the node; its allocations are lost and replaced elsewhere", async () => {
    const { emu, first, spare } = await twoNodes();
    await register(emu, job("web", 1));
    emu.clock.advance("1m");
    await put(emu, `/v1/node/${spare}/eligibility`, { Eligibility: "eligible" });
    const res = await put(emu, `/v1/node/${first}/purge`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.EvalIDs).toHaveLength(1);
    expect(res.body.NodeModifyIndex).toBe(res.body.Index);
    expect((await call(emu.scheduler, "GET", `/v1/node/${first}`)).status).toBe(404);
    emu.clock.advance("1m");
    expect(await liveOn(emu, "web", spare)).toBe(1);
    expect((await put(emu, `/v1/node/${first}/purge`)).text).toBe("node not found");
  });

  it("stopping an allocation makes an alloc-stop evaluation and a linked replacement", async () => {
    const { emu } = await twoNodes();
    await register(emu, job("web", 1));
    emu.clock.advance("1m");
    const [stub] = (await get(emu, "/v1/job/web/allocations")) as Json[];
    const res = await call(emu.scheduler, "POST", `/v1/allocation/${stub!.ID}/stop`);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body)).toEqual(["EvalID", "Index"]);
    expect((await get(emu, `/v1/evaluation/${res.body.EvalID}`)).TriggeredBy).toBe("alloc-stop");
    emu.clock.advance("1m");
    const old = await get(emu, `/v1/allocation/${stub!.ID}`);
    expect(old).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc is being migrated" });
    const next = await get(emu, `/v1/allocation/${old.NextAllocation}`);
    expect(next).toMatchObject({ PreviousAllocation: stub!.ID, ClientStatus: "running" });
    const missing = await call(emu.scheduler, "POST", "/v1/allocation/00000000-0000-0000-0000-000000000000/stop");
    expect(missing.status).toBe(404);
    expect(missing.text).toBe("allocation not found");
    expect((await call(emu.scheduler, "GET", `/v1/allocation/${stub!.ID}/stop`)).status).toBe(405);
  });
});
