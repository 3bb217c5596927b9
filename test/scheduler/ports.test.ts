/**
 * Jobs with group networks through HTTP: nodes carry a dev agent's networks
 * (or a fixture's), static and dynamic ports are placed deterministically,
 * collisions and exhaustion fail placement with Nomad's dimension texts, and
 * allocations report AllocatedResources.Shared.Ports/Networks.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

function job(id: string, network: Json | null, opts: { count?: number; type?: string } = {}): Json {
  const j = webJob(id, opts);
  if (network) j.TaskGroups[0].Networks = [network];
  return j;
}

async function run(emu: Standin, body: Json): Promise<Json> {
  const res = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: body });
  expect(res.status, res.text).toBe(200);
  emu.clock.advance("100ms");
  return (await call(emu.scheduler, "GET", `/v1/evaluation/${res.body.EvalID}`)).body;
}

async function allocsOf(emu: Standin, jobId: string): Promise<Json[]> {
  const stubs = (await call(emu.scheduler, "GET", `/v1/job/${jobId}/allocations`)).body as Json[];
  return Promise.all(stubs.map(async (s) => (await call(emu.scheduler, "GET", `/v1/allocation/${s.ID}`)).body));
}

async function nodeIds(emu: Standin): Promise<Record<string, string>> {
  const nodes = (await call(emu.scheduler, "GET", "/v1/nodes")).body as Json[];
  return Object.fromEntries(nodes.map((n) => [n.Name, n.ID]));
}

const httpStatic = (value: number) => ({ Mode: "host", ReservedPorts: [{ Label: "http", Value: value }] });

describe("node networks", () => {
  it("the default node has a dev agent's loopback networks, dynamic range and no reserved ports", async () => {
    const emu = await createStandin();
    const [stub] = (await call(emu.scheduler, "GET", "/v1/nodes")).body as Json[];
    expect(stub).not.toHaveProperty("NodeResources"); // only with ?resources=true in Nomad
    const node = (await call(emu.scheduler, "GET", `/v1/node/${stub!.ID}`)).body as Json;
    expect(node.NodeResources.Networks).toEqual([
      { CIDR: "127.0.0.1/32", Device: "lo", IP: "127.0.0.1", MBits: 1000, Mode: "host" },
      { CIDR: "::1/128", Device: "lo", IP: "::1", MBits: 1000, Mode: "host" },
    ]);
    expect(node.NodeResources.NodeNetworks).toEqual([
      {
        Addresses: [
          { Address: "127.0.0.1", Alias: "default", Family: "ipv4", Gateway: "", ReservedPorts: "" },
          { Address: "::1", Alias: "default", Family: "ipv6", Gateway: "", ReservedPorts: "" },
        ],
        Device: "lo",
        MacAddress: "",
        Mode: "host",
        Speed: 1000,
      },
    ]);
    expect(node.NodeResources).toMatchObject({ MinDynamicPort: 20000, MaxDynamicPort: 32000 });
    expect(node.ReservedResources.Networks).toEqual({ ReservedHostPorts: "" });

    // The list shows them with ?resources=true, as NodeStubFields.Resources does.
    const [withResources] = (await call(emu.scheduler, "GET", "/v1/nodes?resources=true")).body as Json[];
    expect(withResources.NodeResources).toEqual(node.NodeResources);
    expect(withResources.ReservedResources).toEqual(node.ReservedResources);
    expect((await call(emu.scheduler, "GET", "/v1/nodes?resources=false")).body[0]).not.toHaveProperty("NodeResources");
    expect((await call(emu.scheduler, "GET", "/v1/nodes?resources=maybe")).status).toBe(500);
  });

  it("a fixture describes a node's networks, range and reserved ports the Nomad way", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          nodes: [
            {
              Name: "edge",
              HTTPAddr: "10.0.0.5:4646",
              NodeResources: {
                NodeNetworks: [{ Device: "eth0", Mode: "host", Addresses: [{ Address: "10.0.0.5", Alias: "public", ReservedPorts: "8000-8001" }] }],
                MinDynamicPort: 30000,
                MaxDynamicPort: 30002,
              },
              ReservedResources: { Networks: { ReservedHostPorts: "22" } },
            },
          ],
        },
      },
    });
    const node = (await call(emu.scheduler, "GET", `/v1/node/${(await nodeIds(emu)).edge}`)).body as Json;
    expect(node.NodeResources.NodeNetworks).toEqual([
      { Addresses: [{ Address: "10.0.0.5", Alias: "public", Family: "ipv4", Gateway: "", ReservedPorts: "8000-8001" }], Device: "eth0", MacAddress: "", Mode: "host", Speed: 1000 },
    ]);
    expect(node.NodeResources.Networks).toEqual([{ CIDR: "10.0.0.5/32", Device: "eth0", IP: "10.0.0.5", MBits: 1000, Mode: "host" }]);
    expect(node.NodeResources).toMatchObject({ MinDynamicPort: 30000, MaxDynamicPort: 30002 });
    expect(node.ReservedResources.Networks).toEqual({ ReservedHostPorts: "22" });
  });

  it("a fixture with unparseable reserved ports is refused", async () => {
    await expect(createStandin({ fixture: { scheduler: { nodes: [{ Name: "bad", ReservedResources: { Networks: { ReservedHostPorts: "22,abc" } } }] } } })).rejects.toThrow(
      /ReservedHostPorts|port ranges/,
    );
  });
});

describe("placing group network ports", () => {
  it("a job with a static and a dynamic port is placed; the allocation reports Shared.Ports and Networks", async () => {
    const emu = await createStandin();
    const evaluation = await run(
      emu,
      job("web", { Mode: "host", ReservedPorts: [{ Label: "http", Value: 8080 }], DynamicPorts: [{ Label: "admin" }, { Label: "metrics", To: -1 }] }),
    );
    expect(evaluation.Status).toBe("complete");
    expect(evaluation).not.toHaveProperty("FailedTGAllocs");
    const [alloc] = await allocsOf(emu, "web");
    expect(alloc!.AllocatedResources.Shared.Ports).toEqual([
      { HostIP: "127.0.0.1", Label: "http", Value: 8080 },
      { HostIP: "127.0.0.1", Label: "admin", Value: 20000 },
      { HostIP: "127.0.0.1", Label: "metrics", To: 20001, Value: 20001 },
    ]);
    expect(alloc!.AllocatedResources.Shared.Networks).toEqual([
      {
        Mode: "host",
        IP: "127.0.0.1",
        ReservedPorts: [{ HostNetwork: "default", Label: "http", Value: 8080 }],
        DynamicPorts: [
          { HostNetwork: "default", Label: "admin", Value: 20000 },
          { HostNetwork: "default", Label: "metrics", To: 20001, Value: 20001 },
        ],
      },
    ]);
    expect(alloc!.AllocatedResources.Shared.DiskMB).toBe(300);
  });

  it("dynamic ports go to the lowest free port: a second allocation does not reuse the first one's", async () => {
    const emu = await createStandin();
    await run(emu, job("web", { DynamicPorts: [{ Label: "http" }] }, { count: 3 }));
    const ports = (await allocsOf(emu, "web")).map((a) => a.AllocatedResources.Shared.Ports[0].Value).sort();
    expect(ports).toEqual([20000, 20001, 20002]);
  });

  it("a static port taken on the only node fails the second allocation with the reserved port collision dimension", async () => {
    const emu = await createStandin();
    const evaluation = await run(emu, job("web", httpStatic(8080), { count: 2 }));
    expect((await allocsOf(emu, "web")).length).toBe(1);
    expect(evaluation.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });
    expect(evaluation.FailedTGAllocs.web.NodesExhausted).toBe(1);
    expect(evaluation.QueuedAllocations).toEqual({ web: 1 });
    expect(evaluation.BlockedEval).toBeTruthy();
    // Another job asking the same port on that node is refused the same way.
    const other = await run(emu, job("other", httpStatic(8080)));
    expect(other.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });
  });

  it("a colliding static port sends the allocation to another node", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "second" }] } } });
    const evaluation = await run(emu, job("web", httpStatic(8080), { count: 2 }));
    expect(evaluation).not.toHaveProperty("FailedTGAllocs");
    const allocs = await allocsOf(emu, "web");
    expect(new Set(allocs.map((a) => a.NodeID)).size).toBe(2);
  });

  it("a port the node reserves (node-wide or on the address) is never given out", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          agentName: "dev",
          nodes: [
            {
              Name: "dev",
              NodeResources: { NodeNetworks: [{ Device: "lo", Mode: "host", Addresses: [{ Address: "127.0.0.1", Alias: "default", ReservedPorts: "20001" }] }] },
              ReservedResources: { Networks: { ReservedHostPorts: "20000,9090" } },
            },
          ],
        },
      },
    });
    const failed = await run(emu, job("static", httpStatic(9090)));
    expect(failed.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=9090": 1 });
    await run(emu, job("dynamic", { DynamicPorts: [{ Label: "http" }] }));
    const [alloc] = await allocsOf(emu, "dynamic");
    expect(alloc!.AllocatedResources.Shared.Ports).toEqual([{ HostIP: "127.0.0.1", Label: "http", Value: 20002 }]);
  });

  it("an exhausted dynamic range moves on to the host network's next address, then fails with dynamic port selection failed", async () => {
    // The dev node's `default` network has 127.0.0.1 and ::1: Nomad tries each address for a dynamic port.
    const emu = await createStandin({ fixture: { scheduler: { agentName: "dev", nodes: [{ Name: "dev", NodeResources: { MinDynamicPort: 25000, MaxDynamicPort: 25001 } }] } } });
    const evaluation = await run(emu, job("web", { DynamicPorts: [{ Label: "a" }, { Label: "b" }] }, { count: 3 }));
    const placed = (await allocsOf(emu, "web")).map((a) => a.AllocatedResources.Shared.Ports.map((p: Json) => `${p.HostIP}:${p.Value}`));
    expect(placed).toEqual([
      ["127.0.0.1:25000", "127.0.0.1:25001"],
      ["::1:25000", "::1:25001"],
    ]);
    expect(evaluation.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: dynamic port selection failed": 1 });
  });

  it("a stopped job frees its ports", async () => {
    const single = { NodeNetworks: [{ Device: "lo", Mode: "host", Addresses: [{ Address: "127.0.0.1" }] }], MinDynamicPort: 25000, MaxDynamicPort: 25001 };
    const emu = await createStandin({ fixture: { scheduler: { agentName: "dev", nodes: [{ Name: "dev", NodeResources: single }] } } });
    const evaluation = await run(emu, job("web", { DynamicPorts: [{ Label: "a" }, { Label: "b" }] }, { count: 2 }));
    expect((await allocsOf(emu, "web")).map((a) => a.AllocatedResources.Shared.Ports.map((p: Json) => p.Value))).toEqual([[25000, 25001]]);
    expect(evaluation.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: dynamic port selection failed": 1 });

    const stopped = await call(emu.scheduler, "DELETE", "/v1/job/web");
    expect(stopped.status).toBe(200);
    emu.clock.advance("1m");
    await run(emu, job("next", { DynamicPorts: [{ Label: "a" }] }));
    const [alloc] = await allocsOf(emu, "next");
    expect(alloc!.AllocatedResources.Shared.Ports).toEqual([{ HostIP: "127.0.0.1", Label: "a", Value: 25000 }]);
  });

  it("a port on a host network the node lacks fails with no addresses available", async () => {
    const emu = await createStandin();
    const evaluation = await run(emu, job("web", { ReservedPorts: [{ Label: "http", Value: 80, HostNetwork: "public" }] }));
    expect(evaluation.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: no addresses available for public network": 1 });
  });

  it("a fixture host network alias places ports on its address, with the group's IP from the first host network", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: {
          agentName: "dev",
          nodes: [
            {
              Name: "dev",
              NodeResources: {
                NodeNetworks: [
                  { Device: "lo", Mode: "host", Addresses: [{ Address: "127.0.0.1", Alias: "default" }] },
                  { Device: "eth0", Mode: "host", Addresses: [{ Address: "10.1.2.3", Alias: "public" }] },
                ],
              },
            },
          ],
        },
      },
    });
    await run(emu, job("web", { Mode: "bridge", ReservedPorts: [{ Label: "http", Value: 80, To: 8080, HostNetwork: "public" }] }));
    const [alloc] = await allocsOf(emu, "web");
    expect(alloc!.AllocatedResources.Shared.Ports).toEqual([{ HostIP: "10.1.2.3", Label: "http", To: 8080, Value: 80 }]);
    expect(alloc!.AllocatedResources.Shared.Networks[0]).toMatchObject({ Mode: "bridge", IP: "127.0.0.1" });
  });

  it("a job without a network is unaffected (no Ports or Networks in Shared)", async () => {
    const emu = await createStandin();
    await run(emu, job("plain", null));
    const [alloc] = await allocsOf(emu, "plain");
    expect(alloc!.AllocatedResources.Shared).toEqual({ DiskMB: 300 });
  });

  it("system jobs place one allocation per node whose port is free, and report the others", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "second", ReservedResources: { Networks: { ReservedHostPorts: "8080" } } }] } } });
    const evaluation = await run(emu, job("sys", httpStatic(8080), { type: "system" }));
    expect((await allocsOf(emu, "sys")).length).toBe(1);
    expect(evaluation.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });
    expect(evaluation.FailedTGAllocs.web.NodesExhausted).toBe(1); // the one node that refused, not both
  });
});

describe("ignore_collision", () => {
  it("a static port with IgnoreCollision is placed beside another allocation holding it", async () => {
    const emu = await createStandin();
    const shared = { Mode: "host", ReservedPorts: [{ Label: "dns", Value: 53, IgnoreCollision: true }] };
    const evaluation = await run(emu, job("dns", shared, { count: 2 }));
    expect(evaluation).not.toHaveProperty("FailedTGAllocs");
    const allocs = await allocsOf(emu, "dns");
    expect(allocs.map((a) => a.AllocatedResources.Shared.Ports)).toEqual([
      [{ HostIP: "127.0.0.1", IgnoreCollision: true, Label: "dns", Value: 53 }],
      [{ HostIP: "127.0.0.1", IgnoreCollision: true, Label: "dns", Value: 53 }],
    ]);
    // A port that does not ignore collisions is still refused there.
    const strict = await run(emu, job("strict", httpStatic(53)));
    expect(strict.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=53": 1 });
  });
});
