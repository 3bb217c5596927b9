/**
 * HTTP-level acceptance tests for the registry service (Consul's session API
 * plus the catalog/KV pieces sessions need), checked against
 * /work/shared/reference/registry-consul.md. Everything runs in process on
 * the virtual clock.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";

// ---- helpers ---------------------------------------------------------------

type Res = TextAnswer;

type Init = SendInit;

type Session = {
  ID: string;
  Name: string;
  Node: string;
  LockDelay: number;
  Behavior: string;
  TTL: string;
  NodeChecks: string[] | null;
  ServiceChecks: { ID: string; Namespace: string }[] | null;
  Checks?: string[];
  CreateIndex: number;
  ModifyIndex: number;
};

type KV = { LockIndex: number; Key: string; Flags: number; Value: string | null; Session?: string; CreateIndex: number; ModifyIndex: number };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TEXT_PLAIN = "text/plain; charset=utf-8";
const ANON_SUFFIX = ". The anonymous token is used implicitly when a request does not specify a token.";

async function standin(registry: Record<string, unknown> = {}, options: Omit<CreateStandinOptions, "fixture"> = {}): Promise<Standin> {
  return createStandin({ ...options, fixture: { registry } as CreateStandinOptions["fixture"] });
}

const req = (emu: Standin, path: string, init: SendInit = {}): Promise<Res> => send(emu.registry, path, init);

const put = (emu: Standin, path: string, body?: string, headers?: Record<string, string>) => req(emu, path, { method: "PUT", body, headers });

async function create(emu: Standin, body?: unknown, headers?: Record<string, string>): Promise<string> {
  const res = await put(emu, "/v1/session/create", body === undefined ? undefined : JSON.stringify(body), headers);
  expect(res.status, res.text).toBe(200);
  const id = (JSON.parse(res.text) as { ID: string }).ID;
  expect(id).toMatch(UUID);
  return id;
}

async function info(emu: Standin, id: string): Promise<Session[]> {
  const res = await req(emu, `/v1/session/info/${id}`);
  expect(res.status).toBe(200);
  return JSON.parse(res.text) as Session[];
}

async function list(emu: Standin, path = "/v1/session/list"): Promise<{ sessions: Session[]; index: number; res: Res }> {
  const res = await req(emu, path);
  expect(res.status, res.text).toBe(200);
  return { sessions: JSON.parse(res.text) as Session[], index: indexOf(res), res };
}

const ids = (sessions: Session[]) => sessions.map((s) => s.ID);
const indexOf = (res: Res) => Number(res.headers.get("x-consul-index"));

async function setCheck(emu: Standin, Node: string, CheckID: string, Status: string): Promise<void> {
  const res = await emu.registry.request("/_standin/registry/checks", { method: "POST", body: JSON.stringify({ Node, CheckID, Status }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Lets every pending microtask and immediate run, so a request that can answer has answered. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

/** Starts a request without awaiting it and records when it answers. */
function track(emu: Standin, path: string, init: Init = {}) {
  const t = { done: false, promise: undefined as unknown as Promise<Res> };
  t.promise = req(emu, path, init).then((res) => {
    t.done = true;
    return res;
  });
  return t;
}

function expectMeta(res: Res, index: number | undefined, knownLeader = "true"): void {
  expect(res.headers.get("x-consul-lastcontact")).toBe("0");
  if (index !== undefined) expect(res.headers.get("x-consul-index")).toBe(String(index));
  expect(Number(res.headers.get("x-consul-index"))).toBeGreaterThan(0);
  expect(res.headers.get("x-consul-knownleader")).toBe(knownLeader);
  expect(res.headers.get("x-consul-query-backend")).toBe("blocking-query");
}

function expectNoMeta(res: Res): void {
  for (const name of ["x-consul-index", "x-consul-lastcontact", "x-consul-knownleader", "x-consul-query-backend", "x-registry-index"]) {
    expect(res.headers.get(name), name).toBeNull();
  }
}

function expectGlobalHeaders(res: Res, policy = "allow"): void {
  expect(res.headers.get("x-consul-default-acl-policy")).toBe(policy);
  expect(res.headers.get("vary")).toBe("Accept-Encoding");
}

/** The session as Consul CE encodes it, fields in Go struct order. */
function sessionJSON(s: {
  ID: string;
  Name?: string;
  Node?: string;
  LockDelay?: number;
  Behavior?: string;
  TTL?: string;
  NodeChecks?: string[] | null;
  ServiceChecks?: { ID: string; Namespace: string }[] | null;
  Checks?: string[];
  index: number;
}): string {
  const checks = s.Checks ? `,"Checks":${JSON.stringify(s.Checks)}` : "";
  return (
    `{"ID":"${s.ID}","Name":${JSON.stringify(s.Name ?? "")},"Node":${JSON.stringify(s.Node ?? "standin")},"LockDelay":${s.LockDelay ?? 15000000000},` +
    `"Behavior":"${s.Behavior ?? "release"}","TTL":${JSON.stringify(s.TTL ?? "")},"NodeChecks":${JSON.stringify(s.NodeChecks === undefined ? ["agentHealth"] : s.NodeChecks)},` +
    `"ServiceChecks":${JSON.stringify(s.ServiceChecks ?? null)}${checks},"CreateIndex":${s.index},"ModifyIndex":${s.index}}`
  );
}

const NODES = [
  {
    Node: "n1",
    Address: "10.0.0.1",
    Checks: [
      { CheckID: "c1", Status: "passing" },
      { CheckID: "c2", Status: "passing" },
      { CheckID: "svc1", Status: "passing", ServiceID: "web" },
    ],
  },
  {
    Node: "n2",
    Address: "10.0.0.2",
    Checks: [
      { CheckID: "bad", Status: "critical" },
      { CheckID: "warm", Status: "warning" },
    ],
  },
];

// ---- 1. the status table (§4.2) --------------------------------------------

describe("status table (§4.2)", () => {
  interface Row {
    name: string;
    method: string;
    path: string;
    body?: string;
    headers?: Record<string, string>;
    status: number;
    text: string | RegExp;
    contentType?: string | null;
    allow?: string;
    /** Whether the query meta headers must be present (true) or absent (false). */
    meta?: { index: number; knownLeader: string } | false;
  }

  const rows: Row[] = [
    { name: "create, bad JSON", method: "PUT", path: "/v1/session/create", body: "{x", status: 400, text: /^Request decode failed: /, contentType: TEXT_PLAIN, meta: false },
    {
      name: "create, bad LockDelay string",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"LockDelay":"abc"}',
      status: 400,
      text: 'Request decode failed: time: invalid duration "abc"',
      contentType: TEXT_PLAIN,
      meta: false,
    },
    {
      name: "create, node unknown",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"Node":"nowhere"}',
      status: 500,
      text: "apply failed: Missing node registration",
      contentType: TEXT_PLAIN,
      meta: false,
    },
    {
      name: "create, check missing",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"Node":"n1","NodeChecks":["nope"]}',
      status: 500,
      text: "apply failed: Missing check 'nope' registration",
      contentType: TEXT_PLAIN,
    },
    {
      name: "create, check critical",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"Node":"n2","NodeChecks":["bad"]}',
      status: 500,
      text: "apply failed: Check 'bad' is in critical state",
      contentType: TEXT_PLAIN,
    },
    {
      name: "create, bad Behavior",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"Behavior":"foo"}',
      status: 500,
      text: "Invalid Behavior setting 'foo'",
      contentType: TEXT_PLAIN,
    },
    {
      name: "create, Behavior is case-sensitive",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"Behavior":"Release"}',
      status: 500,
      text: "Invalid Behavior setting 'Release'",
    },
    {
      name: "create, TTL unparsable",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"TTL":"10z"}',
      status: 500,
      text: `Session TTL '10z' invalid: time: unknown unit "z" in duration "10z"`,
      contentType: TEXT_PLAIN,
    },
    {
      name: "create, TTL too short",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"TTL":"5s"}',
      status: 500,
      text: "Invalid Session TTL '5000000000', must be between [10s=24h0m0s]",
      contentType: TEXT_PLAIN,
    },
    {
      name: "create, TTL too long",
      method: "PUT",
      path: "/v1/session/create",
      body: '{"TTL":"100000s"}',
      status: 500,
      text: "Invalid Session TTL '100000000000000', must be between [10s=24h0m0s]",
    },
    { name: 'create, "Node":""', method: "PUT", path: "/v1/session/create", body: '{"Node":""}', status: 500, text: "Must provide Node", contentType: TEXT_PLAIN },
    {
      name: "destroy unknown",
      method: "PUT",
      path: "/v1/session/destroy/0b7d3a1c-0000-4000-8000-000000000000",
      status: 200,
      text: "true",
      contentType: "application/json",
      meta: false,
    },
    { name: "destroy malformed", method: "PUT", path: "/v1/session/destroy/not-a-uuid", status: 200, text: "true", contentType: "application/json", meta: false },
    { name: "destroy empty id", method: "PUT", path: "/v1/session/destroy/", status: 400, text: "Missing session", contentType: TEXT_PLAIN },
    { name: "info empty id", method: "GET", path: "/v1/session/info/", status: 400, text: "Missing session", contentType: TEXT_PLAIN },
    { name: "renew empty id", method: "PUT", path: "/v1/session/renew/", status: 400, text: "Missing session", contentType: TEXT_PLAIN },
    { name: "node empty name", method: "GET", path: "/v1/session/node/", status: 400, text: "Missing node name", contentType: TEXT_PLAIN },
    {
      name: "info unknown",
      method: "GET",
      path: "/v1/session/info/0b7d3a1c-0000-4000-8000-000000000000",
      status: 200,
      text: "[]",
      contentType: "application/json",
      meta: { index: 1, knownLeader: "true" },
    },
    {
      name: "info malformed",
      method: "GET",
      path: "/v1/session/info/not-a-uuid",
      status: 200,
      text: "[]",
      contentType: "application/json",
      meta: { index: 1, knownLeader: "true" },
    },
    { name: "node unknown", method: "GET", path: "/v1/session/node/nowhere", status: 200, text: "[]", contentType: "application/json", meta: { index: 1, knownLeader: "true" } },
    { name: "list on a fresh agent", method: "GET", path: "/v1/session/list", status: 200, text: "[]", contentType: "application/json", meta: { index: 1, knownLeader: "true" } },
    { name: "renew unknown", method: "PUT", path: "/v1/session/renew/nope", status: 404, text: "Session id 'nope' not found", contentType: TEXT_PLAIN, meta: false },
    { name: "renew malformed keeps the id as sent", method: "PUT", path: "/v1/session/renew/ABC-def", status: 404, text: "Session id 'ABC-def' not found" },
    { name: "create ?dc= unknown", method: "PUT", path: "/v1/session/create?dc=dc9", status: 500, text: "No path to datacenter", contentType: TEXT_PLAIN, meta: false },
    { name: "destroy ?dc= unknown", method: "PUT", path: "/v1/session/destroy/x?dc=dc9", status: 500, text: "No path to datacenter", meta: false },
    { name: "renew ?dc= unknown", method: "PUT", path: "/v1/session/renew/x?dc=dc9", status: 500, text: "No path to datacenter", meta: false },
    {
      name: "list ?dc= unknown",
      method: "GET",
      path: "/v1/session/list?dc=dc9",
      status: 500,
      text: "No path to datacenter",
      contentType: TEXT_PLAIN,
      meta: { index: 1, knownLeader: "false" },
    },
    { name: "info ?dc= unknown", method: "GET", path: "/v1/session/info/x?dc=dc9", status: 500, text: "No path to datacenter", meta: { index: 1, knownLeader: "false" } },
    { name: "node ?dc= unknown", method: "GET", path: "/v1/session/node/standin?dc=dc9", status: 500, text: "No path to datacenter", meta: { index: 1, knownLeader: "false" } },
    {
      name: "create ?ns=",
      method: "PUT",
      path: "/v1/session/create?ns=team",
      status: 400,
      text: 'Invalid query parameter: "ns" - Namespaces are a Consul Enterprise feature',
      contentType: TEXT_PLAIN,
    },
    { name: "list ?ns=", method: "GET", path: "/v1/session/list?ns=team", status: 400, text: 'Invalid query parameter: "ns" - Namespaces are a Consul Enterprise feature' },
    {
      name: "node ?partition=",
      method: "GET",
      path: "/v1/session/node/standin?partition=p1",
      status: 400,
      text: 'Invalid query parameter: "partition" - Partitions are a Consul Enterprise feature',
    },
    {
      name: "create ?partition=",
      method: "PUT",
      path: "/v1/session/create?partition=p1",
      status: 400,
      text: 'Invalid query parameter: "partition" - Partitions are a Consul Enterprise feature',
    },
    {
      name: "info X-Consul-Namespace",
      method: "GET",
      path: "/v1/session/info/x",
      headers: { "X-Consul-Namespace": "team" },
      status: 400,
      text: 'Invalid header: "X-Consul-Namespace" - Namespaces are a Consul Enterprise feature',
      contentType: TEXT_PLAIN,
    },
    {
      name: "destroy X-Consul-Partition",
      method: "PUT",
      path: "/v1/session/destroy/x",
      headers: { "X-Consul-Partition": "p1" },
      status: 400,
      text: 'Invalid header: "X-Consul-Partition" - Partitions are a Consul Enterprise feature',
    },
    {
      name: "create X-Consul-Namespace",
      method: "PUT",
      path: "/v1/session/create",
      headers: { "X-Consul-Namespace": "team" },
      status: 400,
      text: 'Invalid header: "X-Consul-Namespace" - Namespaces are a Consul Enterprise feature',
    },
    { name: "GET create", method: "GET", path: "/v1/session/create", status: 405, text: "method GET not allowed", contentType: TEXT_PLAIN, allow: "OPTIONS,PUT", meta: false },
    { name: "POST create", method: "POST", path: "/v1/session/create", body: "{}", status: 405, text: "method POST not allowed", allow: "OPTIONS,PUT" },
    { name: "GET destroy", method: "GET", path: "/v1/session/destroy/x", status: 405, text: "method GET not allowed", allow: "OPTIONS,PUT" },
    { name: "GET renew", method: "GET", path: "/v1/session/renew/x", status: 405, text: "method GET not allowed", allow: "OPTIONS,PUT" },
    { name: "PUT list", method: "PUT", path: "/v1/session/list", status: 405, text: "method PUT not allowed", allow: "OPTIONS,GET" },
    { name: "DELETE info", method: "DELETE", path: "/v1/session/info/x", status: 405, text: "method DELETE not allowed", allow: "OPTIONS,GET" },
    { name: "OPTIONS create", method: "OPTIONS", path: "/v1/session/create", status: 200, text: "", allow: "OPTIONS,PUT", meta: false },
    { name: "OPTIONS destroy", method: "OPTIONS", path: "/v1/session/destroy/x", status: 200, text: "", allow: "OPTIONS,PUT" },
    { name: "OPTIONS list", method: "OPTIONS", path: "/v1/session/list", status: 200, text: "", allow: "OPTIONS,GET" },
    { name: "OPTIONS node", method: "OPTIONS", path: "/v1/session/node/x", status: 200, text: "", allow: "OPTIONS,GET" },
    { name: "unknown path under /v1/", method: "GET", path: "/v1/nope", status: 404, text: "Invalid URL path: not a recognized HTTP API endpoint\n", contentType: TEXT_PLAIN },
    { name: "unknown session path under /v1/", method: "PUT", path: "/v1/session/frobnicate", status: 404, text: "Invalid URL path: not a recognized HTTP API endpoint\n" },
    { name: "/v1/session/list/ (extra slash)", method: "GET", path: "/v1/session/list/", status: 404, text: "Invalid URL path: not a recognized HTTP API endpoint\n" },
    {
      name: "unknown path outside /v1/",
      method: "GET",
      path: "/nope",
      status: 404,
      text: "Invalid URL path: if attempting to use the HTTP API, ensure the path starts with '/v1/'\n",
      contentType: TEXT_PLAIN,
    },
  ];

  it.each(rows)("$name → $status", async (row) => {
    const emu = await standin({ nodes: NODES });
    const res = await req(emu, row.path, { method: row.method, body: row.body, headers: row.headers });
    expect(res.status).toBe(row.status);
    if (typeof row.text === "string") expect(res.text).toBe(row.text);
    else expect(res.text).toMatch(row.text);
    if (row.contentType !== undefined) expect(res.headers.get("content-type")).toBe(row.contentType);
    if (row.allow !== undefined) expect(res.headers.get("allow")).toBe(row.allow);
    if (row.meta === false) expectNoMeta(res);
    else if (row.meta) expectMeta(res, row.meta.index, row.meta.knownLeader);
    expectGlobalHeaders(res);
  });

  it('create OK → 200 with exactly {"ID":"<uuid>"}, application/json, no index header', async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create", "{}");
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^\{"ID":"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"\}$/);
    expect(res.headers.get("content-type")).toBe("application/json");
    expectNoMeta(res);
    expectGlobalHeaders(res);
  });

  it("destroy OK → 200 `true` and the session is gone; no index header", async () => {
    const emu = await standin();
    const id = await create(emu);
    const res = await put(emu, `/v1/session/destroy/${id}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe("true");
    expect(res.headers.get("content-type")).toBe("application/json");
    expectNoMeta(res);
    expectGlobalHeaders(res);
    expect(await info(emu, id)).toEqual([]);
  });

  it.each(["info", "destroy", "renew", "node"])("/v1/session/%s without the slash → 301 to the subtree", async (name) => {
    const emu = await standin();
    const res = await req(emu, `/v1/session/${name}`);
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe(`/v1/session/${name}/`);
  });

  it("the redirect keeps the query string", async () => {
    const emu = await standin();
    const res = await req(emu, "/v1/session/info?dc=dc1");
    expect(res.status).toBe(301);
    expect(res.headers.get("location")).toBe("/v1/session/info/?dc=dc1");
  });

  it("?dc= naming the agent's own datacenter is fine", async () => {
    const emu = await standin({ datacenter: "east" });
    expect((await put(emu, "/v1/session/create?dc=east", "{}")).status).toBe(200);
    expect((await req(emu, "/v1/session/list?dc=east")).status).toBe(200);
    const res = await req(emu, "/v1/session/list?dc=dc1");
    expect(res.status).toBe(500);
    expect(res.text).toBe("No path to datacenter");
  });

  it("?pretty gives 4-space indented JSON with a trailing newline; otherwise compact without one", async () => {
    const emu = await standin();
    const id = await create(emu, { Name: "p" });
    const compact = await req(emu, "/v1/session/list");
    const sessions = JSON.parse(compact.text) as Session[];
    expect(compact.text).toBe(JSON.stringify(sessions));
    const pretty = await req(emu, "/v1/session/list?pretty");
    expect(pretty.text).toBe(`${JSON.stringify(sessions, null, 4)}\n`);
    const prettyZero = await req(emu, `/v1/session/info/${id}?pretty=0`);
    expect(prettyZero.text).toBe(`${JSON.stringify(sessions, null, 4)}\n`);
  });

  it("reads answer with the meta headers; the index is the sessions table index", async () => {
    const emu = await standin();
    const id = await create(emu);
    for (const path of ["/v1/session/list", `/v1/session/info/${id}`, "/v1/session/node/standin"]) {
      const res = await req(emu, path);
      const [s] = JSON.parse(res.text) as Session[];
      expectMeta(res, s!.CreateIndex);
      expect(res.headers.get("content-type")).toBe("application/json");
      expectGlobalHeaders(res);
    }
  });

  it("session IDs and node names are looked up case-insensitively", async () => {
    const emu = await standin();
    const id = await create(emu);
    expect(ids(await info(emu, id.toUpperCase()))).toEqual([id]);
    expect(ids((await list(emu, "/v1/session/node/STANDIN")).sessions)).toEqual([id]);
    const upper = await create(emu, { Node: "STANDIN" });
    expect((await info(emu, upper))[0]!.Node).toBe("STANDIN");
    expect((await put(emu, `/v1/session/renew/${id.toUpperCase()}`)).status).toBe(200);
    expect((await put(emu, `/v1/session/destroy/${id.toUpperCase()}`)).text).toBe("true");
    expect(await info(emu, id)).toEqual([]);
  });

  it("list and node are sorted by session ID; node lists only that node's sessions", async () => {
    const emu = await standin({ nodes: NODES });
    const made: string[] = [];
    for (let i = 0; i < 6; i++) made.push(await create(emu, { Node: i % 2 ? "n1" : "standin", NodeChecks: [] }));
    const all = (await list(emu)).sessions;
    expect(ids(all)).toEqual([...made].sort());
    const onN1 = (await list(emu, "/v1/session/node/n1")).sessions;
    expect(ids(onN1)).toEqual(made.filter((_, i) => i % 2).sort());
  });
});

// ---- 2. create parsing (§1.1) ----------------------------------------------

describe("create parsing (§1.1)", () => {
  it("an empty body takes every default; the JSON fields come in Go struct order", async () => {
    const emu = await standin();
    const id = await create(emu);
    const res = await req(emu, `/v1/session/info/${id}`);
    expect(res.text).toBe(`[${sessionJSON({ ID: id, index: indexOf(res) })}]`);
    const [s] = JSON.parse(res.text) as Session[];
    expect(s).not.toHaveProperty("Checks");
  });

  it("an empty JSON object also takes every default", async () => {
    const emu = await standin();
    const id = await create(emu, {});
    const res = await req(emu, `/v1/session/info/${id}`);
    expect(res.text).toBe(`[${sessionJSON({ ID: id, index: indexOf(res) })}]`);
  });

  it("the agent node and default check follow the fixture", async () => {
    const emu = await standin({ agentNode: "agent-7" });
    const id = await create(emu);
    const [s] = await info(emu, id);
    expect(s!.Node).toBe("agent-7");
    expect(s!.NodeChecks).toEqual(["agentHealth"]);
  });

  it("keys match case-insensitively (python-consul sends lowercase keys)", async () => {
    const emu = await standin();
    const id = await create(emu, { name: "x", ttl: "30s", lockdelay: "5s", behavior: "delete" });
    const res = await req(emu, `/v1/session/info/${id}`);
    expect(res.text).toBe(`[${sessionJSON({ ID: id, Name: "x", TTL: "30s", LockDelay: 5000000000, Behavior: "delete", index: indexOf(res) })}]`);
  });

  it("unknown keys are ignored", async () => {
    const emu = await standin();
    const id = await create(emu, { Name: "u", Namespace: "team", Bogus: [1, 2] });
    expect((await info(emu, id))[0]!.Name).toBe("u");
  });

  const lockDelays: Array<[string, unknown, number]> = [
    ["number 15 → seconds", 15, 15000000000],
    ["number 999 → seconds", 999, 999000000000],
    ["number 1000 → nanoseconds", 1000, 1000],
    ["number 15000000000", 15000000000, 15000000000],
    ['"5ns" → seconds', "5ns", 5000000000],
    ['"15s"', "15s", 15000000000],
    ['"1500ms"', "1500ms", 1500000000],
    ['"0"', "0", 0],
    ["number 0", 0, 0],
    ["true → 0", true, 0],
    ["null → default", null, 15000000000],
  ];

  it.each(lockDelays)("LockDelay %s", async (_name, value, expected) => {
    const emu = await standin();
    const id = await create(emu, { LockDelay: value });
    expect((await info(emu, id))[0]!.LockDelay).toBe(expected);
  });

  it('LockDelay "5" → 400 missing unit', async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create", '{"LockDelay":"5"}');
    expect(res.status).toBe(400);
    expect(res.text).toBe('Request decode failed: time: missing unit in duration "5"');
    expect(res.headers.get("content-type")).toBe(TEXT_PLAIN);
  });

  describe("Checks fix-up", () => {
    const cases: Array<{
      name: string;
      body: Record<string, unknown>;
      expect: { NodeChecks: string[] | null; ServiceChecks?: { ID: string; Namespace: string }[] | null; Checks?: string[] };
    }> = [
      { name: "no check fields", body: { Node: "n1" }, expect: { NodeChecks: ["agentHealth"] } },
      { name: '"Checks":["c2"] keeps the default node check too', body: { Node: "n1", Checks: ["c2"] }, expect: { NodeChecks: ["agentHealth"], Checks: ["c2"] } },
      { name: '"Checks":["agentHealth"] (the default) is dropped', body: { Node: "n1", Checks: ["agentHealth"] }, expect: { NodeChecks: ["agentHealth"] } },
      { name: '"NodeChecks":[]', body: { Node: "n1", NodeChecks: [] }, expect: { NodeChecks: [] } },
      { name: '"Checks":[] also empties NodeChecks', body: { Node: "n1", Checks: [], NodeChecks: ["c1"] }, expect: { NodeChecks: [] } },
      { name: '"Checks":["c2"] with "NodeChecks":[] drops Checks', body: { Node: "n1", Checks: ["c2"], NodeChecks: [] }, expect: { NodeChecks: [] } },
      { name: "NodeChecks given", body: { Node: "n1", NodeChecks: ["c1", "c2"] }, expect: { NodeChecks: ["c1", "c2"] } },
      {
        name: "ServiceChecks kept alongside NodeChecks",
        body: { Node: "n1", ServiceChecks: [{ ID: "svc1", Namespace: "" }], NodeChecks: ["agentHealth"] },
        expect: { NodeChecks: ["agentHealth"], ServiceChecks: [{ ID: "svc1", Namespace: "" }] },
      },
    ];

    it.each(cases)("$name", async (c) => {
      const emu = await standin({ nodes: NODES });
      const res0 = await put(emu, "/v1/session/create", JSON.stringify(c.body));
      expect(res0.status, res0.text).toBe(200);
      const id = (JSON.parse(res0.text) as { ID: string }).ID;
      const res = await req(emu, `/v1/session/info/${id}`);
      expect(res.text).toBe(`[${sessionJSON({ ID: id, Node: "n1", ...c.expect, index: indexOf(res) })}]`);
    });

    // Regression (was a deviation, now fixed): Go decodes `null` into a slice as nil, so fix-up rule 1 applies
    // (§1.1: "If len(Checks) == 0 (the client sent "Checks": [] or null): set NodeChecks = []").
    it('"Checks":null behaves like [] (rule 1: NodeChecks [])', async () => {
      const emu = await standin({ nodes: NODES });
      const id = await create(emu, { Node: "n1", Checks: null });
      const res = await req(emu, `/v1/session/info/${id}`);
      expect(res.text).toBe(`[${sessionJSON({ ID: id, Node: "n1", NodeChecks: [], index: indexOf(res) })}]`);
    });

    it("every listed check must exist on the session's node: Checks, NodeChecks and ServiceChecks IDs", async () => {
      const emu = await standin({ nodes: NODES });
      for (const [body, missing] of [
        [{ Node: "n1", Checks: ["ghost"] }, "ghost"],
        [{ Node: "n1", NodeChecks: ["c1", "ghost2"] }, "ghost2"],
        [{ Node: "n1", ServiceChecks: [{ ID: "ghost3", Namespace: "" }] }, "ghost3"],
        // c1 lives on n1, not on the agent node
        [{ NodeChecks: ["c1"] }, "c1"],
      ] as const) {
        const res = await put(emu, "/v1/session/create", JSON.stringify(body));
        expect(res.status, JSON.stringify(body)).toBe(500);
        expect(res.text).toBe(`apply failed: Missing check '${missing}' registration`);
      }
    });
  });

  describe("TTL", () => {
    it('"0s" is accepted and means no TTL', async () => {
      const emu = await standin();
      const id = await create(emu, { TTL: "0s" });
      expect((await info(emu, id))[0]!.TTL).toBe("0s");
      emu.clock.advance("48h");
      expect(ids(await info(emu, id))).toEqual([id]);
    });

    it('the TTL is echoed as sent ("1.5m" is not normalised)', async () => {
      const emu = await standin();
      const id = await create(emu, { TTL: "1.5m" });
      expect((await info(emu, id))[0]!.TTL).toBe("1.5m");
    });

    it('"24h" is accepted (the upper bound)', async () => {
      const emu = await standin();
      const id = await create(emu, { TTL: "24h" });
      expect((await info(emu, id))[0]!.TTL).toBe("24h");
    });

    it('"10s" is accepted (the lower bound)', async () => {
      const emu = await standin();
      expect((await put(emu, "/v1/session/create", '{"TTL":"10s"}')).status).toBe(200);
    });

    it.each([
      ["-10s", "-10000000000"],
      ["24h1s", "86401000000000"],
      ["9999ms", "9999000000"],
    ])("TTL %s → 500 range error with the nanosecond integer", async (ttl, ns) => {
      const emu = await standin();
      const res = await put(emu, "/v1/session/create", JSON.stringify({ TTL: ttl }));
      expect(res.status).toBe(500);
      expect(res.text).toBe(`Invalid Session TTL '${ns}', must be between [10s=24h0m0s]`);
    });
  });

  it.each([
    ["a type mismatch", '{"TTL":30}', /^Request decode failed: json: cannot unmarshal number/],
    ["bad JSON", "{x", /^Request decode failed: /],
    ["truncated JSON", '{"Name":"a"', /^Request decode failed: /],
    ["whitespace only", "   \n ", /^Request decode failed: EOF$/],
  ])("%s → 400", async (_name, body, text) => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create", body);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(text);
    expect(res.headers.get("content-type")).toBe(TEXT_PLAIN);
    expect((await list(emu)).sessions).toEqual([]);
  });

  it("create ignores the blocking parameters (no parse call)", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create?wait=abc&index=-1&stale&consistent", "{}");
    expect(res.status).toBe(200);
  });
});

// ---- 3. lifecycle on the virtual clock (§2) -----------------------------------

describe("lifecycle (§2)", () => {
  it("a 15s TTL session lives until 2×TTL: listed at 29.999s, gone at 30s", async () => {
    const emu = await standin();
    const id = await create(emu, { TTL: "15s" });
    emu.clock.advance("29999ms");
    expect(ids((await list(emu)).sessions)).toEqual([id]);
    emu.clock.advance("1ms");
    expect((await list(emu)).sessions).toEqual([]);
    expect(await info(emu, id)).toEqual([]);
  });

  it("renew at 20s moves the expiry to 50s; renew answers [session] with no index header and changes no index", async () => {
    const emu = await standin();
    const id = await create(emu, { TTL: "15s" });
    const before = await list(emu);
    emu.clock.advance("20s");
    const res = await put(emu, `/v1/session/renew/${id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expectNoMeta(res);
    expectGlobalHeaders(res);
    expect(res.text).toBe(`[${sessionJSON({ ID: id, TTL: "15s", index: before.sessions[0]!.ModifyIndex })}]`);
    const after = await list(emu);
    expect(after.index).toBe(before.index);
    expect(after.sessions).toEqual(before.sessions);
    emu.clock.advance("29s"); // 49s
    expect(ids((await list(emu)).sessions)).toEqual([id]);
    emu.clock.advance("1s"); // 50s
    expect((await list(emu)).sessions).toEqual([]);
  });

  it("renew is allowed between TTL and 2×TTL", async () => {
    const emu = await standin();
    const id = await create(emu, { TTL: "10s" });
    emu.clock.advance("19s");
    expect((await put(emu, `/v1/session/renew/${id}`)).status).toBe(200);
    emu.clock.advance("19s");
    expect(ids(await info(emu, id))).toEqual([id]);
    emu.clock.advance("1s");
    expect(await info(emu, id)).toEqual([]);
  });

  it("renew of a session without a TTL succeeds and returns it", async () => {
    const emu = await standin();
    const id = await create(emu);
    const res = await put(emu, `/v1/session/renew/${id}`);
    expect(res.status).toBe(200);
    expect(ids(JSON.parse(res.text) as Session[])).toEqual([id]);
  });

  it("renew parses the blocking parameters (400 on a bad wait)", async () => {
    const emu = await standin();
    const id = await create(emu);
    const res = await put(emu, `/v1/session/renew/${id}?wait=abc`);
    expect(res.status).toBe(400);
    expect(res.text).toBe("Invalid wait time");
  });

  it("TTL expiry bumps the sessions index", async () => {
    const emu = await standin();
    await create(emu, { TTL: "10s" });
    const before = await list(emu);
    emu.clock.advance("20s");
    const after = await list(emu);
    expect(after.sessions).toEqual([]);
    expect(after.index).toBeGreaterThan(before.index);
  });

  it("destroy bumps the sessions index; the index equals the session's CreateIndex after a create", async () => {
    const emu = await standin();
    const id = await create(emu);
    const a = await list(emu);
    expect(a.index).toBe(a.sessions[0]!.CreateIndex);
    expect(a.sessions[0]!.ModifyIndex).toBe(a.sessions[0]!.CreateIndex);
    await put(emu, `/v1/session/destroy/${id}`);
    const b = await list(emu);
    expect(b.index).toBeGreaterThan(a.index);
  });

  it("a check turning critical (control route) invalidates the sessions bound to it, not the others; warning does not", async () => {
    const emu = await standin({ nodes: NODES });
    const bound = await create(emu, { Node: "n1", NodeChecks: ["agentHealth", "c1"] });
    const viaChecks = await create(emu, { Node: "n1", Checks: ["c1"] });
    const other = await create(emu, { Node: "n1", NodeChecks: ["c2"] });
    const elsewhere = await create(emu);
    await setCheck(emu, "n1", "c1", "warning");
    expect(ids((await list(emu)).sessions)).toEqual([bound, viaChecks, other, elsewhere].sort());
    const before = await list(emu);
    await setCheck(emu, "n1", "c1", "critical");
    const after = await list(emu);
    expect(ids(after.sessions)).toEqual([other, elsewhere].sort());
    expect(after.index).toBeGreaterThan(before.index);
  });

  it("the agent check turning critical invalidates default sessions on the agent node only", async () => {
    const emu = await standin({ nodes: NODES });
    const onAgent = await create(emu);
    const onN1 = await create(emu, { Node: "n1" });
    const noChecks = await create(emu, { NodeChecks: [] });
    await setCheck(emu, "standin", "agentHealth", "critical");
    expect(ids((await list(emu)).sessions)).toEqual([onN1, noChecks].sort());
    expect(await info(emu, onAgent)).toEqual([]);
  });

  it("a critical check registered through PUT /v1/catalog/register invalidates bound sessions", async () => {
    const emu = await standin({ nodes: NODES });
    const bound = await create(emu, { Node: "n1", NodeChecks: ["c1"] });
    const other = await create(emu, { Node: "n1", NodeChecks: ["c2"] });
    const warn = await put(emu, "/v1/catalog/register", JSON.stringify({ Node: "n1", Address: "10.0.0.1", Check: { CheckID: "c1", Status: "warning" } }));
    expect(warn.status).toBe(200);
    expect(warn.text).toBe("true");
    expect(ids((await list(emu)).sessions)).toEqual([bound, other].sort());
    const res = await put(emu, "/v1/catalog/register", JSON.stringify({ Node: "n1", Address: "10.0.0.1", Check: { CheckID: "c1", Status: "critical" } }));
    expect(res.status).toBe(200);
    expect(ids((await list(emu)).sessions)).toEqual([other]);
  });

  it("deregistering a check invalidates the sessions bound to it", async () => {
    const emu = await standin({ nodes: NODES });
    const bound = await create(emu, { Node: "n1", NodeChecks: ["c1"] });
    const other = await create(emu, { Node: "n1", NodeChecks: ["c2"] });
    expect(ids((await list(emu)).sessions)).toEqual([bound, other].sort());
    const res = await put(emu, "/v1/catalog/deregister", JSON.stringify({ Node: "n1", CheckID: "c1" }));
    expect(res.status).toBe(200);
    expect(ids((await list(emu)).sessions)).toEqual([other]);
    expect(await info(emu, bound)).toEqual([]);
  });

  it("deregistering a node invalidates its sessions (and only its)", async () => {
    const emu = await standin({ nodes: NODES });
    const a = await create(emu, { Node: "n1" });
    const b = await create(emu, { Node: "n1", NodeChecks: [] });
    const keep = await create(emu);
    expect(ids((await list(emu, "/v1/session/node/n1")).sessions)).toEqual([a, b].sort());
    const res = await put(emu, "/v1/catalog/deregister", JSON.stringify({ Node: "n1" }));
    expect(res.status).toBe(200);
    expect(res.text).toBe("true");
    expect(ids((await list(emu)).sessions)).toEqual([keep]);
    expect((await list(emu, "/v1/session/node/n1")).sessions).toEqual([]);
    const again = await put(emu, "/v1/session/create", JSON.stringify({ Node: "n1" }));
    expect(again.status).toBe(500);
    expect(again.text).toBe("apply failed: Missing node registration");
  });

  it("creating a session bound to a critical check → 500", async () => {
    const emu = await standin({ nodes: NODES });
    await setCheck(emu, "standin", "agentHealth", "critical");
    const res = await put(emu, "/v1/session/create");
    expect(res.status).toBe(500);
    expect(res.text).toBe("apply failed: Check 'agentHealth' is in critical state");
    // a warning check is fine to bind to
    expect((await put(emu, "/v1/session/create", JSON.stringify({ Node: "n2", NodeChecks: ["warm"] }))).status).toBe(200);
    // and with no checks at all, a critical agent check does not matter
    expect((await put(emu, "/v1/session/create", JSON.stringify({ NodeChecks: [] }))).status).toBe(200);
  });

  describe("invalidation and held keys (§2.4)", () => {
    it("release: the key stays, Session is cleared, LockIndex unchanged, ModifyIndex bumps", async () => {
      const emu = await standin();
      const id = await create(emu, { LockDelay: "0" });
      expect((await put(emu, `/v1/kv/lock?acquire=${id}`, "me")).text).toBe("true");
      const [held] = JSON.parse((await req(emu, "/v1/kv/lock")).text) as KV[];
      expect(held).toMatchObject({ LockIndex: 1, Session: id });
      await put(emu, `/v1/session/destroy/${id}`);
      const res = await req(emu, "/v1/kv/lock");
      expect(res.status).toBe(200);
      const [after] = JSON.parse(res.text) as KV[];
      expect(after).not.toHaveProperty("Session");
      expect(after!.LockIndex).toBe(1);
      expect(after!.Value).toBe(Buffer.from("me").toString("base64"));
      expect(after!.ModifyIndex).toBeGreaterThan(held!.ModifyIndex);
      expect(after!.CreateIndex).toBe(held!.CreateIndex);
    });

    it("delete: the key is removed", async () => {
      const emu = await standin();
      const id = await create(emu, { Behavior: "delete", TTL: "10s" });
      expect((await put(emu, `/v1/kv/lock?acquire=${id}`, "me")).text).toBe("true");
      expect((await put(emu, "/v1/kv/other", "x")).text).toBe("true");
      emu.clock.advance("20s");
      const res = await req(emu, "/v1/kv/lock");
      expect(res.status).toBe(404);
      expect(res.text).toBe("");
      expect((await req(emu, "/v1/kv/other")).status).toBe(200);
    });

    it("a key held by a session invalidated by a critical check is released too", async () => {
      const emu = await standin({ nodes: NODES });
      const id = await create(emu, { Node: "n1", NodeChecks: ["c1"], LockDelay: 0 });
      await put(emu, `/v1/kv/lock?acquire=${id}`, "me");
      await setCheck(emu, "n1", "c1", "critical");
      const [after] = JSON.parse((await req(emu, "/v1/kv/lock")).text) as KV[];
      expect(after).not.toHaveProperty("Session");
    });

    it("lock-delay: after invalidation another session cannot acquire until LockDelay has passed", async () => {
      const emu = await standin();
      const a = await create(emu); // default 15s lock-delay
      const b = await create(emu);
      expect((await put(emu, `/v1/kv/lock?acquire=${a}`, "a")).text).toBe("true");
      await put(emu, `/v1/session/destroy/${a}`);
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`, "b")).text).toBe("false");
      emu.clock.advance("14999ms");
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`, "b")).text).toBe("false");
      emu.clock.advance("1ms");
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`, "b")).text).toBe("true");
      const [held] = JSON.parse((await req(emu, "/v1/kv/lock")).text) as KV[];
      expect(held).toMatchObject({ Session: b, LockIndex: 2 });
    });

    it('lock-delay is capped at 60s: a LockDelay of "90s" frees the key at 60s', async () => {
      const emu = await standin();
      const a = await create(emu, { LockDelay: "90s" });
      const b = await create(emu);
      expect((await info(emu, a))[0]!.LockDelay).toBe(90000000000);
      await put(emu, `/v1/kv/lock?acquire=${a}`, "a");
      await put(emu, `/v1/session/destroy/${a}`);
      emu.clock.advance("59999ms");
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`)).text).toBe("false");
      emu.clock.advance("1ms");
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`)).text).toBe("true");
    });

    it('LockDelay "0" → no lock-delay', async () => {
      const emu = await standin();
      const a = await create(emu, { LockDelay: "0" });
      const b = await create(emu);
      await put(emu, `/v1/kv/lock?acquire=${a}`, "a");
      await put(emu, `/v1/session/destroy/${a}`);
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`)).text).toBe("true");
    });

    it("lock-delay also follows a TTL expiry", async () => {
      const emu = await standin();
      const a = await create(emu, { TTL: "10s", LockDelay: "5s" });
      const b = await create(emu);
      await put(emu, `/v1/kv/lock?acquire=${a}`, "a");
      emu.clock.advance("20s");
      expect(await info(emu, a)).toEqual([]);
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`)).text).toBe("false");
      emu.clock.advance("5s");
      expect((await put(emu, `/v1/kv/lock?acquire=${b}`)).text).toBe("true");
    });
  });
});

// ---- 4. blocking queries (§3) ----------------------------------------------

describe("blocking queries (§3)", () => {
  it.each([
    ["list", "/v1/session/list"],
    ["node", "/v1/session/node/standin"],
  ])("%s with ?index=<current> parks until a create, which it then includes", async (_name, path) => {
    const emu = await standin();
    const first = await create(emu);
    const { index } = await list(emu, path);
    const t = track(emu, `${path}?index=${index}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    const second = await create(emu);
    const res = await t.promise;
    expect(res.status).toBe(200);
    expect(ids(JSON.parse(res.text) as Session[])).toEqual([first, second].sort());
    expect(indexOf(res)).toBeGreaterThan(index);
    expectMeta(res, undefined);
  });

  it("list parks until a destroy", async () => {
    const emu = await standin();
    const a = await create(emu);
    const b = await create(emu);
    const { index } = await list(emu);
    const t = track(emu, `/v1/session/list?index=${index}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    await put(emu, `/v1/session/destroy/${a}`);
    const res = await t.promise;
    expect(ids(JSON.parse(res.text) as Session[])).toEqual([b]);
    expect(indexOf(res)).toBeGreaterThan(index);
  });

  it("node parks until a TTL expiry", async () => {
    const emu = await standin();
    await create(emu, { TTL: "10s" });
    const { index } = await list(emu, "/v1/session/node/standin");
    const t = track(emu, `/v1/session/node/standin?index=${index}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("19999ms");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("1ms");
    const res = await t.promise;
    expect(res.text).toBe("[]");
    expect(indexOf(res)).toBeGreaterThan(index);
  });

  it("info on an existing session parks until it is destroyed, then answers []", async () => {
    const emu = await standin();
    const id = await create(emu);
    const { index } = await list(emu);
    const t = track(emu, `/v1/session/info/${id}?index=${index}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    await put(emu, `/v1/session/destroy/${id}`);
    const res = await t.promise;
    expect(res.text).toBe("[]");
    expect(indexOf(res)).toBeGreaterThan(index);
  });

  it("with no change the query answers at the virtual deadline (wait ≤ t ≤ wait + wait/16), unchanged, same index", async () => {
    const emu = await standin();
    await create(emu);
    const before = await list(emu);
    const t = track(emu, `/v1/session/list?index=${before.index}&wait=10s`);
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("9s");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("999ms");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("626ms"); // 10.625s = wait + wait/16
    await flush();
    expect(t.done).toBe(true);
    const res = await t.promise;
    expect(res.status).toBe(200);
    expect(res.text).toBe(before.res.text);
    expect(indexOf(res)).toBe(before.index);
    expectMeta(res, before.index);
  });

  it("an ?index= higher than the current one parks until the deadline and answers the (smaller) current index", async () => {
    const emu = await standin();
    await create(emu);
    const before = await list(emu);
    const t = track(emu, `/v1/session/list?index=${before.index + 100}&wait=10s`);
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("9s");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("2s");
    await flush();
    expect(t.done).toBe(true);
    const res = await t.promise;
    expect(res.text).toBe(before.res.text);
    expect(indexOf(res)).toBe(before.index);
  });

  it("?index= lower than the current one answers at once", async () => {
    const emu = await standin();
    await create(emu);
    const { index } = await list(emu);
    const res = await req(emu, `/v1/session/list?index=${index - 1}&wait=10s`);
    expect(indexOf(res)).toBe(index);
  });

  it("?index=0 and ?wait without ?index answer at once", async () => {
    const emu = await standin();
    expect((await req(emu, "/v1/session/list?index=0&wait=10s")).status).toBe(200);
    expect((await req(emu, "/v1/session/list?wait=10s")).status).toBe(200);
  });

  // Regression (was a deviation, now fixed): reference §3.4 — while still not found after a wake-up, the minimum
  // index rises to the current one, so the query keeps blocking until the session appears or the deadline passes.
  it("info not-found rule (§3.4): info/<unknown>?index=<current> is not woken by an unrelated create; answers [] at the deadline", async () => {
    const emu = await standin();
    await create(emu);
    const { index } = await list(emu);
    const t = track(emu, `/v1/session/info/0b7d3a1c-0000-4000-8000-000000000000?index=${index}&wait=10s`);
    await flush();
    expect(t.done).toBe(false);
    await create(emu);
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("9s");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("2s");
    await flush();
    expect(t.done).toBe(true);
    const res = await t.promise;
    expect(res.status).toBe(200);
    expect(res.text).toBe("[]");
  });

  it("info not-found rule (§3.4): if the index already moved past ?index=, [] comes at once", async () => {
    const emu = await standin();
    await create(emu);
    const { index } = await list(emu);
    const res = await req(emu, `/v1/session/info/0b7d3a1c-0000-4000-8000-000000000000?index=${index - 1}&wait=10s`);
    expect(res.text).toBe("[]");
    expect(indexOf(res)).toBe(index);
  });

  it("renew does not wake a parked list", async () => {
    const emu = await standin();
    const id = await create(emu, { TTL: "30s" });
    const before = await list(emu);
    const t = track(emu, `/v1/session/list?index=${before.index}&wait=10s`);
    await flush();
    expect((await put(emu, `/v1/session/renew/${id}`)).status).toBe(200);
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("11s");
    const res = await t.promise;
    expect(indexOf(res)).toBe(before.index);
  });

  it("KV writes do not wake a parked session list", async () => {
    const emu = await standin();
    const id = await create(emu);
    const before = await list(emu);
    const t = track(emu, `/v1/session/list?index=${before.index}&wait=10s`);
    await flush();
    await put(emu, `/v1/kv/lock?acquire=${id}`, "x");
    await put(emu, "/v1/kv/plain", "x");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("11s");
    expect(indexOf(await t.promise)).toBe(before.index);
  });

  it.each([
    ["/v1/session/list?wait=abc", "Invalid wait time"],
    ["/v1/session/list?index=1&wait=10", "Invalid wait time"],
    ["/v1/session/node/standin?wait=5x", "Invalid wait time"],
    ["/v1/session/list?index=abc", "Invalid index"],
    ["/v1/session/list?index=-1", "Invalid index"],
    ["/v1/session/info/x?index=1.5", "Invalid index"],
    ["/v1/session/list?stale&consistent", "Cannot specify ?stale with ?consistent, conflicting semantics."],
    ["/v1/session/list?stale=0&consistent=0", "Cannot specify ?stale with ?consistent, conflicting semantics."],
    ["/v1/session/list?cached&consistent", "Cannot specify ?cached with ?consistent, conflicting semantics."],
  ])("%s → 400 %s", async (path, text) => {
    const emu = await standin();
    const res = await req(emu, path);
    expect(res.status).toBe(400);
    expect(res.text).toBe(text);
    expect(res.headers.get("content-type")).toBe(TEXT_PLAIN);
    expectNoMeta(res);
    expectGlobalHeaders(res);
  });

  it("?stale alone, ?consistent alone and ?filter (ignored) are accepted", async () => {
    const emu = await standin();
    for (const q of ["stale", "consistent", "cached", "filter=%21%21bad(", "near=_agent"]) {
      expect((await req(emu, `/v1/session/list?${q}`)).status, q).toBe(200);
    }
  });
});

// ---- 5. KV -----------------------------------------------------------------

describe("KV", () => {
  it("put → true; get → the entry in DirEntry field order with base64 value and meta headers", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/kv/k", "hello");
    expect(res.status).toBe(200);
    expect(res.text).toBe("true");
    const got = await req(emu, "/v1/kv/k");
    expect(got.status).toBe(200);
    const n = indexOf(got);
    expect(got.text).toBe(`[{"LockIndex":0,"Key":"k","Flags":0,"Value":"aGVsbG8=","CreateIndex":${n},"ModifyIndex":${n}}]`);
    expect(got.headers.get("content-type")).toBe("application/json");
    expectMeta(got, n);
    expectGlobalHeaders(got);
  });

  it("?raw returns the bytes as text/plain", async () => {
    const emu = await standin();
    await put(emu, "/v1/kv/k", "hello world");
    const res = await req(emu, "/v1/kv/k?raw");
    expect(res.status).toBe(200);
    expect(res.text).toBe("hello world");
    expect(res.headers.get("content-type")).toBe("text/plain");
  });

  it("a missing key → 404 with an empty body and the meta headers", async () => {
    const emu = await standin();
    await put(emu, "/v1/kv/other", "x");
    const res = await req(emu, "/v1/kv/missing");
    expect(res.status).toBe(404);
    expect(res.text).toBe("");
    expectMeta(res, undefined);
    expectGlobalHeaders(res);
  });

  it("?recurse lists a prefix in key order", async () => {
    const emu = await standin();
    for (const k of ["a/2", "b", "a/1", "a/sub/x"]) await put(emu, `/v1/kv/${k}`, k);
    const res = await req(emu, "/v1/kv/a/?recurse");
    expect((JSON.parse(res.text) as KV[]).map((e) => e.Key)).toEqual(["a/1", "a/2", "a/sub/x"]);
    const all = await req(emu, "/v1/kv/?recurse");
    expect((JSON.parse(all.text) as KV[]).map((e) => e.Key)).toEqual(["a/1", "a/2", "a/sub/x", "b"]);
  });

  it("?keys lists key names; with separator=/ they are cut at the separator", async () => {
    const emu = await standin();
    for (const k of ["a/2", "b", "a/1", "a/sub/x"]) await put(emu, `/v1/kv/${k}`, k);
    expect(JSON.parse((await req(emu, "/v1/kv/?keys")).text)).toEqual(["a/1", "a/2", "a/sub/x", "b"]);
    expect(JSON.parse((await req(emu, "/v1/kv/a/?keys")).text)).toEqual(["a/1", "a/2", "a/sub/x"]);
    expect(JSON.parse((await req(emu, "/v1/kv/?keys&separator=/")).text)).toEqual(["a/", "b"]);
    expect(JSON.parse((await req(emu, "/v1/kv/a/?keys&separator=/")).text)).toEqual(["a/1", "a/2", "a/sub/"]);
  });

  it("?cas=0 only creates; ?cas=<ModifyIndex> updates; a stale cas fails", async () => {
    const emu = await standin();
    expect((await put(emu, "/v1/kv/k?cas=0", "v1")).text).toBe("true");
    expect((await put(emu, "/v1/kv/k?cas=0", "v2")).text).toBe("false");
    const [e] = JSON.parse((await req(emu, "/v1/kv/k")).text) as KV[];
    expect(e!.Value).toBe(Buffer.from("v1").toString("base64"));
    expect((await put(emu, `/v1/kv/k?cas=${e!.ModifyIndex + 1}`, "v3")).text).toBe("false");
    expect((await put(emu, `/v1/kv/k?cas=${e!.ModifyIndex}`, "v4")).text).toBe("true");
    const [f] = JSON.parse((await req(emu, "/v1/kv/k")).text) as KV[];
    expect(f!.Value).toBe(Buffer.from("v4").toString("base64"));
    expect(f!.CreateIndex).toBe(e!.CreateIndex);
    expect(f!.ModifyIndex).toBeGreaterThan(e!.ModifyIndex);
    expect((await put(emu, `/v1/kv/k?cas=${e!.ModifyIndex}`, "v5")).text).toBe("false");
  });

  it("?flags=42 is stored", async () => {
    const emu = await standin();
    await put(emu, "/v1/kv/k?flags=42", "x");
    expect((JSON.parse((await req(emu, "/v1/kv/k")).text) as KV[])[0]!.Flags).toBe(42);
  });

  it("acquire / re-acquire / contention / release", async () => {
    const emu = await standin();
    const a = await create(emu);
    const b = await create(emu);
    expect((await put(emu, `/v1/kv/lock?acquire=${a}`, "a")).text).toBe("true");
    let res = await req(emu, "/v1/kv/lock");
    let n = JSON.parse(res.text) as KV[];
    expect(res.text).toBe(`[{"LockIndex":1,"Key":"lock","Flags":0,"Value":"YQ==","Session":"${a}","CreateIndex":${n[0]!.CreateIndex},"ModifyIndex":${n[0]!.ModifyIndex}}]`);
    // the holder re-acquires: LockIndex stays
    expect((await put(emu, `/v1/kv/lock?acquire=${a}`, "a2")).text).toBe("true");
    n = JSON.parse((await req(emu, "/v1/kv/lock")).text) as KV[];
    expect(n[0]).toMatchObject({ LockIndex: 1, Session: a, Value: Buffer.from("a2").toString("base64") });
    // another session cannot take it, nor release it
    expect((await put(emu, `/v1/kv/lock?acquire=${b}`, "b")).text).toBe("false");
    expect((await put(emu, `/v1/kv/lock?release=${b}`)).text).toBe("false");
    n = JSON.parse((await req(emu, "/v1/kv/lock")).text) as KV[];
    expect(n[0]).toMatchObject({ LockIndex: 1, Session: a });
    // the holder releases
    expect((await put(emu, `/v1/kv/lock?release=${a}`, "done")).text).toBe("true");
    res = await req(emu, "/v1/kv/lock");
    n = JSON.parse(res.text) as KV[];
    expect(n[0]).not.toHaveProperty("Session");
    expect(n[0]!.LockIndex).toBe(1);
    // releasing explicitly sets no lock-delay; a new acquire bumps LockIndex
    expect((await put(emu, `/v1/kv/lock?acquire=${b}`, "b")).text).toBe("true");
    n = JSON.parse((await req(emu, "/v1/kv/lock")).text) as KV[];
    expect(n[0]).toMatchObject({ LockIndex: 2, Session: b });
  });

  it("acquire with an unknown session → 500 apply failed: invalid session", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/kv/lock?acquire=0b7d3a1c-0000-4000-8000-000000000000", "x");
    expect(res.status).toBe(500);
    expect(res.text).toBe('apply failed: invalid session "0b7d3a1c-0000-4000-8000-000000000000"');
    expect(res.headers.get("content-type")).toBe(TEXT_PLAIN);
    expect((await req(emu, "/v1/kv/lock")).status).toBe(404);
  });

  it("conflicting flags → 400 with the encoded query and a newline", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/kv/k?cas=0&acquire=x", "v");
    expect(res.status).toBe(400);
    expect(res.text).toBe("Conflicting flags: acquire=x&cas=0\n");
  });

  it("delete → true; delete ?recurse removes a prefix", async () => {
    const emu = await standin();
    for (const k of ["a/1", "a/2", "b"]) await put(emu, `/v1/kv/${k}`, k);
    const del = await req(emu, "/v1/kv/b", { method: "DELETE" });
    expect(del.status).toBe(200);
    expect(del.text).toBe("true");
    expect((await req(emu, "/v1/kv/b")).status).toBe(404);
    expect((await req(emu, "/v1/kv/a/?recurse", { method: "DELETE" })).text).toBe("true");
    expect((await req(emu, "/v1/kv/a/1")).status).toBe(404);
    expect((await req(emu, "/v1/kv/a/2")).status).toBe(404);
  });

  it("GET /v1/kv/ without recurse → 400 Missing key name", async () => {
    const emu = await standin();
    const res = await req(emu, "/v1/kv/");
    expect(res.status).toBe(400);
    expect(res.text).toBe("Missing key name");
  });

  it("a KV get blocks on the KV index", async () => {
    const emu = await standin();
    await put(emu, "/v1/kv/k", "1");
    const first = await req(emu, "/v1/kv/k");
    const t = track(emu, `/v1/kv/k?index=${indexOf(first)}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    await put(emu, "/v1/kv/k", "2");
    const res = await t.promise;
    expect((JSON.parse(res.text) as KV[])[0]!.Value).toBe(Buffer.from("2").toString("base64"));
    expect(indexOf(res)).toBeGreaterThan(indexOf(first));
  });
});

// ---- 6. ACL (§5) -----------------------------------------------------------

const S1 = "11111111-1111-1111-1111-111111111111";
const S2 = "22222222-2222-2222-2222-222222222222";

function aclFixture(defaultPolicy: "allow" | "deny" = "deny") {
  return {
    nodes: NODES,
    sessions: [
      { ID: S1, Node: "n1" },
      { ID: S2, Node: "n2", NodeChecks: ["warm"] },
    ],
    acl: {
      enabled: true,
      defaultPolicy,
      tokens: [
        { AccessorID: "acc-all", SecretID: "s-all", Rules: { session_prefix: { "": { policy: "write" } }, key_prefix: { "": { policy: "write" } } } },
        { AccessorID: "acc-n1", SecretID: "s-n1", Rules: { session_prefix: { n1: { policy: "write" } } } },
        { AccessorID: "acc-read", SecretID: "s-read", Rules: { session_prefix: { "": { policy: "read" } } } },
        { AccessorID: "acc-deny-n2", SecretID: "s-deny-n2", Rules: { session_prefix: { "": { policy: "write" } }, session: { n2: { policy: "deny" } } } },
      ],
    },
  };
}

describe("ACL (§5)", () => {
  it.each<[string, string, Init["headers"]]>([
    ["X-Consul-Token", "", { "X-Consul-Token": "s-n1" }],
    ["X-Registry-Token", "", { "X-Registry-Token": "s-n1" }],
    ["Authorization: Bearer", "", { Authorization: "Bearer s-n1" }],
    ["Authorization: bearer (case-insensitive scheme)", "", { Authorization: "bearer s-n1" }],
    ["?token=", "?token=s-n1", undefined],
  ])("the token is read from %s", async (_name, query, headers) => {
    const emu = await standin(aclFixture());
    const ok = await put(emu, `/v1/session/create${query}`, JSON.stringify({ Node: "n1" }), headers);
    expect(ok.status, ok.text).toBe(200);
    const denied = await put(emu, `/v1/session/create${query}`, JSON.stringify({ Node: "n2", NodeChecks: ["warm"] }), headers);
    expect(denied.status).toBe(403);
    expect(denied.text).toBe(`Permission denied: token with AccessorID 'acc-n1' lacks permission 'session:write' on "n2"`);
    expect(denied.headers.get("content-type")).toBe(TEXT_PLAIN);
    expectGlobalHeaders(denied, "deny");
  });

  it("?token= takes precedence over the header", async () => {
    const emu = await standin(aclFixture());
    const res = await put(emu, "/v1/session/create?token=s-n1", JSON.stringify({ Node: "n2", NodeChecks: ["warm"] }), { "X-Consul-Token": "s-all" });
    expect(res.status).toBe(403);
    expect(res.text).toContain("'acc-n1'");
  });

  it("an unknown token → 403 ACL not found", async () => {
    const emu = await standin(aclFixture());
    for (const [method, path] of [
      ["PUT", "/v1/session/create"],
      ["GET", "/v1/session/list"],
      ["GET", `/v1/session/info/${S1}`],
      ["PUT", `/v1/session/renew/${S1}`],
      ["PUT", `/v1/session/destroy/${S1}`],
    ] as const) {
      const res = await req(emu, path, { method, headers: { "X-Consul-Token": "who-knows" } });
      expect(res.status, path).toBe(403);
      expect(res.text).toBe("ACL not found");
    }
    expect(ids(await info(emu, S1))).toEqual([]); // anonymous under deny cannot read it…
    expect(ids((await list(emu, `/v1/session/list?token=s-all`)).sessions)).toEqual([S1, S2]); // …but it is still there
  });

  it("anonymous with default policy deny → the anonymous message", async () => {
    const emu = await standin(aclFixture());
    const before = emu.stateHash();
    const res = await put(emu, "/v1/session/create");
    expect(res.status).toBe(403);
    expect(res.text).toBe(`Permission denied: anonymous token lacks permission 'session:write' on "standin"${ANON_SUFFIX}`);
    expect(emu.stateHash()).toBe(before);
    const destroy = await put(emu, `/v1/session/destroy/${S1}`);
    expect(destroy.status).toBe(403);
    expect(destroy.text).toBe(`Permission denied: anonymous token lacks permission 'session:write' on "n1"${ANON_SUFFIX}`);
  });

  it("anonymous with default policy allow may create", async () => {
    const emu = await standin(aclFixture("allow"));
    expect((await put(emu, "/v1/session/create")).status).toBe(200);
  });

  it("destroy/renew on a denied node → 403; unknown sessions still give true / 404", async () => {
    const emu = await standin(aclFixture());
    const h = { "X-Consul-Token": "s-n1" };
    const destroy = await put(emu, `/v1/session/destroy/${S2}`, undefined, h);
    expect(destroy.status).toBe(403);
    expect(destroy.text).toBe(`Permission denied: token with AccessorID 'acc-n1' lacks permission 'session:write' on "n2"`);
    const renew = await put(emu, `/v1/session/renew/${S2}`, undefined, h);
    expect(renew.status).toBe(403);
    expect(renew.text).toBe(`Permission denied: token with AccessorID 'acc-n1' lacks permission 'session:write' on "n2"`);
    // the session survived
    expect(ids((await list(emu, "/v1/session/list?token=s-all")).sessions)).toEqual([S1, S2]);
    // unknown sessions never reach the ACL check
    expect((await put(emu, "/v1/session/destroy/nope", undefined, h)).text).toBe("true");
    expect((await put(emu, "/v1/session/destroy/nope")).text).toBe("true");
    const renewUnknown = await put(emu, "/v1/session/renew/nope");
    expect(renewUnknown.status).toBe(404);
    expect(renewUnknown.text).toBe("Session id 'nope' not found");
    // allowed ones work
    expect((await put(emu, `/v1/session/renew/${S1}`, undefined, h)).status).toBe(200);
    expect((await put(emu, `/v1/session/destroy/${S1}`, undefined, h)).text).toBe("true");
  });

  it("read-only session rules allow reads but not writes", async () => {
    const emu = await standin(aclFixture());
    const h = { "X-Consul-Token": "s-read" };
    const r = await list(emu, "/v1/session/list?token=s-read");
    expect(ids(r.sessions)).toEqual([S1, S2]);
    expect(r.res.headers.get("x-consul-results-filtered-by-acls")).toBeNull();
    const res = await put(emu, `/v1/session/renew/${S1}`, undefined, h);
    expect(res.status).toBe(403);
    expect(res.text).toBe(`Permission denied: token with AccessorID 'acc-read' lacks permission 'session:write' on "n1"`);
  });

  it("an exact session rule beats the prefix rule", async () => {
    const emu = await standin(aclFixture());
    const r = await list(emu, "/v1/session/list?token=s-deny-n2");
    expect(ids(r.sessions)).toEqual([S1]);
    expect(r.res.headers.get("x-consul-results-filtered-by-acls")).toBe("true");
  });

  it("list/info/node are filtered by session:read; the filtered header only when something was filtered and a token was presented", async () => {
    const emu = await standin(aclFixture());
    const header = (res: Res) => res.headers.get("x-consul-results-filtered-by-acls");
    // token that may read only n1
    let r = await list(emu, "/v1/session/list?token=s-n1");
    expect(ids(r.sessions)).toEqual([S1]);
    expect(header(r.res)).toBe("true");
    expectGlobalHeaders(r.res, "deny");
    const viaHeader = await req(emu, "/v1/session/list", { headers: { "X-Consul-Token": "s-n1" } });
    expect(header(viaHeader)).toBe("true");
    r = await list(emu, `/v1/session/info/${S2}?token=s-n1`);
    expect(r.sessions).toEqual([]);
    expect(header(r.res)).toBe("true");
    r = await list(emu, `/v1/session/info/${S1}?token=s-n1`);
    expect(ids(r.sessions)).toEqual([S1]);
    expect(header(r.res)).toBeNull();
    r = await list(emu, "/v1/session/node/n2?token=s-n1");
    expect(r.sessions).toEqual([]);
    expect(header(r.res)).toBe("true");
    r = await list(emu, "/v1/session/node/n1?token=s-n1");
    expect(ids(r.sessions)).toEqual([S1]);
    expect(header(r.res)).toBeNull();
    // a token that sees everything: nothing filtered, no header
    r = await list(emu, "/v1/session/list?token=s-all");
    expect(ids(r.sessions)).toEqual([S1, S2]);
    expect(header(r.res)).toBeNull();
    // anonymous (deny): everything filtered, but no token → no header, no 403
    r = await list(emu, "/v1/session/list");
    expect(r.sessions).toEqual([]);
    expect(header(r.res)).toBeNull();
    r = await list(emu, `/v1/session/info/${S1}`);
    expect(r.sessions).toEqual([]);
    expect(header(r.res)).toBeNull();
  });

  it("X-Consul-Default-Acl-Policy: deny on every answer when configured", async () => {
    const emu = await standin(aclFixture());
    for (const [method, path] of [
      ["GET", "/v1/session/list"],
      ["PUT", "/v1/session/create"],
      ["GET", "/v1/nope"],
      ["GET", "/v1/session/create"],
      ["PUT", "/v1/session/renew/nope"],
    ] as const) {
      expectGlobalHeaders(await req(emu, path, { method }), "deny");
    }
  });

  it("KV honours key rules", async () => {
    const emu = await standin(aclFixture());
    expect((await put(emu, "/v1/kv/k", "v", { "X-Consul-Token": "s-all" })).text).toBe("true");
    const denied = await put(emu, "/v1/kv/k", "v", { "X-Consul-Token": "s-n1" });
    expect(denied.status).toBe(403);
    expect(denied.text).toBe(`Permission denied: token with AccessorID 'acc-n1' lacks permission 'key:write' on "k"`);
  });

  it("with ACLs disabled, tokens are ignored (even unknown ones)", async () => {
    const emu = await standin({
      nodes: NODES,
      acl: { enabled: false, tokens: [{ AccessorID: "acc-x", SecretID: "s-x", Rules: { session_prefix: { nope: { policy: "write" } } } }] },
    });
    const res = await put(emu, "/v1/session/create", JSON.stringify({ Node: "n1" }), { "X-Consul-Token": "unknown-token" });
    expect(res.status).toBe(200);
    const withKnown = await put(emu, "/v1/session/create", JSON.stringify({ Node: "n1" }), { "X-Consul-Token": "s-x" });
    expect(withKnown.status).toBe(200);
    const r = await list(emu, "/v1/session/list?token=s-x");
    expect(r.sessions).toHaveLength(2);
    expect(r.res.headers.get("x-consul-results-filtered-by-acls")).toBeNull();
    expectGlobalHeaders(r.res, "allow");
  });
});

// ---- 7. compat headers off ---------------------------------------------------

describe("compatHeaders: false", () => {
  it("sends only X-Registry-* headers", async () => {
    const emu = await standin({}, { compatHeaders: false });
    await create(emu);
    for (const path of ["/v1/session/list", "/v1/session/node/standin", "/v1/session/list?dc=dc9", "/v1/nope"]) {
      const res = await req(emu, path);
      const names = [...res.headers.keys()];
      expect(
        names.filter((n) => n.toLowerCase().startsWith("x-consul-")),
        path,
      ).toEqual([]);
      expect(res.headers.get("x-registry-default-acl-policy")).toBe("allow");
    }
    const res = await req(emu, "/v1/session/list");
    expect(Number(res.headers.get("x-registry-index"))).toBeGreaterThan(0);
    expect(res.headers.get("x-registry-lastcontact")).toBe("0");
    expect(res.headers.get("x-registry-knownleader")).toBe("true");
    expect(res.headers.get("x-registry-query-backend")).toBe("blocking-query");
  });

  it("by default both families carry identical values", async () => {
    const emu = await standin();
    await create(emu);
    const res = await req(emu, "/v1/session/list");
    for (const suffix of ["index", "lastcontact", "knownleader", "query-backend", "default-acl-policy"]) {
      expect(res.headers.get(`x-registry-${suffix}`), suffix).not.toBeNull();
      expect(res.headers.get(`x-registry-${suffix}`)).toBe(res.headers.get(`x-consul-${suffix}`));
    }
  });

  it("X-Consul-Token is not honoured; X-Registry-Token is", async () => {
    const emu = await standin(aclFixture(), { compatHeaders: false });
    const res = await put(emu, "/v1/session/create", JSON.stringify({ Node: "n1" }), { "X-Consul-Token": "s-n1" });
    expect(res.status).toBe(403);
    expect(res.text).toBe(`Permission denied: anonymous token lacks permission 'session:write' on "n1"${ANON_SUFFIX}`);
    expect(res.headers.get("x-registry-default-acl-policy")).toBe("deny");
    const ok = await put(emu, "/v1/session/create", JSON.stringify({ Node: "n1" }), { "X-Registry-Token": "s-n1" });
    expect(ok.status).toBe(200);
    const filtered = await req(emu, "/v1/session/list", { headers: { "X-Registry-Token": "s-n1" } });
    expect(filtered.headers.get("x-registry-results-filtered-by-acls")).toBe("true");
    expect(filtered.headers.get("x-consul-results-filtered-by-acls")).toBeNull();
  });
});

// ---- 8. determinism ----------------------------------------------------------

describe("determinism", () => {
  it.each<[string, string | undefined]>([
    ["unknown node", '{"Node":"nowhere"}'],
    ["bad TTL", '{"TTL":"10z"}'],
    ["TTL out of range", '{"TTL":"5s"}'],
    ["critical check", '{"Node":"n2","NodeChecks":["bad"]}'],
    ["missing check", '{"Checks":["ghost"]}'],
    ["bad Behavior", '{"Behavior":"keep"}'],
    ["empty Node", '{"Node":""}'],
    ["decode error", "{x"],
  ])("a rejected create (%s) leaves the state hash unchanged", async (_name, body) => {
    const emu = await standin({ nodes: NODES });
    await create(emu);
    const before = emu.stateHash();
    const res = await put(emu, "/v1/session/create", body);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(emu.stateHash()).toBe(before);
    // and the next successful create gets the same ID as it would have without the rejected one
    const twin = await standin({ nodes: NODES });
    await create(twin);
    expect(await create(emu)).toBe(await create(twin));
  });

  it("a successful create changes the state hash", async () => {
    const emu = await standin();
    const before = emu.stateHash();
    await create(emu);
    expect(emu.stateHash()).not.toBe(before);
  });

  it("the same seed and script give the same session IDs", async () => {
    const a = await standin();
    const b = await standin();
    const run = async (emu: Standin) => [await create(emu), await create(emu, { TTL: "10s" }), await create(emu)];
    expect(await run(a)).toEqual(await run(b));
  });
});
