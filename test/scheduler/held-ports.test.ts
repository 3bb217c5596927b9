/**
 * The ports live allocations hold, kept per node and IP as allocations are
 * placed and stop (src/scheduler/state/held-ports.ts). Placing each port-asking
 * allocation used to rebuild the node's used ports from its port-holding
 * allocations and walk up from the bottom of the dynamic range past every
 * held port: O(N²) for N placed on a node. The work test counts table rows
 * read (no timing); the others check that the index gives the answers the
 * rebuilt sets gave: ports freed are reused lowest first, collisions keep
 * allocations off, and a snapshot restore or a node's new reserved ports
 * are taken into account.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { NodePorts, reservedPortsOf } from "../../src/scheduler/state/held-ports.js";
import type { AllocRow } from "../../src/scheduler/state/model.js";
import { call } from "../support/call.js";
import { countRowReads, rowsReadDuring } from "../support/row-reads.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

afterEach(() => vi.restoreAllMocks());

const BIG = { CPU: 10_000_000, MemoryMB: 10_000_000 };
const dynamic = { Mode: "host", DynamicPorts: [{ Label: "http" }] };
const httpStatic = (value: number) => ({ Mode: "host", ReservedPorts: [{ Label: "http", Value: value }] });

function job(id: string, network: Json, count = 1): Json {
  const j = webJob(id, { count });
  j.TaskGroups[0].Networks = [network];
  return j;
}

async function ok(emu: Standin, method: string, path: string, body?: unknown): Promise<any> {
  const res = await call(emu.scheduler, method, path, body);
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(200);
  return res.body;
}

/** Registers the job and runs its evaluation; returns the evaluation. */
async function run(emu: Standin, body: Json): Promise<Json> {
  const registered = await ok(emu, "PUT", "/v1/jobs", { Job: body });
  emu.clock.advance("100ms");
  return ok(emu, "GET", `/v1/evaluation/${registered.EvalID}`);
}

/** The job's live allocations' port values, each allocation's joined, lowest first. */
async function portsOf(emu: Standin, jobId: string): Promise<number[]> {
  const stubs = (await ok(emu, "GET", `/v1/job/${jobId}/allocations`)) as Json[];
  const ports: number[] = [];
  for (const stub of stubs.filter((a) => a.DesiredStatus === "run")) {
    const alloc = await ok(emu, "GET", `/v1/allocation/${stub.ID}`);
    for (const p of alloc.AllocatedResources.Shared.Ports) ports.push(p.Value);
  }
  return ports.sort((a, b) => a - b);
}

/** One eligible node ("a"), so every allocation lands on it. */
async function oneNode(fixtureNode: Json = {}): Promise<Standin> {
  return createStandin({ fixture: { scheduler: { agentName: "a", nodes: [{ Name: "a", Resources: BIG, ...fixtureNode }] } } as never });
}

describe("placing port-asking allocations on one node reads O(N) rows", () => {
  async function rowsToPlace(n: number): Promise<number> {
    const reads = countRowReads();
    const emu = await oneNode();
    await ok(emu, "PUT", "/v1/jobs", { Job: job("web", dynamic, n) });
    const rows = await rowsReadDuring(reads, () => emu.clock.advance("1m"));
    // Every allocation placed, each on the next dynamic port.
    expect(await portsOf(emu, "web")).toEqual(Array.from({ length: n }, (_, i) => 20_000 + i));
    vi.restoreAllMocks();
    return rows;
  }

  it("twice the allocations read at most ~2.5× the rows", async () => {
    const small = await rowsToPlace(200);
    const large = await rowsToPlace(400);
    // Reading the node's port-holding allocations for each placement (twice: the fit, then the offer)
    // read 40,807 rows for 200 and 161,607 for 400 (×3.96); with the index, 1,007 and 2,007.
    expect(large / small).toBeLessThanOrEqual(2.5);
    expect(large).toBeLessThanOrEqual(10 * 400);
  }, 60_000);
});

describe("the lowest free dynamic port without walking the held ones", () => {
  const holder = (id: string, createIndex: number, values: number[]): AllocRow =>
    ({ ID: id, CreateIndex: createIndex, NodeID: "n", SharedPorts: values.map((Value) => ({ HostIP: "127.0.0.1", Label: "p", Value })) }) as never;

  it("with 12,000 ports held, finds the one freed among them looking at a handful of free candidates", () => {
    const ports = new NodePorts();
    for (let i = 0; i < 12_000; i++) ports.add(holder(`a${i}`, i, [20_000 + i]));
    ports.remove(holder("a7000", 7000, [27_000]));
    let candidates = 0;
    const skip = (port: number) => {
      candidates++;
      return port === 27_000; // the ask's own static port: the next free one after it
    };
    expect(ports.lowestFree("127.0.0.1", 20_000, 32_000, undefined, skip)).toBe(32_000);
    // The port-by-port walk asked about each of the 12,001 ports it passed.
    expect(candidates).toBe(2);
    expect(ports.lowestFree("127.0.0.1", 20_000, 31_999, undefined, skip)).toBeUndefined();
    expect(ports.lowestFree("127.0.0.1", 20_000, 32_000, undefined, () => false)).toBe(27_000);
    // Another address of the node holds nothing.
    expect(ports.lowestFree("::1", 20_000, 32_000, undefined, () => false)).toBe(20_000);
  });

  it("reserved ports are passed over as the held ones are; an odd range is walked and answers the same", () => {
    const ports = new NodePorts();
    ports.add(holder("a", 1, [20_000, 20_002]));
    const reserved = reservedPortsOf(new Set([20_001, 20_003]));
    expect(ports.lowestFree("127.0.0.1", 20_000, 32_000, reserved, () => false)).toBe(20_004);
    expect(ports.lowestFree("127.0.0.1", 20_000, 70_000, reserved, () => false)).toBe(20_004);
    expect(ports.lowestFree("127.0.0.1", 65_535, 65_537, reserved, () => false)).toBe(65_535);
  });

  it("a collision among held ports is found in AddAllocs' order: only a later holder that does not ignore collisions collides", () => {
    const strict = (id: string, createIndex: number): AllocRow =>
      ({ ID: id, CreateIndex: createIndex, NodeID: "n", SharedPorts: [{ HostIP: "127.0.0.1", Label: "dns", Value: 53 }] }) as never;
    const lenient = (id: string, createIndex: number): AllocRow =>
      ({ ID: id, CreateIndex: createIndex, NodeID: "n", SharedPorts: [{ HostIP: "127.0.0.1", IgnoreCollision: true, Label: "dns", Value: 53 }] }) as never;
    const none = () => undefined;
    const first = new NodePorts();
    first.add(strict("b", 5));
    first.add(lenient("c", 5));
    expect(first.collides(none)).toBe(false);
    const second = new NodePorts();
    second.add(strict("b", 5));
    second.add(lenient("a", 5)); // same index, lower ID: added first, so the strict one collides
    expect(second.collides(none)).toBe(true);
    second.remove(lenient("a", 5));
    expect(second.collides(none)).toBe(false);
    const reserved = reservedPortsOf(new Set([53]));
    expect(second.collides(() => reserved)).toBe(true);
    expect(first.collides((ip) => (ip === "::1" ? reserved : undefined))).toBe(false);

    // Many sharing the port: one strict holder first is fine; once it leaves, a strict one coming later collides.
    const shared = new NodePorts();
    shared.add(strict("a", 1));
    for (let i = 0; i < 5_000; i++) shared.add(lenient(`l${i}`, 2 + i));
    expect(shared.collides(none)).toBe(false);
    shared.remove(strict("a", 1));
    expect(shared.collides(none)).toBe(false);
    shared.add(strict("z", 9_000));
    expect(shared.collides(none)).toBe(true);
  });

  it("many reserved and many held ports: a held reserved one is found (word by word), one ignoring collisions is not", () => {
    const reserved = reservedPortsOf(new Set(Array.from({ length: 19_999 }, (_, i) => i + 1).concat(65_536)));
    const reservedAt = () => reserved;
    const ports = new NodePorts();
    for (let i = 0; i < 3_000; i++) ports.add(holder(`a${i}`, i, [20_000 + i]));
    expect(ports.collides(reservedAt)).toBe(false);
    const at = (value: number, ignore: boolean): AllocRow =>
      ({ ID: `x${value}`, CreateIndex: 9_999, NodeID: "n", SharedPorts: [{ HostIP: "127.0.0.1", IgnoreCollision: ignore, Label: "p", Value: value }] }) as never;
    ports.add(at(9_999, true));
    expect(ports.collides(reservedAt)).toBe(false);
    ports.add(at(12_345, false));
    expect(ports.collides(reservedAt)).toBe(true);
    ports.remove(at(12_345, false));
    ports.add(at(65_536, false));
    expect(ports.collides(reservedAt)).toBe(true);
  });
});

describe("held ports through the HTTP surface", () => {
  it("ports freed by stopped allocations are reused, lowest first, and held ones skipped", async () => {
    const emu = await oneNode();
    await run(emu, job("a", dynamic, 2));
    await run(emu, job("b", dynamic));
    expect(await portsOf(emu, "a")).toEqual([20_000, 20_001]);
    expect(await portsOf(emu, "b")).toEqual([20_002]);
    await ok(emu, "DELETE", "/v1/job/a");
    emu.clock.advance("1m");
    await run(emu, job("c", dynamic, 3));
    expect(await portsOf(emu, "c")).toEqual([20_000, 20_001, 20_003]);
    // One allocation stopped on its own frees its port too: the next placement takes it.
    const stubs = (await ok(emu, "GET", "/v1/job/c/allocations")) as Json[];
    const holding = await Promise.all(stubs.map((s) => ok(emu, "GET", `/v1/allocation/${s.ID}`)));
    const victim = holding.find((a) => a.AllocatedResources.Shared.Ports[0].Value === 20_001)!;
    await ok(emu, "POST", `/v1/allocation/${victim.ID}/stop`);
    emu.clock.advance("1m");
    // Its replacement takes the lowest free port, the one it let go.
    expect(await portsOf(emu, "c")).toEqual([20_000, 20_001, 20_003]);
    await run(emu, job("d", dynamic));
    expect(await portsOf(emu, "d")).toEqual([20_004]);
  });

  it("a static port held keeps a second allocation off the node, before and after a snapshot restore", async () => {
    const emu = await oneNode();
    const empty = await (await emu.scheduler.request("/_standin/snapshot")).text();
    await run(emu, job("web", httpStatic(8080)));
    await run(emu, job("dyn", dynamic));
    const held = await (await emu.scheduler.request("/_standin/snapshot")).text();
    const refused = await run(emu, job("other", httpStatic(8080)));
    expect(refused.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });

    // Back to before anything held a port: 8080 and 20000 are free again.
    expect((await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: empty })).status).toBe(200);
    const placed = await run(emu, job("other", httpStatic(8080)));
    expect(placed).not.toHaveProperty("FailedTGAllocs");
    await run(emu, job("dyn2", dynamic));
    expect(await portsOf(emu, "dyn2")).toEqual([20_000]);

    // Back to where web holds 8080 and dyn 20000: refused again, and the next dynamic port is 20001.
    expect((await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: held })).status).toBe(200);
    const again = await run(emu, job("other", httpStatic(8080)));
    expect(again.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: reserved port collision http=8080": 1 });
    await run(emu, job("dyn3", dynamic));
    expect(await portsOf(emu, "dyn3")).toEqual([20_001]);
  });

  it("a node that comes to reserve a port a live allocation holds takes no more placements (network: port collision)", async () => {
    const emu = await oneNode();
    await run(emu, job("web", httpStatic(8080)));
    // The node registers again, now reserving the port web holds (AddAllocs finds the collision).
    await ok(emu, "POST", "/_standin/fixtures", { scheduler: { nodes: [{ Name: "a", Resources: BIG, ReservedResources: { Networks: { ReservedHostPorts: "8080" } } }] } });
    // Even a group asking no port: the node's networks are checked before the ask.
    const refused = await run(emu, webJob("plain"));
    expect(refused.FailedTGAllocs.web.DimensionExhausted).toEqual({ "network: port collision": 1 });
    // Once web stops, the node takes allocations again.
    await ok(emu, "DELETE", "/v1/job/web");
    emu.clock.advance("1m");
    await run(emu, job("after", dynamic));
    expect(await portsOf(emu, "after")).toEqual([20_000]);
  });
});
