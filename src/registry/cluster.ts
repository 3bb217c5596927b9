/**
 * One registry datacenter: Consul's session endpoints, with the catalog and
 * KV pieces sessions need (locks, health-driven invalidation), ACLs,
 * blocking queries and TTLs on the virtual clock. The service (index.ts)
 * runs one per datacenter, each on its own scope of the state.
 */
import { Hono, type Context } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import type { RegistryFixture } from "../scenario-files/schema.js";
import { Leadership, type LeaderView } from "../http/leader.js";
import { answerCacheOf, StampedMemo, stampOf } from "../http/answer-cache.js";
import { drain, settingsRow, type ServiceInstance } from "../http/service.js";
import { normalizeToken } from "./acl.js";
import { RegistryApi, type RegistryConfig } from "./api.js";
import { checkRow, nodeRow, registerCatalogRoutes } from "./catalog.js";
import { registryHeaderNames, Router } from "./http.js";
import { registerKVRoutes } from "./kv.js";
import { registerAgentRoutes } from "./agent.js";
import { AgentLocal } from "./agent-local.js";
import { registerAgentServiceRoutes } from "./agent-services.js";
import { registerAgentCheckRoutes } from "./agent-checks.js";
import { registerCatalogServiceRoutes } from "./catalog-services.js";
import { registerHealthRoutes } from "./health.js";
import { fixtureServiceSteps } from "./fixture-services.js";
import { registerTxnRoutes } from "./txn.js";
import { registerEventRoutes } from "./events.js";
import { uint64FromJSON } from "../core/uint64.js";
import { REGISTRY_ROUTES, unemulatedRegistryRoute } from "./route-catalog.js";
import { registryActions } from "./actions.js";
import { createSession, registerSessionRoutes, resetSessionTimers } from "./sessions.js";
import { RegistryState, SERF_HEALTH_CHECK, type NodeRow } from "./state.js";
import { consulServerService, agentNodeIdentity } from "./server-node.js";

export const REGISTRY_CONFIG_TABLE = "registry.config";

const CHECK_STATUSES = ["passing", "warning", "critical", "maintenance"] as const;
const CHECK_STATUS_MESSAGE = `Status must be one of ${CHECK_STATUSES.join(", ")}`;

/** `POST /_standin/registry/checks`'s body; the messages name the field as they always have. */
export const CHECK_FAULT = v.object(
  {
    Node: v.optional(v.pipe(v.string("Node must be a string"), v.description("the check's node (default: the agent node)"))),
    CheckID: v.pipe(v.string("CheckID is required"), v.nonEmpty("CheckID is required")),
    Status: v.picklist(CHECK_STATUSES, CHECK_STATUS_MESSAGE),
    Output: v.optional(v.string("Output must be a string")),
  },
  // A missing key: the same messages as a bad one.
  (issue) => (issue.expected === '"CheckID"' ? "CheckID is required" : issue.expected === '"Status"' ? CHECK_STATUS_MESSAGE : issue.message),
);

const DEFAULT_CONFIG: RegistryConfig = {
  datacenter: "dc1",
  agentNode: "standin",
  defaultCheck: "agentHealth",
  edition: "community",
  acl: { enabled: false, defaultPolicy: "allow", tokens: [] },
};

/** A datacenter's fixture section: the registry section's own fields but the federation's. */
export type DatacenterFixture = Omit<RegistryFixture, "datacenters">;

export interface RegistryCluster extends ServiceInstance<DatacenterFixture> {
  /** Answers a request routed to this datacenter (the port's middleware has run). */
  serve(c: Context): Response | Promise<Response>;
  settings(): RegistryConfig;
  /** The check fault (control API); runs its own write; throws ActionError. */
  setCheck(body: v.InferOutput<typeof CHECK_FAULT>): unknown;
  leader(): LeaderView;
  /** Loses or restores the datacenter's leader (runs its own write, or joins the open one). */
  setLeader(known: boolean): LeaderView;
}

/** `peers`: every datacenter's name, the agent's own first (for `/v1/catalog/datacenters`). */
export function createRegistryCluster(ctx: ServiceContext, peers: () => readonly string[] = () => []): RegistryCluster {
  const state = new RegistryState(ctx);
  const settings = settingsRow(ctx.store.table<RegistryConfig>(REGISTRY_CONFIG_TABLE), "agent", DEFAULT_CONFIG, (current, section: DatacenterFixture) => ({
    datacenter: section.datacenter ?? current.datacenter,
    agentNode: section.agentNode ?? current.agentNode,
    defaultCheck: section.defaultCheck ?? current.defaultCheck,
    edition: editionFor(current, section),
    acl: {
      enabled: section.acl?.enabled ?? current.acl.enabled,
      defaultPolicy: section.acl?.defaultPolicy ?? current.acl.defaultPolicy,
      tokens: [...current.acl.tokens, ...(section.acl?.tokens ?? []).map((t) => normalizeToken(t, () => ctx.ids.uuid()))],
    },
  }));
  /** A session row's shape follows the edition (Partition/Namespace or neither), so the edition is fixed while sessions exist. */
  function editionFor(current: RegistryConfig, section: DatacenterFixture): RegistryConfig["edition"] {
    const edition = section.edition ?? current.edition;
    if (edition !== current.edition && state.sessions.size > 0) {
      throw new Error(
        `registry.edition: cannot change from "${current.edition}" to "${edition}" while sessions exist (set it in the start fixture, or reset with one that sets it)`,
      );
    }
    return edition;
  }
  const leadership = new Leadership(
    ctx.store.table(REGISTRY_CONFIG_TABLE),
    () => ctx.clock.now(),
    (fn) => ctx.store.write(fn),
  );
  const api = new RegistryApi(ctx, state, settings.current, () => leadership.view());
  // A new leader restarts every session's TTL (see resetSessionTimers).
  leadership.onElected(() => resetSessionTimers(api));
  const names = registryHeaderNames(ctx.compatHeaders);
  const router = new Router(names, () => settings.current().acl.defaultPolicy, unemulatedRegistryRoute, answerCacheOf(ctx), new StampedMemo(stampOf(ctx)));

  // The leader's RPC address; an empty string while none is known.
  router.register("/v1/status/leader", ["GET"], (rc) => {
    // Status.Leader goes through parse() like status/peers: a bad consistency or wait is a 400.
    rc.parse();
    return leadership.view().known ? "127.0.0.1:8300" : "";
  });
  // Every known datacenter, the agent's own first (Consul sorts them by round-trip time from here).
  router.register("/v1/catalog/datacenters", ["GET"], () => [settings.current().datacenter, ...peers().filter((dc) => dc !== settings.current().datacenter)]);
  registerSessionRoutes(router, api);
  registerCatalogRoutes(router, api);
  registerCatalogServiceRoutes(router, api);
  registerHealthRoutes(router, api);
  registerKVRoutes(router, api);
  const agentLocal = new AgentLocal(api);
  registerAgentRoutes(router, api, peers, agentLocal);
  registerAgentServiceRoutes(router, api, agentLocal);
  registerAgentCheckRoutes(router, api, agentLocal);
  registerTxnRoutes(router, api);
  registerEventRoutes(router, api);

  // Deferred writes (a scheduler's forced GC) are done before a write here takes its index; a read sees none of them,
  // so it is served between their slices. The wait lets the slices run on their turns: no port is held meanwhile.
  const serveSettled = (c: Context) => {
    const settled = c.req.method === "GET" || c.req.method === "HEAD" ? undefined : ctx.store.settled();
    return settled ? settled.then(() => router.dispatch(c)) : router.dispatch(c);
  };
  const app = new Hono();
  app.all("*", (c) => serveSettled(c));

  /** A node with the agent's default check (passing), unless the node lists that check itself. */
  const ensureNode = (
    node: { Node: string; Address?: string; Checks?: ReadonlyArray<Record<string, unknown>> },
    id: string,
    identity: Partial<Pick<NodeRow, "TaggedAddresses" | "Meta">> = {},
  ) => {
    const config = settings.current();
    const address = node.Address ?? "127.0.0.1";
    state.putNode(nodeRow(api, { ID: id, Node: node.Node, Address: address, TaggedAddresses: identity.TaggedAddresses ?? undefined, Meta: identity.Meta ?? undefined }));
    const checks = node.Checks ?? [];
    if (!checks.some((c) => c.CheckID === config.defaultCheck)) {
      state.putCheck(checkRow({ Node: node.Node, CheckID: config.defaultCheck, Name: "Agent Health Status", Status: "passing", Output: "Agent alive and reachable" }));
    }
    if (!checks.some((c) => c.CheckID === SERF_HEALTH_CHECK) && state.checksOf(node.Node).every((c) => c.CheckID !== SERF_HEALTH_CHECK)) {
      state.putCheck(checkRow({ Node: node.Node, CheckID: SERF_HEALTH_CHECK, Name: "Serf Health Status", Status: "passing", Output: "Agent alive and reachable" }));
    }
    for (const check of checks) state.putCheck(checkRow({ ...(check as { CheckID: string }), Node: node.Node }));
  };

  /** A fixture section applied to the running state: its settings, then its entities. */
  function* fixtureSteps(section: Parameters<typeof entitySteps>[0]): Generator<void, void, undefined> {
    settings.apply(section);
    yield* entitySteps(section);
  }

  /** A section's entities, a step each (see ServiceInstance.fixtureSteps). */
  function* entitySteps(section: DatacenterFixture): Generator<void, void, undefined> {
    // A fixture's nodes are agents' nodes (each gets the agent checks), so they carry an agent's tagged addresses and meta too.
    for (const node of section.nodes ?? []) {
      ensureNode(node, ctx.ids.uuid(), agentNodeIdentity(node.Address ?? "127.0.0.1"));
      yield;
    }
    // Before the sessions: a session may name a service's check.
    yield* fixtureServiceSteps(state, section.services ?? [], () => settings.current().agentNode);
    for (const [i, body] of (section.sessions ?? []).entries()) {
      const { ID, ...rest } = body as { ID?: unknown };
      // A fixture session may name its namespace (and partition) in the enterprise edition; the community
      // edition would ignore them as Consul CE does, so a fixture that names one is a mistake worth saying.
      if (!api.enterprise()) {
        const named = Object.keys(rest).find((key) => /^(namespace|partition)$/i.test(key));
        if (named) throw new Error(`registry.sessions[${i}].${named}: ${/^n/i.test(named) ? "namespaces" : "partitions"} need registry.edition "enterprise"`);
      }
      try {
        createSession(api, rest, { id: typeof ID === "string" ? ID : undefined, fixture: true });
      } catch (error) {
        throw new Error(`registry.sessions[${i}]: ${(error as Error).message}`);
      }
      yield;
    }
    for (const [i, entry] of (section.kv ?? []).entries()) {
      const session = entry.Session ? state.findSession(entry.Session) : undefined;
      if (entry.Session && !session) throw new Error(`registry.kv[${i}].Session: no session "${entry.Session}" (list it in registry.sessions first)`);
      const existing = state.kv.get(entry.Key);
      const flags = entry.Flags === undefined ? 0 : uint64FromJSON(entry.Flags);
      if (flags === undefined) throw new Error(`registry.kv[${i}].Flags: must be a uint64: an integer up to 2^53, or a string of decimal digits up to 18446744073709551615`);
      state.setKey({
        LockIndex: (existing?.LockIndex ?? 0) + (session ? 1 : 0),
        Key: entry.Key,
        Flags: flags,
        Value: entry.Value === undefined || entry.Value === "" ? null : Buffer.from(entry.Value).toString("base64"),
        ...(session ? { Session: session.ID } : {}),
      });
      yield;
    }
  }

  const faults = registryActions(state, () => settings.current().agentNode, agentLocal);

  return {
    name: "registry",
    app,
    routeCatalog: REGISTRY_ROUTES,
    serve: (c) => serveSettled(c),
    settings: settings.current,
    setCheck: (body) => ctx.store.write(() => faults.setCheck({ node: body.Node || undefined, check: body.CheckID, status: body.Status, output: body.Output })),
    leader: () => leadership.view(),
    setLeader: (known) => leadership.set(known),
    readKey: (request) => router.readKey(request),
    compressThreshold: 1400, // Consul's gziphandler minimum size
    actions: {
      ...faults.actions,
      "registry-leader": leadership.action("the registry's servers lose their leader (known: false) or elect one again (known: true, which restarts every session TTL)"),
    },
    conditions: faults.conditions,
    notFound: (c) => serveSettled(c),
    initialize(sections) {
      drain(this.initializeSteps(sections));
    },
    *initializeSteps(sections) {
      settings.initialize(sections);
      const config = settings.current();
      // The server itself, as a real cluster lists it: its node's tagged addresses and meta, its `consul` service.
      ensureNode({ Node: config.agentNode }, ctx.ids.uuid(), agentNodeIdentity("127.0.0.1"));
      state.putService(consulServerService(config.agentNode));
      for (const section of sections) yield* entitySteps(section);
    },
    applyFixture: (section) => drain(fixtureSteps(section)),
    fixtureSteps,
  };
}
