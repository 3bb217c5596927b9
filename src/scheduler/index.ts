/**
 * The scheduler service: Nomad's HTTP API over a simulated cluster on the
 * virtual clock (model.ts: state and views; engine.ts: evaluations,
 * placement, allocations, deployments; routes.ts: the endpoints).
 */
import { Hono } from "hono";
import type { ServiceContext } from "../core/context.js";
import type { SchedulerFixture } from "../fixtures/schema.js";
import { controlJsonBody } from "../http/routing.js";
import { settingsRow, type ServiceInstance } from "../http/service.js";
import { DEFAULT_TIMING, SchedulerEngine } from "./engine.js";
import { EventBroker, eventStreamHandler } from "./events.js";
import { NomadRouter } from "./http.js";
import { canonicalizeJob, formatMultierror, specChanged, validateJob } from "./jobspec.js";
import { SchedulerState, type NodeRow } from "./model.js";
import { registerRoutes } from "./routes.js";
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
  const router = new NomadRouter(ctx.compatHeaders, () => settings.current().region, acl);
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

  const registerFixtureJob = (document: Record<string, unknown>, index: number) => {
    const config = settings.current();
    const region = (document.Region as string | undefined) || config.region;
    const namespace = (document.Namespace as string | undefined) || "default";
    const job = canonicalizeJob(document, { region, namespace });
    const errors = validateJob(job);
    if (errors.length) throw new Error(`scheduler.jobs[${index}]: ${formatMultierror(errors).trim()}`);
    if (!state.namespaces.get(namespace)) throw new Error(`scheduler.jobs[${index}]: job "${String(job.ID)}" is in nonexistent namespace "${namespace}"`);
    engine.register(job, (previous) => specChanged(previous, job));
  };

  const applyEntities = (section: SchedulerFixture) => {
    acl.seed(section.acl as { policies?: Record<string, unknown>[]; tokens?: Record<string, unknown>[] } | undefined, "scheduler.acl");
    for (const ns of section.namespaces ?? []) {
      state.namespaces.putIndexed(ns.Name, { Name: ns.Name, Description: ns.Description ?? "", Quota: "", Meta: (ns.Meta as Record<string, string> | undefined) ?? null });
    }
    for (const node of section.nodes ?? []) putNode(node);
    if ((section.nodes ?? []).length > 0) engine.capacityChanged();
    (section.jobs ?? []).forEach((job, i) => registerFixtureJob(job, i));
  };

  const control = new Hono();
  // Open event streams (GET /v1/event/stream subscriptions): 0 once every client has gone.
  control.get("/event-streams", (c) => c.json({ Subscribers: broker.subscriberCount, BufferedBatches: broker.batches().length }));
  // Node faults: {"Status": "down"|"ready"}, {"SchedulingEligibility": "ineligible"|"eligible"}, {"Drain": true|false}.
  control.post("/nodes/:id", async (c) => {
    const node = state.nodes.get(c.req.param("id")) ?? [...state.nodes.values()].find((n) => n.Name === c.req.param("id"));
    if (!node) return c.json({ error: `no node "${c.req.param("id")}"` }, 404);
    const parsed = await controlJsonBody(c);
    if ("error" in parsed) return parsed.error;
    const body = parsed.body;
    const status = body.Status;
    const eligibility = body.SchedulingEligibility;
    const drain = body.Drain;
    if (status !== undefined && !["ready", "down", "initializing", "disconnected"].includes(status as string)) return c.json({ error: "Status must be ready, down, initializing or disconnected" }, 400);
    if (eligibility !== undefined && !["eligible", "ineligible"].includes(eligibility as string)) return c.json({ error: "SchedulingEligibility must be eligible or ineligible" }, 400);
    if (drain !== undefined && typeof drain !== "boolean") return c.json({ error: "Drain must be a boolean" }, 400);
    ctx.store.write(() => {
      const updated = {
        ...node,
        Status: (status as string | undefined) ?? node.Status,
        SchedulingEligibility: drain === true ? "ineligible" : ((eligibility as string | undefined) ?? node.SchedulingEligibility),
        Drain: (drain as boolean | undefined) ?? node.Drain,
        StatusUpdatedAt: status !== undefined ? ctx.clock.now() : node.StatusUpdatedAt,
      };
      const { CreateIndex: _c, ModifyIndex: _m, ...fields } = updated;
      state.nodes.putIndexed(node.ID, fields);
      ctx.events.record("node.updated", { service: "scheduler", subject: node.ID, detail: { status: updated.Status, eligibility: updated.SchedulingEligibility, drain: updated.Drain } });
      if (status === "down" && node.Status !== "down") engine.nodeDown({ ...node, ...updated });
      // Blocked evals may fit now; system jobs follow the node either way.
      engine.capacityChanged(state.nodes.get(node.ID));
    });
    return c.json({ ID: node.ID, Name: node.Name, Status: state.nodes.get(node.ID)!.Status, SchedulingEligibility: state.nodes.get(node.ID)!.SchedulingEligibility });
  });
  // Allocation faults: {"ClientStatus": "failed"|"complete"} or a health report {"Healthy": false|true}.
  control.post("/allocations/:id", async (c) => {
    const alloc = state.allocs.get(c.req.param("id"));
    if (!alloc) return c.json({ error: `no allocation "${c.req.param("id")}"` }, 404);
    const parsed = await controlJsonBody(c);
    if ("error" in parsed) return parsed.error;
    const body = parsed.body;
    if (body.ClientStatus === "failed") engine.failAlloc(alloc);
    else if (body.ClientStatus === "complete") engine.completeAlloc(alloc);
    else if (body.Healthy === false || body.Healthy === true) {
      // A health report as the client would send it: counts for (or fails) the allocation's deployment.
      if (!alloc.DeploymentID) return c.json({ error: `allocation "${alloc.ID}" is not part of a deployment` }, 409);
      try {
        ctx.store.write(() => engine.setAllocHealth(alloc.DeploymentID, body.Healthy ? [alloc.ID] : [], body.Healthy ? [] : [alloc.ID], "client"));
      } catch (error) {
        return c.json({ error: (error as Error).message }, 409);
      }
    } else return c.json({ error: 'give {"ClientStatus": "failed" | "complete"} or {"Healthy": true | false}' }, 400);
    const updated = state.allocs.get(alloc.ID)!;
    return c.json({ ID: updated.ID, ClientStatus: updated.ClientStatus, DesiredStatus: updated.DesiredStatus });
  });

  return {
    name: "scheduler",
    app,
    control,
    compressThreshold: 0, // gorilla's CompressHandler compresses every response
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
