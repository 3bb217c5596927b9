/**
 * The agent's own view of its services and checks (Consul's agent local
 * state): the services and checks live in the shared catalog, on the
 * agent's node, so catalog and health reads see them; what Consul keeps only
 * in the agent — which checks the agent registered, a check's TTL and
 * `DeregisterCriticalServiceAfter`, since when it has been critical, the
 * last output a TTL update gave — is a table of its own here
 * (`registry.agent-checks`), so snapshots and the state hash carry it.
 *
 * Time is the virtual clock: a TTL check not updated within its TTL turns
 * critical (Consul's CheckTTL), and the reaper (Consul's reapServices, every
 * `check_reap_interval` = 30 s) removes a service whose check has been
 * critical for longer than its DeregisterCriticalServiceAfter. The reaper
 * ticks on 30 s boundaries of the virtual clock, and only while some check
 * asks for it, so replays fire it at the same instants.
 */
import type { TimerRecord } from "../core/clock.js";
import type { GroupLookup, Table } from "../core/store.js";
import type { RegistryApi } from "./api.js";
import { checkKey, type CheckRow, type ServiceRow } from "./state.js";
import { CONSUL_SERVICE_ID } from "./server-node.js";

export const AGENT_CHECKS_TABLE = "registry.agent-checks";
export const CHECK_TTL_TIMER = "registry.check-ttl";
export const CHECK_REAP_TIMER = "registry.check-reap";
/** Consul's check_reap_interval. */
export const CHECK_REAP_INTERVAL_MS = 30_000;
/** Consul's check_deregister_interval_min: a shorter DeregisterCriticalServiceAfter is raised to it. */
export const DEREGISTER_MIN_MS = 60_000;
/** Consul's default check_output_max_size (checks.DefaultBufSize). */
export const MAX_OUTPUT_BYTES = 4096;
/** structs.NodeMaint and structs.ServiceMaintPrefix. */
export const NODE_MAINTENANCE_CHECK = "_node_maintenance";
export const SERVICE_MAINTENANCE_PREFIX = "_service_maintenance:";

export type AgentCheckRow = {
  CheckID: string;
  ServiceID: string;
  /** CheckType.Type(), or `maintenance`. */
  Type: string;
  /** 0: not a TTL check. */
  ttlMs: number;
  /** 0: never reaped; else at least DEREGISTER_MIN_MS. */
  deregisterAfterMs: number;
  /** The virtual instant the check turned critical; -1 while it is not. */
  criticalSince: number;
  /** The output of the last TTL update (CheckTTL.lastOutput), quoted when the TTL lapses. */
  lastOutput: string;
};

export type CheckFields = Omit<CheckRow, "CreateIndex" | "ModifyIndex">;

const REAPER = "agent";
/** The group (AgentLocal.reapable) of the checks that ask the reaper to remove their service. */
const REAPABLE = "reapable";
/** The group (AgentLocal.tracked) of the reapable checks the agent counts as critical since some instant. */
const TRACKED = "tracked";

/** CheckTTL's output cap: the first bytes, then how much was kept. */
export function capOutput(output: string): string {
  const bytes = Buffer.from(output, "utf8");
  if (bytes.length <= MAX_OUTPUT_BYTES) return output;
  return `${bytes.subarray(0, MAX_OUTPUT_BYTES).toString("utf8")} ... (captured ${MAX_OUTPUT_BYTES} of ${bytes.length} bytes)`;
}

export class AgentLocal {
  readonly checks: Table<AgentCheckRow>;
  private readonly checksOfService: GroupLookup<AgentCheckRow>;
  /** The checks with a DeregisterCriticalServiceAfter, all under REAPABLE: the reaper's tick looks at these only. */
  private readonly reapable: GroupLookup<AgentCheckRow>;
  /** The reapable checks with a critical-since instant, all under TRACKED. */
  private readonly tracked: GroupLookup<AgentCheckRow>;

  constructor(private readonly api: RegistryApi) {
    const { ctx } = api;
    this.checks = ctx.store.table(AGENT_CHECKS_TABLE);
    this.checksOfService = this.checks.groupBy((c) => (c.ServiceID === "" ? [] : c.ServiceID));
    this.reapable = this.checks.groupBy((c) => (isReapable(c) ? REAPABLE : []));
    this.tracked = this.checks.groupBy((c) => (isReapable(c) && c.criticalSince >= 0 ? TRACKED : []));
    ctx.clock.handle(CHECK_TTL_TIMER, (timer: TimerRecord) => this.expireTTL(timer.subject));
    ctx.clock.handle(CHECK_REAP_TIMER, () => this.reap());
    // A check of the agent's node removed by another path (catalog deregister, txn, node or service
    // removal) takes its agent-local row and TTL timer with it, as the agent's own removal does.
    api.state.onCheckRemoved((node, checkId) => {
      if (checkKey(node, checkId) === checkKey(this.node(), checkId)) this.forget(checkId);
    });
  }

  node(): string {
    return this.api.config().agentNode;
  }

  /**
   * The agent's services: every service on its node but the server's own
   * `consul` service, which the leader registers in the catalog and the
   * agent's local state never holds (its anti-entropy skips it).
   */
  services(): ServiceRow[] {
    return this.api.state.servicesOf(this.node()).filter((s) => s.ID !== CONSUL_SERVICE_ID);
  }

  findService(id: string): ServiceRow | undefined {
    return id === CONSUL_SERVICE_ID ? undefined : this.api.state.findService(this.node(), id);
  }

  /** The catalog row of a check the agent registered (not the node's serfHealth and the like). */
  findCheck(checkId: string): CheckRow | undefined {
    if (!this.checks.has(checkId)) return undefined;
    return this.api.state.checks.get(checkKey(this.node(), checkId));
  }

  /** The agent's checks, by check ID. */
  agentChecks(): CheckRow[] {
    const out: CheckRow[] = [];
    for (const local of this.checks.sorted()) {
      const row = this.api.state.checks.get(checkKey(this.node(), local.CheckID));
      if (row) out.push(row);
    }
    return out.sort((a, b) => (a.CheckID < b.CheckID ? -1 : a.CheckID > b.CheckID ? 1 : 0));
  }

  /** The checks the agent registered for one of its services, by check ID. */
  checksOfServiceId(serviceId: string): CheckRow[] {
    const out: CheckRow[] = [];
    for (const local of this.checksOfService(serviceId).sort(byCheckId)) {
      const row = this.api.state.checks.get(checkKey(this.node(), local.CheckID));
      if (row) out.push(row);
    }
    return out;
  }

  /** A service's checks plus the agent's node checks (Consul's ChecksForService(id, true)). */
  checksForService(serviceId: string): CheckRow[] {
    return this.agentChecks().filter((c) => c.ServiceID === serviceId || c.ServiceID === "");
  }

  ttlCount(): number {
    let count = 0;
    for (const local of this.checks.values()) if (local.ttlMs > 0 && this.findCheck(local.CheckID)) count++;
    return count;
  }

  /** Adds or replaces a check (inside a write); a TTL check's timer starts now. */
  putCheck(row: CheckFields, local: { Type: string; ttlMs: number; deregisterAfterMs: number }): void {
    const { ctx, state } = this.api;
    state.putCheck(row);
    this.checks.put(row.CheckID, {
      CheckID: row.CheckID,
      ServiceID: row.ServiceID,
      Type: local.Type,
      ttlMs: local.ttlMs,
      deregisterAfterMs: local.deregisterAfterMs > 0 ? Math.max(local.deregisterAfterMs, DEREGISTER_MIN_MS) : 0,
      criticalSince: row.Status === "critical" ? ctx.clock.now() : -1,
      lastOutput: "",
    });
    ctx.clock.cancelFor(CHECK_TTL_TIMER, row.CheckID);
    if (local.ttlMs > 0) ctx.clock.schedule({ at: ctx.clock.now() + local.ttlMs, kind: CHECK_TTL_TIMER, subject: row.CheckID });
    this.armReaper();
  }

  /**
   * A status update (the TTL endpoints, or the control API on an agent
   * check; inside a write): the catalog row changes only if the status or
   * output does, and a TTL check's timer restarts from now either way.
   */
  setStatus(checkId: string, status: string, output: string): void {
    const { ctx, state } = this.api;
    const local = this.checks.get(checkId);
    const existing = state.checks.get(checkKey(this.node(), checkId));
    if (!local || !existing) return;
    if (existing.Status !== status || existing.Output !== output) {
      const { CreateIndex: _c, ModifyIndex: _m, ...fields } = existing;
      state.putCheck({ ...fields, Status: status, Output: output });
    }
    this.noteStatus(local, status, output);
    if (local.ttlMs > 0) {
      ctx.clock.cancelFor(CHECK_TTL_TIMER, checkId);
      ctx.clock.schedule({ at: ctx.clock.now() + local.ttlMs, kind: CHECK_TTL_TIMER, subject: checkId });
    }
  }

  /** Removes a check the agent registered (inside a write). */
  removeCheck(checkId: string): void {
    this.api.state.removeCheck(this.node(), checkId);
    this.forget(checkId);
  }

  /** Removes a service with its checks (inside a write). */
  removeService(serviceId: string): void {
    for (const local of this.checksOfService(serviceId).sort(byCheckId)) this.forget(local.CheckID);
    this.api.state.removeService(this.node(), serviceId);
  }

  private forget(checkId: string): void {
    if (this.checks.delete(checkId)) this.api.ctx.clock.cancelFor(CHECK_TTL_TIMER, checkId);
  }

  private noteStatus(local: AgentCheckRow, status: string, output: string): void {
    const critical = status === "critical";
    const criticalSince = critical ? (local.criticalSince >= 0 ? local.criticalSince : this.api.ctx.clock.now()) : -1;
    if (criticalSince !== local.criticalSince || output !== local.lastOutput) this.checks.put(local.CheckID, { ...local, criticalSince, lastOutput: output });
    if (critical) this.armReaper();
  }

  /** CheckTTL's expiry: critical, saying so (and quoting the last update's output); not re-armed until the next update. */
  private expireTTL(checkId: string): unknown {
    const local = this.checks.get(checkId);
    if (!local || !this.findCheck(checkId)) return { check: checkId, expired: false };
    const output = local.lastOutput === "" ? "TTL expired" : `TTL expired (last output before timeout follows): ${local.lastOutput}`;
    const before = this.api.state.sessions.size;
    this.api.ctx.store.write(() => {
      const existing = this.findCheck(checkId)!;
      const { CreateIndex: _c, ModifyIndex: _m, ...fields } = existing;
      if (existing.Status !== "critical" || existing.Output !== output) this.api.state.putCheck({ ...fields, Status: "critical", Output: output });
      // The expiry output is not an update's: the next expiry still quotes the last update.
      const critical = existing.Status === "critical" && local.criticalSince >= 0 ? local.criticalSince : this.api.ctx.clock.now();
      if (critical !== local.criticalSince) this.checks.put(checkId, { ...local, criticalSince: critical });
      this.armReaper();
    });
    return { check: checkId, expired: true, invalidatedSessions: before - this.api.state.sessions.size };
  }

  /** The reapable checks critical in the catalog or tracked as critical by the agent, by check ID. */
  private reapCandidates(): AgentCheckRow[] {
    const candidates = new Map<string, AgentCheckRow>();
    for (const row of this.api.state.criticalChecksOf(this.node())) {
      const local = this.checks.get(row.CheckID);
      if (local && isReapable(local)) candidates.set(local.CheckID, local);
    }
    for (const local of this.tracked(TRACKED)) candidates.set(local.CheckID, local);
    return [...candidates.values()].sort(byCheckId);
  }

  /** Schedules the next reaper tick (a 30 s boundary of the virtual clock) while some check asks to be reaped. */
  private armReaper(): void {
    const { clock } = this.api.ctx;
    if (this.reapable.count(REAPABLE) === 0 || clock.timersFor(CHECK_REAP_TIMER, REAPER).length > 0) return;
    clock.schedule({ at: (Math.floor(clock.now() / CHECK_REAP_INTERVAL_MS) + 1) * CHECK_REAP_INTERVAL_MS, kind: CHECK_REAP_TIMER, subject: REAPER });
  }

  /**
   * Consul's reapServicesInternal: a service goes, with all its checks, once
   * one of its checks has been critical for longer than its timeout. The
   * critical-since instant is the agent's; a check some other path made
   * critical (the catalog, say) counts from the first tick that sees it.
   * A tick looks only at the reapable checks that are critical in the
   * catalog or that the agent counts as critical (to forget a recovery), so
   * it costs what is critical, not every check the agent has.
   */
  private reap(): unknown {
    const { ctx } = this.api;
    const now = ctx.clock.now();
    const reaped: string[] = [];
    const gone = new Set<string>();
    ctx.store.write(() => {
      for (const local of this.reapCandidates()) {
        if (gone.has(local.ServiceID)) continue;
        const row = this.findCheck(local.CheckID);
        if (!row) continue;
        if (row.Status !== "critical") {
          if (local.criticalSince >= 0) this.checks.put(local.CheckID, { ...local, criticalSince: -1 });
          continue;
        }
        if (local.criticalSince < 0) {
          this.checks.put(local.CheckID, { ...local, criticalSince: now });
          continue;
        }
        if (now - local.criticalSince > local.deregisterAfterMs) {
          reaped.push(local.ServiceID);
          gone.add(local.ServiceID);
          this.removeService(local.ServiceID);
        }
      }
    });
    for (const id of reaped) ctx.events.record("registry.service-reaped", { service: "registry", subject: id });
    this.armReaper();
    return { reaped };
  }
}

function isReapable(check: AgentCheckRow): boolean {
  return check.deregisterAfterMs > 0 && check.ServiceID !== "";
}

function byCheckId(a: AgentCheckRow, b: AgentCheckRow): number {
  return a.CheckID < b.CheckID ? -1 : a.CheckID > b.CheckID ? 1 : 0;
}
