/**
 * Native service discovery's endpoints (command/agent/service_registration_endpoint.go
 * and the ServiceRegistration RPCs; reference §2.4): `/v1/services`,
 * `/v1/service/:name` (with `choose=`), `DELETE /v1/service/:name/:id`, and
 * the job's and the allocation's registrations (`jobServices`,
 * `allocationServices`, reached from job.ts and allocations.ts). Every read
 * carries, and blocks on, the service registrations table's index.
 */
import { createHash } from "node:crypto";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, invalidMethod, NomadError, Read, ReadError, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import type { Tokenizer } from "./paging.js";
import { SERVICE_REGISTRATIONS_TABLE, serviceRegistrationsOf, type ServiceRegistrationRow } from "../services/service-registrations.js";
import { cmp } from "./helpers.js";
import type { RouteKit } from "./kit.js";

const TABLES = [SERVICE_REGISTRATIONS_TABLE];

/** `<Namespace>.<ID>`: the StructsTokenizer with namespace and ID. */
const namespaceIdTokenizer: Tokenizer<ServiceRegistrationRow> = {
  token: (row) => `${row.Namespace}.${row.ID}`,
  compare: cmp,
};

export function registerServiceRoutes(router: NomadRouter, { state, ctx, read, readList }: RouteKit): void {
  const registrations = serviceRegistrationsOf(state);

  router.exact("/v1/services", (rc) => {
    if (rc.method !== "GET") throw invalidMethod();
    const namespace = rc.options.namespace;
    // A single namespace wants read-job there; `*` lists the namespaces the token may read (none: `[]`).
    if (namespace !== "*" && !rc.acl.allowNamespace(namespace, "read-job")) throw permissionDenied();
    return read(rc, TABLES, () => {
      const rows = registrations.sorted().filter((row) => (namespace === "*" ? rc.acl.allowNamespace(row.Namespace, "read-job") : row.Namespace === namespace));
      return listStubs(rows);
    });
  });

  router.prefix("/v1/service/", async (rc) => {
    const parts = rc.rest.split("/");
    if (parts.length === 1) {
      if (rc.method !== "GET") throw invalidMethod();
      if (parts[0] === "") throw badRequest("missing service name");
      return readService(rc, parts[0]!);
    }
    if (parts.length === 2) {
      if (rc.method !== "DELETE") throw invalidMethod();
      if (parts[1] === "") throw badRequest("missing service id");
      return deleteRegistration(rc, parts[1]!);
    }
    throw badRequest("invalid URI");
  });

  async function readService(rc: RequestContext, name: string) {
    const namespace = rc.options.namespace;
    const choose = parseChoose(rc.query.get("choose") ?? "");
    if (!rc.acl.allowNamespace(namespace, "read-job")) throw permissionDenied();
    const page = await readList(rc, TABLES, () => registrations.byName(namespace, name), namespaceIdTokenizer, registrationView);
    // Nomad chooses among the page it read (after pagination).
    if (!choose) return page;
    return new Read(chooseRendezvous(page.value as ServiceRegistrationRow[], choose), page.index, page.nextToken);
  }

  function deleteRegistration(rc: RequestContext, id: string) {
    // `namespace=*` is taken literally (no registration lives there), as the state store's lookup does.
    const namespace = rc.options.namespace;
    if (!rc.acl.allowNamespace(namespace, "submit-job")) throw permissionDenied();
    // Only the ID names the registration; the name in the path is not read (Nomad's handler ignores it).
    const index = ctx.store.write(() => {
      if (!registrations.delete(namespace, id)) throw new NomadError(500, "service registration not found");
      return ctx.store.writeIndex();
    });
    return new Write(undefined, index);
  }
}

/** `GET /v1/job/:id/services` (Job.GetServiceRegistrations): 404 when the job does not exist. */
export function jobServices({ state, read }: RouteKit, rc: RequestContext, namespace: string, jobId: string): Promise<Read> {
  if (rc.method !== "GET") throw invalidMethod();
  if (!rc.acl.allowNamespace(namespace, "read-job")) throw permissionDenied();
  const registrations = serviceRegistrationsOf(state);
  return read(rc, TABLES, () => {
    if (!state.job(namespace, jobId)) throw new ReadError(404, "job not found", state.index(...TABLES));
    return registrations.ofJob(namespace, jobId).map(registrationView);
  });
}

/** `GET /v1/allocation/:id/services` (Alloc.GetServiceRegistrations): 404 when the allocation is absent or in another namespace. */
export function allocationServices({ state, read }: RouteKit, rc: RequestContext, allocId: string): Promise<Read> {
  if (rc.method !== "GET") throw invalidMethod();
  const namespace = rc.options.namespace;
  if (!rc.acl.allowNamespace(namespace, "read-job")) throw permissionDenied();
  const registrations = serviceRegistrationsOf(state);
  return read(rc, TABLES, () => {
    const alloc = state.allocs.get(allocId);
    if (!alloc || alloc.Namespace !== namespace) throw new ReadError(404, "allocation not found", state.index(...TABLES));
    return registrations.ofAlloc(allocId).map(registrationView);
  });
}

/** The wire object: the row as stored (structs.ServiceRegistration has no omitempty). */
function registrationView(row: ServiceRegistrationRow): ServiceRegistrationRow {
  return row;
}

/**
 * ServiceRegistrationListStub per namespace: each service once, with the
 * union of its registrations' tags. Nomad builds these from Go maps (random
 * order); here namespaces, services and tags come sorted, so answers repeat.
 */
function listStubs(rows: ServiceRegistrationRow[]): { Namespace: string; Services: { ServiceName: string; Tags: string[] }[] }[] {
  const byNamespace = new Map<string, Map<string, Set<string>>>();
  for (const row of rows) {
    let services = byNamespace.get(row.Namespace);
    if (!services) byNamespace.set(row.Namespace, (services = new Map()));
    let tags = services.get(row.ServiceName);
    if (!tags) services.set(row.ServiceName, (tags = new Set()));
    for (const tag of row.Tags ?? []) tags.add(tag);
  }
  return [...byNamespace.keys()].sort(cmp).map((namespace) => {
    const services = byNamespace.get(namespace)!;
    return {
      Namespace: namespace,
      Services: [...services.keys()].sort(cmp).map((name) => ({ ServiceName: name, Tags: [...services.get(name)!].sort(cmp) })),
    };
  });
}

type Choice = { count: number; key: string };

/** structs.ErrMalformedChooseParameter, wrapped as the RPC wraps it. */
const MALFORMED_CHOOSE = "failed to choose services: Parameter for choose must be in form '<number>|<key>'";

/** `<number>|<key>` (strings.SplitN, strconv.Atoi); "" is no choice. */
function parseChoose(raw: string): Choice | undefined {
  if (raw === "") return undefined;
  const bar = raw.indexOf("|");
  if (bar < 0) throw badRequest(MALFORMED_CHOOSE);
  const number = raw.slice(0, bar);
  const key = raw.slice(bar + 1);
  if (!/^[+-]?\d+$/.test(number) || key === "") throw badRequest(MALFORMED_CHOOSE);
  const count = Number(number);
  // A negative count passes Atoi and then fails slicing in Go (make with a negative length panics); none is chosen here.
  return { count: Math.max(0, count), key };
}

/**
 * Rendezvous hashing (ServiceRegistration.choose): each registration's
 * HashWith(key) — md5 over the big-endian uint64 port, AllocID, ID,
 * Namespace, Address, ServiceName, the tags and the key, as lowercase hex —
 * sorted ascending (stable), the first `count` kept.
 */
function chooseRendezvous(rows: ServiceRegistrationRow[], choice: Choice): ServiceRegistrationRow[] {
  const ranked = rows.map((row) => ({ hash: hashWith(row, choice.key), row }));
  ranked.sort((a, b) => cmp(a.hash, b.hash));
  return ranked.slice(0, Math.min(choice.count, rows.length)).map((entry) => entry.row);
}

function hashWith(row: ServiceRegistrationRow, key: string): string {
  const port = Buffer.alloc(8);
  port.writeBigUInt64BE(BigInt.asUintN(64, BigInt(row.Port)));
  const sum = createHash("md5");
  sum.update(port);
  for (const part of [row.AllocID, row.ID, row.Namespace, row.Address, row.ServiceName, ...(row.Tags ?? []), key]) sum.update(part, "utf8");
  return sum.digest("hex");
}
