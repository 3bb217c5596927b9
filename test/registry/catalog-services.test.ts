/**
 * The catalog's service API over HTTP, checked against
 * /work/shared/reference/registry-services-consul.md §3 and Consul's source:
 * registering a service through `PUT /v1/catalog/register`, deregistering it
 * by ServiceID, and the reads `/v1/catalog/services`, `/service/:name`,
 * `/node/:node`, `/node-services/:node` — their Go field order, filters,
 * blocking on the service's own index, ACL filtering and the
 * Effective-Consistency header.
 */
import { describe, expect, it } from "vitest";
import type { TextAnswer } from "../support/call.js";
import { flush, getJSON, indexOf, put, register, req, standin } from "../support/registry-http.js";
import type { Standin } from "../../src/emulator.js";

function track(emu: Standin, path: string) {
  const t = { done: false, promise: undefined as unknown as Promise<TextAnswer> };
  t.promise = req(emu, path).then((res) => {
    t.done = true;
    return res;
  });
  return t;
}

describe("PUT /v1/catalog/register with a Service", () => {
  it("stores the instance: the ID defaults to the name, Tags [] and Meta {} and Weights {1,1} when absent", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { Service: "web", Port: 8080 } });
    const { body } = await getJSON(emu, "/v1/catalog/node/n1");
    expect(body.Services.web).toMatchObject({ ID: "web", Service: "web", Tags: [], Meta: {}, Port: 8080, Weights: { Passing: 1, Warning: 1 } });
  });

  it("answers Consul's errors: a named ID without a name, a wildcard address, a check of an unknown service, a bad type", async () => {
    const emu = await standin();
    const cases: Array<[unknown, number, string]> = [
      [{ Node: "n1", Service: { ID: "x" } }, 500, "Must provide service name (Service.Service) when service ID is provided"],
      [{ Node: "n1", Service: { Service: "web", Address: "0.0.0.0" } }, 500, "Invalid service address"],
      [{ Node: "n1", Check: { CheckID: "c", ServiceID: "nope" } }, 500, "Unknown service ID 'nope' for check ID 'c'"],
      [{ Node: "n1", Check: { Node: "n2", CheckID: "c" } }, 500, "Node 'n2' for check 'c' doesn't match register request node 'n1'"],
      [{ Node: "n1", Service: { Service: "web", Port: "80" } }, 400, "Request decode failed: json: cannot unmarshal string into Go struct field .Service.Port of type int"],
      [{ Node: "", Service: { Service: "web" } }, 500, "Must provide node"],
      [{ Node: "n1", Address: "" }, 500, "Must provide address if SkipNodeUpdate is not set"],
    ];
    const before = emu.stateHash();
    for (const [body, status, text] of cases) {
      const res = await put(emu, "/v1/catalog/register", { Address: "10.0.0.1", ...(body as object) });
      expect([res.status, res.text], JSON.stringify(body)).toEqual([status, text]);
    }
    expect(emu.stateHash()).toBe(before);
  });

  it("refuses NodeMeta and Service.Meta beyond the agent's limits (64 pairs, keys of 128, values of 512 bytes), changing nothing", async () => {
    const emu = await standin();
    const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${String(i).padStart(2, "0")}`, "v"]));
    const longKey = "k".repeat(129);
    // 300 two-byte characters: 600 bytes, over Go's len() limit of 512 though only 300 characters.
    const wideValue = "é".repeat(300);
    const cases: Array<[unknown, string]> = [
      [{ NodeMeta: pairs(65) }, "Invalid Node Meta: Node metadata cannot contain more than 64 key/value pairs"],
      [{ NodeMeta: { [longKey]: "v" } }, `Invalid Node Meta: Couldn't load metadata pair ('${longKey}', 'v'): Key is too long (limit: 128 characters)`],
      [{ NodeMeta: { k: "v".repeat(513) } }, `Invalid Node Meta: Couldn't load metadata pair ('k', '${"v".repeat(513)}'): Value is too long (limit: 512 characters)`],
      [{ NodeMeta: { "a.b": "v" } }, "Invalid Node Meta: Couldn't load metadata pair ('a.b', 'v'): Key contains invalid characters"],
      [{ Service: { Service: "web", Meta: pairs(65) } }, "Invalid Service Meta: Node metadata cannot contain more than 64 key/value pairs"],
      [
        { Service: { Service: "web", Meta: { k: wideValue } } },
        `Invalid Service Meta: Couldn't load metadata pair ('k', '${wideValue}'): Value is too long (limit: 512 characters)`,
      ],
      [{ Service: { Service: "web", Meta: { "": "v" } } }, "Invalid Service Meta: Couldn't load metadata pair ('', 'v'): Key cannot be blank"],
    ];
    const before = emu.stateHash();
    for (const [body, text] of cases) {
      const res = await put(emu, "/v1/catalog/register", { Node: "n1", Address: "10.0.0.1", ...(body as object) });
      expect([res.status, res.text], JSON.stringify(body).slice(0, 80)).toEqual([400, text]);
    }
    expect(emu.stateHash()).toBe(before);
    // At the limits, and with the `consul-` prefix Consul's agents write through the catalog, it registers.
    const atLimits = { ...pairs(62), "consul-network-segment": "", ["k".repeat(128)]: "v".repeat(512) };
    await register(emu, { Node: "n1", NodeMeta: atLimits, Service: { Service: "web", Meta: atLimits } });
    const { body } = await getJSON(emu, "/v1/catalog/node/n1");
    expect(Object.keys(body.Node.Meta)).toHaveLength(64);
    expect(body.Services.web.Meta["consul-network-segment"]).toBe("");
  });

  it("keeps invalid Weights out as Consul's ToServiceNode does (the default instead)", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { Service: "web", Weights: { Passing: 0, Warning: 3 } } });
    await register(emu, { Node: "n1", Service: { Service: "api", Weights: { Passing: 5, Warning: 2 } } });
    const { body } = await getJSON(emu, "/v1/catalog/node/n1");
    expect([body.Services.web.Weights, body.Services.api.Weights]).toEqual([
      { Passing: 1, Warning: 1 },
      { Passing: 5, Warning: 2 },
    ]);
  });

  it("does not rewrite an unchanged node when a service re-posts it (no index churn on the node)", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1" });
    const nodeAt = (await getJSON(emu, "/v1/catalog/node/n1")).body.Node.ModifyIndex;
    await register(emu, { Node: "n1", Service: { Service: "web" } });
    const after = (await getJSON(emu, "/v1/catalog/node/n1")).body;
    expect(after.Node.ModifyIndex).toBe(nodeAt);
    expect(after.Services.web.ModifyIndex).toBeGreaterThan(nodeAt);
  });

  it("a service check takes the service's name and tags", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { ID: "web-1", Service: "web", Tags: ["v1"] }, Check: { CheckID: "web-1-ttl", ServiceID: "web-1", Status: "passing" } });
    const { body } = await getJSON(emu, "/v1/health/node/n1");
    expect(body.find((c: { CheckID: string }) => c.CheckID === "web-1-ttl")).toMatchObject({ ServiceID: "web-1", ServiceName: "web", ServiceTags: ["v1"] });
  });
});

describe("PUT /v1/catalog/deregister", () => {
  it("with a ServiceID removes that service and its checks only (and a ServiceID wins over a CheckID)", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { ID: "web-1", Service: "web" }, Checks: [{ CheckID: "web-ttl", ServiceID: "web-1" }, { CheckID: "disk" }] });
    await register(emu, { Node: "n1", Service: { ID: "db", Service: "db" } });
    const res = await put(emu, "/v1/catalog/deregister", { Node: "n1", ServiceID: "web-1", CheckID: "disk" });
    expect([res.status, res.text]).toEqual([200, "true"]);
    const node = (await getJSON(emu, "/v1/catalog/node/n1")).body;
    expect(Object.keys(node.Services)).toEqual(["db"]);
    const checks = (await getJSON(emu, "/v1/health/node/n1")).body.map((c: { CheckID: string }) => c.CheckID);
    expect(checks).toEqual(["disk"]);
  });

  it("an unknown ServiceID is no error", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1" });
    const res = await put(emu, "/v1/catalog/deregister", { Node: "n1", ServiceID: "nope" });
    expect([res.status, res.text]).toEqual([200, "true"]);
    expect((await getJSON(emu, "/v1/catalog/node/n1")).body.Node.Node).toBe("n1");
  });
});

describe("GET /v1/catalog/services", () => {
  it("maps each name to the union of its instances' tags, names in Go's map order; node-meta filters by the node", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", NodeMeta: { rack: "r1" }, Service: { ID: "web-1", Service: "web", Tags: ["v1", "blue"] } });
    await register(emu, { Node: "n2", NodeMeta: { rack: "r2" }, Service: { ID: "web-2", Service: "web", Tags: ["v2", "blue"] } });
    await register(emu, { Node: "n2", NodeMeta: { rack: "r2" }, Service: { Service: "api" } });
    const all = await getJSON(emu, "/v1/catalog/services");
    // With the server's own `consul` service, as every real cluster lists it.
    expect(all.res.text).toBe('{"api":[],"consul":[],"web":["v1","blue","v2"]}');
    expect((await getJSON(emu, "/v1/catalog/services?node-meta=rack:r1")).res.text).toBe('{"web":["v1","blue"]}');
    expect((await getJSON(emu, "/v1/catalog/services?node-meta=rack:r9")).res.text).toBe("{}");
  });

  it("blocks on the services table: a KV write does not answer it, a service registration does", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { Service: "web" } });
    const { res } = await getJSON(emu, "/v1/catalog/services");
    const waiting = track(emu, `/v1/catalog/services?index=${indexOf(res)}&wait=1m`);
    await flush();
    await put(emu, "/v1/kv/unrelated", "x");
    await flush();
    expect(waiting.done).toBe(false);
    await register(emu, { Node: "n1", Service: { Service: "api" } });
    const woke = await waiting.promise;
    expect(JSON.parse(woke.text)).toEqual({ api: [], consul: [], web: [] });
    expect(indexOf(woke)).toBeGreaterThan(indexOf(res));
  });
});

describe("GET /v1/catalog/service/:name", () => {
  it("lists structs.ServiceNode in Go field order, by node then ID; [] for an unknown name; 400 without a name", async () => {
    const emu = await standin();
    await register(emu, {
      Node: "n1",
      ID: "11111111-2222-3333-4444-555555555555",
      TaggedAddresses: { lan: "10.0.0.1" },
      NodeMeta: { rack: "r1" },
      Service: { ID: "web-1", Service: "web", Tags: ["v1"], Address: "10.1.0.1", Port: 80, Meta: { team: "a" }, TaggedAddresses: { lan: { Address: "10.1.0.1", Port: 80 } } },
    });
    const { body, res } = await getJSON(emu, "/v1/catalog/service/web");
    const index = body[0].CreateIndex;
    expect(res.text).toBe(
      `[{"ID":"11111111-2222-3333-4444-555555555555","Node":"n1","Address":"10.0.0.1","Datacenter":"dc1","TaggedAddresses":{"lan":"10.0.0.1"},"NodeMeta":{"rack":"r1"},` +
        `"ServiceKind":"","ServiceID":"web-1","ServiceName":"web","ServiceTags":["v1"],"ServiceAddress":"10.1.0.1","ServiceTaggedAddresses":{"lan":{"Address":"10.1.0.1","Port":80}},` +
        `"ServiceWeights":{"Passing":1,"Warning":1},"ServiceMeta":{"team":"a"},"ServicePort":80,"ServiceSocketPath":"","ServiceEnableTagOverride":false,` +
        `"ServiceProxy":{"Mode":"","MeshGateway":{},"Expose":{}},"ServiceConnect":{},"ServiceLocality":null,"CreateIndex":${index},"ModifyIndex":${index}}]`,
    );
    expect(indexOf(res)).toBe(index);
    expect((await getJSON(emu, "/v1/catalog/service/nothing")).res.text).toBe("[]");
    const missing = await req(emu, "/v1/catalog/service/");
    expect([missing.status, missing.text]).toEqual([400, "Missing service name"]);
  });

  it("filters by tag= (repeatable, all must match, case-insensitive) and node-meta=; accepts near= keeping the order", async () => {
    const emu = await standin();
    await register(emu, { Node: "n2", NodeMeta: { zone: "b" }, Service: { ID: "w2", Service: "web", Tags: ["Primary", "v2"] } });
    await register(emu, { Node: "n1", NodeMeta: { zone: "a" }, Service: { ID: "w1", Service: "web", Tags: ["primary", "v1"] } });
    const ids = async (query: string) => (await getJSON(emu, `/v1/catalog/service/web${query}`)).body.map((s: { ServiceID: string }) => s.ServiceID);
    expect(await ids("")).toEqual(["w1", "w2"]);
    expect(await ids("?near=_agent")).toEqual(["w1", "w2"]);
    expect(await ids("?tag=PRIMARY")).toEqual(["w1", "w2"]);
    expect(await ids("?tag=primary&tag=v2")).toEqual(["w2"]);
    expect(await ids("?tag=v3")).toEqual([]);
    expect(await ids("?node-meta=zone:a")).toEqual(["w1"]);
    expect(await ids("?node-meta=zone:a&tag=v2")).toEqual([]);
  });

  it("blocks on the service's own index: KV writes and other services do not answer it, a change to it does", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { Service: "web", Port: 80 } });
    await register(emu, { Node: "n1", Service: { Service: "db", Port: 5432 } });
    const first = (await getJSON(emu, "/v1/catalog/service/web")).res;
    const waiting = track(emu, `/v1/catalog/service/web?index=${indexOf(first)}&wait=5m`);
    await flush();
    await put(emu, "/v1/kv/k", "v");
    await register(emu, { Node: "n1", Service: { Service: "db", Port: 5433 } });
    await flush();
    expect(waiting.done).toBe(false);
    await register(emu, { Node: "n1", Service: { Service: "web", Port: 81 } });
    const woke = await waiting.promise;
    expect(JSON.parse(woke.text)[0].ServicePort).toBe(81);
    expect(indexOf(woke)).toBeGreaterThan(indexOf(first));
  });

  it("a blocked read of a missing service answers when it appears", async () => {
    const emu = await standin();
    const first = (await getJSON(emu, "/v1/catalog/service/late")).res;
    const waiting = track(emu, `/v1/catalog/service/late?index=${indexOf(first)}&wait=5m`);
    await flush();
    expect(waiting.done).toBe(false);
    await register(emu, { Node: "n1", Service: { Service: "late" } });
    expect(JSON.parse((await waiting.promise).text).map((s: { ServiceID: string }) => s.ServiceID)).toEqual(["late"]);
  });

  it("times out on the virtual clock with the same index", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { Service: "web" } });
    const first = (await getJSON(emu, "/v1/catalog/service/web")).res;
    const waiting = track(emu, `/v1/catalog/service/web?index=${indexOf(first)}&wait=10s`);
    await flush();
    emu.clock.advance("11s");
    const res = await waiting.promise;
    expect(indexOf(res)).toBe(indexOf(first));
  });

  it("sends X-Consul-Effective-Consistency: leader by default, stale, consistent", async () => {
    const emu = await standin();
    const level = async (query: string) => (await req(emu, `/v1/catalog/service/web${query}`)).headers.get("x-consul-effective-consistency");
    expect([await level(""), await level("?stale"), await level("?consistent"), await level("?max_stale=5s")]).toEqual(["leader", "stale", "consistent", "stale"]);
    expect((await req(emu, "/v1/catalog/nodes")).headers.get("x-consul-effective-consistency")).toBe("leader");
  });
});

describe("GET /v1/catalog/node/:node and /node-services/:node", () => {
  it("gives the node with its services as structs.NodeService (Go field order), by ID or as a list", async () => {
    const emu = await standin();
    await register(emu, { Node: "n1", Service: { ID: "web-1", Service: "web", Tags: ["v1"], Port: 80 } });
    const { body, res } = await getJSON(emu, "/v1/catalog/node/n1");
    const svc = body.Services["web-1"];
    expect(res.text).toContain(
      `"web-1":{"ID":"web-1","Service":"web","Tags":["v1"],"Address":"","Meta":{},"Port":80,"Weights":{"Passing":1,"Warning":1},"EnableTagOverride":false,` +
        `"Proxy":{"Mode":"","MeshGateway":{},"Expose":{}},"Connect":{},"PeerName":"","CreateIndex":${svc.CreateIndex},"ModifyIndex":${svc.ModifyIndex}}`,
    );
    expect(Object.keys(body.Node)).toEqual(["ID", "Node", "Address", "Datacenter", "TaggedAddresses", "Meta", "CreateIndex", "ModifyIndex"]);
    const list = await getJSON(emu, "/v1/catalog/node-services/n1");
    expect(list.body).toEqual({ Node: body.Node, Services: [svc] });
  });

  it("answers null for an unknown node (node-services: two nulls), 400 without a name", async () => {
    const emu = await standin();
    expect((await getJSON(emu, "/v1/catalog/node/ghost")).res.text).toBe("null");
    expect((await getJSON(emu, "/v1/catalog/node-services/ghost")).res.text).toBe('{"Node":null,"Services":null}');
    const missing = await req(emu, "/v1/catalog/node/");
    expect([missing.status, missing.text]).toEqual([400, "Missing node name"]);
  });
});

describe("ACLs", () => {
  const READER = "aaaaaaaa-0000-0000-0000-000000000001";
  const WEB_WRITER = "aaaaaaaa-0000-0000-0000-000000000002";
  const acl = {
    enabled: true,
    defaultPolicy: "deny",
    tokens: [
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000001", SecretID: READER, Rules: { node_prefix: { "": "read" }, service_prefix: { web: "read" } } },
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000002", SecretID: WEB_WRITER, Rules: { node_prefix: { "": "read" }, service: { web: "write" } } },
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000003", SecretID: "root", Rules: { node_prefix: { "": "write" }, service_prefix: { "": "write" } } },
    ],
  };

  it("filters services, instances and node services by service:read (and node:read), saying so to a token holder", async () => {
    const emu = await standin({ acl });
    const root = { "X-Consul-Token": "root" };
    await register(emu, { Node: "n1", Service: { Service: "web" } }, root);
    await register(emu, { Node: "n1", Service: { Service: "db" } }, root);
    const reader = { "X-Consul-Token": READER };
    const services = await getJSON(emu, "/v1/catalog/services", reader);
    expect(services.body).toEqual({ web: [] });
    expect(services.res.headers.get("x-consul-results-filtered-by-acls")).toBe("true");
    expect((await getJSON(emu, "/v1/catalog/service/db", reader)).body).toEqual([]);
    expect((await getJSON(emu, "/v1/catalog/service/web", reader)).body).toHaveLength(1);
    expect(Object.keys((await getJSON(emu, "/v1/catalog/node/n1", reader)).body.Services)).toEqual(["web"]);
    // Anonymous (default deny): everything filtered, and no header.
    const anonymous = await getJSON(emu, "/v1/catalog/services");
    expect([anonymous.body, anonymous.res.headers.get("x-consul-results-filtered-by-acls")]).toEqual([{}, null]);
    expect((await getJSON(emu, "/v1/catalog/node/n1")).res.text).toBe("null");
  });

  it("registering needs service:write on the service, node:write only when the node is new or changed", async () => {
    const emu = await standin({ acl });
    await register(emu, { Node: "n1" }, { "X-Consul-Token": "root" });
    const writer = { "X-Consul-Token": WEB_WRITER };
    // Same node details (the row the request would write is unchanged): service:write alone is enough.
    await register(emu, { Node: "n1", SkipNodeUpdate: true, Service: { Service: "web" } }, writer);
    const denied = await put(emu, "/v1/catalog/register", { Node: "n1", Address: "10.0.0.1", Service: { Service: "db" } }, writer);
    expect([denied.status, denied.text]).toEqual([
      403,
      "Permission denied: token with AccessorID 'bbbbbbbb-0000-0000-0000-000000000002' lacks permission 'service:write' on \"db\"",
    ]);
    const newNode = await put(emu, "/v1/catalog/register", { Node: "n2", Address: "10.0.0.2", Service: { Service: "web" } }, writer);
    expect([newNode.status, newNode.text]).toEqual([
      403,
      "Permission denied: token with AccessorID 'bbbbbbbb-0000-0000-0000-000000000002' lacks permission 'node:write' on \"n2\"",
    ]);
    const deregister = await put(emu, "/v1/catalog/deregister", { Node: "n1", ServiceID: "web" }, writer);
    expect([deregister.status, deregister.text]).toEqual([200, "true"]);
    const unknown = await put(emu, "/v1/catalog/deregister", { Node: "n1", ServiceID: "ghost" }, writer);
    expect([unknown.status, unknown.text]).toEqual([500, "Unknown service ID 'ghost'"]);
  });
});
