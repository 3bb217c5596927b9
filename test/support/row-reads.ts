/**
 * Counts the table rows a piece of work reads through full scans
 * (Table.sorted / values / ids), prefix reads (Table.withPrefix) and
 * secondary-index lookups (Table.groupBy),
 * so a test can hold work that must be linear to a multiple of the objects
 * it touches without timing anything. Install before the emulator is built
 * (the lookups are made when the services are) and restore the mocks after
 * (vi.restoreAllMocks).
 */
import { vi } from "vitest";
import { Table } from "../../src/core/store.js";

export interface RowReads {
  rows: number;
  counting: boolean;
}

export function countRowReads(): RowReads {
  const reads: RowReads = { rows: 0, counting: false };
  for (const method of ["sorted", "values", "ids"] as const) {
    const original = Table.prototype[method] as (this: Table) => unknown;
    vi.spyOn(Table.prototype, method).mockImplementation(function (this: Table) {
      if (reads.counting) reads.rows += this.size;
      return original.call(this) as never;
    });
  }
  // A prefix read (Table.withPrefix) reads the rows it returns.
  const withPrefix = Table.prototype.withPrefix;
  vi.spyOn(Table.prototype, "withPrefix").mockImplementation(function (this: Table, prefix: string) {
    const rows = withPrefix.call(this, prefix);
    if (reads.counting) reads.rows += rows.length;
    return rows;
  });
  const groupBy = Table.prototype.groupBy;
  vi.spyOn(Table.prototype, "groupBy").mockImplementation(function (this: Table, keyOf) {
    const lookup = groupBy.call(this, keyOf);
    return Object.assign(
      (key: string) => {
        const rows = lookup(key);
        if (reads.counting) reads.rows += rows.length;
        return rows;
      },
      { count: lookup.count },
    );
  });
  return reads;
}

/** Rows read while `fn` runs (awaited). */
export async function rowsReadDuring(reads: RowReads, fn: () => unknown): Promise<number> {
  const before = reads.rows;
  reads.counting = true;
  try {
    await fn();
  } finally {
    reads.counting = false;
  }
  return reads.rows - before;
}
