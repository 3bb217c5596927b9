/**
 * `/v1/jobs/statuses` (scheduler-breadth-nomad.md §7.4): newest-modified
 * first, ModifyIndex tokens, the allocation and deployment summaries, POST
 * bodies naming jobs across namespaces, and the 400s.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

async function cluster(): Promise<Standin> {
  const emu = await createStandin({ fixture: { scheduler: { namespaces: [{ Name: "prod" }] } } as never });
  for (const [id, ns] of [
    ["first", "default"],
    ["second", "default"],
    ["other", "prod"],
  ]) {
    expect((await call(emu.scheduler, "PUT", `/v1/jobs?namespace=${ns}`, { Job: { ...webJob(id!, { count: 2 }), Namespace: ns } })).status).toBe(200);
    emu.clock.advance("30s");
  }
  return emu;
}

describe("/v1/jobs/statuses", () => {
  it("lists the namespace's jobs newest first with their allocations, paginated by ModifyIndex", async () => {
    const emu = await cluster();
    const res = await call(emu.scheduler, "GET", "/v1/jobs/statuses");
    expect(res.status).toBe(200);
    expect(res.body.map((j: Json) => j.ID)).toEqual(["second", "first"]);
    const second = res.body[0];
    expect(Object.keys(second)).toEqual([
      "Allocs",
      "ChildStatuses",
      "Datacenters",
      "GroupCountSum",
      "ID",
      "IsPack",
      "LatestDeployment",
      "ModifyIndex",
      "Name",
      "Namespace",
      "NodePool",
      "ParentID",
      "Priority",
      "Status",
      "Stop",
      "SubmitTime",
      "Type",
      "Version",
    ]);
    expect(second).toMatchObject({ GroupCountSum: 2, NodePool: "default", ChildStatuses: null, ParentID: "", IsPack: false, Type: "service" });
    expect(second.Allocs).toHaveLength(2);
    expect(Object.keys(second.Allocs[0])).toEqual(["ClientStatus", "DeploymentStatus", "FollowupEvalID", "Group", "HasPausedTask", "ID", "JobVersion", "NodeID"]);
    expect(second.LatestDeployment).toMatchObject({ JobVersion: 0, RequiresPromotion: false });

    const page = await call(emu.scheduler, "GET", "/v1/jobs/statuses?namespace=*&per_page=2");
    expect(page.body.map((j: Json) => j.ID)).toEqual(["other", "second"]);
    const token = page.headers.get("X-Nomad-NextToken");
    expect(token).toBe(String(res.body[1].ModifyIndex));
    expect((await call(emu.scheduler, "GET", `/v1/jobs/statuses?namespace=*&next_token=${token}`)).body.map((j: Json) => j.ID)).toEqual(["first"]);
    expect((await call(emu.scheduler, "GET", "/v1/jobs/statuses?namespace=*&reverse=true")).body.map((j: Json) => j.ID)).toEqual(["first", "second", "other"]);
    expect((await call(emu.scheduler, "GET", `/v1/jobs/statuses?filter=${encodeURIComponent('ID == "first"')}`)).body.map((j: Json) => j.ID)).toEqual(["first"]);
  });

  it("takes a POST body naming jobs (all namespaces), and refuses empty lists, bad bodies and bad flags", async () => {
    const emu = await cluster();
    const res = await call(emu.scheduler, "POST", "/v1/jobs/statuses", { Jobs: [{ ID: "first" }, { ID: "other", Namespace: "prod" }] });
    expect(res.status).toBe(200);
    expect(res.body.map((j: Json) => j.ID)).toEqual(["other", "first"]);
    expect(await call(emu.scheduler, "POST", "/v1/jobs/statuses", { Jobs: [] })).toMatchObject({ status: 400, text: "no jobs in request" });
    const bad = await call(emu.scheduler, "POST", "/v1/jobs/statuses", "{malformed");
    expect(bad.status).toBe(400);
    expect(bad.text.startsWith("error decoding request: ")).toBe(true);
    expect((await call(emu.scheduler, "GET", "/v1/jobs/statuses?include_children=maybe")).status).toBe(400);
    expect((await call(emu.scheduler, "DELETE", "/v1/jobs/statuses")).status).toBe(405);
  });

  it("is empty, not null, without jobs", async () => {
    const emu = await createStandin();
    expect((await call(emu.scheduler, "GET", "/v1/jobs/statuses")).text).toBe("[]");
  });
});
