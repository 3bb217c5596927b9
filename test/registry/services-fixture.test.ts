/**
 * `registry.services` in fixtures: instances (with their checks) on the
 * agent's node or a listed node, per datacenter, applied at start (before
 * the sessions, which may bind to their checks) or at runtime; checked by
 * `fixtures check`; kept in snapshots like every other row.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { send, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import { checkStartFixtures } from "../../src/standin/fixtures-check.js";

const FIXTURE = {
  registry: {
    nodes: [{ Node: "node-1", Address: "10.0.0.1" }],
    services: [
      { Name: "web", Tags: ["v1"], Port: 8080, Meta: { team: "a" }, Checks: [{ Status: "passing", Output: "ok" }] },
      {
        Node: "node-1",
        ID: "web-2",
        Name: "web",
        Address: "10.0.1.2",
        Port: 8081,
        Weights: { Passing: 3, Warning: 1 },
        Checks: [{}, { CheckID: "web-2-disk", Status: "warning" }],
      },
    ],
    datacenters: { dc2: { services: [{ Name: "api", EnableTagOverride: true }] } },
  },
} as CreateStandinOptions["fixture"];

const get = async (emu: Standin, path: string): Promise<{ body: any; res: TextAnswer }> => {
  const res = await send(emu.registry, path);
  expect(res.status, res.text).toBe(200);
  return { body: JSON.parse(res.text), res };
};

describe("registry.services in a start fixture", () => {
  it("registers each instance on its node (the agent's by default), with Consul's IDs and names for its checks", async () => {
    const emu = await createStandin({ fixture: FIXTURE });
    const { body } = await get(emu, "/v1/catalog/service/web");
    expect(body.map((s: any) => [s.Node, s.ServiceID, s.ServicePort, s.ServiceTags, s.ServiceWeights])).toEqual([
      ["node-1", "web-2", 8081, [], { Passing: 3, Warning: 1 }],
      ["standin", "web", 8080, ["v1"], { Passing: 1, Warning: 1 }],
    ]);
    expect(body[1].ServiceMeta).toEqual({ team: "a" });
    const checks = (await get(emu, "/v1/health/checks/web")).body.map((c: any) => [c.Node, c.CheckID, c.Name, c.Status, c.Output, c.ServiceID]);
    expect(checks).toEqual([
      // A check without a Status starts critical, as a Consul agent starts it; several are numbered from 1.
      ["node-1", "service:web-2:1", "Service 'web' check", "critical", "", "web-2"],
      ["node-1", "web-2-disk", "Service 'web' check", "warning", "", "web-2"],
      ["standin", "service:web", "Service 'web' check", "passing", "ok", "web"],
    ]);
    expect((await get(emu, "/v1/health/service/web?passing")).body.map((e: any) => e.Service.ID)).toEqual(["web"]);
  });

  it("applies each datacenter's services to that datacenter", async () => {
    const emu = await createStandin({ fixture: FIXTURE });
    // Each datacenter's server lists its own `consul` service.
    expect((await get(emu, "/v1/catalog/services?dc=dc2")).body).toEqual({ api: [], consul: [] });
    expect((await get(emu, "/v1/catalog/service/api?dc=dc2")).body[0]).toMatchObject({ Node: "standin", ServiceID: "api", ServiceEnableTagOverride: true });
    expect((await get(emu, "/v1/catalog/service/api")).body).toEqual([]);
  });

  it("comes before the sessions, which can bind to a service's check (and die with it)", async () => {
    const emu = await createStandin({
      fixture: {
        registry: {
          services: [{ Name: "web", Checks: [{ Status: "passing" }] }],
          sessions: [{ ID: "11111111-1111-1111-1111-111111111111", ServiceChecks: [{ ID: "service:web" }] }],
        },
      } as CreateStandinOptions["fixture"],
    });
    expect((await get(emu, "/v1/session/info/11111111-1111-1111-1111-111111111111")).body).toHaveLength(1);
    const res = await emu.registry.request("/_standin/registry/checks", { method: "POST", body: JSON.stringify({ CheckID: "service:web", Status: "critical" }) });
    expect(res.status).toBe(200);
    expect((await get(emu, "/v1/session/info/11111111-1111-1111-1111-111111111111")).body).toEqual([]);
  });

  it("names a service on a node the catalog does not have", async () => {
    await expect(createStandin({ fixture: { registry: { services: [{ Name: "web", Node: "ghost" }] } } as CreateStandinOptions["fixture"] })).rejects.toThrow(
      'registry.services[0].Node: no node "ghost" (list it in registry.nodes, or leave Node out for the agent\'s node)',
    );
  });

  it("is checked by `fixtures check`: the schema (Name, not the catalog's Service) and the node", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-services-"));
    const write = (name: string, document: unknown) => {
      const file = join(dir, name);
      writeFileSync(file, JSON.stringify(document));
      return file;
    };
    expect(await checkStartFixtures([write("good.json", FIXTURE)])).toEqual([]);
    const [schemaProblem] = await checkStartFixtures([write("service-key.json", { registry: { services: [{ Service: "web" }] } })]);
    expect(schemaProblem?.oneLine).toContain("registry.services[0]");
    expect(schemaProblem?.oneLine).toMatch(/Name/);
    const [nodeProblem] = await checkStartFixtures([write("ghost.json", { registry: { services: [{ Name: "web", Node: "ghost" }] } })]);
    expect(nodeProblem?.oneLine).toContain('registry.services[0].Node: no node "ghost"');
  });

  it("builds the same state from the same fixture (state hash)", async () => {
    const [a, b] = await Promise.all([createStandin({ fixture: FIXTURE }), createStandin({ fixture: FIXTURE })]);
    expect(a.stateHash()).toBe(b.stateHash());
  });
});

describe("registry.services at runtime and in snapshots", () => {
  it("a fixture applied at runtime adds services", async () => {
    const emu = await createStandin();
    const res = await emu.registry.request("/_standin/fixtures", { method: "POST", body: JSON.stringify({ registry: { services: [{ Name: "late", Port: 1 }] } }) });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await get(emu, "/v1/catalog/services")).body).toEqual({ consul: [], late: [] });
  });

  it("a snapshot round trip brings services, their checks and their indexes back", async () => {
    const emu = await createStandin({ fixture: FIXTURE });
    const snapshot = emu.snapshot();
    const hash = emu.stateHash();
    const before = (await get(emu, "/v1/health/service/web")).res;
    const dereg = await send(emu.registry, "/v1/catalog/deregister", { method: "PUT", body: JSON.stringify({ Node: "node-1", ServiceID: "web-2" }) });
    expect(dereg.status).toBe(200);
    expect(emu.stateHash()).not.toBe(hash);
    emu.restore(snapshot);
    expect(emu.stateHash()).toBe(hash);
    const after = (await get(emu, "/v1/health/service/web")).res;
    expect(after.text).toBe(before.text);
    expect(after.headers.get("x-consul-index")).toBe(before.headers.get("x-consul-index"));
  });
});
