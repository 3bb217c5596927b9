/**
 * Native service checks through HTTP (service-checks.ts): the results
 * `GET /v1/client/allocation/:id/checks` (and `/v1/allocation/:id/checks`)
 * give across an allocation's life on the virtual clock (pending until a
 * check's first run at interval/2, success while its workload runs, failure
 * after it failed, nothing once the allocation is stopped), Nomad's check IDs
 * and shapes, the errors (unknown allocation, ACLs), the `nomad-check-status`
 * action, and deployment health waiting for the checks.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Json = Record<string, any>;

const SECOND = 1_000_000_000;

/** Group service "web" with an http check every 10s; task service "api" with a tcp check every 4s (readiness). */
function checkedJob(id: string, opts: { update?: Json; namespace?: string; count?: number } = {}): Json {
  const job: Json = { ID: id, Type: "service", Datacenters: ["dc1"] };
  if (opts.namespace) job.Namespace = opts.namespace;
  if (opts.update) job.Update = opts.update;
  job.TaskGroups = [
    {
      Name: "web",
      Count: opts.count ?? 1,
      Networks: [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }],
      Services: [
        {
          Name: "web",
          PortLabel: "http",
          Provider: "nomad",
          Checks: [{ Name: "alive", Type: "http", Path: "/health", Interval: 10 * SECOND, Timeout: 2 * SECOND }],
        },
      ],
      Tasks: [
        {
          Name: "server",
          Driver: "docker",
          Config: { image: "nginx:1" },
          Resources: { CPU: 100, MemoryMB: 64 },
          Services: [
            {
              Name: "api",
              PortLabel: "http",
              Provider: "nomad",
              Checks: [{ Name: "port", Type: "tcp", Interval: 4 * SECOND, Timeout: SECOND, OnUpdate: "ignore" }],
            },
          ],
        },
      ],
    },
  ];
  return job;
}

async function register(emu: Standin, job: Json): Promise<number> {
  const res = await call(emu.scheduler, "PUT", `/v1/jobs${job.Namespace ? `?namespace=${job.Namespace}` : ""}`, { Job: job });
  expect(res.status, res.text).toBe(200);
  return Number(res.headers.get("X-Nomad-Index"));
}

async function onlyAlloc(emu: Standin, jobId: string, namespace = "default"): Promise<Json> {
  const stubs = (await call(emu.scheduler, "GET", `/v1/job/${jobId}/allocations?namespace=${namespace}`)).body as Json[];
  const live = stubs.filter((s) => s.DesiredStatus === "run");
  expect(live).toHaveLength(1);
  return (await call(emu.scheduler, "GET", `/v1/allocation/${live[0]!.ID}?namespace=${namespace}`)).body;
}

const checks = (emu: Standin, allocId: string, headers?: Record<string, string>) => call(emu.scheduler, "GET", `/v1/client/allocation/${allocId}/checks`, undefined, headers);

/** Nomad's NomadCheckID, written out from its definition: MD5 over the fields, durations as int64 little-endian. */
function expectedCheckId(
  allocId: string,
  group: string,
  fields: { task: string; name: string; type: string; port: string; onUpdate: string; interval: number; timeout: number; path: string },
): string {
  const sum = createHash("md5");
  for (const text of [allocId, group, fields.task, fields.name, fields.type, fields.port, fields.onUpdate]) sum.update(text);
  const durations = Buffer.alloc(16);
  durations.writeBigInt64LE(BigInt(fields.interval), 0);
  durations.writeBigInt64LE(BigInt(fields.timeout), 8);
  sum.update(durations);
  sum.update(fields.path);
  return sum.digest("hex");
}

const actions = (emu: Standin, step: Json) => call(emu.scheduler, "POST", "/_standin/actions", step);

describe("check results follow the allocation", () => {
  it("pending until each check's first run (interval/2 after the start), then success: Nomad's IDs and shapes", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop"));
    emu.clock.advance("100ms");
    const placed = await onlyAlloc(emu, "shop");
    expect(placed.ClientStatus).toBe("pending");
    // The client has not reported on it yet: it does not know the allocation.
    const early = await checks(emu, placed.ID);
    expect([early.status, early.text]).toEqual([404, `Unknown allocation "${placed.ID}"`]);

    emu.clock.advance("1s"); // evalProcess 100ms + allocStart 1s
    const alloc = await onlyAlloc(emu, "shop");
    expect(alloc.ClientStatus).toBe("running");
    const startedMs = alloc.TaskStates.server.Events.find((e: Json) => e.Type === "Started").Time / 1_000_000;
    const started = Math.floor(startedMs / 1000);
    const webId = expectedCheckId(alloc.ID, "web", {
      task: "",
      name: "alive",
      type: "http",
      port: "",
      onUpdate: "require_healthy",
      interval: 10 * SECOND,
      timeout: 2 * SECOND,
      path: "/health",
    });
    const apiId = expectedCheckId(alloc.ID, "web", { task: "server", name: "port", type: "tcp", port: "", onUpdate: "ignore", interval: 4 * SECOND, timeout: SECOND, path: "" });

    const first = await checks(emu, alloc.ID);
    expect(first.status).toBe(200);
    expect(first.headers.get("X-Nomad-Index")).toBeNull();
    expect(first.body).toEqual({
      [webId]: { Check: "alive", Group: alloc.Name, ID: webId, Mode: "healthiness", Output: "nomad: waiting to run", Service: "web", Status: "pending", Timestamp: started },
      [apiId]: {
        Check: "port",
        Group: alloc.Name,
        ID: apiId,
        Mode: "readiness",
        Output: "nomad: waiting to run",
        Service: "api",
        Status: "pending",
        Task: "server",
        Timestamp: started,
      },
    });
    // Keys sorted, as Nomad's encoder writes them; Task and StatusCode omitted when empty.
    expect(Object.keys(first.body[webId])).toEqual(["Check", "Group", "ID", "Mode", "Output", "Service", "Status", "Timestamp"]);

    // The tcp check runs 2s after the start (interval 4s), the http one at 5s.
    emu.clock.advanceTo(startedMs + 2000);
    const second = (await checks(emu, alloc.ID)).body;
    expect(second[apiId]).toMatchObject({ Status: "success", Output: "nomad: tcp ok", Timestamp: started + 2 });
    expect(second[apiId].StatusCode).toBeUndefined();
    expect(second[webId].Status).toBe("pending");

    emu.clock.advanceTo(startedMs + 17_000);
    const later = (await checks(emu, alloc.ID)).body;
    // Runs at 5s and 15s (http), 2s, 6s, 10s, 14s (tcp): the latest is shown.
    expect(later[webId]).toEqual({
      Check: "alive",
      Group: alloc.Name,
      ID: webId,
      Mode: "healthiness",
      Output: "nomad: http ok",
      Service: "web",
      Status: "success",
      StatusCode: 200,
      Timestamp: started + 15,
    });
    expect(later[apiId]).toMatchObject({ Status: "success", Timestamp: started + 14 });
    // The allocation endpoint answers the same.
    expect((await call(emu.scheduler, "GET", `/v1/allocation/${alloc.ID}/checks`)).body).toEqual(later);
  });

  it("a failed allocation's checks fail at their next run (connection refused); a stopped one has none (null)", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop"));
    emu.clock.advance("20s");
    const alloc = await onlyAlloc(emu, "shop");
    const port = alloc.AllocatedResources.Shared.Ports[0];
    expect((await actions(emu, { do: "alloc-fail", alloc: alloc.ID })).status).toBe(200);
    const failedAt = Math.floor(emu.clock.now() / 1000);
    const right = (await checks(emu, alloc.ID)).body as Json;
    // No run since the failure yet: the last results stand.
    expect(Object.values(right).map((r: Json) => r.Status)).toEqual(["success", "success"]);
    emu.clock.advance("10s");
    const after = Object.values((await checks(emu, alloc.ID)).body as Json).sort((a: Json, b: Json) => (a.Service < b.Service ? -1 : 1)) as Json[];
    expect(after.map((r) => [r.Service, r.Status, r.Output])).toEqual([
      ["api", "failure", `dial tcp ${port.HostIP}:${port.Value}: connect: connection refused`],
      ["web", "failure", `nomad: Get "http://${port.HostIP}:${port.Value}/health": dial tcp ${port.HostIP}:${port.Value}: connect: connection refused`],
    ]);
    expect(after.every((r) => r.Timestamp > failedAt && r.StatusCode === undefined)).toBe(true);

    // A job stop kills a running allocation: PreKill purges its results.
    await register(emu, checkedJob("cart"));
    emu.clock.advance("20s");
    const cart = await onlyAlloc(emu, "cart");
    expect(Object.keys((await checks(emu, cart.ID)).body)).toHaveLength(2);
    expect((await call(emu.scheduler, "DELETE", "/v1/job/cart")).status).toBe(200);
    emu.clock.advance("5s");
    const stopped = await checks(emu, cart.ID);
    expect([stopped.status, stopped.text]).toEqual([200, "null"]);
  });

  it("an allocation without native checks answers null; Consul services' checks are not the client's to run", async () => {
    const emu = await createStandin();
    const job = checkedJob("plain");
    job.TaskGroups[0].Services[0].Provider = "consul";
    job.TaskGroups[0].Tasks[0].Services = null;
    await register(emu, job);
    emu.clock.advance("10s");
    const alloc = await onlyAlloc(emu, "plain");
    const res = await checks(emu, alloc.ID);
    expect([res.status, res.text]).toEqual([200, "null"]);
  });
});

describe("errors", () => {
  it("an unknown allocation is a 404 naming it; a bad path is a 404", async () => {
    const emu = await createStandin();
    const unknown = await checks(emu, "d3e34248-4843-be75-d4fd-4899975cfb38");
    expect([unknown.status, unknown.text]).toEqual([404, 'Unknown allocation "d3e34248-4843-be75-d4fd-4899975cfb38"']);
    const extra = await call(emu.scheduler, "GET", "/v1/client/allocation/abc/checks/more");
    expect([extra.status, extra.text]).toEqual([404, "resource not found"]);
  });

  it("wants read-job in the allocation's namespace (403 without it)", async () => {
    const root = "11111111-1111-1111-1111-111111111111";
    const reader = "22222222-2222-2222-2222-222222222222";
    const other = "33333333-3333-3333-3333-333333333333";
    const emu = await createStandin({
      fixture: {
        scheduler: {
          namespaces: [{ Name: "prod" }],
          acl: {
            enabled: true,
            policies: [
              { Name: "read-prod", Rules: 'namespace "prod" { capabilities = ["read-job"] }' },
              { Name: "list-prod", Rules: 'namespace "prod" { capabilities = ["list-jobs"] }' },
            ],
            tokens: [
              { SecretID: root, Type: "management", Name: "root" },
              { SecretID: reader, Type: "client", Name: "reader", Policies: ["read-prod"] },
              { SecretID: other, Type: "client", Name: "lister", Policies: ["list-prod"] },
            ],
          },
        },
      },
    });
    const res = await call(emu.scheduler, "PUT", "/v1/jobs?namespace=prod", { Job: checkedJob("shop", { namespace: "prod" }) }, { "X-Nomad-Token": root });
    expect(res.status).toBe(200);
    emu.clock.advance("10s");
    const stubs = (await call(emu.scheduler, "GET", "/v1/allocations?namespace=prod", undefined, { "X-Nomad-Token": root })).body as Json[];
    const id = stubs[0]!.ID;
    // The namespace is the allocation's own, whatever the request names.
    expect((await checks(emu, id, { "X-Nomad-Token": reader })).status).toBe(200);
    const denied = await checks(emu, id, { "X-Nomad-Token": other });
    expect([denied.status, denied.text]).toEqual([403, "Permission denied"]);
    expect((await checks(emu, id)).status).toBe(403);
    // An unknown allocation is still a 404, token or not.
    expect((await checks(emu, "d3e34248-4843-be75-d4fd-4899975cfb38", { "X-Nomad-Token": other })).status).toBe(404);
  });
});

describe("nomad-check-status", () => {
  it("sets a check's status from now (as if it ran now) until auto, and refuses a check the allocation lacks", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop"));
    emu.clock.advance("20s");
    const alloc = await onlyAlloc(emu, "shop");
    const set = await actions(emu, { do: "nomad-check-status", job: "shop", service: "web", status: "failure", output: "upstream down" });
    expect(set.status, set.text).toBe(200);
    const id = set.body.result.Checks[0].ID;
    expect(set.body.result).toMatchObject({ AllocID: alloc.ID, Status: "failure", Checks: [{ ID: id, Service: "web", Check: "alive" }] });
    const now = Math.floor(emu.clock.now() / 1000);
    expect((await checks(emu, alloc.ID)).body[id]).toMatchObject({ Status: "failure", StatusCode: 500, Output: "upstream down", Timestamp: now });
    // Later runs keep failing.
    emu.clock.advance("30s");
    expect((await checks(emu, alloc.ID)).body[id]).toMatchObject({ Status: "failure", Output: "upstream down" });
    expect((await actions(emu, { do: "nomad-check-status", job: "shop", service: "web", status: "auto" })).status).toBe(200);
    expect((await checks(emu, alloc.ID)).body[id]).toMatchObject({ Status: "success", Output: "nomad: http ok" });

    const missing = await actions(emu, { do: "nomad-check-status", job: "shop", check: "nope", status: "failure" });
    expect([missing.status, missing.body.error]).toEqual([404, `allocation "${alloc.ID}" has no native service check named "nope"`]);
  });
});

describe("nomad-check-status in a fixture timeline", () => {
  it("a step fails a check at its instant", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: { jobs: [checkedJob("shop")] },
        timeline: [{ at: "30s", do: "nomad-check-status", job: "shop", check: "alive", status: "failure", output: "503 from the timeline" }],
      },
    });
    emu.clock.advance("29s");
    const alloc = await onlyAlloc(emu, "shop");
    const alive = () => checks(emu, alloc.ID).then((res) => Object.values(res.body as Json).find((r: Json) => r.Check === "alive") as Json);
    expect((await alive()).Status).toBe("success");
    emu.clock.advance("1s");
    expect(await alive()).toMatchObject({ Status: "failure", Output: "503 from the timeline", Timestamp: Math.floor(emu.clock.now() / 1000) });
  });
});

describe("nomad-check-status before the allocation runs", () => {
  it("shows from the check's first run, not before (pending until then)", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop"));
    emu.clock.advance("100ms");
    expect((await onlyAlloc(emu, "shop")).ClientStatus).toBe("pending");
    expect((await actions(emu, { do: "nomad-check-status", job: "shop", check: "port", status: "failure", output: "refused" })).status).toBe(200);
    emu.clock.advance("1s");
    const alloc = await onlyAlloc(emu, "shop");
    const port = () => checks(emu, alloc.ID).then((res) => Object.values(res.body as Json).find((r: Json) => r.Check === "port") as Json);
    expect((await port()).Status).toBe("pending");
    emu.clock.advance("2s");
    expect(await port()).toMatchObject({ Status: "failure", Output: "refused" });
    expect((await port()).StatusCode).toBeUndefined();
  });
});

describe("deployment health counts the checks", () => {
  const update = { MaxParallel: 1, MinHealthyTime: 10 * SECOND, HealthyDeadline: 60 * SECOND, ProgressDeadline: 120 * SECOND };

  it("healthy once every check has run and passed for min_healthy_time (the latest first run: 5s in)", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop", { update }));
    emu.clock.advance("5s");
    const alloc = await onlyAlloc(emu, "shop");
    const startedMs = alloc.TaskStates.server.Events.find((e: Json) => e.Type === "Started").Time / 1_000_000;
    emu.clock.advanceTo(startedMs + 14_999);
    expect((await onlyAlloc(emu, "shop")).DeploymentStatus?.Healthy ?? null).toBeNull();
    emu.clock.advanceTo(startedMs + 15_000);
    expect((await onlyAlloc(emu, "shop")).DeploymentStatus.Healthy).toBe(true);
    const [deployment] = (await call(emu.scheduler, "GET", "/v1/job/shop/deployments")).body as Json[];
    expect(deployment!.Status).toBe("successful");
  });

  it("with health_check = task_states the checks do not count (healthy after min_healthy_time)", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop", { update: { ...update, HealthCheck: "task_states" } }));
    emu.clock.advance("5s");
    const alloc = await onlyAlloc(emu, "shop");
    const startedMs = alloc.TaskStates.server.Events.find((e: Json) => e.Type === "Started").Time / 1_000_000;
    emu.clock.advanceTo(startedMs + 10_000);
    expect((await onlyAlloc(emu, "shop")).DeploymentStatus.Healthy).toBe(true);
  });

  it("a failing healthiness check holds health back until healthy_deadline makes it unhealthy (then the progress deadline fails the deployment); a readiness check's failure does not", async () => {
    const emu = await createStandin();
    await register(emu, checkedJob("shop", { update }));
    emu.clock.advance("5s");
    expect((await actions(emu, { do: "nomad-check-status", job: "shop", service: "api", status: "failure" })).status).toBe(200);
    expect((await actions(emu, { do: "nomad-check-status", job: "shop", service: "web", status: "failure" })).status).toBe(200);
    emu.clock.advance("30s");
    expect((await onlyAlloc(emu, "shop")).DeploymentStatus?.Healthy ?? null).toBeNull();
    // Passing again (the readiness check still failing): min_healthy_time counts from now.
    expect((await actions(emu, { do: "nomad-check-status", job: "shop", service: "web", status: "success" })).status).toBe(200);
    emu.clock.advance("9s");
    expect((await onlyAlloc(emu, "shop")).DeploymentStatus?.Healthy ?? null).toBeNull();
    emu.clock.advance("1s");
    expect((await onlyAlloc(emu, "shop")).DeploymentStatus.Healthy).toBe(true);

    // A new version whose healthiness check fails for good: healthy_deadline (60s) fails it.
    const next = checkedJob("shop", { update });
    next.TaskGroups[0].Tasks[0].Config.image = "nginx:2";
    await register(emu, next);
    emu.clock.advance("5s");
    const stubs = (await call(emu.scheduler, "GET", "/v1/job/shop/allocations")).body as Json[];
    const fresh = stubs.find((a) => a.JobVersion === 1 && a.ClientStatus === "running")!;
    const failing = await actions(emu, { do: "nomad-check-status", alloc: fresh.ID, service: "web", status: "failure" });
    expect(failing.status, failing.text).toBe(200);
    emu.clock.advance("60s");
    // Unhealthy, but reschedulable (the default policy) and still running: the watcher marks it for
    // rescheduling, which only a failure would act on; the update halts until the progress deadline.
    const unhealthy = (await call(emu.scheduler, "GET", `/v1/allocation/${fresh.ID}`)).body as Json;
    expect(unhealthy).toMatchObject({ ClientStatus: "running", DesiredStatus: "run", DeploymentStatus: { Healthy: false } });
    expect(unhealthy.DesiredTransition.Reschedule).toBe(true);
    let deployments = (await call(emu.scheduler, "GET", "/v1/job/shop/deployments")).body as Json[];
    expect(deployments[0]).toMatchObject({ JobVersion: 1, Status: "running" });
    emu.clock.advance("60s"); // past the 120s progress deadline
    deployments = (await call(emu.scheduler, "GET", "/v1/job/shop/deployments")).body as Json[];
    expect(deployments[0]).toMatchObject({ JobVersion: 1, Status: "failed", StatusDescription: "Failed due to progress deadline" });
  });
});
