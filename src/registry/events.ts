/**
 * User events (Consul agent/event_endpoint.go, agent/user_event.go):
 * `PUT /v1/event/fire/:name` and `GET /v1/event/list`.
 *
 * An event fired here is gossiped back to this agent, which keeps it when
 * the event's filters match the agent (its node name, its own services and
 * their tags) and it is not a remote-exec (`_rexec`) event; the agent keeps
 * the newest 256, oldest first. Each event takes the next Lamport time
 * (serf's event clock starts at 1), listed events show it, the fire answer
 * shows 0.
 *
 * The events live in a store table (so snapshots, the state hash and
 * restores carry them); firing is a store write, so it moves the registry's
 * index, which Consul's gossip does not.
 *
 * The list's index is not the store's: `X-Consul-Index` is the newest listed
 * event's ID folded to 64 bits (uuidToUint64: the UUID's two 64-bit halves
 * XORed), 1 when nothing is listed, and a blocking list waits only while the
 * index equals `?index=` (it is not monotonic), for up to 600 s with no
 * jitter; it has no other query meta.
 */
import { CONSUL_SERVICE_ID } from "./server-node.js";
import type { RegistryApi } from "./api.js";
import { badRequest, RegistryError, serverError, type RequestContext, type Router } from "./http.js";
import { compileGoRegexp } from "../core/go/regexp.js";
import { parseBlockingParams } from "../http/blocking-params.js";
import { encodeJSON } from "../core/json.js";
import { wantsPretty } from "../http/pretty.js";
import { APPLICATION_JSON, bufferedResponse } from "../http/respond.js";

export const EVENTS_TABLE = "registry.events";
/** One row (`lamport`): serf's user-event clock, which moves for every event fired, kept or not. */
export const EVENT_CLOCK_TABLE = "registry.event-clock";
/** The agent's ring buffer (agent.go: eventBuf of 256). */
export const EVENT_BUFFER = 256;
/** maxQueryTime: the list's wait cap, and its wait when none is given. */
const MAX_EVENT_WAIT_MS = 600_000;
/** serf's default UserEventSizeLimit. */
const USER_EVENT_SIZE_LIMIT = 512;
/** userEventMaxVersion. */
const USER_EVENT_VERSION = 1;
/** remoteExecName: handled by the agent, never listed. */
const REMOTE_EXEC = "_rexec";

/** Consul's agent.UserEvent, in its field order. */
export type UserEventRow = {
  ID: string;
  Name: string;
  /** base64, or null for no payload. */
  Payload: string | null;
  NodeFilter: string;
  ServiceFilter: string;
  TagFilter: string;
  Version: number;
  LTime: number;
};

export function registerEventRoutes(router: Router, api: RegistryApi): void {
  const { state, ctx } = api;
  const events = ctx.store.table<UserEventRow>(EVENTS_TABLE);
  const clock = ctx.store.table<{ LTime: number }>(EVENT_CLOCK_TABLE);

  router.register("/v1/event/fire/", ["PUT"], async (rc) => {
    const name = rc.rest;
    if (name === "") throw badRequest("Missing name");
    const dc = rc.query.get("dc") || undefined;
    const event: UserEventRow = {
      ID: "",
      Name: name,
      Payload: null,
      NodeFilter: rc.query.get("node") ?? "",
      ServiceFilter: rc.query.get("service") ?? "",
      TagFilter: rc.query.get("tag") ?? "",
      Version: 0,
      LTime: 0,
    };
    // Consul reads the body only when the request declares a length; a body sent without one is taken too (see docs).
    const declared = rc.c.req.header("Content-Length");
    if (declared === undefined || Number(declared) > 0) {
      const body = Buffer.from(await rc.c.req.arrayBuffer());
      if (body.length > 0) event.Payload = body.toString("base64");
    }
    validate(event);
    if (dc !== undefined && dc !== api.config().datacenter) throw serverError("No path to datacenter");
    authorizeFire(rc, api, name);
    const serfName = `consul:event:${name}`;
    // UNVERIFIED: serf measures the msgpack-encoded event; its size is reckoned here by the msgpack spec's rules.
    if (Buffer.byteLength(serfName) + encodedSize(event, name) > USER_EVENT_SIZE_LIMIT) {
      throw serverError(`user event exceeds configured limit of ${USER_EVENT_SIZE_LIMIT} bytes before encoding`);
    }
    // Drawn only once the event is accepted: a refused fire leaves the generator alone.
    event.ID = ctx.ids.uuid();
    event.Version = USER_EVENT_VERSION;
    ctx.store.write(() => {
      const ltime = (clock.get("lamport")?.LTime ?? 0) + 1;
      clock.put("lamport", { LTime: ltime });
      if (!delivered(event)) return;
      events.put(eventKey(ltime), { ...event, LTime: ltime });
      for (const key of [...events.ids()].sort().slice(0, Math.max(0, events.size - EVENT_BUFFER))) events.delete(key);
    });
    ctx.events.record("registry.event-fired", { service: "registry", subject: event.ID, detail: { name } });
    return event;
  });

  router.register("/v1/event/list", ["GET"], async (rc) => {
    const blocking = parseBlockingParams(rc.query);
    if (typeof blocking === "string") throw badRequest(blocking);
    const authz = api.authorize(rc);
    const nameFilter = rc.query.get("name") ?? "";
    const minIndex = BigInt(rc.query.get("index") || "0");
    const run = () => {
      const all = events.sorted().filter((e) => nameFilter === "" || e.Name === nameFilter);
      // The name filter first, so the filtered header speaks only of events the caller asked for.
      const value = all.filter((e) => authz.allowed("event", e.Name, "read"));
      const last = value[value.length - 1];
      return { value, removed: value.length < all.length, index: last ? uuidToUint64(last.ID) : 1n };
    };
    let result = run();
    if (minIndex > 0n && result.index === minIndex) {
      const waitMs = blocking.waitMs === undefined || blocking.waitMs <= 0 ? MAX_EVENT_WAIT_MS : Math.min(blocking.waitMs, MAX_EVENT_WAIT_MS);
      const virtualDeadline = ctx.clock.now() + waitMs;
      const realDeadline = ctx.clock.wallTime.now() + waitMs;
      for (;;) {
        const afterIndex = ctx.watchers.tablesIndex([EVENTS_TABLE]);
        const reason = await ctx.watchers.wait({
          tables: [EVENTS_TABLE],
          afterIndex,
          virtualDeadline,
          realTimeoutMs: realDeadline - ctx.clock.wallTime.now(),
          signal: rc.c.req.raw.signal,
        });
        result = run();
        // A new event re-runs the list; it answers unless the index is still the one asked about.
        if (reason !== "changed" || result.index !== minIndex) break;
      }
    }
    const response = bufferedResponse(encodeJSON(result.value.map(wire), { escapeHTML: true, pretty: wantsPretty(rc.c.req.url, "registry") }), {
      status: 200,
      headers: { "Content-Type": APPLICATION_JSON },
    });
    // Only a caller that presented a token learns of ACL filtering.
    if (result.removed && authz.presented) rc.names.set(response.headers, "Results-Filtered-By-ACLs", "true");
    rc.names.set(response.headers, "Index", result.index.toString());
    return response;
  });

  /**
   * Whether the agent keeps an event it receives (shouldProcessUserEvent,
   * ingestUserEvent): its node filter must match the agent's node name, its
   * service filter one of the agent's services (and the tag filter one of
   * that service's tags); remote-exec events are never listed.
   */
  function delivered(event: UserEventRow): boolean {
    if (event.Name === REMOTE_EXEC) return false;
    const agentNode = api.config().agentNode;
    if (event.NodeFilter !== "" && !matches(event.NodeFilter, agentNode)) return false;
    if (event.ServiceFilter === "") return true;
    // The agent's local services: the server's own `consul` service is the catalog's, not the agent's.
    return state
      .servicesOf(agentNode)
      .some((s) => s.ID !== CONSUL_SERVICE_ID && matches(event.ServiceFilter, s.Service) && (event.TagFilter === "" || s.Tags.some((t) => matches(event.TagFilter, t))));
  }
}

/** Internal.EventFire's event:write check: its denial is a bare `Permission denied` 403; an unknown token's error a 500. */
function authorizeFire(rc: RequestContext, api: RegistryApi, name: string): void {
  try {
    api.authorize(rc).require("event", name, "write");
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    // EventFire writes 500 before anything but a permission denial, whatever the error (ACL not found included).
    if (error.message === "ACL not found") throw serverError(error.message);
    throw new RegistryError(403, "Permission denied");
  }
}

/** validateUserEventParams; its errors come back as 500s. */
function validate(event: UserEventRow): void {
  if (event.TagFilter !== "" && event.ServiceFilter === "") throw serverError("Cannot provide tag filter without service filter");
  for (const [filter, what] of [
    [event.NodeFilter, "node"],
    [event.ServiceFilter, "service"],
    [event.TagFilter, "tag"],
  ] as const) {
    if (filter === "") continue;
    const compiled = compileGoRegexp(filter);
    if (compiled.error !== undefined) throw serverError(`Invalid ${what} filter: ${compiled.error}`);
  }
}

/** Go's regexp MatchString: a match anywhere (unanchored). */
function matches(pattern: string, subject: string): boolean {
  return compileGoRegexp(pattern).re?.matcher(subject).find() ?? false;
}

/** Keys sort as the events were fired (the Lamport time, zero-padded). */
function eventKey(ltime: number): string {
  return String(ltime).padStart(20, "0");
}

function wire(row: UserEventRow): UserEventRow {
  return {
    ID: row.ID,
    Name: row.Name,
    Payload: row.Payload,
    NodeFilter: row.NodeFilter,
    ServiceFilter: row.ServiceFilter,
    TagFilter: row.TagFilter,
    Version: row.Version,
    LTime: row.LTime,
  };
}

/**
 * uuidToUint64: the first 64 bits of the UUID's hex (without hyphens) XOR
 * the last 64, as an exact uint64 (past 2^53, so a bigint).
 */
export function uuidToUint64(uuid: string): bigint {
  const low = BigInt(`0x${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(14, 18)}`);
  const high = BigInt(`0x${uuid.slice(19, 23)}${uuid.slice(24, 36)}`);
  return low ^ high;
}

/** The msgpack size of the event as Consul encodes it (codec tags: ID, n, p, nf, sf, tf, v; LTime is not sent). */
function encodedSize(event: UserEventRow, name: string): number {
  const str = (n: number) => (n < 32 ? 1 : n < 256 ? 2 : n < 65536 ? 3 : 5) + n;
  const bin = (n: number) => (n < 256 ? 2 : n < 65536 ? 3 : 5) + n;
  const payload = event.Payload === null ? 0 : Buffer.from(event.Payload, "base64").length;
  let size = 1 + str(2) + str(36) + str(1) + str(Buffer.byteLength(name)) + str(1) + 1;
  if (payload > 0) size += str(1) + bin(payload);
  for (const [key, filter] of [
    ["nf", event.NodeFilter],
    ["sf", event.ServiceFilter],
    ["tf", event.TagFilter],
  ] as const) {
    if (filter !== "") size += str(key.length) + str(Buffer.byteLength(filter));
  }
  return size;
}
