/**
 * A table's rows and what is derived from them (secondary indexes, running
 * sums, key order), kept in step by setRow/removeRow: the store's (store.ts)
 * building blocks. A table's state is replaced whole by a restore or a
 * staged write (a copy swapped in), never shared between two tables.
 */

/** A stored row: frozen JSON (see store.ts). */
export type Row = { readonly [key: string]: unknown };
/**
 * What a table is whatever rows it holds: its derived indexes' definitions and its listeners. A
 * table's state and a staged copy of it (Store.writeStaged) share one shape, so an index or a watcher
 * registered at any time covers both.
 */
export interface TableShape {
  /** The scope whose index sequence this table's writes take ("" = unscoped). */
  readonly scope: string;
  /** Secondary indexes (Table.groupBy): the group (or groups) a row is in. */
  readonly groupings: Array<Grouping["keyOf"]>;
  /** Running sums (Table.sumBy). */
  readonly sums: Array<Pick<Totals, "keyOf" | "valuesOf">>;
  /** Told of every row change (Table.watch), undone ones included; not of restores. */
  readonly watchers: Array<(id: string, row: Row | undefined, previous: Row | undefined) => void>;
}

export interface TableState {
  readonly shape: TableShape;
  index: number;
  rows: Map<string, Row>;
  /** Secondary indexes' members, by position in `shape.groupings`, kept in step with `rows` by setRow/removeRow; undefined until first used, and again after a restore. */
  groupings: Array<Grouping | undefined>;
  /** Running sums, by position in `shape.sums`, kept in step with `rows` as groupings are. */
  sums: Array<Totals | undefined>;
  /** The IDs in key order (Table.sorted, Table.withPrefix); undefined until first used, and again after a restore. */
  order: KeyOrder | undefined;
}

/** A table's state with no rows. */
export function emptyState(shape: TableShape): TableState {
  return { shape, index: 0, rows: new Map(), groupings: [], sums: [], order: undefined };
}

/**
 * A copy of a table's state that a staged write changes while readers keep the original:
 * its own rows map and key order (copied: O(rows), one step); its groupings and sums are left to
 * be rebuilt from its rows when first used, as after a restore (copying them costs as much).
 */
export function stagedCopy(state: TableState): TableState {
  const order = state.order && { ids: [...state.order.ids], added: new Set(state.order.added), removed: new Set(state.order.removed) };
  return { shape: state.shape, index: state.index, rows: new Map(state.rows), groupings: [], sums: [], order };
}

/**
 * The IDs of a table in key order, kept so that an ordered read costs what it returns rather than a
 * sort of the whole table each time (a KV prefix read of 10 keys among 100,000 sorted them all).
 * Inserts and deletes are noted in O(1) and settled at the next read: a few by binary search, many
 * (a fixture, a delete-tree) by one filter or sort, so neither a bulk write nor a read goes quadratic.
 */
export interface KeyOrder {
  ids: string[];
  /** In `rows`, not yet in `ids`. */
  readonly added: Set<string>;
  /** In `ids`, no longer in `rows`. */
  readonly removed: Set<string>;
}

/** Below this many pending changes, each is settled by binary search and splice; above, by one pass. */
const ORDER_SPLICE_LIMIT = 32;

const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The first position in sorted `ids` whose ID is not below `id`. */
export function lowerBound(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ids[mid]! < id) low = mid + 1;
    else high = mid;
  }
  return low;
}

export function settledOrder(state: TableState): string[] {
  const order = state.order;
  if (!order) {
    state.order = { ids: [...state.rows.keys()].sort(compareIds), added: new Set(), removed: new Set() };
    return state.order.ids;
  }
  if (order.removed.size > ORDER_SPLICE_LIMIT) order.ids = order.ids.filter((id) => !order.removed.has(id));
  else for (const id of order.removed) order.ids.splice(lowerBound(order.ids, id), 1);
  order.removed.clear();
  if (order.added.size > ORDER_SPLICE_LIMIT) order.ids = [...order.ids, ...order.added].sort(compareIds);
  else for (const id of order.added) order.ids.splice(lowerBound(order.ids, id), 0, id);
  order.added.clear();
  return order.ids;
}

export interface Totals {
  /** The group a row counts towards, or undefined for none. */
  readonly keyOf: (row: Row) => string | undefined;
  /** What the row adds to its group's sums (always the same length for a table). */
  readonly valuesOf: (row: Row) => readonly number[];
  /** Group key → sums. */
  readonly byKey: Map<string, number[]>;
}

export function addToTotals(totals: Totals, row: Row, sign: 1 | -1): void {
  const key = totals.keyOf(row);
  if (key === undefined) return;
  const values = totals.valuesOf(row);
  let sums = totals.byKey.get(key);
  if (!sums) totals.byKey.set(key, (sums = values.map(() => 0)));
  for (let i = 0; i < values.length; i++) sums[i]! += sign * values[i]!;
}

export interface Grouping {
  /** The group (or groups: a row may be in several, or none) a row is in. */
  readonly keyOf: (row: Row) => string | readonly string[];
  /** Group key → IDs. */
  readonly members: Map<string, Set<string>>;
}

export function setRow(state: TableState, id: string, row: Row): void {
  const previous = state.rows.get(id);
  state.rows.set(id, row);
  // A re-inserted ID is still in the order: it only stops being noted as removed.
  if (previous === undefined && state.order && !state.order.removed.delete(id)) state.order.added.add(id);
  for (const grouping of state.groupings) {
    if (!grouping) continue;
    if (previous !== undefined) leaveGroups(grouping, grouping.keyOf(previous), id);
    joinGroups(grouping, grouping.keyOf(row), id);
  }
  for (const totals of state.sums) {
    if (!totals) continue;
    if (previous !== undefined) addToTotals(totals, previous, -1);
    addToTotals(totals, row, 1);
  }
  for (const watcher of state.shape.watchers) watcher(id, row, previous);
}

export function removeRow(state: TableState, id: string): void {
  const previous = state.rows.get(id);
  if (previous === undefined) return;
  state.rows.delete(id);
  if (state.order && !state.order.added.delete(id)) state.order.removed.add(id);
  for (const grouping of state.groupings) if (grouping) leaveGroups(grouping, grouping.keyOf(previous), id);
  for (const totals of state.sums) if (totals) addToTotals(totals, previous, -1);
  for (const watcher of state.shape.watchers) watcher(id, undefined, previous);
}

export function joinGroups(grouping: Grouping, keys: string | readonly string[], id: string): void {
  if (typeof keys === "string") joinGroup(grouping, keys, id);
  else for (const key of keys) joinGroup(grouping, key, id);
}

export function leaveGroups(grouping: Grouping, keys: string | readonly string[], id: string): void {
  if (typeof keys === "string") leaveGroup(grouping, keys, id);
  else for (const key of keys) leaveGroup(grouping, key, id);
}

function joinGroup(grouping: Grouping, key: string, id: string): void {
  let ids = grouping.members.get(key);
  if (!ids) grouping.members.set(key, (ids = new Set()));
  ids.add(id);
}

function leaveGroup(grouping: Grouping, key: string, id: string): void {
  const ids = grouping.members.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) grouping.members.delete(key);
}

/**
 * A frozen copy of a row, built by Object.fromEntries rather than the object
 * itself frozen: V8 (11.3) gives an object frozen after a spread
 * (`{ ...row, Status }`, how rows are mostly made) or with many properties a
 * hidden class of its own, so a table of 10,000 such rows has 10,000 classes.
 * Every read of a row field is then megamorphic (~0.4 µs instead of ~0.05 µs:
 * listing 10,000 jobs spent most of its time there), and each class costs
 * ~300 bytes. Copies built from entries share one class per shape.
 */
export function freezeCopy<T extends Row>(row: T): T {
  Object.freeze(row); // the caller's object too: a row handed to the store is never changed afterwards
  return Object.freeze(Object.fromEntries(Object.entries(row))) as T;
}

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Indexed loops and for…in rather than Object.values: a restore freezes every object of every row.
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
    } else {
      const record = value as Record<string, unknown>;
      for (const key in record) deepFreeze(record[key]);
    }
  }
  return value;
}
