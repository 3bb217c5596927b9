/**
 * Nomad's variables and their locks (nomad/structs/variables.go,
 * nomad/state/state_store_variables.go, nomad/locks.go): the rows, the
 * validation texts, the state rules of set, check-and-set, delete and the
 * three lock operations, and the lock's lapse on the virtual clock.
 *
 * A lock's TTL timer runs for 2 × TTL after the acquire or the last renewal
 * (Nomad's grace period); when it fires the lock stays recorded for a further
 * LockDelay, then a release without an ID clears it (Items kept). Both timers
 * are clock timers, so they are in snapshots and the state hash.
 */
import type { TimerRecord } from "../../core/clock.js";
import type { ServiceContext } from "../../core/context.js";
import { formatGoDuration } from "../../core/durations.js";
import { keepKeyOrder } from "../../core/json.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { ActionError } from "../../http/actions.js";
import { nanos, type SchedulerState } from "../state/model.js";

export const VARIABLES_TABLE = "scheduler.variables";
export const LOCK_TTL_TIMER = "scheduler.variable-lock-ttl";
export const LOCK_DELAY_TIMER = "scheduler.variable-lock-delay";

/** structs.maxVariableSize: Σ len(key) + len(value) over Items. */
export const MAX_VARIABLE_SIZE = 65536;
const SECOND_NS = 1_000_000_000;
export const DEFAULT_LOCK_TTL_NS = 15 * SECOND_NS;
export const DEFAULT_LOCK_DELAY_NS = 15 * SECOND_NS;
const MIN_LOCK_TTL_NS = 10 * SECOND_NS;
const MAX_LOCK_TTL_NS = 24 * 3600 * SECOND_NS;

/** The RPC layer codes a validation failure, and Variables.Apply codes it again; the HTTP layer strips one prefix (reference §0.3). */
export const RPC_400 = "RPC Error:: 400,";

/** A lock as stored: durations in nanoseconds. */
export type VariableLockRow = { ID: string; TTL: number; LockDelay: number };

export type VariableRow = {
  Namespace: string;
  Path: string;
  Items: Record<string, string>;
  Lock: VariableLockRow | null;
  CreateIndex: number;
  ModifyIndex: number;
  /** Virtual ms (rendered as Unix ns). */
  CreateTime: number;
  ModifyTime: number;
};

/** What a write asks: the namespace and path it targets, its Items and the Lock it carries (if any). */
export interface VariableRequest {
  namespace: string;
  path: string;
  items: Record<string, string>;
  /** undefined: no Lock in the body. */
  lock: Partial<VariableLockRow> | undefined;
}

export class VariableInvalid extends Error {}

/** A write refused on its merits: 409 with the variable in the way (or a zero value when there is none, or it is locked). */
export class VariableConflict extends Error {
  constructor(readonly conflict: VariableRow) {
    super("conflict");
  }
}

/** A lock operation's own error: status and text. */
export class VariableLockError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const variableKey = (namespace: string, path: string) => `${namespace}\u0000${path}`;
/**
 * A lock timer's subject: `<namespace>/<path>`, printable where fired timers
 * are shown (the CLI, the control API). A namespace name holds no `/`, so the
 * first one splits it from the path.
 */
const timerSubject = (namespace: string, path: string) => `${namespace}/${path}`;
function fromTimerSubject(subject: string): [namespace: string, path: string] {
  const slash = subject.indexOf("/");
  return [subject.slice(0, slash), subject.slice(slash + 1)];
}

/** The zero-value conflict body: only Namespace and Path set. */
export function zeroVariable(namespace: string, path: string): VariableRow {
  return { Namespace: namespace, Path: path, Items: {}, Lock: null, CreateIndex: 0, ModifyIndex: 0, CreateTime: 0, ModifyTime: 0 };
}

/** structs.VariableLock's MarshalJSON: TTL, LockDelay (duration strings, "" when zero), then ID. */
export function lockView(lock: VariableLockRow): Record<string, string> {
  const duration = (ns: number) => (ns === 0 ? "" : formatGoDuration(BigInt(ns)));
  return keepKeyOrder({ TTL: duration(lock.TTL), LockDelay: duration(lock.LockDelay), ID: lock.ID });
}

/** structs.VariableMetadata: Lock only when shown (omitempty). */
export function metadataView(row: VariableRow, showLock: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    CreateIndex: row.CreateIndex,
    CreateTime: row.CreateTime === 0 ? 0 : nanos(row.CreateTime),
    ModifyIndex: row.ModifyIndex,
    ModifyTime: row.ModifyTime === 0 ? 0 : nanos(row.ModifyTime),
    Namespace: row.Namespace,
    Path: row.Path,
  };
  if (showLock && row.Lock) out.Lock = lockView(row.Lock);
  return out;
}

/** structs.VariableDecrypted: the metadata plus Items (omitted when empty). */
export function variableView(row: VariableRow, showLock: boolean, items: Record<string, string> = row.Items): Record<string, unknown> {
  const out = metadataView(row, showLock);
  if (Object.keys(items).length > 0) out.Items = items;
  return out;
}

/**
 * What a filter expression sees of a variable: Nomad's list runs go-bexpr over the stored
 * `structs.VariableEncrypted`, which embeds `VariableMetadata` and `VariableData`. go-bexpr's
 * pointerstructure does not promote embedded fields, so a selector names the embedded struct
 * (`VariableMetadata.Path`) and a bare `Path` is "couldn't find key" (a 400), as the go-bexpr oracle
 * shows. standin encrypts nothing: `Data` is a nil []byte and `KeyID` empty.
 */
export function filterDatum(row: VariableRow): Record<string, unknown> {
  const lock = row.Lock === null ? null : { ID: row.Lock.ID, TTL: row.Lock.TTL, LockDelay: row.Lock.LockDelay };
  return {
    VariableMetadata: {
      Namespace: row.Namespace,
      Path: row.Path,
      CreateIndex: row.CreateIndex,
      CreateTime: row.CreateTime * 1_000_000,
      ModifyIndex: row.ModifyIndex,
      ModifyTime: row.ModifyTime * 1_000_000,
      Lock: lock,
    },
    VariableData: { Data: null, KeyID: "" },
  };
}

/** structs.ValidatePath and the reserved `nomad/` tree; undefined when valid. */
export function pathProblem(path: string): string | undefined {
  if (!/^[a-zA-Z0-9\-_~/]{1,128}$/.test(path)) return `invalid path "${path}"`;
  const parts = path.split("/");
  if (parts[0] !== "nomad") return undefined;
  if (parts.length === 1) return `"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below`;
  if (parts[1] === "jobs") return undefined;
  if (parts[1] === "job-templates") {
    if (parts.length === 3) return undefined;
    return `"nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example, "nomad/job-templates/template-name"`;
  }
  return `only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory`;
}

function itemsSize(items: Record<string, string>): number {
  let size = 0;
  for (const [key, value] of Object.entries(items)) size += Buffer.byteLength(key) + Buffer.byteLength(value);
  return size;
}

/** VariableDecrypted.Validate (set and cas): the error body as the HTTP layer answers it. */
export function validateForSet(request: VariableRequest): void {
  if (request.namespace === "*") throw new VariableInvalid(`${RPC_400}can not target wildcard ("*")namespace`);
  if (Object.keys(request.items).length === 0) throw new VariableInvalid("variable missing required Items object");
  if (itemsSize(request.items) > MAX_VARIABLE_SIZE) throw new VariableInvalid(`${RPC_400}variables are limited to 64KiB in total size`);
  const problem = pathProblem(request.path);
  if (problem) throw new VariableInvalid(`${RPC_400}${problem}`);
  if (request.lock && ((request.lock.TTL ?? 0) !== 0 || (request.lock.LockDelay ?? 0) !== 0))
    throw new VariableInvalid(`${RPC_400}${RPC_400}variable should not contain lock definition`);
}

/** ValidateForLock after VariableLock.Canonicalize: the lock with its defaults. */
export function validateForLock(request: VariableRequest): { ttl: number; lockDelay: number } {
  if (request.namespace === "*") throw new VariableInvalid(`${RPC_400}can not target wildcard ("*")namespace`);
  if (itemsSize(request.items) > MAX_VARIABLE_SIZE) throw new VariableInvalid(`${RPC_400}variables are limited to 64KiB in total size`);
  const problem = pathProblem(request.path);
  if (problem) throw new VariableInvalid(`${RPC_400}${problem}`);
  const ttl = request.lock?.TTL || DEFAULT_LOCK_TTL_NS;
  const lockDelay = request.lock?.LockDelay || DEFAULT_LOCK_DELAY_NS;
  const problems: string[] = [];
  if (lockDelay < 0 || ttl < 0) problems.push("Lock delay and TTL must be positive");
  else if (ttl < MIN_LOCK_TTL_NS || ttl > MAX_LOCK_TTL_NS) problems.push("TTL must be between 10 seconds and 24 hours");
  if (problems.length > 0) throw new VariableInvalid(`${RPC_400}${formatMultierror(problems)}`);
  return { ttl, lockDelay };
}

/** Someone else holds the variable's lock (isLocked: a lock, and the request does not carry its ID). */
const lockedAgainst = (existing: VariableRow | undefined, request: VariableRequest) => existing?.Lock != null && (request.lock?.ID ?? "") !== existing.Lock.ID;

/**
 * The variables of one region: the table, the state rules and the lock
 * timers. One per SchedulerState (see `variablesOf`), so the routes, the
 * fixtures and the actions share it and its timer handlers register once.
 */
export class Variables {
  private readonly table;

  constructor(
    private readonly ctx: ServiceContext,
    table = ctx.store.table<VariableRow>(VARIABLES_TABLE),
  ) {
    this.table = table;
    ctx.clock.handle(LOCK_TTL_TIMER, (timer) => this.ttlLapsed(timer));
    ctx.clock.handle(LOCK_DELAY_TIMER, (timer) => this.delayEnded(timer));
  }

  get(namespace: string, path: string): VariableRow | undefined {
    return this.table.get(variableKey(namespace, path));
  }

  /** Every variable by (Namespace, Path), the memdb id index's order. */
  sorted(): VariableRow[] {
    return this.table.sorted();
  }

  index(): number {
    return this.table.index;
  }

  /** Whether the lock's TTL timer still runs (after it fires the lock is recorded until its delay ends). */
  ttlRunning(row: VariableRow): boolean {
    return row.Lock !== null && this.ctx.clock.timersFor(LOCK_TTL_TIMER, timerSubject(row.Namespace, row.Path)).length > 0;
  }

  /**
   * A plain set (`cas` undefined) or a check-and-set (varSetCASTxn, then
   * varSetTxn). Inside a write. Returns the stored row.
   */
  set(request: VariableRequest, cas: number | undefined): VariableRow {
    const existing = this.get(request.namespace, request.path);
    if (cas !== undefined) {
      if (cas === 0 && existing) throw new VariableConflict(existing);
      if (cas !== 0 && !existing) throw new VariableConflict(zeroVariable(request.namespace, request.path));
      if (cas !== 0 && existing && existing.ModifyIndex !== cas) throw new VariableConflict(existing);
    }
    if (lockedAgainst(existing, request)) throw new VariableConflict(zeroVariable(request.namespace, request.path));
    return this.put(request.namespace, request.path, request.items, existing?.Lock ?? null, existing);
  }

  /** Delete, or check-and-delete (svDeleteCASTxn). Inside a write. A locked variable cannot be deleted over HTTP. */
  delete(namespace: string, path: string, cas: number | undefined): void {
    const existing = this.get(namespace, path);
    if (cas !== undefined) {
      if (cas === 0 && existing) throw new VariableConflict(existing);
      if (cas !== 0 && !existing) throw new VariableConflict(zeroVariable(namespace, path));
      if (cas !== 0 && existing && existing.ModifyIndex !== cas) throw new VariableConflict(existing);
    }
    if (!existing) {
      this.ctx.store.writeIndex(); // Nomad applies the delete through raft all the same: the answer has an index
      return;
    }
    if (existing.Lock) throw new VariableConflict(zeroVariable(namespace, path));
    this.table.delete(variableKey(namespace, path));
    this.ctx.events.record("variable.deleted", { service: "scheduler", subject: `${namespace}/${path}` });
  }

  /** VarLockAcquire: overwrites the variable (Items included) and starts the TTL. Inside a write. */
  acquire(request: VariableRequest): VariableRow {
    const { ttl, lockDelay } = validateForLock(request);
    const existing = this.get(request.namespace, request.path);
    if (lockedAgainst(existing, request)) throw new VariableConflict(zeroVariable(request.namespace, request.path));
    const lock: VariableLockRow = { ID: request.lock?.ID || this.ctx.ids.uuid(), TTL: ttl, LockDelay: lockDelay };
    const row = this.put(request.namespace, request.path, request.items, lock, existing);
    this.restartTtl(row);
    this.ctx.events.record("variable.lock-acquired", { service: "scheduler", subject: `${row.Namespace}/${row.Path}`, detail: { lockId: lock.ID } });
    return row;
  }

  /** Variables.RenewLock: moves the TTL timer; not a write (no index moves). */
  renew(namespace: string, path: string, lockId: string): VariableRow {
    if (lockId === "") throw new VariableLockError(500, formatMultierror(["missing lock ID"]));
    const existing = this.get(namespace, path);
    if (!existing) throw new VariableLockError(404, "variable doesn't exist");
    if (!existing.Lock) throw new VariableLockError(409, "variable doesn't hold a lock");
    if (existing.Lock.ID !== lockId || !this.ttlRunning(existing)) throw new VariableLockError(409, "attempting to modify locked variable");
    this.ctx.store.write(() => this.restartTtl(existing));
    return existing;
  }

  /**
   * VarLockRelease (an ID: the holder's release; none: the server's, at the
   * end of a lapsed lock's delay). Keeps Items and ModifyTime; clears both
   * timers. Inside a write.
   */
  release(namespace: string, path: string, lockId: string | undefined): VariableRow {
    const existing = this.get(namespace, path);
    if (!existing) throw new VariableLockError(500, "variable doesn't exist");
    if (!existing.Lock) throw new VariableLockError(500, "variable doesn't hold a lock");
    if (lockId !== undefined && existing.Lock.ID !== lockId) throw new VariableConflict(zeroVariable(namespace, path));
    const key = variableKey(namespace, path);
    this.ctx.clock.cancelFor(LOCK_TTL_TIMER, timerSubject(namespace, path));
    this.ctx.clock.cancelFor(LOCK_DELAY_TIMER, timerSubject(namespace, path));
    const { CreateIndex: _c, ModifyIndex: _m, ...fields } = existing;
    const row = this.table.putIndexed(key, { ...fields, Lock: null });
    this.ctx.events.record("variable.lock-released", {
      service: "scheduler",
      subject: `${namespace}/${path}`,
      detail: { lockId: existing.Lock.ID, by: lockId === undefined ? "lapse" : "holder" },
    });
    return row;
  }

  /** A fixture's variable: a plain set, no checks beyond the path and size rules. Inside a write. */
  seed(namespace: string, path: string, items: Record<string, string>): VariableRow {
    validateForSet({ namespace, path, items, lock: undefined });
    return this.put(namespace, path, items, this.get(namespace, path)?.Lock ?? null, this.get(namespace, path));
  }

  private put(namespace: string, path: string, items: Record<string, string>, lock: VariableLockRow | null, existing: VariableRow | undefined): VariableRow {
    const now = this.ctx.clock.now();
    return this.table.putIndexed(variableKey(namespace, path), {
      Namespace: namespace,
      Path: path,
      Items: { ...items },
      Lock: lock,
      CreateTime: existing?.CreateTime ?? now,
      ModifyTime: now,
    });
  }

  private restartTtl(row: VariableRow): void {
    const key = timerSubject(row.Namespace, row.Path);
    this.ctx.clock.cancelFor(LOCK_TTL_TIMER, key);
    this.ctx.clock.cancelFor(LOCK_DELAY_TIMER, key);
    // Nomad's grace period: the server timer runs for twice the TTL.
    this.ctx.clock.schedule({ at: this.ctx.clock.now() + (2 * row.Lock!.TTL) / 1_000_000, kind: LOCK_TTL_TIMER, subject: key, data: { lockId: row.Lock!.ID } });
  }

  private ttlLapsed(timer: TimerRecord) {
    const [namespace, path] = fromTimerSubject(timer.subject);
    const row = this.get(namespace, path);
    const lockId = (timer.data as { lockId: string }).lockId;
    if (!row?.Lock || row.Lock.ID !== lockId) return { lapsed: false };
    // The lock stays recorded (and refuses others) for its delay; then the server releases it.
    this.ctx.store.write(() =>
      this.ctx.clock.schedule({ at: this.ctx.clock.now() + row.Lock!.LockDelay / 1_000_000, kind: LOCK_DELAY_TIMER, subject: timer.subject, data: { lockId } }),
    );
    this.ctx.events.record("variable.lock-lapsed", { service: "scheduler", subject: `${namespace}/${path}`, detail: { lockId } });
    return { lapsed: true, namespace, path, lockId };
  }

  private delayEnded(timer: TimerRecord) {
    const [namespace, path] = fromTimerSubject(timer.subject);
    const row = this.get(namespace, path);
    const lockId = (timer.data as { lockId: string }).lockId;
    if (!row?.Lock || row.Lock.ID !== lockId) return { released: false };
    this.ctx.store.write(() => this.release(namespace, path, undefined));
    return { released: true, namespace, path, lockId };
  }
}

const perState = new WeakMap<SchedulerState, Variables>();

/** The region's variables (built on first use, with its timer handlers). */
export function variablesOf(state: SchedulerState): Variables {
  let variables = perState.get(state);
  if (!variables) {
    variables = new Variables(state.ctx);
    perState.set(state, variables);
  }
  return variables;
}

/** A fixture's `variables`: each a plain set (an invalid one names its place in the file). */
export function seedVariables(variables: Variables, entries: readonly { Path: string; Namespace?: string; Items: Record<string, string> }[]): void {
  for (const [i, entry] of entries.entries()) {
    try {
      variables.seed(entry.Namespace ?? "default", entry.Path, entry.Items);
    } catch (error) {
      if (error instanceof VariableInvalid) throw new ActionError(400, `scheduler.variables[${i}]: ${error.message.replaceAll(RPC_400, "")}`);
      throw error;
    }
  }
}
