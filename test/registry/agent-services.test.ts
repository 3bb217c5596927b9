/**
 * The agent's services through HTTP: register (decoding, validation order
 * and texts, defaults, check IDs, replace-existing-checks), deregister,
 * maintenance, the list and single views (ContentHash, hash blocking on the
 * virtual clock), and the local health views (200/429/503, X-Consul-Reason,
 * text mode). The services sit on the agent's node in the shared catalog.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { untilParked } from "../support/parked.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}
const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const put = (emu: Standin, path: string, body?: unknown) =>
  req(emu, path, { method: "PUT", ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });
const json = async (emu: Standin, path: string) => JSON.parse((await req(emu, path)).text) as Record<string, any>;

describe("PUT /v1/agent/service/register", () => {
  it("registers on the agent's node: api.AgentService in Go order, defaults filled, an empty 200", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/agent/service/register", { Name: "web", Tags: ["a"], Port: 8080, Address: "10.0.0.5", Meta: { v: "1" } });
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect(res.headers.get("content-type")).toBeNull();
    const services = await req(emu, "/v1/agent/services");
    expect(services.text).toBe(
      '{"web":{"ID":"web","Service":"web","Tags":["a"],"Meta":{"v":"1"},"Port":8080,"Address":"10.0.0.5",' +
        '"TaggedAddresses":{"lan_ipv4":{"Address":"10.0.0.5","Port":8080},"wan_ipv4":{"Address":"10.0.0.5","Port":8080}},' +
        '"Weights":{"Passing":1,"Warning":1},"EnableTagOverride":false,"Datacenter":"dc1"}}',
    );
    expect(services.headers.get("x-consul-index")).toBeNull();
    // The shared catalog holds it on the agent's node.
    const stats = (await json(emu, "/v1/agent/self")).Stats.agent;
    expect(stats.services).toBe("1");
  });

  it("answers an empty agent with {}", async () => {
    const emu = await standin();
    expect((await req(emu, "/v1/agent/services")).text).toBe("{}");
    expect((await req(emu, "/v1/agent/checks")).text).toBe("{}");
  });

  it("decodes strictly and validates in Consul's order, with its texts", async () => {
    const emu = await standin();
    const cases: [unknown, number, string][] = [
      ["", 400, "Request decode failed: EOF"],
      [{ Name: "web", Foo: 1 }, 400, 'Request decode failed: json: unknown field "Foo"'],
      [{ Name: "web", Check: { ID: "x", TTL: "10s" } }, 400, 'Request decode failed: json: unknown field "ID"'],
      [{ Name: "web", Check: { TTL: "ten" } }, 400, 'Request decode failed: time: invalid duration "ten"'],
      [{ Port: 1 }, 400, "Missing service name"],
      [{ Name: "web", Address: "0.0.0.0" }, 400, "Invalid service address"],
      [{ Name: "web", Weights: { Passing: 0, Warning: 1 } }, 400, "Invalid Weights: Passing must be greater than 0"],
      [{ Name: "web", Meta: { "consul-x": "1" } }, 400, "Invalid Service Meta: Couldn't load metadata pair ('consul-x', '1'): Key prefix 'consul-' is reserved for internal use"],
      // Go's len() counts bytes: 300 two-byte characters are over the 512 limit.
      [
        { Name: "web", Meta: { k: "é".repeat(300) } },
        400,
        `Invalid Service Meta: Couldn't load metadata pair ('k', '${"é".repeat(300)}'): Value is too long (limit: 512 characters)`,
      ],
      [{ Name: "web", Check: { Notes: "n" } }, 400, "Invalid check: TTL must be > 0 for TTL checks"],
      [{ Name: "web", Checks: [{ HTTP: "http://x" }] }, 400, "Invalid check: Interval must be > 0 for Script, HTTP, H2PING, TCP, UDP or OSService checks"],
      [{ Name: "web", Check: { TTL: "10s", Interval: "10s" } }, 400, "Invalid check: Interval and TTL cannot both be specified"],
      [{ Name: "web", Check: { TTL: "10s", Status: "maintenance" } }, 400, "Status for checks must 'passing', 'warning', 'critical'"],
      [{ Name: "web", TaggedAddresses: { lan_ipv4: { Address: "::1", Port: 1 } } }, 500, 'Service tagged address "lan_ipv4" must be a valid ipv4 address'],
    ];
    const before = emu.stateHash();
    for (const [body, status, text] of cases) {
      const res = await put(emu, "/v1/agent/service/register", body);
      expect({ body, status: res.status, text: res.text }).toEqual({ body, status, text });
    }
    expect(emu.stateHash()).toBe(before);
  });

  it("accepts snake_case aliases and case-folded keys", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/agent/service/register", { name: "web", enable_tag_override: true, check: { ttl: "10s", deregister_critical_service_after: "90s" } });
    expect(res.status).toBe(200);
    expect((await json(emu, "/v1/agent/services")).web.EnableTagOverride).toBe(true);
    expect((await json(emu, "/v1/agent/checks"))["service:web"].Type).toBe("ttl");
  });

  it("names checks service:<id>[:n], stores every kind with its Type without running it, and keeps a re-registered check's status", async () => {
    const emu = await standin();
    const body = {
      ID: "web-1",
      Name: "web",
      Tags: ["t"],
      Check: { TTL: "10s" },
      Checks: [
        { HTTP: "http://127.0.0.1:1/health", Interval: "5s", Timeout: "1s" },
        { CheckID: "tcp", Name: "port", TCP: "127.0.0.1:1", Interval: "5s", Status: "passing" },
        { Args: ["/bin/true"], Interval: "5s" },
        { GRPC: "127.0.0.1:1", Interval: "5s" },
      ],
    };
    expect((await put(emu, "/v1/agent/service/register", body)).status).toBe(200);
    const checks = await json(emu, "/v1/agent/checks");
    expect(Object.keys(checks)).toEqual(["service:web-1:1", "service:web-1:2", "service:web-1:4", "service:web-1:5", "tcp"]);
    expect(checks["service:web-1:1"]).toEqual({
      Node: "standin",
      CheckID: "service:web-1:1",
      Name: "Service 'web' check",
      Status: "critical",
      Notes: "",
      Output: "",
      ServiceID: "web-1",
      ServiceName: "web",
      ServiceTags: ["t"],
      Type: "ttl",
      Interval: "",
      Timeout: "",
      ExposedPort: 0,
      Definition: {},
      CreateIndex: 0,
      ModifyIndex: 0,
    });
    expect(checks["service:web-1:2"]).toMatchObject({ Type: "http", Interval: "5s", Timeout: "1s", Status: "critical" });
    expect(checks.tcp).toMatchObject({ Name: "port", Type: "tcp", Status: "passing" });
    expect(checks["service:web-1:4"].Type).toBe("script");
    expect(checks["service:web-1:5"].Type).toBe("grpc");
    // Never probed: virtual time passes, the HTTP check stays as registered.
    emu.clock.advance("1m");
    expect((await json(emu, "/v1/agent/checks"))["service:web-1:2"].Status).toBe("critical");

    expect((await put(emu, "/v1/agent/check/pass/service:web-1:1?note=ok")).status).toBe(200);
    expect((await put(emu, "/v1/agent/service/register", body)).status).toBe(200);
    expect((await json(emu, "/v1/agent/checks"))["service:web-1:1"]).toMatchObject({ Status: "passing", Output: "ok" });
  });

  it("keeps checks not sent again, unless replace-existing-checks (present, empty or true) removes them", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", {
      Name: "web",
      Checks: [
        { CheckID: "a", TTL: "10s" },
        { CheckID: "b", TTL: "10s" },
      ],
    });
    await put(emu, "/v1/agent/service/register", { Name: "web", Checks: [{ CheckID: "a", TTL: "10s" }] });
    expect(Object.keys(await json(emu, "/v1/agent/checks"))).toEqual(["a", "b"]);
    await put(emu, "/v1/agent/service/register?replace-existing-checks=1", { Name: "web", Checks: [{ CheckID: "a", TTL: "10s" }] });
    expect(Object.keys(await json(emu, "/v1/agent/checks"))).toEqual(["a", "b"]);
    await put(emu, "/v1/agent/service/register?replace-existing-checks", { Name: "web", Checks: [{ CheckID: "a", TTL: "10s" }] });
    expect(Object.keys(await json(emu, "/v1/agent/checks"))).toEqual(["a"]);
  });

  it("is visible to the catalog: the agent node's health lists the service's check", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "web-ttl", TTL: "10s" } });
    const checks = JSON.parse((await req(emu, "/v1/health/node/standin")).text) as { CheckID: string; ServiceName: string }[];
    expect(checks.find((c) => c.CheckID === "web-ttl")).toMatchObject({ ServiceName: "web" });
  });
});

describe("PUT /v1/agent/service/deregister/:id", () => {
  it("removes the service with its checks; unknown IDs are a 404; GET is a 405", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { TTL: "10s" } });
    const get = await req(emu, "/v1/agent/service/deregister/web");
    expect(get.status).toBe(405);
    expect(get.text).toBe("method GET not allowed");
    expect(get.headers.get("allow")).toBe("OPTIONS,PUT");
    const unknown = await put(emu, "/v1/agent/service/deregister/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe('Unknown service ID "nope". Ensure that the service ID is passed, not the service name.');
    const res = await put(emu, "/v1/agent/service/deregister/web");
    expect(res.status).toBe(200);
    expect(res.text).toBe("");
    expect((await req(emu, "/v1/agent/services")).text).toBe("{}");
    expect((await req(emu, "/v1/agent/checks")).text).toBe("{}");
  });
});

describe("GET /v1/agent/service/:id", () => {
  it("sends ContentHash in the body and the header, alike; unknown is a 404", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Port: 80 });
    const res = await req(emu, "/v1/agent/service/web");
    expect(res.status).toBe(200);
    const body = JSON.parse(res.text) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["ID", "Service", "Tags", "Meta", "Port", "Address", "Weights", "EnableTagOverride", "ContentHash", "Datacenter"]);
    expect(body.ContentHash).toMatch(/^[0-9a-f]{1,16}$/);
    expect(res.headers.get("x-consul-contenthash")).toBe(body.ContentHash);
    const missing = await req(emu, "/v1/agent/service/nope");
    expect(missing.status).toBe(404);
    expect(missing.text).toBe("unknown service ID: nope");
  });

  it("blocks on ?hash= until the service changes, or until the wait passes on the virtual clock", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Port: 80 });
    const first = await req(emu, "/v1/agent/service/web");
    const hash = first.headers.get("x-consul-contenthash")!;

    const changed = req(emu, `/v1/agent/service/web?hash=${hash}&wait=1m`);
    await untilParked(emu, 1);
    // A check write does not change the service's hash: still parked.
    await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: "10s" });
    await put(emu, "/v1/agent/service/register", { Name: "web", Port: 81 });
    const after = await changed;
    expect(JSON.parse(after.text).Port).toBe(81);
    expect(after.headers.get("x-consul-contenthash")).not.toBe(hash);

    const same = req(emu, `/v1/agent/service/web?hash=${after.headers.get("x-consul-contenthash")}&wait=10s`);
    await untilParked(emu, 1);
    emu.clock.advance("11s");
    const timedOut = await same;
    expect(timedOut.status).toBe(200);
    expect(timedOut.headers.get("x-consul-contenthash")).toBe(after.headers.get("x-consul-contenthash"));
  });
});

describe("agent health by service", () => {
  it("answers 503/429/200 with X-Consul-Reason from the service's checks and the agent's node checks", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", { ID: "web-1", Name: "web", Check: { CheckID: "t", TTL: "10s" } });
    const critical = await req(emu, "/v1/agent/health/service/id/web-1");
    expect(critical.status).toBe(503);
    expect(critical.headers.get("x-consul-reason")).toBe("critical");
    const body = JSON.parse(critical.text);
    expect(Object.keys(body)).toEqual(["AggregatedStatus", "Service", "Checks"]);
    expect(body.AggregatedStatus).toBe("critical");
    expect(body.Checks[0]).toMatchObject({ CheckID: "t", Status: "critical", Type: "", CreateIndex: 0 });

    await put(emu, "/v1/agent/check/warn/t");
    expect((await req(emu, "/v1/agent/health/service/id/web-1")).status).toBe(429);
    await put(emu, "/v1/agent/check/pass/t");
    const passing = await req(emu, "/v1/agent/health/service/name/web?format=text");
    expect(passing.status).toBe(200);
    expect(passing.text).toBe("passing");
    expect(passing.headers.get("content-type")).toBe("text/plain");

    // Node maintenance makes every service on the node unavailable.
    expect((await put(emu, "/v1/agent/maintenance?enable=true&reason=upgrade")).status).toBe(200);
    const maint = await req(emu, "/v1/agent/health/service/name/web", { headers: { Accept: "text/plain" } });
    expect(maint.status).toBe(503);
    expect(maint.text).toBe("maintenance");
    const nodeCheck = (await json(emu, "/v1/agent/checks"))._node_maintenance;
    expect(nodeCheck).toMatchObject({ Name: "Node Maintenance Mode", Notes: "upgrade", Status: "critical", Type: "maintenance", ServiceID: "" });
  });

  it("is a 404 for an unknown ID or name, JSON or text", async () => {
    const emu = await standin();
    const byId = await req(emu, "/v1/agent/health/service/id/nope");
    expect(byId.status).toBe(404);
    expect(byId.headers.get("x-consul-reason")).toBe("ServiceId nope not found");
    expect(byId.text).toBe('{"AggregatedStatus":"critical","Service":null,"Checks":null}');
    const byName = await req(emu, "/v1/agent/health/service/name/nope?format=text");
    expect(byName.status).toBe(404);
    expect(byName.text).toBe("ServiceName nope Not Found");
    expect((await req(emu, "/v1/agent/health/service/name/nope")).text).toBe("[]");
  });
});

describe("PUT /v1/agent/service/maintenance/:id", () => {
  it("adds and removes the _service_maintenance check; parses enable as a Go bool", async () => {
    const emu = await standin();
    await put(emu, "/v1/agent/service/register", { Name: "web" });
    expect(await put(emu, "/v1/agent/service/maintenance/web")).toMatchObject({ status: 400, text: "Missing value for enable" });
    expect(await put(emu, "/v1/agent/service/maintenance/web?enable=yes")).toMatchObject({ status: 400, text: 'Invalid value for enable: "yes"' });
    expect(await put(emu, "/v1/agent/service/maintenance/nope?enable=true")).toMatchObject({ status: 404, text: 'No service registered with ID "nope"' });
    expect((await put(emu, "/v1/agent/service/maintenance/web?enable=T")).status).toBe(200);
    // Already on: the reason is not updated.
    await put(emu, "/v1/agent/service/maintenance/web?enable=true&reason=later");
    expect((await json(emu, "/v1/agent/checks"))["_service_maintenance:web"]).toMatchObject({
      Name: "Service Maintenance Mode",
      Notes: "Maintenance mode is enabled for this service, but no reason was provided. This is a default message.",
      Status: "critical",
      ServiceID: "web",
      ServiceName: "web",
      Type: "maintenance",
    });
    expect((await json(emu, "/v1/agent/health/service/id/web")).AggregatedStatus).toBe("maintenance");
    await put(emu, "/v1/agent/service/maintenance/web?enable=0");
    expect((await req(emu, "/v1/agent/checks")).text).toBe("{}");
  });
});

describe("ACLs", () => {
  it("needs service:write to register; lists are filtered by service:read, with the header only for a presented token", async () => {
    const emu = await standin({
      acl: {
        enabled: true,
        defaultPolicy: "deny",
        tokens: [
          { SecretID: "root", Rules: { service_prefix: { "": "write" }, node_prefix: { "": "write" } } },
          { SecretID: "db-only", Rules: { service: { db: "read" } } },
        ],
      },
    });
    const denied = await put(emu, "/v1/agent/service/register", { Name: "web" });
    expect(denied.status).toBe(403);
    expect(denied.text).toContain("lacks permission 'service:write' on \"web\"");
    for (const name of ["web", "db"])
      expect((await req(emu, "/v1/agent/service/register", { method: "PUT", body: JSON.stringify({ Name: name }), headers: { "X-Consul-Token": "root" } })).status).toBe(200);
    const filtered = await req(emu, "/v1/agent/services", { headers: { "X-Consul-Token": "db-only" } });
    expect(Object.keys(JSON.parse(filtered.text))).toEqual(["db"]);
    expect(filtered.headers.get("x-consul-results-filtered-by-acls")).toBe("true");
    const anonymous = await req(emu, "/v1/agent/services");
    expect(anonymous.text).toBe("{}");
    expect(anonymous.headers.get("x-consul-results-filtered-by-acls")).toBeNull();
  });
});
