/**
 * The registry's state: catalog nodes and checks, sessions, KV entries and
 * key lock-delays, each a store table, plus the rules that tie them together
 * (Consul's state store): destroying a session — explicitly, by TTL, by a
 * critical or removed check, or by node removal — applies its Behavior to
 * the keys it holds and starts their lock-delay.
 */
import type { ServiceContext } from "../core/context.js";
import type { Table } from "../core/store.js";
import { uint64Equal, type Uint64 } from "../core/uint64.js";

export const TABLES = {
  nodes: "registry.nodes",
  checks: "registry.checks",
  sessions: "registry.sessions",
  kv: "registry.kv",
  lockDelay: "registry.lockdelay",
  tombstones: "registry.kv-tombstones",
} as const;

/**
 * How long a deleted key's tombstone is kept (Consul's default
 * `tombstone_ttl`, 15 m). Consul's leader reaps expired tombstones on a
 * timer; here they go at the first KV write after they expire (no timer
 * shows up in the clock's fired list), which keeps their number bounded by
 * the keys deleted within the last 15 virtual minutes.
 */
export const TOMBSTONE_TTL_MS = 15 * 60_000;

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
  /** The earliest instant a tombstone expires; 0 = unknown (look at them all). */
  private nextReapAt = 0;

  constructor(private readonly ctx: ServiceContext) {
    const store = ctx.store;
    this.nodes = store.table(TABLES.nodes);
    this.checks = store.table(TABLES.checks);
    this.sessions = store.table(TABLES.sessions);
    this.kv = store.table(TABLES.kv);
    this.lockDelays = store.table(TABLES.lockDelay);
    this.tombstones = store.table(TABLES.tombstones);
    store.onRestore(() => (this.nextReapAt = 0));
  }

  /**
   * Consul's kvsSetTxn: writes the entry unless it equals the stored one
   * (LockIndex, Flags, Value and Session alike), in which case nothing is
   * written and the key's ModifyIndex stays, so its blocking readers sleep
   * on. Runs inside the caller's write.
   */
  setKey(entry: Omit<KVRow, "CreateIndex" | "ModifyIndex">): void {
    this.reapTombstones();
    const existing = this.kv.get(entry.Key);
    if (existing && sameEntry(existing, entry)) return;
    this.kv.putIndexed(entry.Key, entry);
  }

  /** Consul's kvsDeleteTxn: removes the key and leaves a tombstone at this write's index. */
  deleteKey(key: string): boolean {
    this.reapTombstones();
    if (!this.kv.delete(key)) return false;
    this.bury(key);
    return true;
  }

  /** Consul's kvsDeleteTreeTxn: removes every key under the prefix and leaves one tombstone, for the prefix. */
  deleteTree(prefix: string): void {
    this.reapTombstones();
    let deleted = false;
    for (const entry of this.kv.sorted()) if (entry.Key.startsWith(prefix) && this.kv.delete(entry.Key)) deleted = true;
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
    if (this.nextReapAt === 0 || at + TOMBSTONE_TTL_MS < this.nextReapAt) this.nextReapAt = at + TOMBSTONE_TTL_MS;
  }

  private reapTombstones(): void {
    if (this.tombstones.size === 0) return;
    const now = this.ctx.clock.now();
    if (this.nextReapAt !== 0 && now < this.nextReapAt) return;
    let next = 0;
    for (const stone of [...this.tombstones.values()]) {
      const expires = stone.at + TOMBSTONE_TTL_MS;
      if (expires <= now) this.tombstones.delete(stone.Key);
      else if (next === 0 || expires < next) next = expires;
    }
    this.nextReapAt = next;
  }

  findNode(name: string): NodeRow | undefined {
    return this.nodes.get(nodeKey(name));
  }

  checksOf(node: string): CheckRow[] {
    const prefix = `${node.toLowerCase()}\u0000`;
    return this.checks.sorted().filter((c) => checkKey(c.Node, c.CheckID).startsWith(prefix));
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

  /** Registers or updates a check; a critical status invalidates the sessions bound to it. */
  putCheck(check: Omit<CheckRow, "CreateIndex" | "ModifyIndex">): void {
    this.checks.putIndexed(checkKey(check.Node, check.CheckID), check);
    if (check.Status === "critical") this.invalidateWhere((s) => bound(s, check.Node, check.CheckID), "check critical");
  }

  removeCheck(node: string, checkId: string): boolean {
    if (!this.checks.delete(checkKey(node, checkId))) return false;
    this.invalidateWhere((s) => bound(s, node, checkId), "check deregistered");
    return true;
  }

  /** Removes a node with its checks; its sessions are invalidated. */
  removeNode(node: string): boolean {
    const existing = this.findNode(node);
    if (!existing) return false;
    for (const check of this.checksOf(node)) this.checks.delete(checkKey(check.Node, check.CheckID));
    this.nodes.delete(nodeKey(node));
    this.invalidateWhere((s) => s.Node.toLowerCase() === node.toLowerCase(), "node deregistered");
    return true;
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
    for (const entry of this.kv.sorted()) {
      const holder = entry.Session as string | undefined;
      if (holder === undefined || sessionKey(holder) !== id) continue;
      if (session.Behavior === "delete") {
        this.deleteKey(entry.Key);
      } else {
        const { Session: _released, CreateIndex: _c, ModifyIndex: _m, ...rest } = entry;
        this.setKey(rest as Omit<KVRow, "CreateIndex" | "ModifyIndex">);
      }
      if (delayMs > 0) this.lockDelays.put(entry.Key, { until: this.ctx.clock.now() + delayMs });
    }
    this.ctx.events.record("session.invalidated", { service: "registry", subject: session.ID, detail: { reason, behavior: session.Behavior } });
  }

  /** Whether a lock-delay still holds the key (Consul refuses an acquire then). */
  lockDelayed(key: string): boolean {
    const delay = this.lockDelays.get(key);
    return delay !== undefined && delay.until > this.ctx.clock.now();
  }

  private invalidateWhere(matches: (session: SessionRow) => boolean, reason: string): void {
    for (const session of this.sessionsSorted()) if (matches(session)) this.destroySession(session, reason);
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

function bound(session: SessionRow, node: string, checkId: string): boolean {
  return session.Node.toLowerCase() === node.toLowerCase() && sessionCheckIds(session).includes(checkId);
}
