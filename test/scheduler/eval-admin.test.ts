/**
 * Evaluation administration (scheduler-breadth-nomad.md §7.2, §7.3) and node
 * re-evaluation: the count with namespace, prefix and filter; the batch
 * delete's checks in Nomad's order, the running eval broker's refusal, and
 * with the broker paused the deletion itself (by ID, by filter, only what is
 * safe to delete), its index, blocking queries and the event stream; and
 * `PUT /v1/node/:id/evaluate` creating node-update evaluations.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call, callScheduler } from "../support/call.js";
import { webJob } from "../support/jobs.js";
import { untilParked } from "../support/parked.js";

type Json = Record<string, any>;

const req = callScheduler;

async function withJobs(): Promise<Standin> {
  const emu = await createStandin({ fixture: { scheduler: { namespaces: [{ Name: "prod" }] } } as never });
  for (const [id, ns] of [
    ["web", "default"],
    ["api", "default"],
    ["db", "prod"],
  ]) {
    expect((await call(emu.scheduler, "PUT", `/v1/jobs?namespace=${ns}`, { Job: { ...webJob(id!), Namespace: ns } })).status).toBe(200);
  }
  emu.clock.advance("30s");
  return emu;
}

describe("GET /v1/evaluations/count", () => {
  it("counts the namespace's evaluations, across namespaces with *, by ID prefix and by filter", async () => {
    const emu = await withJobs();
    const all = (await req(emu, "GET", "/v1/evaluations?namespace=*")).body as Json[];
    const res = await req(emu, "GET", "/v1/evaluations/count");
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["Count", "Index", "KnownLeader", "LastContact", "NextToken"]);
    expect(res.body).toMatchObject({ Count: all.filter((e) => e.Namespace === "default").length, KnownLeader: true, LastContact: 0, NextToken: "" });
    expect(res.headers.get("X-Nomad-Index")).toBe(String(res.body.Index));
    expect((await req(emu, "GET", "/v1/evaluations/count?namespace=*")).body.Count).toBe(all.length);
    const first = all[0]!;
    expect((await req(emu, "GET", `/v1/evaluations/count?namespace=*&prefix=${first.ID.slice(0, 8)}`)).body.Count).toBe(
      all.filter((e) => e.ID.startsWith(first.ID.slice(0, 8))).length,
    );
    expect((await req(emu, "GET", `/v1/evaluations/count?namespace=*&filter=${encodeURIComponent('JobID == "db"')}`)).body.Count).toBe(all.filter((e) => e.JobID === "db").length);
    expect((await req(emu, "POST", "/v1/evaluations/count")).status).toBe(405);
  });
});

describe("DELETE /v1/evaluations", () => {
  const MGMT = "20000000-0000-0000-0000-000000000001";
  const READER = "20000000-0000-0000-0000-000000000002";

  it("checks the body, then the token, then refuses while the eval broker runs", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          acl: {
            enabled: true,
            policies: [{ Name: "r", Rules: 'namespace "default" { policy = "read" }' }],
            tokens: [
              { SecretID: MGMT, Name: "root", Type: "management" },
              { SecretID: READER, Name: "reader", Policies: ["r"] },
            ],
          },
        },
      } as never,
    });
    expect(await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: ["a"], Filter: "x" }, MGMT)).toMatchObject({
      status: 400,
      text: "evals cannot be deleted by both ID and filter",
    });
    expect(await req(emu, "DELETE", "/v1/evaluations", {}, MGMT)).toMatchObject({ status: 400, text: "evals must be deleted by either ID or filter" });
    const many = Array.from({ length: 7282 }, (_, i) => String(i));
    expect(await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: many }, MGMT)).toMatchObject({
      status: 400,
      text: "request includes 7282 evaluation IDs, must be 7281 or fewer",
    });
    expect(await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: ["a"] }, READER)).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await req(emu, "DELETE", "/v1/evaluations", { Filter: 'Status == "complete"' }, MGMT)).toMatchObject({
      status: 500,
      text: "eval broker is enabled; eval broker must be paused to delete evals",
    });
  });
});

describe("DELETE /v1/evaluations with the eval broker paused", () => {
  const pause = async (emu: Standin, paused = true) =>
    expect((await req(emu, "PUT", "/v1/operator/scheduler/configuration", { SchedulerAlgorithm: "binpack", PauseEvalBroker: paused })).body.Updated).toBe(true);
  const evalIds = async (emu: Standin) => ((await req(emu, "GET", "/v1/evaluations?namespace=*")).body as Json[]).map((e) => e.ID as string).sort();

  it("deletes evaluations by ID: {Count, Index}, the index header, gone from the list and the single read", async () => {
    const emu = await withJobs();
    // A stopped job's evaluations are always safe to delete.
    const stop = await req(emu, "DELETE", "/v1/job/web");
    emu.clock.advance("30s");
    await pause(emu);
    const webEvals = ((await req(emu, "GET", "/v1/job/web/evaluations")).body as Json[]).map((e) => e.ID as string);
    expect(webEvals).toContain(stop.body.EvalID);
    const others = (await evalIds(emu)).filter((id) => !webEvals.includes(id));
    const res = await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: webEvals });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["Count", "Index"]);
    expect(res.body.Count).toBe(webEvals.length);
    expect(res.headers.get("X-Nomad-Index")).toBe(String(res.body.Index));
    expect(await evalIds(emu)).toEqual(others);
    expect((await req(emu, "GET", `/v1/evaluation/${stop.body.EvalID}`)).status).toBe(404);
    const list = await req(emu, "GET", "/v1/evaluations");
    expect(list.headers.get("X-Nomad-Index")).toBe(String(res.body.Index));
    // The allocations stay.
    expect(((await req(emu, "GET", "/v1/job/web/allocations")).body as Json[]).length).toBeGreaterThan(0);
  });

  it("refuses the whole batch when one ID is missing or not safe to delete (a running allocation needs its eval)", async () => {
    const emu = await withJobs();
    await pause(emu);
    const before = await evalIds(emu);
    const api = ((await req(emu, "GET", "/v1/job/api/evaluations")).body as Json[])[0]!;
    expect(((await req(emu, "GET", "/v1/job/api/allocations")).body as Json[]).some((a) => a.ClientStatus === "running" && a.EvalID === api.ID)).toBe(true);
    expect(await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: [api.ID] })).toMatchObject({ status: 500, text: `eval ${api.ID} is not safe to delete` });
    expect(await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: ["00000000-0000-0000-0000-000000000000"] })).toMatchObject({ status: 500, text: "eval not found" });
    expect(await evalIds(emu)).toEqual(before);
  });

  it("keeps the eval of a failed allocation still due a reschedule, and deletes one whose group does not reschedule", async () => {
    const emu = await createStandin();
    const policy = { Attempts: 2, Interval: 3_600_000_000_000, Delay: 30_000_000_000, DelayFunction: "constant", Unlimited: false };
    const job = { ...webJob("web"), TaskGroups: [{ ...webJob("web").TaskGroups[0], ReschedulePolicy: policy }] };
    const registered = await req(emu, "PUT", "/v1/jobs", { Job: job });
    emu.clock.advance("30s");
    await pause(emu);
    emu.act("alloc-fail", { job: "web" });
    const failed = ((await req(emu, "GET", "/v1/job/web/allocations")).body as Json[]).find((a) => a.ClientStatus === "failed")!;
    expect(failed.EvalID).toBe(registered.body.EvalID);
    expect(await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: [registered.body.EvalID] })).toMatchObject({
      status: 500,
      text: `eval ${registered.body.EvalID} is not safe to delete`,
    });
    // No reschedule policy (attempts 0): nothing needs the eval any more.
    const plain = await createStandin();
    const noReschedule = { ...webJob("web"), TaskGroups: [{ ...webJob("web").TaskGroups[0], ReschedulePolicy: { ...policy, Attempts: 0 } }] };
    const first = await req(plain, "PUT", "/v1/jobs", { Job: noReschedule });
    plain.clock.advance("30s");
    await pause(plain);
    plain.act("alloc-fail", { job: "web" });
    expect((await req(plain, "DELETE", "/v1/evaluations", { EvalIDs: [first.body.EvalID] })).body.Count).toBe(1);
  });

  it("deletes by filter what matches and is safe to delete; nothing matching answers Count 0 at index 0", async () => {
    const emu = await withJobs();
    await req(emu, "DELETE", "/v1/job/db?namespace=prod");
    emu.clock.advance("30s");
    await pause(emu);
    const before = (await req(emu, "GET", "/v1/evaluations?namespace=*")).body as Json[];
    // Every complete evaluation matches, but only the stopped job's are safe to delete.
    const res = await req(emu, "DELETE", "/v1/evaluations", { Filter: 'Status == "complete"' });
    expect(res.status).toBe(200);
    const dbEvals = before.filter((e) => e.JobID === "db");
    expect(res.body.Count).toBe(dbEvals.length);
    expect(await evalIds(emu)).toEqual(
      before
        .filter((e) => e.JobID !== "db")
        .map((e) => e.ID)
        .sort(),
    );
    const none = await req(emu, "DELETE", "/v1/evaluations", { Filter: 'JobID == "nothing"' });
    expect(none.body).toEqual({ Count: 0, Index: 0 });
    expect(none.headers.get("X-Nomad-Index")).toBe("0");
    expect(await req(emu, "DELETE", "/v1/evaluations", { Filter: 'Status == "' })).toMatchObject({ status: 500 });
  });

  it("wakes blocking queries on the evaluations and publishes no event (Nomad maps the delete to none)", async () => {
    const emu = await withJobs();
    await req(emu, "DELETE", "/v1/job/web");
    emu.clock.advance("30s");
    await pause(emu);
    const list = await req(emu, "GET", "/v1/evaluations?namespace=*");
    const index = Number(list.headers.get("X-Nomad-Index"));
    const waiting = req(emu, "GET", `/v1/evaluations?namespace=*&index=${index}`);
    await untilParked(emu, 1);
    const webEvals = ((await req(emu, "GET", "/v1/job/web/evaluations")).body as Json[]).map((e) => e.ID as string);
    const res = await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: webEvals });
    const woken = await waiting;
    expect(Number(woken.headers.get("X-Nomad-Index"))).toBe(res.body.Index);
    expect((woken.body as Json[]).map((e) => e.ID)).not.toContain(webEvals[0]);

    // A job registered while paused has only its pending eval: deleting it leaves the job dead (DeleteEval's
    // setJobStatuses with evalDelete), a job write that still publishes nothing.
    const queued = await req(emu, "PUT", "/v1/jobs", { Job: webJob("queued") });
    expect((await req(emu, "GET", "/v1/job/queued")).body.Status).toBe("pending");
    const dropped = await req(emu, "DELETE", "/v1/evaluations", { EvalIDs: [queued.body.EvalID] });
    expect(dropped.body.Count).toBe(1);
    const job = (await req(emu, "GET", "/v1/job/queued")).body;
    expect(job).toMatchObject({ Status: "dead", ModifyIndex: dropped.body.Index });

    // The next event after the deletes' index is the next write's, not a delete's.
    await pause(emu, false);
    const next = await req(emu, "PUT", "/v1/jobs", { Job: webJob("later") });
    const abort = new AbortController();
    const stream = await emu.scheduler.request(`/v1/event/stream?index=${dropped.body.Index}`, { signal: abort.signal });
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    // Frames until the first batch (heartbeats are `{}`).
    while (!text.split("\n").some((line) => line.includes('"Index"'))) text += decoder.decode((await reader.read()).value, { stream: true });
    abort.abort();
    const first = JSON.parse(text.split("\n").find((line) => line.includes('"Index"'))!);
    expect(first.Index).toBe(next.body.Index);
    expect(first.Index).toBeGreaterThan(dropped.body.Index);
  });

  it("is reversible through the broker: once unpaused, a delete is refused again", async () => {
    const emu = await withJobs();
    await pause(emu);
    await pause(emu, false);
    expect(await req(emu, "DELETE", "/v1/evaluations", { Filter: 'Status == "complete"' })).toMatchObject({
      status: 500,
      text: "eval broker is enabled; eval broker must be paused to delete evals",
    });
  });
});

describe("PUT /v1/node/:id/evaluate", () => {
  it("creates a node-update evaluation for each job on the node", async () => {
    const emu = await withJobs();
    const node = ((await req(emu, "GET", "/v1/nodes")).body as Json[])[0]!;
    const res = await req(emu, "PUT", `/v1/node/${node.ID}/evaluate`);
    expect(res.status).toBe(200);
    expect(res.body.EvalIDs).toHaveLength(3);
    expect(res.body.Index).toBe(res.body.EvalCreateIndex);
    expect(res.headers.get("X-Nomad-Index")).toBe(String(res.body.Index));
    const evaluation = (await req(emu, "GET", `/v1/evaluation/${res.body.EvalIDs[0]}?namespace=*`)).body;
    expect(evaluation).toMatchObject({ TriggeredBy: "node-update", NodeID: node.ID });
    expect(await req(emu, "PUT", "/v1/node/00000000-0000-0000-0000-000000000000/evaluate")).toMatchObject({ status: 500, text: "node not found" });
    expect((await req(emu, "GET", `/v1/node/${node.ID}/evaluate`)).status).toBe(405);
  });
});
