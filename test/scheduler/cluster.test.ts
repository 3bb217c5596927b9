/**
 * The simulated cluster through HTTP, driven only by the virtual clock.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call as callApp, type Answer } from "../support/call.js";

type Json = Record<string, any>;

const call = (emu: Standin, method: string, path: string, body?: unknown): Promise<Answer> => callApp(emu.scheduler, method, path, body);

const get = (emu: Standin, path: string) => call(emu, "GET", path);

/** A reschedule policy that allows no reschedule: the deployment watcher fails a deployment at its first unhealthy allocation. */
const NO_RESCHEDULE: Json = { Attempts: 0, Unlimited: false };

function serviceJob(id: string, opts: { count?: number; image?: string; update?: Json | null; memory?: number; type?: string; meta?: Json; reschedule?: Json } = {}): Json {
  const job: Json = {
    ID: id,
    Type: opts.type ?? "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "web",
        Count: opts.count ?? 1,
        Tasks: [{ Name: "server", Driver: "docker", Config: { image: opts.image ?? "nginx:1" }, Resources: { CPU: 100, MemoryMB: opts.memory ?? 128 } }],
        ...(opts.reschedule ? { ReschedulePolicy: opts.reschedule } : {}),
      },
    ],
  };
  if (opts.update !== undefined) job.Update = opts.update;
  if (opts.meta) job.Meta = opts.meta;
  return job;
}

async function register(emu: Standin, job: Json): Promise<Json> {
  const res = await call(emu, "PUT", "/v1/jobs", { Job: job });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

const advance = (emu: Standin, by: string) => emu.clock.advance(by);

async function allocs(emu: Standin, jobId: string): Promise<Json[]> {
  return (await get(emu, `/v1/job/${jobId}/allocations`)).body;
}

describe("register → eval → allocations → deployment, by advancing the clock", () => {
  it("runs the whole lifecycle of a service job", async () => {
    const emu = await createStandin();
    const res = await call(emu, "PUT", "/v1/jobs", { Job: serviceJob("web", { count: 2 }) });
    expect(res.status).toBe(200);
    // Byte-wise sorted keys, one index for job and eval.
    expect(Object.keys(res.body)).toEqual(["EvalCreateIndex", "EvalID", "Index", "JobModifyIndex", "KnownLeader", "LastContact", "NextToken", "Warnings"]);
    expect(res.body.EvalCreateIndex).toBe(res.body.JobModifyIndex);
    expect(res.body.Index).toBe(res.body.JobModifyIndex);
    expect(res.headers.get("x-scheduler-index")).toBe(String(res.body.Index));
    expect(res.headers.get("x-nomad-index")).toBe(String(res.body.Index));

    expect((await get(emu, "/v1/job/web")).body.Status).toBe("pending");
    const pending = await get(emu, `/v1/evaluation/${res.body.EvalID}`);
    expect(pending.body).toMatchObject({ Status: "pending", TriggeredBy: "job-register", Type: "service", JobID: "web" });
    expect(pending.body).not.toHaveProperty("DeploymentID"); // Evaluation's struct-level omitempty drops ""

    advance(emu, "100ms");
    const evaluation = (await get(emu, `/v1/evaluation/${res.body.EvalID}`)).body;
    expect(evaluation.Status).toBe("complete");
    expect(evaluation.QueuedAllocations).toEqual({ web: 0 });
    expect(evaluation.DeploymentID).toMatch(/^[0-9a-f]{8}-/);
    let placed = await allocs(emu, "web");
    expect(placed.map((a) => [a.Name, a.ClientStatus, a.DesiredStatus])).toEqual([
      ["web.web[0]", "pending", "run"],
      ["web.web[1]", "pending", "run"],
    ]);
    expect((await get(emu, "/v1/job/web")).body.Status).toBe("running");
    const summary = (await get(emu, "/v1/job/web/summary")).body;
    expect(summary.Summary.web).toEqual({ Complete: 0, Failed: 0, Lost: 0, Queued: 0, Running: 0, Starting: 2, Unknown: 0 });

    advance(emu, "1s");
    placed = await allocs(emu, "web");
    expect(placed.every((a) => a.ClientStatus === "running" && a.ClientDescription === "Tasks are running")).toBe(true);
    expect((await get(emu, "/v1/job/web/summary")).body.Summary.web).toMatchObject({ Running: 2, Starting: 0 });

    let deployment = (await get(emu, `/v1/deployment/${evaluation.DeploymentID}`)).body;
    expect(deployment).toMatchObject({ Status: "running", StatusDescription: "Deployment is running", JobVersion: 0 });
    expect(deployment.TaskGroups.web).toMatchObject({ DesiredTotal: 2, PlacedAllocs: 2, HealthyAllocs: 0 });

    // min_healthy_time defaults to 10 s.
    advance(emu, "9s");
    expect((await get(emu, `/v1/deployment/${evaluation.DeploymentID}`)).body.Status).toBe("running");
    advance(emu, "1s");
    deployment = (await get(emu, `/v1/deployment/${evaluation.DeploymentID}`)).body;
    expect(deployment).toMatchObject({ Status: "successful", StatusDescription: "Deployment completed successfully" });
    expect(deployment.TaskGroups.web).toMatchObject({ HealthyAllocs: 2 });
    expect((await get(emu, "/v1/job/web")).body.Stable).toBe(true);
    expect((await get(emu, "/v1/job/web/deployment")).body.ID).toBe(deployment.ID);
  });

  it("a batch job's allocations complete after timing.batchRun (or the job's standin.batch_run meta) and the job goes dead", async () => {
    const emu = await createStandin({ fixture: { scheduler: { timing: { batchRun: "30s" } } } });
    await register(emu, serviceJob("nightly", { type: "batch" }));
    await register(emu, serviceJob("quick", { type: "batch", meta: { "standin.batch_run": "5s" } }));
    advance(emu, "100ms");
    advance(emu, "1s");
    expect((await get(emu, "/v1/job/nightly")).body.Status).toBe("running");
    advance(emu, "5s");
    expect((await get(emu, "/v1/job/quick")).body.Status).toBe("dead");
    expect((await get(emu, "/v1/job/nightly")).body.Status).toBe("running");
    advance(emu, "25s");
    expect((await get(emu, "/v1/job/nightly")).body.Status).toBe("dead");
    expect((await get(emu, "/v1/job/nightly/summary")).body.Summary.web).toMatchObject({ Complete: 1, Running: 0 });
    expect((await get(emu, "/v1/job/nightly/deployment")).text).toBe("null");
  });
});

describe("updates", () => {
  it("rolls 4 allocations 2 at a time (max_parallel = 2), batch by batch", async () => {
    const emu = await createStandin();
    const update = { MaxParallel: 2, MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000, ProgressDeadline: 600_000_000_000 };
    await register(emu, serviceJob("api", { count: 4, update }));
    advance(emu, "100ms");
    advance(emu, "11s");
    expect((await allocs(emu, "api")).filter((a) => a.ClientStatus === "running")).toHaveLength(4);

    await register(emu, serviceJob("api", { count: 4, update, image: "nginx:2" }));
    advance(emu, "100ms");
    const versionOf = async () => {
      const live = (await allocs(emu, "api")).filter((a) => a.DesiredStatus === "run");
      return live.map((a) => a.JobVersion).sort();
    };
    expect(await versionOf()).toEqual([0, 0, 1, 1]); // first batch of 2
    advance(emu, "1s");
    advance(emu, "10s"); // healthy → the deployment watcher asks for the next batch
    advance(emu, "100ms");
    expect(await versionOf()).toEqual([1, 1, 1, 1]);
    advance(emu, "11s");
    const deployment = (await get(emu, "/v1/job/api/deployment")).body;
    expect(deployment).toMatchObject({ JobVersion: 1, Status: "successful" });
    expect(deployment.TaskGroups.web).toMatchObject({ DesiredTotal: 4, PlacedAllocs: 4, HealthyAllocs: 4 });
    const stopped = (await allocs(emu, "api")).filter((a) => a.DesiredStatus === "stop");
    expect(stopped).toHaveLength(4);
    expect(stopped.every((a) => a.DesiredDescription === "alloc is being updated due to job update")).toBe(true);
    const versions = (await get(emu, "/v1/job/api/versions")).body.Versions.map((v: Json) => [v.Version, v.Stable]);
    expect(versions).toEqual([
      [1, true],
      [0, true],
    ]);
  });

  it("a newer version cancels the running deployment", async () => {
    const emu = await createStandin();
    const first = await register(emu, serviceJob("web"));
    advance(emu, "100ms");
    const firstDeployment = (await get(emu, `/v1/evaluation/${first.EvalID}`)).body.DeploymentID;
    await register(emu, serviceJob("web", { image: "nginx:2" }));
    advance(emu, "100ms");
    expect((await get(emu, `/v1/deployment/${firstDeployment}`)).body).toMatchObject({ Status: "cancelled", StatusDescription: "Cancelled due to newer version of job" });
  });

  it("re-registering an unchanged spec keeps the version and JobModifyIndex but still creates an eval", async () => {
    const emu = await createStandin();
    const first = await register(emu, serviceJob("web"));
    const again = await register(emu, serviceJob("web"));
    expect(again.JobModifyIndex).toBe(first.JobModifyIndex);
    expect(again.EvalCreateIndex).toBeGreaterThan(first.EvalCreateIndex);
    expect((await get(emu, "/v1/job/web")).body.Version).toBe(0);
  });

  it("a failing allocation that cannot be rescheduled fails the deployment", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web", { reschedule: NO_RESCHEDULE }));
    advance(emu, "1100ms");
    const [alloc] = await allocs(emu, "web");
    const res = await emu.scheduler.request(`/_standin/scheduler/allocations/${alloc!.ID}`, { method: "POST", body: JSON.stringify({ ClientStatus: "failed" }) });
    expect(res.status).toBe(200);
    const deployment = (await get(emu, "/v1/job/web/deployment")).body;
    expect(deployment).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    expect(deployment.TaskGroups.web.UnhealthyAllocs).toBe(1);
    expect((await get(emu, "/v1/job/web/summary")).body.Summary.web).toMatchObject({ Failed: 1, Running: 0 });
  });

  it("a deployment that makes no progress fails at its progress deadline", async () => {
    // Room for one of the two allocations only: the first becomes healthy, the second is never placed.
    const emu = await createStandin();
    const update = { MaxParallel: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 60_000_000_000, ProgressDeadline: 80_000_000_000 };
    await register(emu, serviceJob("slow", { count: 2, update, memory: 10_000 }));
    advance(emu, "100ms"); // one placed, one queued
    advance(emu, "11s"); // the first is healthy: RequireProgressBy = now + 80 s
    expect((await get(emu, "/v1/job/slow/deployment")).body.TaskGroups.web).toMatchObject({ PlacedAllocs: 1, HealthyAllocs: 1 });
    advance(emu, "79s");
    expect((await get(emu, "/v1/job/slow/deployment")).body.Status).toBe("running");
    advance(emu, "1s");
    expect((await get(emu, "/v1/job/slow/deployment")).body).toMatchObject({ Status: "failed", StatusDescription: "Failed due to progress deadline" });
  });

  it("pause and fail through the deployment endpoints", async () => {
    const emu = await createStandin();
    const reg = await register(emu, serviceJob("web"));
    advance(emu, "100ms");
    const id = (await get(emu, `/v1/evaluation/${reg.EvalID}`)).body.DeploymentID;
    const paused = await call(emu, "PUT", `/v1/deployment/pause/${id}`, { DeploymentID: id, Pause: true });
    expect(paused.status).toBe(200);
    expect(Object.keys(paused.body)).toEqual(["DeploymentModifyIndex", "EvalCreateIndex", "EvalID", "Index", "RevertedJobVersion"]);
    expect((await get(emu, `/v1/deployment/${id}`)).body).toMatchObject({ Status: "paused", StatusDescription: "Deployment is paused" });
    expect((await call(emu, "PUT", `/v1/deployment/pause/${id}`, { DeploymentID: "other", Pause: false })).text).toBe("Deployment ID does not match");
    expect((await call(emu, "PUT", `/v1/deployment/pause/${id}`, {})).text).toBe("DeploymentID must be specified");
    const failed = await call(emu, "PUT", `/v1/deployment/fail/${id}`);
    expect(failed.status).toBe(200);
    expect((await get(emu, `/v1/deployment/${id}`)).body).toMatchObject({ Status: "failed", StatusDescription: "Deployment marked as failed" });
    expect((await call(emu, "PUT", `/v1/deployment/fail/${id}`)).text).toBe("can't fail terminal deployment");
    expect((await call(emu, "PUT", "/v1/deployment/fail/nope")).text).toBe("deployment not found");
  });
});

describe("stop, purge, nodes and capacity", () => {
  it("stop cancels the deployment and the job goes dead; purge removes it; re-registering brings it back", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web"));
    advance(emu, "1100ms");
    const stop = await call(emu, "DELETE", "/v1/job/web");
    expect(stop.status).toBe(200);
    expect(Object.keys(stop.body)).toEqual(["EvalCreateIndex", "EvalID", "Index", "JobModifyIndex", "KnownLeader", "LastContact", "NextToken", "VolumeEvalID", "VolumeEvalIndex"]);
    expect((await get(emu, `/v1/evaluation/${stop.body.EvalID}`)).body).toMatchObject({ TriggeredBy: "job-deregister", Type: "service" });
    advance(emu, "100ms");
    const job = (await get(emu, "/v1/job/web")).body;
    expect(job).toMatchObject({ Stop: true, Status: "dead", Version: 1 });
    expect((await get(emu, "/v1/job/web/deployment")).body).toMatchObject({ Status: "cancelled", StatusDescription: "Cancelled because job is stopped" });
    // The plan stops the allocation; its client reports it complete in a later write (Nomad's order).
    expect((await allocs(emu, "web")).map((a) => `${a.DesiredStatus} ${a.ClientStatus}`)).toEqual(["stop running"]);
    advance(emu, "200ms");
    expect((await allocs(emu, "web")).map((a) => `${a.DesiredStatus} ${a.ClientStatus}`)).toEqual(["stop complete"]);

    await register(emu, serviceJob("web"));
    advance(emu, "1100ms");
    expect((await get(emu, "/v1/job/web")).body).toMatchObject({ Stop: false, Status: "running", Version: 2 });

    const purge = await call(emu, "DELETE", "/v1/job/web?purge=true");
    expect(purge.status).toBe(200);
    const gone = await get(emu, "/v1/job/web");
    expect(gone.status).toBe(404);
    expect(gone.text).toBe("job not found");
  });

  it("a node going down loses its allocations and they are replaced on another node", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          nodes: [
            { ID: "aaaaaaaa-0000-0000-0000-000000000001", Name: "client-1" },
            { ID: "bbbbbbbb-0000-0000-0000-000000000002", Name: "client-2" },
          ],
        },
      },
    });
    await register(emu, serviceJob("web", { count: 3 }));
    advance(emu, "1100ms");
    const before = await allocs(emu, "web");
    const victim = before[0]!.NodeID;
    const onVictim = before.filter((a) => a.NodeID === victim).length;
    const res = await emu.scheduler.request(`/_standin/scheduler/nodes/${victim}`, { method: "POST", body: JSON.stringify({ Status: "down" }) });
    expect(res.status).toBe(200);
    advance(emu, "100ms");
    const after = await allocs(emu, "web");
    expect(after.filter((a) => a.ClientStatus === "lost")).toHaveLength(onVictim);
    expect(after.filter((a) => a.ClientStatus === "lost").every((a) => a.ClientDescription === "alloc is lost since its node is down")).toBe(true);
    const live = after.filter((a) => a.DesiredStatus === "run");
    expect(live).toHaveLength(3);
    expect(live.every((a) => a.NodeID !== victim)).toBe(true);
    expect((await get(emu, "/v1/job/web/summary")).body.Summary.web.Lost).toBe(onVictim);
    expect((await get(emu, `/v1/node/${victim}`)).body.Status).toBe("down");
  });

  it("a job that fits nowhere blocks, and is placed once a node with room is added by a fixture", async () => {
    const emu = await createStandin();
    const reg = await register(emu, serviceJob("big", { memory: 100_000 }));
    advance(emu, "100ms");
    const evaluation = (await get(emu, `/v1/evaluation/${reg.EvalID}`)).body;
    expect(evaluation.Status).toBe("complete");
    expect(evaluation.QueuedAllocations).toEqual({ web: 1 });
    expect(Object.keys(evaluation.FailedTGAllocs)).toEqual(["web"]);
    expect((await get(emu, `/v1/evaluation/${evaluation.BlockedEval}`)).body).toMatchObject({ Status: "blocked", TriggeredBy: "queued-allocs", PreviousEval: reg.EvalID });
    expect((await get(emu, "/v1/job/big")).body.Status).toBe("pending");
    expect((await get(emu, "/v1/job/big/summary")).body.Summary.web.Queued).toBe(1);

    const added = await emu.scheduler.request("/_standin/fixtures", {
      method: "POST",
      body: JSON.stringify({ scheduler: { nodes: [{ Name: "huge", Resources: { CPU: 8000, MemoryMB: 200_000 } }] } }),
    });
    expect(added.status).toBe(200);
    advance(emu, "100ms");
    const placed = await allocs(emu, "big");
    expect(placed).toHaveLength(1);
    expect(placed[0]!.NodeName).toBe("huge");
  });

  it("lists nodes as stubs with Address, and reads the full node", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ ID: "aaaaaaaa-0000-0000-0000-000000000001", Name: "client-1", HTTPAddr: "10.0.0.5:4646" }] } } });
    const nodes = (await get(emu, "/v1/nodes")).body as Json[];
    const stub = nodes.find((n) => n.Name === "client-1")!;
    expect(stub.Address).toBe("10.0.0.5");
    expect(Object.keys(stub)).toEqual([...Object.keys(stub)].sort());
    const full = (await get(emu, "/v1/node/aaaaaaaa-0000-0000-0000-000000000001")).body;
    expect(full).toMatchObject({ HTTPAddr: "10.0.0.5:4646", SecretID: "", Status: "ready", Drain: false });
  });
});

describe("wire format and errors", () => {
  it("emits struct fields byte-wise sorted (job stub, deployment)", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web"));
    advance(emu, "100ms");
    const list = await get(emu, "/v1/jobs");
    const stub = list.body[0];
    expect(Object.keys(stub)).toEqual([
      "CreateIndex",
      "Datacenters",
      "ID",
      "JobModifyIndex",
      "JobSummary",
      "ModifyIndex",
      "Multiregion",
      "Name",
      "Namespace",
      "NodePool",
      "ParameterizedJob",
      "ParentID",
      "Periodic",
      "Priority",
      "Status",
      "StatusDescription",
      "Stop",
      "SubmitTime",
      "Type",
    ]);
    expect(list.text).toMatch(/"SubmitTime":1767225600000000000,/);
    const deployment = (await get(emu, "/v1/job/web/deployment")).body;
    expect(Object.keys(deployment)).toEqual([
      "CreateIndex",
      "CreateTime",
      "EvalPriority",
      "ID",
      "IsMultiregion",
      "JobCreateIndex",
      "JobID",
      "JobModifyIndex",
      "JobSpecModifyIndex",
      "JobVersion",
      "ModifyIndex",
      "ModifyTime",
      "Namespace",
      "Status",
      "StatusDescription",
      "TaskGroups",
    ]);
    expect(Object.keys(deployment.TaskGroups.web)).toEqual([
      "AutoPromote",
      "AutoRevert",
      "DesiredCanaries",
      "DesiredTotal",
      "HealthyAllocs",
      "PlacedAllocs",
      "PlacedCanaries",
      "ProgressDeadline",
      "Promoted",
      "RequireProgressBy",
      "UnhealthyAllocs",
    ]);
  });

  it.each([
    ["GET", "/v1/nope", undefined, 404, ""],
    ["GET", "/v1/jobsX", undefined, 404, ""],
    ["DELETE", "/v1/jobs", undefined, 405, "Invalid method"],
    ["POST", "/v1/status/leader", undefined, 405, "Invalid method"],
    ["GET", "/v1/job/nope", undefined, 404, "job not found"],
    ["GET", "/v1/job/nope/summary", undefined, 404, "job not found"],
    ["GET", "/v1/job/nope/versions", undefined, 404, "job versions not found"],
    ["GET", "/v1/evaluation/nope", undefined, 404, "eval not found"],
    ["GET", "/v1/allocation/nope", undefined, 404, "alloc not found"],
    ["GET", "/v1/deployment/nope", undefined, 404, "deployment not found"],
    ["GET", "/v1/node/nope", undefined, 404, "node not found"],
    ["GET", "/v1/namespace/nope", undefined, 404, "Namespace not found"],
    ["PUT", "/v1/jobs", "", 400, "Request body is empty"],
    ["PUT", "/v1/jobs", {}, 400, "Job must be specified"],
    ["PUT", "/v1/jobs", { Job: { TaskGroups: [] } }, 400, "Job ID hasn't been provided"],
    ["PUT", "/v1/job/other", { Job: { ID: "web" } }, 400, "Job ID does not match name"],
    ["PUT", "/v1/jobs?namespace=ghost", { Job: serviceJob("web") }, 500, 'job "web" is in nonexistent namespace "ghost"'],
    ["PUT", "/v1/jobs", { Job: serviceJob("web"), EnforceIndex: true, JobModifyIndex: 5 }, 500, "Enforcing job modify index 5: job does not exist"],
    ["GET", "/v1/jobs?region=mars", undefined, 500, "No path to region"],
    ["GET", "/v1/jobs?stale=maybe", undefined, 400, "Expect `true` or `false` for `stale` query string parameter, got maybe"],
    ["GET", "/v1/jobs?index=x", undefined, 400, "Invalid index"],
    ["GET", "/v1/jobs?index=1&wait=soon", undefined, 400, "Invalid wait time"],
    ["DELETE", "/v1/job/web?purge=maybe", undefined, 500, 'Failed to parse value of "purge" (maybe) as a bool: strconv.ParseBool: parsing "maybe": invalid syntax'],
    ["PUT", "/v1/namespace", { Description: "x" }, 400, "Missing Namespace Name"],
    ["PUT", "/v1/namespace/a", { Name: "b" }, 400, "Namespace name does not match request path"],
    ["DELETE", "/v1/namespace/default", undefined, 500, "can not delete default namespace"],
  ])("%s %s → %i %j", async (method, path, body, status, text) => {
    const emu = await createStandin();
    const res = await call(emu, method, path, body);
    expect(res.status).toBe(status);
    expect(res.text).toBe(text);
    if (text !== "") expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  });

  it("404s of reads still carry the index headers; validation failures are 500 multierrors", async () => {
    const emu = await createStandin();
    const missing = await get(emu, "/v1/job/nope");
    expect(missing.headers.get("x-nomad-index")).toBe("1");
    expect(missing.headers.get("x-nomad-knownleader")).toBe("true");
    expect(missing.headers.get("x-nomad-lastcontact")).toBe("0");
    const invalid = await call(emu, "PUT", "/v1/jobs", { Job: { ID: "has space", TaskGroups: [] } });
    expect(invalid.status).toBe(500);
    expect(invalid.text).toMatch(/^\d+ errors? occurred:\n\t\* /);
    expect(invalid.text).toContain("Job ID contains a space");
  });

  it("/v1/jobs/parse parses an HCL job file; / redirects to the UI", async () => {
    const emu = await createStandin();
    const parse = await call(emu, "PUT", "/v1/jobs/parse", { JobHCL: 'job "x" {}' });
    expect(parse.status).toBe(200);
    expect([parse.body.ID, parse.body.Name]).toEqual(["x", "x"]);
    const root = await emu.scheduler.request("/");
    expect(root.status).toBe(307);
    expect(root.headers.get("location")).toBe("/ui/");
  });

  it("namespaces: upsert, list, read, jobs in them, delete", async () => {
    const emu = await createStandin();
    const put = await call(emu, "PUT", "/v1/namespace/prod", { Name: "prod", Description: "Production" });
    expect(put.status).toBe(200);
    expect(put.text).toBe("");
    expect(put.headers.get("x-nomad-index")).toMatch(/^\d+$/);
    expect((await get(emu, "/v1/namespaces")).body.map((n: Json) => n.Name)).toEqual(["default", "prod"]);
    expect((await get(emu, "/v1/namespace/prod")).body).toMatchObject({ Name: "prod", Description: "Production" });
    await register(emu, { ...serviceJob("api"), Namespace: "prod" });
    expect((await get(emu, "/v1/jobs")).body).toHaveLength(0);
    expect((await get(emu, "/v1/jobs?namespace=prod")).body).toHaveLength(1);
    expect((await get(emu, "/v1/jobs?namespace=*")).body).toHaveLength(1);
    expect((await call(emu, "DELETE", "/v1/namespace/prod")).text).toBe('namespace "prod" has non-terminal jobs in regions: [global]');
  });

  it("blocking reads wait for the index to move", async () => {
    const emu = await createStandin();
    const reg = await register(emu, serviceJob("web"));
    const list = await get(emu, "/v1/evaluations");
    const index = Number(list.headers.get("x-nomad-index"));
    let answered = false;
    const parked = get(emu, `/v1/evaluations?index=${index}&wait=1m`).then((r) => ((answered = true), r));
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    advance(emu, "100ms"); // the eval completes: the table moves
    const res = await parked;
    expect(Number(res.headers.get("x-nomad-index"))).toBeGreaterThan(index);
    expect(res.body.find((e: Json) => e.ID === reg.EvalID).Status).toBe("complete");
  });
});

describe("determinism", () => {
  it("a 200-step scenario run twice gives byte-identical responses and state hashes", async () => {
    const run = async () => {
      const emu = await createStandin({ fixture: { seed: 11, scheduler: { nodes: [{ Name: "c1" }, { Name: "c2" }, { Name: "c3" }] } } });
      const out: string[] = [];
      const step = async (method: string, path: string, body?: unknown) => {
        const res = await call(emu, method, path, body);
        out.push(`${method} ${path} ${res.status} ${res.headers.get("x-nomad-index")} ${res.text}`);
      };
      for (let i = 0; i < 50; i++) {
        await step("PUT", "/v1/jobs", { Job: serviceJob(`job-${i % 5}`, { count: 1 + (i % 3), image: `img:${i % 4}` }) });
        emu.clock.advance(`${200 + (i % 7) * 700}ms`);
        await step("GET", `/v1/job/job-${i % 5}/allocations`);
        await step("GET", "/v1/deployments");
        if (i % 6 === 0) await step("DELETE", `/v1/job/job-${(i + 2) % 5}`);
        if (i % 9 === 0) {
          const nodes = JSON.parse((await call(emu, "GET", "/v1/nodes")).text) as Json[];
          await emu.scheduler.request(`/_standin/scheduler/nodes/${nodes[i % nodes.length]!.ID}`, { method: "POST", body: JSON.stringify({ Status: i % 2 ? "ready" : "down" }) });
        }
        await step("GET", "/v1/jobs");
      }
      emu.clock.advance("2m");
      await step("GET", "/v1/evaluations");
      await step("GET", "/v1/allocations");
      return { out, hash: emu.stateHash() };
    };
    const a = await run();
    const b = await run();
    expect(a.out.length).toBeGreaterThanOrEqual(200);
    expect(b.out).toEqual(a.out);
    expect(b.hash).toBe(a.hash);
  });
});

describe("canaries, promotion, auto-revert and version operations", () => {
  const canaryUpdate = (extra: Json = {}) => ({
    MaxParallel: 1,
    Canary: 1,
    MinHealthyTime: 10_000_000_000,
    HealthyDeadline: 300_000_000_000,
    ProgressDeadline: 600_000_000_000,
    ...extra,
  });

  async function runningVersion0(emu: Standin, id: string, update: Json, count = 2) {
    await register(emu, serviceJob(id, { count, update }));
    advance(emu, "100ms");
    advance(emu, "11s");
  }

  it("canaries wait for promotion (errors until healthy), then the update rolls on and succeeds", async () => {
    const emu = await createStandin();
    await runningVersion0(emu, "web", canaryUpdate());
    // The first version uses no canaries.
    expect((await get(emu, "/v1/job/web/deployment")).body).toMatchObject({ Status: "successful", JobVersion: 0 });

    await register(emu, serviceJob("web", { count: 2, update: canaryUpdate(), image: "nginx:2" }));
    advance(emu, "100ms");
    let deployment = (await get(emu, "/v1/job/web/deployment")).body;
    expect(deployment).toMatchObject({ JobVersion: 1, Status: "running", StatusDescription: "Deployment is running but requires manual promotion" });
    expect(deployment.TaskGroups.web).toMatchObject({ DesiredCanaries: 1, Promoted: false });
    expect(deployment.TaskGroups.web.PlacedCanaries).toHaveLength(1);
    const live = (await allocs(emu, "web")).filter((a) => a.DesiredStatus === "run");
    expect(live.map((a) => a.JobVersion).sort()).toEqual([0, 0, 1]); // old version kept beside the canary
    expect(live.find((a) => a.JobVersion === 1)!.DeploymentStatus).toMatchObject({ Canary: true, Healthy: null });

    const early = await call(emu, "PUT", `/v1/deployment/promote/${deployment.ID}`, { DeploymentID: deployment.ID, All: true });
    expect(early.status).toBe(500);
    expect(early.text).toBe(`1 error occurred:\n\t* Canary allocation "${deployment.TaskGroups.web.PlacedCanaries[0]}" for group "web" is not healthy\n\n`);

    advance(emu, "11s"); // the canary becomes healthy; nothing else moves without promotion
    expect((await get(emu, "/v1/job/web/deployment")).body.Status).toBe("running");
    expect(
      (await allocs(emu, "web"))
        .filter((a) => a.DesiredStatus === "run")
        .map((a) => a.JobVersion)
        .sort(),
    ).toEqual([0, 0, 1]);

    const promoted = await call(emu, "PUT", `/v1/deployment/promote/${deployment.ID}`, { DeploymentID: deployment.ID, All: true });
    expect(promoted.status).toBe(200);
    expect(promoted.body.EvalID).toMatch(/^[0-9a-f]{8}-/);
    deployment = (await get(emu, "/v1/job/web/deployment")).body;
    expect(deployment).toMatchObject({ StatusDescription: "Deployment is running" });
    expect(deployment.TaskGroups.web.Promoted).toBe(true);
    for (let i = 0; i < 4; i++) advance(emu, "11s");
    expect((await get(emu, "/v1/job/web/deployment")).body).toMatchObject({ Status: "successful" });
    expect((await allocs(emu, "web")).filter((a) => a.DesiredStatus === "run").map((a) => a.JobVersion)).toEqual([1, 1]);
    expect((await call(emu, "PUT", `/v1/deployment/promote/${deployment.ID}`, { DeploymentID: deployment.ID, All: true })).text).toBe("can't promote terminal deployment");
  });

  it("auto_promote promotes once the canaries are healthy; a deployment without canaries has none to promote", async () => {
    const emu = await createStandin();
    await runningVersion0(emu, "web", canaryUpdate({ AutoPromote: true }));
    await register(emu, serviceJob("web", { count: 2, update: canaryUpdate({ AutoPromote: true }), image: "nginx:2" }));
    advance(emu, "100ms");
    expect((await get(emu, "/v1/job/web/deployment")).body.StatusDescription).toBe("Deployment is running pending automatic promotion");
    for (let i = 0; i < 5; i++) advance(emu, "11s");
    const deployment = (await get(emu, "/v1/job/web/deployment")).body;
    expect(deployment).toMatchObject({ Status: "successful" });
    expect(deployment.TaskGroups.web.Promoted).toBe(true);

    const plain = await createStandin();
    const reg = await register(plain, serviceJob("api"));
    advance(plain, "100ms");
    const id = (await get(plain, `/v1/evaluation/${reg.EvalID}`)).body.DeploymentID;
    expect((await call(plain, "PUT", `/v1/deployment/promote/${id}`, { DeploymentID: id, All: true })).text).toBe("no canaries to promote");
  });

  it("a failing allocation with auto_revert rolls back to the last stable version", async () => {
    const emu = await createStandin();
    const update = canaryUpdate({ Canary: 0, AutoRevert: true });
    await runningVersion0(emu, "web", update, 1);
    expect((await get(emu, "/v1/job/web")).body).toMatchObject({ Version: 0, Stable: true });
    await register(emu, serviceJob("web", { count: 1, update, image: "nginx:broken", reschedule: NO_RESCHEDULE }));
    advance(emu, "1100ms");
    const newAlloc = (await allocs(emu, "web")).find((a) => a.JobVersion === 1 && a.DesiredStatus === "run")!;
    await emu.scheduler.request(`/_standin/scheduler/allocations/${newAlloc.ID}`, { method: "POST", body: JSON.stringify({ ClientStatus: "failed" }) });
    const failed = (await get(emu, "/v1/job/web/deployments")).body.find((d: Json) => d.JobVersion === 1);
    expect(failed).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations - rolling back to job version 0" });
    const job = (await get(emu, "/v1/job/web")).body;
    expect(job.Version).toBe(2);
    expect(job.TaskGroups[0].Tasks[0].Config.image).toBe("nginx:1");
  });

  it("without a stable version to return to, the failure says so", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web", { update: canaryUpdate({ Canary: 0, AutoRevert: true }), reschedule: NO_RESCHEDULE }));
    advance(emu, "1100ms");
    const [alloc] = await allocs(emu, "web");
    await emu.scheduler.request(`/_standin/scheduler/allocations/${alloc!.ID}`, { method: "POST", body: JSON.stringify({ ClientStatus: "failed" }) });
    expect((await get(emu, "/v1/job/web/deployment")).body.StatusDescription).toBe("Failed due to unhealthy allocations - no stable job version to auto revert to");
  });

  it("revert, stable and evaluate, with their errors", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web"));
    await register(emu, serviceJob("web", { image: "nginx:2" }));
    const reverted = await call(emu, "PUT", "/v1/job/web/revert", { JobID: "web", JobVersion: 0 });
    expect(reverted.status).toBe(200);
    expect(Object.keys(reverted.body)).toEqual(["EvalCreateIndex", "EvalID", "Index", "JobModifyIndex", "KnownLeader", "LastContact", "NextToken", "Warnings"]);
    const job = (await get(emu, "/v1/job/web")).body;
    expect(job.Version).toBe(2);
    expect(job.TaskGroups[0].Tasks[0].Config.image).toBe("nginx:1");
    expect((await call(emu, "PUT", "/v1/job/web/revert", { JobID: "web", JobVersion: 2 })).text).toBe("can't revert to current version");
    expect((await call(emu, "PUT", "/v1/job/web/revert", { JobID: "web", JobVersion: 9 })).text).toBe('job "web" in namespace "default" at version 9 not found');
    expect((await call(emu, "PUT", "/v1/job/web/revert", { JobID: "web", JobVersion: 0, EnforcePriorVersion: 1 })).text).toBe("Current job has version 2; enforcing version 1");
    expect((await call(emu, "PUT", "/v1/job/nope/revert", { JobID: "nope", JobVersion: 0 })).text).toBe('job "nope" not found');

    const stable = await call(emu, "PUT", "/v1/job/web/stable", { JobID: "web", JobVersion: 1, Stable: true });
    expect(Object.keys(stable.body)).toEqual(["Index"]);
    const versions = (await get(emu, "/v1/job/web/versions")).body.Versions as Json[];
    expect(versions.find((v) => v.Version === 1)!.Stable).toBe(true);
    expect((await call(emu, "PUT", "/v1/job/web/stable", { JobVersion: 7, Stable: true })).text).toBe('job "web" in namespace "default" at version 7 not found');

    const evaluated = await call(emu, "PUT", "/v1/job/web/evaluate", {});
    expect(evaluated.status).toBe(200);
    expect((await get(emu, `/v1/evaluation/${evaluated.body.EvalID}`)).body).toMatchObject({ Status: "pending", JobID: "web" });
    const missing = await call(emu, "PUT", "/v1/job/nope/evaluate", {});
    expect(missing.status).toBe(500);
    expect(missing.text).toBe("job not found");
  });

  it("allocation-health reports set health; an unhealthy report fails the deployment", async () => {
    const emu = await createStandin();
    const reg = await register(emu, serviceJob("web", { count: 2 }));
    advance(emu, "1100ms");
    const id = (await get(emu, `/v1/evaluation/${reg.EvalID}`)).body.DeploymentID;
    const [a, b] = await allocs(emu, "web");
    const ok = await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id, HealthyAllocationIDs: [a!.ID] });
    expect(ok.status).toBe(200);
    expect((await get(emu, `/v1/deployment/${id}`)).body.TaskGroups.web.HealthyAllocs).toBe(1);
    const bad = await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id, UnhealthyAllocationIDs: [b!.ID] });
    expect(bad.status).toBe(200);
    expect((await get(emu, `/v1/deployment/${id}`)).body).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    const late = await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, { DeploymentID: id, HealthyAllocationIDs: [b!.ID] });
    expect(late.text).toBe("can't set health of allocations for a terminal deployment");
  });
});

describe("dispatch, periodic force and scale", () => {
  const parameterized = (extra: Json = {}) => ({
    ...serviceJob("report", { type: "batch" }),
    ParameterizedJob: { Payload: "optional", MetaRequired: ["customer"], MetaOptional: ["format"], ...extra },
  });

  it("dispatches children of a parameterized job, with Nomad's checks and idempotency", async () => {
    const emu = await createStandin();
    const reg = await register(emu, parameterized());
    expect(reg.EvalID).toBe(""); // parents get no eval
    expect(reg.EvalCreateIndex).toBe(0);
    expect((await get(emu, "/v1/job/report")).body.Status).toBe("running");

    const res = await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: { customer: "acme" }, IdempotencyToken: "t-1" });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["DispatchedJobID", "EvalCreateIndex", "EvalID", "Index", "JobCreateIndex"]);
    expect(res.body.DispatchedJobID).toMatch(/^report\/dispatch-1767225600-[0-9a-f]{8}$/);
    const child = (await get(emu, `/v1/job/${encodeURIComponent(res.body.DispatchedJobID)}`)).body;
    expect(child).toMatchObject({ ParentID: "report", Dispatched: true, Meta: { customer: "acme" } });
    advance(emu, "1100ms");
    expect((await allocs(emu, encodeURIComponent(res.body.DispatchedJobID))).map((a) => a.ClientStatus)).toEqual(["running"]);

    const again = await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: { customer: "acme" }, IdempotencyToken: "t-1" });
    expect(again.body.DispatchedJobID).toBe(res.body.DispatchedJobID);

    expect((await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: {} })).text).toBe("Dispatch did not provide required meta keys: [customer]");
    expect((await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: { customer: "a", color: "red" } })).text).toBe(
      "Dispatch request included unpermitted metadata keys: [color]",
    );
    await register(emu, serviceJob("plain"));
    expect((await call(emu, "PUT", "/v1/job/plain/dispatch", {})).text).toBe('Specified job "plain" is not a parameterized job');
    expect((await call(emu, "PUT", "/v1/job/ghost/dispatch", {})).text).toBe("parameterized job not found");
    const forbidden = await createStandin();
    await register(forbidden, parameterized({ Payload: "forbidden", MetaRequired: null }));
    expect((await call(forbidden, "PUT", "/v1/job/report/dispatch", { Payload: "aGk=" })).text).toBe("Payload provided but forbidden by parameterized job");
  });

  it("names a child after the request's IdPrefixTemplate, taken as it is (structs.DispatchedID)", async () => {
    const emu = await createStandin();
    await register(emu, parameterized());
    const named = await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: { customer: "acme" }, IdPrefixTemplate: "acme-eu" });
    expect(named.status, named.text).toBe(200);
    expect(named.body.DispatchedJobID).toMatch(/^report\/dispatch-acme-eu-1767225600-[0-9a-f]{8}$/);
    expect((await get(emu, `/v1/job/${encodeURIComponent(named.body.DispatchedJobID)}`)).body).toMatchObject({ ParentID: "report", Name: named.body.DispatchedJobID });
    // Nomad checks neither length nor characters of the template; an empty one is no template.
    const odd = await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: { customer: "acme" }, IdPrefixTemplate: "a b/c" });
    expect(odd.body.DispatchedJobID).toMatch(/^report\/dispatch-a b\/c-1767225600-[0-9a-f]{8}$/);
    const plain = await call(emu, "PUT", "/v1/job/report/dispatch", { Meta: { customer: "acme" }, IdPrefixTemplate: "" });
    expect(plain.body.DispatchedJobID).toMatch(/^report\/dispatch-1767225600-[0-9a-f]{8}$/);
    // The HTTP layer refuses a body naming another job, before anything is written.
    const before = emu.index;
    const other = await call(emu, "PUT", "/v1/job/report/dispatch", { JobID: "other", Meta: { customer: "acme" } });
    expect([other.status, other.text]).toEqual([400, "Job ID does not match"]);
    expect(emu.index).toBe(before);
  });

  it("forces a periodic job to launch a child now", async () => {
    const emu = await createStandin();
    const reg = await register(emu, {
      ...serviceJob("nightly", { type: "batch" }),
      Periodic: { Enabled: true, SpecType: "cron", Spec: "0 3 * * *", ProhibitOverlap: false, TimeZone: "UTC" },
    });
    expect(reg.EvalID).toBe("");
    const forced = await call(emu, "PUT", "/v1/job/nightly/periodic/force");
    expect(forced.status).toBe(200);
    expect(Object.keys(forced.body)).toEqual(["EvalCreateIndex", "EvalID", "Index"]);
    const children = (await get(emu, "/v1/jobs?prefix=nightly/")).body as Json[];
    expect(children.map((j) => [j.ID, j.ParentID])).toEqual([["nightly/periodic-1767225600", "nightly"]]);
    await register(emu, serviceJob("plain"));
    expect((await call(emu, "PUT", "/v1/job/plain/periodic/force")).text).toBe("can't force launch non-periodic job");
  });

  it("scales a group (new version, job-scaling eval), reports scale status, and refuses what Nomad refuses", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web", { count: 1 }));
    advance(emu, "100ms"); // the eval creates the deployment
    const blocked = await call(emu, "PUT", "/v1/job/web/scale", { Count: 3, Target: { Group: "web" } });
    expect(blocked.status).toBe(400);
    expect(blocked.text).toBe("job scaling blocked due to active deployment");
    advance(emu, "11s");
    const scaled = await call(emu, "PUT", "/v1/job/web/scale", { Count: 3, Target: { Group: "web" }, Message: "more" });
    expect(scaled.status).toBe(200);
    expect((await get(emu, `/v1/evaluation/${scaled.body.EvalID}`)).body.TriggeredBy).toBe("job-scaling");
    advance(emu, "100ms");
    advance(emu, "11s");
    const status = (await get(emu, "/v1/job/web/scale")).body;
    expect(status).toMatchObject({ JobID: "web", JobStopped: false, TaskGroups: { web: { Desired: 3, Placed: 3, Running: 3, Healthy: 3, Unhealthy: 0 } } });
    // The scale request is recorded as a scaling event (the refused one changed nothing).
    expect(status.TaskGroups.web.Events).toMatchObject([{ Count: 3, PreviousCount: 1, Message: "more", Error: false, EvalID: scaled.body.EvalID, Meta: null }]);
    expect((await call(emu, "PUT", "/v1/job/web/scale", { Count: 2, Target: { Group: "db" } })).text).toBe('task group "db" specified for scaling does not exist in job');
    const missing = await call(emu, "PUT", "/v1/job/ghost/scale", { Count: 2, Target: { Group: "web" } });
    expect(missing.status).toBe(404);
    expect(missing.text).toBe('job "ghost" not found');
    expect((await get(emu, "/v1/job/ghost/scale")).status).toBe(404);
  });
});

describe("plan", () => {
  it("plans a new job (Added, Place), an unchanged one (Ignore), a count change (in place + Place) and an image change (destructive, max_parallel)", async () => {
    const emu = await createStandin();
    const first = await call(emu, "PUT", "/v1/job/web/plan", { Job: serviceJob("web", { count: 2 }), Diff: true });
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(["Annotations", "CreatedEvals", "Diff", "FailedTGAllocs", "Index", "JobModifyIndex", "NextPeriodicLaunch", "Warnings"]);
    expect(first.body.Diff.Type).toBe("Added");
    expect(first.body.Annotations.DesiredTGUpdates.web).toMatchObject({ Place: 2, Ignore: 0, DestructiveUpdate: 0 });
    // structs.DesiredUpdates' every count, Disconnect included (sorted, as Nomad's encoder writes them).
    expect(Object.keys(first.body.Annotations.DesiredTGUpdates.web)).toEqual([
      "Canary",
      "DestructiveUpdate",
      "Disconnect",
      "Ignore",
      "InPlaceUpdate",
      "Migrate",
      "Place",
      "Preemptions",
      "Reconnect",
      "RescheduleLater",
      "RescheduleNow",
      "Stop",
    ]);
    expect(first.body.JobModifyIndex).toBe(0);
    // Planning writes nothing.
    expect((await get(emu, "/v1/job/web")).status).toBe(404);

    const reg = await register(emu, serviceJob("web", { count: 2 }));
    advance(emu, "100ms");
    advance(emu, "11s");
    const same = await call(emu, "PUT", "/v1/job/web/plan", { Job: serviceJob("web", { count: 2 }), Diff: true });
    expect(same.body.Diff.Type).toBe("None");
    expect(same.body.Annotations.DesiredTGUpdates.web).toMatchObject({ Ignore: 2, Place: 0 });
    expect(same.body.JobModifyIndex).toBe(reg.JobModifyIndex); // the check-index for `nomad job run -check-index`

    const bigger = await call(emu, "PUT", "/v1/job/web/plan", { Job: serviceJob("web", { count: 3 }), Diff: true });
    expect(bigger.body.Annotations.DesiredTGUpdates.web).toMatchObject({ InPlaceUpdate: 2, Place: 1, DestructiveUpdate: 0 });
    const group = bigger.body.Diff.TaskGroups.find((g: Json) => g.Name === "web");
    expect(group.Type).toBe("Edited");
    expect(group.Fields.find((f: Json) => f.Name === "Count")).toMatchObject({ Type: "Edited", Old: "2", New: "3" });

    const image = await call(emu, "PUT", "/v1/job/web/plan", { Job: serviceJob("web", { count: 2, image: "nginx:2" }), Diff: true });
    expect(image.body.Annotations.DesiredTGUpdates.web).toMatchObject({ DestructiveUpdate: 1, Ignore: 1 }); // max_parallel 1
    const task = image.body.Diff.TaskGroups[0].Tasks.find((t: Json) => t.Name === "server");
    expect(task.Annotations).toEqual(["forces create/destroy update"]);
    const config = task.Objects.find((o: Json) => o.Name === "Config");
    expect(config.Fields.find((f: Json) => f.Name === "image")).toMatchObject({ Type: "Edited", Old: "nginx:1", New: "nginx:2" });

    const noDiff = await call(emu, "PUT", "/v1/job/web/plan", { Job: serviceJob("web", { count: 2, image: "nginx:2" }) });
    expect(noDiff.body.Diff).toBeNull();
  });

  it.each([
    [{ Job: { TaskGroups: [] } }, 400, "Job must have a valid ID"],
    [{ Job: { ID: "other" } }, 400, "Job ID does not match"],
    [{}, 400, "Job must be specified"],
  ])("rejects %j", async (body, status, text) => {
    const emu = await createStandin();
    const res = await call(emu, "PUT", "/v1/job/web/plan", body);
    expect(res.status).toBe(status);
    expect(res.text).toBe(text);
  });
});

describe("versions", () => {
  it("lists versions newest first, and with ?diffs=true diffs each against the one before", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web", { count: 1 }));
    await register(emu, serviceJob("web", { count: 2 }));
    await register(emu, serviceJob("web", { count: 2, image: "nginx:2" }));
    const plain = (await get(emu, "/v1/job/web/versions")).body;
    expect(plain.Versions.map((v: Json) => v.Version)).toEqual([2, 1, 0]);
    expect(plain.Diffs).toBeNull();
    const withDiffs = (await get(emu, "/v1/job/web/versions?diffs=true")).body;
    expect(withDiffs.Diffs).toHaveLength(2);
    expect(withDiffs.Diffs[1].TaskGroups[0].Fields.find((f: Json) => f.Name === "Count")).toMatchObject({ Old: "1", New: "2" });
    expect(withDiffs.Diffs[0].TaskGroups[0].Tasks[0].Objects.find((o: Json) => o.Name === "Config").Fields.find((f: Json) => f.Name === "image")).toMatchObject({
      Old: "nginx:1",
      New: "nginx:2",
    });
  });
});

describe("periodic jobs on the virtual clock", () => {
  const nightly = (extra: Json = {}) => ({
    ...serviceJob("nightly", { type: "batch" }),
    Periodic: { Enabled: true, SpecType: "cron", Spec: "0 3 * * *", TimeZone: "UTC", ProhibitOverlap: false, ...extra },
  });

  it("launches a child at each cron time as the clock passes it, and plan reports the next launch", async () => {
    const emu = await createStandin();
    const plan = await call(emu, "PUT", "/v1/job/nightly/plan", { Job: nightly() });
    expect(plan.body.NextPeriodicLaunch).toBe("2026-01-01T03:00:00Z");
    await register(emu, nightly());
    expect(emu.clock.status().nextTimerAt).toBe(Date.parse("2026-01-01T03:00:00Z"));
    advance(emu, "2h59m");
    expect((await get(emu, "/v1/jobs?prefix=nightly/")).body).toEqual([]);
    advance(emu, "1m");
    let children = ((await get(emu, "/v1/jobs?prefix=nightly/")).body as Json[]).map((j) => j.ID);
    expect(children).toEqual(["nightly/periodic-1767236400"]);
    advance(emu, "24h");
    children = ((await get(emu, "/v1/jobs?prefix=nightly/")).body as Json[]).map((j) => j.ID);
    // The first child, dead for a day, was collected by job GC (job_gc_threshold, 4h), as Nomad collects it.
    expect(children).toEqual(["nightly/periodic-1767322800"]);
    // Stopping the parent stops the schedule; the stopped parent and its dead children are collected in turn.
    await call(emu, "DELETE", "/v1/job/nightly");
    // (A launch would have been due at the very end of the 48 hours: none was.)
    advance(emu, "48h");
    expect((await get(emu, "/v1/jobs?prefix=nightly")).body).toEqual([]);
  });

  it("prohibit_overlap skips a launch while an earlier child still runs; time zones apply", async () => {
    const emu = await createStandin({ fixture: { scheduler: { timing: { batchRun: "2h" } } } });
    await register(emu, nightly({ Spec: "0 * * * *", ProhibitOverlap: true }));
    advance(emu, "1h"); // launch at 01:00, runs for 2 h
    advance(emu, "1h"); // 02:00: the 01:00 child still runs → skipped
    const ids = ((await get(emu, "/v1/jobs?prefix=nightly/")).body as Json[]).map((j) => j.ID);
    expect(ids).toEqual(["nightly/periodic-1767229200"]);

    const berlin = await createStandin();
    const plan = await call(berlin, "PUT", "/v1/job/nightly/plan", { Job: nightly({ TimeZone: "Europe/Berlin" }) });
    expect(plan.body.NextPeriodicLaunch).toBe("2026-01-01T02:00:00Z"); // 03:00 in Berlin (UTC+1 in winter)
  });

  it("rejects a cron spec that does not parse", async () => {
    const emu = await createStandin();
    const res = await call(emu, "PUT", "/v1/jobs", { Job: nightly({ Spec: "every day" }) });
    expect(res.status).toBe(500);
    expect(res.text).toMatch(/^1 error occurred:\n\t\* Periodic validation failed: Invalid cron spec "every day": /);
  });
});

describe("health deadlines, children and wire order of every type", () => {
  it("an allocation not healthy within healthy_deadline is unhealthy and fails the deployment (no reschedule left)", async () => {
    // Allocations take 2 minutes to start; healthy_deadline is 60 s.
    const emu = await createStandin({ fixture: { scheduler: { timing: { allocStart: "2m" } } } });
    const update = { MaxParallel: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 60_000_000_000, ProgressDeadline: 600_000_000_000 };
    await register(emu, serviceJob("slow", { update, reschedule: NO_RESCHEDULE }));
    advance(emu, "100ms");
    advance(emu, "59s");
    expect((await get(emu, "/v1/job/slow/deployment")).body.Status).toBe("running");
    advance(emu, "1s");
    const deployment = (await get(emu, "/v1/job/slow/deployment")).body;
    expect(deployment).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    expect(deployment.TaskGroups.web.UnhealthyAllocs).toBe(1);
    expect((await allocs(emu, "slow"))[0]!.DeploymentStatus).toMatchObject({ Healthy: false });
  });

  it("a parent's summary counts its children by status", async () => {
    const emu = await createStandin({ fixture: { scheduler: { timing: { batchRun: "1m" } } } });
    await register(emu, { ...serviceJob("report", { type: "batch" }), ParameterizedJob: { Payload: "optional" } });
    await call(emu, "PUT", "/v1/job/report/dispatch", {});
    await call(emu, "PUT", "/v1/job/report/dispatch", {});
    expect((await get(emu, "/v1/job/report/summary")).body.Children).toEqual({ Dead: 0, Pending: 2, Running: 0 });
    advance(emu, "1100ms");
    expect((await get(emu, "/v1/job/report/summary")).body.Children).toEqual({ Dead: 0, Pending: 0, Running: 2 });
    advance(emu, "1m");
    expect((await get(emu, "/v1/job/report/summary")).body.Children).toEqual({ Dead: 2, Pending: 0, Running: 0 });
  });

  it("every object the endpoints return has its struct fields in byte-wise order", async () => {
    const emu = await createStandin();
    const reg = await register(emu, serviceJob("web"));
    advance(emu, "1100ms");
    const [alloc] = await allocs(emu, "web");
    const docs: Array<[string, unknown]> = [
      ["job", (await get(emu, "/v1/job/web")).body],
      ["summary", (await get(emu, "/v1/job/web/summary")).body],
      ["eval", (await get(emu, `/v1/evaluation/${reg.EvalID}`)).body],
      ["alloc stub", alloc],
      ["alloc", (await get(emu, `/v1/allocation/${alloc!.ID}`)).body],
      ["node stub", (await get(emu, "/v1/nodes")).body[0]],
      ["node", (await get(emu, `/v1/node/${alloc!.NodeID}`)).body],
      ["namespace", (await get(emu, "/v1/namespace/default")).body],
      ["members", (await get(emu, "/v1/agent/members")).body],
    ];
    const bytewise = (a: string, b: string) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1);
    const check = (where: string, value: unknown) => {
      if (Array.isArray(value)) for (const [i, v] of value.entries()) check(`${where}[${i}]`, v);
      else if (value && typeof value === "object") {
        const keys = Object.keys(value);
        expect(keys, where).toEqual([...keys].sort(bytewise));
        for (const k of keys) check(`${where}.${k}`, (value as Json)[k]);
      }
    };
    for (const [name, doc] of docs) check(name, doc);
    expect((await get(emu, `/v1/evaluation/${reg.EvalID}`)).text).toMatch(/^\{"CreateIndex":\d+,"CreateTime":\d+,"DeploymentID":"[^"]+","ID":/); // zero fields omitted (Evaluation's omitempty)
  });
});

describe("system jobs", () => {
  const nodes = [
    { ID: "aaaaaaaa-0000-0000-0000-000000000001", Name: "c1" },
    { ID: "bbbbbbbb-0000-0000-0000-000000000002", Name: "c2" },
  ];

  it("run one allocation on every feasible node, follow nodes coming and going, and get no deployment", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes } } });
    await register(emu, serviceJob("agent", { type: "system", update: null }));
    advance(emu, "1100ms");
    let live = (await allocs(emu, "agent")).filter((a) => a.DesiredStatus === "run");
    expect(live.map((a) => a.NodeName).sort()).toEqual(["c1", "c2", "standin"]);
    expect(live.every((a) => a.Name === "agent.web[0]" && a.ClientStatus === "running")).toBe(true);
    expect((await get(emu, "/v1/job/agent/deployment")).text).toBe("null");

    // A node made ineligible loses its allocation; a new node gets one.
    await emu.scheduler.request(`/_standin/scheduler/nodes/${nodes[0]!.ID}`, { method: "POST", body: JSON.stringify({ SchedulingEligibility: "ineligible" }) });
    await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: JSON.stringify({ scheduler: { nodes: [{ Name: "c3" }] } }) });
    advance(emu, "100ms");
    live = (await allocs(emu, "agent")).filter((a) => a.DesiredStatus === "run");
    expect(live.map((a) => a.NodeName).sort()).toEqual(["c2", "c3", "standin"]);
    expect((await get(emu, "/v1/job/agent")).body.Status).toBe("running");
  });

  it("sysbatch allocations run once per node and the job goes dead", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes, timing: { batchRun: "5s" } } } });
    await register(emu, serviceJob("gc", { type: "sysbatch", update: null }));
    advance(emu, "1100ms");
    expect((await allocs(emu, "gc")).filter((a) => a.ClientStatus === "running")).toHaveLength(3);
    advance(emu, "5s");
    expect((await allocs(emu, "gc")).map((a) => a.ClientStatus)).toEqual(["complete", "complete", "complete"]);
    expect((await get(emu, "/v1/job/gc")).body.Status).toBe("dead");
  });
});

describe("remaining error rows (§1.3 / §1.8)", () => {
  it.each([
    ["PUT", "/v1/validate/job", {}, 400, "Job must be specified"],
    ["DELETE", "/v1/job/", undefined, 500, "missing job ID for deregistering"],
    ["PUT", "/v1/deployment/promote/x", { All: true }, 400, "DeploymentID must be specified"],
    ["PUT", "/v1/deployment/allocation-health/x", { DeploymentID: "y" }, 400, "Deployment ID does not match"],
    ["PUT", "/v1/deployment/promote/x", { DeploymentID: "x", All: true }, 500, "deployment not found"],
    ["PUT", "/v1/deployment/pause/x", { DeploymentID: "x", Pause: true }, 500, "deployment not found"],
  ])("%s %s → %i %j", async (method, path, body, status, text) => {
    const emu = await createStandin();
    const res = await call(emu, method, path, body);
    expect(res.status).toBe(status);
    expect(res.text).toBe(text);
  });

  it("enforce-index conflicts, deregistering an unknown job, pausing a terminal deployment, evaluating a parent", async () => {
    const emu = await createStandin();
    const reg = await register(emu, serviceJob("web"));
    expect((await call(emu, "PUT", "/v1/jobs", { Job: serviceJob("web"), EnforceIndex: true, JobModifyIndex: 0 })).text).toBe("Enforcing job modify index 0: job already exists");
    expect((await call(emu, "PUT", "/v1/jobs", { Job: serviceJob("web"), EnforceIndex: true, JobModifyIndex: reg.JobModifyIndex + 50 })).text).toBe(
      `Enforcing job modify index ${reg.JobModifyIndex + 50}: job exists with conflicting job modify index: ${reg.JobModifyIndex}`,
    );
    expect((await call(emu, "PUT", "/v1/jobs", { Job: serviceJob("web", { count: 3 }), EnforceIndex: true, JobModifyIndex: reg.JobModifyIndex })).status).toBe(200);

    const unknown = await call(emu, "DELETE", "/v1/job/ghost");
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 });
    expect(unknown.headers.get("x-nomad-index")).toBe("0");

    advance(emu, "100ms");
    const id = (await get(emu, "/v1/job/web/deployment")).body.ID;
    await call(emu, "PUT", `/v1/deployment/fail/${id}`);
    expect((await call(emu, "PUT", `/v1/deployment/pause/${id}`, { DeploymentID: id, Pause: true })).text).toBe("can't pause terminal deployment");
    expect((await call(emu, "PUT", `/v1/deployment/pause/${id}`, { DeploymentID: id, Pause: false })).text).toBe("can't resume terminal deployment");

    await register(emu, { ...serviceJob("report", { type: "batch" }), ParameterizedJob: { Payload: "optional" } });
    expect((await call(emu, "PUT", "/v1/job/report/evaluate", {})).text).toBe("can't evaluate parameterized job");
  });
});

describe("allocation health fault", () => {
  it("reporting an allocation unhealthy through the control API fails its deployment (no reschedule left); outside a deployment it is a 409", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("web", { reschedule: NO_RESCHEDULE }));
    advance(emu, "1100ms");
    const [alloc] = await allocs(emu, "web");
    const res = await emu.scheduler.request(`/_standin/scheduler/allocations/${alloc!.ID}`, { method: "POST", body: JSON.stringify({ Healthy: false }) });
    expect(res.status).toBe(200);
    expect((await get(emu, "/v1/job/web/deployment")).body).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    await register(emu, serviceJob("batchy", { type: "batch" }));
    advance(emu, "1100ms");
    const [batch] = await allocs(emu, "batchy");
    const refused = await emu.scheduler.request(`/_standin/scheduler/allocations/${batch!.ID}`, { method: "POST", body: JSON.stringify({ Healthy: false }) });
    expect(refused.status).toBe(409);
    const bad = await emu.scheduler.request(`/_standin/scheduler/allocations/${batch!.ID}`, { method: "POST", body: JSON.stringify({ ClientStatus: "exploded" }) });
    expect(bad.status).toBe(400);
  });
});

describe("blocking queries", () => {
  it("a single object's read reports its own ModifyIndex and blocks until that object changes", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("a"));
    await register(emu, serviceJob("b"));
    const a = await get(emu, "/v1/job/a");
    const index = Number(a.headers.get("x-nomad-index"));
    expect(index).toBe(a.body.ModifyIndex);
    let answered = false;
    const parked = get(emu, `/v1/job/a?index=${index}&wait=30s`).then((r) => ((answered = true), r));
    await register(emu, serviceJob("b", { image: "nginx:2" })); // another job: "a" does not answer
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    advance(emu, "100ms"); // a's eval runs: a's status changes → a's ModifyIndex moves
    const res = await parked;
    expect(Number(res.headers.get("x-nomad-index"))).toBeGreaterThan(index);
  });

  it("an index ahead of the current one waits for the full virtual deadline, then answers with the current index", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("a"));
    const now = Number((await get(emu, "/v1/jobs")).headers.get("x-nomad-index"));
    let answered = false;
    const parked = get(emu, `/v1/jobs?index=${now + 1000}&wait=10s`).then((r) => ((answered = true), r));
    // Move the clock only once the query has parked (its deadline counts from then), however slow the machine.
    for (let turn = 0; turn < 100_000 && emu.watchers.parked === 0; turn++) await new Promise((r) => setImmediate(r));
    expect(emu.watchers.parked).toBe(1);
    emu.clock.advance("9s");
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    emu.clock.advance("2s"); // past wait + wait/16
    const res = await parked;
    expect(Number(res.headers.get("x-nomad-index"))).toBeLessThan(now + 1000);
  });

  it("1 000 concurrent blocking queries all wake on one write", async () => {
    const emu = await createStandin();
    await register(emu, serviceJob("a"));
    const index = Number((await get(emu, "/v1/jobs")).headers.get("x-nomad-index"));
    let woken = 0;
    const parked = Array.from({ length: 1000 }, (_, i) =>
      Promise.resolve(emu.scheduler.request(`/v1/${i % 2 ? "jobs" : "job/a"}?index=${index}&wait=5m`)).then((r: Response) => {
        woken++;
        return r.status;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(woken).toBe(0);
    expect(emu.watchers.parked).toBe(1000);
    await register(emu, serviceJob("a", { image: "nginx:2" }));
    const statuses = await Promise.all(parked);
    expect(woken).toBe(1000);
    expect(statuses.every((s: number) => s === 200)).toBe(true);
    expect(emu.watchers.parked).toBe(0);
  });
});
