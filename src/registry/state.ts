/**
 * The registry's state: catalog nodes and checks, sessions, KV entries and
 * key lock-delays, each a store table, plus the rules that tie them together
 * (Consul's state store): destroying a session — explicitly, by TTL, by a
 * critical or removed check, or by node removal — applies its Behavior to
 * the keys it holds and starts their lock-delay.
 */
import type { ServiceContext } from "../core/context.js";
import type { Table } from "../core/store.js";

export const TABLES = {
  nodes: "registry.nodes",
  checks: "registry.checks",
  sessions: "registry.sessions",
  kv: "registry.kv",
  lockDelay: "registry.lockdelay",
} as const;

export const SESSION_TTL_TIMER = "registry.session-ttl";
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
  Flags: number;
  /** base64, or null for no value. */
  Value: string | null;
  Session?: string;
  CreateIndex: number;
  ModifyIndex: number;
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

  constructor(private readonly ctx: ServiceContext) {
    const store = ctx.store;
    this.nodes = store.table(TABLES.nodes);
    this.checks = store.table(TABLES.checks);
    this.sessions = store.table(TABLES.sessions);
    this.kv = store.table(TABLES.kv);
    this.lockDelays = store.table(TABLES.lockDelay);
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
        this.kv.delete(entry.Key);
      } else {
        const { Session: _released, CreateIndex: _c, ModifyIndex: _m, ...rest } = entry;
        this.kv.putIndexed(entry.Key, rest as Omit<KVRow, "CreateIndex" | "ModifyIndex">);
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

function bound(session: SessionRow, node: string, checkId: string): boolean {
  return session.Node.toLowerCase() === node.toLowerCase() && sessionCheckIds(session).includes(checkId);
}
