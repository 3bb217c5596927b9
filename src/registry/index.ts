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
import { exceedsValueCount, parseBodyOnce } from "../core/json.js";
import type { ServiceContext } from "../core/context.js";
import type { RegistryFixture } from "../scenario-files/schema.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { federated, Federation, memberQuery, type FixtureParts } from "../http/federation.js";
import { runFault } from "../http/routing.js";
import { drain, type ServiceInstance } from "../http/service.js";
import { REGISTRY_ROUTES } from "./route-catalog.js";
import { CHECK_FAULT, createRegistryCluster, type DatacenterFixture, type RegistryCluster } from "./cluster.js";

export { REGISTRY_CONFIG_TABLE } from "./cluster.js";

/** Catalog writes, whose datacenter may come from the body (`structs.RegisterRequest.Datacenter`). */
const CATALOG_WRITE = /^\/v1\/catalog\/(de)?register$/;

export function createRegistryService(ctx: ServiceContext): ServiceInstance<RegistryFixture> {
  const names = () => datacenters.names();
  const home = createRegistryCluster(ctx, names);
  const datacenters: Federation<RegistryCluster, DatacenterFixture> = new Federation(ctx, {
    service: "registry",
    noun: "datacenter",
    home,
    homeName: () => home.settings().datacenter,
    build: (scoped) => createRegistryCluster(scoped, names),
  });

  /** The cluster a request is for; an unknown datacenter goes home, whose checks answer `No path to datacenter` in order. */
  const clusterFor = async (c: Context): Promise<RegistryCluster> => {
    const url = c.req.url;
    const method = c.req.method;
    // The common case (no datacenter named anywhere) decides without parsing the URL.
    if (!url.includes("dc=") && method === "GET") return home;
    const parsed = new URL(url);
    if (method === "PUT" && CATALOG_WRITE.test(parsed.pathname)) {
      const dc = await bodyDatacenter(c);
      if (dc) return datacenters.named(dc) ?? home;
    }
    const named = parsed.searchParams.get("dc");
    return (named && datacenters.named(named)) || home;
  };

  const app = new Hono();
  app.all("*", async (c) => (await clusterFor(c)).serve(c));

  const control = new DocumentedRoutes("registry");
  control.post(
    "/checks",
    {
      summary: "sets a health check's status (creating the check if needed); critical invalidates the sessions bound to it",
      body: CHECK_FAULT,
      query: memberQuery("dc", "datacenter"),
      responses: { 200: "`{Node, CheckID, Status, invalidatedSessions}`", 400: "bad body", 404: "no such node in the catalog, or no such datacenter" },
    },
    (c, { body }) => runFault(c, () => datacenters.pick(c.req.query("dc")).setCheck(body)),
  );
  datacenters.leaderRoutes(
    control,
    "dc",
    "leader-loss fault: `{known: false}` fails writes and default/consistent reads with 500 `No cluster leader` (stale reads still answer, sessions do not expire); `{known: true}` elects one again, restarting every session TTL",
  );

  const parts: FixtureParts<RegistryFixture, DatacenterFixture> = {
    homePart: ({ datacenters: _datacenters, ...rest }) => rest,
    members: (section) => section.datacenters,
    // The edition is the cluster's; ACLs come from the primary datacenter (Consul replicates them).
    inherited: (section, name) => ({ datacenter: name, edition: home.settings().edition, acl: section.acl }),
    named: (section, name) => ({ ...section, datacenter: name }),
  };

  return {
    name: "registry",
    app,
    control,
    readKey: (request) => home.readKey!(request),
    compressThreshold: home.compressThreshold,
    routeCatalog: REGISTRY_ROUTES,
    actions: federated(home.actions ?? {}, "dc", (name) => datacenters.pick(name).actions ?? {}),
    conditions: federated(home.conditions ?? {}, "dc", (name) => datacenters.pick(name).conditions ?? {}),
    notFound: (c) => home.serve(c),
    // ACL tokens come from the primary datacenter's settings (Consul replicates them): written down by accessor.
    credentials: {
      reference: (secret) => home.settings().acl.tokens.find((t) => t.SecretID === secret)?.AccessorID,
      secret: (accessor) => home.settings().acl.tokens.find((t) => t.AccessorID === accessor)?.SecretID,
    },
    initialize: (sections) => datacenters.initialize(sections, parts),
    initializeSteps: (sections) => datacenters.initializeSteps(sections, parts),
    applyFixture: (section) => drain(datacenters.fixtureSteps(section, parts)),
    fixtureSteps: (section) => datacenters.fixtureSteps(section, parts),
  };
}

/** A catalog write's `Datacenter` field (matched case-insensitively, as Go's decoder does). */
async function bodyDatacenter(c: Context): Promise<string | undefined> {
  try {
    const text = await c.req.text();
    if (exceedsValueCount(text)) return undefined; // refused by the handler's decoding, unparsed
    const body = parseBodyOnce(c.req.raw, text);
    if (body === null || typeof body !== "object") return undefined;
    const key = Object.keys(body).find((k) => k.toLowerCase() === "datacenter");
    const value = key === undefined ? undefined : (body as Record<string, unknown>)[key];
    return typeof value === "string" && value !== "" ? value : undefined;
  } catch {
    return undefined; // the cluster's own decoding answers the error
  }
}
