/**
 * Evaluation administration (scheduler-breadth-nomad.md §7.2, §7.3) and node
 * re-evaluation: the count with namespace, prefix and filter; the batch
 * delete's checks in Nomad's order, ending at the running eval broker; and
 * `PUT /v1/node/:id/evaluate` creating node-update evaluations.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call, callScheduler } from "../support/call.js";
import { webJob } from "../support/jobs.js";

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
