/**
 * Store.defer (core/deferred-writes): a slice a turn of the event loop,
 * each its own write; any other write, a snapshot or `settle` runs the rest
 * first, so indexes never depend on how many had run; `settled` lets a port
 * wait without holding the loop; a restore forgets the work.
 */
import { describe, expect, it } from "vitest";
import { Store } from "../../src/core/store.js";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `n` slices, each putting one row into `deferred`. */
function slices(store: Store, n: number): void {
  let done = 0;
  store.defer(() => {
    store.write(() => store.table("deferred").put(`r${done}`, { n: done }));
    return ++done === n;
  });
}

describe("Store.defer", () => {
  it("runs one slice a turn, each its own write with its own index", async () => {
    const store = new Store();
    slices(store, 3);
    expect(store.table("deferred").size).toBe(0);
    const sizes: number[] = [];
    for (let i = 0; i < 4; i++) {
      await turn();
      sizes.push(store.table("deferred").size);
    }
    expect(sizes).toEqual([1, 2, 3, 3]);
    expect(store.index).toBe(4);
    expect(store.deferredSlices).toBe(3);
  });

  it("finishes the rest before another write, so that write's index is the same however many had run", async () => {
    const indexAfter = async (turns: number) => {
      const store = new Store();
      slices(store, 3);
      for (let i = 0; i < turns; i++) await turn();
      store.write(() => store.table("other").put("x", { v: 1 }));
      return [store.tableIndex("other"), store.table("deferred").size];
    };
    expect(await indexAfter(0)).toEqual([5, 3]);
    expect(await indexAfter(1)).toEqual([5, 3]);
    expect(await indexAfter(2)).toEqual([5, 3]);
  });

  it("finishes the rest before a snapshot; a restore forgets what was left", async () => {
    const store = new Store();
    const empty = store.snapshot();
    slices(store, 3);
    expect(Object.keys(store.snapshot().tables.deferred!.rows)).toHaveLength(3);
    slices(store, 3);
    store.restore(empty);
    for (let i = 0; i < 3; i++) await turn();
    expect(store.table("deferred").size).toBe(0);
    expect(store.settled()).toBeUndefined();
  });

  it("settled(): undefined when nothing waits; otherwise resolves once the slices have run on their turns", async () => {
    const store = new Store();
    expect(store.settled()).toBeUndefined();
    slices(store, 3);
    let turns = 0;
    let waiting = true;
    const count = () => {
      if (!waiting) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    await store.settled();
    waiting = false;
    expect(store.table("deferred").size).toBe(3);
    expect(turns).toBeGreaterThanOrEqual(2);
  });
});
