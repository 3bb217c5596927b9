/**
 * Store.writeStaged and Store.restoreStaged: a write (or restore) built a
 * slice at a time on copies of the tables it changes, swapped in at the
 * end. Between slices readers see the state before it and other writes are
 * refused; it commits once, or changes nothing.
 */
import { describe, expect, it } from "vitest";
import { Store, StoreError, type Commit, type Row } from "../../src/core/store.js";

type Item = { ID: string; Group: string; Size: number };

/** A store with `count` items in two groups, and a secondary index, running sums and a watcher's count on the table. */
function seeded(count: number) {
  const store = new Store();
  const items = store.table<Item & Row>("items");
  const byGroup = items.groupBy((row) => row.Group);
  const sizes = items.sumBy(
    (row) => row.Group,
    (row) => [row.Size],
  );
  const watched = { rows: 0 };
  items.watch((_id, row, previous) => (watched.rows += (row ? 1 : 0) - (previous ? 1 : 0)));
  store.write(() => {
    for (let i = 0; i < count; i++) items.put(`old-${i}`, { ID: `old-${i}`, Group: i % 2 ? "odd" : "even", Size: 1 });
  });
  // Built before the staged write, so the copies must not share them.
  expect(byGroup.count("even")).toBe(Math.ceil(count / 2));
  expect(items.withPrefix("old-").length).toBe(count);
  return { store, items, byGroup, sizes, watched };
}

function* adding(store: Store, from: number, count: number, failAt?: number): Generator<void> {
  for (let i = from; i < from + count; i++) {
    if (i === failAt) throw new Error(`refused at ${i}`);
    store.table<Item & Row>("items").put(`new-${i}`, { ID: `new-${i}`, Group: "new", Size: 2 });
    yield;
  }
  store.table("items").delete("old-0");
  yield;
}

describe("Store.writeStaged", () => {
  it("between slices, reads see the state before; at the end it lands as one commit at one index, indexes and sums up to date", async () => {
    const { store, items, byGroup, sizes, watched } = seeded(10);
    const commits: Commit[] = [];
    store.onCommit((commit) => commits.push(commit));
    const index = store.index;
    const between: string[] = [];
    let refused: unknown;
    await store.writeStaged(
      adding(store, 0, 50),
      async () => {
        between.push(`${items.size} ${items.has("new-0")} ${byGroup.count("new")} ${sizes("new")[0] ?? 0} ${items.sorted().length} ${store.index} ${items.index}`);
        try {
          store.write(() => items.put("other", { ID: "other", Group: "x", Size: 0 }));
        } catch (error) {
          refused ??= error;
        }
      },
      8,
    );
    expect(refused).toBeInstanceOf(StoreError);
    expect(new Set(between)).toEqual(new Set([`10 false 0 0 10 ${index} ${index}`]));
    expect(between).toHaveLength(Math.ceil(51 / 8) - 1);
    expect(store.stagedWork).toEqual({ slices: Math.ceil(51 / 8), largestSlice: 8 });
    expect(commits).toHaveLength(1);
    expect(commits[0]!.index).toBe(index + 1);
    expect([...commits[0]!.tables]).toEqual(["items"]);
    expect(store.index).toBe(index + 1);
    expect(items.index).toBe(index + 1);
    expect(items.size).toBe(59);
    expect(byGroup.count("new")).toBe(50);
    expect(byGroup.count("even")).toBe(4);
    expect(sizes("new")).toEqual([100]);
    expect(items.withPrefix("new-").length).toBe(50);
    expect(items.sorted().map((row) => row.ID)).toEqual([...items.ids()].sort());
    expect(watched.rows).toBe(59);
    // The next write goes on from there.
    store.write(() => items.put("after", { ID: "after", Group: "new", Size: 1 }));
    expect(byGroup.count("new")).toBe(51);
    expect(store.index).toBe(index + 2);
  });

  it("a step that throws changes nothing: rows, indexes, derived indexes, what watchers derived, and undo steps registered with it run", async () => {
    const { store, items, byGroup, sizes, watched } = seeded(10);
    const index = store.index;
    const undone: string[] = [];
    const steps = (function* () {
      store.undoSink()!(() => undone.push("timer"));
      yield* adding(store, 0, 50, 40);
    })();
    await expect(store.writeStaged(steps, async () => {}, 8)).rejects.toThrow("refused at 40");
    expect(undone).toEqual(["timer"]);
    expect(store.index).toBe(index);
    expect(items.index).toBe(index);
    expect(items.size).toBe(10);
    expect(items.has("new-0")).toBe(false);
    expect(byGroup.count("new")).toBe(0);
    expect(sizes("new")).toEqual([]);
    expect(watched.rows).toBe(10);
    // Writes are taken again.
    store.write(() => items.put("after", { ID: "after", Group: "new", Size: 1 }));
    expect(store.index).toBe(index + 1);
  });

  it("cannot begin inside a write or beside another staged write; restore waits its turn too", async () => {
    const { store } = seeded(2);
    let nested: Promise<void> | undefined;
    store.write(() => {
      nested = store.writeStaged(adding(store, 0, 1), async () => {});
    });
    await expect(nested).rejects.toThrow(StoreError);
    let inner: Promise<void> | undefined;
    let restoreRefused: unknown;
    await store.writeStaged(
      adding(store, 0, 20),
      async () => {
        inner ??= store.writeStaged(adding(store, 100, 1), async () => {});
        try {
          store.restore({ index: 1, tables: {} });
        } catch (error) {
          restoreRefused ??= error;
        }
      },
      4,
    );
    await expect(inner).rejects.toThrow(StoreError);
    expect(restoreRefused).toBeInstanceOf(StoreError);
    expect(store.staging).toBe(false);
  });
});

describe("Store.restoreStaged", () => {
  it("builds the restored tables a slice at a time, readers seeing the state before, and gives what restore() gives", async () => {
    const { store: source } = seeded(30);
    const snapshot = source.snapshot();
    const { store, items, byGroup } = seeded(3);
    let restores = 0;
    store.onRestore(() => restores++);
    const between: number[] = [];
    await store.restoreStaged(
      structuredClone(snapshot),
      async () => {
        between.push(items.size);
      },
      7,
    );
    expect(new Set(between)).toEqual(new Set([3]));
    expect(store.stagedWork.largestSlice).toBe(7);
    expect(restores).toBe(1);
    expect(store.snapshot()).toEqual(snapshot);
    expect(byGroup.count("odd")).toBe(15);
    const whole = new Store();
    whole.restore(structuredClone(snapshot));
    expect(whole.snapshot()).toEqual(store.snapshot());
  });

  it("refuses a bad snapshot before changing anything; what it returns puts the state before back", async () => {
    const { store, items } = seeded(3);
    const before = store.snapshot();
    await expect(store.restoreStaged({ index: 0, tables: {} }, async () => {})).rejects.toThrow(StoreError);
    expect(store.snapshot()).toEqual(before);
    const undo = await store.restoreStaged({ index: 5, tables: {} }, async () => {});
    expect(items.size).toBe(0);
    undo();
    expect(store.snapshot()).toEqual(before);
    expect(items.withPrefix("old-").length).toBe(3);
  });
});
