/**
 * The health API for services over HTTP, checked against
 * /work/shared/reference/registry-services-consul.md §4 and Consul's
 * agent/health_endpoint.go: `/v1/health/service/:name` (node checks with
 * the instance's, `passing` and its order quirk, tag and node-meta
 * filters), `/v1/health/checks/:service`, `/v1/health/state/:state`,
 * `/v1/health/node/:node` with service checks, blocking and ACL filtering.
 */
import { describe, expect, it } from "vitest";
import type { TextAnswer } from "../support/call.js";
import { flush, getJSON, indexOf, put, register, req, standin } from "../support/registry-http.js";
import type { Standin } from "../../src/emulator.js";

async function setCheck(emu: Standin, Node: string, CheckID: string, Status: string): Promise<void> {
  const res = await emu.registry.request("/_standin/registry/checks", { method: "POST", body: JSON.stringify({ Node, CheckID, Status }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

function track(emu: Standin, path: string) {
  const t = { done: false, promise: undefined as unknown as Promise<TextAnswer> };
  t.promise = req(emu, path).then((res) => {
    t.done = true;
    return res;
  });
  return t;
}

/** Three web instances on n1, n2, n3 (each with a passing check `<id>-ttl`) and a db on n1. */
async function fleet(emu: Standin): Promise<void> {
  for (const n of [1, 2, 3]) {
    await register(emu, {
      Node: `n${n}`,
      Address: `10.0.0.${n}`,
      NodeMeta: { zone: n === 3 ? "b" : "a" },
      Service: { ID: `web-${n}`, Service: "web", Tags: n === 1 ? ["primary"] : ["replica"], Port: 8080 },
      Checks: [
        { CheckID: "serfHealth", Name: "Serf Health Status", Status: "passing" },
        { CheckID: `web-${n}-ttl`, ServiceID: `web-${n}`, Status: "passing" },
      ],
    });
  }
  await register(emu, { Node: "n1", Service: { ID: "db", Service: "db" }, Check: { CheckID: "db-ttl", ServiceID: "db", Status: "passing" } });
}

const serviceIds = (body: Array<{ Service: { ID: string } }>) => body.map((e) => e.Service.ID);

describe("GET /v1/health/service/:name", () => {
  it("gives each instance as {Node, Service, Checks}: the node's own checks first, then the instance's (not other services')", async () => {
    const emu = await standin();
    await fleet(emu);
    const { body, res } = await getJSON(emu, "/v1/health/service/web");
    expect(serviceIds(body)).toEqual(["web-1", "web-2", "web-3"]);
    expect(Object.keys(body[0])).toEqual(["Node", "Service", "Checks"]);
    expect(body[0].Node).toMatchObject({ Node: "n1", Address: "10.0.0.1", Datacenter: "dc1", Meta: { zone: "a" } });
    expect(body[0].Service).toMatchObject({ ID: "web-1", Service: "web", Tags: ["primary"], Port: 8080, PeerName: "" });
    expect(body[0].Checks.map((c: { CheckID: string }) => c.CheckID)).toEqual(["serfHealth", "web-1-ttl"]);
    expect(body[0].Checks[1]).toMatchObject({ ServiceID: "web-1", ServiceName: "web", ServiceTags: ["primary"] });
    expect(indexOf(res)).toBe(body[2].Service.ModifyIndex);
    expect(res.headers.get("x-consul-effective-consistency")).toBe("leader");
  });

  it("the agent's node brings its serfHealth check along", async () => {
    const emu = await standin({ services: [{ Name: "api" }] });
    const { body } = await getJSON(emu, "/v1/health/service/api");
    expect(body[0].Checks.map((c: { CheckID: string }) => c.CheckID)).toEqual(["agentHealth", "serfHealth"]);
    expect(body[0].Checks[1]).toMatchObject({ Name: "Serf Health Status", Status: "passing", ServiceTags: [] });
  });

  it("?passing drops an instance with any check not passing (its node's too), with Consul's swap-with-last order", async () => {
    const emu = await standin();
    await fleet(emu);
    await setCheck(emu, "n1", "web-1-ttl", "critical");
    // Consul's filterNonPassing moves the last instance into the dropped one's place.
    expect(serviceIds((await getJSON(emu, "/v1/health/service/web?passing")).body)).toEqual(["web-3", "web-2"]);
    expect(serviceIds((await getJSON(emu, "/v1/health/service/web?passing=false")).body)).toEqual(["web-1", "web-2", "web-3"]);
    await setCheck(emu, "n1", "web-1-ttl", "passing");
    await setCheck(emu, "n2", "serfHealth", "warning");
    expect(serviceIds((await getJSON(emu, "/v1/health/service/web?passing=1")).body)).toEqual(["web-1", "web-3"]);
  });

  it("a bad ?passing is 400 `Invalid value for ?passing`, with the query meta already set", async () => {
    const emu = await standin();
    await fleet(emu);
    const res = await req(emu, "/v1/health/service/web?passing=yes");
    expect([res.status, res.text]).toEqual([400, "Invalid value for ?passing"]);
    expect(indexOf(res)).toBeGreaterThan(0);
    expect(res.headers.get("x-consul-knownleader")).toBe("true");
  });

  it("filters by tag= and node-meta=; [] for an unknown name; 400 without a name", async () => {
    const emu = await standin();
    await fleet(emu);
    expect(serviceIds((await getJSON(emu, "/v1/health/service/web?tag=REPLICA")).body)).toEqual(["web-2", "web-3"]);
    expect(serviceIds((await getJSON(emu, "/v1/health/service/web?node-meta=zone:b")).body)).toEqual(["web-3"]);
    expect(serviceIds((await getJSON(emu, "/v1/health/service/web?tag=replica&node-meta=zone:a&passing")).body)).toEqual(["web-2"]);
    expect((await getJSON(emu, "/v1/health/service/ghost")).res.text).toBe("[]");
    const missing = await req(emu, "/v1/health/service/");
    expect([missing.status, missing.text]).toEqual([400, "Missing service name"]);
  });

  it("a blocked read wakes when one of its instances' checks changes, not for KV or another service's check", async () => {
    const emu = await standin();
    await fleet(emu);
    const first = (await getJSON(emu, "/v1/health/service/web?passing")).res;
    const waiting = track(emu, `/v1/health/service/web?passing&index=${indexOf(first)}&wait=5m`);
    await flush();
    await put(emu, "/v1/kv/x", "1");
    await setCheck(emu, "n1", "db-ttl", "critical");
    await flush();
    expect(waiting.done).toBe(false);
    await setCheck(emu, "n2", "web-2-ttl", "critical");
    const woke = await waiting.promise;
    expect(serviceIds(JSON.parse(woke.text))).toEqual(["web-1", "web-3"]);
    expect(indexOf(woke)).toBeGreaterThan(indexOf(first));
  });
});

describe("GET /v1/health/checks/:service", () => {
  it("lists the service's checks only (no node checks), by node then check ID", async () => {
    const emu = await standin();
    await fleet(emu);
    const { body, res } = await getJSON(emu, "/v1/health/checks/WEB");
    expect(body.map((c: { CheckID: string }) => c.CheckID)).toEqual(["web-1-ttl", "web-2-ttl", "web-3-ttl"]);
    expect(res.headers.get("x-consul-effective-consistency")).toBe("leader");
    expect((await getJSON(emu, "/v1/health/checks/web?node-meta=zone:b")).body.map((c: { Node: string }) => c.Node)).toEqual(["n3"]);
    expect((await getJSON(emu, "/v1/health/checks/ghost")).res.text).toBe("[]");
    const missing = await req(emu, "/v1/health/checks/");
    expect([missing.status, missing.text]).toEqual([400, "Missing service name"]);
  });
});

describe("GET /v1/health/state/:state", () => {
  it("lists the checks in a state (any: all of them, node checks included); the state compares case-insensitively", async () => {
    const emu = await standin();
    await fleet(emu);
    await setCheck(emu, "n2", "web-2-ttl", "critical");
    await setCheck(emu, "n3", "serfHealth", "warning");
    const ids = async (state: string) => (await getJSON(emu, `/v1/health/state/${state}`)).body.map((c: { Node: string; CheckID: string }) => `${c.Node}/${c.CheckID}`);
    expect(await ids("critical")).toEqual(["n2/web-2-ttl"]);
    expect(await ids("CRITICAL")).toEqual(["n2/web-2-ttl"]);
    expect(await ids("warning")).toEqual(["n3/serfHealth"]);
    expect(await ids("any")).toEqual([
      "n1/db-ttl",
      "n1/serfHealth",
      "n1/web-1-ttl",
      "n2/serfHealth",
      "n2/web-2-ttl",
      "n3/serfHealth",
      "n3/web-3-ttl",
      "standin/agentHealth",
      "standin/serfHealth",
    ]);
    expect(await ids("passing?node-meta=zone:b")).toEqual(["n3/web-3-ttl"]);
  });

  it("an unknown state matches nothing (200 []); no state is 400 `Missing check state`", async () => {
    const emu = await standin();
    expect((await getJSON(emu, "/v1/health/state/bogus")).res.text).toBe("[]");
    const missing = await req(emu, "/v1/health/state/");
    expect([missing.status, missing.text]).toEqual([400, "Missing check state"]);
  });

  it("blocks on the checks table", async () => {
    const emu = await standin();
    await fleet(emu);
    const first = (await getJSON(emu, "/v1/health/state/critical")).res;
    const waiting = track(emu, `/v1/health/state/critical?index=${indexOf(first)}`);
    await flush();
    await put(emu, "/v1/kv/x", "1");
    await flush();
    expect(waiting.done).toBe(false);
    await setCheck(emu, "n3", "web-3-ttl", "critical");
    expect(JSON.parse((await waiting.promise).text).map((c: { CheckID: string }) => c.CheckID)).toEqual(["web-3-ttl"]);
  });
});

describe("GET /v1/health/node/:node", () => {
  it("lists the node's checks and its services' checks", async () => {
    const emu = await standin();
    await fleet(emu);
    const { body } = await getJSON(emu, "/v1/health/node/n1");
    expect(body.map((c: { CheckID: string; ServiceName: string }) => [c.CheckID, c.ServiceName])).toEqual([
      ["db-ttl", "db"],
      ["serfHealth", ""],
      ["web-1-ttl", "web"],
    ]);
  });
});

describe("ACL filtering", () => {
  const READER = "aaaaaaaa-0000-0000-0000-000000000001";
  const acl = {
    enabled: true,
    defaultPolicy: "deny",
    tokens: [
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000001", SecretID: READER, Rules: { node: { n1: "read", n2: "read" }, service: { web: "read" } } },
      { AccessorID: "bbbbbbbb-0000-0000-0000-000000000003", SecretID: "root", Rules: { node_prefix: { "": "write" }, service_prefix: { "": "write" } } },
    ],
  };

  it("drops instances and checks whose node or service the token may not read, and says so", async () => {
    const emu = await standin({ acl });
    const root = { "X-Consul-Token": "root" };
    for (const n of [1, 2, 3])
      await register(emu, { Node: `n${n}`, Service: { ID: `web-${n}`, Service: "web" }, Check: { CheckID: `c${n}`, ServiceID: `web-${n}`, Status: "passing" } }, root);
    await register(emu, { Node: "n1", Service: { Service: "db" }, Check: { CheckID: "db-c", ServiceID: "db", Status: "passing" } }, root);
    const reader = { "X-Consul-Token": READER };
    const health = await getJSON(emu, "/v1/health/service/web", reader);
    expect(serviceIds(health.body)).toEqual(["web-1", "web-2"]);
    expect(health.res.headers.get("x-consul-results-filtered-by-acls")).toBe("true");
    const state = await getJSON(emu, "/v1/health/state/passing", reader);
    expect(state.body.map((c: { CheckID: string }) => c.CheckID)).toEqual(["c1", "c2"]);
    expect((await getJSON(emu, "/v1/health/node/n1", reader)).body.map((c: { CheckID: string }) => c.CheckID)).toEqual(["c1"]);
    expect((await getJSON(emu, "/v1/health/checks/db", reader)).body).toEqual([]);
  });
});
