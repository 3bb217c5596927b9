/**
 * Named actions, fixture timelines and await, through the control API and
 * in process.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const webJob = (count = 1, image = "nginx:1") => ({
  ID: "web",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: count, Tasks: [{ Name: "server", Driver: "docker", Config: { image }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  Update: { MaxParallel: 1, MinHealthyTime: 2_000_000_000, HealthyDeadline: 60_000_000_000 },
});

async function control(emu: Standin, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const res = await emu.scheduler.request(`/_standin${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

describe("POST /_standin/actions", () => {
  it("lists the actions and conditions of every service", async () => {
    const emu = await createStandin();
    const { body } = await control(emu, "GET", "/actions");
    const names = body.actions.map((a: Json) => a.name);
    for (const name of ["node-down", "node-up", "alloc-fail", "job-register", "job-stop", "check-critical", "session-destroy", "api-key-revoke"]) expect(names).toContain(name);
    expect(body.conditions.map((c: Json) => c.name)).toEqual(expect.arrayContaining(["deployment", "job", "allocations", "session", "kv", "check", "index"]));
  });

  it("runs an action now, in one write; bad arguments are a 400 and change nothing", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    expect(await control(emu, "POST", "/actions", { do: "node-down" })).toMatchObject({ status: 400, body: { error: expect.stringContaining("node") } });
    expect(await control(emu, "POST", "/actions", { do: "node-down", node: "nope" })).toMatchObject({ status: 404, body: { error: 'no node "nope"' } });
    expect(await control(emu, "POST", "/actions", { do: "fly" })).toMatchObject({ status: 404, body: { error: expect.stringContaining('unknown action "fly"') } });
    expect(emu.stateHash()).toBe(before);
    const down = await control(emu, "POST", "/actions", { do: "node-down", node: "standin" });
    expect(down).toMatchObject({ status: 200, body: { do: "node-down", service: "scheduler", result: { Name: "standin", Status: "down" } } });
    const nodes = (await (await emu.scheduler.request("/v1/nodes")).json()) as Json[];
    expect(nodes[0]!.Status).toBe("down");
  });

  it("registers a job and fails an allocation chosen by job, canary and position", async () => {
    const emu = await createStandin();
    emu.act("job-register", { job: webJob(2) });
    emu.clock.advance("2s");
    const outcome = emu.act("alloc-fail", { job: "web", nth: 1 });
    const allocs = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    const failed = allocs.filter((a) => a.ClientStatus === "failed");
    expect(failed.map((a) => a.ID)).toEqual([(outcome.result as Json).ID]);
    // The second-oldest live allocation was the one picked.
    const live = allocs.filter((a) => a.ID !== failed[0]!.ID).sort((a, b) => a.CreateIndex - b.CreateIndex);
    expect(failed[0]!.CreateIndex).toBeGreaterThanOrEqual(live[0]!.CreateIndex);
    expect(() => emu.act("alloc-fail", { job: "web", canary: true })).toThrow(/no live allocation/);
  });
});

describe("fault regressions", () => {
  it("ending a drain makes the node eligible again (Nomad's default)", async () => {
    const emu = await createStandin();
    expect((emu.act("node-drain", { node: "standin" }).result as Json).SchedulingEligibility).toBe("ineligible");
    expect((emu.act("node-drain", { node: "standin", drain: false }).result as Json).SchedulingEligibility).toBe("eligible");
  });

  it("an allocation that fails before it is healthy is not rewritten when its healthy deadline passes", async () => {
    const emu = await createStandin();
    // Not reschedulable, so the failed allocation stays as it is (no replacement stops it).
    const job = webJob(1);
    emu.act("job-register", { job: { ...job, TaskGroups: [{ ...job.TaskGroups[0]!, ReschedulePolicy: { Attempts: 0, Unlimited: false } }] } });
    emu.clock.advance("1500ms"); // running, not yet healthy (min_healthy_time 2s)
    const failed = emu.act("alloc-fail", { job: "web" }).result as Json;
    const before = ((await (await emu.scheduler.request(`/v1/allocation/${failed.ID}`)).json()) as Json).ModifyIndex;
    emu.clock.advance("2m"); // past the 60s healthy_deadline
    const after = (await (await emu.scheduler.request(`/v1/allocation/${failed.ID}`)).json()) as Json;
    expect(after.ModifyIndex).toBe(before);
    expect(after.DeploymentStatus.Healthy).toBe(false);
  });
});

describe("fixture timelines", () => {
  it("runs each step at its instant on the virtual clock, as a persistent timer", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: { nodes: [{ Name: "client-1" }] },
        timeline: [
          { at: "0s", do: "job-register", job: webJob(1) },
          { at: "2m", do: "node-down", node: "standin" },
          { at: "2m30s", do: "node-up", node: "standin" },
        ],
      },
    });
    expect((await control(emu, "GET", "/clock")).body.pendingTimers).toBe(3);
    const first = emu.clock.advance("1m");
    expect(first.some((f) => f.kind === "standin.timeline" && (f.detail as Json).do === "job-register")).toBe(true);
    const node = async () => ((await (await emu.scheduler.request("/v1/nodes")).json()) as Json[]).find((n) => n.Name === "standin")!.Status;
    expect(await node()).toBe("ready");
    emu.clock.advance("1m");
    expect(await node()).toBe("down");
    emu.clock.advance("30s");
    expect(await node()).toBe("ready");
    // The steps are in the event journal.
    const events = (await control(emu, "GET", "/events?type=action")).body.events;
    expect(events.map((e: Json) => e.subject)).toEqual(["job-register", "node-down", "node-up"]);
  });

  it("a bad timeline is rejected whole, naming the step", async () => {
    await expect(
      createStandin({
        fixture: {
          timeline: [
            { at: "1m", do: "node-down" },
            { at: "soon", do: "node-up", node: "x" },
            { at: "1s", do: "teleport" },
          ],
        },
      }),
    ).rejects.toThrow(/timeline\[0\] \(node-down\): .*node[\s\S]*timeline\[1\]\.at: time: invalid duration "soon"[\s\S]*timeline\[2\]: unknown action "teleport"/);
  });

  it("a step that no longer applies is journalled and skipped; the clock goes on", async () => {
    const emu = await createStandin({
      fixture: {
        timeline: [
          { at: "10s", do: "alloc-fail", job: "ghost" },
          { at: "20s", do: "node-down", node: "standin" },
        ],
      },
    });
    const fired = emu.clock.advance("30s");
    expect(fired.map((f) => (f.detail as Json).error ?? "ok")).toEqual([expect.stringContaining("no live allocation"), "ok"]);
    const failed = (await control(emu, "GET", "/events?type=timeline")).body.events;
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ type: "timeline.failed", subject: "fixture.timeline[0]" });
  });

  it("applied fixtures count from now; reset brings the start timeline back; snapshots carry pending steps", async () => {
    const emu = await createStandin({ fixture: { timeline: [{ at: "1m", do: "node-down", node: "standin" }] } });
    emu.clock.advance("5m");
    await control(emu, "POST", "/fixtures", { timeline: [{ at: "1m", do: "node-up", node: "standin" }] });
    const snapshot = emu.snapshot();
    const fired = emu.clock.advance("1m");
    expect(fired.map((f) => (f.detail as Json).do)).toEqual(["node-up"]);
    emu.restore(snapshot);
    expect(emu.clock.advance("1m").map((f) => (f.detail as Json).do)).toEqual(["node-up"]);
    await emu.reset();
    expect(emu.clock.advance("1m").map((f) => (f.detail as Json).do)).toEqual(["node-down"]);
  });
});

describe("await", () => {
  it("advances timer by timer until the deployment succeeds, and returns what fired", async () => {
    const emu = await createStandin();
    emu.act("job-register", { job: webJob(2) });
    const start = emu.clock.now();
    const res = await control(emu, "POST", "/await", { until: { deployment: { job: "web", status: "successful" } }, within: "5m" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ met: true, observed: { deployment: { Status: "successful" } } });
    expect(res.body.fired.length).toBeGreaterThan(3);
    // It stopped at the instant the deployment succeeded, not at the limit.
    expect(emu.clock.now() - start).toBeLessThan(60_000);
    expect(res.body.waited).toMatch(/^\d+(\.\d+)?s$/);
    const deployment = (await (await emu.scheduler.request("/v1/job/web/deployment")).json()) as Json;
    expect(deployment.Status).toBe("successful");
  });

  it("answers 408 with what it saw when the condition does not hold in time; the clock stands at the limit", async () => {
    const emu = await createStandin();
    const start = emu.clock.now();
    const res = await control(emu, "POST", "/await", { until: { job: { job: "never", status: "running" } }, within: "90s" });
    expect(res.status).toBe(408);
    expect(res.body).toMatchObject({ met: false, observed: { job: null }, error: "the condition did not hold within 90s of virtual time" });
    expect(emu.clock.now() - start).toBe(90_000);
    expect(res.body.stateHash).toBe(emu.stateHash());
  });

  it("holds at once without moving the clock; several conditions must all hold", async () => {
    const emu = await createStandin();
    const now = emu.clock.now();
    const res = await emu.await({ index: { above: 0 } });
    expect(res).toMatchObject({ met: true, waitedMs: 0 });
    expect(emu.clock.now()).toBe(now);
    emu.act("job-register", { job: webJob(1) });
    const both = await emu.await({ job: { job: "web", status: "running" }, allocations: { job: "web", count: 1 } }, "1m");
    expect(both.met).toBe(true);
    expect(Object.keys(both.observed)).toEqual(["job", "allocations"]);
  });

  it("evaluation: moves the clock only until that evaluation is processed (what standin job run waits for)", async () => {
    const emu = await createStandin();
    const registered = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: webJob(2) }) });
    const { EvalID } = (await registered.json()) as { EvalID: string };
    const before = emu.clock.now();
    const res = await control(emu, "POST", "/await", { until: { evaluation: { id: EvalID } }, within: "1m" });
    expect(res.status).toBe(200);
    expect(res.body.observed).toEqual({ evaluation: { Status: "complete" } });
    // A fraction of a second, not the minute allowed: the deployment is still running.
    expect(emu.clock.now() - before).toBeLessThan(1000);
    expect((await control(emu, "POST", "/await", { until: { deployment: { job: "web", status: "running" } }, within: "0s" })).status).toBe(200);
    const exact = await control(emu, "POST", "/await", { until: { evaluation: { id: EvalID, status: "blocked" } }, within: "10s" });
    expect(exact.status).toBe(408);
    expect(exact.body.observed).toEqual({ evaluation: { Status: "complete" } });
    const unknown = await control(emu, "POST", "/await", { until: { evaluation: { id: "no-such-eval" } }, within: "1s" });
    expect(unknown.status).toBe(408);
    expect(unknown.body.observed).toEqual({ evaluation: null });
  });

  it("registry conditions: a session gone after its TTL, a key released", async () => {
    const emu = await createStandin();
    const created = (await (await emu.registry.request("/v1/session/create", { method: "PUT", body: JSON.stringify({ TTL: "15s", Behavior: "release" }) })).json()) as Json;
    await emu.registry.request(`/v1/kv/leader?acquire=${created.ID}`, { method: "PUT", body: "me" });
    const res = await emu.await({ session: { id: created.ID, gone: true }, kv: { key: "leader", held: false } }, "1m");
    expect(res.met).toBe(true);
    // Consul lets a TTL session live up to twice its TTL.
    expect(res.waitedMs).toBe(30_000);
  });

  it("rejects unknown conditions, bad arguments and the realtime clock", async () => {
    const emu = await createStandin();
    expect((await control(emu, "POST", "/await", { until: { weather: {} } })).body.error).toContain('unknown condition "weather"');
    expect((await control(emu, "POST", "/await", { until: {} })).status).toBe(400);
    expect((await control(emu, "POST", "/await", { until: { deployment: { job: "web" } } })).status).toBe(400);
    expect((await control(emu, "POST", "/await", { until: { index: { above: 1 } }, within: "soon" })).status).toBe(400);
    const realtime = await createStandin({ clock: { mode: "realtime" } });
    expect((await control(realtime, "POST", "/await", { until: { index: { above: 1 } } })).status).toBe(409);
    realtime.close();
  });
});
