/**
 * Native service discovery through HTTP (reference §2): `provider = "nomad"`
 * services register with their allocation (group services from pending, task
 * services once running) at the allocation's host address and port, and
 * disappear when it stops (job stop, alloc stop, node down, failure); the
 * list, by-name (`choose`, `filter`, pagination), delete, job and allocation
 * reads; ACLs; blocking on the registrations table.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Json = Record<string, any>;

/** A web job whose group has a dynamic port "http", a group service "web" and a task service "api" (both nomad). */
function servicesJob(id: string, opts: { count?: number; namespace?: string; groupTags?: string[]; canaryTags?: string[]; provider?: string } = {}): Json {
  const job: Json = { ID: id, Type: "service", Datacenters: ["dc1"] };
  if (opts.namespace) job.Namespace = opts.namespace;
  job.TaskGroups = [
    {
      Name: "web",
      Count: opts.count ?? 1,
      Networks: [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }],
      Services: [{ Name: "web", PortLabel: "http", Provider: opts.provider ?? "nomad", Tags: opts.groupTags ?? ["front", "v1"], CanaryTags: opts.canaryTags }],
      Tasks: [
        {
          Name: "server",
          Driver: "docker",
          Config: { image: "nginx:1" },
          Resources: { CPU: 100, MemoryMB: 64 },
          Services: [{ Name: "api", PortLabel: "http", Provider: opts.provider ?? "nomad" }],
        },
      ],
    },
  ];
  return job;
}

async function register(emu: Standin, job: Json): Promise<void> {
  const res = await call(emu.scheduler, "PUT", `/v1/jobs${job.Namespace ? `?namespace=${job.Namespace}` : ""}`, { Job: job });
  expect(res.status, res.text).toBe(200);
}

async function allocsOf(emu: Standin, jobId: string, namespace = "default"): Promise<Json[]> {
  const stubs = (await call(emu.scheduler, "GET", `/v1/job/${jobId}/allocations?namespace=${namespace}`)).body as Json[];
  return Promise.all(stubs.map(async (s) => (await call(emu.scheduler, "GET", `/v1/allocation/${s.ID}?namespace=${namespace}`)).body));
}

const service = async (emu: Standin, name: string, query = "") => call(emu.scheduler, "GET", `/v1/service/${name}${query}`);

describe("registration follows the allocation", () => {
  it("group services appear while pending, task services once running, all at the allocated host port", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop"));
    emu.clock.advance("100ms"); // placed, pending
    const [pending] = await allocsOf(emu, "shop");
    expect(pending!.ClientStatus).toBe("pending");
    const port = pending!.AllocatedResources.Shared.Ports[0];
    expect((await service(emu, "web")).body).toHaveLength(1);
    expect((await service(emu, "api")).body).toEqual([]);

    emu.clock.advance("5s"); // running
    const node = (await call(emu.scheduler, "GET", "/v1/nodes")).body[0];
    const web = (await service(emu, "web")).body as Json[];
    expect(web).toEqual([
      {
        Address: port.HostIP,
        AllocID: pending!.ID,
        CreateIndex: web[0]!.CreateIndex,
        Datacenter: "dc1",
        ID: `_nomad-task-${pending!.ID}-group-web-web-http`,
        JobID: "shop",
        ModifyIndex: web[0]!.CreateIndex,
        Namespace: "default",
        NodeID: node.ID,
        Port: port.Value,
        ServiceName: "web",
        Tags: ["front", "v1"],
      },
    ]);
    expect(port.HostIP).toBe("127.0.0.1");
    const api = (await service(emu, "api")).body as Json[];
    expect(api.map((r) => [r.ID, r.Port, r.Tags])).toEqual([[`_nomad-task-${pending!.ID}-server-api-http`, port.Value, null]]);
    // Keys come sorted, as Nomad's encoder writes them.
    const text = (await service(emu, "api")).text;
    expect(text.indexOf('"Address"')).toBeLessThan(text.indexOf('"AllocID"'));

    const list = await call(emu.scheduler, "GET", "/v1/services");
    expect(list.body).toEqual([
      {
        Namespace: "default",
        Services: [
          { ServiceName: "api", Tags: [] },
          { ServiceName: "web", Tags: ["front", "v1"] },
        ],
      },
    ]);
    expect(Number(list.headers.get("X-Nomad-Index"))).toBe(api[0]!.CreateIndex);

    const byJob = await call(emu.scheduler, "GET", "/v1/job/shop/services");
    expect(byJob.body.map((r: Json) => r.ServiceName).sort()).toEqual(["api", "web"]);
    const byAlloc = await call(emu.scheduler, "GET", `/v1/allocation/${pending!.ID}/services`);
    expect(byAlloc.body.map((r: Json) => r.ServiceName).sort()).toEqual(["api", "web"]);
  });

  it("a static port, a numeric port and no port resolve as Nomad's host address mode does; alloc mode (no network status here) registers nothing", async () => {
    const emu = await createStandin();
    const job = servicesJob("ports");
    const group = job.TaskGroups[0];
    group.Networks = [{ Mode: "host", ReservedPorts: [{ Label: "admin", Value: 9090 }] }];
    group.Services = [
      { Name: "static", PortLabel: "admin", Provider: "nomad" },
      { Name: "numeric", PortLabel: "8443", Provider: "nomad" },
      { Name: "portless", Provider: "nomad" },
      { Name: "advertised", PortLabel: "admin", Address: "10.1.2.3", Provider: "nomad" },
      { Name: "alloc-mode", PortLabel: "admin", AddressMode: "alloc", Provider: "nomad" },
    ];
    group.Tasks[0].Services = null;
    await register(emu, job);
    emu.clock.advance("10s");
    const [alloc] = await allocsOf(emu, "ports");
    const rows = (await call(emu.scheduler, "GET", `/v1/allocation/${alloc!.ID}/services`)).body as Json[];
    expect(
      rows
        .map((r) => [
          r.ServiceName,
          r.Address,
          r.Port,
          r.ID.endsWith(`-group-web-${r.ServiceName}-${r.ServiceName === "numeric" ? "8443" : r.ServiceName === "portless" ? "" : "admin"}`),
        ])
        .sort(),
    ).toEqual([
      ["advertised", "10.1.2.3", 9090, true],
      ["numeric", "", 8443, true],
      ["portless", "127.0.0.1", 0, true],
      ["static", "127.0.0.1", 9090, true],
    ]);
  });

  it("consul services and jobs without services register nothing", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "n1", Attributes: { "consul.version": "1.17.0" } }] } } });
    await register(emu, servicesJob("c", { provider: "consul" }));
    emu.clock.advance("10s");
    expect((await allocsOf(emu, "c")).some((a) => a.ClientStatus === "running")).toBe(true);
    expect((await call(emu.scheduler, "GET", "/v1/services")).body).toEqual([]);
    expect((await call(emu.scheduler, "GET", "/v1/job/c/services")).body).toEqual([]);
  });

  it("stopping the job deregisters every instance", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop", { count: 2 }));
    emu.clock.advance("10s");
    expect((await service(emu, "web")).body).toHaveLength(2);
    const stop = await call(emu.scheduler, "DELETE", "/v1/job/shop");
    expect(stop.status).toBe(200);
    emu.clock.advance("1s");
    expect((await service(emu, "web")).body).toEqual([]);
    expect((await service(emu, "api")).body).toEqual([]);
    expect((await call(emu.scheduler, "GET", "/v1/services")).body).toEqual([]);
    // The job still exists (stopped): its services are an empty list, not a 404.
    expect((await call(emu.scheduler, "GET", "/v1/job/shop/services")).body).toEqual([]);
  });

  it("a stopped allocation's services go and its replacement's come", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop"));
    emu.clock.advance("10s");
    const [first] = await allocsOf(emu, "shop");
    const stop = await call(emu.scheduler, "PUT", `/v1/allocation/${first!.ID}/stop`);
    expect(stop.status, stop.text).toBe(200);
    expect((await call(emu.scheduler, "GET", `/v1/allocation/${first!.ID}/services`)).body).toEqual([]);
    emu.clock.advance("10s");
    const web = (await service(emu, "web")).body as Json[];
    expect(web).toHaveLength(1);
    expect(web[0]!.AllocID).not.toBe(first!.ID);
  });

  it("a failed allocation's services go, and so do those on a node that goes down", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "n2" }] } } });
    await register(emu, servicesJob("shop", { count: 2 }));
    emu.clock.advance("10s");
    const allocs = await allocsOf(emu, "shop");
    expect((await service(emu, "web")).body).toHaveLength(2);

    const fault = await call(emu.scheduler, "POST", "/_standin/actions", { do: "alloc-fail", alloc: allocs[0]!.ID });
    expect(fault.status, fault.text).toBeLessThan(300);
    expect((await service(emu, "web")).body.map((r: Json) => r.AllocID)).not.toContain(allocs[0]!.ID);

    const survivor = (await service(emu, "web")).body[0] as Json;
    const down = await call(emu.scheduler, "POST", "/_standin/actions", { do: "node-down", node: survivor.NodeID });
    expect(down.status, down.text).toBeLessThan(300);
    expect((await service(emu, "web")).body.map((r: Json) => r.NodeID)).not.toContain(survivor.NodeID);
  });

  it("canary_tags replace tags on a canary", async () => {
    const emu = await createStandin();
    const job = servicesJob("shop", { canaryTags: ["canary"] });
    await register(emu, job);
    emu.clock.advance("30s");
    job.TaskGroups[0].Update = { Canary: 1, MaxParallel: 1 };
    job.TaskGroups[0].Tasks[0].Config = { image: "nginx:2" };
    await register(emu, job);
    emu.clock.advance("10s");
    const tags = ((await service(emu, "web")).body as Json[]).map((r) => r.Tags);
    expect(tags).toContainEqual(["canary"]);
    expect(tags).toContainEqual(["front", "v1"]);
  });
});

describe("endpoints", () => {
  it("choose= picks by rendezvous hashing over md5(port, alloc, ID, namespace, address, name, tags, key)", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop", { count: 3 }));
    emu.clock.advance("10s");
    const all = (await service(emu, "web")).body as Json[];
    expect(all).toHaveLength(3);
    const hash = (r: Json, key: string) => {
      const port = Buffer.alloc(8);
      port.writeBigUInt64BE(BigInt(r.Port));
      const sum = createHash("md5").update(port);
      for (const part of [r.AllocID, r.ID, r.Namespace, r.Address, r.ServiceName, ...(r.Tags ?? []), key]) sum.update(part);
      return sum.digest("hex");
    };
    const expected = [...all].sort((a, b) => (hash(a, "me") < hash(b, "me") ? -1 : 1)).slice(0, 2);
    const chosen = await service(emu, "web", "?choose=2|me");
    expect(chosen.status).toBe(200);
    expect(chosen.body).toEqual(expected);
    expect((await service(emu, "web", "?choose=9|me")).body).toHaveLength(3);
    for (const bad of ["2", "x|me", "2|"]) {
      const res = await service(emu, "web", `?choose=${encodeURIComponent(bad)}`);
      expect([res.status, res.text]).toEqual([400, "failed to choose services: Parameter for choose must be in form '<number>|<key>'"]);
    }
  });

  it("filters and paginates a service's registrations by namespace and ID", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop", { count: 3 }));
    emu.clock.advance("10s");
    const all = (await service(emu, "web")).body as Json[];
    expect(all.map((r) => r.ID)).toEqual(all.map((r) => r.ID).sort());
    const first = await service(emu, "web", "?per_page=2");
    expect(first.body).toEqual(all.slice(0, 2));
    expect(first.headers.get("X-Nomad-NextToken")).toBe(`default.${all[2]!.ID}`);
    const rest = await service(emu, "web", `?per_page=2&next_token=${encodeURIComponent(`default.${all[2]!.ID}`)}`);
    expect(rest.body).toEqual(all.slice(2));
    const filtered = await service(emu, "web", `?filter=${encodeURIComponent(`AllocID == "${all[1]!.AllocID}"`)}`);
    expect(filtered.body).toEqual([all[1]]);
  });

  it("DELETE removes one registration by ID; an unknown ID is a 500", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop"));
    emu.clock.advance("10s");
    const [web] = (await service(emu, "web")).body as Json[];
    const del = await call(emu.scheduler, "DELETE", `/v1/service/anything/${web!.ID}`);
    expect([del.status, del.text]).toEqual([200, ""]);
    expect(Number(del.headers.get("X-Nomad-Index"))).toBeGreaterThan(web!.ModifyIndex);
    expect((await service(emu, "web")).body).toEqual([]);
    const again = await call(emu.scheduler, "DELETE", `/v1/service/web/${web!.ID}`);
    expect([again.status, again.text]).toEqual([500, "service registration not found"]);
    // The ID is looked up in the request's namespace only.
    const [api] = (await service(emu, "api")).body as Json[];
    const elsewhere = await call(emu.scheduler, "DELETE", `/v1/service/api/${api!.ID}?namespace=other`);
    expect([elsewhere.status, elsewhere.text]).toEqual([500, "service registration not found"]);
    expect((await service(emu, "api")).body).toHaveLength(1);
  });

  it("path and method errors are Nomad's", async () => {
    const emu = await createStandin();
    const cases: [string, string, number, string][] = [
      ["GET", "/v1/service/", 400, "missing service name"],
      ["DELETE", "/v1/service/web/", 400, "missing service id"],
      ["GET", "/v1/service/a/b/c", 400, "invalid URI"],
      ["PUT", "/v1/service/web", 405, "Invalid method"],
      ["GET", "/v1/service/web/id", 405, "Invalid method"],
      ["PUT", "/v1/services", 405, "Invalid method"],
      ["GET", "/v1/job/none/services", 404, "job not found"],
      ["GET", "/v1/allocation/00000000-0000-0000-0000-000000000000/services", 404, "allocation not found"],
    ];
    for (const [method, path, status, text] of cases) {
      const res = await call(emu.scheduler, method, path);
      expect([method, path, res.status, res.text]).toEqual([method, path, status, text]);
    }
    expect((await service(emu, "nothing")).body).toEqual([]);
  });

  it("namespaces: the list is per namespace, `*` gives every one, reads and the alloc read stay in theirs", async () => {
    const emu = await createStandin({ fixture: { scheduler: { namespaces: [{ Name: "prod" }] } } });
    await register(emu, servicesJob("a"));
    await register(emu, servicesJob("b", { namespace: "prod", groupTags: ["p"] }));
    emu.clock.advance("10s");
    expect((await call(emu.scheduler, "GET", "/v1/services?namespace=prod")).body).toEqual([
      {
        Namespace: "prod",
        Services: [
          { ServiceName: "api", Tags: [] },
          { ServiceName: "web", Tags: ["p"] },
        ],
      },
    ]);
    expect((await call(emu.scheduler, "GET", "/v1/services?namespace=*")).body.map((n: Json) => n.Namespace)).toEqual(["default", "prod"]);
    expect((await service(emu, "web", "?namespace=prod")).body.map((r: Json) => r.JobID)).toEqual(["b"]);
    const [prodAlloc] = await allocsOf(emu, "b", "prod");
    expect((await call(emu.scheduler, "GET", `/v1/allocation/${prodAlloc!.ID}/services`)).status).toBe(404);
    expect((await call(emu.scheduler, "GET", `/v1/allocation/${prodAlloc!.ID}/services?namespace=prod`)).body).toHaveLength(2);
  });

  it("a blocking read wakes when an instance registers", async () => {
    const emu = await createStandin();
    const empty = await service(emu, "web");
    const index = Number(empty.headers.get("X-Nomad-Index"));
    const parked = service(emu, "web", `?index=${index}&wait=5m`);
    await register(emu, servicesJob("shop"));
    emu.clock.advance("100ms");
    const woke = await parked;
    expect(woke.body).toHaveLength(1);
    expect(Number(woke.headers.get("X-Nomad-Index"))).toBeGreaterThan(index);
  });
});

describe("conditions and snapshots", () => {
  it("`await` a service's instance count", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop", { count: 3 }));
    const res = await call(emu.scheduler, "POST", "/_standin/await", { until: { "nomad-service": { service: "api", count: 3 } }, within: "1m" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.observed["nomad-service"].instances).toBe(3);
    expect((await service(emu, "api")).body).toHaveLength(3);
    await call(emu.scheduler, "DELETE", "/v1/job/shop");
    const gone = await call(emu.scheduler, "POST", "/_standin/await", { until: { "nomad-service": { service: "api", count: 0, exactly: true } }, within: "1m" });
    expect(gone.status, gone.text).toBe(200);
    const never = await call(emu.scheduler, "POST", "/_standin/await", { until: { "nomad-service": { service: "api" } }, within: "10s" });
    expect(never.status).toBe(408);
  });

  it("registrations are in snapshots and the state hash", async () => {
    const emu = await createStandin();
    await register(emu, servicesJob("shop"));
    emu.clock.advance("10s");
    const before = (await service(emu, "web")).body as Json[];
    const hash = emu.stateHash();
    const snap = await (await emu.scheduler.request("/_standin/snapshot")).text();
    expect((await call(emu.scheduler, "DELETE", `/v1/service/web/${before[0]!.ID}`)).status).toBe(200);
    expect(emu.stateHash()).not.toBe(hash);
    expect((await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: snap })).status).toBe(200);
    expect((await service(emu, "web")).body).toEqual(before);
  });
});

describe("ACLs", () => {
  it("reads want read-job, the delete submit-job, and `namespace=*` lists only readable namespaces", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          namespaces: [{ Name: "prod" }],
          acl: {
            enabled: true,
            policies: [
              { Name: "read-default", Rules: 'namespace "default" { capabilities = ["read-job"] }' },
              { Name: "write-default", Rules: 'namespace "default" { capabilities = ["submit-job", "read-job"] }' },
            ],
            tokens: [
              { SecretID: "11111111-1111-1111-1111-111111111111", Type: "management", Name: "root" },
              { SecretID: "22222222-2222-2222-2222-222222222222", Type: "client", Name: "reader", Policies: ["read-default"] },
              { SecretID: "33333333-3333-3333-3333-333333333333", Type: "client", Name: "writer", Policies: ["write-default"] },
            ],
          },
        },
      },
    });
    const as = (secret: string, method: string, path: string) => emu.scheduler.request(path, { method, headers: { "X-Nomad-Token": secret } });
    const root = "11111111-1111-1111-1111-111111111111";
    for (const [job, ns] of [
      ["a", "default"],
      ["b", "prod"],
    ]) {
      const body = servicesJob(job!, { namespace: ns });
      const res = await emu.scheduler.request(`/v1/jobs?namespace=${ns}`, { method: "PUT", headers: { "X-Nomad-Token": root }, body: JSON.stringify({ Job: body }) });
      expect(res.status).toBe(200);
    }
    emu.clock.advance("10s");
    const reader = "22222222-2222-2222-2222-222222222222";
    expect((await as(reader, "GET", "/v1/services")).status).toBe(200);
    expect((await as(reader, "GET", "/v1/services?namespace=prod")).status).toBe(403);
    expect((await as(reader, "GET", "/v1/service/web?namespace=prod")).status).toBe(403);
    const all = (await (await as(reader, "GET", "/v1/services?namespace=*")).json()) as Json[];
    expect(all.map((n) => n.Namespace)).toEqual(["default"]);
    const [web] = (await (await as(reader, "GET", "/v1/service/web")).json()) as Json[];
    expect((await as(reader, "DELETE", `/v1/service/web/${web!.ID}`)).status).toBe(403);
    expect((await as("33333333-3333-3333-3333-333333333333", "DELETE", `/v1/service/web/${web!.ID}`)).status).toBe(200);
  });
});
