/**
 * `update { health_check = "manual" }`: Nomad's client runs no health watcher
 * for the group, so an allocation's health comes only from
 * `PUT /v1/deployment/allocation-health/:id` and the rollout waits for it;
 * the progress deadline still fails a deployment nobody reports on.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call as callApp, type Answer } from "../support/call.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

const call = (emu: Standin, method: string, path: string, body?: unknown): Promise<Answer> => callApp(emu.scheduler, method, path, body);
const get = async (emu: Standin, path: string): Promise<any> => (await call(emu, "GET", path)).body;

const SECOND = 1_000_000_000;

function rollingJob(healthCheck: string, update: Json = {}): Json {
  return { ...webJob("web", { count: 2 }), Update: { MaxParallel: 1, HealthCheck: healthCheck, MinHealthyTime: SECOND, HealthyDeadline: 60 * SECOND, ...update } };
}

async function start(healthCheck: string, update: Json = {}): Promise<{ emu: Standin; deploymentId: string }> {
  const emu = await createStandin();
  const res = await call(emu, "PUT", "/v1/jobs", { Job: rollingJob(healthCheck, update) });
  expect(res.status, res.text).toBe(200);
  emu.clock.advance("1100ms");
  const deployment = await get(emu, "/v1/job/web/deployment");
  return { emu, deploymentId: deployment.ID };
}

const health = (a: Json) => a.DeploymentStatus?.Healthy ?? null;
const allocs = (emu: Standin): Promise<Json[]> => get(emu, "/v1/job/web/allocations");

describe('update { health_check = "manual" }', () => {
  it("the same rollout with checks goes on by itself (what manual must not do)", async () => {
    const { emu, deploymentId } = await start("checks");
    emu.clock.advance("5m");
    expect((await get(emu, `/v1/deployment/${deploymentId}`)).Status).toBe("successful");
  });

  it("an allocation is healthy only once the operator says so, and the rollout waits for it", async () => {
    const { emu, deploymentId } = await start("manual");
    const report = (id: string, allocId: string) => call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id, HealthyAllocationIDs: [allocId] });
    // Past min_healthy_time and healthy_deadline: no health either way.
    emu.clock.advance("5m");
    const placed = await allocs(emu);
    expect(placed.map((a) => `${a.ClientStatus} ${health(a)}`)).toEqual(["running null", "running null"]);
    let deployment = await get(emu, `/v1/deployment/${deploymentId}`);
    expect(deployment).toMatchObject({ Status: "running" });
    expect(deployment.TaskGroups.web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 0, UnhealthyAllocs: 0 });

    const first = await report(deploymentId, placed[0]!.ID);
    expect(first.status, first.text).toBe(200);
    expect(first.body.EvalID).toMatch(/^[0-9a-f]{8}-/);
    emu.clock.advance("5m");
    expect((await get(emu, `/v1/deployment/${deploymentId}`)).Status).toBe("running");
    expect((await report(deploymentId, placed[1]!.ID)).status).toBe(200);
    emu.clock.advance("1s");
    deployment = await get(emu, `/v1/deployment/${deploymentId}`);
    expect(deployment).toMatchObject({ Status: "successful" });
    expect(deployment.TaskGroups.web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 2 });

    // An update rolls max_parallel (1) at a time: the next old allocation is replaced only after a report.
    const update = rollingJob("manual");
    update.TaskGroups[0].Tasks[0].Config.image = "nginx:2";
    expect((await call(emu, "PUT", "/v1/jobs", { Job: update })).status).toBe(200);
    emu.clock.advance("5m");
    const rolling = await get(emu, "/v1/job/web/deployment");
    const live = (await allocs(emu)).filter((a) => a.DesiredStatus === "run");
    expect(live.map((a) => `v${a.JobVersion} ${health(a)}`).sort()).toEqual(["v0 true", "v1 null"]);
    expect(rolling).toMatchObject({ Status: "running", JobVersion: 1 });
    expect((await report(rolling.ID, live.find((a) => a.JobVersion === 1)!.ID)).status).toBe(200);
    emu.clock.advance("5m");
    expect(
      (await allocs(emu))
        .filter((a) => a.DesiredStatus === "run")
        .map((a) => `v${a.JobVersion} ${health(a)}`)
        .sort(),
    ).toEqual(["v1 null", "v1 true"]);
  });

  it("nobody reporting: the progress deadline fails the deployment", async () => {
    const { emu, deploymentId } = await start("manual", { ProgressDeadline: 120 * SECOND });
    emu.clock.advance("110s");
    expect((await get(emu, `/v1/deployment/${deploymentId}`)).Status).toBe("running");
    emu.clock.advance("10s");
    expect(await get(emu, `/v1/deployment/${deploymentId}`)).toMatchObject({ Status: "failed", StatusDescription: "Failed due to progress deadline" });
    expect((await allocs(emu)).map(health)).toEqual([null, null]);
  });

  it("an empty report is refused before the deployment is looked up (Deployment.SetAllocHealth)", async () => {
    const { emu, deploymentId } = await start("manual");
    const before = emu.index;
    for (const id of [deploymentId, "00000000-0000-0000-0000-000000000000"]) {
      const res = await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id });
      expect([res.status, res.text]).toEqual([500, "must specify at least one healthy/unhealthy allocation ID"]);
    }
    expect(emu.index).toBe(before);
  });
});
