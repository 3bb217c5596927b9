/**
 * Real-client acceptance tests for the registry (Consul stand-in): the npm
 * `consul` 2.0.1 client (sessions, its `watch` helper, the KV leader-election
 * recipe) and Debian's python3-consul 0.7.1 (through /usr/bin/python3), both
 * talking HTTP to an emulator listening on real ports, with the virtual clock
 * moved from the test. See docs: /work/shared/reference/registry-consul.md §6.
 */
import { execFile } from "node:child_process";
import { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Consul from "consul";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { CLI_TEST_TIMEOUT_MS } from "../support/cli.js";
import { untilParked } from "../support/parked.js";
import { PYTHON, PYTHON_SKIP_NOTE, pythonConsul, warnIfNoPythonConsul } from "../support/python-consul.js";

const anyPorts = { scheduler: 0, registry: 0, echo: 0 };
const AGENT_NODE = "standin";
/** The properties node-consul's own acceptance tests expect on every session item. */
const SESSION_PROPERTIES = ["CreateIndex", "ID", "Name", "Node", "NodeChecks", "LockDelay", "Behavior", "TTL"] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Session = {
  ID: string;
  Name: string;
  Node: string;
  LockDelay: number;
  Behavior: string;
  TTL: string;
  NodeChecks: string[] | null;
  CreateIndex: number;
  ModifyIndex: number;
};

type KVEntry = { Key: string; Value: string | null; Session?: string; LockIndex: number; ModifyIndex: number };

/** What papi (node-consul's HTTP layer) rejects with for a non-2xx answer. */
type ClientError = Error & { statusCode?: number };

// node-consul accepts more options than its typings declare (index, wait, ctx); these views say so.
type Loose = (options: Record<string, unknown>) => Promise<unknown>;

function client(srv: RunningStandin): Consul {
  return new Consul({ host: "127.0.0.1", port: srv.ports.registry });
}

async function rejection(promise: Promise<unknown>): Promise<ClientError> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: ClientError) => error,
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Whether the promise is still unsettled after `ms` real milliseconds. */
async function stillPending(promise: Promise<unknown>, ms = 50): Promise<boolean> {
  const marker = Symbol("pending");
  const winner = await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise((r) => setTimeout(() => r(marker), ms)),
  ]);
  return winner === marker;
}

/**
 * Resolves with the data of the next `change` the watch emits that satisfies
 * `predicate`; rejects on a watch `error` or after `timeoutMs` real ms.
 */
function nextChange<T>(watch: EventEmitter, predicate: (data: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  let onChange!: (data: T) => void;
  let onError!: (error: unknown) => void;
  const settled = new Promise<T>((resolve, reject) => {
    onChange = (data) => {
      if (predicate(data)) resolve(data);
    };
    onError = (error) => reject(error instanceof Error ? error : new Error(String(error)));
    watch.on("change", onChange);
    watch.on("error", onError);
  });
  return withTimeout(settled, timeoutMs, what).finally(() => {
    watch.off("change", onChange);
    watch.off("error", onError);
  });
}

describe("npm consul 2.0.1: sessions", () => {
  let srv: RunningStandin;
  let consul: Consul;
  beforeEach(async () => {
    srv = await startStandin({ ports: anyPorts });
    consul = client(srv);
  });
  afterEach(async () => {
    consul.destroy();
    await srv.close();
  });

  it("create resolves { ID } and nothing else, with a TTL and with no options", async () => {
    const withTTL = await consul.session.create({ ttl: "15s" });
    expect(Object.keys(withTTL)).toEqual(["ID"]);
    expect(withTTL.ID).toMatch(UUID);

    const bare = await consul.session.create();
    expect(Object.keys(bare)).toEqual(["ID"]);
    expect(bare.ID).toMatch(UUID);
    expect(bare.ID).not.toBe(withTTL.ID);

    // node-consul always sends a JSON body (at least `{}`); the TTL goes as "TTL".
    const bodies = srv.emulator.requests.query({ where: (r) => r.path === "/v1/session/create" }).map((r) => JSON.parse(r.body ?? "null"));
    expect(bodies).toEqual([{ TTL: "15s" }, {}]);
  });

  it("info/get, node, list and renew give the session objects the client expects", async () => {
    const { ID } = await consul.session.create({ name: "web-lock", ttl: "15s" });

    const info = (await consul.session.info(ID)) as Session;
    for (const property of SESSION_PROPERTIES) expect(info).toHaveProperty(property);
    expect(info).toMatchObject({ ID, Name: "web-lock", Node: AGENT_NODE, TTL: "15s", Behavior: "release", LockDelay: 15_000_000_000, NodeChecks: ["agentHealth"] });
    expect(info.ModifyIndex).toBe(info.CreateIndex);
    expect(await consul.session.get(ID)).toEqual(info);

    const onNode = (await consul.session.node(AGENT_NODE)) as Session[];
    expect(Array.isArray(onNode)).toBe(true);
    expect(onNode).toContainEqual(info);
    expect(await consul.session.node("no-such-node")).toEqual([]);

    const listed = (await consul.session.list()) as Session[];
    expect(Array.isArray(listed)).toBe(true);
    expect(listed).toEqual([info]);

    const renewed = (await consul.session.renew(ID)) as unknown as Session[];
    expect(Array.isArray(renewed)).toBe(true);
    expect(renewed).toHaveLength(1);
    for (const property of SESSION_PROPERTIES) expect(renewed[0]).toHaveProperty(property);
    expect(renewed[0]).toEqual(info);
  });

  it("destroy resolves undefined; the session is then gone, and renewing it is a 404 with Consul's text", async () => {
    const { ID } = await consul.session.create({ ttl: "15s" });
    expect(await consul.session.destroy(ID)).toBeUndefined();
    expect(await consul.session.get(ID)).toBeUndefined();
    expect(await consul.session.list()).toEqual([]);

    const error = await rejection(consul.session.renew(ID));
    expect(error.statusCode).toBe(404);
    // papi surfaces the body only for a short text/plain answer (a non-2xx response error carries no
    // "consul: session.renew: " prefix: papi's pipeline rejects with it as is, not through `_err`).
    expect(error.message).toContain(`Session id '${ID}' not found`);
    expect(error.message).toBe(`Session id '${ID}' not found`);

    // Destroy is idempotent.
    expect(await consul.session.destroy(ID)).toBeUndefined();
  });

  it("create on a node that is not in the catalog rejects with a 500", async () => {
    const error = await rejection(consul.session.create({ node: "no-such-node", ttl: "15s" }));
    expect(error.statusCode).toBe(500);
    expect(error.message).toContain("Missing node registration");
    expect(await consul.session.list()).toEqual([]);
  });

  it("catalog.register with Service.Meta past the 64 pairs rejects with the 400 and its text; nothing is stored", async () => {
    const meta = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"]));
    const error = await rejection(consul.catalog.register({ node: "npm-meta", address: "10.9.1.1", service: { service: "npm-meta", meta } }));
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe("Invalid Service Meta: Node metadata cannot contain more than 64 key/value pairs");
    expect(await consul.catalog.service.nodes("npm-meta")).toEqual([]);
    expect(await consul.catalog.node.list()).not.toContainEqual(expect.objectContaining({ Node: "npm-meta" }));
  });
});

describe("npm consul 2.0.1: the watch helper on session.list", () => {
  let srv: RunningStandin;
  let consul: Consul;
  beforeEach(async () => {
    srv = await startStandin({ ports: anyPorts });
    consul = client(srv);
  });
  afterEach(async () => {
    consul.destroy();
    await srv.close();
  });

  it("emits the initial list, then the list with a new session, then without it once its TTL (×2) has passed", async () => {
    const watch = consul.watch({ method: consul.session.list, options: { wait: "5s" } });
    try {
      // Listeners go on before the first tick: the watch's first request (index=0) answers at once.
      const initial = await nextChange<Session[]>(watch, () => true, "the initial change");
      expect(initial).toEqual([]);

      const withIt = nextChange<Session[]>(watch, (list) => list.length > 0, "a change with the new session");
      const { ID } = await consul.session.create({ name: "watched", ttl: "10s" });
      const list = await withIt;
      expect(list.map((s) => s.ID)).toEqual([ID]);
      expect(list[0]).toMatchObject({ Name: "watched", TTL: "10s", Node: AGENT_NODE });

      const withoutIt = nextChange<Session[]>(watch, (sessions) => !sessions.some((s) => s.ID === ID), "a change without the session");
      // Still there just before 2×TTL (no change is expected yet)...
      srv.emulator.clock.advance("19s");
      expect(await consul.session.get(ID)).toBeDefined();
      // ...gone after it.
      srv.emulator.clock.advance("2s");
      expect(await withoutIt).toEqual([]);
      expect(await consul.session.get(ID)).toBeUndefined();
    } finally {
      watch.end();
    }
    expect(watch.isRunning()).toBe(false);
  });
});

describe("npm consul 2.0.1: leader election over KV", () => {
  let srv: RunningStandin;
  let a: Consul;
  let b: Consul;
  beforeEach(async () => {
    srv = await startStandin({ ports: anyPorts });
    // Two contenders, each with its own client (and keep-alive agent).
    a = client(srv);
    b = client(srv);
  });
  afterEach(async () => {
    a.destroy();
    b.destroy();
    await srv.close();
  });

  it("acquire, renew, expiry with release, lock-delay, then the other contender takes over; a blocking get wakes on the release", async () => {
    const key = "service/leader";
    const kvGet = (consul: Consul, options: Record<string, unknown>) => (consul.kv.get as unknown as Loose)({ key, ...options });
    const leaderEntry = async (consul: Consul) => (await kvGet(consul, {})) as KVEntry | undefined;
    /**
     * kv.set with `acquire`, answering the decoded body. node-consul 2.0.1 resolves a plain
     * kv.set to `undefined` when Consul answers `false` (papi's pipeline does `!value && maybeValue`),
     * so the response is asked for (`ctx.includeResponse`, as the watch helper does) to see the boolean.
     */
    const acquire = async (consul: Consul, value: string, session: string): Promise<unknown> => {
      const ctx = Object.assign(new EventEmitter(), { includeResponse: true });
      const [res, answer] = (await (consul.kv.set as unknown as Loose)({ key, value, acquire: session, ctx })) as [IncomingMessage, unknown];
      expect(res.statusCode).toBe(200);
      return answer;
    };

    const { ID: sessionA } = await a.session.create({ name: "contender-a", ttl: "10s", lockdelay: "5s" });
    const { ID: sessionB } = await b.session.create({ name: "contender-b", ttl: "10s" });
    expect((await a.session.info(sessionA)).LockDelay).toBe(5_000_000_000);

    // t=0: A wins, B is refused.
    expect(await a.kv.set({ key, value: "A", acquire: sessionA })).toBe(true);
    expect(await acquire(b, "B", sessionB)).toBe(false);
    // The plain call: the client's `false` → `undefined` quirk, not a `true`.
    expect(await b.kv.set({ key, value: "B", acquire: sessionB })).toBeUndefined();
    expect(await leaderEntry(b)).toMatchObject({ Key: key, Value: "A", Session: sessionA, LockIndex: 1 });

    // A keeps renewing for a while: t=15 renew, t=30 still leader (A's session would die at 35).
    srv.emulator.clock.advance("15s");
    expect(((await a.session.renew(sessionA)) as unknown as Session[]).map((s) => s.ID)).toEqual([sessionA]);
    expect(((await b.session.renew(sessionB)) as unknown as Session[]).map((s) => s.ID)).toEqual([sessionB]);
    srv.emulator.clock.advance("15s");
    expect(await a.session.info(sessionA)).toBeDefined();
    expect(await leaderEntry(b)).toMatchObject({ Value: "A", Session: sessionA });
    expect(await acquire(b, "B", sessionB)).toBe(false);
    // B keeps its own session alive (until t=50); A stops renewing.
    await b.session.renew(sessionB);

    // B parks a blocking get on the key at its current index, with a wait far beyond the coming advance.
    const [first] = (await kvGet(b, { ctx: Object.assign(new EventEmitter(), { includeResponse: true }) })) as [IncomingMessage, KVEntry];
    const index = first.headers["x-consul-index"] as string;
    expect(Number(index)).toBeGreaterThan(0);
    const ctx = Object.assign(new EventEmitter(), { includeResponse: true });
    const blocking = kvGet(b, { index, wait: "60s", ctx }) as Promise<[IncomingMessage, KVEntry]>;
    try {
      // Parked at the server (counted by the emulator, not guessed from a sleep), and not answered.
      await untilParked(srv.emulator, 1);
      expect(await stillPending(blocking)).toBe(true);

      // t=36: A's session expired at 35 (2×TTL after its last renew); behavior release frees the key.
      srv.emulator.clock.advance("6s");
      const [res, woke] = await withTimeout(blocking, 10_000, "the blocking kv.get to wake on the release");
      expect(Number(res.headers["x-consul-index"])).toBeGreaterThan(Number(index));
      expect(woke).toMatchObject({ Key: key, Value: "A", LockIndex: 1 });
      expect(woke.Session).toBeUndefined();
    } finally {
      ctx.emit("cancel");
    }

    expect(await a.session.info(sessionA)).toBeUndefined();
    expect(((await b.session.list()) as Session[]).map((s) => s.ID)).toEqual([sessionB]);
    const released = await leaderEntry(b);
    expect(released).toMatchObject({ Value: "A" });
    expect(released?.Session).toBeUndefined();

    // The lock-delay (5 s from the invalidation at 35) refuses B right after, and still at t=39.
    expect(await acquire(b, "B", sessionB)).toBe(false);
    srv.emulator.clock.advance("3s");
    expect(await acquire(b, "B", sessionB)).toBe(false);
    expect((await leaderEntry(b))?.Session).toBeUndefined();

    // t=41: past the delay, B takes over.
    srv.emulator.clock.advance("2s");
    expect(await acquire(b, "B", sessionB)).toBe(true);
    expect(await leaderEntry(a)).toMatchObject({ Key: key, Value: "B", Session: sessionB, LockIndex: 2 });

    // A, waking up with its dead session, cannot acquire: Consul refuses an unknown session with a 500.
    const error = await rejection(a.kv.set({ key, value: "A", acquire: sessionA }));
    expect(error.statusCode).toBe(500);
    expect(error.message).toContain(`invalid session "${sessionA}"`);
  });
});

// ---------------------------------------------------------------------------
// Debian python3-consul 0.7.1, driven through /usr/bin/python3.
// ---------------------------------------------------------------------------

const PY_CLIENT = fileURLToPath(new URL("./python_session_client.py", import.meta.url));
const SKIP_NOTE = PYTHON_SKIP_NOTE;
warnIfNoPythonConsul("registry clients: python3-consul tests");

const execFileAsync = promisify(execFile);
/** A python client run is a child process: on a busy machine it can take seconds to start; this bound catches a hang. */
const PROCESS_WAIT_MS = 60_000;

type PyResult = {
  error?: string;
  message?: string;
  id?: string;
  index?: string;
  session?: Session | null;
  sessions?: Session[];
  destroyed?: boolean;
  acquired?: boolean;
  entry?: KVEntry | null;
  requestHeaders?: Record<string, string>;
  responseHeaders?: Record<string, string>;
};

async function py(srv: RunningStandin, command: string, ...args: string[]): Promise<PyResult> {
  const { stdout } = await execFileAsync(PYTHON, [PY_CLIENT, srv.urls.registry, command, ...args], { timeout: PROCESS_WAIT_MS });
  return JSON.parse(stdout) as PyResult;
}

async function serverIndex(srv: RunningStandin, path: string): Promise<string | null> {
  const response = await fetch(`${srv.urls.registry}${path}`);
  await response.arrayBuffer();
  return response.headers.get("X-Consul-Index");
}

describe("python3-consul 0.7.1 (Debian, /usr/bin/python3): sessions and KV", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  let srv: RunningStandin;
  beforeEach(async () => {
    srv = await startStandin({ ports: anyPorts });
  });
  afterEach(async () => {
    await srv.close();
  });

  it.skipIf(!pythonConsul)(`create (lowercase keys, ttl "20s"), info with the server's index, list, node, renew, destroy${SKIP_NOTE}`, async () => {
    const created = await py(srv, "create", "py-session", "20", "delete", "5");
    expect(created.error).toBeUndefined();
    const id = created.id!;
    expect(id).toMatch(UUID);

    // What the client put on the wire: lowercase keys, durations as "<n>s".
    const [request] = srv.emulator.requests.query({ where: (r) => r.path === "/v1/session/create" });
    expect(JSON.parse(request!.body!)).toEqual({ name: "py-session", lockdelay: "5s", behavior: "delete", ttl: "20s" });

    const info = await py(srv, "info", id);
    expect(info.session).toMatchObject({ ID: id, Name: "py-session", Node: AGENT_NODE, TTL: "20s", Behavior: "delete", LockDelay: 5_000_000_000, NodeChecks: ["agentHealth"] });
    expect(typeof info.index).toBe("string");
    expect(info.index).toBe(await serverIndex(srv, `/v1/session/info/${id}`));
    expect(Number(info.index)).toBe(info.session!.CreateIndex);

    const list = await py(srv, "list");
    expect(list.sessions).toEqual([info.session]);
    expect(list.index).toBe(await serverIndex(srv, "/v1/session/list"));

    const node = await py(srv, "node", AGENT_NODE);
    expect(node.sessions).toEqual([info.session]);
    expect((await py(srv, "node", "no-such-node")).sessions).toEqual([]);

    // TTL 20 s: alive at 39 s once renewed at 20 s, though 2×TTL from creation has passed.
    srv.emulator.clock.advance("20s");
    expect((await py(srv, "renew", id)).session).toEqual(info.session);
    srv.emulator.clock.advance("19s");
    expect((await py(srv, "info", id)).session).toEqual(info.session);

    expect((await py(srv, "destroy", id)).destroyed).toBe(true);
    const after = await py(srv, "info", id);
    expect(after.session).toBeNull();
    expect(after.index).toBe(await serverIndex(srv, `/v1/session/info/${id}`));
    expect((await py(srv, "list")).sessions).toEqual([]);
  });

  it.skipIf(!pythonConsul)(`dc= and consistency=stale: another datacenter's sessions, and No cluster leader as a ConsulException${SKIP_NOTE}`, async () => {
    await srv.close();
    srv = await startStandin({
      ports: anyPorts,
      fixture: { registry: { sessions: [{ Name: "home" }], datacenters: { dc2: { nodes: [{ Node: "n2", Address: "10.0.2.1" }], sessions: [{ Name: "far", Node: "n2" }] } } } },
    });
    const created = await py(srv, "create-in", "py-far", "n2", "dc2");
    expect(created.id).toMatch(UUID);
    const far = await py(srv, "list-in", "dc2", "default");
    expect(far.sessions!.map((s) => s.Name).sort()).toEqual(["far", "py-far"]);
    expect((await py(srv, "list-in", "", "default")).sessions!.map((s) => s.Name)).toEqual(["home"]);
    await fetch(`${srv.urls.registry}/_standin/registry/leader`, { method: "POST", body: JSON.stringify({ known: false }) });
    const refused = await py(srv, "list-in", "", "default");
    expect([refused.error, refused.message]).toEqual(["ConsulException", "500 No cluster leader"]);
    expect((await py(srv, "list-in", "", "stale")).sessions!.map((s) => s.Name)).toEqual(["home"]);
    // dc2 keeps its leader.
    expect((await py(srv, "list-in", "dc2", "consistent")).sessions).toHaveLength(2);
  });

  it.skipIf(!pythonConsul)(`renew of an unknown session raises consul.NotFound${SKIP_NOTE}`, async () => {
    const unknown = "0c2d4e6f-1a3b-5c7d-9e0f-123456789abc";
    const result = await py(srv, "renew", unknown);
    expect(result.error).toBe("NotFound");
    expect(result.message).toContain(`Session id '${unknown}' not found`);
  });

  it.skipIf(!pythonConsul)(`KV acquire with a session shows the Session on kv.get; behavior delete removes the key on destroy${SKIP_NOTE}`, async () => {
    const { id } = await py(srv, "create", "py-lock", "30", "delete", "15");
    expect(id).toMatch(UUID);

    expect((await py(srv, "acquire", "locks/py", "py-value", id!)).acquired).toBe(true);
    const held = await py(srv, "kv-get", "locks/py");
    expect(held.entry).toMatchObject({ Key: "locks/py", Value: "py-value", Session: id, LockIndex: 1 });
    expect(held.index).toBe(await serverIndex(srv, "/v1/kv/locks/py"));

    // A second session cannot take the held lock.
    const { id: other } = await py(srv, "create", "py-other", "30", "release", "15");
    expect((await py(srv, "acquire", "locks/py", "other", other!)).acquired).toBe(false);

    expect((await py(srv, "destroy", id!)).destroyed).toBe(true);
    const gone = await py(srv, "kv-get", "locks/py");
    expect(gone.error).toBeUndefined();
    expect(gone.entry).toBeNull();
  });

  it.skipIf(!pythonConsul)(`the wire under python-consul: X-Consul-Index and JSON on list, as the client reads them${SKIP_NOTE}`, async () => {
    const wire = await py(srv, "list-wire");
    expect(wire.error).toBeUndefined();
    expect(wire.sessions).toEqual([]);
    // A fresh agent's index is never 0 (Consul raises it to 1).
    expect(Number(wire.index)).toBeGreaterThanOrEqual(1);
    expect(wire.responseHeaders?.["x-consul-index"]).toBe(wire.index);
    expect(wire.responseHeaders?.["content-type"]).toBe("application/json");
    expect(wire.responseHeaders?.["x-consul-knownleader"]).toBe("true");
    // requests asks for gzip on every call.
    expect(wire.requestHeaders?.["accept-encoding"]).toMatch(/\bgzip\b/);
  });

  // Regression (was a deviation, now fixed): Consul's gziphandler has a 1400-byte minimum (reference §3.3),
  // so python-consul's `Accept-Encoding: gzip, deflate` gets small bodies uncompressed.
  it.skipIf(!pythonConsul)(`a 2-byte list answer is not gzipped (Consul's gziphandler minimum is 1400 bytes)${SKIP_NOTE}`, async () => {
    const wire = await py(srv, "list-wire");
    expect(wire.requestHeaders?.["accept-encoding"]).toMatch(/\bgzip\b/);
    expect(wire.responseHeaders?.["content-encoding"]).toBeUndefined();
  });
});
