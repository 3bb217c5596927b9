import { describe, it, expect } from "vitest";
import { SPEC_BLOCKING_LIMITS, Watchers, blockingTimeoutMs, runBlockingQuery, type WakeReason } from "../../src/core/blocking.js";
import { Clock, type WallTime } from "../../src/core/clock.js";
import { Ids } from "../../src/core/ids.js";
import { Store } from "../../src/core/store.js";

const START = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/** A wall clock whose timers fire only when the test says so. */
class FakeWall implements WallTime {
  readonly timers = new Map<number, { delay: number; fire: () => void }>();
  private nextHandle = 1;
  now(): number {
    return 0;
  }
  setTimer(fire: () => void, delayMs: number): unknown {
    const handle = this.nextHandle++;
    this.timers.set(handle, { delay: delayMs, fire });
    return handle;
  }
  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  fireAll(): void {
    for (const [handle, timer] of [...this.timers]) {
      this.timers.delete(handle);
      timer.fire();
    }
  }
}

function setup(): { store: Store; clock: Clock; watchers: Watchers; wall: FakeWall } {
  const store = new Store();
  const clock = new Clock({ startMs: START });
  const wall = new FakeWall();
  const watchers = new Watchers(store, clock, wall);
  return { store, clock, watchers, wall };
}

const PENDING = Symbol("pending");

/** The promise's outcome if it has settled by the time pending I/O callbacks run, else PENDING. */
function outcome<T>(promise: Promise<T>): Promise<T | typeof PENDING> {
  return Promise.race([promise, new Promise<typeof PENDING>((resolve) => setImmediate(() => resolve(PENDING)))]);
}

function put(store: Store, table: string, id: string): void {
  store.write(() => store.table(table).put(id, { ID: id }));
}

describe("Watchers.wait: immediate answers", () => {
  it("resolves 'changed' at once when a watched table is already past afterIndex, without parking", async () => {
    const { store, watchers } = setup();
    put(store, "jobs", "a"); // index 2
    const p = watchers.wait({ tables: ["evals", "jobs"], afterIndex: 1 });
    expect(watchers.parked).toBe(0);
    expect(await outcome(p)).toBe("changed");
  });

  it("parks when the watched tables are not past afterIndex", async () => {
    const { store, watchers } = setup();
    put(store, "jobs", "a"); // index 2
    const p = watchers.wait({ tables: ["jobs"], afterIndex: 2 });
    expect(watchers.parked).toBe(1);
    expect(await outcome(p)).toBe(PENDING);
  });

  it("resolves 'aborted' at once for an already aborted signal", async () => {
    const { watchers } = setup();
    const controller = new AbortController();
    controller.abort();
    expect(await watchers.wait({ tables: ["jobs"], afterIndex: 1, signal: controller.signal })).toBe("aborted");
    expect(watchers.parked).toBe(0);
  });

  it("resolves 'timeout' at once for a virtual deadline that has passed", async () => {
    const { clock, watchers } = setup();
    clock.advance("1s");
    expect(await watchers.wait({ tables: ["jobs"], afterIndex: 1, virtualDeadline: START + 1000 })).toBe("timeout");
    expect(watchers.parked).toBe(0);
  });
});

describe("Watchers.wait: wake-ups", () => {
  it("a write to a watched table wakes the waiter with 'changed'; a write to another table does not", async () => {
    const { store, watchers, wall } = setup();
    const p = watchers.wait({ tables: ["jobs", "allocs"], afterIndex: store.index, realTimeoutMs: 60_000 });
    expect(wall.timers.size).toBe(1);

    put(store, "nodes", "n1");
    expect(await outcome(p)).toBe(PENDING);
    expect(watchers.parked).toBe(1);

    put(store, "allocs", "x");
    expect(await outcome(p)).toBe("changed");
    expect(watchers.parked).toBe(0);
    // The real timer was cleared when the waiter settled.
    expect(wall.timers.size).toBe(0);
  });

  it("a write that takes no index does not wake", async () => {
    const { store, watchers } = setup();
    const p = watchers.wait({ tables: ["jobs"], afterIndex: store.index });
    store.write(() => store.table("jobs").delete("missing"));
    expect(await outcome(p)).toBe(PENDING);
  });

  it("resolves 'timeout' when the clock reaches the virtual deadline, and not before", async () => {
    const { clock, watchers } = setup();
    const p = watchers.wait({ tables: ["jobs"], afterIndex: 1, virtualDeadline: START + 5000 });
    clock.advance(4999);
    expect(await outcome(p)).toBe(PENDING);
    expect(watchers.parked).toBe(1);
    clock.advance(1);
    expect(await outcome(p)).toBe("timeout");
    expect(watchers.parked).toBe(0);
  });

  it("a waiter woken by a change no longer times out later", async () => {
    const { store, clock, watchers } = setup();
    const p = watchers.wait({ tables: ["jobs"], afterIndex: 1, virtualDeadline: START + 5000 });
    put(store, "jobs", "a");
    expect(await p).toBe("changed");
    clock.advance("10s");
    expect(watchers.parked).toBe(0);
  });

  it("resolves 'timeout' when the real timer (injected wall) fires", async () => {
    const { watchers, wall } = setup();
    const p = watchers.wait({ tables: ["jobs"], afterIndex: 1, realTimeoutMs: 30_000 });
    expect([...wall.timers.values()].map((t) => t.delay)).toEqual([30_000]);
    expect(await outcome(p)).toBe(PENDING);
    wall.fireAll();
    expect(await outcome(p)).toBe("timeout");
    expect(watchers.parked).toBe(0);
  });

  it("clamps a negative real timeout to 0", () => {
    const { watchers, wall } = setup();
    void watchers.wait({ tables: ["jobs"], afterIndex: 1, realTimeoutMs: -5 });
    expect([...wall.timers.values()].map((t) => t.delay)).toEqual([0]);
  });

  it("an abort resolves 'aborted' and unparks", async () => {
    const { watchers, wall } = setup();
    const controller = new AbortController();
    const p = watchers.wait({ tables: ["jobs"], afterIndex: 1, signal: controller.signal, realTimeoutMs: 1000 });
    expect(watchers.parked).toBe(1);
    controller.abort();
    expect(await outcome(p)).toBe("aborted");
    expect(watchers.parked).toBe(0);
    expect(wall.timers.size).toBe(0);
  });

  it("settles only once: a change after a timeout does not re-settle or unbalance the count", async () => {
    const { store, watchers, wall } = setup();
    const controller = new AbortController();
    const p = watchers.wait({ tables: ["jobs"], afterIndex: 1, signal: controller.signal, realTimeoutMs: 10 });
    const q = watchers.wait({ tables: ["jobs"], afterIndex: 1 });
    wall.fireAll();
    expect(await p).toBe("timeout");
    controller.abort();
    put(store, "jobs", "a");
    expect(await p).toBe("timeout");
    expect(await q).toBe("changed");
    expect(watchers.parked).toBe(0);
  });

  it.each<[string, (parts: { store: Store; clock: Clock }) => void]>([
    ["store.restore", ({ store }) => store.restore(store.snapshot())],
    ["clock.restore", ({ clock }) => clock.restore(clock.snapshot())],
  ])("%s wakes every waiter with 'replaced'", async (_label, restore) => {
    const parts = setup();
    const { watchers } = parts;
    const waits = [
      watchers.wait({ tables: ["jobs"], afterIndex: 1 }),
      watchers.wait({ tables: ["nodes", "jobs"], afterIndex: 100, virtualDeadline: START + 1000 }),
      watchers.wait({ tables: ["evals"], afterIndex: 1, realTimeoutMs: 1000 }),
    ];
    expect(watchers.parked).toBe(3);
    restore(parts);
    expect(await Promise.all(waits)).toEqual(["replaced", "replaced", "replaced"]);
    expect(watchers.parked).toBe(0);
    expect(parts.wall.timers.size).toBe(0);
  });

  it("one write wakes 10 000 parked waiters on one table", async () => {
    const { store, watchers } = setup();
    let woken = 0;
    const waits: Array<Promise<WakeReason>> = [];
    for (let i = 0; i < 10_000; i++) {
      waits.push(
        watchers.wait({ tables: ["jobs"], afterIndex: store.index }).then((reason) => {
          if (reason === "changed") woken++;
          return reason;
        }),
      );
    }
    const other = watchers.wait({ tables: ["nodes"], afterIndex: store.index });
    expect(watchers.parked).toBe(10_001);
    put(store, "jobs", "a");
    await Promise.all(waits);
    expect(woken).toBe(10_000);
    expect(watchers.parked).toBe(1);
    expect(await outcome(other)).toBe(PENDING);
  });
});

describe("blockingTimeoutMs", () => {
  const limits = SPEC_BLOCKING_LIMITS;

  it("uses the specification's figures", () => {
    expect(limits).toEqual({ defaultMs: 300_000, maxMs: 600_000 });
  });

  it.each<[string, number | undefined, number]>([
    ["absent", undefined, 300_000],
    ["zero", 0, 300_000],
    ["negative", -1000, 300_000],
    ["within limits", 60_000, 60_000],
    ["at the maximum", 600_000, 600_000],
    ["above the maximum", 3_600_000, 600_000],
  ])("%s wait → base %i plus jitter below base/16", (_label, requested, base) => {
    for (let seed = 0; seed < 50; seed++) {
      const ids = new Ids(seed);
      const reference = new Ids(seed);
      const timeout = blockingTimeoutMs(requested, limits, ids);
      expect(timeout).toBeGreaterThanOrEqual(base);
      expect(timeout).toBeLessThan(base + base / 16);
      // Exactly the base plus one jitter draw from the generator passed in.
      expect(timeout).toBe(base + reference.jitterMs(base / 16));
      expect(ids.state()).toEqual(reference.state());
    }
  });

  it("the jitter actually varies with the generator", () => {
    const values = new Set<number>();
    for (let seed = 0; seed < 50; seed++) values.add(blockingTimeoutMs(undefined, limits, new Ids(seed)));
    expect(values.size).toBeGreaterThan(40);
  });

  it("same seed, same result", () => {
    expect(blockingTimeoutMs(120_000, limits, new Ids(99))).toBe(blockingTimeoutMs(120_000, limits, new Ids(99)));
  });

  it("respects custom limits", () => {
    const custom = { defaultMs: 16_000, maxMs: 32_000 };
    const t1 = blockingTimeoutMs(undefined, custom, new Ids(1));
    expect(t1).toBeGreaterThanOrEqual(16_000);
    expect(t1).toBeLessThan(17_000);
    const t2 = blockingTimeoutMs(1_000_000, custom, new Ids(1));
    expect(t2).toBeGreaterThanOrEqual(32_000);
    expect(t2).toBeLessThan(34_000);
  });

  it("adds no jitter to waits under 16 ms", () => {
    const ids = new Ids(5);
    const before = ids.state();
    expect(blockingTimeoutMs(10, limits, ids)).toBe(10);
    expect(ids.state()).toEqual(before);
  });
});

describe("runBlockingQuery when the answer's index is not the table's", () => {
  // Regression: a query reporting an object's own index (not its table's) re-armed its wait at
  // that index after an unrelated write moved the table; the wait resolved at once, forever
  // (a microtask loop that even test timeouts could not interrupt).
  it("keeps waiting, without spinning, while unrelated rows change, and answers when its row does", async () => {
    const store = new Store();
    const clock = new Clock({ startMs: 0 });
    const watchers = new Watchers(store, clock);
    store.write(() => store.table("t").put("a", { v: 1 }));
    store.write(() => store.table("t").put("b", { v: 1 }));
    const rowIndex = () => (store.table("t").get("a") as { v: number; idx?: number })?.idx ?? 2;
    store.write(() => store.table("t").put("a", { v: 1, idx: store.writeIndex() }));
    const minIndex = rowIndex();
    let runs = 0;
    const answer = runBlockingQuery({
      watchers,
      clock,
      tables: ["t"],
      minIndex,
      timeoutMs: 60_000,
      run: () => {
        // A spinning loop would never yield to timers: fail it fast instead of hanging.
        if (++runs > 100) throw new Error("runBlockingQuery is spinning");
        return { index: rowIndex(), value: store.table("t").get("a") };
      },
    });
    answer.catch(() => undefined);
    for (let i = 0; i < 5; i++) store.write(() => store.table("t").put("b", { v: i }));
    await new Promise((r) => setImmediate(r));
    expect(runs).toBeLessThanOrEqual(7); // one run per wake-up, no spinning
    store.write(() => store.table("t").put("a", { v: 2, idx: store.writeIndex() }));
    const result = await answer;
    expect(result.index).toBeGreaterThan(minIndex);
    expect(result.value).toMatchObject({ v: 2 });
  });
});

describe("runBlockingQuery when the state is replaced", () => {
  // Regression (issue 31): a reset or restore lowers the index; the query re-parked until the new
  // state climbed past the old index or its wait ran out (up to 10 minutes), so a watcher kept the
  // old state. It answers at once now, with the new state's lower index.
  // The clock's restore leaves the rows: the query answers with them, at the index it already had.
  it.each<[string, (store: Store, clock: Clock) => void, { index: number; value: number } | "unchanged"]>([
    ["store.restore", (store) => store.restore({ index: 1, tables: {} }), { index: 1, value: 0 }],
    ["clock.restore", (_store, clock) => clock.restore(clock.snapshot()), "unchanged"],
  ])("%s answers a parked query at once with the new state and its index, however low", async (_label, replace, expected) => {
    const store = new Store();
    const clock = new Clock({ startMs: 0 });
    const watchers = new Watchers(store, clock, new FakeWall());
    for (let i = 0; i < 5; i++) put(store, "t", `row-${i}`);
    const before = store.tableIndex("t");
    let runs = 0;
    const answer = runBlockingQuery({
      watchers,
      clock,
      tables: ["t"],
      minIndex: before,
      timeoutMs: 600_000,
      run: () => {
        runs++;
        return { index: Math.max(1, store.tableIndex("t")), value: store.table("t").size };
      },
    });
    expect(await outcome(answer)).toBe(PENDING);
    expect(watchers.parked).toBe(1);
    replace(store, clock);
    const result = await answer;
    expect(watchers.parked).toBe(0);
    expect(runs).toBe(2);
    expect(result).toEqual(expected === "unchanged" ? { index: before, value: 5 } : expected);
  });
});
