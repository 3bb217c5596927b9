/**
 * What the registry reaps on the virtual clock, and what that costs.
 *
 * Consul reaps in one pass: the agent's reaper removes every service whose
 * check has been critical past its DeregisterCriticalServiceAfter, the
 * leader destroys every session whose TTL lapsed (releasing its keys and
 * starting their lock-delays), a lapsed TTL check invalidates the sessions
 * bound to it. Here each of those must cost what it touches: the tests
 * count the table rows read through full scans (Table.sorted / values / ids)
 * during the advance and hold them to a small multiple of the objects
 * reaped (the quadratic reaper read every check once per service removed).
 * No test measures time.
 *
 * Over long churn the growing structures stay bounded: ended lock-delays
 * and expired tombstones go, user events keep to the agent's ring of 256.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Standin } from "../../src/emulator.js";
import { getJSON, indexOf, put, req, standin } from "../support/registry-http.js";
import { countRowReads, rowsReadDuring } from "../support/row-reads.js";

afterEach(() => vi.restoreAllMocks());

/** The large cases make thousands of requests in process; on a loaded machine that can pass the default 20 s. */
const LARGE = 90_000;

const ok = async (emu: Standin, path: string, body?: unknown) => {
  const res = await put(emu, path, body ?? {});
  expect([res.status, path]).toEqual([200, path]);
  return res;
};

const tableSize = (emu: Standin, name: string) => emu.store.table(name).size;

describe("DeregisterCriticalServiceAfter: the reaper removes every expired service in one pass", () => {
  it(
    "reaps 400 services in one advance: all gone, in one write (each index moves once), reading O(N) rows",
    async () => {
      const reads = countRowReads();
      const emu = await standin();
      const n = 400;
      for (let i = 0; i < n; i++) {
        await ok(emu, "/v1/agent/service/register", { Name: "web", ID: `web-${i}`, Port: 1_000 + i, Check: { TTL: "10s", DeregisterCriticalServiceAfter: "1m" } });
      }
      emu.clock.advance("15s"); // every TTL lapses: critical
      const critical = await getJSON(emu, "/v1/health/state/critical");
      expect(critical.body).toHaveLength(n);
      const indexBefore = emu.store.index;

      let fired: ReturnType<typeof emu.clock.advance> = [];
      const rowsRead = await rowsReadDuring(reads, () => (fired = emu.clock.advance("2m")));

      const reaps = fired.filter((f) => f.kind === "registry.check-reap");
      const reaped = reaps.flatMap((f) => (f.detail as { reaped: string[] }).reaped);
      expect(reaped).toHaveLength(n);
      expect(new Set(reaped).size).toBe(n);
      expect((await getJSON(emu, "/v1/agent/services")).body).toEqual({});
      expect((await getJSON(emu, "/v1/agent/checks")).body).toEqual({});
      expect(tableSize(emu, "registry.agent-checks")).toBe(0);
      // One write removed them all: the index moved once, and the catalog's and the service's reads answer with it.
      expect(emu.store.index).toBe(indexBefore + 1);
      const services = await getJSON(emu, "/v1/catalog/services");
      expect(services.body).not.toHaveProperty("web");
      expect(indexOf(services.res)).toBe(indexBefore + 1);
      expect(indexOf(await req(emu, "/v1/health/service/web"))).toBe(indexBefore + 1);
      // Linear: each 30 s tick of the 2 m reads the reapable checks once (as Consul's reaper walks its critical
      // checks), and removing a service reads its own checks. The quadratic reaper read ~240,000 rows here (60× the bound).
      expect(rowsRead).toBeLessThanOrEqual(10 * n);
    },
    LARGE,
  );
});

describe("the reaper's ticks cost what is critical", () => {
  it(
    "a virtual day of 30 s ticks over 100 passing reapable services reads no rows, and a critical one is still reaped",
    async () => {
      const reads = countRowReads();
      const emu = await standin();
      const n = 100;
      for (let i = 0; i < n; i++) {
        await ok(emu, "/v1/agent/service/register", { Name: "web", ID: `web-${i}`, Check: { CheckID: `ttl-${i}`, TTL: "36h", DeregisterCriticalServiceAfter: "1m" } });
        await ok(emu, `/v1/agent/check/pass/ttl-${i}`);
      }
      let fired: ReturnType<typeof emu.clock.advance> = [];
      const rowsRead = await rowsReadDuring(reads, () => (fired = emu.clock.advance("24h")));
      expect(fired.filter((f) => f.kind === "registry.check-reap").length).toBe(2_880);
      // The old tick read every agent check: 2,880 × 100 = 288,000 rows.
      expect(rowsRead).toBeLessThanOrEqual(n);
      // One check failed by hand (an update, not a lapse) is reaped at the next ticks; the others stay.
      await ok(emu, "/v1/agent/check/fail/ttl-7");
      const later = emu.clock.advance("2m");
      expect(later.flatMap((f) => (f.kind === "registry.check-reap" ? (f.detail as { reaped: string[] }).reaped : []))).toEqual(["web-7"]);
      expect(Object.keys((await getJSON(emu, "/v1/agent/services")).body)).toHaveLength(n - 1);
    },
    LARGE,
  );
});

describe("registering costs what it touches", () => {
  it(
    "400 services through the catalog and 400 through the agent, each with a check, on one node, read O(N) rows",
    async () => {
      const reads = countRowReads();
      const emu = await standin();
      const n = 400;
      reads.counting = true;
      for (let i = 0; i < n; i++) {
        const res = await put(emu, "/v1/catalog/register", {
          Node: "n1",
          Address: "10.0.0.1",
          Service: { Service: "api", ID: `api-${i}`, Port: 2_000 + i },
          Check: { CheckID: `api-${i}`, ServiceID: `api-${i}`, Status: "passing" },
        });
        expect(res.status).toBe(200);
        await ok(emu, "/v1/agent/service/register", { Name: "web", ID: `web-${i}`, Port: 1_000 + i, Check: { TTL: "10s", DeregisterCriticalServiceAfter: "1m" } });
      }
      reads.counting = false;
      expect(tableSize(emu, "registry.services")).toBeGreaterThanOrEqual(2 * n);
      // Each registration used to read the node's every service (the ACL vetting) or every agent check
      // (arming the reaper): ~n² rows, 20× this bound at n = 400.
      expect(reads.rows).toBeLessThanOrEqual(10 * n);
    },
    LARGE,
  );
});

describe("session TTLs and the checks sessions are bound to: each expiry costs what it touches", () => {
  it(
    "300 TTL sessions holding keys expire in one advance: keys released, lock-delays set, O(N) rows read",
    async () => {
      const reads = countRowReads();
      const emu = await standin();
      const n = 300;
      for (let i = 0; i < n; i++) {
        const { ID } = JSON.parse((await ok(emu, "/v1/session/create", { TTL: "10s", LockDelay: "5s" })).text) as { ID: string };
        expect((await ok(emu, `/v1/kv/lock/${i}?acquire=${ID}`, "held")).text).toBe("true");
      }
      const rowsRead = await rowsReadDuring(reads, () => emu.clock.advance("21s"));
      expect(tableSize(emu, "registry.sessions")).toBe(0);
      const keys = (await getJSON(emu, "/v1/kv/lock/?recurse")).body as Array<{ Session?: string }>;
      expect(keys).toHaveLength(n);
      expect(keys.filter((k) => k.Session !== undefined)).toEqual([]);
      expect(tableSize(emu, "registry.lockdelay")).toBe(n);
      // Each destroy reads the keys its session holds; the old one read every key for each session (~n² rows, 60× this bound at n = 300).
      expect(rowsRead).toBeLessThanOrEqual(5 * n);
    },
    LARGE,
  );

  it(
    "300 TTL checks lapsing invalidate the 300 sessions bound to them, O(N) rows read",
    async () => {
      const reads = countRowReads();
      const emu = await standin();
      const n = 300;
      for (let i = 0; i < n; i++) {
        await ok(emu, "/v1/agent/check/register", { Name: `c${i}`, TTL: "10s", Status: "passing" });
        await ok(emu, "/v1/session/create", { Checks: ["serfHealth", `c${i}`] });
      }
      expect(tableSize(emu, "registry.sessions")).toBe(n);
      const rowsRead = await rowsReadDuring(reads, () => emu.clock.advance("11s"));
      expect(tableSize(emu, "registry.sessions")).toBe(0);
      expect((await getJSON(emu, "/v1/health/state/critical")).body).toHaveLength(n);
      // Each lapse reads the sessions bound to its check; the old one sorted every session each time (~n² rows, 60× this bound at n = 300).
      expect(rowsRead).toBeLessThanOrEqual(5 * n);
    },
    LARGE,
  );
});

describe("growing structures stay bounded over long churn", () => {
  it("ended lock-delays go at the next KV write once their 30 s bin is over, as Consul's timers forget them", async () => {
    const emu = await standin();
    const { ID } = JSON.parse((await ok(emu, "/v1/session/create", { LockDelay: "15s" })).text) as { ID: string };
    await ok(emu, `/v1/kv/k?acquire=${ID}`, "v");
    await ok(emu, `/v1/session/destroy/${ID}`);
    expect(tableSize(emu, "registry.lockdelay")).toBe(1);
    // Still in its delay: the key cannot be taken, and a write keeps the delay.
    const again = JSON.parse((await ok(emu, "/v1/session/create", {})).text) as { ID: string };
    expect((await ok(emu, `/v1/kv/k?acquire=${again.ID}`, "v")).text).toBe("false");
    await ok(emu, "/v1/kv/other", "x");
    expect(tableSize(emu, "registry.lockdelay")).toBe(1);
    // Ended (15 s): the key can be taken; the row waits for its bin (the start is on a 30 s boundary).
    emu.clock.advance("15s");
    expect((await ok(emu, `/v1/kv/k?acquire=${again.ID}`, "v")).text).toBe("true");
    expect(tableSize(emu, "registry.lockdelay")).toBe(1);
    emu.clock.advance("15s");
    await req(emu, "/v1/kv/other", { method: "DELETE" });
    expect(tableSize(emu, "registry.lockdelay")).toBe(0);
  });

  it("a restored snapshot reaps exactly as the run that made it (the reaping does not depend on when the last look was)", async () => {
    const emu = await standin();
    const release = async (key: string, lockDelay: string) => {
      const { ID } = JSON.parse((await ok(emu, "/v1/session/create", { LockDelay: lockDelay })).text) as { ID: string };
      await ok(emu, `/v1/kv/${key}?acquire=${ID}`, "v");
      await ok(emu, `/v1/session/destroy/${ID}`);
      emu.clock.advance("1s");
    };
    // Delays ending at 10 s, 61 s and 17 s; a write at 12 s finds the first ended.
    await release("a", "10s");
    await release("b", "60s");
    await release("c", "15s");
    emu.clock.advance("9s");
    await ok(emu, "/v1/kv/w", "1");
    const twin = await standin();
    twin.restore(structuredClone(emu.snapshot()));
    expect(twin.stateHash()).toBe(emu.stateHash());
    for (let i = 0; i < 30; i++) {
      for (const run of [emu, twin]) {
        run.clock.advance("3s");
        await ok(run, "/v1/kv/w", String(i));
      }
      expect(twin.stateHash(), `after ${12 + 3 * (i + 1)} s`).toBe(emu.stateHash());
    }
    expect(tableSize(emu, "registry.lockdelay")).toBe(0);
  });

  it(
    "two virtual hours of sessions, locks, deletes, events and service churn keep every registry table bounded",
    async () => {
      const emu = await standin();
      const baseline = { services: tableSize(emu, "registry.services"), checks: tableSize(emu, "registry.checks") };
      const stepSeconds = 14;
      const steps = 515; // 2 h of virtual time
      for (let i = 0; i < steps; i++) {
        const { ID } = JSON.parse((await ok(emu, "/v1/session/create", { LockDelay: "60s", TTL: "10s" })).text) as { ID: string };
        await ok(emu, `/v1/kv/churn/${i}?acquire=${ID}`, "v");
        if (i % 2 === 0) await ok(emu, `/v1/session/destroy/${ID}`); // the others lapse by TTL
        await req(emu, `/v1/kv/churn/${i - 1}`, { method: "DELETE" });
        await ok(emu, `/v1/event/fire/churn-${i % 5}`, "payload");
        await ok(emu, "/v1/agent/service/register", { Name: "churn", ID: `churn-${i}`, Check: { TTL: "5s", DeregisterCriticalServiceAfter: "1m" } });
        emu.clock.advance(`${stepSeconds}s`);
      }
      emu.clock.advance("5m"); // the last services' checks lapse and the reaper takes them
      await ok(emu, "/v1/kv/last", "x"); // one KV write after the last delays and tombstones ended
      expect(tableSize(emu, "registry.sessions")).toBe(0);
      expect(tableSize(emu, "registry.services")).toBe(baseline.services);
      expect(tableSize(emu, "registry.checks")).toBe(baseline.checks);
      expect(tableSize(emu, "registry.agent-checks")).toBe(0);
      expect(tableSize(emu, "registry.events")).toBeLessThanOrEqual(256);
      // Lock-delays end within 60 s and tombstones within 15 m (each looked for at most every 30 s): what is left
      // is what the last minutes made, not the 515 keys released and deleted in all.
      expect(tableSize(emu, "registry.lockdelay")).toBe(0);
      expect(tableSize(emu, "registry.kv-tombstones")).toBeLessThanOrEqual(Math.ceil((15 * 60 + 30) / stepSeconds) + 1);
      expect(tableSize(emu, "registry.kv-tombstones")).toBeGreaterThan(0);
    },
    LARGE,
  );
});

describe("KV prefix reads cost what they return", () => {
  it(
    "a recurse, keys or get-tree read of 10 keys among 5,000 reads about 10 rows, and a delete-tree removes only its prefix",
    async () => {
      const reads = countRowReads();
      const emu = await standin();
      const txn = (ops: unknown[]) => put(emu, "/v1/txn", ops);
      // Written in batches of 64 (a transaction's limit), in an order that is not the keys' order.
      const keys = Array.from({ length: 5_000 }, (_, i) => `app/${String((i * 7_919) % 5_000).padStart(4, "0")}`);
      for (let i = 0; i < keys.length; i += 64) {
        const res = await txn(keys.slice(i, i + 64).map((Key) => ({ KV: { Verb: "set", Key, Value: "dg==" } })));
        expect(res.status).toBe(200);
      }
      const wanted = Array.from({ length: 10 }, (_, i) => `app/412${i}`);
      // A first ordered read settles the order; later writes are noted, not re-sorted.
      expect((await getJSON(emu, "/v1/kv/app/412?keys")).body).toEqual(wanted);
      await ok(emu, "/v1/kv/app/4125", "x");
      await ok(emu, "/v1/kv/app/41255", "y");
      expect((await req(emu, "/v1/kv/app/4129", { method: "DELETE" })).status).toBe(200);
      const expected = [...wanted.slice(0, 6), "app/41255", ...wanted.slice(6, 9)];
      const rowsRead = await rowsReadDuring(reads, async () => {
        expect((await getJSON(emu, "/v1/kv/app/412?recurse")).body.map((e: { Key: string }) => e.Key)).toEqual(expected);
        expect((await getJSON(emu, "/v1/kv/app/412?keys")).body).toEqual(expected);
        const tree = await txn([{ KV: { Verb: "get-tree", Key: "app/412" } }]);
        expect(JSON.parse(tree.text).Results).toHaveLength(expected.length);
      });
      expect(rowsRead).toBeLessThanOrEqual(3 * expected.length + 10);
      expect((await req(emu, "/v1/kv/app/412?recurse", { method: "DELETE" })).status).toBe(200);
      expect((await req(emu, "/v1/kv/app/412?recurse")).status).toBe(404);
      expect(tableSize(emu, "registry.kv")).toBe(5_000 - 10);
      expect((await getJSON(emu, "/v1/kv/app/411?keys")).body).toHaveLength(10);
    },
    LARGE,
  );
});
