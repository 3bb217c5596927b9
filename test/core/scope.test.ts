import { describe, it, expect } from "vitest";
import { Clock } from "../../src/core/clock.js";
import { Watchers } from "../../src/core/blocking.js";
import { Ids } from "../../src/core/ids.js";
import { scopedContext } from "../../src/core/scope.js";
import { Store, StoreError, type Commit } from "../../src/core/store.js";
import type { ServiceContext } from "../../src/core/context.js";

function world() {
  const store = new Store();
  const clock = new Clock({ startMs: 0 });
  const watchers = new Watchers(store, clock);
  const ctx: ServiceContext = { store, clock, ids: new Ids(1), watchers, events: { record: () => {} }, compatHeaders: true };
  return { store, clock, watchers, ctx, west: scopedContext(ctx, "scheduler@west") };
}

describe("Store scopes: a scope is a cluster of its own on the same store", () => {
  it("keeps its own index sequence, starting at 1, while the unscoped index moves on its own", () => {
    const { store, west } = world();
    store.write(() => store.table("jobs").put("a", { ID: "a" }));
    store.write(() => store.table("jobs").put("b", { ID: "b" }));
    expect(store.index).toBe(3);
    expect(west.store.index).toBe(1);
    const row = west.store.write(() => west.store.table("jobs").putIndexed("x", { ID: "x" }));
    expect(row).toMatchObject({ CreateIndex: 2, ModifyIndex: 2 });
    expect(west.store.index).toBe(2);
    expect(west.store.tableIndex("jobs")).toBe(2);
    expect(store.index).toBe(3);
    expect(store.tableIndex("jobs")).toBe(3);
    // The scope's rows are not the unscoped table's.
    expect(store.table("jobs").has("x")).toBe(false);
    expect(store.table("scheduler@west/jobs").get("x")).toMatchObject({ ID: "x" });
  });

  it("tells a scope's listeners only of its commits, with its own index and table names", () => {
    const { store, west } = world();
    const seen: Commit[] = [];
    west.store.onCommit((commit) => seen.push(commit));
    store.write(() => store.table("jobs").put("a", { ID: "a" }));
    west.store.write(() => west.store.table("jobs").put("x", { ID: "x" }));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.index).toBe(2);
    expect([...seen[0]!.tables]).toEqual(["jobs"]);
  });

  it("rolls a rejected write back in every scope it touched", () => {
    const { store, west } = world();
    expect(() =>
      store.write(() => {
        store.table("jobs").put("a", { ID: "a" });
        west.store.table("jobs").put("x", { ID: "x" });
        throw new Error("no");
      }),
    ).toThrow("no");
    expect(store.index).toBe(1);
    expect(west.store.index).toBe(1);
    expect(west.store.table("jobs").size).toBe(0);
    expect(store.version).toBe(0);
  });

  it("snapshots and restores every scope's index; a state without scopes has no `scopes` key", () => {
    const { store, west } = world();
    store.write(() => store.table("jobs").put("a", { ID: "a" }));
    expect(store.snapshot()).not.toHaveProperty("scopes");
    west.store.write(() => west.store.table("jobs").put("x", { ID: "x" }));
    west.store.write(() => west.store.table("jobs").put("y", { ID: "y" }));
    const snapshot = store.snapshot();
    expect(snapshot.scopes).toEqual({ "scheduler@west": 3 });
    const copy = new Store();
    copy.restore(structuredClone(snapshot));
    expect(copy.indexIn("scheduler@west")).toBe(3);
    expect(copy.scope("scheduler@west").tableIndex("jobs")).toBe(3);
    expect(copy.snapshot()).toEqual(snapshot);
    expect(() => copy.restore({ index: 1, tables: {}, scopes: { x: 0 } })).toThrow(StoreError);
  });

  it("refuses scope names that could not be told apart from table names", () => {
    const { store } = world();
    expect(() => store.scope("")).toThrow(StoreError);
    expect(() => store.scope("a/b")).toThrow(StoreError);
  });
});

describe("Scoped clock and watchers", () => {
  it("fires a scope's timers with the scope's handler, even when another scope handles the same kind", () => {
    const { ctx, store, clock, west } = world();
    const fired: string[] = [];
    ctx.clock.handle("ttl", (t) => fired.push(`global:${t.subject}`));
    west.clock.handle("ttl", (t) => fired.push(`west:${t.subject}`));
    store.write(() => {
      ctx.clock.schedule({ at: 10, kind: "ttl", subject: "a" });
      west.clock.schedule({ at: 20, kind: "ttl", subject: "b" });
    });
    expect(west.clock.timersFor("ttl", "b")).toHaveLength(1);
    expect(clock.timersFor("scheduler@west/ttl", "b")).toHaveLength(1);
    clock.advance(30);
    expect(fired).toEqual(["global:a", "west:b"]);
  });

  it("wakes a scope's parked query on a write to its table at its own index, not on the same table name elsewhere", async () => {
    const { store, west } = world();
    west.store.write(() => west.store.table("jobs").put("x", { ID: "x" })); // west index 2
    store.write(() => store.table("jobs").put("a", { ID: "a" })); // global index 2
    store.write(() => store.table("jobs").put("b", { ID: "b" })); // global index 3
    let woke: string | undefined;
    const parked = west.watchers.wait({ tables: ["jobs"], afterIndex: 2, realTimeoutMs: 5_000 }).then((r) => (woke = r));
    store.write(() => store.table("jobs").put("c", { ID: "c" })); // global 4 > 2, but not west's table
    await Promise.resolve();
    expect(woke).toBeUndefined();
    west.store.write(() => west.store.table("jobs").put("y", { ID: "y" })); // west index 3
    await parked;
    expect(woke).toBe("changed");
    expect(west.watchers.tablesIndex(["jobs"])).toBe(3);
  });
});
