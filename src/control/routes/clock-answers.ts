/**
 * What the clock routes (and `POST /await`) answer: the clock's status and
 * the timers an advance fired.
 */
import type { Clock, FiredTimer } from "../../core/clock.js";
import { formatInstant } from "../../core/instant.js";

/** The clock's status, with idle skipping's `locks` and `skips` when given (one literal: spreading two objects into one cost more than the rest of the request). */
export function clockStatus(clock: Clock, idle?: { locks: number; skips: number }): ClockStatusBody {
  const s = clock.status();
  const now = formatInstant(s.nowMs);
  const nextTimerAt = s.nextTimerAt === null ? null : formatInstant(s.nextTimerAt);
  if (idle) return { now, nowMs: s.nowMs, mode: s.mode, speed: s.speed, paused: s.paused, pendingTimers: s.pendingTimers, nextTimerAt, locks: idle.locks, skips: idle.skips };
  return { now, nowMs: s.nowMs, mode: s.mode, speed: s.speed, paused: s.paused, pendingTimers: s.pendingTimers, nextTimerAt };
}

interface ClockStatusBody {
  now: string;
  nowMs: number;
  mode: ReturnType<Clock["status"]>["mode"];
  speed: number;
  paused: boolean;
  pendingTimers: number;
  nextTimerAt: string | null;
  locks?: number;
  skips?: number;
}

export function advanceResult(clock: Clock, fired: FiredTimer[]) {
  return { now: clock.nowText(), fired: fired.map((f) => ({ at: formatInstant(f.at), kind: f.kind, subject: f.subject, detail: f.detail })) };
}
