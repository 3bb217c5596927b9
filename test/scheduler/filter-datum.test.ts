/**
 * `?filter=` reads Nomad's Go structs, where a field the JSON leaves out (struct-level `omitempty` on
 * Evaluation, Allocation, NetworkResource and Port) is present with its zero value: a selector naming
 * one matches or not, instead of failing with "couldn't find key" (found by the go-bexpr oracle,
 * test/conformance/oracle-bexpr.test.ts). The wire keeps leaving them out. And an allocation's filter
 * reads the job it was placed with, as its own GET shows it, not the job's current version.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

let emu: Standin;

async function get(path: string): Promise<{ status: number; body: any; text: string }> {
  const res = await emu.scheduler.request(path);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: res.status, body, text };
}

const q = encodeURIComponent;

beforeAll(async () => {
  emu = await createStandin();
  const job = {
    ID: "web",
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      { Name: "g", Networks: [{ DynamicPorts: [{ Label: "http" }] }], Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }] },
    ],
  };
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job }) });
  expect(res.status).toBe(200);
  // a batch job whose allocation completes: the job is dead by now, its allocation's copy still pending
  const once = {
    ID: "once",
    Type: "batch",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "b", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
  };
  expect((await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: once }) })).status).toBe(200);
  emu.clock.advance("30s");
});

describe("zero-valued fields a filter sees but the wire leaves out", () => {
  // (the evaluations' and allocations' list views already carried these; the tables keep it so)
  it("evaluations: NodeID, BlockedEval, StatusDescription are empty strings", async () => {
    const evals = (await get("/v1/evaluations")).body as any[];
    expect(evals.length).toBeGreaterThan(0);
    expect(evals[0].NodeID).toBeUndefined(); // still absent on the wire
    for (const expression of ['NodeID == ""', 'BlockedEval == ""', "StatusDescription is empty", "ClassEligibility is empty", "Wait == 0"]) {
      const res = await get(`/v1/evaluations?filter=${q(expression)}`);
      expect(res.status, `${expression}: ${res.text}`).toBe(200);
      expect(res.body.length, expression).toBe(evals.length);
    }
    expect((await get(`/v1/evaluations?filter=${q('NodeID != ""')}`)).body).toEqual([]);
  });

  it("allocations: FollowupEvalID and DesiredDescription are empty strings", async () => {
    const allocs = (await get("/v1/allocations")).body as any[];
    expect(allocs.length).toBe(2);
    const res = await get(`/v1/allocations?filter=${q('FollowupEvalID == "" and DesiredDescription is empty')}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.length).toBe(2);
  });

  it("jobs: a network's Mode and a port's Value and To are zero", async () => {
    const res = await get(
      `/v1/jobs?filter=${q('ID == "web" and TaskGroups.0.Networks.0.Mode == "" and TaskGroups.0.Networks.0.DynamicPorts.0.To == 0 and TaskGroups.0.Networks.0.ReservedPorts is empty')}`,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((j: any) => j.ID)).toEqual(["web"]);
  });

  it("nodes: the legacy Resources has Cores, IOPS, MemoryMaxMB and Networks", async () => {
    const nodes = (await get("/v1/nodes")).body as any[];
    const res = await get(`/v1/nodes?filter=${q("Resources.Cores == 0 and Resources.IOPS == 0 and Resources.MemoryMaxMB == 0 and Resources.Networks is empty")}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.length).toBe(nodes.length);
  });

  it("a field no struct has is still an error", async () => {
    const res = await get(`/v1/evaluations?filter=${q('NoSuchField == ""')}`);
    expect(res.status).toBe(400);
    expect(res.text).toBe('failed to read result page: error finding value in datum: /NoSuchField at part 0: couldn\'t find key: struct field with name "NoSuchField"');
  });
});

describe("an allocation's filter reads its own job", () => {
  it("Job.Status and Job.Version as GET /v1/allocation/:id shows them", async () => {
    const stub = ((await get("/v1/allocations")).body as any[]).find((a) => a.JobID === "once");
    const alloc = (await get(`/v1/allocation/${stub.ID}`)).body;
    const current = (await get("/v1/job/once")).body;
    // the job moved on since placement (pending then, running now): the allocation keeps its copy
    expect(alloc.Job.Status).not.toBe(current.Status);
    const own = await get(`/v1/allocations?filter=${q(`Job.Status == "${alloc.Job.Status}" and Job.Version == ${alloc.Job.Version}`)}`);
    expect(own.body.map((a: any) => a.ID)).toEqual([stub.ID]);
    const now = await get(`/v1/allocations?filter=${q(`Job.Status == "${current.Status}"`)}`);
    expect(now.body.map((a: any) => a.ID)).not.toContain(stub.ID);
  });
});
