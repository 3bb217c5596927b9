/**
 * Nomad's native service discovery (provider "nomad"; reference §2): the
 * ServiceRegistration rows and the rule that keeps them in step with the
 * allocations that own them.
 *
 * Nomad's client registers a group's services in the alloc runner's Prerun
 * (the allocation still pending) and a task's services once the task runs,
 * and removes them when the allocation is told to stop (PreKill) or becomes
 * client-terminal (the server deletes them in the same transaction). The
 * emulator has no client, so `syncAllocServices` runs inside every write that
 * changes an allocation's status or version (engine/placement.ts,
 * engine/allocations.ts › transitionAlloc, engine/reconcile.ts' in-place
 * update) and makes the allocation's registrations what its state implies.
 */
import * as v from "valibot";
import type { ServiceContext } from "../../core/context.js";
import { condition, type ConditionTable } from "../../http/actions.js";
import { versionKey, type AllocRow, type Json, type SchedulerState } from "../state/model.js";

export const SERVICE_REGISTRATIONS_TABLE = "scheduler.service-registrations";

/** structs.ServiceRegistration, in its Go field order (the encoder sorts the keys on the wire). */
export type ServiceRegistrationRow = {
  ID: string;
  ServiceName: string;
  Namespace: string;
  NodeID: string;
  Datacenter: string;
  JobID: string;
  AllocID: string;
  /** null when the service has no tags (reference §2.2). */
  Tags: string[] | null;
  Address: string;
  Port: number;
  CreateIndex: number;
  ModifyIndex: number;
};

const registrationKey = (namespace: string, id: string) => `${namespace}\u0000${id}`;

/** A group's services register while the allocation is pending or running; a task's once it runs. */
const GROUP_SERVICE_STATUSES = new Set(["pending", "running"]);

/** Service registrations of one region's state (one instance per SchedulerState, see `serviceRegistrationsOf`). */
export class ServiceRegistrations {
  private readonly table;
  private readonly byAlloc: (allocId: string) => ServiceRegistrationRow[];

  constructor(
    private readonly state: SchedulerState,
    ctx: ServiceContext = state.ctx,
  ) {
    this.table = ctx.store.table<ServiceRegistrationRow>(SERVICE_REGISTRATIONS_TABLE);
    this.byAlloc = this.table.groupBy((row) => row.AllocID);
  }

  /** Every registration in the memdb `id` index order: namespace, then ID. */
  sorted(): ServiceRegistrationRow[] {
    return this.table.sorted();
  }

  get(namespace: string, id: string): ServiceRegistrationRow | undefined {
    return this.table.get(registrationKey(namespace, id));
  }

  /** A service's registrations (the `service_name` index: namespace, name, then ID). */
  byName(namespace: string, name: string): ServiceRegistrationRow[] {
    return this.sorted().filter((row) => row.Namespace === namespace && row.ServiceName === name);
  }

  ofAlloc(allocId: string): ServiceRegistrationRow[] {
    return this.byAlloc(allocId).sort((a, b) => (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  }

  ofJob(namespace: string, jobId: string): ServiceRegistrationRow[] {
    return this.sorted().filter((row) => row.Namespace === namespace && row.JobID === jobId);
  }

  /** `DELETE /v1/service/:name/:id`; false when there is no such registration in the namespace. Inside a write. */
  delete(namespace: string, id: string): boolean {
    return this.table.delete(registrationKey(namespace, id));
  }

  /**
   * Makes the allocation's registrations what its state implies (inside the
   * write that changed it): an identical registration is left as it is, a
   * changed one keeps its CreateIndex (upsertServiceRegistrationTxn), and
   * those no longer implied are removed.
   */
  sync(alloc: AllocRow): void {
    // An allocation whose node is disconnected is `unknown`, not client-terminal: Nomad's server keeps its
    // registrations (only a node marked down or a terminal client update removes them), and its client is not
    // there to change them.
    if (alloc.ClientStatus === "unknown" && alloc.DesiredStatus === "run") return;
    const wanted = new Map(this.wanted(alloc).map((row) => [registrationKey(row.Namespace, row.ID), row]));
    for (const existing of this.byAlloc(alloc.ID)) {
      const key = registrationKey(existing.Namespace, existing.ID);
      if (!wanted.has(key)) this.table.delete(key);
    }
    for (const [key, row] of wanted) {
      const existing = this.table.get(key);
      if (existing && sameRegistration(existing, row)) continue;
      this.table.putIndexed(key, row);
    }
  }

  private wanted(alloc: AllocRow): Omit<ServiceRegistrationRow, "CreateIndex" | "ModifyIndex">[] {
    if (alloc.DesiredStatus !== "run" || !GROUP_SERVICE_STATUSES.has(alloc.ClientStatus)) return [];
    const job = this.state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? this.state.job(alloc.Namespace, alloc.JobID);
    const group = (job?.TaskGroups as Json[] | undefined)?.find((g) => g.Name === alloc.TaskGroup);
    if (!group) return [];
    const workloads: { name: string; services: Json[] }[] = [{ name: `group-${alloc.TaskGroup}`, services: (group.Services as Json[] | null) ?? [] }];
    if (alloc.ClientStatus === "running") {
      for (const task of (group.Tasks as Json[] | null) ?? []) workloads.push({ name: String(task.Name), services: (task.Services as Json[] | null) ?? [] });
    }
    const node = this.state.nodes.get(alloc.NodeID);
    const canary = (alloc.DeploymentStatus as { Canary?: boolean } | null)?.Canary === true;
    const rows: Omit<ServiceRegistrationRow, "CreateIndex" | "ModifyIndex">[] = [];
    for (const workload of workloads) {
      for (const service of workload.services) {
        if (service.Provider !== "nomad") continue;
        const address = serviceAddress(service, alloc);
        // Nomad's client fails to register a service whose address it cannot resolve (and logs why); none is shown.
        if (!address) continue;
        const canaryTags = (service.CanaryTags as string[] | null) ?? [];
        const tags = canary && canaryTags.length > 0 ? canaryTags : ((service.Tags as string[] | null) ?? []);
        const name = String(service.Name);
        rows.push({
          ID: `_nomad-task-${alloc.ID}-${workload.name}-${name}-${String(service.PortLabel ?? "")}`,
          ServiceName: name,
          Namespace: typeof service.Namespace === "string" && service.Namespace !== "" ? service.Namespace : alloc.Namespace,
          NodeID: alloc.NodeID,
          Datacenter: node?.Datacenter ?? "",
          JobID: alloc.JobID,
          AllocID: alloc.ID,
          Tags: tags.length > 0 ? [...tags] : null,
          Address: address.ip,
          Port: address.port,
        });
      }
    }
    return rows;
  }
}

function sameRegistration(a: ServiceRegistrationRow, b: Omit<ServiceRegistrationRow, "CreateIndex" | "ModifyIndex">): boolean {
  return (
    a.ServiceName === b.ServiceName &&
    a.NodeID === b.NodeID &&
    a.Datacenter === b.Datacenter &&
    a.JobID === b.JobID &&
    a.Address === b.Address &&
    a.Port === b.Port &&
    JSON.stringify(a.Tags ?? []) === JSON.stringify(b.Tags ?? [])
  );
}

type PortMapping = { Label?: string; Value?: number; HostIP?: string };

/**
 * serviceregistration.GetAddress for the modes an emulated (host-networked,
 * no driver network) allocation supports: `auto` (which is `host` here, or
 * the service's own Address) and `host`. `driver` and `alloc` need a network
 * the emulator does not model: undefined, as Nomad fails the registration.
 */
function serviceAddress(service: Json, alloc: AllocRow): { ip: string; port: number } | undefined {
  const mode = String(service.AddressMode || "auto");
  const custom = String(service.Address ?? "");
  const label = String(service.PortLabel ?? "");
  const ports = (alloc.SharedPorts as PortMapping[] | undefined) ?? [];
  const networks = (alloc.SharedNetworks as Json[] | undefined) ?? [];
  const mapping = ports.find((p) => p.Label === label);
  if (mode === "auto" && custom !== "") {
    if (label === "") return { ip: custom, port: 0 };
    if (mapping) return { ip: custom, port: mapping.Value ?? 0 };
    const port = numericPort(label);
    return port === undefined ? undefined : { ip: custom, port };
  }
  if (mode !== "auto" && mode !== "host") return undefined;
  if (custom !== "") return undefined;
  if (label === "") return networks.length === 1 ? { ip: String(networks[0]!.IP ?? ""), port: 0 } : { ip: "", port: 0 };
  if (mapping) return { ip: mapping.HostIP ?? "", port: mapping.Value ?? 0 };
  const port = numericPort(label);
  return port === undefined || port <= 0 ? undefined : { ip: "", port };
}

/** strconv.Atoi: an optional sign and decimal digits. */
function numericPort(label: string): number | undefined {
  return /^[+-]?\d+$/.test(label) ? Number(label) : undefined;
}

const perState = new WeakMap<SchedulerState, ServiceRegistrations>();

export function serviceRegistrationsOf(state: SchedulerState): ServiceRegistrations {
  let registrations = perState.get(state);
  if (!registrations) {
    registrations = new ServiceRegistrations(state);
    perState.set(state, registrations);
  }
  return registrations;
}

/** The engine's hook: inside the write that changed `alloc`, brings its service registrations in step. */
export function syncAllocServices(state: SchedulerState, alloc: AllocRow): void {
  serviceRegistrationsOf(state).sync(alloc);
}

/** The `service` condition (fixture timelines, `POST /_standin/await`): a service has at least (or exactly) `count` instances. */
export function serviceConditions(state: SchedulerState): ConditionTable {
  return {
    "nomad-service": condition({
      summary: "a native (provider nomad) service has at least (or exactly) `count` registered instances (default 1; 0 with exactly: none)",
      args: v.strictObject({
        service: v.pipe(v.string(), v.nonEmpty()),
        namespace: v.optional(v.string()),
        count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 1),
        exactly: v.optional(v.boolean()),
      }),
      check: (a) => {
        const instances = serviceRegistrationsOf(state).byName(a.namespace ?? "default", a.service);
        return {
          met: a.exactly ? instances.length === a.count : instances.length >= a.count,
          observed: { instances: instances.length, allocations: instances.map((row) => row.AllocID) },
        };
      },
    }),
  };
}
