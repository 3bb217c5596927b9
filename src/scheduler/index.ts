/**
 * The scheduler service: one simulated cluster per region (cluster.ts), the
 * agent's own region and any others the fixtures declare (`scheduler.regions`).
 *
 * As on a Nomad agent, a request is served in the agent's region unless it
 * names another: `region=` on any request, or for a job registration the
 * body's `Region` / the job's `Region` (command/agent/job_endpoint.go
 * `regionForJob`). It is then "forwarded transparently": answered by that
 * region's cluster, with that region's state and index. An unknown region is
 * the agent's own 500 `No path to region` (its query parsing says so).
 */
import { Hono, type Context } from "hono";
import { exceedsValueCount, parseBodyOnce } from "../core/json.js";
import type { ServiceContext } from "../core/context.js";
import type { SchedulerFixture } from "../scenario-files/schema.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { federated, Federation, memberQuery, type FixtureParts } from "../http/federation.js";
import { runFault } from "../http/routing.js";
import { textResponse } from "../http/respond.js";
import { ACL_TABLES, tokenBySecret, type TokenRow } from "./acl/acl.js";
import { drain, type ServiceInstance } from "../http/service.js";
import { SCHEDULER_ROUTES } from "./route-catalog.js";
import { ALLOC_FAULT, createSchedulerCluster, NODE_FAULT, type RegionFixture, type SchedulerCluster } from "./cluster.js";
import { field } from "./http/nomad-http.js";

export { SCHEDULER_CONFIG_TABLE, type SchedulerAgentConfig } from "./cluster.js";

/** Job registrations, whose region may come from the body (`regionForJob`). */
const JOB_REGISTRATION = /^\/v1\/(jobs|job\/[^/]+(\/plan)?)$/;

export function createSchedulerService(ctx: ServiceContext): ServiceInstance<SchedulerFixture> {
  const peers = () => regions.all().map((cluster) => cluster.settings());
  const home = createSchedulerCluster(ctx, peers);
  const regions: Federation<SchedulerCluster, RegionFixture> = new Federation(ctx, {
    service: "scheduler",
    noun: "region",
    home,
    homeName: () => home.settings().region,
    build: (scoped) => createSchedulerCluster(scoped, peers),
  });

  /**
   * The cluster a request is for. A `region=` nobody knows goes to the home
   * cluster, whose query parsing answers `No path to region` in its turn
   * (after the 404 of an unknown path, as Nomad's order has it); only a
   * body's unknown region is undefined here.
   */
  const clusterFor = async (c: Context): Promise<SchedulerCluster | undefined> => {
    const url = c.req.url;
    const method = c.req.method;
    // The common case (no region anywhere) decides without parsing the URL.
    if (!url.includes("region=") && method === "GET") return home;
    const parsed = new URL(url);
    const named = parsed.searchParams.get("region");
    if (named) return regions.named(named) ?? home;
    if ((method === "PUT" || method === "POST") && JOB_REGISTRATION.test(parsed.pathname)) {
      const region = await bodyRegion(c);
      if (region) return regions.named(region);
    }
    return home;
  };

  const app = new Hono();
  app.all("*", async (c) => {
    const cluster = await clusterFor(c);
    // Nomad's forwarding fails the same way for a body's unknown region.
    return cluster ? cluster.serve(c) : textResponse(500, "No path to region");
  });

  const controlled = (c: Context) => regions.pick(c.req.query("region"));
  const regionQuery = memberQuery("region", "region");
  const control = new DocumentedRoutes("scheduler");
  control.get(
    "/event-streams",
    {
      summary: "open event streams (GET /v1/event/stream subscribers; 0 once every client has gone) and buffered event batches",
      query: regionQuery,
      responses: { 200: "`{Subscribers, BufferedBatches}`", 404: "unknown region" },
    },
    (c) => runFault(c, () => controlled(c).eventStreams()),
  );
  control.post(
    "/nodes/:id",
    {
      summary: "node faults: status (down/up), scheduling eligibility, drain",
      body: NODE_FAULT,
      params: { id: "the node's ID or name" },
      query: regionQuery,
      responses: { 200: "the node's `{ID, Name, Status, SchedulingEligibility}` after the change", 400: "bad body", 404: "no such node or region" },
    },
    (c, { body }) => runFault(c, () => controlled(c).nodeFault(c.req.param("id"), body)),
  );
  control.post(
    "/allocations/:id",
    {
      summary: "allocation faults: fail or complete it, or report it healthy or unhealthy to its deployment",
      description: "Give `ClientStatus` or `Healthy`; `ClientStatus` wins when both are given.",
      body: ALLOC_FAULT,
      params: { id: "the allocation's ID" },
      query: regionQuery,
      responses: {
        200: "`{ID, ClientStatus, DesiredStatus}`",
        400: "bad body, or neither field given",
        404: "no such allocation or region",
        409: "a health report for an allocation outside an active deployment",
      },
    },
    (c, { body }) => runFault(c, () => controlled(c).allocFault(c.req.param("id"), body)),
  );
  regions.leaderRoutes(
    control,
    "region",
    "leader-loss fault: `{known: false}` fails writes and default reads with 500 `No cluster leader` (stale reads still answer; the cluster's own work waits); `{known: true}` elects one again",
  );

  const parts: FixtureParts<SchedulerFixture, RegionFixture> = {
    homePart: ({ regions: _regions, ...rest }) => rest,
    members: (section) => section.regions,
    // Namespaces, ACL policies and tokens, timing and GC settings come from the agent's region (Nomad replicates the first two).
    inherited: (section, name) => ({ region: name, namespaces: section.namespaces, acl: section.acl, timing: section.timing, gc: section.gc }),
    named: (section, name) => ({ ...section, region: name }),
  };

  const aclTokens = ctx.store.table<TokenRow>(ACL_TABLES.tokens);
  return {
    name: "scheduler",
    app,
    control,
    readKey: (request) => home.readKey!(request),
    compressThreshold: home.compressThreshold,
    routeCatalog: SCHEDULER_ROUTES,
    actions: federated(home.actions ?? {}, "region", (name) => regions.pick(name).actions ?? {}),
    conditions: federated(home.conditions ?? {}, "region", (name) => regions.pick(name).conditions ?? {}),
    notFound: (c) => home.serve(c),
    // ACL tokens are the agent's region's (replicated): written down by accessor.
    credentials: {
      reference: (secret) => tokenBySecret(aclTokens, secret)?.AccessorID,
      secret: (accessor) => aclTokens.get(accessor)?.SecretID,
    },
    initialize: (sections) => regions.initialize(sections, parts),
    initializeSteps: (sections) => regions.initializeSteps(sections, parts),
    applyFixture: (section) => drain(regions.fixtureSteps(section, parts)),
    fixtureSteps: (section) => regions.fixtureSteps(section, parts),
  };
}

/** `Region` of a job registration's body (the request's, else the job's), as Go's decoder finds fields. */
async function bodyRegion(c: Context): Promise<string | undefined> {
  let body: unknown;
  try {
    const text = await c.req.text();
    if (exceedsValueCount(text)) return undefined; // refused by the handler's decoding, unparsed
    body = parseBodyOnce(c.req.raw, text);
  } catch {
    return undefined; // the cluster's own decoding answers the error
  }
  const region = field(body, "Region");
  if (typeof region === "string" && region !== "") return region;
  const jobRegion = field(field(body, "Job"), "Region");
  return typeof jobRegion === "string" && jobRegion !== "" ? jobRegion : undefined;
}
