/**
 * Waiting for blocking queries to park, by the emulator's own count, instead
 * of sleeping a few real milliseconds and hoping: on a loaded machine a sleep
 * can end before the query parks (a later "not answered yet" check then
 * proves nothing) and on a quiet one it is wasted time.
 */
import { expect } from "vitest";

interface HasWatchers {
  readonly watchers: { readonly parked: number };
}

/** Gives the event loop turns until `count` queries are parked (bounded in turns, not time), then asserts it. */
export async function untilParked(emu: HasWatchers, count: number): Promise<void> {
  for (let turn = 0; turn < 1_000_000 && emu.watchers.parked < count; turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(emu.watchers.parked, "parked blocking queries").toBe(count);
}

/** A few turns of the event loop: enough for a wrongly woken query to answer, were it woken. */
export async function settleTurns(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}
