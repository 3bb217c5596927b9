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
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import type { SchedulerFixture } from "../fixtures/schema.js";
import { ActionError } from "../http/actions.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { federated, Federation } from "../http/federation.js";
import { runFault } from "../http/routing.js";
import { textResponse } from "../http/respond.js";
import type { ServiceInstance } from "../http/service.js";
import { ALLOC_FAULT, createSchedulerCluster, NODE_FAULT, type RegionFixture, type SchedulerCluster } from "./cluster.js";
import { field } from "./http.js";

export { SCHEDULER_CONFIG_TABLE, type SchedulerAgentConfig } from "./cluster.js";

/** Job registrations, whose region may come from the body (`regionForJob`). */
const JOB_REGISTRATION = /^\/v1\/(jobs|job\/[^/]+(\/plan)?)$/;

export function createSchedulerService(ctx: ServiceContext): ServiceInstance<SchedulerFixture> {
  const peers = () => [home, ...regions.names().map((name) => regions.get(name)!)].map((cluster) => cluster.settings());
  const home = createSchedulerCluster(ctx, peers);
  const regions = new Federation(ctx, "scheduler", (scoped) => createSchedulerCluster(scoped, peers));

  /** The cluster of a region name; undefined when the federation has no such region. */
  const clusterNamed = (name: string): SchedulerCluster | undefined => (name === home.settings().region ? home : regions.get(name));

  /**
   * The cluster a request is for. A `region=` nobody knows goes to the home
   * cluster, whose query parsing answers `No path to region` in its turn
   * (after the 404 of an unknown path, as Nomad's order has it).
   */
  const clusterFor = async (c: Context): Promise<SchedulerCluster | undefined> => {
    const url = c.req.url;
    // The common case (no region anywhere) decides without parsing the URL.
    if (!url.includes("region=") && c.req.method === "GET") return home;
    const query = new URL(url).searchParams;
    const named = query.get("region");
    if (named) return clusterNamed(named) ?? home;
    const method = c.req.method;
    if ((method === "PUT" || method === "POST") && JOB_REGISTRATION.test(new URL(url).pathname)) {
      const region = await bodyRegion(c);
      if (region) return clusterNamed(region);
    }
    return home;
  };

  const app = new Hono();
  app.all("*", async (c) => {
    const cluster = await clusterFor(c);
    // Only a body's region can be unknown here (Nomad's forwarding fails the same way).
    return cluster ? cluster.serve(c) : textResponse(500, "No path to region");
  });

  /** The cluster a control request or a timeline step names (the home one without); 404 for an unknown region. */
  const inRegion = (name: string | undefined): SchedulerCluster => {
    if (!name) return home;
    const cluster = clusterNamed(name);
    if (!cluster) throw new ActionError(404, `no region "${name}" (regions: ${peers().map((p) => p.region).sort().join(", ")})`);
    return cluster;
  };
  const controlled = (c: Context) => inRegion(c.req.query("region"));

  const regionQuery = v.looseObject({ region: v.optional(v.pipe(v.string(), v.description("the region (default: the agent's own)"))) });
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

  const LEADER_BODY = v.strictObject({ known: v.boolean("known must be a boolean") });
  const leaderSpec = {
    query: regionQuery,
    responses: { 200: "`{known, lastContactMs}`: whether the region knows its leader, and the virtual milliseconds since it last did", 400: "bad body", 404: "unknown region" },
  };
  control.get("/leader", { summary: "whether the scheduler region knows its leader", ...leaderSpec }, (c) => runFault(c, () => controlled(c).leader()));
  control.post(
    "/leader",
    {
      summary: "leader-loss fault: `{known: false}` fails writes and default reads with 500 `No cluster leader` (stale reads still answer); `{known: true}` elects one again",
      body: LEADER_BODY,
      ...leaderSpec,
    },
    (c, { body }) => runFault(c, () => controlled(c).setLeader(body.known)),
  );

  const applyRegions = (section: SchedulerFixture, isNew: (name: string) => boolean) => {
    const homeRegion = home.settings().region;
    for (const [name, regionSection] of Object.entries(section.regions ?? {})) {
      if (name === homeRegion) {
        home.applyFixture(regionSection);
        continue;
      }
      const fresh = isNew(name);
      const cluster = regions.join(name);
      // Namespaces, ACL policies and tokens, and timing come from the agent's region unless given (Nomad replicates the first two).
      const inherited: RegionFixture = { region: name, namespaces: section.namespaces, acl: section.acl, timing: section.timing };
      if (fresh) cluster.initialize([inherited, { ...regionSection, region: name }]);
      else cluster.applyFixture({ ...regionSection, region: name });
    }
  };

  return {
    name: "scheduler",
    app,
    control,
    readKey: (request) => home.readKey!(request),
    compressThreshold: home.compressThreshold,
    actions: federated(home.actions ?? {}, "region", (name) => inRegion(name).actions ?? {}),
    conditions: federated(home.conditions ?? {}, "region", (name) => inRegion(name).conditions ?? {}),
    notFound: (c) => home.serve(c),
    initialize(sections) {
      home.initialize(sections.map(withoutRegions));
      const initialized = new Set<string>();
      for (const section of sections) {
        applyRegions(section, (name) => !initialized.has(name) && (initialized.add(name), true));
      }
    },
    applyFixture(section) {
      home.applyFixture(withoutRegions(section));
      applyRegions(section, (name) => regions.get(name) === undefined);
    },
  };
}

function withoutRegions(section: SchedulerFixture): RegionFixture {
  const { regions: _regions, ...rest } = section;
  return rest;
}

/** `Region` of a job registration's body (the request's, else the job's), as Go's decoder finds fields. */
async function bodyRegion(c: Context): Promise<string | undefined> {
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    return undefined; // the cluster's own decoding answers the error
  }
  const region = field(body, "Region");
  if (typeof region === "string" && region !== "") return region;
  const jobRegion = field(field(body, "Job"), "Region");
  return typeof jobRegion === "string" && jobRegion !== "" ? jobRegion : undefined;
}
