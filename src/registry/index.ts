/**
 * The registry service: one Consul datacenter per cluster (cluster.ts), the
 * agent's own and any others the fixtures declare (`registry.datacenters`).
 *
 * As on a Consul agent, a request is served in the agent's datacenter
 * unless `?dc=` names another (or, for a catalog registration, the body's
 * `Datacenter`): it is then forwarded, and answered with that datacenter's
 * catalog, sessions, KV and index. An unknown datacenter is the agent's own
 * 500 `No path to datacenter` (its RPC forwarding says so, in order).
 */
import { Hono, type Context } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import type { RegistryFixture } from "../fixtures/schema.js";
import { ActionError } from "../http/actions.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { federated, Federation } from "../http/federation.js";
import { runFault } from "../http/routing.js";
import type { ServiceInstance } from "../http/service.js";
import { CHECK_FAULT, createRegistryCluster, type DatacenterFixture, type RegistryCluster } from "./cluster.js";

export { REGISTRY_CONFIG_TABLE } from "./cluster.js";

/** Catalog writes, whose datacenter may come from the body (`structs.RegisterRequest.Datacenter`). */
const CATALOG_WRITE = /^\/v1\/catalog\/(de)?register$/;

export function createRegistryService(ctx: ServiceContext): ServiceInstance<RegistryFixture> {
  const names = () => [home.settings().datacenter, ...datacenters.names()];
  const home = createRegistryCluster(ctx, names);
  const datacenters = new Federation(ctx, "registry", (scoped) => createRegistryCluster(scoped, names));

  /** The cluster of a datacenter name; undefined when the federation has none such. */
  const clusterNamed = (name: string): RegistryCluster | undefined => (name === home.settings().datacenter ? home : datacenters.get(name));

  /** The cluster a request is for; an unknown datacenter goes home, whose checks answer `No path to datacenter`. */
  const clusterFor = async (c: Context): Promise<RegistryCluster> => {
    const url = c.req.url;
    const method = c.req.method;
    // The common case (no datacenter named anywhere) decides without parsing the URL.
    if (!url.includes("dc=") && method === "GET") return home;
    const parsed = new URL(url);
    const named = parsed.searchParams.get("dc");
    if (method === "PUT" && CATALOG_WRITE.test(parsed.pathname)) {
      const dc = await bodyDatacenter(c);
      if (dc) return clusterNamed(dc) ?? home;
    }
    return (named && clusterNamed(named)) || home;
  };

  const app = new Hono();
  app.all("*", async (c) => (await clusterFor(c)).serve(c));

  /** The cluster a control request or timeline step names (the home one without); 404 for an unknown datacenter. */
  const inDatacenter = (name: string | undefined): RegistryCluster => {
    if (!name) return home;
    const cluster = clusterNamed(name);
    if (!cluster) throw new ActionError(404, `no datacenter "${name}" (datacenters: ${names().join(", ")})`);
    return cluster;
  };
  const controlled = (c: Context) => inDatacenter(c.req.query("dc"));
  const dcQuery = v.looseObject({ dc: v.optional(v.pipe(v.string(), v.description("the datacenter (default: the agent's own)"))) });

  const control = new DocumentedRoutes("registry");
  control.post(
    "/checks",
    {
      summary: "sets a health check's status (creating the check if needed); critical invalidates the sessions bound to it",
      body: CHECK_FAULT,
      query: dcQuery,
      responses: { 200: "`{Node, CheckID, Status, invalidatedSessions}`", 400: "bad body", 404: "no such node in the catalog, or no such datacenter" },
    },
    (c, { body }) => runFault(c, () => controlled(c).setCheck(body)),
  );
  const leaderSpec = {
    query: dcQuery,
    responses: { 200: "`{known, lastContactMs}`: whether the datacenter knows its leader, and the virtual milliseconds since it last did", 400: "bad body", 404: "unknown datacenter" },
  };
  control.get("/leader", { summary: "whether the registry datacenter knows its leader", ...leaderSpec }, (c) => runFault(c, () => controlled(c).leader()));
  control.post(
    "/leader",
    {
      summary:
        "leader-loss fault: `{known: false}` fails writes and default/consistent reads with 500 `No cluster leader` (stale reads still answer, sessions do not expire); `{known: true}` elects one again, restarting every session TTL",
      body: v.strictObject({ known: v.boolean("known must be a boolean") }),
      ...leaderSpec,
    },
    (c, { body }) => runFault(c, () => controlled(c).setLeader(body.known)),
  );

  const applyDatacenters = (section: RegistryFixture, isNew: (name: string) => boolean) => {
    const homeDatacenter = home.settings().datacenter;
    for (const [name, dcSection] of Object.entries(section.datacenters ?? {})) {
      if (name === homeDatacenter) {
        home.applyFixture(dcSection);
        continue;
      }
      const fresh = isNew(name);
      const cluster = datacenters.join(name);
      // The edition is the cluster's; ACLs come from the primary datacenter (Consul replicates them) unless given.
      const inherited: DatacenterFixture = { datacenter: name, edition: home.settings().edition, acl: section.acl };
      if (fresh) cluster.initialize([inherited, { ...dcSection, datacenter: name }]);
      else cluster.applyFixture({ ...dcSection, datacenter: name });
    }
  };

  return {
    name: "registry",
    app,
    control,
    readKey: (request) => home.readKey!(request),
    compressThreshold: home.compressThreshold,
    actions: federated(home.actions ?? {}, "dc", (name) => inDatacenter(name).actions ?? {}),
    conditions: federated(home.conditions ?? {}, "dc", (name) => inDatacenter(name).conditions ?? {}),
    notFound: (c) => home.serve(c),
    initialize(sections) {
      home.initialize(sections.map(withoutDatacenters));
      const initialized = new Set<string>();
      for (const section of sections) applyDatacenters(section, (name) => !initialized.has(name) && (initialized.add(name), true));
    },
    applyFixture(section) {
      home.applyFixture(withoutDatacenters(section));
      applyDatacenters(section, (name) => datacenters.get(name) === undefined);
    },
  };
}

function withoutDatacenters(section: RegistryFixture): DatacenterFixture {
  const { datacenters: _datacenters, ...rest } = section;
  return rest;
}

/** A catalog write's `Datacenter` field (matched case-insensitively, as Go's decoder does). */
async function bodyDatacenter(c: Context): Promise<string | undefined> {
  try {
    const body = JSON.parse(await c.req.text()) as unknown;
    if (body === null || typeof body !== "object") return undefined;
    const key = Object.keys(body).find((k) => k.toLowerCase() === "datacenter");
    const value = key === undefined ? undefined : (body as Record<string, unknown>)[key];
    return typeof value === "string" && value !== "" ? value : undefined;
  } catch {
    return undefined; // the cluster's own decoding answers the error
  }
}
