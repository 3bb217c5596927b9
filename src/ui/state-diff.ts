/**
 * What changed between two states, for the dashboard's state-at-instant
 * view: per table, the rows added, removed and changed (with the fields
 * that changed, each value cut short), the clock's move, and the timers
 * scheduled and gone. Rows are frozen and shared between snapshots, so an
 * unchanged row is the same object and costs one comparison.
 */
import type { StateSnapshot } from "../core/snapshot.js";
import type { TimerRecord } from "../core/clock.js";

export interface RowChange {
  readonly table: string;
  readonly key: string;
  readonly change: "added" | "removed" | "changed";
  /** For a changed row: field → [before, after], as JSON cut to VALUE_CHARS. */
  readonly fields?: Readonly<Record<string, readonly [string, string]>>;
}

export interface StateDiff {
  readonly clock: { readonly from: number; readonly to: number };
  readonly index: { readonly from: number; readonly to: number };
  readonly rows: readonly RowChange[];
  /** Rows past MAX_ROWS left out. */
  readonly rowsDropped: number;
  readonly timers: { readonly added: readonly TimerRecord[]; readonly removed: readonly TimerRecord[] };
}

const MAX_ROWS = 500;
const VALUE_CHARS = 120;

export function diffStates(before: StateSnapshot, after: StateSnapshot): StateDiff {
  const rows: RowChange[] = [];
  let rowsDropped = 0;
  const add = (change: RowChange) => (rows.length < MAX_ROWS ? rows.push(change) : rowsDropped++);
  const tables = new Set([...Object.keys(before.store.tables), ...Object.keys(after.store.tables)]);
  for (const table of [...tables].sort()) {
    const a = before.store.tables[table]?.rows ?? {};
    const b = after.store.tables[table]?.rows ?? {};
    if (a === b) continue;
    for (const key of Object.keys(b)) {
      if (!(key in a)) add({ table, key, change: "added" });
      else if (a[key] !== b[key] && json(a[key]) !== json(b[key])) add({ table, key, change: "changed", fields: changedFields(a[key], b[key]) });
    }
    for (const key of Object.keys(a)) if (!(key in b)) add({ table, key, change: "removed" });
  }
  const ids = (timers: readonly TimerRecord[]) => new Set(timers.map((t) => t.id));
  const [was, is] = [ids(before.clock.timers), ids(after.clock.timers)];
  return {
    clock: { from: before.clock.nowMs, to: after.clock.nowMs },
    index: { from: before.store.index, to: after.store.index },
    rows,
    rowsDropped,
    timers: { added: after.clock.timers.filter((t) => !was.has(t.id)), removed: before.clock.timers.filter((t) => !is.has(t.id)) },
  };
}

function changedFields(before: unknown, after: unknown): Record<string, [string, string]> {
  const out: Record<string, [string, string]> = {};
  if (!isRecord(before) || !isRecord(after)) return { "": [cut(json(before)), cut(json(after))] };
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [x, y] = [json(before[field]), json(after[field])];
    if (x !== y) out[field] = [cut(x), cut(y)];
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function json(value: unknown): string {
  return JSON.stringify(value) ?? "undefined";
}

function cut(text: string): string {
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}
