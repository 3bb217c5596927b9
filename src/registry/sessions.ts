/**
 * The session endpoints (Consul agent/session_endpoint.go and the Session
 * RPC), with their parsing, fix-up rules, validation order and texts.
 *
 * Namespaces (the enterprise edition, `registry.edition: "enterprise"`): a
 * session lives in one namespace (`default` unless the request names one);
 * info, renew and destroy find a session only in the request's namespace;
 * list and node answer the namespace's sessions, or every namespace's with
 * `ns=*`. IDs stay unique across namespaces. The sessions table's index
 * drives blocking as before, whatever the namespace. ACL rules are not
 * namespaced (Consul Enterprise's namespace-scoped policies are out of
 * scope): a token's session rules apply in every namespace.
 */
import { formatGoDuration, parseGoDuration } from "../core/durations.js";
import type { TimerRecord } from "../core/clock.js";
import { DecodeError, decodeStruct, decodingRequest, parseGoJSON } from "./decode.js";
import { badRequest, RegistryError, serverError, type Router } from "./http.js";
import { requireKnownPartition, type RegistryApi } from "./api.js";
import {
  DEFAULT_NAMESPACE,
  DEFAULT_PARTITION,
  SESSION_TTL_MULTIPLIER,
  SESSION_TTL_TIMER,
  SERF_HEALTH_CHECK,
  sessionKey,
  TABLES,
  WILDCARD_NAMESPACE,
  type ServiceCheck,
  type SessionRow,
} from "./state.js";

const DEFAULT_LOCK_DELAY_NS = 15_000_000_000;
const TTL_MIN_NS = 10_000_000_000n;
const TTL_MAX_NS = 24n * 3_600_000_000_000n;

const SESSION_FIELDS = {
  ID: "string",
  Name: "string",
  Node: "string",
  LockDelay: "any",
  Behavior: "string",
  TTL: "string",
  NodeChecks: "[]string",
  Checks: "[]string",
  ServiceChecks: "[]object",
} as const;

/** Consul Enterprise's Session embeds acl.EnterpriseMeta, so a create body may name both (CE ignores them as unknown keys). */
const ENTERPRISE_SESSION_FIELDS = { ...SESSION_FIELDS, Partition: "string", Namespace: "string" } as const;

export function registerSessionRoutes(router: Router, api: RegistryApi): void {
  const { state, ctx } = api;

  ctx.clock.handle(SESSION_TTL_TIMER, (timer: TimerRecord) => {
    const session = state.findSession(timer.subject);
    if (!session) return { session: timer.subject, expired: false };
    // Only the leader reaps sessions; a new leader restarts every TTL (resetSessionTimers).
    if (!api.leader().known) return { session: session.ID, expired: false, reason: "no cluster leader" };
    ctx.store.write(() => state.destroySession(session, "ttl"));
    return { session: session.ID, expired: true };
  });

  router.register("/v1/session/create", ["PUT"], async (rc) => {
    const namespace = api.sessionNamespace(rc, false);
    const text = await rc.c.req.text();
    // Consul reads the body only when it has content; an empty PUT takes every default.
    const body = text.length > 0 ? decodingRequest(() => parseGoJSON(text, rc.c.req.raw)) : undefined;
    const id = createSession(api, body, { dc: rc.query.get("dc") || undefined, namespace, authorize: (node) => api.authorize(rc).require("session", node, "write") });
    return { ID: id };
  });

  router.register("/v1/session/destroy/", ["PUT"], (rc) => {
    const namespace = api.sessionNamespace(rc, false);
    if (rc.rest === "") throw badRequest("Missing session");
    api.requireDatacenter(rc.query.get("dc") || undefined);
    const session = state.findSession(rc.rest, namespace);
    // Destroying an unknown (or malformed) session succeeds: the call is idempotent.
    if (!session) return true;
    api.authorize(rc).require("session", session.Node, "write");
    ctx.store.write(() => state.destroySession(session, "destroyed"));
    return true;
  });

  router.register("/v1/session/renew/", ["PUT"], (rc) => {
    rc.parse();
    const namespace = api.sessionNamespace(rc, false);
    if (rc.rest === "") throw badRequest("Missing session");
    api.requireDatacenter(rc.query.get("dc") || undefined);
    const session = state.findSession(rc.rest, namespace);
    if (!session) throw new RegistryError(404, `Session id '${rc.rest}' not found`);
    api.authorize(rc).require("session", session.Node, "write");
    // Not a write: the timer moves, no index does, and no blocking query wakes.
    const ttlMs = ttlMillis(session.TTL);
    if (ttlMs > 0) {
      ctx.clock.cancelFor(SESSION_TTL_TIMER, sessionKey(session.ID));
      scheduleTTL(api, session.ID, ttlMs);
    }
    return [session];
  });

  router.register("/v1/session/info/", ["GET"], async (rc) => {
    const options = rc.parse();
    const namespace = api.sessionNamespace(rc, false);
    if (rc.rest === "") throw badRequest("Missing session");
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    const foundOnPass: boolean[] = [];
    return api.blockingRead(
      rc,
      options,
      [TABLES.sessions],
      () => {
        const session = state.findSession(rc.rest, namespace);
        const visible = session && authz.allowed("session", session.Node, "read") ? [session] : [];
        foundOnPass.push(visible.length > 0);
        return { value: visible, filtered: session !== undefined && visible.length === 0 };
      },
      // Consul's not-found rule (§3.4): while the session is *still* missing, other sessions'
      // changes do not answer; a session that was there and went away does.
      () => foundOnPass.length >= 2 && !foundOnPass[foundOnPass.length - 1] && !foundOnPass[foundOnPass.length - 2],
    );
  });

  router.register("/v1/session/node/", ["GET"], (rc) => {
    const options = rc.parse();
    const namespace = api.sessionNamespace(rc, true);
    if (rc.rest === "") throw badRequest("Missing node name");
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    const node = rc.rest.toLowerCase();
    return api.blockingRead(rc, options, [TABLES.sessions], () =>
      filterRead(
        authz,
        state.sessionsSorted(namespace).filter((s) => s.Node.toLowerCase() === node),
      ),
    );
  });

  router.register("/v1/session/list", ["GET"], (rc) => {
    const options = rc.parse();
    const namespace = api.sessionNamespace(rc, true);
    api.requireDatacenterForRead(options);
    const authz = api.authorize(rc);
    return api.blockingRead(rc, options, [TABLES.sessions], () => filterRead(authz, state.sessionsSorted(namespace)));
  });
}

function filterRead(authz: ReturnType<RegistryApi["authorize"]>, sessions: SessionRow[]): { value: SessionRow[]; filtered: boolean } {
  const value = sessions.filter((s) => authz.allowed("session", s.Node, "read"));
  return { value, filtered: value.length < sessions.length };
}

/**
 * A newly elected leader restarts every session's TTL timer from now
 * (Consul's `initializeSessionTimers` on establishing leadership): a session
 * whose TTL passed while no leader was known lives on for another 2×TTL.
 */
export function resetSessionTimers(api: RegistryApi): number {
  let count = 0;
  for (const session of api.state.sessions.values()) {
    const ttlMs = ttlMillis(session.TTL);
    if (ttlMs <= 0) continue;
    api.ctx.clock.cancelFor(SESSION_TTL_TIMER, sessionKey(session.ID));
    scheduleTTL(api, session.ID, ttlMs);
    count++;
  }
  return count;
}

function scheduleTTL(api: RegistryApi, id: string, ttlMs: number): void {
  api.ctx.clock.schedule({ at: api.ctx.clock.now() + SESSION_TTL_MULTIPLIER * ttlMs, kind: SESSION_TTL_TIMER, subject: sessionKey(id) });
}

interface CreateRequest {
  Name: string;
  Node: string;
  LockDelay: number;
  Behavior: string;
  TTL: string;
  NodeChecks: string[] | null;
  Checks: string[] | null;
  ServiceChecks: ServiceCheck[] | null;
  /** Enterprise edition only: the body's EnterpriseMeta fields, when it names them. */
  Partition?: string;
  Namespace?: string;
}

export interface CreateOptions {
  dc?: string;
  /** Enterprise edition: the namespace the request named (query or header); the body's `Namespace` overrides it. Undefined in the community edition. */
  namespace?: string;
  /** Throws when the caller may not write sessions on the node. */
  authorize?: (node: string) => void;
  /** A fixed ID (fixtures); otherwise one is drawn from the seeded generator. */
  id?: string;
  /** A fixture's session: created whether or not a leader is known. */
  fixture?: boolean;
}

/**
 * Creates a session from a decoded create body (undefined: all defaults),
 * validating in the Session RPC's order with its texts. Returns the ID.
 */
export function createSession(api: RegistryApi, body: unknown, options: CreateOptions = {}): string {
  const { state, ctx } = api;
  const config = api.config();
  const enterprise = api.enterprise();
  const request = decodeCreateRequest(body, config.agentNode, config.defaultCheck, enterprise);
  // The namespace: Consul's SessionCreate parses the query/header first (parseEntMetaNoWildcard)
  // and then decodes the body into the same struct (hashicorp/consul agent/session_endpoint.go
  // SessionCreate @ 8c46a5cb), so a body that names `Namespace` (even "") wins over ?ns= and the
  // header; the Session RPC's ResolveTokenAndDefaultMeta then fills an empty one with `default`
  // (and the partition with `default`, acl.EnterpriseMeta.Merge).
  let namespace: string | undefined;
  if (enterprise) {
    requireKnownPartition(request.Partition);
    namespace = (request.Namespace ?? options.namespace) || DEFAULT_NAMESPACE;
    if (namespace === WILDCARD_NAMESPACE) throw badRequest("Cannot use a wildcard namespace with this endpoint");
  }
  api.requireDatacenter(options.dc, options.fixture);
  if (request.Node === "") throw serverError("Must provide Node");
  options.authorize?.(request.Node);
  const behavior = request.Behavior === "" ? "release" : request.Behavior;
  if (behavior !== "release" && behavior !== "delete") throw serverError(`Invalid Behavior setting '${behavior}'`);
  const ttlMs = validateTTL(request.TTL);
  const node = state.findNode(request.Node);
  if (!node) throw serverError("apply failed: Missing node registration");
  for (const checkId of [...(request.Checks ?? []), ...(request.NodeChecks ?? []), ...(request.ServiceChecks ?? []).map((c) => c.ID)]) {
    const check = state.findCheck(node.Node, checkId);
    if (!check) throw serverError(`apply failed: Missing check '${checkId}' registration`);
    if (check.Status === "critical") throw serverError(`apply failed: Check '${checkId}' is in ${check.Status} state`);
  }
  // Drawn only once the request is accepted: a rejected create must leave the generator (and the state hash) alone.
  const id = options.id ?? ctx.ids.uuid();
  ctx.store.write(() => {
    const row: Omit<SessionRow, "CreateIndex" | "ModifyIndex"> = {
      ID: id,
      Name: request.Name,
      Node: request.Node,
      LockDelay: request.LockDelay,
      Behavior: behavior,
      TTL: request.TTL,
      NodeChecks: request.NodeChecks,
      ServiceChecks: request.ServiceChecks,
      ...(request.Checks && request.Checks.length > 0 ? { Checks: request.Checks } : {}),
      // Consul Enterprise 1.11+ (admin partitions): acl.EnterpriseMeta is {Partition, Namespace} in
      // that order, both omitempty and both filled by the RPC's defaulting, so the record reads
      // …,"Checks"?,"Partition":"default","Namespace":"<ns>","CreateIndex":… (acl/enterprisemeta_ent.go
      // as published in a public mirror, samkenxstream/SAMKenX_consul; structs.Session embeds it after
      // Checks). Enterprise 1.7–1.10 had no Partition field; standin answers as 1.11+.
      ...(namespace !== undefined ? { Partition: DEFAULT_PARTITION, Namespace: namespace } : {}),
    };
    state.sessions.putIndexed(sessionKey(id), row);
    if (ttlMs > 0) scheduleTTL(api, id, ttlMs);
  });
  ctx.events.record("session.created", { service: "registry", subject: id });
  return id;
}

/** Defaults, then the body's fields, then Consul's Checks fix-up. */
function decodeCreateRequest(body: unknown, agentNode: string, defaultCheck: string, enterprise: boolean): CreateRequest {
  const request: CreateRequest = {
    Name: "",
    Node: agentNode,
    LockDelay: DEFAULT_LOCK_DELAY_NS,
    Behavior: "release",
    TTL: "",
    NodeChecks: [defaultCheck],
    Checks: [defaultCheck],
    ServiceChecks: null,
  };
  if (body !== undefined) {
    const fields = decodingRequest(() => {
      const decoded = decodeStruct(body, enterprise ? ENTERPRISE_SESSION_FIELDS : SESSION_FIELDS, "structs.Session");
      if ("LockDelay" in decoded) request.LockDelay = lockDelayNanos(decoded.LockDelay);
      if ("ServiceChecks" in decoded) {
        request.ServiceChecks =
          (decoded.ServiceChecks as Record<string, unknown>[] | null)?.map((c) => {
            const check = decodeStruct(c, { ID: "string", Namespace: "string" }, "structs.ServiceCheck");
            return { ID: (check.ID as string) ?? "", Namespace: (check.Namespace as string) ?? "" };
          }) ?? null;
      }
      return decoded;
    });
    for (const key of ["Name", "Node", "Behavior", "TTL"] as const) if (typeof fields[key] === "string") request[key] = fields[key] as string;
    for (const key of ["Partition", "Namespace"] as const) if (typeof fields[key] === "string") request[key] = fields[key] as string;
    if ("NodeChecks" in fields) request.NodeChecks = fields.NodeChecks as string[] | null;
    if ("Checks" in fields) request.Checks = fields.Checks as string[] | null;
    // Consul's own default node check is serfHealth: a client naming it alone (the official Go
    // client's and python-consul's habit) gets what Consul gives it, the default binding to it.
    if (!("NodeChecks" in fields) && request.Checks?.length === 1 && request.Checks[0] === SERF_HEALTH_CHECK) request.NodeChecks = [SERF_HEALTH_CHECK];
  }
  fixupChecks(request, defaultCheck);
  return request;
}

/** fixupEmptySessionChecks: how Checks and NodeChecks settle after decoding. */
function fixupChecks(request: CreateRequest, defaultCheck: string): void {
  if (!request.Checks || request.Checks.length === 0) {
    request.NodeChecks = [];
    request.Checks = null;
  } else if (request.Checks.length === 1 && (request.Checks[0] === defaultCheck || request.Checks[0] === SERF_HEALTH_CHECK)) {
    request.Checks = null;
  } else if (!request.NodeChecks || request.NodeChecks.length === 0) {
    request.Checks = null;
  }
}

/**
 * Session.UnmarshalJSON: a string is a Go duration, a number is
 * nanoseconds; either way, below 1000 means seconds. Other types give 0.
 */
function lockDelayNanos(value: unknown): number {
  let ns: number;
  if (typeof value === "string") {
    try {
      ns = Number(parseGoDuration(value));
    } catch (error) {
      throw new DecodeError((error as Error).message);
    }
  } else if (typeof value === "number") {
    ns = Math.trunc(value);
  } else {
    return 0;
  }
  return ns < 1000 ? ns * 1_000_000_000 : ns;
}

/** Validates a TTL as the Session RPC does (500s); returns it in ms, 0 for none. */
function validateTTL(ttl: string): number {
  if (ttl === "") return 0;
  let ns: bigint;
  try {
    ns = parseGoDuration(ttl);
  } catch (error) {
    throw serverError(`Session TTL '${ttl}' invalid: ${(error as Error).message}`);
  }
  if (ns !== 0n && (ns < TTL_MIN_NS || ns > TTL_MAX_NS)) {
    throw serverError(`Invalid Session TTL '${ns}', must be between [${formatGoDuration(TTL_MIN_NS)}=${formatGoDuration(TTL_MAX_NS)}]`);
  }
  return Number(ns / 1_000_000n);
}

function ttlMillis(ttl: string): number {
  if (ttl === "") return 0;
  try {
    return Number(parseGoDuration(ttl) / 1_000_000n);
  } catch {
    return 0;
  }
}
