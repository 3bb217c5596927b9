/**
 * Node pools through the HTTP surface (scheduler-breadth-nomad.md §7.1): the
 * built-ins, upserts with Nomad's validation texts, reads, deletes refused for
 * built-ins and pools in use, a pool's nodes and jobs, placement by pool,
 * fixtures, and the `node_pool` ACL blocks.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { call, callScheduler } from "../support/call.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

const req = callScheduler;

const fixture = {
  scheduler: {
    nodePools: [{ Name: "gpu", Description: "GPU nodes", Meta: { team: "ml" } }],
    nodes: [
      { Name: "gpu-1", NodePool: "gpu" },
      { Name: "edge-1", NodePool: "edge" },
    ],
  },
};

describe("node pools", () => {
  it("lists the built-ins at index 1, fixture pools and pools created by nodes, by name", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    const list = await req(emu, "GET", "/v1/node/pools");
    expect(list.status).toBe(200);
    expect(list.body.map((p: Json) => p.Name)).toEqual(["all", "default", "edge", "gpu"]);
    expect(list.body[0]).toEqual({
      CreateIndex: 1,
      Description: "Node pool with all nodes in the cluster.",
      Hash: null,
      Meta: null,
      ModifyIndex: 1,
      Name: "all",
      SchedulerConfiguration: null,
    });
    expect(list.body[1]).toMatchObject({ Name: "default", Description: "Default node pool.", CreateIndex: 1 });
    expect(list.body[2]).toMatchObject({ Name: "edge", Description: "", Meta: null, Hash: null });
    expect(list.body[3]).toMatchObject({ Name: "gpu", Description: "GPU nodes", Meta: { team: "ml" } });
    expect(typeof list.body[3].Hash).toBe("string");
    expect(Buffer.from(list.body[3].Hash, "base64")).toHaveLength(32);
    expect((await req(emu, "GET", "/v1/node/pools?prefix=d")).body.map((p: Json) => p.Name)).toEqual(["default"]);
    const page = await req(emu, "GET", "/v1/node/pools?per_page=2");
    expect(page.body.map((p: Json) => p.Name)).toEqual(["all", "default"]);
    expect(page.headers.get("X-Nomad-NextToken")).toBe("edge");
    expect((await req(emu, "GET", "/v1/node/pools?next_token=edge")).body.map((p: Json) => p.Name)).toEqual(["edge", "gpu"]);
    expect((await req(emu, "GET", `/v1/node/pools?filter=${encodeURIComponent('Meta.team == "ml"')}`)).body.map((p: Json) => p.Name)).toEqual(["gpu"]);
  });

  it("creates, updates and reads a pool; refuses bad names, long descriptions, built-ins and CE-only configuration", async () => {
    const emu = await createStandin();
    const created = await req(emu, "PUT", "/v1/node/pools", { Name: "batch", Description: "batch work" });
    expect(created.status).toBe(200);
    expect(created.text).toBe("");
    const index = Number(created.headers.get("X-Nomad-Index"));
    const read = await req(emu, "GET", "/v1/node/pool/batch");
    expect(read.body).toMatchObject({ Name: "batch", Description: "batch work", Meta: null, SchedulerConfiguration: null, CreateIndex: index, ModifyIndex: index });
    expect(read.headers.get("X-Nomad-Index")).toBe(String(index));
    const updated = await req(emu, "POST", "/v1/node/pool/batch", { Name: "batch", Meta: { a: "b" } });
    expect(updated.status).toBe(200);
    const again = (await req(emu, "GET", "/v1/node/pool/batch")).body;
    expect(again).toMatchObject({ Description: "", Meta: { a: "b" }, CreateIndex: index });
    expect(again.ModifyIndex).toBeGreaterThan(index);
    expect(again.Hash).not.toBe(read.body.Hash);

    expect(await req(emu, "GET", "/v1/node/pool/nope")).toMatchObject({ status: 404, text: "node pool not found" });
    expect(await req(emu, "PUT", "/v1/node/pool/batch", { Name: "other" })).toMatchObject({ status: 400, text: "Node pool name does not match request path" });
    expect(await req(emu, "PUT", "/v1/node/pools", { Name: "bad name" })).toMatchObject({
      status: 400,
      text: 'invalid node pool "bad name": 1 error occurred:\n\t* invalid name "bad name", must match regex ^[a-zA-Z0-9-_]{1,128}$\n\n',
    });
    expect(await req(emu, "PUT", "/v1/node/pools", { Name: "x!", Description: "d".repeat(257) })).toMatchObject({
      status: 400,
      text: 'invalid node pool "x!": 2 errors occurred:\n\t* invalid name "x!", must match regex ^[a-zA-Z0-9-_]{1,128}$\n\t* description longer than 256\n\n',
    });
    expect(await req(emu, "PUT", "/v1/node/pools", { Name: "default", Description: "mine" })).toMatchObject({ status: 400, text: 'modifying node pool "default" is not allowed' });
    expect(await req(emu, "PUT", "/v1/node/pools", { Name: "fast", SchedulerConfiguration: { SchedulerAlgorithm: "spread" } })).toMatchObject({
      status: 500,
      text: 'Feature "Node Pools Governance" is unlicensed',
    });
    expect(await req(emu, "PUT", "/v1/node/pools", "")).toMatchObject({ status: 400, text: "Request body is empty" });
    expect((await req(emu, "PATCH", "/v1/node/pool/batch")).status).toBe(405);
  });

  it("deletes an unused pool; refuses built-ins, missing pools and pools with nodes or live jobs", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    await req(emu, "PUT", "/v1/node/pools", { Name: "spare" });
    const deleted = await req(emu, "DELETE", "/v1/node/pool/spare");
    expect(deleted.status).toBe(200);
    expect(Number(deleted.headers.get("X-Nomad-Index"))).toBeGreaterThan(0);
    expect((await req(emu, "GET", "/v1/node/pool/spare")).status).toBe(404);
    expect(await req(emu, "DELETE", "/v1/node/pool/spare")).toMatchObject({ status: 500, text: "node pool spare not found" });
    expect(await req(emu, "DELETE", "/v1/node/pool/all")).toMatchObject({ status: 500, text: 'deleting node pool "all" is not allowed' });
    expect(await req(emu, "DELETE", "/v1/node/pool/default")).toMatchObject({ status: 500, text: '1 error occurred:\n\t* node pool "default" has nodes in regions: [global]\n\n' });

    await req(emu, "PUT", "/v1/node/pools", { Name: "empty" });
    const job = { ...webJob("queued"), NodePool: "empty" };
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
    expect(await req(emu, "DELETE", "/v1/node/pool/empty")).toMatchObject({
      status: 500,
      text: '1 error occurred:\n\t* node pool "empty" has non-terminal jobs in regions: [global]\n\n',
    });
  });

  it("lists a pool's nodes and jobs; places jobs only on their pool's nodes; refuses jobs in missing pools", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    const gpuNodes = await req(emu, "GET", "/v1/node/pool/gpu/nodes");
    expect(gpuNodes.body.map((n: Json) => n.Name)).toEqual(["gpu-1"]);
    expect(gpuNodes.body[0].NodePool).toBe("gpu");
    expect((await req(emu, "GET", "/v1/node/pool/all/nodes")).body).toHaveLength(3);
    expect((await req(emu, "GET", "/v1/node/pool/missing/nodes")).body).toEqual([]);
    expect(await req(emu, "GET", "/v1/node/pool/gpu/nodes?prefix=a")).toMatchObject({ status: 400, text: "prefix argument not allowed" });

    const job = { ...webJob("train", { count: 2 }), NodePool: "gpu" };
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
    emu.clock.advance("30s");
    const gpuId = gpuNodes.body[0].ID;
    const allocs = (await req(emu, "GET", "/v1/job/train/allocations")).body as Json[];
    expect(allocs.length).toBe(2);
    expect(allocs.every((a) => a.NodeID === gpuId)).toBe(true);

    const jobs = await req(emu, "GET", "/v1/node/pool/gpu/jobs");
    expect(jobs.body.map((j: Json) => j.ID)).toEqual(["train"]);
    expect(jobs.body[0]).toMatchObject({ NodePool: "gpu", JobSummary: expect.any(Object) });
    expect((await req(emu, "GET", "/v1/node/pool/default/jobs")).body).toEqual([]);
    expect(await req(emu, "GET", "/v1/node/pool/gpu/jobs?prefix=t")).toMatchObject({ status: 400, text: "prefix argument not allowed" });

    const stray = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: { ...webJob("stray"), NodePool: "nowhere" } });
    expect(stray).toMatchObject({ status: 500, text: 'job "stray" is in nonexistent node pool "nowhere"' });
  });

  it("keeps pools in snapshots: the same fixture gives the same answers", async () => {
    const a = await createStandin({ fixture: fixture as never });
    const b = await createStandin({ fixture: fixture as never });
    expect((await req(a, "GET", "/v1/node/pools")).text).toBe((await req(b, "GET", "/v1/node/pools")).text);
  });

  it("refuses a fixture that redefines a built-in pool", async () => {
    await expect(createStandin({ fixture: { scheduler: { nodePools: [{ Name: "all" }] } } as never })).rejects.toThrow(/modifying node pool "all" is not allowed/);
  });
});

describe("node pool ACLs", () => {
  const MGMT = "10000000-0000-0000-0000-000000000001";
  const READER = "10000000-0000-0000-0000-000000000002";
  const WRITER = "10000000-0000-0000-0000-000000000003";
  const aclFixture = {
    scheduler: {
      nodePools: [{ Name: "gpu" }, { Name: "gpu-big" }, { Name: "web" }],
      acl: {
        enabled: true,
        policies: [
          { Name: "pool-reader", Rules: 'node_pool "gpu*" { policy = "read" }\nnode { policy = "read" }' },
          { Name: "pool-writer", Rules: 'node_pool "web" { capabilities = ["write"] }' },
        ],
        tokens: [
          { SecretID: MGMT, Name: "root", Type: "management" },
          { SecretID: READER, Name: "r", Policies: ["pool-reader"] },
          { SecretID: WRITER, Name: "w", Policies: ["pool-writer"] },
        ],
      },
    },
  };

  it("filters the list, and checks read, write and delete per pool", async () => {
    const emu = await createStandin({ fixture: aclFixture as never });
    expect((await req(emu, "GET", "/v1/node/pools", undefined, READER)).body.map((p: Json) => p.Name)).toEqual(["gpu", "gpu-big"]);
    expect((await req(emu, "GET", "/v1/node/pools", undefined, MGMT)).body).toHaveLength(5);
    expect((await req(emu, "GET", "/v1/node/pool/gpu", undefined, READER)).status).toBe(200);
    expect(await req(emu, "GET", "/v1/node/pool/web", undefined, READER)).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await req(emu, "GET", "/v1/node/pool/gpu/nodes", undefined, READER)).status).toBe(200);
    expect((await req(emu, "GET", "/v1/node/pool/web/nodes", undefined, WRITER)).status).toBe(403);
    expect((await req(emu, "PUT", "/v1/node/pool/gpu", { Name: "gpu" }, READER)).status).toBe(403);
    expect((await req(emu, "PUT", "/v1/node/pool/web", { Name: "web", Description: "w" }, WRITER)).status).toBe(200);
    expect((await req(emu, "DELETE", "/v1/node/pool/web", undefined, WRITER)).status).toBe(403);
    expect((await req(emu, "DELETE", "/v1/node/pool/web", undefined, MGMT)).status).toBe(200);
  });

  it("refuses a node_pool block with an unknown capability", async () => {
    const emu = await createStandin({ fixture: aclFixture as never });
    const res = await req(emu, "PUT", "/v1/acl/policy/bad", { Name: "bad", Rules: 'node_pool "x" { capabilities = ["fly"] }' }, MGMT);
    expect(res.status).toBe(400);
    expect(res.text).toContain("Invalid node pool capability 'fly'");
  });
});
