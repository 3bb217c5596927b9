/**
 * Scaling (Nomad's Job.Scale and scale status, scheduler-breadth-nomad.md
 * §7.6): scaling events recorded per group, newest first, at most 20; an
 * event-only request (no Count); the request errors in Nomad's order; an
 * allocation updated in place after a canary deployment counts in scale
 * status once it joins the new deployment.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call as callApp, type Answer } from "../support/call.js";

type Json = Record<string, any>;
const call = (emu: Standin, method: string, path: string, body?: unknown): Promise<Answer> => callApp(emu.scheduler, method, path, body);
const get = (emu: Standin, path: string) => call(emu, "GET", path);

function job(id: string, count: number, image = "nginx:1", update: Json | null = null): Json {
  return {
    ID: id,
    Type: "service",
    Datacenters: ["dc1"],
    ...(update ? { Update: update } : {}),
    TaskGroups: [{ Name: "web", Count: count, Tasks: [{ Name: "server", Driver: "docker", Config: { image }, Resources: { CPU: 100, MemoryMB: 128 } }] }],
  };
}

async function settled(emu: Standin, jobBody: Json): Promise<void> {
  const res = await call(emu, "PUT", "/v1/jobs", { Job: jobBody });
  expect(res.status, res.text).toBe(200);
  emu.clock.advance("1m");
}

const scale = (emu: Standin, id: string, body: Json) => call(emu, "PUT", `/v1/job/${id}/scale`, body);

describe("scaling events", () => {
  it("records every scale request, newest first, with the previous count, message, meta, eval and time", async () => {
    const emu = await createStandin();
    await settled(emu, job("web", 1));
    const first = await scale(emu, "web", { Count: 2, Target: { Group: "web" }, Message: "up", Meta: { reason: "load", n: 1 } });
    expect(first.status, first.text).toBe(200);
    emu.clock.advance("1m");
    const second = await scale(emu, "web", { Count: 1, Target: { Group: "web" }, Message: "down" });
    expect(second.status, second.text).toBe(200);
    const status = (await get(emu, "/v1/job/web/scale")).body;
    const events = status.TaskGroups.web.Events as Json[];
    expect(events.map((e) => [e.Count, e.PreviousCount, e.Message, e.EvalID])).toEqual([
      [1, 2, "down", second.body.EvalID],
      [2, 1, "up", first.body.EvalID],
    ]);
    expect(Object.keys(events[0]!)).toEqual(["Count", "CreateIndex", "Error", "EvalID", "Message", "Meta", "PreviousCount", "Time"]);
    expect(events[1]!.Meta).toEqual({ n: 1, reason: "load" });
    expect(events[0]!.Meta).toBeNull();
    // Unix nanoseconds of the virtual instant (2026-01-01T00:02:00Z), exact.
    expect((await get(emu, "/v1/job/web/scale")).text).toContain('"Time":1767225720000000000');
    expect(events[0]!.CreateIndex).toBe(second.body.Index);
  });

  it("an event-only request (no Count, Error: true) records the event and changes nothing else", async () => {
    const emu = await createStandin();
    await settled(emu, job("web", 2));
    const before = (await get(emu, "/v1/job/web")).body;
    const res = await scale(emu, "web", { Target: { Group: "web" }, Error: true, Message: "autoscaler: metric unavailable" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ EvalID: "", EvalCreateIndex: 0, JobModifyIndex: before.JobModifyIndex });
    const after = (await get(emu, "/v1/job/web")).body;
    expect(after.Version).toBe(before.Version);
    const [event] = (await get(emu, "/v1/job/web/scale")).body.TaskGroups.web.Events as Json[];
    expect(event).toMatchObject({ Count: null, Error: true, EvalID: null, PreviousCount: 2, Message: "autoscaler: metric unavailable" });
  });

  it("keeps the newest 20 per group", async () => {
    const emu = await createStandin();
    await settled(emu, job("web", 1));
    for (let i = 0; i < 25; i++) expect((await scale(emu, "web", { Target: { Group: "web" }, Message: `m${i}` })).status).toBe(200);
    const events = (await get(emu, "/v1/job/web/scale")).body.TaskGroups.web.Events as Json[];
    expect(events).toHaveLength(20);
    expect(events[0]!.Message).toBe("m24");
    expect(events[19]!.Message).toBe("m5");
  });

  it("purging the job drops its events", async () => {
    const emu = await createStandin();
    await settled(emu, job("web", 1));
    await scale(emu, "web", { Target: { Group: "web" }, Message: "x" });
    expect((await call(emu, "DELETE", "/v1/job/web?purge=true")).status).toBe(200);
    await settled(emu, job("web", 1));
    expect((await get(emu, "/v1/job/web/scale")).body.TaskGroups.web.Events).toBeNull();
  });
});

describe("scale request errors, in Nomad's order, changing nothing", () => {
  it.each([
    [{ Count: 2, Target: { Group: "web", Job: "other" } }, 400, "job ID in payload did not match URL"],
    [{ Count: 2, Target: { Group: "web", Namespace: "prod" } }, 400, "namespace in payload did not match header"],
    [{ Count: 2, Target: {} }, 400, "missing task group name for scaling action"],
    [{ Count: 2 }, 400, "missing task group name for scaling action"],
    [{ Count: -1, Target: { Group: "web" } }, 400, "scaling action count can't be negative"],
    [{ Count: 2, Error: true, Target: { Group: "web" } }, 400, "scaling action should not contain count if error is true"],
    [{ Count: 2, Target: { Group: "db" } }, 400, 'task group "db" specified for scaling does not exist in job'],
    [{ Count: 2, Target: { Group: "web" }, Meta: [1] }, 400, "json: cannot unmarshal array into Go struct field ScalingRequest.Meta of type map[string]interface {}"],
  ])("%j → %i %s", async (body, status, text) => {
    const emu = await createStandin();
    await settled(emu, job("web", 1));
    const hash = emu.stateHash();
    const res = await scale(emu, "web", body);
    expect(res.status).toBe(status);
    expect(res.text).toBe(text);
    expect(emu.stateHash()).toBe(hash);
  });
});

describe("scale status after a canary deployment", () => {
  it("counts every running allocation once the promoted canary is updated in place into the scaling deployment", async () => {
    const emu = await createStandin();
    const update = { Canary: 1, MaxParallel: 1, AutoPromote: false, MinHealthyTime: 10_000_000_000 };
    await settled(emu, job("web", 2, "nginx:1", update));
    await settled(emu, job("web", 2, "nginx:2", update));
    const deployment = (await get(emu, "/v1/job/web/deployment")).body;
    expect(deployment.StatusDescription).toBe("Deployment is running but requires manual promotion");
    expect((await call(emu, "PUT", `/v1/deployment/promote/${deployment.ID}`, { DeploymentID: deployment.ID, All: true })).status).toBe(200);
    emu.clock.advance("2m");
    expect((await get(emu, `/v1/deployment/${deployment.ID}`)).body.Status).toBe("successful");

    expect((await scale(emu, "web", { Count: 3, Target: { Group: "web" } })).status).toBe(200);
    emu.clock.advance("2m");
    const group = (await get(emu, "/v1/job/web/scale")).body.TaskGroups.web;
    expect(group).toMatchObject({ Desired: 3, Placed: 3, Running: 3 });
    const allocs = (await get(emu, "/v1/job/web/allocations")).body as Json[];
    const live = allocs.filter((a) => a.ClientStatus === "running");
    expect(live).toHaveLength(3);
    const latest = (await get(emu, "/v1/job/web/deployment")).body;
    for (const alloc of live) {
      expect(alloc.DeploymentStatus?.Canary ?? false).toBe(false);
      const full = (await get(emu, `/v1/allocation/${alloc.ID}`)).body;
      expect(full.DeploymentID).toBe(latest.ID);
    }
  });
});
