import fc from "fast-check";
import { describe, it, expect } from "vitest";
import { INITIAL_INDEX, Store, StoreError, type Commit, type Row, type StoreSnapshot } from "../../src/core/store.js";

type Job = { ID: string; Name?: string; Nested?: { n: number }; CreateIndex?: number; ModifyIndex?: number };

/** A store with rows in two tables, written in two separate writes (indexes 2 and 3). */
function seeded(): Store {
  const store = new Store();
  store.write(() => {
    store.table("jobs").put("b", { ID: "b", Name: "beta" });
    store.table("jobs").put("a", { ID: "a", Name: "alpha" });
  });
  store.write(() => store.table("nodes").put("n1", { ID: "n1" }));
  return store;
}

describe("Store: indexes", () => {
  it("starts at INITIAL_INDEX (1) with every table at 0", () => {
    const store = new Store();
    expect(INITIAL_INDEX).toBe(1);
    expect(store.index).toBe(1);
    expect(store.table("jobs").index).toBe(0);
    expect(store.tableIndex("jobs")).toBe(0);
    expect(store.tableIndex("never-created")).toBe(0);
    expect(store.inTransaction).toBe(false);
  });

  it("gives one write that touches two tables exactly one new index, shared by both tables", () => {
    const store = new Store();
    const seen: number[] = [];
    store.write(() => {
      store.table("jobs").put("j1", { ID: "j1" });
      seen.push(store.writeIndex());
      store.table("evals").put("e1", { ID: "e1" });
      store.table("jobs").put("j2", { ID: "j2" });
      seen.push(store.writeIndex());
    });
    expect(store.index).toBe(2);
    expect(store.table("jobs").index).toBe(2);
    expect(store.tableIndex("evals")).toBe(2);
    expect(seen).toEqual([2, 2]);

    store.write(() => store.table("evals").put("e2", { ID: "e2" }));
    expect(store.index).toBe(3);
    expect(store.tableIndex("evals")).toBe(3);
    expect(store.tableIndex("jobs")).toBe(2);
  });

  it("takes no index for a write that changes nothing", () => {
    const store = seeded();
    const commits: Commit[] = [];
    store.onCommit((c) => commits.push(c));
    const result = store.write(() => {
      store.table("jobs").get("a");
      expect(store.table("jobs").delete("missing")).toBe(false);
      return "read-only";
    });
    expect(result).toBe("read-only");
    expect(store.index).toBe(3);
    expect(store.tableIndex("jobs")).toBe(2);
    expect(commits).toEqual([]);
    store.write(() => store.table("jobs").put("c", { ID: "c" }));
    expect(store.index).toBe(4);
  });

  it("lets a nested write join the outer one (one index, one commit)", () => {
    const store = new Store();
    const commits: Commit[] = [];
    store.onCommit((c) => commits.push(c));
    store.write(() => {
      store.table("a").put("1", { ID: "1" });
      const inner = store.write(() => {
        expect(store.inTransaction).toBe(true);
        store.table("b").put("2", { ID: "2" });
        return 42;
      });
      expect(inner).toBe(42);
      // Nothing committed yet: the inner write did not commit on its own.
      expect(commits).toEqual([]);
      expect(store.index).toBe(1);
      store.write(() => store.table("c").put("3", { ID: "3" }));
    });
    expect(store.index).toBe(2);
    expect(commits).toHaveLength(1);
    expect(commits[0]!.index).toBe(2);
    expect([...commits[0]!.tables].sort()).toEqual(["a", "b", "c"]);
    expect(["a", "b", "c"].map((t) => store.tableIndex(t))).toEqual([2, 2, 2]);
  });

  it("writeIndex() outside a write throws StoreError", () => {
    const store = new Store();
    expect(() => store.writeIndex()).toThrow(StoreError);
  });
});

describe("Store: rollback", () => {
  it("undoes everything a throwing write did: inserts, replacements, deletes, table and global indexes", () => {
    const store = seeded();
    const before = store.snapshot();
    const jobs = store.table<Job>("jobs");
    const originalA = jobs.get("a");
    const commits: Commit[] = [];
    store.onCommit((c) => commits.push(c));

    const boom = new Error("rejected");
    expect(() =>
      store.write(() => {
        jobs.put("a", { ID: "a", Name: "replaced once" });
        jobs.put("a", { ID: "a", Name: "replaced twice" });
        jobs.delete("b");
        jobs.put("z", { ID: "z" });
        store.table("nodes").delete("n1");
        store.table("fresh").put("f", { ID: "f" });
        expect(store.tableIndex("fresh")).toBe(4);
        throw boom;
      }),
    ).toThrow(boom);

    expect(store.snapshot()).toEqual(before);
    expect(jobs.get("a")).toBe(originalA);
    expect(jobs.get("b")?.Name).toBe("beta");
    expect(jobs.has("z")).toBe(false);
    expect(store.table("nodes").has("n1")).toBe(true);
    expect(store.table("fresh").size).toBe(0);
    expect(store.tableIndex("fresh")).toBe(0);
    expect(store.tableIndex("jobs")).toBe(2);
    expect(store.tableIndex("nodes")).toBe(3);
    expect(store.index).toBe(3);
    expect(store.inTransaction).toBe(false);
    expect(commits).toEqual([]);

    // The next write takes the index the failed one would have taken.
    store.write(() => jobs.put("c", { ID: "c" }));
    expect(store.index).toBe(4);
  });

  it("runs undo steps registered through undoSink() in reverse order, interleaved with row undos", () => {
    const store = seeded();
    const order: string[] = [];
    expect(store.undoSink()).toBeUndefined();
    expect(() =>
      store.write(() => {
        store.undoSink()!(() => order.push(`first (a is ${String(store.table<Job>("jobs").get("a")?.Name)})`));
        store.table<Job>("jobs").put("a", { ID: "a", Name: "changed" });
        store.undoSink()!(() => order.push(`second (a is ${String(store.table<Job>("jobs").get("a")?.Name)})`));
        store.undoSink()!(() => order.push("third"));
        throw new Error("no");
      }),
    ).toThrow("no");
    expect(order).toEqual(["third", "second (a is changed)", "first (a is alpha)"]);
  });

  it("does not run undo steps of a write that commits", () => {
    const store = new Store();
    let undone = 0;
    store.write(() => {
      store.undoSink()!(() => undone++);
      store.table("t").put("x", { ID: "x" });
    });
    expect(undone).toBe(0);
    expect(store.table("t").has("x")).toBe(true);
  });

  it("rejects an async write function and rolls it back", async () => {
    const store = new Store();
    expect(() =>
      store.write((async () => {
        store.table("t").put("x", { ID: "x" });
      }) as () => unknown),
    ).toThrow(StoreError);
    expect(store.table("t").has("x")).toBe(false);
    expect(store.index).toBe(1);
  });
});

describe("Store: rows", () => {
  it.each<[string, (store: Store) => unknown]>([
    ["put", (store) => store.table("t").put("x", { ID: "x" })],
    ["putIndexed", (store) => store.table("t").putIndexed("x", { ID: "x" })],
    ["delete", (store) => store.table("t").delete("x")],
  ])("%s outside write throws StoreError", (_label, act) => {
    const store = new Store();
    expect(() => act(store)).toThrow(StoreError);
    expect(() => act(store)).toThrow(/outside Store\.write/);
    expect(store.table("t").size).toBe(0);
    expect(store.index).toBe(1);
  });

  it("freezes stored rows: assigning to a property throws (ES modules are strict)", () => {
    const store = new Store();
    const input: Job = { ID: "x", Name: "before" };
    const stored = store.write(() => store.table<Job>("jobs").put("x", input));
    expect(Object.isFrozen(stored)).toBe(true);
    expect(() => {
      (stored as { Name: string }).Name = "after";
    }).toThrow(TypeError);
    expect(() => {
      (input as { Name: string }).Name = "after";
    }).toThrow(TypeError);
    expect(store.table<Job>("jobs").get("x")?.Name).toBe("before");
  });

  it("putIndexed stamps CreateIndex and ModifyIndex, keeping CreateIndex on update", () => {
    const store = new Store();
    const jobs = store.table<Job>("jobs");
    store.write(() => store.table("other").put("o", { ID: "o" })); // index 2
    const created = store.write(() => jobs.putIndexed("j", { ID: "j", Name: "v1" }));
    expect(created).toEqual({ ID: "j", Name: "v1", CreateIndex: 3, ModifyIndex: 3 });
    store.write(() => store.table("other").put("o2", { ID: "o2" })); // index 4
    const updated = store.write(() => jobs.putIndexed("j", { ID: "j", Name: "v2" }));
    expect(updated).toEqual({ ID: "j", Name: "v2", CreateIndex: 3, ModifyIndex: 5 });
    expect(jobs.get("j")).toBe(updated);
    expect(jobs.index).toBe(5);
  });

  it("putIndexed ignores caller-supplied index fields", () => {
    const store = new Store();
    const row = store.write(() => store.table("jobs").putIndexed("j", { ID: "j", CreateIndex: 999, ModifyIndex: 999 } as unknown as Row));
    expect(row).toMatchObject({ CreateIndex: 2, ModifyIndex: 2 });
  });

  it("sorted() returns rows in ID order; size/ids/values/has/get agree", () => {
    const store = new Store();
    const t = store.table<Job>("t");
    store.write(() => {
      for (const id of ["b", "a10", "A", "a2", "_", "a1"]) t.put(id, { ID: id });
    });
    expect(t.sorted().map((r) => r.ID)).toEqual(["A", "_", "a1", "a10", "a2", "b"]);
    expect(t.size).toBe(6);
    expect([...t.ids()].sort()).toEqual(["A", "_", "a1", "a10", "a2", "b"]);
    expect([...t.values()].map((r) => r.ID).sort()).toEqual(["A", "_", "a1", "a10", "a2", "b"]);
    expect(t.has("a1")).toBe(true);
    expect(t.get("nope")).toBeUndefined();
  });

  it("returns the same handle for the same table name", () => {
    const store = new Store();
    expect(store.table("x")).toBe(store.table("x"));
    expect(store.table("x").name).toBe("x");
  });
});

describe("Store: commits, snapshot, restore", () => {
  it("onCommit receives {index, tables} for each committing write, until unsubscribed", () => {
    const store = new Store();
    const commits: Array<{ index: number; tables: string[] }> = [];
    const off = store.onCommit((c) => commits.push({ index: c.index, tables: [...c.tables].sort() }));
    store.write(() => {
      store.table("jobs").put("j", { ID: "j" });
      store.table("evals").put("e", { ID: "e" });
      store.table("jobs").put("k", { ID: "k" });
    });
    store.write(() => store.table("evals").delete("e"));
    off();
    store.write(() => store.table("jobs").put("l", { ID: "l" }));
    expect(commits).toEqual([
      { index: 2, tables: ["evals", "jobs"] },
      { index: 3, tables: ["evals"] },
    ]);
  });

  it("snapshot() lists non-empty or written tables with rows in ID order", () => {
    const store = seeded();
    store.table("untouched");
    const snapshot = store.snapshot();
    expect(snapshot).toEqual({
      index: 3,
      tables: {
        jobs: { index: 2, rows: { a: { ID: "a", Name: "alpha" }, b: { ID: "b", Name: "beta" } } },
        nodes: { index: 3, rows: { n1: { ID: "n1" } } },
      },
    });
    expect(Object.keys(snapshot.tables.jobs!.rows)).toEqual(["a", "b"]);
  });

  it("keeps a table whose rows were all deleted (its index still matters)", () => {
    const store = seeded();
    store.write(() => store.table("nodes").delete("n1"));
    expect(store.snapshot().tables.nodes).toEqual({ index: 4, rows: {} });
  });

  it("round-trips through snapshot()/restore(): rows, table indexes, global index", () => {
    const store = seeded();
    const snapshot: StoreSnapshot = JSON.parse(JSON.stringify(store.snapshot()));
    const jobsHandle = store.table<Job>("jobs");

    store.write(() => {
      jobsHandle.put("a", { ID: "a", Name: "changed" });
      jobsHandle.delete("b");
      store.table("extra").put("x", { ID: "x" });
    });
    expect(store.index).toBe(4);

    let restores = 0;
    store.onRestore(() => restores++);
    store.restore(snapshot);

    expect(restores).toBe(1);
    expect(store.snapshot()).toEqual(snapshot);
    expect(store.index).toBe(3);
    expect(store.tableIndex("jobs")).toBe(2);
    expect(store.tableIndex("nodes")).toBe(3);
    expect(store.tableIndex("extra")).toBe(0);
    expect(store.table("extra").size).toBe(0);
    // Handles taken before the restore see the restored rows.
    expect(jobsHandle.get("a")?.Name).toBe("alpha");
    expect(jobsHandle.get("b")?.Name).toBe("beta");
    store.write(() => jobsHandle.put("c", { ID: "c" }));
    expect(store.index).toBe(4);
  });

  it("deep-freezes restored rows", () => {
    const store = new Store();
    store.restore({ index: 5, tables: { jobs: { index: 5, rows: { j: { ID: "j", Nested: { n: 1 } } } } } });
    const row = store.table<Job>("jobs").get("j")!;
    expect(Object.isFrozen(row)).toBe(true);
    expect(Object.isFrozen(row.Nested)).toBe(true);
    expect(() => {
      (row.Nested as { n: number }).n = 2;
    }).toThrow(TypeError);
  });

  it.each<[string, StoreSnapshot]>([
    ["index 0", { index: 0, tables: {} }],
    ["a non-integer index", { index: 1.5, tables: {} }],
  ])("rejects a snapshot with %s and keeps the state", (_label, snapshot) => {
    const store = seeded();
    const before = store.snapshot();
    expect(() => store.restore(snapshot)).toThrow(StoreError);
    expect(store.snapshot()).toEqual(before);
  });

  it("refuses to restore inside a write", () => {
    const store = seeded();
    const snapshot = store.snapshot();
    expect(() => store.write(() => store.restore(snapshot))).toThrow(/inside a write/);
  });

  it("stops calling onRestore listeners after unsubscribe", () => {
    const store = new Store();
    let calls = 0;
    const off = store.onRestore(() => calls++);
    store.restore(store.snapshot());
    off();
    store.restore(store.snapshot());
    expect(calls).toBe(1);
  });
});

describe("Store: secondary indexes (Table.groupBy)", () => {
  type Tagged = { ID: string; Owner: string; Tags: string[] };
  const ids = (rows: Tagged[]) => rows.map((r) => r.ID).sort();

  it("finds a row under each key it names (none: not indexed), follows replacements and deletes, and counts a group", () => {
    const store = new Store();
    const table = store.table<Tagged>("tagged");
    const byTag = table.groupBy((r) => r.Tags);
    const byOwner = table.groupBy((r) => r.Owner);
    store.write(() => {
      table.put("a", { ID: "a", Owner: "x", Tags: ["red", "blue"] });
      table.put("b", { ID: "b", Owner: "x", Tags: ["blue"] });
      table.put("c", { ID: "c", Owner: "y", Tags: [] });
    });
    expect(ids(byTag("blue"))).toEqual(["a", "b"]);
    expect(ids(byTag("red"))).toEqual(["a"]);
    expect(byTag.count("blue")).toBe(2);
    expect(byTag.count("none")).toBe(0);
    expect(byOwner.count("x")).toBe(2);
    store.write(() => {
      table.put("a", { ID: "a", Owner: "y", Tags: ["green"] });
      table.delete("b");
    });
    expect(byTag("blue")).toEqual([]);
    expect(byTag.count("blue")).toBe(0);
    expect(ids(byTag("green"))).toEqual(["a"]);
    expect(ids(byOwner("y"))).toEqual(["a", "c"]);
  });

  it("is put back by a rolled-back write and rebuilt after a restore", () => {
    const store = new Store();
    const table = store.table<Tagged>("tagged");
    const byTag = table.groupBy((r) => r.Tags);
    store.write(() => table.put("a", { ID: "a", Owner: "x", Tags: ["red", "blue"] }));
    const saved = store.snapshot();
    expect(() =>
      store.write(() => {
        table.delete("a");
        table.put("b", { ID: "b", Owner: "x", Tags: ["red"] });
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(ids(byTag("red"))).toEqual(["a"]);
    expect(byTag.count("blue")).toBe(1);
    store.write(() => table.put("b", { ID: "b", Owner: "x", Tags: ["red"] }));
    expect(byTag.count("red")).toBe(2);
    store.restore(structuredClone(saved));
    expect(ids(byTag("red"))).toEqual(["a"]);
  });
});

describe("Table.watch", () => {
  it("tells of every row change with the row it replaced, undone ones included, and not of a restore", () => {
    const store = new Store();
    const table = store.table<{ v: number }>("t");
    const seen: string[] = [];
    table.watch((id, row, previous) => seen.push(`${id}:${previous?.v ?? "-"}→${row?.v ?? "-"}`));
    store.write(() => table.put("a", { v: 1 }));
    store.write(() => table.put("a", { v: 2 }));
    expect(() =>
      store.write(() => {
        table.delete("a");
        throw new Error("rejected");
      }),
    ).toThrow("rejected");
    expect(table.get("a")).toEqual({ v: 2 });
    store.restore({ index: 9, tables: { t: { index: 9, rows: { b: { v: 5 } } } } });
    expect(seen).toEqual(["a:-→1", "a:1→2", "a:2→-", "a:-→2"]);
  });
});

describe("Store: running sums (Table.sumBy)", () => {
  type Alloc = { ID: string; Node: string; Live: boolean; Cpu: number; Mem: number };
  const alloc = (ID: string, Node: string, Cpu: number, Mem: number, Live = true): Alloc => ({ ID, Node, Live, Cpu, Mem });

  it("sums each group's rows (none counted: left out), follows replacements and deletes", () => {
    const store = new Store();
    const table = store.table<Alloc>("allocs");
    const usage = table.sumBy(
      (r) => (r.Live ? r.Node : undefined),
      (r) => [r.Cpu, r.Mem],
    );
    store.write(() => {
      table.put("a", alloc("a", "n1", 100, 300));
      table.put("b", alloc("b", "n1", 50, 10));
      table.put("c", alloc("c", "n2", 7, 7));
      table.put("d", alloc("d", "n1", 1000, 1000, false));
    });
    expect(usage("n1")).toEqual([150, 310]);
    expect(usage("n2")).toEqual([7, 7]);
    expect(usage("n3")).toEqual([]);
    store.write(() => {
      table.put("a", alloc("a", "n2", 100, 300)); // moves
      table.put("b", alloc("b", "n1", 50, 10, false)); // stops counting
      table.put("d", alloc("d", "n1", 1000, 1000)); // starts counting
      table.delete("c");
    });
    expect(usage("n1")).toEqual([1000, 1000]);
    expect(usage("n2")).toEqual([100, 300]);
  });

  it("is put back by a rolled-back write, rebuilt after a restore, and starts from the rows already stored", () => {
    const store = new Store();
    const table = store.table<Alloc>("allocs");
    store.write(() => table.put("a", alloc("a", "n1", 100, 300)));
    const usage = table.sumBy(
      (r) => (r.Live ? r.Node : undefined),
      (r) => [r.Cpu, r.Mem],
    );
    expect(usage("n1")).toEqual([100, 300]);
    const saved = store.snapshot();
    expect(() =>
      store.write(() => {
        table.delete("a");
        table.put("b", alloc("b", "n1", 5, 5));
        throw new Error("refused");
      }),
    ).toThrow("refused");
    expect(usage("n1")).toEqual([100, 300]);
    store.write(() => table.put("b", alloc("b", "n1", 5, 5)));
    expect(usage("n1")).toEqual([105, 305]);
    store.restore(structuredClone(saved));
    expect(usage("n1")).toEqual([100, 300]);
  });
});

describe("Table.sorted and Table.withPrefix keep key order through writes, undone writes and restores", () => {
  type Op = { kind: "put" | "delete"; ids: string[]; abort: boolean } | { kind: "read"; prefix: string } | { kind: "restore" };
  // 121 possible IDs, writes of up to 80: pending changes both below and above the splice limit (32).
  const id = fc.stringMatching(/^[abc]{0,4}$/);
  const ALL_IDS: string[] = [""];
  for (let i = 0; i < ALL_IDS.length; i++) if (ALL_IDS[i]!.length < 4) ALL_IDS.push(...["a", "b", "c"].map((c) => ALL_IDS[i] + c));
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constantFrom("put" as const, "delete" as const), ids: fc.array(id, { maxLength: 80, size: "max" }), abort: fc.boolean() }),
    fc.record({ kind: fc.constant("read" as const), prefix: id }),
    fc.constant({ kind: "restore" as const }),
    // Deleting every ID: more removals than the splice limit in one write.
    fc.boolean().map((abort): Op => ({ kind: "delete", ids: ALL_IDS, abort })),
  );

  it("answers as sorting the live rows would, whatever the mix (few changes spliced, many in one pass)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const store = new Store();
        const table = store.table<{ ID: string }>("t");
        const model = new Set<string>();
        for (const step of ops) {
          if (step.kind === "read") {
            const live = [...model].sort();
            expect(table.sorted().map((r) => r.ID)).toEqual(live);
            expect(table.withPrefix(step.prefix).map((r) => r.ID)).toEqual(live.filter((x) => x.startsWith(step.prefix)));
          } else if (step.kind === "restore") {
            store.restore(store.snapshot());
          } else {
            const write = () =>
              store.write(() => {
                for (const x of step.ids) step.kind === "put" ? table.put(x, { ID: x }) : table.delete(x);
                if (step.abort) throw new Error("abort");
              });
            if (step.abort) expect(write).toThrow("abort");
            else {
              write();
              for (const x of step.ids) step.kind === "put" ? model.add(x) : model.delete(x);
            }
          }
        }
        expect(table.sorted().map((r) => r.ID)).toEqual([...model].sort());
      }),
      { seed: 30, numRuns: 300 },
    );
  });
});
