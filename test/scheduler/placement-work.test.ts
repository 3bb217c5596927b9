/**
 * What placing allocations costs: placement, drains and reschedules must be
 * linear in the allocations they place. Placing each allocation used to read
 * every live allocation on every candidate node (their CPU, memory and ports),
 * sort the job's allocations to find a migrated one to link, and list them
 * again for the job's status and the deployment's progress: O(N²) for N
 * placed (a count of 10,000 stalled every port for over a minute). The tests
 * count the table rows read through scans and index lookups during the one
 * advance that does the work, and hold them to a small multiple of N. No
 * test measures time.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { allocNamer } from "../../src/scheduler/engine/placement.js";
import { call } from "../support/call.js";
import { countRowReads, rowsReadDuring } from "../support/row-reads.js";

type Json = Record<string, any>;

afterEach(() => vi.restoreAllMocks());

/** Thousands of allocations placed in process; on a loaded machine that can pass the default 20 s. */
const LARGE = 120_000;
const BIG = { CPU: 10_000_000, MemoryMB: 10_000_000 };

function job(id: string, count: number, group: Json = {}): Json {
  return {
    ID: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Count: count, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }], ...group }],
  };
}

async function ok(emu: Standin, method: string, path: string, body?: unknown): Promise<any> {
  const res = await call(emu.scheduler, method, path, body);
  expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).toBe(200);
  return res.body;
}

async function nodeIds(emu: Standin): Promise<Record<string, string>> {
  return Object.fromEntries(((await ok(emu, "GET", "/v1/nodes")) as Json[]).map((n) => [n.Name, n.ID]));
}

const live = (allocs: Json[]) => allocs.filter((a) => a.DesiredStatus === "run" && ["pending", "running"].includes(a.ClientStatus));

describe("placement reads O(N) rows for N allocations placed", () => {
  it(
    "one job of count 500 over three nodes: all placed, running and healthy in one advance",
    async () => {
      const reads = countRowReads();
      const n = 500;
      const emu = await createStandin({ fixture: { scheduler: { nodes: ["a", "b", "c"].map((Name) => ({ Name, Resources: BIG })) } } as never });
      await ok(emu, "PUT", "/v1/jobs", { Job: job("web", n) });
      const rowsRead = await rowsReadDuring(reads, () => emu.clock.advance("1m"));
      const allocs = (await ok(emu, "GET", "/v1/job/web/allocations")) as Json[];
      expect(allocs.filter((a) => a.ClientStatus === "running")).toHaveLength(n);
      // Spread as the least-loaded rule spreads them (the small default node takes its share until full), each name once.
      const perNode = new Map<string, number>();
      for (const a of allocs) perNode.set(a.NodeID, (perNode.get(a.NodeID) ?? 0) + 1);
      const ids = await nodeIds(emu);
      expect(Math.abs(perNode.get(ids.a)! - perNode.get(ids.c)!)).toBeLessThanOrEqual(1);
      expect(new Set(allocs.map((a) => a.Name)).size).toBe(n);
      const deployment = await ok(emu, "GET", "/v1/job/web/deployment");
      expect(deployment).toMatchObject({ Status: "successful", TaskGroups: { g: { HealthyAllocs: n } } });
      // Each allocation is read a few times (placed, started, healthy, the job's allocations once per
      // evaluation). The quadratic placement read 12,681,006 rows at n = 2,000 (every live allocation on each node
      // for each placement, the job's allocations for each status and deployment check): ~790,000 here, 150× the bound.
      expect(rowsRead).toBeLessThanOrEqual(10 * n);
    },
    LARGE,
  );

  it(
    "a drain migrating 400 allocations at once: every one replaced on the spare node and linked both ways",
    async () => {
      const reads = countRowReads();
      const n = 400;
      const nodes = [
        { Name: "a", Resources: BIG },
        { Name: "spare", Resources: BIG, SchedulingEligibility: "ineligible" },
      ];
      const emu = await createStandin({ fixture: { scheduler: { nodes } } as never });
      const ids = await nodeIds(emu);
      // Everything on "a": the default node takes nothing.
      await ok(emu, "PUT", `/v1/node/${ids.standin}/eligibility`, { Eligibility: "ineligible" });
      await ok(emu, "PUT", "/v1/jobs", { Job: job("web", n, { Migrate: { MaxParallel: n, MinHealthyTime: 1_000_000_000 } }) });
      emu.clock.advance("1m");
      await ok(emu, "PUT", `/v1/node/${ids.spare}/eligibility`, { Eligibility: "eligible" });
      const rowsRead = await rowsReadDuring(reads, async () => {
        await ok(emu, "PUT", `/v1/node/${ids.a}/drain`, { DrainSpec: { Deadline: 3_600_000_000_000 } });
        emu.clock.advance("5s");
      });
      const allocs = (await ok(emu, "GET", "/v1/job/web/allocations")) as Json[];
      const moved = live(allocs);
      expect(moved).toHaveLength(n);
      expect(moved.every((a) => a.NodeID === ids.spare)).toBe(true);
      const first = await ok(emu, "GET", `/v1/allocation/${moved[0].ID}`);
      const previous = await ok(emu, "GET", `/v1/allocation/${first.PreviousAllocation}`);
      expect(previous).toMatchObject({ NodeID: ids.a, NextAllocation: first.ID, DesiredTransition: { Migrate: true } });
      // The quadratic drain read 5,643,757 rows at n = 1,500 (~400,000 here, 60× the bound): the job's allocations (sorted) to link each replacement,
      // then every migrated allocation again to find the oldest.
      expect(rowsRead).toBeLessThanOrEqual(16 * n);
    },
    LARGE,
  );

  it(
    "300 failed allocations (of 300 jobs) rescheduled in one advance",
    async () => {
      const reads = countRowReads();
      const n = 300;
      const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "a", Resources: BIG }] } } as never });
      const policy = { Attempts: 0, Unlimited: true, Delay: 5_000_000_000, DelayFunction: "constant", Interval: 0 };
      const jobs = Array.from({ length: n }, (_, i) => job(`web-${i}`, 1, { ReschedulePolicy: policy }));
      await ok(emu, "POST", "/_standin/fixtures", { scheduler: { jobs } });
      emu.clock.advance("1m");
      for (let i = 0; i < n; i++) {
        const [alloc] = (await ok(emu, "GET", `/v1/job/web-${i}/allocations`)) as Json[];
        await ok(emu, "POST", "/_standin/actions", { do: "alloc-fail", alloc: alloc!.ID });
      }
      const rowsRead = await rowsReadDuring(reads, () => emu.clock.advance("1m"));
      for (const i of [0, n - 1]) {
        const allocs = (await ok(emu, "GET", `/v1/job/web-${i}/allocations`)) as Json[];
        expect(live(allocs)).toHaveLength(1);
        expect(live(allocs)[0]).toMatchObject({ ClientStatus: "running", RescheduleTracker: { Events: [{ Delay: 5_000_000_000 }] } });
      }
      // Each job's status read its allocations and evaluations (sorted) at each change: 1,021,001 rows at n = 1,000
      // before (~n²: ~90,000 here, 15× the bound).
      expect(rowsRead).toBeLessThanOrEqual(20 * n);
    },
    LARGE,
  );
});

describe("allocation names", () => {
  it("naming N placements checks O(N) names, each the lowest free index", () => {
    const used = new Set(["j.g[0]", "j.g[2]", "j.g[3]"]);
    let checks = 0;
    const counted = {
      has: (name: string) => {
        checks++;
        return used.has(name);
      },
    } as ReadonlySet<string>;
    const next = allocNamer("j", "g", counted);
    const names: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      const name = next();
      used.add(name);
      names.push(name);
    }
    expect(names.slice(0, 3)).toEqual(["j.g[1]", "j.g[4]", "j.g[5]"]);
    expect(names.at(-1)).toBe("j.g[1002]");
    // The search started again from [0] for each name: ~500,000 checks.
    expect(checks).toBeLessThanOrEqual(2 * 1_000 + 3);
  });
});
