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
 * A document too large for one step (a fixture, a snapshot) is written with
 * `writeStaged` or `restoreStaged`: built a slice at a time on copies of the
 * tables it changes while readers see the tables as they were, then swapped
 * in as one write (build-then-swap); other writes are refused meanwhile
 * (the emulator holds them back until it lands).
 *
 * Rows are frozen when stored: code that wants to change a row must put a new
 * object, which is what makes the undo log (and snapshots) trustworthy.
 * Services must not rely on table iteration order: it is not part of the
 * state (the hash sorts by ID); sort explicitly where order matters.
 */

import { DeferredWrites, type DeferredStep } from "./deferred-writes.js";
import {
  addToTotals,
  deepFreeze,
  emptyState,
  freezeCopy,
  joinGroups,
  lowerBound,
  removeRow,
  setRow,
  settledOrder,
  stagedCopy,
  type Grouping,
  type Row,
  type TableState,
  type Totals,
} from "./store-table-state.js";

export type { Row };

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

/** How many steps (entities, rows) a slice of a staged write or restore takes at most: ~1–3 ms of work. */
export const STAGED_SLICE_STEPS = 256;

/** The index a brand-new state starts at; headers never show 0. */
export const INITIAL_INDEX = 1;

/** @internal (Store.writeStaged keeps one open across turns) */
export class Transaction {
  index: number | undefined;
  /** Indexes taken in scopes, allocated as the write first touches each. */
  scoped: Map<string, number> | undefined;
  readonly touched = new Set<string>();
  readonly undo: Array<() => void> = [];
  /**
   * A staged write's copies of the tables it changed (by name, with their handles): set for a
   * write built in slices (Store.writeStaged), whose changes go to the copies, not the tables.
   */
  staged: Map<string, { handle: Table; state: TableState }> | undefined;
}

export class Table<T extends Row = Row> {
  /**
   * @internal The state this handle reads and writes: the table's own, or, while a slice of a
   * staged write runs, the write's copy of it (the store points the handle there and back).
   */
  state: TableState;

  constructor(
    private readonly store: Store,
    readonly name: string,
    state: TableState,
  ) {
    this.state = state;
  }

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
    const at = this.state.shape.groupings.push(keyOf as Grouping["keyOf"]) - 1;
    // The handle's state now (a staged write's copy while a slice of it runs), not the one at registration.
    const members = () => {
      const state = this.state;
      let grouping = state.groupings[at];
      if (!grouping) {
        grouping = state.groupings[at] = { keyOf: state.shape.groupings[at]!, members: new Map() };
        for (const [id, row] of state.rows) joinGroups(grouping, grouping.keyOf(row), id);
      }
      return grouping.members;
    };
    const lookup = (key: string) => {
      const ids = members().get(key);
      const rows = this.state.rows;
      return ids ? [...ids].map((id) => rows.get(id) as T) : [];
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
    this.state.shape.watchers.push(listener as (id: string, row: Row | undefined, previous: Row | undefined) => void);
  }

  /**
   * Running sums per group: returns a lookup of the sums of `valuesOf(row)`
   * over the rows whose `keyOf(row)` is a given key (zeros for an empty
   * group), kept up to date through writes, rollbacks and restores as
   * groupBy's lookups are, so reading what a group adds up to (a node's
   * allocated CPU) does not visit its rows. Register once per table.
   */
  sumBy(keyOf: (row: T) => string | undefined, valuesOf: (row: T) => readonly number[]): (key: string) => readonly number[] {
    const at = this.state.shape.sums.push({ keyOf: keyOf as Totals["keyOf"], valuesOf: valuesOf as Totals["valuesOf"] }) - 1;
    const none: readonly number[] = [];
    return (key) => {
      const state = this.state;
      let totals = state.sums[at];
      if (!totals) {
        totals = state.sums[at] = { ...state.shape.sums[at]!, byKey: new Map() };
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
    const state = this.store.writable(tx, this);
    const rows = state.rows;
    const had = rows.has(id);
    const previous = rows.get(id);
    const frozen = Object.isFrozen(row) ? row : freezeCopy(row);
    setRow(state, id, frozen);
    if (needsRowUndo(tx, state)) tx.undo.push(() => (had ? setRow(state, id, previous!) : removeRow(state, id)));
    this.store.touch(tx, this.name, state);
    return frozen;
  }

  /**
   * Puts a row stamped the way both real products stamp objects:
   * `ModifyIndex` is this write's index and `CreateIndex` is kept from the
   * row being replaced, or is this write's index for a new row.
   */
  putIndexed(id: string, fields: Omit<T, "CreateIndex" | "ModifyIndex">): T {
    const index = this.store.writeIndexIn(this.state.shape.scope);
    const previous = this.get(id) as { CreateIndex?: unknown } | undefined;
    const createIndex = typeof previous?.CreateIndex === "number" ? previous.CreateIndex : index;
    return this.put(id, { ...fields, CreateIndex: createIndex, ModifyIndex: index } as unknown as T);
  }

  /** Removes the row; returns whether it existed. Must run inside `Store.write`. */
  delete(id: string): boolean {
    const tx = this.store.requireTransaction(this.name);
    const state = this.store.writable(tx, this);
    const rows = state.rows;
    if (!rows.has(id)) return false;
    const previous = rows.get(id)!;
    removeRow(state, id);
    if (needsRowUndo(tx, state)) tx.undo.push(() => setRow(state, id, previous));
    this.store.touch(tx, this.name, state);
    return true;
  }
}

/**
 * A staged write that fails drops its copies, so its row changes need no undo, unless the table has
 * watchers: undoing tells them the changes are gone, which keeps what they derive in step (as in a plain write).
 */
function needsRowUndo(tx: Transaction, state: TableState): boolean {
  return tx.staged === undefined || state.shape.watchers.length > 0;
}

export class Store implements StoreView {
  private currentIndex = INITIAL_INDEX;
  /** Each scope's last committed index. */
  private readonly scopeIndexes = new Map<string, number>();
  private changes = 0;
  private readonly tables = new Map<string, TableState>();
  private readonly handles = new Map<string, Table>();
  private tx: Transaction | undefined;
  /** A staged write (or restore) between two of its slices: nothing else may write until it lands. */
  private suspended: Transaction | undefined;
  /** The work of the last staged write or restore, for tests of its bounds: slices, and the most steps one took. */
  readonly stagedWork = { slices: 0, largestSlice: 0 };
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

  /** How many rows the tables hold in all (O(tables)). */
  get rowCount(): number {
    let rows = 0;
    for (const state of this.tables.values()) rows += state.rows.size;
    return rows;
  }

  /** Whether a staged write or restore has begun and not yet landed (or failed). */
  get staging(): boolean {
    return this.suspended !== undefined || this.tx?.staged !== undefined;
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
      state = emptyState({ scope: scopeOf(name), groupings: [], sums: [], watchers: [] });
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
    this.refuseWhileStaging("write");
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
    this.commit(tx);
    return result;
  }

  private commit(tx: Transaction): void {
    if (tx.index === undefined && tx.scoped === undefined) return;
    if (tx.index !== undefined) this.currentIndex = tx.index;
    if (tx.scoped) for (const [scope, index] of tx.scoped) this.scopeIndexes.set(scope, index);
    this.changes++;
    const commit: Commit = { index: tx.index ?? this.currentIndex, tables: tx.touched, scopeIndexes: tx.scoped };
    for (const listener of [...this.commitListeners]) listener(commit);
  }

  /**
   * One write built in slices (build-then-swap), for a document too large to apply in one step:
   * `steps` is the write's work (a generator yielding after each entity), run at most `budget`
   * steps a slice with `turn()` awaited between slices. During a slice the tables it changes are
   * copies of their states (stagedCopy); between slices every handle points back at the table's
   * own state, so readers see the state before the write, and any other write throws (callers
   * hold writes back until it lands). At the end the copies are swapped in (O(tables)) and the
   * write commits as one: one index, one commit. If a step throws, the copies are dropped and the
   * write's other undo steps (timers, watchers' rows) run: nothing changed.
   */
  async writeStaged(steps: Iterator<unknown>, turn: () => Promise<void>, budget = STAGED_SLICE_STEPS): Promise<void> {
    if (this.tx || this.suspended) throw new StoreError("a staged write cannot begin inside another write");
    // Deferred slices first, as for any write: none can run between the staged write's slices (writes wait for it).
    if (this.deferred.pending && !this.deferred.busy) this.deferred.settle();
    const tx = new Transaction();
    tx.staged = new Map();
    this.stagedWork.slices = this.stagedWork.largestSlice = 0;
    try {
      while (!this.stagedSlice(tx, steps, budget)) {
        this.suspended = tx;
        await turn();
        this.suspended = undefined;
      }
    } catch (error) {
      this.suspended = undefined;
      for (let i = tx.undo.length - 1; i >= 0; i--) tx.undo[i]!();
      throw error;
    }
    for (const [name, { handle, state }] of tx.staged) {
      this.tables.set(name, state);
      handle.state = state;
    }
    this.commit(tx);
  }

  /** Runs up to `budget` steps of a staged write with its copies in place; whether the steps are done. */
  private stagedSlice(tx: Transaction, steps: Iterator<unknown>, budget: number): boolean {
    for (const { handle, state } of tx.staged!.values()) handle.state = state;
    this.tx = tx;
    let taken = 0;
    try {
      for (; taken < budget; taken++) if (steps.next().done) return true;
      return false;
    } finally {
      this.tx = undefined;
      for (const [name, { handle }] of tx.staged!) handle.state = this.tables.get(name)!;
      // What was cached under the version during the slice (answers, memos) saw the copies: readers now see the tables.
      this.changes++;
      this.stagedWork.slices++;
      this.stagedWork.largestSlice = Math.max(this.stagedWork.largestSlice, taken);
    }
  }

  private refuseWhileStaging(what: string): void {
    if (this.suspended) throw new StoreError(`cannot ${what} while a staged write is being applied (writes wait until it lands)`);
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
    return this.withScopes({ index: this.currentIndex, tables });
  }

  /**
   * snapshot() with `turn()` awaited every `budget` rows, for a store nothing writes meanwhile (a
   * scratch emulator's, built for a reset: standin.ts): a large one is not copied out in one step.
   */
  async snapshotInTurns(turn: () => Promise<void>, budget = STAGED_SLICE_STEPS): Promise<StoreSnapshot> {
    const steps = this.snapshotSteps();
    for (let taken = 1; ; taken++) {
      const step = steps.next();
      if (step.done) return step.value;
      if (taken % budget === 0) await turn();
    }
  }

  /** snapshot() yielding after each row (a loop of its own: snapshot() is on hot paths, and a yield a row costs). */
  private *snapshotSteps(): Generator<void, StoreSnapshot, undefined> {
    this.settle();
    const tables: Record<string, TableSnapshot> = {};
    for (const name of [...this.tables.keys()].sort()) {
      const state = this.tables.get(name)!;
      if (state.index === 0 && state.rows.size === 0) continue;
      const rows: Record<string, Row> = {};
      for (const id of [...state.rows.keys()].sort()) {
        rows[id] = state.rows.get(id)!;
        yield;
      }
      tables[name] = { index: state.index, rows };
    }
    return this.withScopes({ index: this.currentIndex, tables });
  }

  /** A snapshot's index and tables with the scopes' indexes, in order. */
  private withScopes(snapshot: StoreSnapshot): StoreSnapshot {
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
    this.refuseWhileStaging("restore");
    this.deferred.clear();
    const built = new Map<string, TableState>();
    const steps = this.restoreSteps(snapshot, built);
    while (!steps.next().done);
    this.swapRestored(snapshot, built);
  }

  /**
   * restore() built in slices: the new tables' states are built (their rows frozen) up to `budget`
   * rows a slice with `turn()` awaited between slices, while readers see the state before and
   * writes throw (callers hold them back); then swapped in at once.
   */
  async restoreStaged(snapshot: StoreSnapshot, turn: () => Promise<void>, budget = STAGED_SLICE_STEPS): Promise<() => void> {
    if (this.tx || this.suspended) throw new StoreError("cannot restore inside a write");
    // A restore forgets deferred work (the state it was planned on goes); none may run between its slices.
    this.deferred.clear();
    const built = new Map<string, TableState>();
    const steps = this.restoreSteps(snapshot, built);
    // A marker: writes between slices are refused as during a staged write.
    this.suspended = new Transaction();
    this.stagedWork.slices = this.stagedWork.largestSlice = 0;
    try {
      for (;;) {
        let taken = 0;
        let done = false;
        for (; taken < budget; taken++) if ((done = steps.next().done === true)) break;
        this.stagedWork.slices++;
        this.stagedWork.largestSlice = Math.max(this.stagedWork.largestSlice, taken);
        if (done) break;
        await turn();
      }
    } finally {
      this.suspended = undefined;
    }
    return this.swapRestored(snapshot, built);
  }

  /** Checks `snapshot`'s indexes, then builds each of its tables' new state into `built`, one step a row. */
  private *restoreSteps(snapshot: StoreSnapshot, built: Map<string, TableState>): Generator<void> {
    if (!Number.isSafeInteger(snapshot.index) || snapshot.index < INITIAL_INDEX) throw new StoreError("snapshot index must be a positive integer");
    for (const [scope, index] of Object.entries(snapshot.scopes ?? {})) {
      if (!Number.isSafeInteger(index) || index < INITIAL_INDEX) throw new StoreError(`scope "${scope}" index must be a positive integer`);
    }
    for (const [name, table] of Object.entries(snapshot.tables ?? {})) {
      const state = emptyState(this.stateOf(name).shape);
      state.index = table.index;
      built.set(name, state);
      for (const id in table.rows) {
        state.rows.set(id, deepFreeze(table.rows[id]!));
        yield;
      }
    }
  }

  /**
   * Puts the states restoreSteps built in place of every table's (a table the snapshot lacks is
   * emptied). Returns what puts the replaced ones back (untouched: they were replaced, not
   * changed), for a caller whose own part of the restore failed after it.
   */
  private swapRestored(snapshot: StoreSnapshot, built: Map<string, TableState>): () => void {
    const before = { tables: new Map(this.tables), index: this.currentIndex, scopes: new Map(this.scopeIndexes) };
    const swap = (tables: ReadonlyMap<string, TableState>) => {
      for (const [name, state] of this.tables) {
        const next = tables.get(name) ?? emptyState(state.shape);
        this.tables.set(name, next);
        const handle = this.handles.get(name);
        if (handle) handle.state = next;
      }
      this.changes++;
      for (const listener of [...this.resetListeners]) listener();
    };
    this.currentIndex = snapshot.index;
    this.scopeIndexes.clear();
    for (const [scope, index] of Object.entries(snapshot.scopes ?? {})) this.scopeIndexes.set(scope, index);
    swap(built);
    return () => {
      this.currentIndex = before.index;
      this.scopeIndexes.clear();
      for (const [scope, index] of before.scopes) this.scopeIndexes.set(scope, index);
      swap(before.tables);
    };
  }

  // ---- used by Table -------------------------------------------------------

  /** @internal */
  requireTransaction(what: string): Transaction {
    if (!this.tx) throw new StoreError(`write to "${what}" outside Store.write`);
    return this.tx;
  }

  /** @internal The state a write changes through `handle`: the table's own, or in a staged write its copy (made at the first change). */
  writable(tx: Transaction, handle: Table): TableState {
    if (!tx.staged) return handle.state;
    let staged = tx.staged.get(handle.name);
    if (!staged) {
      staged = { handle, state: stagedCopy(handle.state) };
      tx.staged.set(handle.name, staged);
      handle.state = staged.state;
    }
    return staged.state;
  }

  /** @internal */
  touch(tx: Transaction, name: string, state: TableState): void {
    const index = this.allocate(tx, state.shape.scope);
    if (!tx.touched.has(name)) {
      const previous = state.index;
      // A staged write's copies are dropped, not undone.
      if (!tx.staged) tx.undo.push(() => (state.index = previous));
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
