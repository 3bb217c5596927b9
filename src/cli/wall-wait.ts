/**
 * Real waiting for the commands that wait on another process (`wait-ready`,
 * `stop`): a deadline in wall time and a pause between looks. This is the
 * product's behaviour, not the emulator's: nothing here touches virtual time.
 * Wall time is read through core/clock, the one module that reads it.
 */
import { setTimeout as pauseFor } from "node:timers/promises";
import { InvalidArgumentError } from "commander";
import { wallNow } from "../core/clock.js";
import { parseDurationMs } from "../core/durations.js";

/** How long between two looks: often enough to notice readiness quickly, seldom enough to cost nothing. */
const POLL_INTERVAL_MS = 100;

/** A `--timeout` value: the milliseconds, and the Go duration as the user wrote it (for messages). */
export interface Timeout {
  ms: number;
  text: string;
}

/** Commander parser for a `--timeout` given as a Go duration (`30s`, `1m30s`, `500ms`). */
export function parseTimeout(text: string): Timeout {
  let ms: number;
  try {
    ms = parseDurationMs(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (ms < 0) throw new InvalidArgumentError("expected a duration of 0 or more");
  return { ms, text };
}

export class Deadline {
  private readonly at: number;

  constructor(ms: number) {
    this.at = wallNow() + ms;
  }

  /** Milliseconds left, never below 0. */
  remaining(): number {
    return Math.max(0, this.at - wallNow());
  }

  passed(): boolean {
    return this.remaining() === 0;
  }

  /** Pauses before the next look, no longer than what is left. The timer is a referenced one: the waiting command must stay alive. */
  async pause(): Promise<void> {
    await pauseFor(Math.min(POLL_INTERVAL_MS, this.remaining()));
  }
}
