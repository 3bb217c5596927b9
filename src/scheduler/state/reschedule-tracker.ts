/**
 * An allocation's RescheduleTracker as stored and as Nomad encodes it: the
 * reschedules that led to it (the engine's rescheduling.ts writes them).
 * Rows keep instants in virtual milliseconds (a unix-nanosecond instant does
 * not fit a double exactly); the view renders RescheduleTime in unix
 * nanoseconds. Delay is kept in nanoseconds, as Nomad's durations are.
 */

export const NS_PER_MS = 1_000_000;

export interface RescheduleEventRow {
  /** Virtual ms (the view renders unix nanoseconds). */
  readonly RescheduleTime: number;
  readonly PrevAllocID: string;
  readonly PrevNodeID: string;
  /** Nanoseconds. */
  readonly Delay: number;
}

export interface RescheduleTrackerRow {
  readonly Events: readonly RescheduleEventRow[];
  /** structs.LastRescheduleSuccess ("ok") or LastRescheduleFailedToPlace ("no placement"). */
  readonly LastReschedule: string;
}

/** The view of a tracker row: Nomad's RescheduleTracker (RescheduleTime in unix nanoseconds). */
export function rescheduleTrackerView(tracker: RescheduleTrackerRow | null | undefined): Record<string, unknown> | null {
  if (!tracker) return null;
  return {
    // Go's nil slice: a tracker noted "no placement" before any reschedule has no events.
    Events:
      tracker.Events.length === 0
        ? null
        : tracker.Events.map((e) => ({ RescheduleTime: BigInt(e.RescheduleTime) * BigInt(NS_PER_MS), PrevAllocID: e.PrevAllocID, PrevNodeID: e.PrevNodeID, Delay: e.Delay })),
    LastReschedule: tracker.LastReschedule,
  };
}
