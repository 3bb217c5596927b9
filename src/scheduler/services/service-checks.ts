/**
 * The checks of Nomad's native services (`check` blocks of `provider =
 * "nomad"` services; client/allocrunner/checks_hook.go, client/
 * serviceregistration/checks). Nomad's client runs them itself, over the
 * network, and keeps the latest result of each in its check store; the
 * emulator runs no network checks, so a result is derived from the
 * allocation's state on the virtual clock, the same way every time:
 *
 * - a check first runs `interval / 2` after the allocation started running,
 *   then every `interval` (the observer's schedule); until its first run it is
 *   `pending` ("nomad: waiting to run");
 * - a run while the service's workload runs (the task for a task service, the
 *   allocation for a group service) succeeds ("nomad: http ok" with status
 *   code 200, or "nomad: tcp ok"); a run after it ended fails, as a connection
 *   to a dead service is refused;
 * - an allocation told to stop has no results (PreKill purges them);
 * - the control action `nomad-check-status` sets a check's status from the
 *   instant it runs (as if the check ran then) until it is set back to `auto`.
 *
 * Deployment health counts the checks where Nomad's health tracker does
 * (`update { health_check = "checks" }`, the default, and no Consul checks in
 * the group): see `checksHealthDelayMs` and `checksPassing`.
 */
import { createHash } from "node:crypto";
import type { ServiceContext } from "../../core/context.js";
import type { Table } from "../../core/store.js";
import { versionKey, type AllocRow, type Json, type SchedulerState } from "../state/model.js";
import type { TaskStatesRow } from "../state/task-states.js";

export const CHECK_OVERRIDES_TABLE = "scheduler.check-overrides";

/** A check's result, structs.CheckQueryResult (StatusCode and Task are omitempty). */
export interface CheckQueryResult {
  ID: string;
  Mode: "healthiness" | "readiness";
  Status: CheckStatus;
  StatusCode?: number;
  Output: string;
  /** Unix seconds of the run (or of the pending stub). */
  Timestamp: number;
  /** The allocation's name (`job.group[n]`), as the client's check hook fills it in. */
  Group: string;
  Task?: string;
  Service: string;
  Check: string;
}

export type CheckStatus = "success" | "failure" | "pending";

/** A status set by the control API for one check of one allocation. */
export type CheckOverrideRow = {
  AllocID: string;
  CheckID: string;
  Status: "success" | "failure";
  Output: string;
  /** Virtual ms it was set at: the check counts as having run then. */
  Since: number;
};

/** One native check with the service (and task) it belongs to. */
export interface NativeCheck {
  readonly service: Json;
  readonly check: Json;
  /** The task of a task-level service; "" for a group service. */
  readonly task: string;
}

const SECOND_NS = 1_000_000_000;
const NS_PER_MS = 1_000_000;

const overrideKey = (allocId: string, checkId: string) => `${allocId}\u0000${checkId}`;

/**
 * structs.NomadCheckID: the lowercase hex MD5 of the allocation ID, the group,
 * and the check's task name, name, type, port label, on_update, address mode,
 * interval and timeout (int64 nanoseconds, little-endian), protocol, path and
 * method (empty strings add nothing).
 */
export function nomadCheckId(allocId: string, group: string, check: Json): string {
  const sum = createHash("md5");
  const text = (value: unknown) => {
    if (typeof value === "string" && value !== "") sum.update(value, "utf8");
  };
  const duration = (value: unknown) => {
    const bytes = Buffer.alloc(8);
    bytes.writeBigInt64LE(BigInt.asIntN(64, BigInt(Math.trunc(Number(value ?? 0)))));
    sum.update(bytes);
  };
  text(allocId);
  text(group);
  for (const field of ["TaskName", "Name", "Type", "PortLabel", "OnUpdate", "AddressMode"]) text(check[field]);
  duration(check.Interval);
  duration(check.Timeout);
  for (const field of ["Protocol", "Path", "Method"]) text(check[field]);
  return sum.digest("hex");
}

/** The group's task group document in the job version the allocation runs. */
export function allocGroup(state: SchedulerState, alloc: AllocRow): Json | undefined {
  const job = state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? state.job(alloc.Namespace, alloc.JobID);
  return (job?.TaskGroups as Json[] | undefined)?.find((g) => g.Name === alloc.TaskGroup);
}

/** TaskGroup.NomadServices' checks: group services first, then each task's, in job order. */
export function nativeChecks(group: Json | undefined): NativeCheck[] {
  if (!group) return [];
  const out: NativeCheck[] = [];
  const collect = (services: unknown, task: string) => {
    for (const service of (services as Json[] | null) ?? []) {
      if (service.Provider !== "nomad") continue;
      for (const check of (service.Checks as Json[] | null) ?? []) out.push({ service, check, task });
    }
  };
  collect(group.Services, "");
  for (const task of (group.Tasks as Json[] | null) ?? []) collect(task.Services, String(task.Name));
  return out;
}

/** Whether a group has checks of Consul services (Nomad's health tracker then watches those instead). */
function hasConsulChecks(group: Json): boolean {
  const services = [...((group.Services as Json[] | null) ?? []), ...((group.Tasks as Json[] | null) ?? []).flatMap((t) => (t.Services as Json[] | null) ?? [])];
  return services.some((s) => s.Provider !== "nomad" && ((s.Checks as Json[] | null) ?? []).length > 0);
}

/** The native checks deployment health waits for (Tracker: useChecks, no Consul checks, at least one Nomad check). */
export function healthChecks(group: Json | undefined): NativeCheck[] {
  if (!group) return [];
  const update = group.Update as { HealthCheck?: string } | null | undefined;
  if ((update?.HealthCheck ?? "checks") !== "checks" || hasConsulChecks(group)) return [];
  return nativeChecks(group);
}

/** interval, at least a second (Nomad refuses shorter native check intervals), in virtual ms. */
function intervalMs(check: Json): number {
  return Math.max(SECOND_NS, Number(check.Interval ?? 0)) / NS_PER_MS;
}

/**
 * The virtual ms from the allocation running to the checks deployment health
 * waits for having all run once (the latest first run), or 0 when there are
 * none: the tracker needs every check out of `pending` before it counts
 * min_healthy_time.
 */
export function checksHealthDelayMs(group: Json | undefined): number {
  return Math.max(0, ...healthChecks(group).map(({ check }) => Math.floor(intervalMs(check) / 2)));
}

/** When the allocation's tasks started running (the first `Started` event), else undefined. */
function runningSince(states: TaskStatesRow): number | undefined {
  let first: number | undefined;
  for (const state of Object.values(states)) {
    for (const event of state.Events) if (event.Type === "Started" && (first === undefined || event.Time < first)) first = event.Time;
  }
  return first;
}

/** When the workload behind a check stopped running (its task's, or the allocation's last task's FinishedAt), else undefined. */
function endedAt(alloc: AllocRow, states: TaskStatesRow, task: string): number | undefined {
  if (task !== "") {
    const state = states[task];
    return state?.State === "dead" ? (state.FinishedAt ?? alloc.ModifyTime) : undefined;
  }
  if (alloc.ClientStatus === "pending" || alloc.ClientStatus === "running") return undefined;
  const finished = Object.values(states)
    .map((s) => s.FinishedAt)
    .filter((t): t is number => t !== null);
  return finished.length > 0 ? Math.max(...finished) : alloc.ModifyTime;
}

/** The Nomad check results of the allocations of one region's state. */
export class ServiceChecks {
  private readonly overrides: Table<CheckOverrideRow>;

  constructor(
    private readonly state: SchedulerState,
    ctx: ServiceContext = state.ctx,
  ) {
    this.overrides = ctx.store.table<CheckOverrideRow>(CHECK_OVERRIDES_TABLE);
  }

  /**
   * The client's check store for the allocation (`GET /v1/client/allocation/:id/checks`):
   * check ID → latest result; null when it holds none (an allocation told to
   * stop, or one without native checks), as Nomad's nil map.
   */
  results(alloc: AllocRow & { TaskStates: TaskStatesRow }, now: number): Record<string, CheckQueryResult> | null {
    if (alloc.DesiredStatus !== "run") return null;
    const checks = nativeChecks(allocGroup(this.state, alloc));
    if (checks.length === 0) return null;
    const since = runningSince(alloc.TaskStates) ?? alloc.CreateTime;
    const results: Record<string, CheckQueryResult> = {};
    for (const entry of checks) {
      const result = this.result(alloc, entry, since, now);
      results[result.ID] = result;
    }
    return results;
  }

  /**
   * Whether every check deployment health counts is past `pending` and none
   * of the healthiness ones fails (Tracker.watchNomadEvents' scan), now.
   */
  checksPassing(alloc: AllocRow, now: number): boolean {
    const states = alloc.TaskStates as TaskStatesRow | null | undefined;
    if (!states) return false;
    const since = runningSince(states) ?? alloc.CreateTime;
    return healthChecks(allocGroup(this.state, alloc)).every((entry) => {
      const result = this.result(alloc as AllocRow & { TaskStates: TaskStatesRow }, entry, since, now);
      return result.Status === "success" || (result.Status === "failure" && result.Mode === "readiness");
    });
  }

  /** The allocation's check IDs for the checks of a service (and a check name), all when neither is given. */
  select(alloc: AllocRow, service: string | undefined, check: string | undefined): { id: string; service: string; check: string }[] {
    return nativeChecks(allocGroup(this.state, alloc))
      .filter((entry) => (service === undefined || entry.service.Name === service) && (check === undefined || entry.check.Name === check))
      .map((entry) => ({ id: nomadCheckId(alloc.ID, alloc.TaskGroup, entry.check), service: String(entry.service.Name), check: String(entry.check.Name) }));
  }

  /** Sets (or, with "auto", clears) a check's status from `now`. Inside a write. */
  override(allocId: string, checkId: string, status: "success" | "failure" | "auto", output: string | undefined, now: number): void {
    const key = overrideKey(allocId, checkId);
    if (status === "auto") {
      this.overrides.delete(key);
      return;
    }
    this.overrides.put(key, { AllocID: allocId, CheckID: checkId, Status: status, Output: output ?? (status === "success" ? "" : "nomad: check failed"), Since: now });
  }

  private result(alloc: AllocRow & { TaskStates: TaskStatesRow }, entry: NativeCheck, since: number, now: number): CheckQueryResult {
    const { service, check, task } = entry;
    const id = nomadCheckId(alloc.ID, alloc.TaskGroup, check);
    const base = {
      ID: id,
      Mode: check.OnUpdate === "ignore" ? ("readiness" as const) : ("healthiness" as const),
      Group: String(alloc.Name),
      ...(task !== "" ? { Task: task } : {}),
      Service: String(service.Name),
      Check: String(check.Name),
    };
    const interval = intervalMs(check);
    const firstRun = since + Math.floor(interval / 2);
    const scheduled = now < firstRun ? undefined : firstRun + Math.floor((now - firstRun) / interval) * interval;
    const stored = this.overrides.get(overrideKey(alloc.ID, id));
    const override = stored && stored.Since <= now ? stored : undefined;
    // Set while the allocation ran, it counts as a run of its own; set before, it shows from the first run.
    const overrideAt = override && override.Since >= since ? override.Since : undefined;
    const ranAt = scheduled === undefined ? overrideAt : overrideAt === undefined ? scheduled : Math.max(scheduled, overrideAt);
    if (ranAt === undefined || alloc.ClientStatus === "pending") {
      return { ...base, Status: "pending", Output: "nomad: waiting to run", Timestamp: unixSeconds(since) };
    }
    const ended = endedAt(alloc, alloc.TaskStates, task);
    if (ended !== undefined && ranAt >= ended) {
      return { ...base, Status: "failure", Output: refusedOutput(check, service, alloc), Timestamp: unixSeconds(ranAt) };
    }
    if (override && ranAt >= override.Since) {
      const http = check.Type === "http";
      return {
        ...base,
        Status: override.Status,
        ...(http ? { StatusCode: override.Status === "success" ? 200 : 500 } : {}),
        Output: override.Status === "success" && override.Output === "" ? okOutput(check) : override.Output,
        Timestamp: unixSeconds(ranAt),
      };
    }
    return { ...base, Status: "success", ...(check.Type === "http" ? { StatusCode: 200 } : {}), Output: okOutput(check), Timestamp: unixSeconds(ranAt) };
  }
}

function okOutput(check: Json): string {
  return check.Type === "http" ? "nomad: http ok" : "nomad: tcp ok";
}

/** What a run against a workload that is gone says: the dial is refused (net.Dialer's text; the HTTP client adds its `Get "url": `). */
function refusedOutput(check: Json, service: Json, alloc: AllocRow): string {
  const label = String(check.PortLabel || service.PortLabel || "");
  const ports = (alloc.SharedPorts as { Label?: string; Value?: number; HostIP?: string }[] | undefined) ?? [];
  const mapping = ports.find((p) => p.Label === label);
  const host = String(service.Address || mapping?.HostIP || "127.0.0.1");
  const port = mapping?.Value ?? (/^\d+$/.test(label) ? Number(label) : 0);
  const address = port > 0 ? `${host}:${port}` : host;
  const dial = `dial tcp ${address}: connect: connection refused`;
  if (check.Type !== "http") return dial;
  const url = `${String(check.Protocol || "http")}://${address}${String(check.Path ?? "")}`;
  return `nomad: ${String(check.Method || "GET")
    .charAt(0)
    .toUpperCase()}${String(check.Method || "GET")
    .slice(1)
    .toLowerCase()} "${url}": ${dial}`;
}

function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

const perState = new WeakMap<SchedulerState, ServiceChecks>();

export function serviceChecksOf(state: SchedulerState): ServiceChecks {
  let checks = perState.get(state);
  if (!checks) {
    checks = new ServiceChecks(state);
    perState.set(state, checks);
  }
  return checks;
}
