/**
 * One scheduler region: Nomad's HTTP API over a simulated cluster on the
 * virtual clock (state/: the tables and their views; engine/: evaluations,
 * placement, allocations, deployments; routes/: the endpoints, by resource). The
 * service (index.ts) runs one per region, each on its own scope of the state.
 */
import { requestUrl } from "../http/routing.js";
import { Hono, type Context } from "hono";
import * as v from "valibot";
import { NOMAD_VERSION } from "../core/versions.js";
import type { ServiceContext } from "../core/context.js";
import type { SchedulerFixture } from "../scenario-files/schema.js";
import { ActionError } from "../http/actions.js";
import { leaderGatedClock, Leadership, type LeaderView } from "../http/leader.js";
import { answerCacheOf, StampedMemo, stampOf } from "../http/answer-cache.js";
import { drain, settingsRow, type ServiceInstance } from "../http/service.js";
import { DEFAULT_TIMING, SchedulerEngine, type GcSettings } from "./engine/index.js";
import { NodeOperations } from "./nodes/node-ops.js";
import { EventBroker } from "./events/events.js";
import { eventStreamHandler } from "./events/stream-endpoint.js";
import { NomadRouter } from "./http/nomad-http.js";
import { SchedulerState, type NodeRow } from "./state/model.js";
import { nodeNetworkFields, type NodeNetworkFixture } from "./state/network.js";
import { isBuiltInPool, NODE_POOLS_TABLE, NodePools } from "./nodes/node-pools.js";
import { schedulerConfig } from "./state/scheduler-config.js";
import { registerRoutes } from "./routes/index.js";
import { SCHEDULER_ROUTES, unemulatedSchedulerRoute } from "./route-catalog.js";
import { schedulerActions } from "./actions.js";
import { seedVariables, variablesOf } from "./variables/variables.js";
import { createSchedulerAcl, guardEventStream } from "./acl/acl-routes.js";
import { extractToken } from "../http/tokens.js";
import { logLimitsIn, scriptRow, TaskLogs } from "./state/task-logs.js";
import { registerFsRoutes } from "./routes/fs.js";

export const SCHEDULER_CONFIG_TABLE = "scheduler.config";
/** Timers that came due while no leader was known (http/leader `leaderGatedClock`). */
const DEFERRED_TIMERS_TABLE = "scheduler.deferred-timers";

export type SchedulerAgentConfig = {
  region: string;
  datacenter: string;
  agentName: string;
  timing: Record<string, string>;
  aclEnabled: boolean;
  /** The garbage collector's settings (engine/gc.ts); absent until a fixture gives some, so states without keep their rows. */
  gc?: GcSettings;
};

const DEFAULT_CONFIG: SchedulerAgentConfig = { region: "global", datacenter: "dc1", agentName: "standin", timing: { ...DEFAULT_TIMING }, aclEnabled: false };

type FixtureNode = NonNullable<SchedulerFixture["nodes"]>[number];

/** A node fault's body: Nomad's field names. */
export const NODE_FAULT = v.object({
  Status: v.optional(v.picklist(["ready", "down", "initializing", "disconnected"], "Status must be ready, down, initializing or disconnected")),
  SchedulingEligibility: v.optional(v.picklist(["eligible", "ineligible"], "SchedulingEligibility must be eligible or ineligible")),
  Drain: v.optional(v.boolean("Drain must be a boolean")),
});

/** An allocation fault's body: a client status or a health report. */
export const ALLOC_FAULT = v.object({
  ClientStatus: v.optional(v.picklist(["failed", "complete"], "ClientStatus must be failed or complete")),
  Healthy: v.optional(v.boolean("Healthy must be a boolean")),
});

/** A region's fixture section: the scheduler section's own fields but the federation's. */
export type RegionFixture = Omit<SchedulerFixture, "regions">;

export interface SchedulerCluster extends ServiceInstance<RegionFixture> {
  /** Answers a request routed to this region (the port's middleware has run). */
  serve(c: Context): Response | Promise<Response>;
  settings(): SchedulerAgentConfig;
  /** Node fault (control API): by ID or name; throws ActionError. Runs its own write. */
  nodeFault(idOrName: string, body: v.InferOutput<typeof NODE_FAULT>): unknown;
  /** Allocation fault (control API); throws ActionError. Runs its own write. */
  allocFault(id: string, body: v.InferOutput<typeof ALLOC_FAULT>): unknown;
  eventStreams(): { Subscribers: number; BufferedBatches: number };
  leader(): LeaderView;
  /** Loses or restores the region's leader (runs its own write, or joins the open one). */
  setLeader(known: boolean): LeaderView;
}

/**
 * `peers`: every region's agent settings (this one's included), for
 * `/v1/regions` and `/v1/agent/members`.
 */
export function createSchedulerCluster(serviceContext: ServiceContext, peers?: () => readonly SchedulerAgentConfig[]): SchedulerCluster {
  // The event stream's broker sees every commit; the journal notes the scheduler records tell it what each write was.
  const broker = new EventBroker(serviceContext);
  const ctx = broker.context();
  const settings = settingsRow(ctx.store.table<SchedulerAgentConfig>(SCHEDULER_CONFIG_TABLE), "agent", DEFAULT_CONFIG, (current, section: RegionFixture) => ({
    region: section.region ?? current.region,
    datacenter: section.datacenter ?? current.datacenter,
    agentName: section.agentName ?? current.agentName,
    timing: { ...current.timing, ...section.timing },
    aclEnabled: section.acl?.enabled ?? current.aclEnabled,
    ...(section.gc || current.gc ? { gc: { ...current.gc, ...section.gc } } : {}),
  }));
  const state = new SchedulerState(ctx);
  const pools = new NodePools(ctx.store.table(NODE_POOLS_TABLE), state);
  broker.attach(state);
  const leadership = new Leadership(
    ctx.store.table(SCHEDULER_CONFIG_TABLE),
    () => ctx.clock.now(),
    (fn) => ctx.store.write(fn),
  );
  // The cluster's own work (evaluations, allocation updates, deployments, launches) waits while no leader is known;
  // a new leader takes it up.
  const gate = leaderGatedClock(ctx.clock, leadership, ctx.store.table(DEFERRED_TIMERS_TABLE), (fn) => ctx.store.write(fn));
  leadership.onElected(() => gate.release());
  const engine = new SchedulerEngine(
    state,
    { ...ctx, clock: gate.clock },
    () => settings.current().timing,
    () => settings.current().gc,
  );
  const nodeOps = new NodeOperations(state, { ...ctx, clock: gate.clock }, engine, () => engine.startupMs());
  const acl = createSchedulerAcl(ctx, () => settings.current().aclEnabled);
  const router = new NomadRouter(
    ctx.compatHeaders,
    () => settings.current().region,
    acl,
    unemulatedSchedulerRoute,
    answerCacheOf(ctx),
    new StampedMemo(stampOf(ctx)),
    () => leadership.view(),
  );
  registerRoutes(router, state, engine, ctx, settings.current, peers, nodeOps);
  const taskLogs = new TaskLogs(ctx, logLimitsIn(state));
  registerFsRoutes(router, { state, ctx, logs: taskLogs });
  acl.register(router);

  // Nomad's EventStream parses index and topic itself, before the common parameters.
  const streamRoute = "/v1/event/stream";
  const stream = eventStreamHandler(
    broker,
    ctx,
    () => settings.current().region,
    (request, topics, namespace) => guardEventStream(acl.resolveForStream(extractToken(request, { names: router.names })), topics, namespace),
  );
  // A forced GC collects in deferred slices (engine/gc-force.ts): every request here waits until it is done,
  // while its slices run on their turns and the other ports are served between them.
  const serveSettled = (c: Context, serve: (c: Context) => Response | Promise<Response>) => {
    const settled = ctx.store.settled();
    return settled ? settled.then(() => serve(c)) : serve(c);
  };
  const serve = (c: Context) => (requestUrl(c.req.url).pathname === streamRoute ? stream(c) : router.dispatch(c));
  const dispatch = (c: Context) => serveSettled(c, serve);
  const app = new Hono();
  app.all("*", dispatch);

  const putNode = (node: FixtureNode) => {
    const config = settings.current();
    const now = ctx.clock.now();
    const name = node.Name;
    const existing = node.ID ? state.nodes.get(node.ID) : [...state.nodes.values()].find((n) => n.Name === name);
    const id = node.ID ?? existing?.ID ?? ctx.ids.uuid();
    const { ID: _id, Name: _name, Resources, Attributes, Meta, NodeResources, ReservedResources, ...other } = node;
    const httpAddr = node.HTTPAddr ?? "127.0.0.1:4646";
    const row: Omit<NodeRow, "CreateIndex" | "ModifyIndex"> = {
      ...other,
      ID: id,
      Name: name,
      Datacenter: node.Datacenter ?? config.datacenter,
      NodePool: node.NodePool ?? "default",
      NodeClass: node.NodeClass ?? "",
      HTTPAddr: httpAddr,
      Status: node.Status ?? "ready",
      StatusDescription: "",
      SchedulingEligibility: (other.SchedulingEligibility as string | undefined) ?? "eligible",
      Drain: false,
      DrainStrategy: null,
      Attributes: {
        "cpu.arch": "amd64",
        "kernel.name": "linux",
        "os.name": "ubuntu",
        "nomad.version": NOMAD_VERSION,
        // The client fingerprints native service discovery as on (client config nomad_service_discovery defaults true).
        "nomad.service_discovery": "true",
        "driver.docker": "1",
        "driver.exec": "1",
        "unique.hostname": name,
        ...Attributes,
      },
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
      ...nodeNetworkFields(httpAddr.split(":")[0] ?? "", { NodeResources, ReservedResources } as NodeNetworkFixture),
      StatusUpdatedAt: now,
    };
    state.nodes.putIndexed(id, row);
    pools.ensure(node.NodePool ?? "default");
  };

  const faults = schedulerActions({ state, engine, nodeOps, ctx, region: () => settings.current().region, taskLogs });
  const registerFixtureJob = (document: Record<string, unknown>, index: number) => faults.registerJob(document, `scheduler.jobs[${index}]`);

  /** A fixture section applied to the running state: its settings, then its entities. */
  function* fixtureSteps(section: Parameters<typeof entitySteps>[0]): Generator<void, void, undefined> {
    settings.apply(section);
    yield* entitySteps(section);
  }

  /** A section's entities, a step each (see ServiceInstance.fixtureSteps). */
  function* entitySteps(section: RegionFixture): Generator<void, void, undefined> {
    acl.seed(section.acl as { policies?: Record<string, unknown>[]; tokens?: Record<string, unknown>[] } | undefined, "scheduler.acl");
    yield;
    for (const ns of section.namespaces ?? []) {
      state.namespaces.putIndexed(ns.Name, { Name: ns.Name, Description: ns.Description ?? "", Quota: "", Meta: (ns.Meta as Record<string, string> | undefined) ?? null });
      yield;
    }
    for (const [i, pool] of (section.nodePools ?? []).entries()) {
      if (isBuiltInPool(pool.Name)) throw new Error(`scheduler.nodePools[${i}]: modifying node pool "${pool.Name}" is not allowed`);
      pools.put({ Name: pool.Name, Description: pool.Description ?? "", Meta: pool.Meta ?? null, SchedulerConfiguration: pool.SchedulerConfiguration ?? null });
      yield;
    }
    if (section.schedulerConfiguration) {
      // Over the configuration in force (a fixture names what it changes), before the jobs, so a paused broker holds their evals.
      const current = schedulerConfig(ctx.store);
      const { PreemptionConfig, ...switches } = section.schedulerConfiguration;
      engine.setSchedulerConfig({
        ...current,
        ...switches,
        PreemptionConfig: { ...current.PreemptionConfig, ...PreemptionConfig },
      });
    }
    for (const node of section.nodes ?? []) {
      putNode(node);
      yield;
    }
    if ((section.nodes ?? []).length > 0) engine.capacityChanged();
    for (const [i, job] of (section.jobs ?? []).entries()) {
      registerFixtureJob(job, i);
      yield;
    }
    seedVariables(variablesOf(state), section.variables ?? []);
    yield;
    for (const entry of section.taskOutput ?? []) {
      taskLogs.setScript(scriptRow(entry));
      yield;
    }
  }

  return {
    name: "scheduler",
    app,
    routeCatalog: SCHEDULER_ROUTES,
    serve: dispatch,
    settings: settings.current,
    nodeFault: (idOrName, body) => ctx.store.write(() => faults.updateNode(faults.findNode(idOrName), body)),
    allocFault: (id, body) => {
      const alloc = state.allocs.get(id);
      if (!alloc) throw new ActionError(404, `no allocation "${id}"`);
      return ctx.store.write(() => faults.allocFault(alloc, body));
    },
    eventStreams: () => ({ Subscribers: broker.subscriberCount, BufferedBatches: broker.batches().length }),
    leader: () => leadership.view(),
    setLeader: (known) => leadership.set(known),
    readKey: (request) => router.readKey(request),
    compressThreshold: 0, // gorilla's CompressHandler compresses every response
    actions: {
      ...faults.actions,
      "scheduler-leader": leadership.action("the scheduler's servers lose their leader (known: false) or elect one again (known: true)"),
    },
    conditions: faults.conditions,
    notFound: (c) => serveSettled(c, (c) => router.dispatch(c)),
    initialize(sections) {
      drain(this.initializeSteps(sections));
    },
    *initializeSteps(sections) {
      settings.initialize(sections);
      state.namespaces.putIndexed("default", { Name: "default", Description: "Default shared namespace", Quota: "", Meta: null });
      const config = settings.current();
      putNode({ Name: config.agentName, Datacenter: config.datacenter });
      for (const section of sections) yield* entitySteps(section);
    },
    applyFixture: (section) => drain(fixtureSteps(section)),
    fixtureSteps,
  };
}
