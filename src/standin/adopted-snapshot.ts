/**
 * parseSnapshot for a document handed over (PUT /_standin/snapshot's body,
 * parsed for its request alone), without its cost growing with the rows:
 * the schema takes every row as any object and builds a copy of each (1 s
 * for 100 000 rows, in one step of the event loop). Here the document is
 * checked with its tables' rows left out, and the rows are only checked to
 * be objects and kept as they are (the store freezes them as it restores).
 * Anything else (a row that is not an object, tables that are not a record)
 * goes through parseSnapshot whole, which answers what it always answered.
 */
import { parseSnapshot, type StateSnapshot } from "../core/snapshot.js";

type Record_ = Record<string, unknown>;

const isRecord = (value: unknown): value is Record_ => typeof value === "object" && value !== null && !Array.isArray(value);

export function parseAdoptedSnapshot(document: unknown): StateSnapshot {
  const store = isRecord(document) ? document.store : undefined;
  const tables = isRecord(store) ? store.tables : undefined;
  if (!isRecord(tables)) return parseSnapshot(document);
  const rowsOf = new Map<string, Record_>();
  const withoutRows: Record_ = {};
  for (const name in tables) {
    const table = tables[name];
    const rows = isRecord(table) ? table.rows : undefined;
    if (!isRecord(rows)) return parseSnapshot(document);
    for (const id in rows) if (!isRecord(rows[id])) return parseSnapshot(document);
    rowsOf.set(name, rows);
    withoutRows[name] = { ...(table as Record_), rows: {} };
  }
  const parsed = parseSnapshot({ ...(document as Record_), store: { ...(store as Record_), tables: withoutRows } });
  for (const [name, rows] of rowsOf) (parsed.store.tables[name] as { rows: Record_ }).rows = rows;
  return parsed;
}
