/**
 * The registry's state: catalog nodes, services and checks, sessions, KV
 * entries and key lock-delays, each a store table, plus the rules that tie
 * them together (Consul's state store): destroying a session — explicitly,
 * by TTL, by a critical or removed check, or by node removal — applies its
 * Behavior to the keys it holds and starts their lock-delay; a service
 * removed takes its checks with it; every write to a service's instances,
 * their nodes or their checks moves that service's own index (Consul's
 * `service.<name>` index), which its catalog and health reads block on.
 */
import type { ServiceContext } from "../core/context.js";
import type { GroupLookup, Table } from "../core/store.js";
import { uint64Equal, type Uint64 } from "../core/uint64.js";

export const TABLES = {
  nodes: "registry.nodes",
  checks: "registry.checks",
  sessions: "registry.sessions",
  kv: "registry.kv",
  lockDelay: "registry.lockdelay",
  tombstones: "registry.kv-tombstones",
  services: "registry.services",
  /** Per service name, the index of the last write to its instances, their nodes or their checks (Consul's `service.<name>`). */
  serviceIndexes: "registry.service-indexes",
  /** One row (`last`): the index at which a service name last lost its last instance (Consul's `service_last_extinction`). */
  serviceExtinction: "registry.service-extinction",
} as const;

/**
 * How long a deleted key's tombstone is kept (Consul's default
 * `tombstone_ttl`, 15 m). Consul's leader reaps expired tombstones on a
 * timer; here they go at the first KV write after they expire (no timer
 * shows up in the clock's fired list), which keeps their number bounded by
 * the keys deleted within the last 15 virtual minutes.
 */
export const TOMBSTONE_TTL_MS = 15 * 60_000;
/**
 * Tombstones and lock-delays are reaped in 30 s bins of virtual time
 * (Consul's `tombstone_ttl_granularity`, which bins tombstone expiries so):
 * a row goes at the first KV write once the bin its end falls in is over.
 * A look costs one pass over the table, so a run of KV writes pays for it
 * once per bin, not once per write; a row outlives its end by under 30 s.
 * Whether a row is gone depends only on the state and the instant, never on
 * when the last look was, so a restored snapshot reaps exactly as the run
 * that made it.
 */
export const REAP_GRANULARITY_MS = 30_000;

/** The end of the reaping bin an instant falls in. */
function binEnd(at: number): number {
  return Math.ceil(at / REAP_GRANULARITY_MS) * REAP_GRANULARITY_MS;
}

export const SESSION_TTL_TIMER = "registry.session-ttl";
/**
 * Consul's own name for an agent's node check (structs.SerfCheckID). The
 * specification names the default check `agentHealth`; agents carry both, so
 * clients written for Consul (`checks: ["serfHealth"]`) work unchanged.
 */
export const SERF_HEALTH_CHECK = "serfHealth";
/** Consul's structs.SessionTTLMultiplier: a session lives up to 2×TTL after creation or its last renew. */
export const SESSION_TTL_MULTIPLIER = 2;
/** structs.MaxLockDelay. */
export const MAX_LOCK_DELAY_MS = 60_000;

export type NodeRow = {
  ID: string;
  Node: string;
  Address: string;
  Datacenter: string;
  TaggedAddresses: Record<string, string> | null;
  Meta: Record<string, string> | null;
  CreateIndex: number;
  ModifyIndex: number;
};

export type CheckRow = {
  Node: string;
  CheckID: string;
  Name: string;
  Status: string;
  Notes: string;
  Output: string;
  ServiceID: string;
  ServiceName: string;
  ServiceTags: string[];
  Type: string;
  Interval: string;
  Timeout: string;
  ExposedPort: number;
  Definition: Record<string, never>;
  CreateIndex: number;
  ModifyIndex: number;
};

/** Consul's `structs.ServiceAddress` (a service's tagged address). */
export type ServiceAddress = { Address: string; Port: number };

/**
 * A service instance on a catalog node: Consul's `structs.NodeService`
 * (its fields in its order, as the catalog's node view sends them) plus the
 * node it runs on. `Node` is not on the wire in a NodeService: views drop it.
 */
export type ServiceRow = {
  Node: string;
  Kind: string;
  ID: string;
  Service: string;
  /** Never null (Consul normalises them to `[]`). */
  Tags: string[];
  Address: string;
  TaggedAddresses: Record<string, ServiceAddress> | null;
  /** Never null (`{}`). */
  Meta: Record<string, string>;
  Port: number;
  SocketPath: string;
  Weights: { Passing: number; Warning: number };
  EnableTagOverride: boolean;
  CreateIndex: number;
  ModifyIndex: number;
};

export type ServiceCheck = {
  ID: string;
  Namespace: string;
};

/** Consul Enterprise's names (acl.DefaultNamespaceName, DefaultPartitionName, WildcardName). */
export const DEFAULT_NAMESPACE = "default";
export const DEFAULT_PARTITION = "default";
export const WILDCARD_NAMESPACE = "*";

/**
 * A session as Consul encodes it (field order matters on the wire). In the
 * enterprise edition the row also carries Consul Enterprise's embedded
 * `acl.EnterpriseMeta` — `Partition` then `Namespace`, both
 * `json:",omitempty"` — between `Checks` and the RaftIndex fields, as
 * `structs.Session` embeds it; the community edition's rows have neither
 * (CE's EnterpriseMeta is an empty struct).
 */
export type SessionRow = {
  ID: string;
  Name: string;
  Node: string;
  /** Nanoseconds. */
  LockDelay: number;
  Behavior: "release" | "delete";
  TTL: string;
  NodeChecks: string[] | null;
  ServiceChecks: ServiceCheck[] | null;
  Checks?: string[];
  Partition?: string;
  Namespace?: string;
  CreateIndex: number;
  ModifyIndex: number;
};

export type KVRow = {
  LockIndex: number;
  Key: string;
  /** Any uint64 a client sets (core/uint64: digits beyond 2^53). */
  Flags: Uint64;
  /** base64, or null for no value. */
  Value: string | null;
  Session?: string;
  CreateIndex: number;
  ModifyIndex: number;
};

/**
 * Consul's graveyard: the index at which a key (or, for a recursive delete,
 * a prefix) was deleted, so a list under a prefix still reports, and wakes
 * on, a delete there. `at`: the virtual instant of the delete, for reaping.
 */
export type TombstoneRow = {
  Key: string;
  Index: number;
  at: number;
};

export type LockDelayRow = {
  /** Virtual instant (ms) until which the key cannot be acquired. */
  until: number;
};

export const nodeKey = (node: string) => node.toLowerCase();
export const checkKey = (node: string, checkId: string) => `${node.toLowerCase()}\u0000${checkId}`;
export const sessionKey = (id: string) => id.toLowerCase();
/** Services are keyed by node (case-insensitive, as Consul's node index is) and service ID (case-sensitive). */
export const serviceKey = (node: string, serviceId: string) => `${node.toLowerCase()}\u0000${serviceId}`;

/** Sorts by node name, then service ID: the order Consul's catalog lists a service's instances in. */
function byNodeThenId(a: ServiceRow, b: ServiceRow): number {
  const an = a.Node.toLowerCase();
  const bn = b.Node.toLowerCase();
  if (an !== bn) return an < bn ? -1 : 1;
  return a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0;
}

/** Every check ID a session is bound to (Session.CheckIDs). */
export function sessionCheckIds(session: SessionRow): string[] {
  return [...(session.Checks ?? []), ...(session.NodeChecks ?? []), ...(session.ServiceChecks ?? []).map((c) => c.ID)];
}

export class RegistryState {
  readonly nodes: Table<NodeRow>;
  readonly checks: Table<CheckRow>;
  readonly sessions: Table<SessionRow>;
  readonly kv: Table<KVRow>;
  readonly lockDelays: Table<LockDelayRow>;
  readonly tombstones: Table<TombstoneRow>;
  readonly services: Table<ServiceRow>;
  readonly serviceIndexes: Table<{ Index: number }>;
  readonly serviceExtinction: Table<{ Index: number }>;
  /** When the earliest tombstone's bin ends (see REAP_GRANULARITY_MS); 0 = unknown (look at them all). */
  private nextReapAt = 0;
  /** When the earliest lock-delay's bin ends; 0 = unknown (look at them all). */
  private nextLockDelayReapAt = 0;
  // Secondary indexes, so that removing or invalidating one object costs what it touches, not a scan
  // of every check, service, session or key (a reaper removing N services stays O(N)).
  private readonly checksByNode: GroupLookup<CheckRow>;
  private readonly checksByService: GroupLookup<CheckRow>;
  /** Critical checks under their node; the others are not indexed. */
  private readonly criticalChecksByNode: GroupLookup<CheckRow>;
  private readonly servicesByNode: GroupLookup<ServiceRow>;
  private readonly servicesByName: GroupLookup<ServiceRow>;
  private readonly sessionsByNode: GroupLookup<SessionRow>;
  /** A session under each of its checks (`node\0checkId`). */
  private readonly sessionsByCheck: GroupLookup<SessionRow>;
  /** Held keys under their holder's session key; free keys are not indexed. */
  private readonly keysBySession: GroupLookup<KVRow>;
  /** Told of every check that leaves the catalog, whichever path removed it (inside that write). */
  private readonly checkRemovedListeners: Array<(node: string, checkId: string) => void> = [];

  constructor(private readonly ctx: ServiceContext) {
    const store = ctx.store;
    this.nodes = store.table(TABLES.nodes);
    this.checks = store.table(TABLES.checks);
    this.sessions = store.table(TABLES.sessions);
    this.kv = store.table(TABLES.kv);
    this.lockDelays = store.table(TABLES.lockDelay);
    this.tombstones = store.table(TABLES.tombstones);
    this.services = store.table(TABLES.services);
    this.serviceIndexes = store.table(TABLES.serviceIndexes);
    this.serviceExtinction = store.table(TABLES.serviceExtinction);
    this.checksByNode = this.checks.groupBy((c) => nodeKey(c.Node));
    this.checksByService = this.checks.groupBy((c) => serviceKey(c.Node, c.ServiceID));
    this.criticalChecksByNode = this.checks.groupBy((c) => (c.Status === "critical" ? nodeKey(c.Node) : []));
    this.servicesByNode = this.services.groupBy((s) => nodeKey(s.Node));
    this.servicesByName = this.services.groupBy((s) => s.Service.toLowerCase());
    this.sessionsByNode = this.sessions.groupBy((s) => nodeKey(s.Node));
    this.sessionsByCheck = this.sessions.groupBy((s) => sessionCheckIds(s).map((checkId) => checkKey(s.Node, checkId)));
    this.keysBySession = this.kv.groupBy((e) => (e.Session === undefined ? [] : sessionKey(e.Session)));
    store.onRestore(() => {
      this.nextReapAt = 0;
      this.nextLockDelayReapAt = 0;
    });
  }

  /**
   * Consul's kvsSetTxn: writes the entry unless it equals the stored one
   * (LockIndex, Flags, Value and Session alike), in which case nothing is
   * written and the key's ModifyIndex stays, so its blocking readers sleep
   * on. Runs inside the caller's write.
   */
  setKey(entry: Omit<KVRow, "CreateIndex" | "ModifyIndex">): void {
    this.reapTombstones();
    this.reapLockDelays();
    const existing = this.kv.get(entry.Key);
    if (existing && sameEntry(existing, entry)) return;
    this.kv.putIndexed(entry.Key, entry);
  }

  /**
   * Consul's kvsLockTxn once the session is known to exist (and the
   * lock-delay was checked, kvsPreApply): takes the key for the session
   * with the given flags and value. LockIndex moves only on a new
   * acquisition, not when the holder locks again. False, changing nothing,
   * when another session holds the key. Runs inside the caller's write.
   */
  lockKey(entry: Pick<KVRow, "Key" | "Flags" | "Value">, session: SessionRow): boolean {
    const existing = this.kv.get(entry.Key);
    const holder = existing?.Session;
    if (holder !== undefined && sessionKey(holder) !== sessionKey(session.ID)) return false;
    const lockIndex = holder !== undefined ? existing!.LockIndex : (existing?.LockIndex ?? 0) + 1;
    this.setKey({ LockIndex: lockIndex, Key: entry.Key, Flags: entry.Flags, Value: entry.Value, Session: session.ID });
    return true;
  }

  /**
   * Consul's kvsUnlockTxn: the holder lets go of the key (LockIndex stays),
   * writing the given flags and value. False, changing nothing, when the key
   * is missing or not held by `session`. Runs inside the caller's write.
   */
  unlockKey(entry: Pick<KVRow, "Key" | "Flags" | "Value">, session: string): boolean {
    const existing = this.kv.get(entry.Key);
    if (!existing || existing.Session === undefined || sessionKey(existing.Session) !== sessionKey(session)) return false;
    this.setKey({ LockIndex: existing.LockIndex, Key: entry.Key, Flags: entry.Flags, Value: entry.Value });
    return true;
  }

  /** Consul's kvsDeleteTxn: removes the key and leaves a tombstone at this write's index. */
  deleteKey(key: string): boolean {
    this.reapTombstones();
    this.reapLockDelays();
    if (!this.kv.delete(key)) return false;
    this.bury(key);
    return true;
  }

  /** Consul's kvsDeleteTreeTxn: removes every key under the prefix and leaves one tombstone, for the prefix. */
  deleteTree(prefix: string): void {
    this.reapTombstones();
    this.reapLockDelays();
    let deleted = false;
    for (const entry of this.kv.withPrefix(prefix)) if (this.kv.delete(entry.Key)) deleted = true;
    if (deleted) this.bury(prefix);
  }

  /** The highest delete index under a prefix (Consul's Graveyard.GetMaxIndexTxn), 0 when none. */
  tombstoneIndexUnder(prefix: string): number {
    let max = 0;
    for (const stone of this.tombstones.values()) if (stone.Key.startsWith(prefix) && stone.Index > max) max = stone.Index;
    return max;
  }

  private bury(key: string): void {
    const at = this.ctx.clock.now();
    this.tombstones.put(key, { Key: key, Index: this.ctx.store.writeIndex(), at });
    // reapTombstones ran just before: 0 here means no other tombstone.
    const due = binEnd(at + TOMBSTONE_TTL_MS);
    if (this.nextReapAt === 0 || due < this.nextReapAt) this.nextReapAt = due;
  }

  private reapTombstones(): void {
    if (this.tombstones.size === 0) return;
    const now = this.ctx.clock.now();
    if (this.nextReapAt !== 0 && now < this.nextReapAt) return;
    let next = 0;
    for (const stone of [...this.tombstones.values()]) {
      const due = binEnd(stone.at + TOMBSTONE_TTL_MS);
      if (due <= now) this.tombstones.delete(stone.Key);
      else if (next === 0 || due < next) next = due;
    }
    this.nextReapAt = next;
    // A rolled-back write puts the rows it reaped back: look again next time.
    this.ctx.store.undoSink()?.(() => (this.nextReapAt = 0));
  }

  findNode(name: string): NodeRow | undefined {
    return this.nodes.get(nodeKey(name));
  }

  /** A node's checks (its own and its services'), by check ID. */
  checksOf(node: string): CheckRow[] {
    return this.checksByNode(nodeKey(node)).sort(byCheckId);
  }

  /**
   * A session by ID; with a namespace (enterprise edition), only when it lives
   * there. IDs are unique across namespaces, so KV locks, TTL timers and the
   * control actions find a session by ID alone.
   */
  findSession(id: string, namespace?: string): SessionRow | undefined {
    const session = this.sessions.get(sessionKey(id));
    return session && inNamespace(session, namespace) ? session : undefined;
  }

  /** Sessions sorted by lowercase ID, as memdb's id index returns them; with a namespace (not `*`), that namespace's only. */
  sessionsSorted(namespace?: string): SessionRow[] {
    const all = this.sessions.sorted();
    return namespace === undefined || namespace === WILDCARD_NAMESPACE ? all : all.filter((s) => inNamespace(s, namespace));
  }

  /**
   * Registers or updates a check; a critical status invalidates the sessions
   * bound to it. A service check takes its service's name and tags (Consul's
   * ensureCheckTxn); it moves its service's index, a node check the index of
   * every service on the node (their health includes it).
   */
  putCheck(check: Omit<CheckRow, "CreateIndex" | "ModifyIndex">): void {
    const service = check.ServiceID === "" ? undefined : this.findService(check.Node, check.ServiceID);
    const row = service ? { ...check, ServiceName: service.Service, ServiceTags: [...service.Tags] } : check;
    this.checks.putIndexed(checkKey(row.Node, row.CheckID), row);
    this.touchServicesFor(row.Node, row.ServiceID);
    if (row.Status === "critical") this.invalidateBoundTo(row.Node, row.CheckID, "check critical");
  }

  removeCheck(node: string, checkId: string): boolean {
    const existing = this.checks.get(checkKey(node, checkId));
    if (!existing || !this.checks.delete(checkKey(node, checkId))) return false;
    this.touchServicesFor(existing.Node, existing.ServiceID);
    this.invalidateBoundTo(node, checkId, "check deregistered");
    this.checkRemoved(existing);
    return true;
  }

  /**
   * Subscribes to check removals (catalog deregister, txn, a service's or a
   * node's removal, the agent's own): code that keeps data per check — the
   * agent's local part — drops it with the check. Listeners run inside the write.
   */
  onCheckRemoved(listener: (node: string, checkId: string) => void): void {
    this.checkRemovedListeners.push(listener);
  }

  private checkRemoved(check: CheckRow): void {
    for (const listener of this.checkRemovedListeners) listener(check.Node, check.CheckID);
  }

  /** Registers or updates a catalog node; every service on it sees the write (its index moves). */
  putNode(row: Omit<NodeRow, "CreateIndex" | "ModifyIndex">): void {
    this.nodes.putIndexed(nodeKey(row.Node), row);
    this.touchServicesFor(row.Node, "");
  }

  /** Removes a node with its services and checks; its sessions are invalidated. */
  removeNode(node: string): boolean {
    const existing = this.findNode(node);
    if (!existing) return false;
    for (const service of this.servicesOf(node)) this.removeService(node, service.ID);
    for (const check of this.checksOf(node)) if (this.checks.delete(checkKey(check.Node, check.CheckID))) this.checkRemoved(check);
    this.nodes.delete(nodeKey(node));
    for (const session of this.sessionsByNode(nodeKey(node)).sort(bySessionId)) this.destroySession(session, "node deregistered");
    return true;
  }

  findService(node: string, serviceId: string): ServiceRow | undefined {
    return this.services.get(serviceKey(node, serviceId));
  }

  /** A node's services, by ID. */
  servicesOf(node: string): ServiceRow[] {
    return this.servicesByNode(nodeKey(node)).sort(byId);
  }

  /** Every instance of a service name (case-insensitive, as Consul's service index is), by node then ID. */
  instancesOf(name: string): ServiceRow[] {
    return this.servicesByName(name.toLowerCase()).sort(byNodeThenId);
  }

  /** Every instance, by node then ID. */
  allServices(): ServiceRow[] {
    return [...this.services.values()].sort(byNodeThenId);
  }

  /** A service's checks on its node (not the node's own checks), by check ID. */
  checksOfService(node: string, serviceId: string): CheckRow[] {
    if (serviceId === "") return [];
    return this.checksByService(serviceKey(node, serviceId)).sort(byCheckId);
  }

  /** A node's critical checks, by check ID. */
  criticalChecksOf(node: string): CheckRow[] {
    return this.criticalChecksByNode(nodeKey(node)).sort(byCheckId);
  }

  /** A node's own checks (not its services'), by check ID. */
  nodeChecksOf(node: string): CheckRow[] {
    return this.checksByService(serviceKey(node, "")).sort(byCheckId);
  }

  /** One check of a node (node name case-insensitive, check ID exact). */
  findCheck(node: string, checkId: string): CheckRow | undefined {
    return this.checks.get(checkKey(node, checkId));
  }

  /**
   * Registers or updates a service instance (its node must exist: the caller
   * checks). Its checks take its new name and tags. Runs inside the caller's write.
   */
  putService(row: Omit<ServiceRow, "CreateIndex" | "ModifyIndex">): void {
    const previous = this.findService(row.Node, row.ID);
    this.services.putIndexed(serviceKey(row.Node, row.ID), row);
    if (previous && previous.Service.toLowerCase() !== row.Service.toLowerCase()) this.touchService(previous.Service, true);
    this.touchService(row.Service, false);
    for (const check of this.checksOfService(row.Node, row.ID)) {
      if (check.ServiceName === row.Service && sameStrings(check.ServiceTags, row.Tags)) continue;
      const { CreateIndex: _c, ModifyIndex: _m, ...fields } = check;
      this.checks.putIndexed(checkKey(check.Node, check.CheckID), { ...fields, ServiceName: row.Service, ServiceTags: [...row.Tags] });
    }
  }

  /**
   * Removes a service instance with its checks (the sessions bound to those
   * checks are invalidated). Runs inside the caller's write.
   */
  removeService(node: string, serviceId: string): boolean {
    const existing = this.findService(node, serviceId);
    if (!existing) return false;
    for (const check of this.checksOfService(node, serviceId)) this.removeCheck(check.Node, check.CheckID);
    this.services.delete(serviceKey(node, serviceId));
    this.touchService(existing.Service, true);
    return true;
  }

  /**
   * The index a read of one service name answers with and blocks on
   * (Consul's maxIndexAndWatchChForService): the service's own index while
   * it has instances, else the last time any service lost its last instance,
   * else the catalog's highest index.
   */
  serviceIndex(name: string): number {
    const own = this.servicesByName.count(name.toLowerCase()) > 0 ? this.serviceIndexes.get(name.toLowerCase())?.Index : undefined;
    if (own !== undefined) return own;
    const extinct = this.serviceExtinction.get("last")?.Index;
    if (extinct !== undefined) return extinct;
    return Math.max(this.ctx.store.tableIndex(TABLES.nodes), this.ctx.store.tableIndex(TABLES.services), this.ctx.store.tableIndex(TABLES.checks));
  }

  /** Moves a service name's index to this write's; `removed`: an instance went, so the name may be extinct now. */
  private touchService(name: string, removed: boolean): void {
    const index = this.ctx.store.writeIndex();
    const key = name.toLowerCase();
    if (removed && this.servicesByName.count(key) === 0) {
      this.serviceIndexes.delete(key);
      this.serviceExtinction.put("last", { Index: index });
      return;
    }
    this.serviceIndexes.put(key, { Index: index });
  }

  /** A check or node write: its service's index moves, or, for the node itself or a node check, every service's on the node. */
  private touchServicesFor(node: string, serviceId: string): void {
    if (serviceId !== "") {
      const service = this.findService(node, serviceId);
      if (service) this.touchService(service.Service, false);
      return;
    }
    for (const name of new Set(this.servicesByNode(nodeKey(node)).map((s) => s.Service))) this.touchService(name, false);
  }

  /**
   * Consul's deleteSessionTxn: remove the session, then for each key it
   * holds either release it (`release`) or delete it (`delete`), and start
   * the key's lock-delay (capped at 60 s). Runs inside the caller's write.
   */
  destroySession(session: SessionRow, reason: string): void {
    const id = sessionKey(session.ID);
    this.sessions.delete(id);
    this.ctx.clock.cancelFor(SESSION_TTL_TIMER, id);
    const delayMs = Math.min(Math.floor(session.LockDelay / 1_000_000), MAX_LOCK_DELAY_MS);
    const held = this.keysBySession(id).sort(byKey);
    if (held.length > 0 && delayMs > 0) this.reapLockDelays();
    for (const entry of held) {
      if (session.Behavior === "delete") {
        this.deleteKey(entry.Key);
      } else {
        const { Session: _released, CreateIndex: _c, ModifyIndex: _m, ...rest } = entry;
        this.setKey(rest as Omit<KVRow, "CreateIndex" | "ModifyIndex">);
      }
      if (delayMs > 0) this.delayLock(entry.Key, this.ctx.clock.now() + delayMs);
    }
    this.ctx.events.record("session.invalidated", { service: "registry", subject: session.ID, detail: { reason, behavior: session.Behavior } });
  }

  /** Whether a lock-delay still holds the key (Consul refuses an acquire then). */
  lockDelayed(key: string): boolean {
    const delay = this.lockDelays.get(key);
    return delay !== undefined && delay.until > this.ctx.clock.now();
  }

  /** Starts a key's lock-delay; reapLockDelays ran just before (0 here means no other delay). */
  private delayLock(key: string, until: number): void {
    this.lockDelays.put(key, { until });
    const due = binEnd(until);
    if (this.nextLockDelayReapAt === 0 || due < this.nextLockDelayReapAt) this.nextLockDelayReapAt = due;
  }

  /**
   * Consul forgets a key's lock-delay once it ends (its LockDelay timers
   * delete the entry); here the ended ones go at the next KV write (or a
   * destroyed session's release) after their bin ends (REAP_GRANULARITY_MS),
   * so the table holds only the keys released within the last 90 s
   * (MaxLockDelay and a bin), however long the run. A look happens once the
   * earliest delay's bin is over, so a burst of invalidations scans once.
   */
  private reapLockDelays(): void {
    if (this.lockDelays.size === 0) return;
    const now = this.ctx.clock.now();
    if (this.nextLockDelayReapAt !== 0 && now < this.nextLockDelayReapAt) return;
    let next = 0;
    for (const key of [...this.lockDelays.ids()]) {
      const due = binEnd(this.lockDelays.get(key)!.until);
      if (due <= now) this.lockDelays.delete(key);
      else if (next === 0 || due < next) next = due;
    }
    this.nextLockDelayReapAt = next;
    this.ctx.store.undoSink()?.(() => (this.nextLockDelayReapAt = 0));
  }

  /** Destroys, in ID order, the sessions bound to a node's check. */
  private invalidateBoundTo(node: string, checkId: string, reason: string): void {
    for (const session of this.sessionsByCheck(checkKey(node, checkId)).sort(bySessionId)) this.destroySession(session, reason);
  }
}

/** Namespace names compare case-insensitively (Consul Enterprise's NamespaceOrDefault lowercases); a row without one is in `default`. */
function inNamespace(session: SessionRow, namespace: string | undefined): boolean {
  if (namespace === undefined || namespace === WILDCARD_NAMESPACE) return true;
  return (session.Namespace ?? DEFAULT_NAMESPACE).toLowerCase() === namespace.toLowerCase();
}

function sameEntry(a: Omit<KVRow, "CreateIndex" | "ModifyIndex">, b: Omit<KVRow, "CreateIndex" | "ModifyIndex">): boolean {
  return a.LockIndex === b.LockIndex && a.Key === b.Key && uint64Equal(a.Flags, b.Flags) && a.Value === b.Value && (a.Session ?? "") === (b.Session ?? "");
}

function sameStrings(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function byId(a: ServiceRow, b: ServiceRow): number {
  return a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0;
}

function byCheckId(a: CheckRow, b: CheckRow): number {
  return a.CheckID < b.CheckID ? -1 : a.CheckID > b.CheckID ? 1 : 0;
}

function byKey(a: KVRow, b: KVRow): number {
  return a.Key < b.Key ? -1 : a.Key > b.Key ? 1 : 0;
}

/** The sessions table's order: lowercase ID. */
function bySessionId(a: SessionRow, b: SessionRow): number {
  const x = sessionKey(a.ID);
  const y = sessionKey(b.ID);
  return x < y ? -1 : x > y ? 1 : 0;
}
