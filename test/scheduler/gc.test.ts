/**
 * The core scheduler's garbage collection on the virtual clock
 * (nomad/core_sched.go): each kind at its threshold (kept before it,
 * collected after the first pass past it), the batch-evaluation rule, job
 * GC of dead jobs and periodic children, deployment and node GC, the
 * fixture's settings, `PUT /v1/system/gc`, and what a collected object
 * answers. Passes tick every 5 virtual minutes, aligned to the epoch.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { callScheduler as req } from "../support/call.js";
import { smallJob } from "../support/jobs.js";

type Json = Record<string, any>;

async function register(emu: Standin, job: Json): Promise<Json> {
  const res = await req(emu, "PUT", "/v1/jobs", { Job: job });
  expect(res.status).toBe(200);
  return res.body;
}

function withImage(job: Json, image: string): Json {
  return { ...job, TaskGroups: job.TaskGroups.map((g: Json) => ({ ...g, Tasks: g.Tasks.map((t: Json) => ({ ...t, Config: { image } })) })) };
}

const status = async (emu: Standin, path: string) => (await req(emu, "GET", path)).status;

function periodicTick(): Json {
  return { ...smallJob("tick", { type: "batch" }), Periodic: { Enabled: true, SpecType: "cron", Spec: "* * * * *", ProhibitOverlap: false, TimeZone: "UTC" } };
}

describe("evaluation and allocation GC", () => {
  it("collects a replaced allocation and its evaluation after eval_gc_threshold (1h), not before", async () => {
    const emu = await createStandin();
    const first = await register(emu, smallJob("web"));
    emu.clock.advance("1m");
    const [old] = (await req(emu, "GET", "/v1/job/web/allocations")).body as Json[];
    // A new image replaces the allocation: the first eval's only allocation is now stopped.
    await register(emu, withImage(smallJob("web"), "y"));
    emu.clock.advance("1m");
    expect((await req(emu, "GET", `/v1/allocation/${old!.ID}`)).body.DesiredStatus).toBe("stop");
    emu.clock.advance("55m");
    expect(await status(emu, `/v1/evaluation/${first.EvalID}`)).toBe(200);
    expect(await status(emu, `/v1/allocation/${old!.ID}`)).toBe(200);
    const before = await req(emu, "GET", "/v1/evaluations");
    emu.clock.advance("10m");
    expect(await req(emu, "GET", `/v1/evaluation/${first.EvalID}`)).toMatchObject({ status: 404, text: "eval not found" });
    expect(await req(emu, "GET", `/v1/allocation/${old!.ID}`)).toMatchObject({ status: 404, text: "alloc not found" });
    // Gone from the lists and the job's sub-lists; the running allocation and the job stay.
    const evals = await req(emu, "GET", "/v1/evaluations");
    expect((evals.body as Json[]).map((e) => e.ID)).not.toContain(first.EvalID);
    expect(Number(evals.headers.get("X-Nomad-Index"))).toBeGreaterThan(Number(before.headers.get("X-Nomad-Index")));
    expect(((await req(emu, "GET", "/v1/job/web/evaluations")).body as Json[]).map((e) => e.ID)).not.toContain(first.EvalID);
    const allocs = (await req(emu, "GET", "/v1/job/web/allocations")).body as Json[];
    expect(allocs.map((a) => a.ID)).not.toContain(old!.ID);
    expect(allocs.map((a) => a.ClientStatus)).toEqual(["running"]);
    expect(((await req(emu, "GET", "/v1/allocations")).body as Json[]).map((a) => a.ID)).not.toContain(old!.ID);
    expect(await status(emu, "/v1/job/web")).toBe(200);
  });

  it("takes what standin keeps per allocation (action-made log lines) with the allocation", async () => {
    const emu = await createStandin();
    await register(emu, smallJob("once", { type: "batch" }));
    emu.clock.advance("2s");
    const [alloc] = (await req(emu, "GET", "/v1/job/once/allocations")).body as Json[];
    const logged = await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify({ do: "task-log", alloc: alloc!.ID, task: "t", lines: ["hi"] }) });
    expect(logged.status, await logged.clone().text()).toBe(200);
    const lines = () => Object.keys((emu.snapshot().store.tables["scheduler.task-log-lines"]?.rows ?? {}) as object).length;
    expect(lines()).toBe(1);
    emu.clock.advance("5h");
    expect(await status(emu, `/v1/allocation/${alloc!.ID}`)).toBe(404);
    expect(lines()).toBe(0);
  });

  it("keeps a batch evaluation for batch_eval_gc_threshold (24h); the job's deregister eval (type service) goes after 1h", async () => {
    const emu = await createStandin();
    const reg = await register(emu, smallJob("once", { type: "batch" }));
    emu.clock.advance("1m");
    const purge = await req(emu, "DELETE", "/v1/job/once?purge=true");
    emu.clock.advance("1m");
    emu.clock.advance("1h5m");
    expect(await req(emu, "GET", `/v1/evaluation/${purge.body.EvalID}`)).toMatchObject({ status: 404 });
    emu.clock.advance("22h");
    expect((await req(emu, "GET", `/v1/evaluation/${reg.EvalID}`)).body.Type).toBe("batch");
    emu.clock.advance("1h");
    expect(await req(emu, "GET", `/v1/evaluation/${reg.EvalID}`)).toMatchObject({ status: 404, text: "eval not found" });
    expect((await req(emu, "GET", "/v1/allocations")).body).toEqual([]);
  });
});

describe("job GC", () => {
  it("collects a dead batch job with its evaluations and allocations after job_gc_threshold (4h)", async () => {
    const emu = await createStandin();
    const reg = await register(emu, smallJob("once", { type: "batch" }));
    emu.clock.advance("1m");
    expect((await req(emu, "GET", "/v1/job/once")).body.Status).toBe("dead");
    const [alloc] = (await req(emu, "GET", "/v1/job/once/allocations")).body as Json[];
    emu.clock.advance("3h50m");
    expect(await status(emu, "/v1/job/once")).toBe(200);
    emu.clock.advance("15m");
    expect(await req(emu, "GET", "/v1/job/once")).toMatchObject({ status: 404, text: "job not found" });
    expect(await status(emu, "/v1/job/once/summary")).toBe(404);
    expect(await status(emu, "/v1/job/once/versions")).toBe(404);
    expect(await status(emu, `/v1/evaluation/${reg.EvalID}`)).toBe(404);
    expect(await status(emu, `/v1/allocation/${alloc!.ID}`)).toBe(404);
    expect((await req(emu, "GET", "/v1/jobs")).body).toEqual([]);
  });

  it("collects a stopped service job, but never a running one nor a dead one that was not stopped", async () => {
    const emu = await createStandin();
    await register(emu, smallJob("web"));
    await register(emu, smallJob("stay"));
    emu.clock.advance("1m");
    await req(emu, "DELETE", "/v1/job/web");
    emu.clock.advance("1m");
    expect((await req(emu, "GET", "/v1/job/web")).body.Status).toBe("dead");
    emu.clock.advance("4h10m");
    expect(await status(emu, "/v1/job/web")).toBe(404);
    expect(await status(emu, "/v1/job/stay")).toBe(200);
    expect(((await req(emu, "GET", "/v1/job/stay/allocations")).body as Json[]).length).toBe(1);
  });

  it("bounds a per-minute periodic job's children over 12 virtual hours; the parent's summary counts only those kept", async () => {
    const emu = await createStandin();
    await register(emu, periodicTick());
    let most = 0;
    for (let hour = 1; hour <= 12; hour++) {
      emu.clock.advance("1h");
      most = Math.max(most, ((await req(emu, "GET", "/v1/jobs?prefix=tick/")).body as Json[]).length);
    }
    // 4 hours of children (job_gc_threshold) plus one 5-minute pass interval, where 720 were launched
    // (the bound holds from hour 4 on, through eight hours of passes).
    expect(most).toBeGreaterThan(200);
    expect(most).toBeLessThanOrEqual(4 * 60 + 6);
    const children = (await req(emu, "GET", "/v1/jobs?prefix=tick/")).body as Json[];
    const summary = (await req(emu, "GET", "/v1/job/tick/summary")).body;
    expect(summary.Children.Dead + summary.Children.Pending + summary.Children.Running).toBe(children.length);
    expect(((await req(emu, "GET", "/v1/evaluations")).body as Json[]).length).toBeLessThanOrEqual(children.length + 1);
    expect(((await req(emu, "GET", "/v1/allocations")).body as Json[]).length).toBeLessThanOrEqual(children.length + 1);
    // The parent stays (a periodic parent goes only once stopped).
    expect((await req(emu, "GET", "/v1/job/tick")).body.Status).toBe("running");
  });
});

describe("deployment and node GC", () => {
  it("collects a terminal deployment whose allocations are all stopped after deployment_gc_threshold (1h)", async () => {
    const emu = await createStandin();
    await register(emu, smallJob("web"));
    emu.clock.advance("1m");
    const [first] = (await req(emu, "GET", "/v1/job/web/deployments")).body as Json[];
    expect(first!.Status).toBe("successful");
    // Its allocation still runs: the deployment stays, however old.
    emu.clock.advance("2h");
    expect(await status(emu, `/v1/deployment/${first!.ID}`)).toBe(200);
    // An in-place update: the live allocation moves to the new deployment, leaving the old one none.
    await register(emu, { ...smallJob("web"), Meta: { v: "2" } });
    emu.clock.advance("1m");
    emu.clock.advance("5m");
    // Old enough already: it goes at the first pass after its allocation stopped.
    expect(await req(emu, "GET", `/v1/deployment/${first!.ID}`)).toMatchObject({ status: 404, text: "deployment not found" });
    expect(((await req(emu, "GET", "/v1/job/web/deployments")).body as Json[]).map((d) => d.ID)).not.toContain(first!.ID);
    expect(((await req(emu, "GET", "/v1/deployments")).body as Json[]).length).toBe(1);
  });

  it("collects a down node after node_gc_threshold (24h), not before", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "gone" }, { Name: "stays" }] } } as never });
    const nodes = (await req(emu, "GET", "/v1/nodes")).body as Json[];
    const gone = nodes.find((n) => n.Name === "gone")!;
    const fault = await emu.scheduler.request(`/_standin/scheduler/nodes/${gone.ID}`, { method: "POST", body: JSON.stringify({ Status: "down" }) });
    expect(fault.status).toBe(200);
    emu.clock.advance("23h50m");
    expect(await status(emu, `/v1/node/${gone.ID}`)).toBe(200);
    emu.clock.advance("15m");
    expect(await req(emu, "GET", `/v1/node/${gone.ID}`)).toMatchObject({ status: 404, text: "node not found" });
    expect(((await req(emu, "GET", "/v1/nodes")).body as Json[]).map((n) => n.Name).filter((n) => n !== "standin")).toEqual(["stays"]);
  });

  it("publishes nothing for a collected node, as Nomad's batch deregistration does not; a purge still publishes NodeDeregistration", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "gone" }, { Name: "purged" }] } } as never });
    const listed = (await req(emu, "GET", "/v1/nodes")).body as Json[];
    const gone = listed.find((n) => n.Name === "gone")!;
    const purged = listed.find((n) => n.Name === "purged")!;
    await emu.scheduler.request(`/_standin/scheduler/nodes/${gone.ID}`, { method: "POST", body: JSON.stringify({ Status: "down" }) });
    const controller = new AbortController();
    const res = await emu.scheduler.request("/v1/event/stream?topic=Node", { signal: controller.signal });
    emu.clock.advance("24h5m");
    expect(await status(emu, `/v1/node/${gone.ID}`)).toBe(404);
    // The purge comes after the collection: its event proves the stream was read past the pass.
    expect((await req(emu, "PUT", `/v1/node/${purged.ID}/purge`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 0));
    controller.abort();
    let text = "";
    try {
      text = await res.text();
    } catch {
      // the abort ends the body; what was read before it is enough
    }
    const events = text
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .flatMap((line) => ((JSON.parse(line) as { Events?: Array<{ Type: string; Key: string }> }).Events ?? []).map((e) => `${e.Type} ${e.Key}`));
    expect(events).toContain(`NodeDeregistration ${purged.ID}`);
    expect(events).not.toContain(`NodeDeregistration ${gone.ID}`);
    // The stream did carry the collected node's earlier life, so its silence about the collection is not a filter's.
    expect(events).toContain(`NodeRegistration ${gone.ID}`);
  });
});

describe("the fixture's gc settings", () => {
  it("takes Nomad's thresholds and intervals in Go duration syntax", async () => {
    const emu = await createStandin({ fixture: { scheduler: { gc: { jobGCThreshold: "10m", jobGCInterval: "1m" } } } as never });
    await register(emu, smallJob("once", { type: "batch" }));
    emu.clock.advance("1m");
    emu.clock.advance("9m");
    expect(await status(emu, "/v1/job/once")).toBe(200);
    emu.clock.advance("2m");
    expect(await status(emu, "/v1/job/once")).toBe(404);
  });

  it("refuses a setting that is not a duration, a negative threshold, a zero interval, an unknown key", async () => {
    for (const gc of [{ jobGCThreshold: "soon" }, { evalGCThreshold: "-1h" }, { nodeGCInterval: "0s" }, { jobGcThreshold: "1h" }]) {
      await expect(createStandin({ fixture: { scheduler: { gc } } as never })).rejects.toThrow();
    }
  });
});

describe("PUT /v1/system/gc", () => {
  const MGMT = "30000000-0000-0000-0000-000000000001";
  const READER = "30000000-0000-0000-0000-000000000002";

  it("collects every collectable object at once, whatever its age, with a management token", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          acl: {
            enabled: true,
            policies: [{ Name: "r", Rules: 'namespace "default" { policy = "write" }\nnode { policy = "write" }' }],
            tokens: [
              { SecretID: MGMT, Name: "root", Type: "management" },
              { SecretID: READER, Name: "writer", Policies: ["r"] },
            ],
          },
        },
      } as never,
    });
    await req(emu, "PUT", "/v1/jobs", { Job: smallJob("once", { type: "batch" }) }, MGMT);
    await req(emu, "PUT", "/v1/jobs", { Job: smallJob("web") }, MGMT);
    emu.clock.advance("1m");
    expect(await req(emu, "GET", "/v1/system/gc", undefined, MGMT)).toMatchObject({ status: 405, text: "Invalid method" });
    expect(await req(emu, "POST", "/v1/system/gc", undefined, MGMT)).toMatchObject({ status: 405 });
    const hash = emu.stateHash();
    expect(await req(emu, "PUT", "/v1/system/gc", undefined, READER)).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await req(emu, "PUT", "/v1/system/gc")).toMatchObject({ status: 403, text: "Permission denied" });
    expect(emu.stateHash()).toBe(hash);
    const res = await req(emu, "PUT", "/v1/system/gc", undefined, MGMT);
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect(res.headers.get("X-Nomad-Index")).toBeNull();
    expect(((await req(emu, "GET", "/v1/jobs", undefined, MGMT)).body as Json[]).map((j) => j.ID)).toEqual(["web"]);
    expect(((await req(emu, "GET", "/v1/allocations", undefined, MGMT)).body as Json[]).map((a) => a.JobID)).toEqual(["web"]);
    expect((await req(emu, "PUT", "/v1/system/reconcile/summaries", undefined, MGMT)).status).toBe(200);
    expect((await req(emu, "PUT", "/v1/system/reconcile/summaries", undefined, READER)).status).toBe(403);
  });
});

describe("GC and the clock", () => {
  it("is not a timer: advance answers, pending timers and next are what they were", async () => {
    const emu = await createStandin();
    await register(emu, smallJob("once", { type: "batch" }));
    emu.clock.advance("1m");
    expect(emu.clock.status().pendingTimers).toBe(0);
    const fired = emu.clock.advance("5h");
    expect(fired).toEqual([]);
    expect(await status(emu, "/v1/job/once")).toBe(404);
    expect(emu.clock.status()).toMatchObject({ pendingTimers: 0, nextTimerAt: null });
    expect(emu.clock.next()).toEqual([]);
  });

  it("collects the same way after a snapshot is restored, and twice the same run gives the same state", async () => {
    const run = async () => {
      const emu = await createStandin();
      await register(emu, periodicTick());
      await register(emu, smallJob("web"));
      emu.clock.advance("3h");
      return emu;
    };
    const a = await run();
    const restored = await createStandin();
    restored.restore(a.snapshot());
    const b = await run();
    for (const emu of [a, restored, b]) emu.clock.advance("3h");
    expect(restored.stateHash()).toBe(a.stateHash());
    expect(b.stateHash()).toBe(a.stateHash());
    expect(((await req(restored, "GET", "/v1/jobs?prefix=tick/")).body as Json[]).length).toBe(((await req(a, "GET", "/v1/jobs?prefix=tick/")).body as Json[]).length);
  });
});
