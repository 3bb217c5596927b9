/**
 * The whole state as one JSON document: store (tables and indexes), clock
 * (now and pending timers) and the random generator. Restoring it gives back
 * exactly the state it was taken from; the hash identifies a state so two
 * runs can be compared byte for byte.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { Clock, ClockSnapshot } from "./clock.js";
import type { Ids, RngState } from "./ids.js";
import { canonicalJSON } from "./json.js";
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
  const { nowMs, nextTimerId, timers } = snapshot.clock;
  const essence = { rng: snapshot.rng, clock: { nowMs, nextTimerId, timers }, store: snapshot.store };
  return createHash("sha256").update(canonicalJSON(essence)).digest("hex");
}

const timerSchema = z.strictObject({
  id: z.number().int().positive(),
  at: z.number().int(),
  kind: z.string().min(1),
  subject: z.string(),
  data: z.unknown(),
});

/** Validates a snapshot document received from outside (PUT /_standin/snapshot, --state-file). */
export const stateSnapshotSchema = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  seed: z.number().int().nonnegative(),
  rng: z.strictObject({
    algorithm: z.literal("sfc32"),
    words: z.tuple([z.number().int(), z.number().int(), z.number().int(), z.number().int()]).refine((w) => w.every((x) => x >= 0 && x <= 0xffff_ffff), "rng words must be uint32"),
  }),
  clock: z.strictObject({
    nowMs: z.number().int(),
    nextTimerId: z.number().int().positive(),
    mode: z.enum(["manual", "realtime"]),
    speed: z.number().positive(),
    paused: z.boolean(),
    timers: z.array(timerSchema),
  }),
  store: z.strictObject({
    index: z.number().int().positive(),
    tables: z.record(z.string(), z.strictObject({ index: z.number().int().nonnegative(), rows: z.record(z.string(), z.looseObject({})) })),
  }),
});
