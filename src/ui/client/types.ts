/** The shapes the page reads (as the server sends them: src/core/snapshot.ts, src/ui/tape-session.ts, src/ui/state-diff.ts). */
export interface Timer {
  id: number;
  at: number;
  kind: string;
  subject: string;
}

export interface Snapshot {
  clock: { nowMs: number; mode: string; timers: Timer[] };
  store: { index: number; tables: Record<string, { index: number; rows: Record<string, unknown> }> };
}

export interface ClockStatus {
  now: string;
  nowMs: number;
  mode: string;
  paused: boolean;
  pendingTimers: number;
  nextTimerAt: string | null;
  locks?: number;
  skips?: number;
}

export interface TimelineItem {
  seq: number;
  at: number;
  lane: string;
  kind: string;
  label: string;
  status?: number;
  subject?: string;
}

export interface Divergence {
  seq: number;
  entry: string;
  what: string;
}

export interface Timeline {
  source: string;
  session: number;
  from: number;
  entries: number;
  items: TimelineItem[];
  itemsDropped: number;
  divergences: Divergence[];
  truncated: boolean;
  start: { at: number; stateHash: string };
  report?: { ok: boolean; expected: string; actual: string };
}

export interface RowChange {
  table: string;
  key: string;
  change: "added" | "removed" | "changed";
  fields?: Record<string, [string, string]>;
}

export interface Instant {
  seq: number;
  entry: string;
  during?: true;
  at: number;
  index: number;
  stateHash: string;
  snapshot: Snapshot;
  diff: { clock: { from: number; to: number }; rows: RowChange[]; rowsDropped: number; timers: { added: Timer[]; removed: Timer[] } };
}
