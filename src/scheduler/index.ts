/**
 * The scheduler service: Nomad's HTTP API over a simulated cluster on the
 * virtual clock (model.ts: state and views; engine.ts: evaluations,
 * placement, allocations, deployments; routes.ts: the endpoints).
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import type { SchedulerFixture } from "../fixtures/schema.js";
import { ActionError } from "../http/actions.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { runFault } from "../http/routing.js";
import { answerCacheOf, StampedMemo, stampOf } from "../http/answer-cache.js";
import { settingsRow, type ServiceInstance } from "../http/service.js";
import { DEFAULT_TIMING, SchedulerEngine } from "./engine.js";
import { EventBroker, eventStreamHandler } from "./events.js";
import { NomadRouter } from "./http.js";
import { SchedulerState, type NodeRow } from "./model.js";
import { registerRoutes } from "./routes.js";
import { unemulatedSchedulerRoute } from "./catalog.js";
import { schedulerActions } from "./actions.js";
import { createSchedulerAcl, guardEventStream } from "./acl-routes.js";
import { extractToken } from "../http/tokens.js";

export const SCHEDULER_CONFIG_TABLE = "scheduler.config";

export type SchedulerAgentConfig = {
  region: string;
  datacenter: string;
  agentName: string;
  timing: Record<string, string>;
  aclEnabled: boolean;
};

const DEFAULT_CONFIG: SchedulerAgentConfig = { region: "global", datacenter: "dc1", agentName: "standin", timing: { ...DEFAULT_TIMING }, aclEnabled: false };

type FixtureNode = NonNullable<SchedulerFixture["nodes"]>[number];

/** A node fault's body: Nomad's field names. */
const NODE_FAULT = v.object({
  Status: v.optional(v.picklist(["ready", "down", "initializing", "disconnected"], "Status must be ready, down, initializing or disconnected")),
  SchedulingEligibility: v.optional(v.picklist(["eligible", "ineligible"], "SchedulingEligibility must be eligible or ineligible")),
  Drain: v.optional(v.boolean("Drain must be a boolean")),
});

/** An allocation fault's body: a client status or a health report. */
const ALLOC_FAULT = v.object({
  ClientStatus: v.optional(v.picklist(["failed", "complete"], "ClientStatus must be failed or complete")),
  Healthy: v.optional(v.boolean("Healthy must be a boolean")),
});

export function createSchedulerService(serviceContext: ServiceContext): ServiceInstance<SchedulerFixture> {
  // The event stream's broker sees every commit; the journal notes the scheduler records tell it what each write was.
  const broker = new EventBroker(serviceContext);
  const ctx = broker.context();
  const settings = settingsRow(ctx.store.table<SchedulerAgentConfig>(SCHEDULER_CONFIG_TABLE), "agent", DEFAULT_CONFIG, (current, section: SchedulerFixture) => ({
    region: section.region ?? current.region,
    datacenter: section.datacenter ?? current.datacenter,
    agentName: section.agentName ?? current.agentName,
    timing: { ...current.timing, ...section.timing },
    aclEnabled: section.acl?.enabled ?? current.aclEnabled,
  }));
  const state = new SchedulerState(ctx);
  broker.attach(state);
  const engine = new SchedulerEngine(state, ctx, () => settings.current().timing);
  const acl = createSchedulerAcl(ctx, () => settings.current().aclEnabled);
  const router = new NomadRouter(ctx.compatHeaders, () => settings.current().region, acl, unemulatedSchedulerRoute, answerCacheOf(ctx), new StampedMemo(stampOf(ctx)));
  registerRoutes(router, state, engine, ctx, settings.current);
  acl.register(router);

  const app = new Hono();
  // Nomad's EventStream parses index and topic itself, before the common parameters.
  app.all(
    "/v1/event/stream",
    eventStreamHandler(broker, ctx, () => settings.current().region, (request, topics, namespace) =>
      guardEventStream(acl.resolveForStream(extractToken(request, { names: router.names })), topics, namespace),
    ),
  );
  app.all("*", (c) => router.dispatch(c));

  const putNode = (node: FixtureNode) => {
    const config = settings.current();
    const now = ctx.clock.now();
    const name = node.Name;
    const existing = node.ID ? state.nodes.get(node.ID) : [...state.nodes.values()].find((n) => n.Name === name);
    const id = node.ID ?? existing?.ID ?? ctx.ids.uuid();
    const { ID: _id, Name: _name, Resources, Attributes, Meta, ...other } = node;
    const row: Omit<NodeRow, "CreateIndex" | "ModifyIndex"> = {
      ...other,
      ID: id,
      Name: name,
      Datacenter: node.Datacenter ?? config.datacenter,
      NodePool: node.NodePool ?? "default",
      NodeClass: node.NodeClass ?? "",
      HTTPAddr: node.HTTPAddr ?? "127.0.0.1:4646",
      Status: node.Status ?? "ready",
      StatusDescription: "",
      SchedulingEligibility: (other.SchedulingEligibility as string | undefined) ?? "eligible",
      Drain: false,
      DrainStrategy: null,
      Attributes: { "cpu.arch": "amd64", "kernel.name": "linux", "os.name": "ubuntu", "nomad.version": "1.9.0", "driver.docker": "1", "driver.exec": "1", "unique.hostname": name, ...Attributes },
      Meta: { ...Meta },
      Drivers: {
        docker: { Attributes: null, Detected: true, HealthDescription: "Healthy", Healthy: true, UpdateTime: new Date(now).toISOString() },
        exec: { Attributes: null, Detected: true, HealthDescription: "Healthy", Healthy: true, UpdateTime: new Date(now).toISOString() },
      },
      ComputedClass: "",
      TLSEnabled: false,
      Links: null,
      Events: null,
      HostVolumes: null,
      HostNetworks: null,
      CSIControllerPlugins: null,
      CSINodePlugins: null,
      LastDrain: null,
      CpuShares: Resources?.CPU ?? 8000,
      MemoryMB: Resources?.MemoryMB ?? 16384,
      StatusUpdatedAt: now,
    };
    state.nodes.putIndexed(id, row);
  };

  const faults = schedulerActions({ state, engine, ctx, region: () => settings.current().region });
  const registerFixtureJob = (document: Record<string, unknown>, index: number) => faults.registerJob(document, `scheduler.jobs[${index}]`);

  const applyEntities = (section: SchedulerFixture) => {
    acl.seed(section.acl as { policies?: Record<string, unknown>[]; tokens?: Record<string, unknown>[] } | undefined, "scheduler.acl");
    for (const ns of section.namespaces ?? []) {
      state.namespaces.putIndexed(ns.Name, { Name: ns.Name, Description: ns.Description ?? "", Quota: "", Meta: (ns.Meta as Record<string, string> | undefined) ?? null });
    }
    for (const node of section.nodes ?? []) putNode(node);
    if ((section.nodes ?? []).length > 0) engine.capacityChanged();
    (section.jobs ?? []).forEach((job, i) => registerFixtureJob(job, i));
  };

  const control = new DocumentedRoutes("scheduler");
  // Open event streams (GET /v1/event/stream subscriptions): 0 once every client has gone.
  control.get(
    "/event-streams",
    { summary: "open event streams (GET /v1/event/stream subscribers; 0 once every client has gone) and buffered event batches", responses: { 200: "`{Subscribers, BufferedBatches}`" } },
    (c) => c.json({ Subscribers: broker.subscriberCount, BufferedBatches: broker.batches().length }),
  );
  // Node faults: {"Status": "down"|"ready"}, {"SchedulingEligibility": "ineligible"|"eligible"}, {"Drain": true|false}.
  control.post(
    "/nodes/:id",
    {
      summary: "node faults: status (down/up), scheduling eligibility, drain",
      body: NODE_FAULT,
      params: { id: "the node's ID or name" },
      responses: { 200: "the node's `{ID, Name, Status, SchedulingEligibility}` after the change", 400: "bad body", 404: "no such node" },
    },
    (c, { body }) => runFault(c, () => ctx.store.write(() => faults.updateNode(faults.findNode(c.req.param("id")), body))),
  );
  // Allocation faults: {"ClientStatus": "failed"|"complete"} or a health report {"Healthy": false|true}.
  control.post(
    "/allocations/:id",
    {
      summary: "allocation faults: fail or complete it, or report it healthy or unhealthy to its deployment",
      description: "Give `ClientStatus` or `Healthy`; `ClientStatus` wins when both are given.",
      body: ALLOC_FAULT,
      params: { id: "the allocation's ID" },
      responses: { 200: "`{ID, ClientStatus, DesiredStatus}`", 400: "bad body, or neither field given", 404: "no such allocation", 409: "a health report for an allocation outside an active deployment" },
    },
    (c, { body }) =>
      runFault(c, () => {
        const alloc = state.allocs.get(c.req.param("id"));
        if (!alloc) throw new ActionError(404, `no allocation "${c.req.param("id")}"`);
        return ctx.store.write(() => faults.allocFault(alloc, body));
      }),
  );

  return {
    name: "scheduler",
    app,
    control,
    readKey: (request) => router.readKey(request),
    compressThreshold: 0, // gorilla's CompressHandler compresses every response
    actions: faults.actions,
    conditions: faults.conditions,
    notFound: (c) => router.dispatch(c),
    initialize(sections) {
      settings.initialize(sections);
      state.namespaces.putIndexed("default", { Name: "default", Description: "Default shared namespace", Quota: "", Meta: null });
      const config = settings.current();
      putNode({ Name: config.agentName, Datacenter: config.datacenter });
      for (const section of sections) applyEntities(section);
    },
    applyFixture(section) {
      settings.apply(section);
      applyEntities(section);
    },
  };
}
