/**
 * The agent endpoints clients call first (status/peers, agent/self,
 * agent/members) and Consul's own node check name, serfHealth, beside the
 * specification's agentHealth; through HTTP and through npm consul and
 * Debian's python3-consul.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import Consul from "consul";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { CLI_TEST_TIMEOUT_MS } from "../support/cli.js";
import { PYTHON, pythonConsul } from "../support/python-consul.js";

const run = promisify(execFile);

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}
const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const put = (emu: Standin, path: string, body = "", headers: Record<string, string> = {}) => req(emu, path, { method: "PUT", body, headers });

describe("status/peers", () => {
  it("is the one server's RPC address, without query meta", async () => {
    const emu = await standin();
    const res = await req(emu, "/v1/status/peers");
    expect(res.status).toBe(200);
    expect(res.text).toBe('["127.0.0.1:8300"]');
    expect(res.headers.get("x-consul-index")).toBeNull();
  });

  it("is empty while the datacenter has no leader", async () => {
    const emu = await standin();
    expect((await emu.registry.request("/_standin/registry/leader", { method: "POST", body: '{"known":false}' })).status).toBe(200);
    expect((await req(emu, "/v1/status/peers")).text).toBe("[]");
  });
});

describe("agent/self", () => {
  it("has Config, DebugConfig, Coord, Member, Stats and Meta in Consul's order, from the fixture", async () => {
    const emu = await standin({ datacenter: "east", agentNode: "consul-1" });
    const res = await req(emu, "/v1/agent/self");
    expect(res.status).toBe(200);
    const self = JSON.parse(res.text) as Record<string, Record<string, unknown>>;
    expect(Object.keys(self)).toEqual(["Config", "DebugConfig", "Coord", "Member", "Stats", "Meta"]);
    expect(Object.keys(self.Config!)).toEqual(["Datacenter", "PrimaryDatacenter", "NodeName", "NodeID", "Revision", "Server", "Version", "BuildDate"]);
    expect(self.Config).toMatchObject({ Datacenter: "east", PrimaryDatacenter: "east", NodeName: "consul-1", Server: true });
    const nodes = JSON.parse((await req(emu, "/v1/catalog/nodes")).text) as { Node: string; ID: string }[];
    expect(self.Config!.NodeID).toBe(nodes.find((n) => n.Node === "consul-1")!.ID);
    expect(self.Member).toMatchObject({ Name: "consul-1", Addr: "127.0.0.1", Port: 8301, Status: 1 });
    expect(self.Member!.Tags as Record<string, string>).toMatchObject({ role: "consul", dc: "east", port: "8300", acls: "0" });
    expect(res.text).toContain('"Coord":{"Vec":[0,0,0,0,0,0,0,0],"Error":1.5,"Adjustment":0,"Height":0.00001}');
    expect(self.Meta).toEqual({ "consul-network-segment": "" });
  });

  it("needs agent:read on the agent's node when ACLs deny by default", async () => {
    const emu = await standin({
      acl: {
        enabled: true,
        defaultPolicy: "deny",
        tokens: [
          { SecretID: "reader-secret", Rules: { agent: { standin: { policy: "read" } }, node_prefix: { "": { policy: "read" } } } },
          { SecretID: "nobody-secret", Rules: { key_prefix: { "": { policy: "read" } } } },
        ],
      },
    });
    const anonymous = await req(emu, "/v1/agent/self");
    expect(anonymous.status).toBe(403);
    expect(anonymous.text).toContain("'agent:read' on \"standin\"");
    expect((await req(emu, "/v1/agent/self", { headers: { "X-Consul-Token": "nobody-secret" } })).status).toBe(403);
    expect((await req(emu, "/v1/agent/self", { headers: { "X-Consul-Token": "reader-secret" } })).status).toBe(200);
    expect((await req(emu, "/v1/agent/members")).text).toBe("[]");
    expect(JSON.parse((await req(emu, "/v1/agent/members", { headers: { "X-Consul-Token": "reader-secret" } })).text)).toHaveLength(1);
  });
});

describe("agent/members", () => {
  it("lists the server on the LAN, and as <node>.<dc> on port 8302 with ?wan", async () => {
    const emu = await standin();
    const lan = JSON.parse((await req(emu, "/v1/agent/members")).text) as Record<string, unknown>[];
    expect(lan).toHaveLength(1);
    expect(Object.keys(lan[0]!)).toEqual(["Name", "Addr", "Port", "Tags", "Status", "ProtocolMin", "ProtocolMax", "ProtocolCur", "DelegateMin", "DelegateMax", "DelegateCur"]);
    expect(lan[0]).toMatchObject({ Name: "standin", Port: 8301, Status: 1 });
    const wan = JSON.parse((await req(emu, "/v1/agent/members?wan=1")).text) as Record<string, unknown>[];
    expect(wan[0]).toMatchObject({ Name: "standin.dc1", Port: 8302 });
  });

  it("refuses a segment with wan", async () => {
    const emu = await standin();
    const res = await req(emu, "/v1/agent/members?wan=1&segment=alpha");
    expect(res.status).toBe(400);
    expect(res.text).toBe("Cannot provide a segment with wan=true");
  });
});

describe("serfHealth beside agentHealth", () => {
  it("every agent node carries both checks, passing", async () => {
    const emu = await standin({ nodes: [{ Node: "node-2", Address: "10.0.0.2" }] });
    for (const node of ["standin", "node-2"]) {
      const checks = JSON.parse((await req(emu, `/v1/health/node/${node}`)).text) as { CheckID: string; Name: string; Status: string }[];
      expect(checks.map((c) => [c.CheckID, c.Name, c.Status])).toEqual([
        ["agentHealth", "Agent Health Status", "passing"],
        ["serfHealth", "Serf Health Status", "passing"],
      ]);
    }
  });

  it("a session created with Checks [serfHealth] is bound to it as Consul binds the default, and dies with it", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create", JSON.stringify({ Checks: ["serfHealth"], TTL: "30s" }));
    expect(res.status, res.text).toBe(200);
    const id = (JSON.parse(res.text) as { ID: string }).ID;
    const [session] = JSON.parse((await req(emu, `/v1/session/info/${id}`)).text) as { NodeChecks: string[]; Checks?: string[] }[];
    expect(session!.NodeChecks).toEqual(["serfHealth"]);
    expect(session!.Checks).toBeUndefined();
    const fault = await emu.registry.request("/_standin/registry/checks", { method: "POST", body: JSON.stringify({ CheckID: "serfHealth", Status: "critical" }) });
    expect(fault.status).toBe(200);
    expect(JSON.parse((await req(emu, "/v1/session/list")).text)).toEqual([]);
  });

  it("the specification's default stays agentHealth", async () => {
    const emu = await standin();
    const id = (JSON.parse((await put(emu, "/v1/session/create", "{}")).text) as { ID: string }).ID;
    const [session] = JSON.parse((await req(emu, `/v1/session/info/${id}`)).text) as { NodeChecks: string[] }[];
    expect(session!.NodeChecks).toEqual(["agentHealth"]);
  });
});

describe("through real clients", () => {
  let srv: RunningStandin;
  beforeEach(async () => {
    srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
  });
  afterEach(async () => {
    await srv.close();
  });

  it("npm consul: status.peers, agent.self, agent.members, a session on serfHealth", async () => {
    const consul = new Consul({ host: "127.0.0.1", port: srv.ports.registry });
    expect(await consul.status.peers()).toEqual(["127.0.0.1:8300"]);
    const self = (await consul.agent.self()) as { Config: { NodeName: string; Datacenter: string } };
    expect(self.Config).toMatchObject({ NodeName: "standin", Datacenter: "dc1" });
    const members = (await consul.agent.members()) as { Name: string; Status: number }[];
    expect(members.map((m) => [m.Name, m.Status])).toEqual([["standin", 1]]);
    const { ID } = await consul.session.create({ checks: ["serfHealth"] } as never);
    expect(((await consul.session.info(ID)) as { NodeChecks: string[] }).NodeChecks).toEqual(["serfHealth"]);
  });

  it.skipIf(!pythonConsul)(
    "python3-consul: status.peers, agent.self, agent.members, a session on serfHealth",
    async () => {
      const script = `
import json, sys, consul
c = consul.Consul(port=int(sys.argv[1]))
sid = c.session.create(checks=['serfHealth'])
print(json.dumps({"peers": c.status.peers(), "node": c.agent.self()["Config"]["NodeName"], "members": [m["Name"] for m in c.agent.members()], "checks": c.session.info(sid)[1]["NodeChecks"]}))
`;
      const { stdout } = await run(PYTHON, ["-c", script, String(srv.ports.registry)], { timeout: 60_000 });
      expect(JSON.parse(stdout)).toEqual({ peers: ["127.0.0.1:8300"], node: "standin", members: ["standin"], checks: ["serfHealth"] });
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
