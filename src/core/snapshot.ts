/**
 * The whole state as one JSON document: store (tables and indexes), clock
 * (now and pending timers) and the random generator. Restoring it gives back
 * exactly the state it was taken from; the hash identifies a state so two
 * runs can be compared byte for byte.
 */
import { createHash } from "node:crypto";
import * as v from "valibot";
import type { Clock, ClockSnapshot } from "./clock.js";
import type { Ids, RngState } from "./ids.js";
import { canonicalJSONChunks, canonicalJSONChunksInTurns } from "./json.js";
import { describeIssues } from "./validation.js";
import type { Store, StoreSnapshot } from "./store.js";

export const SNAPSHOT_FORMAT = "standin.snapshot/v1";

export interface StateSnapshot {
  format: typeof SNAPSHOT_FORMAT;
  /** The seed the run started from (informational: the generator's state is `rng`). */
  seed: number;
  rng: RngState;
  clock: ClockSnapshot;
  store: StoreSnapshot;
}

export interface StateParts {
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: Ids;
}

export function captureState(parts: StateParts, seed: number): StateSnapshot {
  // Deferred writes first (core/deferred-writes): they may cancel timers the clock's part holds.
  parts.store.settle();
  return { format: SNAPSHOT_FORMAT, seed, rng: parts.ids.state(), clock: parts.clock.snapshot(), store: parts.store.snapshot() };
}

/** Restores store, generator and clock (in that order, so watchers woken by the clock see the new store). */
export function restoreState(parts: StateParts, snapshot: StateSnapshot): void {
  parts.store.restore(snapshot.store);
  parts.ids.restore(snapshot.rng);
  parts.clock.restore(snapshot.clock);
}

/**
 * SHA-256 of the canonical JSON of what makes two states equal: rows,
 * indexes, virtual time, pending timers and the generator. The clock's mode,
 * speed and pause flag are settings, not state, and are left out.
 */
export function hashState(snapshot: StateSnapshot): string {
  // Hashed piece by piece (the same bytes as canonicalJSON(essence)): the whole text at once is a rope of
  // millions of pieces, and building, flattening and collecting it took several times the hashing (10k jobs: 3 s).
  const hash = createHash("sha256");
  canonicalJSONChunks(hashedEssence(snapshot), (chunk) => hash.update(chunk));
  return hash.digest("hex");
}

/**
 * {@link hashState}, with `turn()` awaited between slices of the text: the
 * answers of the document routes carry the hash of a state of any size. The
 * snapshot is a capture (frozen rows, its own tables), so writes made
 * meanwhile do not change what is hashed.
 */
export async function hashStateInTurns(snapshot: StateSnapshot, turn: () => Promise<void>): Promise<string> {
  const hash = createHash("sha256");
  await canonicalJSONChunksInTurns(hashedEssence(snapshot), (chunk) => hash.update(chunk), turn);
  return hash.digest("hex");
}

/** What makes two states equal (see hashState). */
function hashedEssence(snapshot: StateSnapshot): unknown {
  const { nowMs, nextTimerId, timers } = snapshot.clock;
  return { rng: snapshot.rng, clock: { nowMs, nextTimerId, timers }, store: snapshot.store };
}

const uint = v.pipe(v.number(), v.integer(), v.minValue(0));
const uint32 = v.pipe(uint, v.maxValue(0xffff_ffff));
const int = v.pipe(v.number(), v.integer());

const timerSchema = v.strictObject({
  id: v.pipe(int, v.minValue(1)),
  at: int,
  kind: v.pipe(v.string(), v.minLength(1)),
  subject: v.string(),
  data: v.unknown(),
});

const stateSnapshotSchema = v.strictObject({
  format: v.literal(SNAPSHOT_FORMAT),
  seed: uint,
  rng: v.strictObject({ algorithm: v.literal("sfc32"), words: v.tuple([uint32, uint32, uint32, uint32]) }),
  clock: v.strictObject({
    nowMs: int,
    nextTimerId: v.pipe(int, v.minValue(1)),
    mode: v.picklist(["manual", "auto", "realtime"]),
    speed: v.pipe(v.number(), v.gtValue(0)),
    paused: v.boolean(),
    timers: v.array(timerSchema),
  }),
  store: v.strictObject({
    index: v.pipe(int, v.minValue(1)),
    tables: v.record(v.string(), v.strictObject({ index: uint, rows: v.record(v.string(), v.looseObject({})) })),
    scopes: v.optional(v.record(v.string(), v.pipe(int, v.minValue(1)))),
  }),
});

export class SnapshotError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid snapshot: ${problems.join("; ")}`);
    this.name = "SnapshotError";
  }
}

/** Validates a snapshot document received from outside (PUT /_standin/snapshot, --state-file); throws SnapshotError naming each bad path. */
export function parseSnapshot(document: unknown): StateSnapshot {
  const result = v.safeParse(stateSnapshotSchema, document);
  if (!result.success) throw new SnapshotError(describeIssues(result.issues));
  return result.output as StateSnapshot;
}
