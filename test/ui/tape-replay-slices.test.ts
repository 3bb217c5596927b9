/**
 * A large tape opened by the dashboard (or `standin replay`) does not hold
 * the event loop: its entries are checked a slice at a time (checkTape, with
 * the verdict and the words of the whole check, parseTape), and replayed one
 * at a time with turns between them; the report is the one `standin replay`
 * gives for the same tape. Counts of slices and turns, never a time.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TapeEntry } from "../../src/control/tape.js";
import { createStandin, type Standin } from "../../src/emulator.js";
import { createHash } from "node:crypto";
import { replayTape } from "../../src/replay.js";
import { INDEX_SLICE_BYTES, RecordedBodies } from "../../src/replay-body-difference.js";
import { checkTape, parseTape, TAPE_CHECK_SLICE, TapeError } from "../../src/replay-tape-check.js";
import { call } from "../support/call.js";
import { turnsDuring } from "../support/turns.js";
import { type LazyTape, madeWhole, TapeSession } from "../../src/ui/tape-session.js";

type Json = any;

let emu: Standin | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

/** A tape of `requests` KV writes and reads, with a clock move every 500. */
async function recordTape(requests: number): Promise<Json> {
  emu = await createStandin({});
  for (let i = 0; i < requests; i++) {
    if (i % 2 === 0) await emu.registry.request(`/v1/kv/k/${i % 50}`, { method: "PUT", body: `v${i}` });
    else await (await emu.registry.request(`/v1/kv/k/${(i - 1) % 50}`)).arrayBuffer();
    if (i % 500 === 499) await call(emu.scheduler, "POST", "/_standin/clock/advance", { by: "10s" });
  }
  const tape = (await call(emu.scheduler, "GET", "/_standin/tape")).body as Json;
  emu.close();
  emu = undefined;
  return tape;
}

/** What a check says of a document: the tape, or the TapeError's words. */
async function verdict(check: (document: unknown) => unknown, document: unknown): Promise<string> {
  try {
    await check(document);
    return "ok";
  } catch (error) {
    expect(error).toBeInstanceOf(TapeError);
    return (error as Error).message;
  }
}

const validTape = (entries: number): Json => ({
  standinTape: 1,
  start: { seed: 1, fixtures: [], clock: { startMs: 0, mode: "manual", speed: 1 }, compatHeaders: false, stateHash: "h" },
  entries: Array.from({ length: entries }, (_, i) => ({ kind: "clock", seq: i + 1, op: "advance-to", to: i + 1 })),
  truncated: false,
  end: { stateHash: "h", index: 1 },
});

describe("the tape check, a slice at a time", () => {
  it("gives the whole check's verdict and words, issues in the same order with the tape's own entry indexes", async () => {
    const size = TAPE_CHECK_SLICE * 2 + 17;
    const badLate = validTape(size);
    badLate.entries[TAPE_CHECK_SLICE + 3] = { kind: "nap", seq: "x" };
    badLate.entries[size - 1] = 7;
    const badEverywhere = validTape(size);
    badEverywhere.start.seed = "one";
    badEverywhere.entries[TAPE_CHECK_SLICE * 2] = { seq: 1 };
    badEverywhere.truncated = "no";
    delete badEverywhere.end;
    const manyBad = validTape(size);
    for (let i = 0; i < size; i += 10) manyBad.entries[i] = { kind: "request" };
    const realtime = validTape(TAPE_CHECK_SLICE + 1);
    realtime.start.clock.mode = "realtime";
    const documents: Record<string, unknown> = {
      valid: validTape(size),
      badLate,
      badEverywhere,
      manyBad,
      realtime,
      entriesNotAList: { ...validTape(1), entries: { 0: {} } },
      noEntries: (({ entries: _, ...rest }) => rest)(validTape(1)),
      notAnObject: [validTape(1)],
      nothing: null,
      wrongVersion: { ...validTape(3), standinTape: 2 },
    };
    for (const [name, document] of Object.entries(documents)) {
      const sliced = await verdict(checkTape, document);
      expect(sliced, name).toBe(await verdict(parseTape, document));
      expect(sliced === "ok", name).toBe(name === "valid");
    }
    // The indexes are the tape's, not the slice's.
    expect(await verdict(checkTape, badLate)).toContain(`entries[${TAPE_CHECK_SLICE + 3}].kind: Invalid type`);
    expect(await verdict(checkTape, badLate)).toContain(`entries[${size - 1}]: Invalid type`);
  });

  it("checks at most TAPE_CHECK_SLICE entries between two turns of the event loop", async () => {
    const size = TAPE_CHECK_SLICE * 3 + 1;
    let turns = 0;
    const tape = validTape(size);
    expect(await checkTape(tape, async () => void turns++)).toBe(tape);
    // Four slices: three turns between them.
    expect(turns).toBe(3);
  });
});

describe("the dashboard's replay of a large tape", () => {
  it("gives the report standin replay gives, and other work turns between its entries", async () => {
    const tape = await recordTape(TAPE_CHECK_SLICE + 100);
    // Two slices of the check.
    expect(tape.entries.length).toBeGreaterThan(TAPE_CHECK_SLICE);
    const cli = await replayTape(tape);
    expect(cli).toMatchObject({ ok: true, divergences: [], stateHash: { expected: tape.end.stateHash, actual: tape.end.stateHash } });

    emu = await createStandin({ tape: false });
    const { result: opened, turns } = await turnsDuring(() => call(emu!.scheduler, "POST", "/_standin/ui/api/tape?name=big.json", tape));
    expect(opened.status).toBe(200);
    const timeline = opened.body as Json;
    expect(timeline).toMatchObject({ entries: tape.entries.length, divergences: [], report: { ok: cli.ok, expected: cli.stateHash.expected, actual: cli.stateHash.actual } });
    // Three turns after every entry, and one between the check's slices: never the whole tape in one step.
    expect(turns).toBeGreaterThanOrEqual(tape.entries.length * 3);
    expect((await call(emu.scheduler, "GET", `/_standin/ui/api/instant?source=tape&seq=${tape.entries.at(-1).seq}`)).body.stateHash).toBe(tape.end.stateHash);
  }, 60_000);
});

describe("the recorded bodies a divergence is shown from", () => {
  it("are indexed a megabyte at a time, with a turn of the event loop between slices", async () => {
    const body = (i: number) => `${i}:${"b".repeat(64 * 1024)}`;
    const count = 200;
    const entries = Array.from(
      { length: count },
      (_, i) =>
        ({
          kind: "request",
          seq: i + 1,
          service: "registry",
          method: "PUT",
          path: `/v1/kv/${i}`,
          headers: {},
          body: { text: body(i), bytes: body(i).length },
        }) as unknown as TapeEntry,
    );
    let turns = 0;
    const bodies = new RecordedBodies(entries, async () => void turns++);
    const last = body(count - 1);
    const found = await bodies.bytesOf({ sha256: createHash("sha256").update(last).digest("hex"), bytes: last.length });
    expect(Buffer.from(found!).toString()).toBe(last);
    // About 13 MB hashed: a turn after every megabyte, none more than one slice (and one body) apart.
    const hashed = entries.reduce((sum, _, i) => sum + body(i).length, 0);
    expect(turns).toBeGreaterThanOrEqual(Math.floor(hashed / (INDEX_SLICE_BYTES + body(0).length + 512)));
    // Indexed once: a second body asked for costs no more turns.
    const first = body(0);
    expect(Buffer.from((await bodies.bytesOf({ sha256: createHash("sha256").update(first).digest("hex"), bytes: first.length }))!).toString()).toBe(first);
    expect(turns).toBeLessThanOrEqual(Math.ceil(hashed / INDEX_SLICE_BYTES));
  });
});

describe("the live run's timeline", () => {
  it("makes only the entries it has not replayed yet, a slice at a time, and replays them as a whole tape would", async () => {
    emu = await createStandin({});
    const put = (i: number) => emu!.registry.request(`/v1/kv/live/${i % 20}`, { method: "PUT", body: `v${i}` });
    for (let i = 0; i < 30; i++) await put(i);
    let made = 0;
    const counted = async (): Promise<LazyTape> => {
      const lazy = (await emu!.exportTapeLazily()) as LazyTape;
      return {
        ...lazy,
        entries: {
          length: lazy.entries.length,
          item: (i: number) => {
            made++;
            return lazy.entries.item(i);
          },
        },
      };
    };
    const session = await TapeSession.open(await madeWhole(await counted()), "live", false);
    expect(made).toBe(30);
    for (let i = 30; i < 30 + TAPE_CHECK_SLICE * 2 + 10; i++) await put(i);
    made = 0;
    let turns = 0;
    expect(await session.follow(await counted(), async () => void turns++)).toBe(true);
    // The new entries and the last one replayed (to tell it is the same tape): not the whole tape again.
    expect(made).toBe(TAPE_CHECK_SLICE * 2 + 10 + 1);
    expect(turns).toBe(2);
    const timeline = session.timeline();
    expect(timeline.entries).toBe(emu.tape.length);
    expect(timeline.divergences).toEqual([]);
    // The state after the last entry is the live one.
    const last = await session.instant(timeline.items.at(-1)!.seq);
    expect(last!.stateHash).toBe(emu.stateHash());
    session.close();
  }, 60_000);
});
