import { describe, it, expect } from "vitest";
import { Clock } from "../../src/core/clock.js";
import { Ids } from "../../src/core/ids.js";
import { SNAPSHOT_FORMAT, captureState, hashState, restoreState, parseSnapshot, SnapshotError, type StateParts, type StateSnapshot } from "../../src/core/snapshot.js";
import { Store } from "../../src/core/store.js";

const START = 1_767_225_600_000; // 2026-01-01T00:00:00Z
const SEED = 7;

function freshParts(): StateParts {
  const store = new Store();
  const clock = new Clock({ startMs: START, undoSink: () => store.undoSink() });
  clock.handle("session.expire", () => undefined);
  clock.handle("deploy.step", () => undefined);
  return { store, clock, ids: new Ids(SEED) };
}

/** A state with rows in two tables, a pending timer, a moved clock and a used generator. */
function populated(): StateParts {
  const parts = freshParts();
  const { store, clock, ids } = parts;
  store.write(() => {
    store.table("jobs").put("web", { ID: "web", Count: 3 });
    store.table("sessions").put("s1", { ID: "s1", TTL: "10s" });
  });
  clock.advance("5s");
  clock.schedule({ at: START + 15_000, kind: "session.expire", subject: "s1", data: { ttl: 10_000 } });
  ids.uuid();
  return parts;
}

const hashOf = (parts: StateParts): string => hashState(captureState(parts, SEED));

/** JSON round trip, as the snapshot travels over HTTP or through a state file. */
const viaJSON = (snapshot: StateSnapshot): StateSnapshot => JSON.parse(JSON.stringify(snapshot));

describe("captureState", () => {
  it("captures format, seed, rng, clock and store", () => {
    const parts = populated();
    const snapshot = captureState(parts, SEED);
    expect(snapshot.format).toBe(SNAPSHOT_FORMAT);
    expect(SNAPSHOT_FORMAT).toBe("standin.snapshot/v1");
    expect(snapshot.seed).toBe(SEED);
    expect(snapshot.rng).toEqual(parts.ids.state());
    expect(snapshot.clock).toEqual(parts.clock.snapshot());
    expect(snapshot.store).toEqual(parts.store.snapshot());
    expect(snapshot.clock.nowMs).toBe(START + 5000);
    expect(snapshot.clock.timers).toHaveLength(1);
    expect(Object.keys(snapshot.store.tables)).toEqual(["jobs", "sessions"]);
  });
});

describe("hashState", () => {
  it("is a SHA-256 hex digest, stable across two captures of the same state", () => {
    const parts = populated();
    const a = hashOf(parts);
    const b = hashOf(parts);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    // And across two independently built identical states.
    expect(hashOf(populated())).toBe(a);
  });

  it.each<[string, (parts: StateParts) => void]>([
    ["a row changes", ({ store }) => store.write(() => store.table("jobs").put("web", { ID: "web", Count: 4 }))],
    ["a row is added", ({ store }) => store.write(() => store.table("jobs").put("api", { ID: "api", Count: 1 }))],
    ["a row is deleted", ({ store }) => store.write(() => store.table("sessions").delete("s1"))],
    ["the clock moves (no timer fires)", ({ clock }) => clock.advance(1)],
    ["a timer is scheduled", ({ clock }) => clock.schedule({ at: START + 60_000, kind: "deploy.step" })],
    ["a timer is cancelled", ({ clock }) => clock.cancel(clock.timers()[0]!.id)],
    ["the generator is drawn from", ({ ids }) => ids.nextUint32()],
  ])("changes when %s", (_label, mutate) => {
    const parts = populated();
    const before = hashOf(parts);
    mutate(parts);
    expect(hashOf(parts)).not.toBe(before);
  });

  it("changes when only a table index differs", () => {
    const snapshot = captureState(populated(), SEED);
    const bumped = viaJSON(snapshot);
    bumped.store.tables.jobs!.index += 1;
    expect(hashState(bumped)).not.toBe(hashState(snapshot));
  });

  it("changes when only a timer's data differs", () => {
    const snapshot = captureState(populated(), SEED);
    const other = viaJSON(snapshot);
    other.clock.timers[0] = { ...other.clock.timers[0]!, data: { ttl: 10_001 } };
    expect(hashState(other)).not.toBe(hashState(snapshot));
  });

  it("is independent of the order tables, rows and row fields were inserted in", () => {
    const one = freshParts();
    one.store.write(() => {
      one.store.table("a").put("1", { ID: "1", x: 1, y: 2 });
      one.store.table("a").put("2", { ID: "2" });
      one.store.table("b").put("3", { ID: "3" });
    });
    const two = freshParts();
    two.store.write(() => {
      two.store.table("b").put("3", { ID: "3" });
      two.store.table("a").put("2", { ID: "2" });
      two.store.table("a").put("1", { y: 2, x: 1, ID: "1" });
    });
    expect(hashOf(two)).toBe(hashOf(one));
  });

  it("ignores the clock's mode, speed and pause flag, and the informational seed", () => {
    const snapshot = captureState(populated(), SEED);
    const settings = viaJSON(snapshot);
    settings.clock.mode = "realtime";
    settings.clock.speed = 25;
    settings.clock.paused = true;
    settings.seed = SEED + 1;
    expect(hashState(settings)).toBe(hashState(snapshot));
  });
});

describe("restoreState", () => {
  it("gives back the original state (and hash) after mutations", () => {
    const parts = populated();
    const original = captureState(parts, SEED);
    const originalHash = hashState(original);
    const saved = viaJSON(original);
    const nextUuid = new Ids(0);
    nextUuid.restore(parts.ids.state());
    const expectedUuid = nextUuid.uuid();

    parts.store.write(() => {
      parts.store.table("jobs").put("web", { ID: "web", Count: 99 });
      parts.store.table("extra").put("e", { ID: "e" });
    });
    parts.clock.advance("1h"); // fires the session timer
    parts.clock.schedule({ at: START + 7_200_000, kind: "deploy.step" });
    parts.ids.uuid();
    expect(hashOf(parts)).not.toBe(originalHash);

    restoreState(parts, saved);

    expect(hashOf(parts)).toBe(originalHash);
    expect(captureState(parts, SEED)).toEqual(original);
    expect(parts.store.table("jobs").get("web")).toEqual({ ID: "web", Count: 3 });
    expect(parts.store.table("extra").size).toBe(0);
    expect(parts.clock.now()).toBe(START + 5000);
    expect(parts.clock.timers().map((t) => t.subject)).toEqual(["s1"]);
    expect(parts.ids.uuid()).toBe(expectedUuid);
  });

  it("makes a restored state replay identically", () => {
    const parts = populated();
    const saved = viaJSON(captureState(parts, SEED));
    const run = (): string => {
      parts.store.write(() => parts.store.table("jobs").put(parts.ids.uuid(), { ID: "x" }));
      parts.clock.advance("30s");
      return hashOf(parts);
    };
    const first = run();
    restoreState(parts, saved);
    expect(run()).toBe(first);
  });

  it("restores the store before the clock, so clock-restore listeners see the new store", () => {
    const parts = populated();
    const saved = viaJSON(captureState(parts, SEED));
    parts.store.write(() => parts.store.table("jobs").delete("web"));
    let seen: unknown = "not called";
    parts.clock.onRestore(() => (seen = parts.store.table("jobs").get("web")));
    restoreState(parts, saved);
    expect(seen).toEqual({ ID: "web", Count: 3 });
  });
});

describe("parseSnapshot", () => {
  it("accepts a captured snapshot after a JSON round trip", () => {
    const snapshot = viaJSON(captureState(populated(), SEED));
    expect(parseSnapshot(snapshot)).toEqual(snapshot);
  });

  it("accepts the snapshot of a fresh state", () => {
    expect(() => parseSnapshot(viaJSON(captureState(freshParts(), 0)))).not.toThrow();
  });

  it.each<[string, (s: Record<string, any>) => void]>([
    ["a wrong format string", (s) => (s.format = "standin.snapshot/v2")],
    ["a missing format", (s) => delete s.format],
    ["a negative rng word", (s) => (s.rng.words[2] = -1)],
    ["an rng word above 2^32-1", (s) => (s.rng.words[0] = 2 ** 32)],
    ["a fractional rng word", (s) => (s.rng.words[1] = 0.5)],
    ["three rng words", (s) => s.rng.words.pop()],
    ["another rng algorithm", (s) => (s.rng.algorithm = "mt19937")],
    ["a negative seed", (s) => (s.seed = -1)],
    ["an unknown top-level key", (s) => (s.extra = true)],
    ["a non-integer clock instant", (s) => (s.clock.nowMs = 1.5)],
    ["an unknown clock mode", (s) => (s.clock.mode = "turbo")],
    ["a zero speed", (s) => (s.clock.speed = 0)],
    ["a timer without kind", (s) => (s.clock.timers[0].kind = "")],
    ["a timer with id 0", (s) => (s.clock.timers[0].id = 0)],
    ["a timer with an extra key", (s) => (s.clock.timers[0].extra = 1)],
    ["a store index of 0", (s) => (s.store.index = 0)],
    ["a row that is not an object", (s) => (s.store.tables.jobs.rows.web = "web")],
    ["a negative table index", (s) => (s.store.tables.jobs.index = -1)],
  ])("rejects a snapshot with %s", (_label, corrupt) => {
    const snapshot = viaJSON(captureState(populated(), SEED)) as unknown as Record<string, any>;
    expect(() => parseSnapshot(snapshot)).not.toThrow();
    corrupt(snapshot);
    expect(() => parseSnapshot(snapshot)).toThrow(SnapshotError);
  });
});
