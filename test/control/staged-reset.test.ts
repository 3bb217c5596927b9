/**
 * `POST /_standin/reset` with a large fixture builds the new start state a
 * slice at a time (in a scratch emulator) and swaps it in: between slices,
 * reads are answered from the state before and writes wait; the state after
 * is the one a reset in one step gives, byte for byte; a fixture refused at
 * its last entity changes nothing. A fixture the control API's precheck has
 * checked (off the event loop) is not checked again by the emulator.
 * The turns are the tests' own: no test depends on timing.
 */
import { describe, expect, it } from "vitest";
import { STAGED_SLICE_STEPS } from "../../src/core/store.js";
import { createStandin, type Standin } from "../../src/emulator.js";
import { replayTape } from "../../src/replay.js";
import { COUNT, get, job, kv, kvValue, put, useBuiltWorker } from "./large-documents.js";

useBuiltWorker();

/** A start fixture of every kind of entity, `COUNT` keys of them, and its own seed and clock. */
const bigFixture = () => ({
  seed: 7,
  clock: { start: "2026-03-01T00:00:00Z" },
  scheduler: { jobs: [job("web"), job("api")] },
  registry: { sessions: [{ Name: "s", TTL: "30s" }], kv: kv(COUNT) },
  timeline: [{ at: "1m", do: "node-down", node: "standin-client-1" }],
});
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function control(emu: Standin, path: string, body: unknown): Promise<Response> {
  return Promise.resolve(emu.scheduler.request(`/_standin${path}`, { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } }));
}

describe("a reset with a large fixture, built in slices", () => {
  it("readers see the state before it; writes sent meanwhile land after it in arrival order; the state is the one-step reset's, byte for byte", async () => {
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    const seedBefore = emu.seed;
    const indexBefore = emu.index;
    let turns = 0;
    const during: { fixtureKey?: number; existing?: string; index?: string | null; seed?: number; active?: boolean; writes: Array<Promise<Response>> } = { writes: [] };
    const turn = async () => {
      turns++;
      if (turns !== 5) return;
      during.active = emu.documents.active;
      during.fixtureKey = (await get(emu, "/v1/kv/big/5")).status;
      const existing = await get(emu, "/v1/kv/existing");
      during.existing = kvValue(existing.body);
      during.index = existing.index;
      during.seed = emu.seed;
      during.writes.push(put(emu, "during/1", "a"), put(emu, "during/2", "b"), put(emu, "existing", "new"));
    };
    await emu.reset(bigFixture(), { turn });

    expect(during.active).toBe(true);
    expect(during.fixtureKey).toBe(404);
    expect(during.existing).toBe("old");
    expect(Number(during.index)).toBe(indexBefore);
    expect(during.seed).toBe(seedBefore);
    // Built a slice at a time (the scratch's write, then the restore here, each COUNT steps and more): bounded work per turn.
    expect(turns).toBeGreaterThan((1.5 * COUNT) / STAGED_SLICE_STEPS);
    expect(emu.store.stagedWork.largestSlice).toBeLessThanOrEqual(STAGED_SLICE_STEPS);
    expect(emu.store.stagedWork.slices).toBeGreaterThanOrEqual(Math.ceil(COUNT / STAGED_SLICE_STEPS));

    // Before the writes that waited land: the state a reset in one step gives (same seed, IDs, index, timers).
    const whole = await createStandin();
    await whole.reset(bigFixture());
    expect(emu.stateHash()).toBe(whole.stateHash());
    expect(emu.index).toBe(whole.index);
    expect(emu.seed).toBe(7);
    expect(emu.clock.nowText()).toBe("2026-03-01T00:00:00Z");
    expect(JSON.stringify(emu.snapshot())).toBe(JSON.stringify(whole.snapshot()));

    const answers = await Promise.all(during.writes);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    const modified = async (key: string) => ((await get(emu, `/v1/kv/${key}`)).body as Array<{ ModifyIndex: number }>)[0]!.ModifyIndex;
    const start = whole.index;
    expect([await modified("during/1"), await modified("during/2"), await modified("existing")]).toEqual([start + 1, start + 2, start + 3]);
    expect(kvValue((await get(emu, "/v1/kv/existing")).body)).toBe("new");

    // The new start fixture is the start state now: the same writes and a plain reset agree with the one-step run.
    for (const e of [emu, whole]) await e.reset();
    expect(emu.stateHash()).toBe(whole.stateHash());
    for (const e of [emu, whole]) await e.clock.advance(120_000);
    expect(emu.stateHash()).toBe(whole.stateHash());
    emu.close();
    whole.close();
  });

  it("a fixture refused at its last entity changes nothing: state, seed, start fixture, recording; readers meanwhile saw the state before", async () => {
    const emu = await createStandin({ fixture: { seed: 3, scheduler: { jobs: [job("before")] } } });
    const startHash = emu.stateHash();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    const hash = emu.stateHash();
    const budgets = () => {
      const { tape, journal } = emu.recording();
      return { tape: tape.budget, journal: [journal.capacity, journal.budget] };
    };
    const recording = budgets();
    const seen: number[] = [];
    const turn = async () => {
      seen.push((await get(emu, "/v1/kv/big/0")).status);
      seen.push((await get(emu, "/v1/kv/existing")).status);
    };
    const fixture = {
      seed: 9,
      recording: { tapeBytes: 1024 * 1024 },
      registry: { sessions: [{ Name: "ttl", TTL: "30s" }], kv: [...kv(COUNT), { Key: "locked", Value: "x", Session: "no-such-session" }] },
    };
    await expect(emu.reset(fixture, { turn })).rejects.toThrow(/registry\.kv\[20000\]\.Session/);
    expect(seen.length).toBeGreaterThan(4);
    expect(new Set(seen.filter((_, i) => i % 2 === 0))).toEqual(new Set([404]));
    expect(new Set(seen.filter((_, i) => i % 2 === 1))).toEqual(new Set([200]));
    expect(emu.stateHash()).toBe(hash);
    expect(emu.seed).toBe(3);
    expect(budgets()).toEqual(recording);
    // A plain reset still goes back to the old start fixture's state.
    await emu.reset();
    expect(emu.stateHash()).toBe(startHash);
    emu.close();
  });

  it("a small fixture refused in one step changes no recording budgets either", async () => {
    const emu = await createStandin();
    const budgets = () => {
      const { tape, journal } = emu.recording();
      return { tape: tape.budget, journal: [journal.capacity, journal.budget] };
    };
    const before = budgets();
    const fixture = { recording: { tapeBytes: 1024 * 1024, journalEntries: 50 }, registry: { kv: [{ Key: "locked", Session: "no-such-session" }] } };
    await expect(emu.reset(fixture)).rejects.toThrow(/registry\.kv\[0\]\.Session/);
    expect(budgets()).toEqual(before);
    emu.close();
  });

  it("the same through POST /_standin/reset: a read between slices is the state before; the answer's hash is the one-step reset's", async () => {
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    let done = false;
    const reset = control(emu, "/reset", { fixture: bigFixture() }).finally(() => (done = true));
    const reads: Array<{ existing: number; fixtureKey: number }> = [];
    let write: Promise<Response> | undefined;
    while (!done) {
      if (emu.documents.active) {
        reads.push({ existing: (await get(emu, "/v1/kv/existing")).status, fixtureKey: (await get(emu, "/v1/kv/big/5")).status });
        write ??= put(emu, "existing", "new");
      }
      await nextTurn();
    }
    const answer = (await (await reset).json()) as { stateHash: string; index: number };
    expect((await write!).status).toBe(200);
    expect(reads.length).toBeGreaterThan(2);
    expect(new Set(reads.map((r) => r.existing))).toEqual(new Set([200]));
    expect(new Set(reads.map((r) => r.fixtureKey))).toEqual(new Set([404]));
    const whole = await createStandin();
    await whole.reset(bigFixture());
    expect(answer.stateHash).toBe(whole.stateHash());
    expect(answer.index).toBe(whole.index);
    emu.close();
    whole.close();
  });

  it("the tape of a run with a large reset replays with no divergence (reads while it was built, a write that waited for it)", async () => {
    const emu = await createStandin();
    expect((await put(emu, "existing", "old")).status).toBe(200);
    let done = false;
    const reset = control(emu, "/reset", { fixture: { registry: { kv: kv(COUNT) } } }).finally(() => (done = true));
    let write: Promise<Response> | undefined;
    let reads = 0;
    while (!done) {
      if (emu.documents.active) {
        reads += (await get(emu, "/v1/kv/existing")).status === 200 ? 1 : 0;
        write ??= put(emu, "existing", "new");
      }
      await nextTurn();
    }
    expect((await reset).status).toBe(200);
    expect((await write!).status).toBe(200);
    expect(reads).toBeGreaterThan(1);
    expect((await get(emu, "/v1/kv/big/19999")).status).toBe(200);
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as { entries: Array<{ kind: string; method?: string }> };
    // The tape begins at the reset: the write that waited for it is on it.
    expect(tape.entries.filter((e) => e.kind === "request" && e.method === "PUT")).toHaveLength(1);
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.stateHash.actual).toBe(emu.stateHash());
    emu.close();
  });

  it("with other regions and datacenters: the same state as the one-step reset", async () => {
    const fixture = () => ({
      scheduler: { jobs: [job("home")], regions: { eu: { jobs: [job("far")] } } },
      registry: {
        kv: kv(3_000),
        datacenters: { dc2: { nodes: [{ Node: "n2", Address: "10.0.2.1" }], sessions: [{ Name: "far", Node: "n2" }], kv: kv(1_500) } },
      },
    });
    const sliced = await createStandin();
    let turns = 0;
    await sliced.reset(fixture(), {
      turn: async () => {
        turns++;
        await nextTurn();
      },
    });
    const whole = await createStandin();
    await whole.reset(fixture());
    expect(turns).toBeGreaterThan(4_500 / STAGED_SLICE_STEPS);
    expect(sliced.stateHash()).toBe(whole.stateHash());
    expect(sliced.index).toBe(whole.index);
    expect((await sliced.registry.request("/v1/kv/big/1499?dc=dc2")).status).toBe(200);
    sliced.close();
    whole.close();
  });

  it("a small fixture (one slice or less) is still built in one step", async () => {
    const emu = await createStandin();
    let turns = 0;
    await emu.reset({ registry: { kv: kv(STAGED_SLICE_STEPS) } }, { turn: async () => void turns++ });
    // Only the turn between checking the document and applying it.
    expect(turns).toBe(1);
    expect((await get(emu, `/v1/kv/big/${STAGED_SLICE_STEPS - 1}`)).status).toBe(200);
    emu.close();
  });
});

describe("a fixture the precheck checked is not checked again", () => {
  it("a large body handed over by the precheck: the emulator does not run the fixture check (reset and fixtures)", async () => {
    const emu = await createStandin();
    expect((await control(emu, "/reset", { fixture: { registry: { kv: kv(2_000) } } })).status).toBe(200);
    expect((await control(emu, "/fixtures", { registry: { kv: kv(2_000).map((e) => ({ ...e, Key: `more/${e.Key}` })) } })).status).toBe(200);
    expect(emu.fixtureChecks).toBe(0);
    expect((await get(emu, "/v1/kv/big/1999")).status).toBe(200);
    expect((await get(emu, "/v1/kv/more/big/1999")).status).toBe(200);
    // A bad large one is refused by the precheck's check, with the emulator's problems, and changes nothing.
    const hash = emu.stateHash();
    const refused = await control(emu, "/reset", { fixture: { registry: { kv: [...kv(2_000), { Key: "" }] } } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toMatch(/registry\.kv\[2000\]\.Key/);
    expect(emu.stateHash()).toBe(hash);
    emu.close();
  });

  it("a small body, and an in-process call, are checked by the emulator", async () => {
    const emu = await createStandin();
    expect((await control(emu, "/reset", { fixture: { registry: { kv: kv(1) } } })).status).toBe(200);
    expect(emu.fixtureChecks).toBe(1);
    expect((await control(emu, "/fixtures", { registry: { kv: [{ Key: "small" }] } })).status).toBe(200);
    expect(emu.fixtureChecks).toBe(2);
    await emu.reset({ registry: { kv: kv(COUNT) } }, { turn: nextTurn });
    await emu.applyFixture({ registry: { kv: [{ Key: "x" }] } });
    expect(emu.fixtureChecks).toBe(4);
    // Told it was checked by anything but a route's hand-over, it is still refused by the services' own checks.
    await expect(emu.applyFixture({ registry: { kv: [{ Key: "y", Session: "none" }] } }, { checked: true })).rejects.toThrow(/Session/);
    emu.close();
  });
});
