/**
 * The registry's editions: `registry.edition: "community"` (the default,
 * Consul CE: namespaces and partitions refused with 400s, reference §4.6) and
 * `"enterprise"` (Consul Enterprise 1.11+ on the session endpoints: sessions
 * kept per namespace, `ns=*` on list and node, `Partition`/`Namespace` in the
 * session JSON, only the `default` partition). In process through
 * `app.request()`, plus one run of the npm `consul` client on real ports.
 */
import Consul from "consul";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { untilParked } from "../support/parked.js";

// ---- helpers ---------------------------------------------------------------

type Res = TextAnswer;

type Session = { ID: string; Name: string; Node: string; Namespace?: string; Partition?: string; CreateIndex: number; ModifyIndex: number };
type KV = { Key: string; Session?: string; LockIndex: number };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TEXT_PLAIN = "text/plain; charset=utf-8";
const WILDCARD_TEXT = "Cannot use a wildcard namespace with this endpoint";

async function standin(registry: Record<string, unknown> = {}, options: Omit<CreateStandinOptions, "fixture"> = {}): Promise<Standin> {
  return createStandin({ ...options, fixture: { registry } as CreateStandinOptions["fixture"] });
}

const enterprise = (registry: Record<string, unknown> = {}, options: Omit<CreateStandinOptions, "fixture"> = {}) => standin({ edition: "enterprise", ...registry }, options);

const req = (emu: Standin, path: string, init: SendInit = {}): Promise<Res> => send(emu.registry, path, init);

const put = (emu: Standin, path: string, body?: string, headers?: Record<string, string>) => req(emu, path, { method: "PUT", body, headers });

async function create(emu: Standin, path = "/v1/session/create", body?: unknown, headers?: Record<string, string>): Promise<string> {
  const res = await put(emu, path, body === undefined ? undefined : JSON.stringify(body), headers);
  expect(res.status, res.text).toBe(200);
  const id = (JSON.parse(res.text) as { ID: string }).ID;
  expect(id).toMatch(UUID);
  return id;
}

async function sessions(emu: Standin, path: string, headers?: Record<string, string>): Promise<Session[]> {
  const res = await req(emu, path, { headers });
  expect(res.status, res.text).toBe(200);
  return JSON.parse(res.text) as Session[];
}

const ids = (list: Session[]) => list.map((s) => s.ID);
const sortedIds = (...values: string[]) => [...values].sort();
const indexOf = (res: Res) => Number(res.headers.get("x-consul-index"));
/** The first record's CreateIndex (the only part of an exact-bytes comparison not written out). */
const createIndexOf = (res: Res) => (JSON.parse(res.text) as Session[])[0]!.CreateIndex;

/** The exact bytes of one default-bodied session record in the enterprise edition. */
const enterpriseRecord = (id: string, namespace: string, index: number, extra = "") =>
  `{"ID":"${id}","Name":"","Node":"standin","LockDelay":15000000000,"Behavior":"release","TTL":"","NodeChecks":["agentHealth"],"ServiceChecks":null,${extra}"Partition":"default","Namespace":"${namespace}","CreateIndex":${index},"ModifyIndex":${index}}`;

// ---- community ---------------------------------------------------------------

describe("registry edition: community (the default) refuses namespaces and partitions as Consul CE", () => {
  const NS_QUERY = 'Invalid query parameter: "ns" - Namespaces are a Consul Enterprise feature';
  const PARTITION_QUERY = 'Invalid query parameter: "partition" - Partitions are a Consul Enterprise feature';
  const cases: { name: string; method: string; path: string; headers?: Record<string, string>; text: string }[] = [
    { name: "create ?ns=", method: "PUT", path: "/v1/session/create?ns=team", text: NS_QUERY },
    { name: "destroy ?ns=", method: "PUT", path: "/v1/session/destroy/x?ns=team", text: NS_QUERY },
    { name: "info ?ns=", method: "GET", path: "/v1/session/info/x?ns=team", text: NS_QUERY },
    { name: "node ?ns=*", method: "GET", path: "/v1/session/node/standin?ns=*", text: NS_QUERY },
    { name: "list ?ns=", method: "GET", path: "/v1/session/list?ns=team", text: NS_QUERY },
    { name: "renew ?ns=", method: "PUT", path: "/v1/session/renew/x?ns=team", text: NS_QUERY },
    { name: "list ?partition=default", method: "GET", path: "/v1/session/list?partition=default", text: PARTITION_QUERY },
    {
      name: "create X-Consul-Namespace",
      method: "PUT",
      path: "/v1/session/create",
      headers: { "X-Consul-Namespace": "team" },
      text: 'Invalid header: "X-Consul-Namespace" - Namespaces are a Consul Enterprise feature',
    },
    {
      name: "info X-Registry-Namespace",
      method: "GET",
      path: "/v1/session/info/x",
      headers: { "X-Registry-Namespace": "team" },
      text: 'Invalid header: "X-Registry-Namespace" - Namespaces are a Consul Enterprise feature',
    },
    {
      name: "destroy X-Consul-Partition",
      method: "PUT",
      path: "/v1/session/destroy/x",
      headers: { "X-Consul-Partition": "default" },
      text: 'Invalid header: "X-Consul-Partition" - Partitions are a Consul Enterprise feature',
    },
    { name: "KV get ?ns=", method: "GET", path: "/v1/kv/k?ns=team", text: NS_QUERY },
    { name: "KV put ?partition=", method: "PUT", path: "/v1/kv/k?partition=p1", text: PARTITION_QUERY },
    { name: "catalog nodes ?ns=", method: "GET", path: "/v1/catalog/nodes?ns=team", text: NS_QUERY },
    { name: "health node ?ns=", method: "GET", path: "/v1/health/node/standin?ns=team", text: NS_QUERY },
  ];

  for (const edition of [undefined, "community"] as const) {
    it(`${edition === undefined ? "no edition given" : 'edition "community"'}: every such request is a 400 with CE's text, and changes nothing`, async () => {
      const emu = await standin(edition === undefined ? {} : { edition });
      const before = emu.stateHash();
      for (const c of cases) {
        const res = await req(emu, c.path, { method: c.method, headers: c.headers });
        expect(res.status, c.name).toBe(400);
        expect(res.text, c.name).toBe(c.text);
        expect(res.headers.get("content-type"), c.name).toBe(TEXT_PLAIN);
      }
      expect(emu.stateHash()).toBe(before);
    });
  }

  it("a create body's Namespace is ignored (an unknown key to CE) and the record has no Namespace or Partition", async () => {
    const emu = await standin();
    const id = await create(emu, "/v1/session/create", { Namespace: "team", Partition: "p1" });
    const res = await req(emu, `/v1/session/info/${id}`);
    const index = indexOf(res);
    expect(res.text).toBe(
      `[{"ID":"${id}","Name":"","Node":"standin","LockDelay":15000000000,"Behavior":"release","TTL":"","NodeChecks":["agentHealth"],"ServiceChecks":null,"CreateIndex":${index},"ModifyIndex":${index}}]`,
    );
  });
});

// ---- enterprise ---------------------------------------------------------------

describe("registry edition: enterprise, sessions per namespace", () => {
  it("create, info, list, node, renew and destroy each work in the request's namespace only", async () => {
    const emu = await enterprise();
    const inDefault = await create(emu);
    const inTeam = await create(emu, "/v1/session/create?ns=team-a", { TTL: "30s" });

    // info: only in the session's namespace ([] elsewhere, as for an unknown session).
    expect(ids(await sessions(emu, `/v1/session/info/${inTeam}?ns=team-a`))).toEqual([inTeam]);
    expect(await sessions(emu, `/v1/session/info/${inTeam}`)).toEqual([]);
    expect(await sessions(emu, `/v1/session/info/${inTeam}?ns=default`)).toEqual([]);
    expect(ids(await sessions(emu, `/v1/session/info/${inDefault}`))).toEqual([inDefault]);
    expect(await sessions(emu, `/v1/session/info/${inDefault}?ns=team-a`)).toEqual([]);

    // list and node: the namespace's sessions.
    expect(ids(await sessions(emu, "/v1/session/list"))).toEqual([inDefault]);
    expect(ids(await sessions(emu, "/v1/session/list?ns=team-a"))).toEqual([inTeam]);
    expect(await sessions(emu, "/v1/session/list?ns=team-b")).toEqual([]);
    expect(ids(await sessions(emu, "/v1/session/node/standin?ns=team-a"))).toEqual([inTeam]);
    expect(ids(await sessions(emu, "/v1/session/node/standin"))).toEqual([inDefault]);

    // renew: 404 outside the namespace, the record inside it.
    const wrongRenew = await put(emu, `/v1/session/renew/${inTeam}`);
    expect(wrongRenew.status).toBe(404);
    expect(wrongRenew.text).toBe(`Session id '${inTeam}' not found`);
    const renewed = await put(emu, `/v1/session/renew/${inTeam}?ns=team-a`);
    expect(renewed.status).toBe(200);
    expect((JSON.parse(renewed.text) as Session[]).map((s) => [s.ID, s.Namespace])).toEqual([[inTeam, "team-a"]]);

    // destroy: `true` either way (idempotent), but only the right namespace destroys.
    const wrongDestroy = await put(emu, `/v1/session/destroy/${inTeam}`);
    expect([wrongDestroy.status, wrongDestroy.text]).toEqual([200, "true"]);
    expect(ids(await sessions(emu, "/v1/session/list?ns=team-a"))).toEqual([inTeam]);
    expect((await put(emu, `/v1/session/destroy/${inTeam}?ns=team-a`)).text).toBe("true");
    expect(await sessions(emu, "/v1/session/list?ns=team-a")).toEqual([]);
    expect(ids(await sessions(emu, "/v1/session/list"))).toEqual([inDefault]);
  });

  it("namespace names compare case-insensitively; the record keeps the name as given", async () => {
    const emu = await enterprise();
    const id = await create(emu, "/v1/session/create?ns=Team-A");
    const [found] = await sessions(emu, `/v1/session/info/${id}?ns=team-a`);
    expect(found!.Namespace).toBe("Team-A");
    expect(ids(await sessions(emu, "/v1/session/list?ns=TEAM-A"))).toEqual([id]);
  });

  it("ns=* on list and node returns every namespace's sessions, sorted by ID as today", async () => {
    const emu = await enterprise({ nodes: [{ Node: "node-1", Address: "10.0.0.1" }] });
    const a = await create(emu);
    const b = await create(emu, "/v1/session/create?ns=team-a");
    const c = await create(emu, "/v1/session/create?ns=team-b", { Node: "node-1" });
    const d = await create(emu, "/v1/session/create?ns=team-b");
    const all = await sessions(emu, "/v1/session/list?ns=*");
    expect(ids(all)).toEqual(sortedIds(a, b, c, d));
    expect(Object.fromEntries(all.map((s) => [s.ID, s.Namespace]))).toEqual({ [a]: "default", [b]: "team-a", [c]: "team-b", [d]: "team-b" });
    expect(ids(await sessions(emu, "/v1/session/node/standin?ns=*"))).toEqual(sortedIds(a, b, d));
    expect(ids(await sessions(emu, "/v1/session/node/node-1?ns=*"))).toEqual([c]);
    // The header may carry the wildcard too.
    expect(ids(await sessions(emu, "/v1/session/list", { "X-Consul-Namespace": "*" }))).toEqual(sortedIds(a, b, c, d));
  });

  it("the endpoints that take no wildcard (create, destroy, info, renew) answer ns=* with a 400", async () => {
    const emu = await enterprise();
    const id = await create(emu);
    const before = emu.stateHash();
    for (const [method, path, headers] of [
      ["PUT", "/v1/session/create?ns=*"],
      ["PUT", "/v1/session/create", { "X-Consul-Namespace": "*" }],
      ["PUT", `/v1/session/destroy/${id}?ns=*`],
      ["GET", `/v1/session/info/${id}?ns=*`],
      ["PUT", `/v1/session/renew/${id}?ns=*`],
    ] as const) {
      const res = await req(emu, path, { method, headers });
      expect([res.status, res.text], path).toEqual([400, WILDCARD_TEXT]);
    }
    // A create body naming the wildcard is refused the same way.
    const body = await put(emu, "/v1/session/create", JSON.stringify({ Namespace: "*" }));
    expect([body.status, body.text]).toEqual([400, WILDCARD_TEXT]);
    expect(emu.stateHash()).toBe(before);
  });

  it("?ns= wins over the namespace header; an empty value counts as none; neither means default", async () => {
    const emu = await enterprise();
    const viaBoth = await create(emu, "/v1/session/create?ns=from-query", undefined, { "X-Consul-Namespace": "from-header" });
    const viaHeader = await create(emu, "/v1/session/create?ns=", undefined, { "X-Consul-Namespace": "from-header" });
    const viaSpecHeader = await create(emu, "/v1/session/create", undefined, { "X-Registry-Namespace": "spec-header" });
    const viaNothing = await create(emu, "/v1/session/create?ns=", undefined, { "X-Consul-Namespace": "" });
    const all = await sessions(emu, "/v1/session/list?ns=*");
    const namespaceOf = Object.fromEntries(all.map((s) => [s.ID, s.Namespace]));
    expect(namespaceOf).toEqual({ [viaBoth]: "from-query", [viaHeader]: "from-header", [viaSpecHeader]: "spec-header", [viaNothing]: "default" });
    // The same precedence on reads: the query's namespace is the one searched.
    expect(ids(await sessions(emu, "/v1/session/list?ns=from-query", { "X-Consul-Namespace": "from-header" }))).toEqual([viaBoth]);
    expect(ids(await sessions(emu, "/v1/session/list", { "X-Consul-Namespace": "from-header" }))).toEqual([viaHeader]);
    expect(ids(await sessions(emu, `/v1/session/info/${viaHeader}`, { "X-Consul-Namespace": "from-header" }))).toEqual([viaHeader]);
  });

  it("the specification's header name is read first; with compat headers off, only it is read", async () => {
    const emu = await enterprise();
    const both = await create(emu, "/v1/session/create", undefined, { "X-Registry-Namespace": "spec", "X-Consul-Namespace": "compat" });
    expect(ids(await sessions(emu, "/v1/session/list?ns=spec"))).toEqual([both]);

    const strict = await enterprise({}, { compatHeaders: false });
    const compatOnly = await create(strict, "/v1/session/create", undefined, { "X-Consul-Namespace": "compat" });
    expect(ids(await sessions(strict, "/v1/session/list"))).toEqual([compatOnly]);
    const specOnly = await create(strict, "/v1/session/create", undefined, { "X-Registry-Namespace": "spec" });
    expect(ids(await sessions(strict, "/v1/session/list?ns=spec"))).toEqual([specOnly]);
  });

  it("a create body's Namespace wins over ?ns= and the header (Consul decodes the body after parseEntMeta); an empty one means default", async () => {
    const emu = await enterprise();
    const bodyWins = await create(emu, "/v1/session/create?ns=from-query", { Namespace: "from-body" }, { "X-Consul-Namespace": "from-header" });
    const lowercaseKey = await create(emu, "/v1/session/create", { namespace: "lower" });
    const emptyBody = await create(emu, "/v1/session/create?ns=from-query", { Namespace: "" });
    const nullBody = await create(emu, "/v1/session/create?ns=from-query", { Namespace: null });
    const namespaceOf = Object.fromEntries((await sessions(emu, "/v1/session/list?ns=*")).map((s) => [s.ID, s.Namespace]));
    expect(namespaceOf).toEqual({ [bodyWins]: "from-body", [lowercaseKey]: "lower", [emptyBody]: "default", [nullBody]: "from-query" });
    // A wrongly typed Namespace is a decode error.
    const bad = await put(emu, "/v1/session/create", JSON.stringify({ Namespace: 7 }));
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/^Request decode failed: json: cannot unmarshal number into Go struct field .*Namespace of type string$/);
  });

  it("the record carries Partition then Namespace after Checks and before CreateIndex, in exact bytes, on info, list, node and renew", async () => {
    const emu = await enterprise({ nodes: [{ Node: "node-1", Address: "10.0.0.1", Checks: [{ CheckID: "disk", Status: "passing" }] }] });
    const id = await create(emu, "/v1/session/create?ns=team-a");
    const info = await req(emu, `/v1/session/info/${id}?ns=team-a`);
    const index = indexOf(info);
    const record = enterpriseRecord(id, "team-a", index);
    expect(info.text).toBe(`[${record}]`);
    expect((await req(emu, "/v1/session/list?ns=team-a")).text).toBe(`[${record}]`);
    expect((await req(emu, "/v1/session/node/standin?ns=team-a")).text).toBe(`[${record}]`);
    expect((await put(emu, `/v1/session/renew/${id}?ns=team-a`)).text).toBe(`[${record}]`);

    // A session in default says so; a kept Checks list comes before Partition.
    const plain = await create(emu);
    const withChecks = await create(emu, "/v1/session/create", { Node: "node-1", Checks: ["agentHealth", "disk"], NodeChecks: ["agentHealth"] });
    const plainInfo = await req(emu, `/v1/session/info/${plain}`);
    expect(plainInfo.text).toBe(`[${enterpriseRecord(plain, "default", createIndexOf(plainInfo))}]`);
    const checksInfo = await req(emu, `/v1/session/info/${withChecks}`);
    const checksIndex = createIndexOf(checksInfo);
    expect(checksInfo.text).toBe(
      `[{"ID":"${withChecks}","Name":"","Node":"node-1","LockDelay":15000000000,"Behavior":"release","TTL":"","NodeChecks":["agentHealth"],"ServiceChecks":null,"Checks":["agentHealth","disk"],"Partition":"default","Namespace":"default","CreateIndex":${checksIndex},"ModifyIndex":${checksIndex}}]`,
    );
  });

  it("partition: default and empty are accepted (query, header, body); another is a 500 on every route, changing nothing", async () => {
    const emu = await enterprise();
    const viaQuery = await create(emu, "/v1/session/create?partition=default&ns=team-a");
    const viaHeader = await create(emu, "/v1/session/create?partition=", undefined, { "X-Consul-Partition": "DEFAULT" });
    const viaBody = await create(emu, "/v1/session/create", { Partition: "default" });
    expect(ids(await sessions(emu, "/v1/session/list?ns=*&partition=default"))).toEqual(sortedIds(viaQuery, viaHeader, viaBody));
    expect((await sessions(emu, "/v1/session/list?ns=*")).map((s) => s.Partition)).toEqual(["default", "default", "default"]);

    const before = emu.stateHash();
    const unknown = 'Partition "p1" does not exist';
    for (const [method, path, headers, body] of [
      ["PUT", "/v1/session/create?partition=p1"],
      ["PUT", "/v1/session/create", { "X-Consul-Partition": "p1" }],
      ["PUT", "/v1/session/create", undefined, JSON.stringify({ Partition: "p1" })],
      ["PUT", `/v1/session/destroy/${viaBody}?partition=p1`],
      ["PUT", `/v1/session/renew/${viaBody}?partition=p1`],
      ["GET", `/v1/session/info/${viaBody}?partition=p1`],
      ["GET", "/v1/session/node/standin?partition=p1"],
      ["GET", "/v1/session/list", { "X-Registry-Partition": "p1" }],
      ["PUT", "/v1/kv/k?partition=p1", undefined, "v"],
      ["GET", "/v1/kv/k?partition=p1"],
      ["DELETE", "/v1/kv/k?partition=p1"],
      ["GET", "/v1/catalog/nodes?partition=p1"],
      ["PUT", "/v1/catalog/register?partition=p1", undefined, JSON.stringify({ Node: "n", Address: "10.0.0.9" })],
      ["GET", "/v1/health/node/standin?partition=p1"],
    ] as const) {
      const res = await req(emu, path, { method, headers, body });
      expect([res.status, res.text], `${method} ${path}`).toEqual([500, unknown]);
      expect(res.headers.get("content-type")).toBe(TEXT_PLAIN);
    }
    expect(emu.stateHash()).toBe(before);
    expect(ids(await sessions(emu, "/v1/session/list?ns=*"))).toEqual(sortedIds(viaQuery, viaHeader, viaBody));
  });

  it("KV, catalog and health accept a namespace and ignore it (only sessions are namespaced)", async () => {
    const emu = await enterprise();
    expect((await put(emu, "/v1/kv/config/a?ns=team-a", "one")).text).toBe("true");
    const [entry] = JSON.parse((await req(emu, "/v1/kv/config/a?ns=team-b")).text) as KV[];
    expect(entry!.Key).toBe("config/a");
    expect(JSON.parse((await req(emu, "/v1/kv/config/?keys&ns=*")).text)).toEqual(["config/a"]);
    expect((await req(emu, "/v1/kv/config/a", { method: "DELETE", headers: { "X-Consul-Namespace": "team-c" } })).text).toBe("true");
    const reg = await put(emu, "/v1/catalog/register?ns=team-a", JSON.stringify({ Node: "node-9", Address: "10.0.0.9" }), { "X-Consul-Namespace": "team-b" });
    expect(reg.status, reg.text).toBe(200);
    const nodes = JSON.parse((await req(emu, "/v1/catalog/nodes?ns=other")).text) as { Node: string }[];
    expect(nodes.map((n) => n.Node)).toEqual(["node-9", "standin"]);
    const checks = JSON.parse((await req(emu, "/v1/health/node/standin?ns=team-a")).text) as { CheckID: string }[];
    expect(checks.map((c) => c.CheckID)).toEqual(["agentHealth", "serfHealth"]);
  });

  it("KV acquire and release find a namespaced session by ID; destroying it in its namespace releases the lock", async () => {
    const emu = await enterprise();
    const holder = await create(emu, "/v1/session/create?ns=team-a");
    expect((await put(emu, `/v1/kv/service/leader?acquire=${holder}`, "me")).text).toBe("true");
    // The KV request's own namespace does not matter.
    expect((await put(emu, `/v1/kv/service/leader?acquire=${holder}&ns=team-b`, "me")).text).toBe("true");
    const [held] = JSON.parse((await req(emu, "/v1/kv/service/leader")).text) as KV[];
    expect([held!.Session, held!.LockIndex]).toEqual([holder, 1]);
    expect((await put(emu, `/v1/kv/service/leader?release=${holder}`, "me")).text).toBe("true");
    expect((await put(emu, `/v1/kv/service/leader?acquire=${holder}`, "me")).text).toBe("true");

    // A destroy in the wrong namespace leaves the lock held; in the right one it releases it.
    await put(emu, `/v1/session/destroy/${holder}`);
    expect((JSON.parse((await req(emu, "/v1/kv/service/leader")).text) as KV[])[0]!.Session).toBe(holder);
    await put(emu, `/v1/session/destroy/${holder}?ns=team-a`);
    expect((JSON.parse((await req(emu, "/v1/kv/service/leader")).text) as KV[])[0]!.Session).toBeUndefined();
  });

  it("blocking list, node and info in a namespace: the sessions table index, as before", async () => {
    const emu = await enterprise();
    const mine = await create(emu, "/v1/session/create?ns=team-a");
    const first = await req(emu, "/v1/session/list?ns=team-a");
    const index = indexOf(first);

    // A write in another namespace moves the sessions table's index, so the query answers (same content, new index).
    const listWait = req(emu, `/v1/session/list?ns=team-a&index=${index}&wait=1m`);
    const nodeWait = req(emu, `/v1/session/node/standin?ns=team-a&index=${index}&wait=1m`);
    await untilParked(emu, 2);
    await create(emu, "/v1/session/create?ns=team-b");
    const [listed, onNode] = await Promise.all([listWait, nodeWait]);
    expect(indexOf(listed)).toBeGreaterThan(index);
    expect(ids(JSON.parse(listed.text) as Session[])).toEqual([mine]);
    expect(indexOf(onNode)).toBe(indexOf(listed));
    expect(ids(JSON.parse(onNode.text) as Session[])).toEqual([mine]);

    // info in the session's namespace wakes when it goes away.
    const infoIndex = indexOf(listed);
    const infoWait = req(emu, `/v1/session/info/${mine}?ns=team-a&index=${infoIndex}&wait=1m`);
    await untilParked(emu, 1);
    await put(emu, `/v1/session/destroy/${mine}?ns=team-a`);
    const gone = await infoWait;
    expect(gone.text).toBe("[]");
    expect(indexOf(gone)).toBeGreaterThan(infoIndex);
  });

  it("rejected or misdirected writes leave the state hash unchanged", async () => {
    const emu = await enterprise();
    const id = await create(emu, "/v1/session/create?ns=team-a", { TTL: "30s" });
    const before = emu.stateHash();
    expect((await put(emu, "/v1/session/create?ns=team-a", JSON.stringify({ Node: "ghost" }))).status).toBe(500);
    expect((await put(emu, "/v1/session/create?partition=elsewhere")).status).toBe(500);
    expect((await put(emu, "/v1/session/create?ns=*")).status).toBe(400);
    expect((await put(emu, `/v1/session/destroy/${id}?ns=team-b`)).text).toBe("true");
    expect((await put(emu, `/v1/session/renew/${id}?ns=team-b`)).status).toBe(404);
    expect(emu.stateHash()).toBe(before);
  });

  it("ACLs keep working by node name in every namespace (namespaced rules are out of scope)", async () => {
    const emu = await enterprise({
      acl: {
        enabled: true,
        defaultPolicy: "deny",
        tokens: [
          { SecretID: "writer", Rules: { session_prefix: { "": "write" } } },
          { SecretID: "reader", Rules: { session_prefix: { "": "read" } } },
        ],
      },
    });
    const id = await create(emu, "/v1/session/create?ns=team-a", undefined, { "X-Consul-Token": "writer" });
    const denied = await put(emu, "/v1/session/create?ns=team-b", undefined, { "X-Consul-Token": "reader" });
    expect(denied.status).toBe(403);
    expect(denied.text).toMatch(/^Permission denied: token with AccessorID '[0-9a-f-]{36}' lacks permission 'session:write' on "standin"$/);
    expect(ids(await sessions(emu, "/v1/session/list?ns=team-a", { "X-Consul-Token": "reader" }))).toEqual([id]);
    const anonymous = await req(emu, "/v1/session/list?ns=*");
    expect(anonymous.text).toBe("[]");
  });

  it("snapshot and restore keep each session's namespace", async () => {
    const emu = await enterprise();
    const id = await create(emu, "/v1/session/create?ns=team-a");
    const snapshot = emu.snapshot();
    const hash = emu.stateHash();
    await put(emu, `/v1/session/destroy/${id}?ns=team-a`);
    expect(emu.stateHash()).not.toBe(hash);
    emu.restore(snapshot);
    expect(emu.stateHash()).toBe(hash);
    expect(ids(await sessions(emu, "/v1/session/list?ns=team-a"))).toEqual([id]);
    expect(await sessions(emu, "/v1/session/list")).toEqual([]);
  });

  it("the edition cannot change while sessions exist; with none it can", async () => {
    const emu = await standin();
    await emu.applyFixture({ registry: { edition: "enterprise" } });
    const id = await create(emu, "/v1/session/create?ns=team-a");
    const before = emu.stateHash();
    await expect(emu.applyFixture({ registry: { edition: "community" } })).rejects.toThrow('registry.edition: cannot change from "enterprise" to "community" while sessions exist');
    expect(emu.stateHash()).toBe(before);
    await put(emu, `/v1/session/destroy/${id}?ns=team-a`);
    await emu.applyFixture({ registry: { edition: "community" } });
    expect((await req(emu, "/v1/session/list?ns=team-a")).status).toBe(400);
  });
});

// ---- fixtures ---------------------------------------------------------------

describe("registry edition: fixtures", () => {
  const LEADER = "0b6a3bde-5a4c-4f8e-9d1a-2c7e8f9a0b1c";
  const OTHER = "1c7b4cef-6b5d-4f9f-8e2b-3d8f9a0b1c2d";

  it("enterprise fixture sessions may carry Namespace (and Partition default); a fixture KV lock names a namespaced session", async () => {
    const emu = await enterprise({
      sessions: [
        { ID: LEADER, Name: "leader", Namespace: "team-a", Partition: "default" },
        { ID: OTHER, Name: "plain" },
      ],
      kv: [{ Key: "service/leader", Value: "me", Session: LEADER }],
    });
    const [leader] = await sessions(emu, `/v1/session/info/${LEADER}?ns=team-a`);
    expect(leader).toMatchObject({ ID: LEADER, Name: "leader", Partition: "default", Namespace: "team-a" });
    expect(await sessions(emu, `/v1/session/info/${LEADER}`)).toEqual([]);
    expect(ids(await sessions(emu, "/v1/session/list"))).toEqual([OTHER]);
    const [entry] = JSON.parse((await req(emu, "/v1/kv/service/leader")).text) as KV[];
    expect(entry!.Session).toBe(LEADER);
  });

  it("a community fixture session naming a namespace or partition is an error naming its path", async () => {
    await expect(standin({ sessions: [{ Name: "x" }, { Namespace: "team-a" }] })).rejects.toThrow('registry.sessions[1].Namespace: namespaces need registry.edition "enterprise"');
    await expect(standin({ edition: "community", sessions: [{ partition: "default" }] })).rejects.toThrow(
      'registry.sessions[0].partition: partitions need registry.edition "enterprise"',
    );
  });

  it("an enterprise fixture session in another partition, and an unknown edition, are errors naming their path", async () => {
    await expect(enterprise({ sessions: [{ Partition: "p1" }] })).rejects.toThrow('registry.sessions[0]: Partition "p1" does not exist');
    await expect(standin({ edition: "premium" })).rejects.toThrow(/registry\.edition/);
  });
});

// ---- a real client ---------------------------------------------------------------

describe("npm consul 2.0.1 against the enterprise edition", () => {
  let srv: RunningStandin;
  beforeEach(async () => {
    srv = await startStandin({ fixture: { registry: { edition: "enterprise" } }, ports: { scheduler: 0, registry: 0, echo: 0 } });
  });
  afterEach(async () => {
    await srv.close();
  });

  it("node-consul has no ns option (it is dropped); a namespace header set on the client and its partition option work", async () => {
    // node-consul 2.0.1 sends `partition` as ?partition= (lib/utils.js options) but knows no `ns`:
    // a namespace reaches Consul only through a header, which papi lets a client set for every request.
    const plain = new Consul({ host: "127.0.0.1", port: srv.ports.registry });
    const teamA = new Consul({ host: "127.0.0.1", port: srv.ports.registry, headers: { "X-Consul-Namespace": "team-a" } } as ConstructorParameters<typeof Consul>[0]);
    try {
      const loose = plain.session.create as unknown as (options: Record<string, unknown>) => Promise<{ ID: string }>;
      const dropped = await loose.call(plain.session, { ns: "team-b", name: "ns-dropped" });
      const { ID } = await teamA.session.create({ name: "team-a-lock", ttl: "15s", partition: "default" } as Parameters<typeof teamA.session.create>[0]);
      const sent = srv.emulator.requests.query({ where: (r) => r.path === "/v1/session/create" });
      expect(sent.map((r) => r.query)).toEqual(["", "?partition=default"]);

      const info = (await teamA.session.info(ID)) as Session;
      expect(info).toMatchObject({ ID, Name: "team-a-lock", Partition: "default", Namespace: "team-a" });
      expect(((await plain.session.info(ID)) as Session | undefined) ?? null).toBeNull();
      expect(((await plain.session.list()) as Session[]).map((s) => [s.ID, s.Namespace])).toEqual([[dropped.ID, "default"]]);
      expect(((await teamA.session.list()) as Session[]).map((s) => s.ID)).toEqual([ID]);
      expect(((await teamA.session.node("standin")) as Session[]).map((s) => s.ID)).toEqual([ID]);
      expect(((await teamA.session.renew(ID)) as unknown as Session[]).map((s) => s.ID)).toEqual([ID]);

      const other = await teamA.session.list({ partition: "p1" } as Parameters<typeof teamA.session.list>[0]).then(
        () => undefined,
        (error: Error & { statusCode?: number }) => error,
      );
      expect(other?.statusCode).toBe(500);
      expect(other?.message).toContain('Partition "p1" does not exist');

      await teamA.session.destroy(ID);
      expect(await teamA.session.list()).toEqual([]);
    } finally {
      plain.destroy();
      teamA.destroy();
    }
  });
});
