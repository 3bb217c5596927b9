/**
 * A large document (a fixture, a snapshot) is applied a slice at a time
 * (Store.writeStaged, Store.restoreStaged): between slices, reads are
 * answered from the state before it and writes wait; it lands as one write
 * (one index, one commit, one tape entry), or, refused, changes nothing.
 * The turns are driven by the tests' own `turn`, which makes requests
 * between slices: no test depends on timing.
 */
import { describe, expect, it } from "vitest";
import { STAGED_SLICE_STEPS, StoreError } from "../../src/core/store.js";
import { createStandin } from "../../src/emulator.js";
import { replayTape } from "../../src/replay.js";
import { COUNT, get, job, kv, kvValue, put, useBuiltWorker } from "./large-documents.js";

useBuiltWorker();

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("a large fixture applied in slices", () => {
  it("readers see the state before it; it lands whole at one index, in one commit; writes sent meanwhile land after it, in arrival order", async () => {
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    const commits: number[] = [];
    const hashes: string[] = [];
    emu.store.onCommit((commit) => {
      commits.push(commit.index);
      hashes.push(emu.stateHash());
    });
    const before = emu.index;
    let turns = 0;
    const during: {
      fixtureKey?: number;
      existing?: string;
      index?: string | null;
      writes: Array<Promise<Response>>;
      writeError?: unknown;
      hash?: Promise<string>;
    } = { writes: [] };
    const turn = async () => {
      turns++;
      if (turns !== 3) return;
      const missing = await get(emu, "/v1/kv/big/5");
      during.fixtureKey = missing.status;
      const existing = await get(emu, "/v1/kv/existing");
      during.existing = kvValue(existing.body);
      during.index = existing.index;
      // Sent while the fixture is being applied: a read of the whole state waits for it, and so do writes.
      during.hash = Promise.resolve(emu.registry.request("/_standin/state/hash")).then(async (res) => ((await res.json()) as { hash: string }).hash);
      during.writes.push(put(emu, "during/1", "a"), put(emu, "during/2", "b"), put(emu, "existing", "new"));
      // A write that slips past the gate is refused, not mixed into the document's write.
      try {
        emu.store.write(() => emu.store.table("registry.kv").delete("existing"));
      } catch (error) {
        during.writeError = error;
      }
    };
    await emu.applyFixture({ registry: { kv: kv(COUNT) } }, { turn });

    expect(during.fixtureKey).toBe(404);
    expect(during.existing).toBe("old");
    expect(Number(during.index)).toBe(before);
    expect(during.writeError).toBeInstanceOf(StoreError);
    // Bounded work per turn: no slice ran more than the budget's steps.
    expect(emu.store.stagedWork.largestSlice).toBeLessThanOrEqual(STAGED_SLICE_STEPS);
    expect(emu.store.stagedWork.slices).toBeGreaterThanOrEqual(Math.ceil(COUNT / STAGED_SLICE_STEPS));
    // One turn between checking the document and applying it, then one between each two slices.
    expect(turns).toBe(emu.store.stagedWork.slices);

    const fixtureIndex = before + 1;
    expect(commits[0]).toBe(fixtureIndex);
    const all = (await get(emu, "/v1/kv/big/?recurse")).body as Array<{ ModifyIndex: number; CreateIndex: number }>;
    expect(all).toHaveLength(COUNT);
    expect(new Set(all.map((e) => e.ModifyIndex))).toEqual(new Set([fixtureIndex]));
    expect((await get(emu, "/v1/kv/big/19999")).index).toBe(String(fixtureIndex));

    // The hash asked for meanwhile is of the state with the whole fixture, before the writes sent after it.
    const hashed = await during.hash!;
    const answers = await Promise.all(during.writes);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(commits).toEqual([fixtureIndex, fixtureIndex + 1, fixtureIndex + 2, fixtureIndex + 3]);
    const modified = async (key: string) => ((await get(emu, `/v1/kv/${key}`)).body as Array<{ ModifyIndex: number }>)[0]!.ModifyIndex;
    expect([await modified("during/1"), await modified("during/2"), await modified("existing")]).toEqual([fixtureIndex + 1, fixtureIndex + 2, fixtureIndex + 3]);
    expect(kvValue((await get(emu, "/v1/kv/existing")).body)).toBe("new");
    expect(hashed).toBe(hashes[0]);
    emu.close();
  });

  it("gives the same state, byte for byte, as the fixture applied in one step", async () => {
    const fixture = () => ({ scheduler: { jobs: [job("web"), job("api")] }, registry: { kv: kv(2_000), sessions: [{ Name: "s", TTL: "30s" }] } });
    const sliced = await createStandin();
    await sliced.applyFixture(fixture(), { turn: nextTurn });
    const whole = await createStandin();
    await whole.applyFixture(fixture());
    expect(sliced.stateHash()).toBe(whole.stateHash());
    expect(sliced.index).toBe(whole.index);
    // What the watchers derive (held ports, GC candidates) is in step too: the next placements agree.
    for (const emu of [sliced, whole]) await emu.applyFixture({ scheduler: { jobs: [job("third")] } }, emu === sliced ? { turn: nextTurn } : {});
    expect(sliced.stateHash()).toBe(whole.stateHash());
    sliced.close();
    whole.close();
  });

  it("a fixture refused at its last entity changes nothing: state, index, timers, generator; readers meanwhile saw the state before", async () => {
    const emu = await createStandin();
    await emu.applyFixture({ scheduler: { jobs: [job("before")] } });
    const hash = emu.stateHash();
    const index = emu.index;
    const timers = emu.clock.timers().length;
    const rng = JSON.stringify(emu.ids.state());
    const seen: number[] = [];
    const turn = async () => {
      seen.push((await get(emu, "/v1/kv/big/0")).status);
      seen.push((await emu.scheduler.request("/v1/job/added")).status);
    };
    const fixture = {
      scheduler: { jobs: [job("added")] },
      registry: { sessions: [{ Name: "ttl", TTL: "30s" }], kv: [...kv(COUNT), { Key: "locked", Value: "x", Session: "no-such-session" }] },
    };
    await expect(emu.applyFixture(fixture, { turn })).rejects.toThrow(/registry\.kv\[20000\]\.Session/);
    expect(seen.length).toBeGreaterThan(2);
    expect(new Set(seen)).toEqual(new Set([404]));
    expect(emu.stateHash()).toBe(hash);
    expect(emu.index).toBe(index);
    expect(emu.clock.timers()).toHaveLength(timers);
    expect(JSON.stringify(emu.ids.state())).toBe(rng);
    // The next document and write work as on a state that never saw it.
    const fresh = await createStandin();
    await fresh.applyFixture({ scheduler: { jobs: [job("before")] } });
    for (const e of [emu, fresh]) {
      await e.applyFixture({ scheduler: { jobs: [job("after")] } }, { turn: nextTurn });
      expect((await put(e, "k", "v")).status).toBe(200);
    }
    expect(emu.stateHash()).toBe(fresh.stateHash());
    emu.close();
    fresh.close();
  });

  it("realtime timers wait for the document: none fires between slices, even with wall time past them", async () => {
    let wallMs = Date.UTC(2026, 0, 1);
    const armed: Array<() => void> = [];
    const wall = { now: () => wallMs, setTimer: (fire: () => void) => armed.push(fire), clearTimer: () => {} };
    const emu = await createStandin({ clock: { mode: "realtime", start: "2026-01-01T00:00:00Z" }, wall });
    await emu.applyFixture({ registry: { sessions: [{ Name: "ttl", TTL: "10s" }] } });
    const pending = emu.clock.status().pendingTimers;
    expect(pending).toBeGreaterThan(0);
    const seen: number[] = [];
    const turn = async () => {
      // (The first turn comes between checking the document and applying it: time may run there.)
      if (!emu.documents.active) return;
      wallMs += 3_600_000;
      // A request syncs the clock first, and the clock's own real timer fires: neither may fire a timer now.
      await get(emu, "/v1/session/list");
      for (const fire of armed.splice(0)) fire();
      seen.push(emu.clock.status().pendingTimers);
    };
    await emu.applyFixture({ registry: { kv: kv(2_000) } }, { turn });
    expect(seen.length).toBeGreaterThan(1);
    expect(new Set(seen)).toEqual(new Set([pending]));
    expect((await get(emu, "/v1/session/list")).body).toEqual([]);
    expect(emu.clock.status().pendingTimers).toBeLessThan(pending);
    emu.close();
  });

  it("the services' reads are answered between slices (none of them writes)", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("web")] }, registry: { sessions: [{ Name: "s", TTL: "30s" }] } } });
    const reads = {
      scheduler: [
        "/v1/jobs",
        "/v1/job/web",
        "/v1/job/web/allocations",
        "/v1/job/web/summary",
        "/v1/nodes",
        "/v1/allocations",
        "/v1/evaluations",
        "/v1/deployments",
        "/v1/agent/self",
        "/v1/agent/members",
        "/v1/status/leader",
        "/v1/regions",
        "/v1/namespaces",
        "/v1/node/pools",
        "/v1/operator/scheduler/configuration",
        "/v1/services",
        "/v1/vars",
      ],
      registry: [
        "/v1/catalog/services",
        "/v1/catalog/nodes",
        "/v1/health/service/consul",
        "/v1/health/state/any",
        "/v1/agent/self",
        "/v1/agent/services",
        "/v1/agent/checks",
        "/v1/agent/members",
        "/v1/kv/?recurse",
        "/v1/session/list",
        "/v1/status/leader",
        "/v1/catalog/datacenters",
        "/v1/event/list",
      ],
      echo: ["/", "/echo", "/openapi.json", "/auth/info/googlejwt"],
    } as const;
    const statuses = new Map<string, number>();
    const turn = async () => {
      if (!emu.documents.active || statuses.size > 0) return;
      for (const [service, paths] of Object.entries(reads)) {
        for (const path of paths) statuses.set(`${service} ${path}`, (await emu.app(service as keyof typeof reads).request(path)).status);
      }
    };
    await emu.applyFixture({ registry: { kv: kv(1_000) } }, { turn });
    expect(statuses.size).toBe(Object.values(reads).flat().length);
    expect([...statuses].filter(([, status]) => status >= 500)).toEqual([]);
    emu.close();
  });

  it("a fixture of one slice, or small beside the state, is written in one step (no copy of the tables it changes)", async () => {
    const emu = await createStandin();
    await emu.applyFixture({ registry: { kv: kv(COUNT) } });
    const sliced = () => emu.store.stagedWork.slices;
    emu.store.stagedWork.slices = 0;
    await emu.applyFixture({ registry: { kv: kv(STAGED_SLICE_STEPS).map((e) => ({ ...e, Key: `small/${e.Key}` })) } }, { turn: nextTurn });
    await emu.applyFixture({ registry: { kv: kv(1_000).map((e) => ({ ...e, Key: `beside/${e.Key}` })) } }, { turn: nextTurn });
    expect(sliced()).toBe(0);
    await emu.applyFixture({ registry: { kv: kv(2_000).map((e) => ({ ...e, Key: `larger/${e.Key}` })) } }, { turn: nextTurn });
    expect(sliced()).toBeGreaterThan(1);
    emu.close();
  });

  it("two documents sent together are applied one after the other", async () => {
    const emu = await createStandin();
    const start = emu.index;
    const a = emu.applyFixture({ registry: { kv: kv(1_000) } }, { turn: nextTurn });
    const b = emu.applyFixture({ registry: { kv: [{ Key: "big/0", Value: "second" }] } }, { turn: nextTurn });
    await Promise.all([a, b]);
    expect(kvValue((await get(emu, "/v1/kv/big/0")).body)).toBe("second");
    expect(emu.index).toBe(start + 2);
    emu.close();
  });
});

describe("a large snapshot restored in slices", () => {
  it("readers between slices see the state before; the restored state's hash is the one a restore in one step gives", async () => {
    const source = await createStandin();
    await source.applyFixture({ scheduler: { jobs: [job("web")] }, registry: { kv: kv(COUNT), sessions: [{ Name: "s", TTL: "30s" }] } });
    const snapshot = JSON.parse(JSON.stringify(source.snapshot()));
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    const seen: string[] = [];
    let writeError: unknown;
    const turn = async () => {
      const existing = await get(emu, "/v1/kv/existing");
      seen.push(`${existing.status} ${(await get(emu, "/v1/kv/big/0")).status}`);
      // (The first turn comes between checking the document and restoring it: no write is refused there.)
      if (emu.store.staging)
        try {
          emu.store.write(() => emu.store.table("registry.kv").delete("existing"));
        } catch (error) {
          writeError ??= error;
        }
    };
    await emu.restoreDocument(JSON.parse(JSON.stringify(snapshot)), turn);
    expect(seen.length).toBeGreaterThan(COUNT / STAGED_SLICE_STEPS - 1);
    expect(new Set(seen)).toEqual(new Set(["200 404"]));
    expect(writeError).toBeInstanceOf(StoreError);
    expect(emu.store.stagedWork.largestSlice).toBeLessThanOrEqual(STAGED_SLICE_STEPS);
    expect(emu.stateHash()).toBe(source.stateHash());
    const whole = await createStandin();
    whole.restore(JSON.parse(JSON.stringify(snapshot)));
    expect(whole.stateHash()).toBe(emu.stateHash());
    // The restored state carries on as the source does.
    for (const e of [emu, source]) await e.applyFixture({ scheduler: { jobs: [job("next")] } });
    expect(emu.stateHash()).toBe(source.stateHash());
    for (const e of [emu, source, whole]) e.close();
  });

  it("a snapshot with a bad row, or a bad field beside good rows, is refused with the problems a restore in one step names", async () => {
    const source = await createStandin();
    await source.applyFixture({ registry: { kv: kv(50) } });
    const good = JSON.stringify(source.snapshot());
    const emu = await createStandin();
    const hash = emu.stateHash();
    const badRow = JSON.parse(good);
    badRow.store.tables["registry.kv"].rows["big/7"] = 7;
    const badField = JSON.parse(good);
    badField.store.tables["registry.kv"].index = -1;
    badField.rng = "x";
    for (const bad of [badRow, badField]) {
      const whole = (() => {
        try {
          emu.restore(structuredClone(bad));
        } catch (error) {
          return (error as Error).message;
        }
      })();
      expect(whole).toMatch(/^invalid snapshot: /);
      await expect(emu.restoreDocument(bad, nextTurn)).rejects.toThrow(whole!);
      expect(emu.stateHash()).toBe(hash);
    }
    emu.close();
    source.close();
  });

  it("a refused snapshot changes nothing", async () => {
    const source = await createStandin();
    await source.applyFixture({ registry: { kv: kv(1_000) } });
    const snapshot = JSON.parse(JSON.stringify(source.snapshot()));
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    const hash = emu.stateHash();
    snapshot.store.scopes = { "registry@dc2": 0 };
    await expect(emu.restoreDocument(snapshot, nextTurn)).rejects.toThrow();
    expect(emu.stateHash()).toBe(hash);
    emu.close();
    source.close();
  });
});

describe("the tape of a run with a large fixture", () => {
  it("replays with no divergence: reads answered while it was applied, and a write that waited for it", async () => {
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    let done = false;
    const applied = Promise.resolve(
      emu.scheduler.request("/_standin/fixtures", { method: "POST", body: JSON.stringify({ registry: { kv: kv(COUNT) } }), headers: { "Content-Type": "application/json" } }),
    ).finally(() => (done = true));
    const reads: number[] = [];
    let write: Promise<Response> | undefined;
    while (!done) {
      reads.push((await get(emu, "/v1/kv/existing")).status);
      if (emu.documents.active) write ??= put(emu, "existing", "new");
      await nextTurn();
    }
    expect((await applied).status).toBe(200);
    expect((await write!).status).toBe(200);
    expect(reads.length).toBeGreaterThan(1);
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as { entries: Array<{ kind: string; method?: string }> };
    const kinds = tape.entries.map((e) => (e.kind === "request" ? e.method : e.kind));
    // The write is on the tape after the fixture, as it was applied.
    expect(kinds.lastIndexOf("PUT")).toBeGreaterThan(kinds.indexOf("fixture"));
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.stateHash.actual).toBe(emu.stateHash());
    emu.close();
  });
});
