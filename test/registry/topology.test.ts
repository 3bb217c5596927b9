/**
 * Registry datacenters (one Consul datacenter per cluster, `dc=` forwarding)
 * and leader loss (`No cluster leader`, stale reads with KnownLeader false
 * and a growing LastContact, no TTL expiry without a leader, every TTL
 * restarted by a new leader).
 */
import Consul from "consul";
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call as callApp } from "../support/call.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { settleTurns, untilParked } from "../support/parked.js";

type Json = Record<string, any>;

const call = (emu: Standin, method: string, path: string, body?: unknown) => callApp(emu.registry, method, path, body);

const TWO_DCS = {
  registry: {
    sessions: [{ Name: "home-session" }],
    kv: [{ Key: "where", Value: "home" }],
    datacenters: {
      dc2: {
        agentNode: "agent-2",
        nodes: [{ Node: "n2", Address: "10.0.2.1" }],
        sessions: [{ Name: "dc2-session", Node: "n2", TTL: "10s" }],
        kv: [{ Key: "where", Value: "dc2" }],
      },
    },
  },
};

describe("registry datacenters", () => {
  it("serves each datacenter's own sessions, catalog and KV with dc=", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    expect((await call(emu, "GET", "/v1/session/list")).body.map((s: Json) => s.Name)).toEqual(["home-session"]);
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).body.map((s: Json) => s.Name)).toEqual(["dc2-session"]);
    expect((await call(emu, "GET", "/v1/session/list?dc=dc1")).body.map((s: Json) => s.Name)).toEqual(["home-session"]);
    expect((await call(emu, "GET", "/v1/kv/where?dc=dc2&raw")).text).toBe("dc2");
    expect((await call(emu, "GET", "/v1/kv/where?raw")).text).toBe("home");
    expect((await call(emu, "GET", "/v1/catalog/nodes?dc=dc2")).body.map((n: Json) => n.Node)).toEqual(["agent-2", "n2"]);
    expect((await call(emu, "GET", "/v1/catalog/datacenters")).text).toBe('["dc1","dc2"]');
    expect((await call(emu, "GET", "/v1/catalog/datacenters?dc=dc2")).text).toBe('["dc2","dc1"]');
  });

  it("keeps an index sequence per datacenter: writes in one leave the other's index and parked queries alone", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    const home = await call(emu, "GET", "/v1/session/list");
    const dc2 = await call(emu, "GET", "/v1/session/list?dc=dc2");
    const dc2Index = dc2.headers.get("X-Consul-Index");
    let answered: Awaited<ReturnType<typeof call>> | undefined;
    const parked = call(emu, "GET", `/v1/session/list?dc=dc2&index=${dc2Index}&wait=1m`).then((a) => (answered = a));
    await untilParked(emu, 1);
    const created = await call(emu, "PUT", "/v1/session/create", { Name: "another-home" });
    expect(created.status).toBe(200);
    await settleTurns();
    expect(answered).toBeUndefined();
    expect(emu.watchers.parked).toBe(1);
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).headers.get("X-Consul-Index")).toBe(dc2Index);
    expect(Number((await call(emu, "GET", "/v1/session/list")).headers.get("X-Consul-Index"))).toBeGreaterThan(Number(home.headers.get("X-Consul-Index")));
    const inDc2 = await call(emu, "PUT", "/v1/session/create?dc=dc2", { Name: "another-dc2", Node: "n2" });
    expect(inDc2.status, inDc2.text).toBe(200);
    await parked;
    expect(answered!.body.map((s: Json) => s.Name).sort()).toEqual(["another-dc2", "dc2-session"]);
  });

  it("expires a datacenter's sessions on the shared virtual clock", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    emu.clock.advance("21s"); // 2 × TTL
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).body).toEqual([]);
  });

  it("answers an unknown datacenter with 500 No path to datacenter, meta on reads, changing nothing", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    const before = emu.stateHash();
    const read = await call(emu, "GET", "/v1/session/list?dc=mars");
    expect([read.status, read.text, read.headers.get("X-Consul-KnownLeader")]).toEqual([500, "No path to datacenter", "false"]);
    const write = await call(emu, "PUT", "/v1/session/create?dc=mars", {});
    expect([write.status, write.text]).toEqual([500, "No path to datacenter"]);
    const register = await call(emu, "PUT", "/v1/catalog/register", { Datacenter: "mars", Node: "x", Address: "1.2.3.4" });
    expect([register.status, register.text]).toEqual([500, "No path to datacenter"]);
    expect(emu.stateHash()).toBe(before);
  });

  it("routes a catalog registration by its body's Datacenter", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    expect((await call(emu, "PUT", "/v1/catalog/register", { Datacenter: "dc2", Node: "n3", Address: "10.0.2.3" })).status).toBe(200);
    expect((await call(emu, "GET", "/v1/catalog/nodes?dc=dc2")).body.map((n: Json) => n.Node)).toContain("n3");
    expect((await call(emu, "GET", "/v1/catalog/nodes")).body.map((n: Json) => n.Node)).not.toContain("n3");
  });

  it("takes the check fault and timeline actions per datacenter", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    const bound = await call(emu, "PUT", "/v1/session/create?dc=dc2", { Node: "n2", Name: "bound" });
    expect(bound.status).toBe(200);
    const res = await emu.registry.request("/_standin/registry/checks?dc=dc2", {
      method: "POST",
      body: JSON.stringify({ Node: "n2", CheckID: "agentHealth", Status: "critical" }),
    });
    expect(await res.json()).toMatchObject({ Node: "n2", Status: "critical", invalidatedSessions: 2 });
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).body).toEqual([]);
    expect((await emu.registry.request("/_standin/registry/checks?dc=mars", { method: "POST", body: JSON.stringify({ CheckID: "x", Status: "passing" }) })).status).toBe(404);
    emu.act("check-passing", { node: "n2", check: "agentHealth", dc: "dc2" });
    expect((await call(emu, "GET", "/v1/health/node/n2?dc=dc2")).body[0].Status).toBe("passing");
  });

  it("survives snapshot and restore into a new emulator (timers included)", async () => {
    const emu = await createStandin({ fixture: TWO_DCS });
    const hash = emu.stateHash();
    const other = await createStandin();
    other.restore(structuredClone(emu.snapshot()));
    expect(other.stateHash()).toBe(hash);
    other.clock.advance("21s");
    expect((await call(other, "GET", "/v1/session/list?dc=dc2")).body).toEqual([]);
  });
});

describe("registry leader loss", () => {
  async function leaderless(fixture: object = TWO_DCS): Promise<Standin> {
    const emu = await createStandin({ fixture });
    const res = await emu.registry.request("/_standin/registry/leader", { method: "POST", body: JSON.stringify({ known: false }) });
    expect(await res.json()).toEqual({ known: false, lastContactMs: 0 });
    return emu;
  }

  it("fails writes and default/consistent reads with 500 No cluster leader, changing nothing", async () => {
    const emu = await leaderless();
    const before = emu.stateHash();
    const list = await call(emu, "GET", "/v1/session/list");
    // The read's deferred setMeta still writes (zero) query meta on the 500.
    expect([list.status, list.text, list.headers.get("X-Consul-KnownLeader"), list.headers.get("X-Consul-Index")]).toEqual([500, "No cluster leader", "false", "1"]);
    for (const [method, path, body] of [
      ["GET", "/v1/session/list?consistent"],
      ["GET", "/v1/kv/where"],
      ["PUT", "/v1/session/create", {}],
      ["PUT", "/v1/kv/where", "x"],
      ["PUT", "/v1/catalog/register", { Node: "x", Address: "1.2.3.4" }],
    ] as const) {
      const res = await call(emu, method, path, body);
      expect([method, path, res.status, res.text]).toEqual([method, path, 500, "No cluster leader"]);
    }
    expect(emu.stateHash()).toBe(before);
  });

  it("serves stale reads with KnownLeader false and a growing LastContact", async () => {
    const emu = await leaderless();
    emu.clock.advance("2s");
    const first = await call(emu, "GET", "/v1/session/list?stale");
    expect(first.status).toBe(200);
    expect(first.body.map((s: Json) => s.Name)).toEqual(["home-session"]);
    expect([first.headers.get("X-Consul-KnownLeader"), first.headers.get("X-Registry-KnownLeader"), first.headers.get("X-Consul-LastContact")]).toEqual(["false", "false", "2000"]);
    emu.clock.advance("1s");
    expect((await call(emu, "GET", "/v1/kv/where?stale&raw")).headers.get("X-Consul-LastContact")).toBe("3000");
    expect((await call(emu, "GET", "/v1/status/leader")).text).toBe('""');
  });

  it("expires no session while leaderless; a new leader restarts every TTL from the election", async () => {
    const emu = await createStandin({ fixture: { registry: { sessions: [{ Name: "ttl", TTL: "10s" }] } } });
    await emu.registry.request("/_standin/registry/leader", { method: "POST", body: JSON.stringify({ known: false }) });
    emu.clock.advance("1m"); // far past 2 × TTL
    expect((await call(emu, "GET", "/v1/session/list?stale")).body.map((s: Json) => s.Name)).toEqual(["ttl"]);
    emu.act("registry-leader", { known: true });
    emu.clock.advance("19s");
    expect((await call(emu, "GET", "/v1/session/list")).body.map((s: Json) => s.Name)).toEqual(["ttl"]);
    emu.clock.advance("1s"); // 2 × TTL after the election
    expect((await call(emu, "GET", "/v1/session/list")).body).toEqual([]);
  });

  it("is per datacenter and comes back with the leader", async () => {
    const emu = await leaderless();
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).status).toBe(200);
    expect((await emu.registry.request("/_standin/registry/leader?dc=dc2", { method: "POST", body: JSON.stringify({ known: false }) })).status).toBe(200);
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).text).toBe("No cluster leader");
    emu.act("registry-leader", { known: true });
    const res = await call(emu, "GET", "/v1/session/list");
    expect([res.status, res.headers.get("X-Consul-KnownLeader"), res.headers.get("X-Consul-LastContact")]).toEqual([200, "true", "0"]);
    expect((await call(emu, "GET", "/v1/session/list?dc=dc2")).status).toBe(500);
  });
});

describe("registry datacenters and leader loss through the npm consul client", () => {
  let srv: RunningStandin | undefined;
  afterEach(async () => {
    await srv?.close();
    srv = undefined;
  });

  it("creates and lists sessions in another datacenter with its dc option, and sees No cluster leader as an error", async () => {
    srv = await startStandin({ fixture: TWO_DCS, ports: { scheduler: 0, registry: 0, echo: 0 } });
    const consul = new Consul({ host: "127.0.0.1", port: srv.ports.registry });
    const { ID } = await consul.session.create({ name: "via-client", node: "n2", dc: "dc2" } as never);
    const listed = (await consul.session.list({ dc: "dc2" } as never)) as Json[];
    expect(listed.map((s) => s.ID)).toContain(ID);
    expect(((await consul.session.list()) as Json[]).map((s) => s.ID)).not.toContain(ID);
    await fetch(`${srv.urls.registry}/_standin/registry/leader`, { method: "POST", body: JSON.stringify({ known: false }) });
    const error = await consul.session.list().then(
      () => undefined,
      (e: Error & { statusCode?: number }) => e,
    );
    expect([error?.statusCode, error?.message]).toEqual([500, "No cluster leader"]);
    const stale = (await consul.session.list({ stale: true } as never)) as Json[];
    expect(stale.map((s) => s.Name)).toEqual(["home-session"]);
  });
});
