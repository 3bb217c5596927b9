/**
 * `filter=` on every registry read that takes it, through HTTP: the element type each one filters
 * (api.AgentService, structs.HealthCheck, ServiceNode, NodeService, CheckServiceNode — Go field names),
 * a matching and a non-matching expression, Consul's 500 for a filter that cannot be created (without
 * parking a blocking query), and where the expression runs relative to node-meta, the ACL filter
 * (the `X-Consul-Results-Filtered-By-ACLs` header shows which came first) and `passing`.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";

const P = "Failed to create boolean expression evaluator: ";
const PARSE_ERROR = `${P}1:4 (3): no match found, expected: "!=", ".", "==", "[", [ \\t\\r\\n] or [a-zA-Z0-9_]`;
const FILTERED = "x-consul-results-filtered-by-acls";

const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const put = (emu: Standin, path: string, body: unknown, headers?: Record<string, string>) => req(emu, path, { method: "PUT", body: JSON.stringify(body), headers });
const withFilter = (path: string, filter: string) => `${path}${path.includes("?") ? "&" : "?"}filter=${encodeURIComponent(filter)}`;

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}

async function ok(emu: Standin, path: string, filter: string, headers?: Record<string, string>): Promise<{ body: any; res: TextAnswer }> {
  const res = await req(emu, withFilter(path, filter), { headers });
  expect(res.status, `${path} ${filter}: ${res.text}`).toBe(200);
  return { body: JSON.parse(res.text), res };
}

async function refused(emu: Standin, path: string, filter: string): Promise<string> {
  const res = await req(emu, withFilter(path, filter));
  expect(res.status, res.text).toBe(500);
  return res.text;
}

/** Lets every pending microtask and immediate run, so a request that can answer has answered. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

async function register(emu: Standin, body: Record<string, unknown>, headers?: Record<string, string>): Promise<void> {
  const res = await put(emu, "/v1/catalog/register", { Address: "10.0.0.1", ...body }, headers);
  expect([res.status, res.text]).toEqual([200, "true"]);
}

/**
 * web on n1 (tags a, prod, a critical check), web on n2 (tags b, dev, passing), db on n2;
 * n1 has role=edge, n2 role=core; each node has a passing node check.
 */
async function catalog(emu: Standin, headers?: Record<string, string>): Promise<void> {
  await register(
    emu,
    {
      Node: "n1",
      NodeMeta: { role: "edge" },
      Service: { ID: "web-1", Service: "web", Tags: ["a"], Meta: { env: "prod" }, Port: 80 },
      Checks: [
        { CheckID: "n1-alive", Name: "alive", Status: "passing" },
        { CheckID: "web-1-http", Name: "http", Status: "critical", ServiceID: "web-1" },
      ],
    },
    headers,
  );
  await register(
    emu,
    {
      Node: "n2",
      Address: "10.0.0.2",
      NodeMeta: { role: "core" },
      Service: { ID: "web-2", Service: "web", Tags: ["b"], Meta: { env: "dev" }, Port: 81 },
      Checks: [
        { CheckID: "n2-alive", Name: "alive", Status: "passing" },
        { CheckID: "web-2-http", Name: "http", Status: "passing", ServiceID: "web-2" },
      ],
    },
    headers,
  );
  await register(emu, { Node: "n2", Address: "10.0.0.2", NodeMeta: { role: "core" }, Service: { ID: "db", Service: "db", Port: 5432 } }, headers);
}

describe("GET /v1/agent/services?filter= (over api.AgentService, the map's values)", () => {
  async function agentServices(): Promise<Standin> {
    const emu = await standin();
    expect((await put(emu, "/v1/agent/service/register", { Name: "web", Tags: ["x", "v1"], Meta: { env: "prod" }, Port: 80 })).status).toBe(200);
    expect((await put(emu, "/v1/agent/service/register", { Name: "api", Tags: ["y"], Meta: { env: "dev" }, Port: 90 })).status).toBe(200);
    return emu;
  }
  const ids = async (emu: Standin, filter: string) => Object.keys((await ok(emu, "/v1/agent/services", filter)).body);

  it("keeps the services the expression matches, by Go field name", async () => {
    const emu = await agentServices();
    expect(await ids(emu, "")).toEqual(["api", "web"]);
    expect(await ids(emu, "Meta.env == prod")).toEqual(["web"]);
    expect(await ids(emu, "x in Tags")).toEqual(["web"]);
    expect(await ids(emu, "Tags contains x")).toEqual(["web"]);
    expect(await ids(emu, "Tags not contains x")).toEqual(["api"]);
    expect(await ids(emu, "Port == 90 and Service == api")).toEqual(["api"]);
    // Kind is omitempty on the wire but a zero string to the filter.
    expect(await ids(emu, 'Kind == ""')).toEqual(["api", "web"]);
    expect(await ids(emu, "Meta.env == staging")).toEqual([]);
    const web = (await ok(emu, "/v1/agent/services", "Service == web")).body.web;
    expect(web).toMatchObject({ ID: "web", Service: "web", Tags: ["x", "v1"], Meta: { env: "prod" } });
  });

  it("answers a filter that cannot be created with a 500 and Consul's text", async () => {
    const emu = await agentServices();
    expect(await refused(emu, "/v1/agent/services", "foo")).toBe(PARSE_ERROR);
    expect(await refused(emu, "/v1/agent/services", "Foo == bar")).toBe(`${P}Selector "Foo" is not valid`);
    expect(await refused(emu, "/v1/agent/services", "ContentHash == x")).toBe(`${P}Selector "ContentHash" is not valid`);
    expect(await refused(emu, "/v1/agent/services", "Port == abc")).toMatch(/^Failed to create boolean expression evaluator: Failed to coerce value "abc" for selector "Port"/);
  });

  // Regression (the go-bexpr oracle, test/oracles/consul-bexpr): these fields of consul/api v1.34.3's
  // AgentService were refused as "not valid" selectors.
  it("selects api.AgentService's PeerName and the proxy's EnvoyExtensions, AccessLogs and upstream DestinationPort", async () => {
    const emu = await agentServices();
    expect(await ids(emu, 'PeerName == ""')).toEqual(["api", "web"]);
    expect(await ids(emu, "PeerName != x")).toEqual(["api", "web"]);
    // Proxy is a nil pointer on a plain service: creation succeeds, evaluation fails as go-bexpr v0.1.2 panics there
    expect((await req(emu, withFilter("/v1/agent/services", 'Proxy.EnvoyExtensions.Name == ""'))).status).toBe(500);
    expect(await refused(emu, "/v1/agent/services", "Proxy.AccessLogs.Type is empty")).toBe(`${P}Invalid match operator "Is Empty" for selector "Proxy.AccessLogs.Type"`);
    expect(await refused(emu, "/v1/agent/services", "Proxy.Upstreams.DestinationPort == 1 and Foo == 1")).toBe(`${P}Selector "Foo" is not valid`);
    expect(await refused(emu, "/v1/agent/services", "Ports is empty")).toBe(`${P}Selector "Ports" is not valid`);
  });
});

describe("GET /v1/agent/checks?filter= (over structs.HealthCheck)", () => {
  it("keeps the checks the expression matches", async () => {
    const emu = await standin();
    expect((await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: "30s" })).status).toBe(200);
    expect((await put(emu, "/v1/agent/service/register", { Name: "web", Tags: ["v1"] })).status).toBe(200);
    expect((await put(emu, "/v1/agent/check/register", { ID: "web-ttl", Name: "ttl", ServiceID: "web", TTL: "30s", Status: "passing" })).status).toBe(200);
    const ids = async (filter: string) => Object.keys((await ok(emu, "/v1/agent/checks", filter)).body);
    expect(await ids("Status == critical")).toEqual(["disk"]);
    expect(await ids("ServiceName == web and v1 in ServiceTags")).toEqual(["web-ttl"]);
    expect(await ids("Type == ttl")).toEqual(["disk", "web-ttl"]);
    expect(await ids("Status == warning")).toEqual([]);
  });

  it("refuses a parse error up front, but checks selectors only against a row (Consul creates this filter untyped)", async () => {
    const emu = await standin();
    expect(await refused(emu, "/v1/agent/checks", "foo")).toBe(PARSE_ERROR);
    // No check: nothing is evaluated, so nothing is validated.
    expect((await ok(emu, "/v1/agent/checks", "Foo == bar")).body).toEqual({});
    expect((await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: "30s" })).status).toBe(200);
    // With a row, the selector fails at evaluation: go-bexpr's bare text, no creation prefix.
    expect(await refused(emu, "/v1/agent/checks", "Foo == bar")).toBe('Selector "Foo" is not valid');
  });
});

describe("GET /v1/catalog/services?filter= (over structs.ServiceNode, before grouping by name)", () => {
  it("groups only the instances the expression keeps, after node-meta", async () => {
    const emu = await standin();
    await catalog(emu);
    expect((await ok(emu, "/v1/catalog/services", "ServiceName == web")).body).toEqual({ web: ["a", "b"] });
    // The tags of the other web instance are not in the union: the filter ran before grouping.
    expect((await ok(emu, "/v1/catalog/services", "ServiceMeta.env == prod")).body).toEqual({ web: ["a"] });
    expect((await ok(emu, "/v1/catalog/services", "NodeMeta.role == core")).body).toEqual({ db: [], web: ["b"] });
    expect((await ok(emu, "/v1/catalog/services?node-meta=role:core", "ServicePort == 5432")).body).toEqual({ db: [] });
    expect((await ok(emu, "/v1/catalog/services?node-meta=role:edge", "ServicePort == 5432")).body).toEqual({});
    expect((await ok(emu, "/v1/catalog/services", "Node == nowhere")).body).toEqual({});
    expect(await refused(emu, "/v1/catalog/services", "Service == web")).toBe(`${P}Selector "Service" is not valid`);
  });
});

describe("GET /v1/catalog/service/:name?filter= (over structs.ServiceNode)", () => {
  it("keeps the instances the expression matches, after tag= and node-meta", async () => {
    const emu = await standin();
    await catalog(emu);
    const nodes = async (path: string, filter: string) => ((await ok(emu, path, filter)).body as Array<{ Node: string; ServiceID: string }>).map((s) => s.ServiceID);
    expect(await nodes("/v1/catalog/service/web", "Node == n2")).toEqual(["web-2"]);
    expect(await nodes("/v1/catalog/service/web", "ServiceMeta.env == prod and a in ServiceTags")).toEqual(["web-1"]);
    expect(await nodes("/v1/catalog/service/web", 'Address == "10.0.0.2" and NodeMeta.role == core')).toEqual(["web-2"]);
    expect(await nodes("/v1/catalog/service/web?tag=a", "Node == n2")).toEqual([]);
    expect(await nodes("/v1/catalog/service/web?node-meta=role:edge", "ServicePort == 80")).toEqual(["web-1"]);
    expect(await nodes("/v1/catalog/service/web", "ServiceWeights.Passing == 1")).toEqual(["web-1", "web-2"]);
    expect(await nodes("/v1/catalog/service/web", "ServicePort == 8080")).toEqual([]);
    expect(await refused(emu, "/v1/catalog/service/web", "Port == 80")).toBe(`${P}Selector "Port" is not valid`);
  });

  it("refuses a bad filter before blocking: a query at the current index answers at once", async () => {
    const emu = await standin();
    await catalog(emu);
    const index = (await req(emu, "/v1/catalog/service/web")).headers.get("x-consul-index");
    let answered: TextAnswer | undefined;
    const pending = req(emu, withFilter(`/v1/catalog/service/web?index=${index}&wait=5m`, "foo")).then((res) => {
      answered = res;
      return res;
    });
    await flush();
    // Answered without the virtual clock moving: the query never parked.
    expect(answered?.status).toBe(500);
    expect(answered?.text).toBe(PARSE_ERROR);
    await pending;
  });
});

describe("GET /v1/catalog/node/:node and /node-services/:node?filter= (over structs.NodeService)", () => {
  it("keeps the node's services the expression matches", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(Object.keys((await ok(emu, "/v1/catalog/node/n2", "Service == web")).body.Services)).toEqual(["web-2"]);
    expect((await ok(emu, "/v1/catalog/node/n2", "Meta.env == prod")).body).toMatchObject({ Node: { Node: "n2" }, Services: {} });
    expect(((await ok(emu, "/v1/catalog/node-services/n2", "Port == 5432")).body.Services as Array<{ ID: string }>).map((s) => s.ID)).toEqual(["db"]);
    expect((await ok(emu, "/v1/catalog/node-services/n2", "b in Tags and Weights.Warning == 1")).body.Services).toHaveLength(1);
    expect((await ok(emu, "/v1/catalog/node-services/n2", 'Kind == "connect-proxy"')).body.Services).toEqual([]);
  });

  it("answers a bad filter with a 500, even for an unknown node (Consul creates it first)", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(await refused(emu, "/v1/catalog/node/n1", "ServiceName == web")).toBe(`${P}Selector "ServiceName" is not valid`);
    expect(await refused(emu, "/v1/catalog/node/ghost", "foo")).toBe(PARSE_ERROR);
    expect(await refused(emu, "/v1/catalog/node-services/n1", "Port == x")).toMatch(
      /^Failed to create boolean expression evaluator: Failed to coerce value "x" for selector "Port"/,
    );
  });
});

describe("GET /v1/health/service/:name?filter= (over structs.CheckServiceNode)", () => {
  const serviceIds = (body: Array<{ Service: { ID: string } }>) => body.map((e) => e.Service.ID);

  it("selects through the Checks slice, the Node and the Service", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(serviceIds((await ok(emu, "/v1/health/service/web", "Checks.Status == critical")).body)).toEqual(["web-1"]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web", 'Checks.CheckID == "n2-alive"')).body)).toEqual(["web-2"]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web", "Node.Meta.role == core and Service.Meta.env == dev")).body)).toEqual(["web-2"]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web", "Service.Port == 80")).body)).toEqual(["web-1"]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web", "Checks is not empty")).body)).toEqual(["web-1", "web-2"]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web", "Checks.Status == warning")).body)).toEqual([]);
    expect(await refused(emu, "/v1/health/service/web", "Status == critical")).toBe(`${P}Selector "Status" is not valid`);
    expect(await refused(emu, "/v1/health/service/web", "Node.CreateIndex == 1")).toBe(`${P}Selector "Node.CreateIndex" is not valid`);
  });

  it("runs before passing: an instance the filter keeps is still dropped when not passing", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(serviceIds((await ok(emu, "/v1/health/service/web?passing", "Node.Node == n1")).body)).toEqual([]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web?passing", "Service.Tags contains b")).body)).toEqual(["web-2"]);
    expect(serviceIds((await ok(emu, "/v1/health/service/web?passing", "Node.Node != n2")).body)).toEqual([]);
  });
});

describe("the health check lists (over structs.HealthCheck)", () => {
  const checkIds = (body: Array<{ CheckID: string }>) => body.map((c) => c.CheckID);

  it("/v1/health/checks/:service", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(checkIds((await ok(emu, "/v1/health/checks/web", "Status == critical")).body)).toEqual(["web-1-http"]);
    expect(checkIds((await ok(emu, "/v1/health/checks/web", "b in ServiceTags")).body)).toEqual(["web-2-http"]);
    expect(checkIds((await ok(emu, "/v1/health/checks/web?node-meta=role:core", "Name == http")).body)).toEqual(["web-2-http"]);
    expect((await ok(emu, "/v1/health/checks/web", "Status == warning")).body).toEqual([]);
    expect(await refused(emu, "/v1/health/checks/web", "Service == web")).toBe(`${P}Selector "Service" is not valid`);
  });

  it("/v1/health/state/:state", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(checkIds((await ok(emu, "/v1/health/state/any", "Node == n1")).body)).toEqual(["n1-alive", "web-1-http"]);
    expect(checkIds((await ok(emu, "/v1/health/state/passing", 'ServiceID == ""')).body)).toEqual(expect.arrayContaining(["n1-alive", "n2-alive"]));
    expect(checkIds((await ok(emu, "/v1/health/state/passing", 'ServiceID == ""')).body)).not.toContain("web-2-http");
    expect((await ok(emu, "/v1/health/state/critical", "Node == n2")).body).toEqual([]);
    expect(await refused(emu, "/v1/health/state/any", "Definition.HTTP == x")).toBe(`${P}Selector "Definition" is not valid`);
  });

  it("/v1/health/node/:node", async () => {
    const emu = await standin();
    await catalog(emu);
    expect(checkIds((await ok(emu, "/v1/health/node/n2", "ServiceName == web")).body)).toEqual(["web-2-http"]);
    expect(checkIds((await ok(emu, "/v1/health/node/n2", 'ServiceName == ""')).body)).toEqual(["n2-alive"]);
    expect((await ok(emu, "/v1/health/node/n2", "Status == critical")).body).toEqual([]);
    expect(await refused(emu, "/v1/health/node/n2", "foo")).toBe(PARSE_ERROR);
  });
});

describe("the expression and the ACL filter", () => {
  const N1_READER = "aaaaaaaa-0000-0000-0000-000000000001";
  const WEB_READER = "aaaaaaaa-0000-0000-0000-000000000002";
  const acl = {
    enabled: true,
    defaultPolicy: "deny",
    tokens: [
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000001", SecretID: N1_READER, Rules: { node: { n1: "read" }, service_prefix: { "": "read" } } },
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000002", SecretID: WEB_READER, Rules: { node_prefix: { "": "read" }, service: { web: "read" } } },
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000003", SecretID: "root", Rules: { node_prefix: { "": "write" }, service_prefix: { "": "write" } } },
    ],
  };
  const root = { "X-Consul-Token": "root" };
  const n1Reader = { "X-Consul-Token": N1_READER };
  const webReader = { "X-Consul-Token": WEB_READER };

  it("ACLs first on health/state, health/node and health/service: the header says what the ACLs removed, whatever the expression", async () => {
    const emu = await standin({ acl });
    await catalog(emu, root);
    const state = await ok(emu, "/v1/health/state/any", "Node == n1", n1Reader);
    expect(state.body.map((c: { CheckID: string }) => c.CheckID)).toEqual(["n1-alive", "web-1-http"]);
    expect(state.res.headers.get(FILTERED)).toBe("true");
    const service = await ok(emu, "/v1/health/service/web", "Node.Node == n1", n1Reader);
    expect(service.body).toHaveLength(1);
    expect(service.res.headers.get(FILTERED)).toBe("true");
    const node = await ok(emu, "/v1/health/node/n2", 'ServiceName == "web"', webReader);
    expect(node.body.map((c: { CheckID: string }) => c.CheckID)).toEqual(["web-2-http"]);
    // n2's db checks: none; n2's node check is readable (node:read); nothing removed by ACLs.
    expect(node.res.headers.get(FILTERED)).toBeNull();
  });

  it("the expression first on health/checks and the catalog reads: what it drops is not counted as filtered by ACLs", async () => {
    const emu = await standin({ acl });
    await catalog(emu, root);
    const checks = await ok(emu, "/v1/health/checks/web", "Node == n1", n1Reader);
    expect(checks.body.map((c: { CheckID: string }) => c.CheckID)).toEqual(["web-1-http"]);
    expect(checks.res.headers.get(FILTERED)).toBeNull();
    const instances = await ok(emu, "/v1/catalog/service/web", "Node == n1", n1Reader);
    expect(instances.body).toHaveLength(1);
    expect(instances.res.headers.get(FILTERED)).toBeNull();
    const services = await ok(emu, "/v1/catalog/services", "ServiceName == web", webReader);
    expect(services.body).toEqual({ web: ["a", "b"] });
    expect(services.res.headers.get(FILTERED)).toBeNull();
    const unfiltered = await ok(emu, "/v1/catalog/services", "", webReader);
    expect(unfiltered.res.headers.get(FILTERED)).toBe("true");
    const node = await ok(emu, "/v1/catalog/node/n2", "Service == web", webReader);
    expect(Object.keys(node.body.Services)).toEqual(["web-2"]);
    expect(node.res.headers.get(FILTERED)).toBeNull();
  });

  it("ACLs first on the agent's lists", async () => {
    const emu = await standin({ acl });
    expect((await put(emu, "/v1/agent/service/register", { Name: "web", Meta: { env: "prod" } }, root)).status).toBe(200);
    expect((await put(emu, "/v1/agent/service/register", { Name: "api", Meta: { env: "dev" } }, root)).status).toBe(200);
    const services = await ok(emu, "/v1/agent/services", "Meta.env == prod", webReader);
    expect(Object.keys(services.body)).toEqual(["web"]);
    expect(services.res.headers.get(FILTERED)).toBe("true");
    expect((await put(emu, "/v1/agent/check/register", { Name: "api-ttl", ServiceID: "api", TTL: "30s" }, root)).status).toBe(200);
    // The only check is one the token may not read: nothing is left to evaluate, so the bad selector is never checked.
    const checks = await ok(emu, "/v1/agent/checks", "Foo == bar", webReader);
    expect([checks.body, checks.res.headers.get(FILTERED)]).toEqual([{}, "true"]);
  });
});
