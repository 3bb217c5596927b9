/**
 * The state store: named tables of JSON rows keyed by ID, and one global,
 * monotonic, raft-like index shared by every table, as both real products
 * have it. Every state change in standin goes through `Store.write`, so
 * snapshot, restore, reset and the state hash cover it by construction.
 *
 * A write is atomic: it takes one new index for everything it changes, and if
 * its function throws, every change it made (rows, table indexes, the global
 * index, and timers scheduled or cancelled through the undo sink) is undone,
 * so a rejected request leaves the state exactly as it was.
 *
 * Rows are frozen when stored: code that wants to change a row must put a new
 * object, which is what makes the undo log (and snapshots) trustworthy.
 * Services must not rely on table iteration order: it is not part of the
 * state (the hash sorts by ID); sort explicitly where order matters.
 */

import { DeferredWrites, type DeferredStep } from "./deferred-writes.js";

export type Row = { readonly [key: string]: unknown };

export interface TableSnapshot {
  index: number;
  rows: Record<string, Row>;
}

export interface StoreSnapshot {
  index: number;
  tables: Record<string, TableSnapshot>;
  /** The index of each scope (see `Store.scope`); absent when the state has none. */
  scopes?: Record<string, number>;
}

/**
 * What a commit changed: the tables it touched and the index it took. A
 * write that touched a scope's tables also took an index of that scope's
 * own (`scopeIndexes`); `index` is the unscoped one.
 */
export interface Commit {
  readonly index: number;
  readonly tables: ReadonlySet<string>;
  /** Scope → the index the write took there (only the scopes it touched). */
  readonly scopeIndexes?: ReadonlyMap<string, number>;
}

/** The index a commit took for `table` (its scope's own index for a scoped table). */
export function commitIndexFor(commit: Commit, table: string): number {
  const scope = scopeOf(table);
  return scope === "" ? commit.index : (commit.scopeIndexes?.get(scope) ?? commit.index);
}

/**
 * A scope is a part of the state with its own index sequence, as another
 * raft cluster has: a scheduler region, a registry datacenter. Its tables
 * are named `<scope>/<table>`; everything else is in the unscoped part.
 */
export const SCOPE_SEPARATOR = "/";

export function scopeOf(table: string): string {
  const at = table.indexOf(SCOPE_SEPARATOR);
  return at < 0 ? "" : table.slice(0, at);
}

/** What services use of a store: the whole store, or one scope of it (`Store.scope`). */
export interface StoreView {
  readonly index: number;
  readonly version: number;
  readonly inTransaction: boolean;
  table<T extends Row = Row>(name: string): Table<T>;
  tableIndex(name: string): number;
  write<R>(fn: () => R): R;
  writeIndex(): number;
  undoSink(): ((undo: () => void) => void) | undefined;
  onCommit(listener: (commit: Commit) => void): () => void;
  onRestore(listener: () => void): () => void;
  /** Work answered for now and written later in slices (core/deferred-writes): see `Store.defer`. */
  defer(step: DeferredStep): void;
  /** Runs every deferred slice now: before reading what deferred work changes. */
  settle(): void;
  /** When deferred work is waiting: the moment it is done, its slices running on their turns meanwhile (see `Store.settled`). */
  settled(): Promise<void> | undefined;
  /** One scope of the state (see `Store.scope`); scopes do not nest. */
  scope(name: string): StoreView;
}

export class StoreError extends Error {}

/** A secondary index's lookup (Table.groupBy): a group's rows, and its size. */
export type GroupLookup<T> = ((key: string) => T[]) & { count(key: string): number };

/** The index a brand-new state starts at; headers never show 0. */
export const INITIAL_INDEX = 1;

interface TableState {
  /** The scope whose index sequence this table's writes take ("" = unscoped). */
  readonly scope: string;
  index: number;
  rows: Map<string, Row>;
  /** Secondary indexes (Table.groupBy), kept in step with `rows` by setRow/removeRow. */
  groupings: Grouping[];
  /** Told of every row change (Table.watch), undone ones included; not of restores. */
  watchers: Array<(id: string, row: Row | undefined, previous: Row | undefined) => void>;
  /** Running sums (Table.sumBy), kept in step with `rows` by setRow/removeRow. */
  sums: Totals[];
  /** The IDs in key order (Table.sorted, Table.withPrefix); undefined until first used, and again after a restore. */
  order: KeyOrder | undefined;
}

/**
 * The IDs of a table in key order, kept so that an ordered read costs what it returns rather than a
 * sort of the whole table each time (a KV prefix read of 10 keys among 100,000 sorted them all).
 * Inserts and deletes are noted in O(1) and settled at the next read: a few by binary search, many
 * (a fixture, a delete-tree) by one filter or sort, so neither a bulk write nor a read goes quadratic.
 */
interface KeyOrder {
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
function lowerBound(ids: readonly string[], id: string): number {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ids[mid]! < id) low = mid + 1;
    else high = mid;
  }
  return low;
}

function settledOrder(state: TableState): string[] {
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

interface Totals {
  /** The group a row counts towards, or undefined for none. */
  readonly keyOf: (row: Row) => string | undefined;
  /** What the row adds to its group's sums (always the same length for a table). */
  readonly valuesOf: (row: Row) => readonly number[];
  /** Group key → sums; undefined until first used, and again after a restore. */
  byKey: Map<string, number[]> | undefined;
}

function addToTotals(totals: Totals, row: Row, sign: 1 | -1): void {
  const key = totals.keyOf(row);
  if (key === undefined) return;
  const values = totals.valuesOf(row);
  let sums = totals.byKey!.get(key);
  if (!sums) totals.byKey!.set(key, (sums = values.map(() => 0)));
  for (let i = 0; i < values.length; i++) sums[i]! += sign * values[i]!;
}

interface Grouping {
  /** The group (or groups: a row may be in several, or none) a row is in. */
  readonly keyOf: (row: Row) => string | readonly string[];
  /** Group key → IDs; undefined until first used, and again after a restore. */
  members: Map<string, Set<string>> | undefined;
}

function setRow(state: TableState, id: string, row: Row): void {
  const previous = state.rows.get(id);
  state.rows.set(id, row);
  // A re-inserted ID is still in the order: it only stops being noted as removed.
  if (previous === undefined && state.order && !state.order.removed.delete(id)) state.order.added.add(id);
  for (const grouping of state.groupings) {
    if (!grouping.members) continue;
    if (previous !== undefined) leaveGroups(grouping, grouping.keyOf(previous), id);
    joinGroups(grouping, grouping.keyOf(row), id);
  }
  for (const totals of state.sums) {
    if (!totals.byKey) continue;
    if (previous !== undefined) addToTotals(totals, previous, -1);
    addToTotals(totals, row, 1);
  }
  for (const watcher of state.watchers) watcher(id, row, previous);
}

function removeRow(state: TableState, id: string): void {
  const previous = state.rows.get(id);
  if (previous === undefined) return;
  state.rows.delete(id);
  if (state.order && !state.order.added.delete(id)) state.order.removed.add(id);
  for (const grouping of state.groupings) if (grouping.members) leaveGroups(grouping, grouping.keyOf(previous), id);
  for (const totals of state.sums) if (totals.byKey) addToTotals(totals, previous, -1);
  for (const watcher of state.watchers) watcher(id, undefined, previous);
}

function joinGroups(grouping: Grouping, keys: string | readonly string[], id: string): void {
  if (typeof keys === "string") joinGroup(grouping, keys, id);
  else for (const key of keys) joinGroup(grouping, key, id);
}

function leaveGroups(grouping: Grouping, keys: string | readonly string[], id: string): void {
  if (typeof keys === "string") leaveGroup(grouping, keys, id);
  else for (const key of keys) leaveGroup(grouping, key, id);
}

function joinGroup(grouping: Grouping, key: string, id: string): void {
  let ids = grouping.members!.get(key);
  if (!ids) grouping.members!.set(key, (ids = new Set()));
  ids.add(id);
}

function leaveGroup(grouping: Grouping, key: string, id: string): void {
  const ids = grouping.members!.get(key);
  if (!ids) return;
  ids.delete(id);
  if (ids.size === 0) grouping.members!.delete(key);
}

class Transaction {
  index: number | undefined;
  /** Indexes taken in scopes, allocated as the write first touches each. */
  scoped: Map<string, number> | undefined;
  readonly touched = new Set<string>();
  readonly undo: Array<() => void> = [];
}

export class Table<T extends Row = Row> {
  constructor(
    private readonly store: Store,
    readonly name: string,
    private readonly state: TableState,
  ) {}

  get size(): number {
    return this.state.rows.size;
  }

  /** The index of the last write that touched this table; 0 if never written. */
  get index(): number {
    return this.state.index;
  }

  get(id: string): T | undefined {
    return this.state.rows.get(id) as T | undefined;
  }

  has(id: string): boolean {
    return this.state.rows.has(id);
  }

  /** Rows in unspecified order: sort where order matters. */
  values(): IterableIterator<T> {
    return this.state.rows.values() as IterableIterator<T>;
  }

  ids(): IterableIterator<string> {
    return this.state.rows.keys();
  }

  /**
   * A secondary index: returns a lookup of the rows whose `keyOf(row)` is a
   * given key (in unspecified order), kept up to date through writes,
   * rollbacks and restores, so finding a job's evaluations does not scan
   * every evaluation. `keyOf` may name several keys (a session bound to
   * several checks is found from each) or none (the row is not indexed).
   * The lookup's `count` tells a group's size without building it.
   * Register once per table, when the service is built.
   */
  groupBy(keyOf: (row: T) => string | readonly string[]): GroupLookup<T> {
    const state = this.state;
    const grouping: Grouping = { keyOf: keyOf as Grouping["keyOf"], members: undefined };
    state.groupings.push(grouping);
    const members = () => {
      if (!grouping.members) {
        grouping.members = new Map();
        for (const [id, row] of state.rows) joinGroups(grouping, grouping.keyOf(row), id);
      }
      return grouping.members;
    };
    const lookup = (key: string) => {
      const ids = members().get(key);
      return ids ? [...ids].map((id) => state.rows.get(id) as T) : [];
    };
    return Object.assign(lookup, { count: (key: string) => members().get(key)?.size ?? 0 });
  }

  /**
   * Calls `listener` after every change of a row (the new row, or undefined
   * when removed; and the row it replaced), including the changes a rolled-back write undoes, so
   * what a listener derives tracks the rows; a restore replaces the rows
   * without calling it (use the store's onRestore to rebuild). Register once,
   * when the service is built.
   */
  watch(listener: (id: string, row: T | undefined, previous: T | undefined) => void): void {
    this.state.watchers.push(listener as (id: string, row: Row | undefined, previous: Row | undefined) => void);
  }

  /**
   * Running sums per group: returns a lookup of the sums of `valuesOf(row)`
   * over the rows whose `keyOf(row)` is a given key (zeros for an empty
   * group), kept up to date through writes, rollbacks and restores as
   * groupBy's lookups are, so reading what a group adds up to (a node's
   * allocated CPU) does not visit its rows. Register once per table.
   */
  sumBy(keyOf: (row: T) => string | undefined, valuesOf: (row: T) => readonly number[]): (key: string) => readonly number[] {
    const state = this.state;
    const totals: Totals = { keyOf: keyOf as Totals["keyOf"], valuesOf: valuesOf as Totals["valuesOf"], byKey: undefined };
    state.sums.push(totals);
    const none: readonly number[] = [];
    return (key) => {
      if (!totals.byKey) {
        totals.byKey = new Map();
        for (const row of state.rows.values()) addToTotals(totals, row, 1);
      }
      return totals.byKey.get(key) ?? none;
    };
  }

  /** Rows sorted by ID (byte-wise on the ID string). */
  sorted(): T[] {
    const rows = this.state.rows;
    return settledOrder(this.state).map((id) => rows.get(id) as T);
  }

  /** The rows whose ID starts with `prefix`, in key order, found by binary search: the cost is what is returned. */
  withPrefix(prefix: string): T[] {
    const ids = settledOrder(this.state);
    const rows = this.state.rows;
    const out: T[] = [];
    for (let i = lowerBound(ids, prefix); i < ids.length && ids[i]!.startsWith(prefix); i++) out.push(rows.get(ids[i]!) as T);
    return out;
  }

  /**
   * Stores `row` under `id` (insert or replace) and returns the stored row: a
   * frozen copy unless `row` is frozen already (see freezeCopy), so a row put
   * into two tables should be put as returned. Must run inside `Store.write`.
   */
  put(id: string, row: T): T {
    const tx = this.store.requireTransaction(this.name);
    const rows = this.state.rows;
    const had = rows.has(id);
    const previous = rows.get(id);
    const frozen = Object.isFrozen(row) ? row : freezeCopy(row);
    setRow(this.state, id, frozen);
    tx.undo.push(() => (had ? setRow(this.state, id, previous!) : removeRow(this.state, id)));
    this.store.touch(tx, this.name, this.state);
    return frozen;
  }

  /**
   * Puts a row stamped the way both real products stamp objects:
   * `ModifyIndex` is this write's index and `CreateIndex` is kept from the
   * row being replaced, or is this write's index for a new row.
   */
  putIndexed(id: string, fields: Omit<T, "CreateIndex" | "ModifyIndex">): T {
    const index = this.store.writeIndexIn(this.state.scope);
    const previous = this.get(id) as { CreateIndex?: unknown } | undefined;
    const createIndex = typeof previous?.CreateIndex === "number" ? previous.CreateIndex : index;
    return this.put(id, { ...fields, CreateIndex: createIndex, ModifyIndex: index } as unknown as T);
  }

  /** Removes the row; returns whether it existed. Must run inside `Store.write`. */
  delete(id: string): boolean {
    const tx = this.store.requireTransaction(this.name);
    const rows = this.state.rows;
    if (!rows.has(id)) return false;
    const previous = rows.get(id)!;
    removeRow(this.state, id);
    tx.undo.push(() => setRow(this.state, id, previous));
    this.store.touch(tx, this.name, this.state);
    return true;
  }
}

export class Store implements StoreView {
  private currentIndex = INITIAL_INDEX;
  /** Each scope's last committed index. */
  private readonly scopeIndexes = new Map<string, number>();
  private changes = 0;
  private readonly tables = new Map<string, TableState>();
  private readonly handles = new Map<string, Table>();
  private tx: Transaction | undefined;
  private readonly commitListeners = new Set<(commit: Commit) => void>();
  private readonly resetListeners = new Set<() => void>();
  private readonly deferred = new DeferredWrites();

  /** The index of the last committed write (INITIAL_INDEX on a new state). */
  get index(): number {
    return this.currentIndex;
  }

  /**
   * Moves on every commit and every restore (never back, unlike the index,
   * which a restore may set lower): equal versions mean the same state.
   */
  get version(): number {
    return this.changes;
  }

  get inTransaction(): boolean {
    return this.tx !== undefined;
  }

  table<T extends Row = Row>(name: string): Table<T> {
    let handle = this.handles.get(name);
    if (!handle) {
      handle = new Table(this, name, this.stateOf(name));
      this.handles.set(name, handle);
    }
    return handle as unknown as Table<T>;
  }

  /** The index of a scope's last committed write (INITIAL_INDEX for a scope nothing has written yet). */
  indexIn(scope: string): number {
    return scope === "" ? this.currentIndex : (this.scopeIndexes.get(scope) ?? INITIAL_INDEX);
  }

  /** One scope of the state, as a store of its own: its table names, its index sequence, its commits. */
  scope(name: string): StoreView {
    if (name === "" || name.includes(SCOPE_SEPARATOR)) throw new StoreError(`invalid scope name "${name}"`);
    return new ScopedStore(this, name);
  }

  private stateOf(name: string): TableState {
    let state = this.tables.get(name);
    if (!state) {
      state = { scope: scopeOf(name), index: 0, rows: new Map(), groupings: [], sums: [], watchers: [], order: undefined };
      this.tables.set(name, state);
    }
    return state;
  }

  /** The index of the last write that touched `name`; 0 if never written. */
  tableIndex(name: string): number {
    return this.tables.get(name)?.index ?? 0;
  }

  /**
   * Runs `fn` as one atomic write. Nested calls join the outer write. The
   * write takes a new index the first time it changes something (or asks for
   * `writeIndex()`); a write that changes nothing takes none.
   */
  write<R>(fn: () => R): R {
    if (this.tx) return fn();
    // Deferred slices come first, so a write's index never depends on how many had run.
    if (this.deferred.pending && !this.deferred.busy) this.deferred.settle();
    const tx = new Transaction();
    this.tx = tx;
    let result: R;
    try {
      result = fn();
      if (result instanceof Promise) throw new StoreError("Store.write takes a synchronous function");
    } catch (error) {
      this.tx = undefined;
      for (let i = tx.undo.length - 1; i >= 0; i--) tx.undo[i]!();
      throw error;
    }
    this.tx = undefined;
    if (tx.index !== undefined || tx.scoped !== undefined) {
      if (tx.index !== undefined) this.currentIndex = tx.index;
      if (tx.scoped) for (const [scope, index] of tx.scoped) this.scopeIndexes.set(scope, index);
      this.changes++;
      const commit: Commit = { index: tx.index ?? this.currentIndex, tables: tx.touched, scopeIndexes: tx.scoped };
      for (const listener of [...this.commitListeners]) listener(commit);
    }
    return result;
  }

  /** The index the current write will commit at (allocating it). Only inside `write`. */
  writeIndex(): number {
    return this.writeIndexIn("");
  }

  /** The index the current write will commit at in `scope` (allocating it). Only inside `write`. */
  writeIndexIn(scope: string): number {
    const tx = this.requireTransaction("writeIndex");
    return this.allocate(tx, scope);
  }

  /** For the clock's undo sink: registers an undo step with the open write, if any. */
  undoSink(): ((undo: () => void) => void) | undefined {
    const tx = this.tx;
    return tx ? (undo) => tx.undo.push(undo) : undefined;
  }

  onCommit(listener: (commit: Commit) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /** Called after `restore` replaced the whole state. */
  onRestore(listener: () => void): () => void {
    this.resetListeners.add(listener);
    return () => this.resetListeners.delete(listener);
  }

  /**
   * Work a request was answered for, written later: one `step` (a write of its own) a turn of the event
   * loop until it says it is done. Settled before any other write, before a snapshot, and when a
   * service calls `settle` before reading what it changes; forgotten by a restore.
   */
  defer(step: DeferredStep): void {
    this.deferred.add(step);
  }

  settle(): void {
    if (this.tx) return;
    this.deferred.settle();
  }

  /**
   * A port's way to see deferred work done without holding the others: it awaits this before serving
   * a request that reads or writes what the work changes (undefined: nothing is waiting).
   */
  settled(): Promise<void> | undefined {
    return this.deferred.whenDone();
  }

  /** Deferred slices run so far (tests count them). */
  get deferredSlices(): number {
    return this.deferred.slicesRun;
  }

  snapshot(): StoreSnapshot {
    this.settle();
    const tables: Record<string, TableSnapshot> = {};
    for (const name of [...this.tables.keys()].sort()) {
      const state = this.tables.get(name)!;
      if (state.index === 0 && state.rows.size === 0) continue;
      const rows: Record<string, Row> = {};
      for (const id of [...state.rows.keys()].sort()) rows[id] = state.rows.get(id)!;
      tables[name] = { index: state.index, rows };
    }
    const snapshot: StoreSnapshot = { index: this.currentIndex, tables };
    if (this.scopeIndexes.size > 0) snapshot.scopes = Object.fromEntries([...this.scopeIndexes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return snapshot;
  }

  /**
   * Replaces the whole state with `snapshot`. Rows are taken as they are
   * (frozen, not copied): callers pass a document they own, such as a parsed
   * snapshot or a structured clone.
   */
  restore(snapshot: StoreSnapshot): void {
    if (this.tx) throw new StoreError("cannot restore inside a write");
    this.deferred.clear();
    if (!Number.isSafeInteger(snapshot.index) || snapshot.index < INITIAL_INDEX) throw new StoreError("snapshot index must be a positive integer");
    for (const state of this.tables.values()) {
      state.rows.clear();
      state.index = 0;
      for (const grouping of state.groupings) grouping.members = undefined; // rebuilt when next used
      for (const totals of state.sums) totals.byKey = undefined;
      state.order = undefined;
    }
    for (const [name, table] of Object.entries(snapshot.tables ?? {})) {
      const state = this.stateOf(name);
      state.index = table.index;
      for (const [id, row] of Object.entries(table.rows)) state.rows.set(id, deepFreeze(row));
    }
    this.currentIndex = snapshot.index;
    this.scopeIndexes.clear();
    for (const [scope, index] of Object.entries(snapshot.scopes ?? {})) {
      if (!Number.isSafeInteger(index) || index < INITIAL_INDEX) throw new StoreError(`scope "${scope}" index must be a positive integer`);
      this.scopeIndexes.set(scope, index);
    }
    this.changes++;
    for (const listener of [...this.resetListeners]) listener();
  }

  // ---- used by Table -------------------------------------------------------

  /** @internal */
  requireTransaction(what: string): Transaction {
    if (!this.tx) throw new StoreError(`write to "${what}" outside Store.write`);
    return this.tx;
  }

  /** @internal */
  touch(tx: Transaction, name: string, state: TableState): void {
    const index = this.allocate(tx, state.scope);
    if (!tx.touched.has(name)) {
      const previous = state.index;
      tx.undo.push(() => (state.index = previous));
      tx.touched.add(name);
    }
    state.index = index;
  }

  private allocate(tx: Transaction, scope: string): number {
    if (scope === "") {
      tx.index ??= this.currentIndex + 1;
      return tx.index;
    }
    tx.scoped ??= new Map();
    let index = tx.scoped.get(scope);
    if (index === undefined) tx.scoped.set(scope, (index = this.indexIn(scope) + 1));
    return index;
  }
}

/**
 * One scope of a store seen as a store: table names without the scope,
 * indexes of the scope's own sequence, commits that touched the scope (with
 * the scope's index and table names). Writes, undo and restore are the
 * whole store's, so a snapshot covers every scope at once.
 */
class ScopedStore implements StoreView {
  private readonly prefix: string;

  constructor(
    private readonly store: Store,
    private readonly scopeName: string,
  ) {
    this.prefix = scopeName + SCOPE_SEPARATOR;
  }

  get index(): number {
    return this.store.indexIn(this.scopeName);
  }

  get version(): number {
    return this.store.version;
  }

  get inTransaction(): boolean {
    return this.store.inTransaction;
  }

  table<T extends Row = Row>(name: string): Table<T> {
    return this.store.table<T>(this.prefix + name);
  }

  tableIndex(name: string): number {
    return this.store.tableIndex(this.prefix + name);
  }

  write<R>(fn: () => R): R {
    return this.store.write(fn);
  }

  writeIndex(): number {
    return this.store.writeIndexIn(this.scopeName);
  }

  undoSink(): ((undo: () => void) => void) | undefined {
    return this.store.undoSink();
  }

  onCommit(listener: (commit: Commit) => void): () => void {
    return this.store.onCommit((commit) => {
      const index = commit.scopeIndexes?.get(this.scopeName);
      if (index === undefined) return;
      const tables = new Set<string>();
      for (const name of commit.tables) if (name.startsWith(this.prefix)) tables.add(name.slice(this.prefix.length));
      listener({ index, tables });
    });
  }

  onRestore(listener: () => void): () => void {
    return this.store.onRestore(listener);
  }

  defer(step: DeferredStep): void {
    this.store.defer(step);
  }

  settle(): void {
    this.store.settle();
  }

  settled(): Promise<void> | undefined {
    return this.store.settled();
  }

  scope(name: string): StoreView {
    throw new StoreError(`scopes do not nest ("${name}" inside "${this.scopeName}")`);
  }
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
function freezeCopy<T extends Row>(row: T): T {
  Object.freeze(row); // the caller's object too: a row handed to the store is never changed afterwards
  return Object.freeze(Object.fromEntries(Object.entries(row))) as T;
}

function deepFreeze<T>(value: T): T {
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
