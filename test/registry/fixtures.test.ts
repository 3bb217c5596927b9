import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";

const LEADER = "0b6a3bde-5a4c-4f8e-9d1a-2c7e8f9a0b1c";

const scenario = {
  registry: {
    nodes: [{ Node: "node-1", Address: "10.0.0.1" }],
    sessions: [{ ID: LEADER, Name: "leader", Node: "node-1", TTL: "20s", LockDelay: "10s" }],
    kv: [
      { Key: "service/leader", Value: "node-1", Session: LEADER },
      { Key: "config/plain", Value: "hello" },
    ],
  },
};

async function json(res: Response) {
  return JSON.parse(await res.text());
}

describe("registry fixtures", () => {
  it("seed sessions with their IDs, KV entries and locks held by fixture sessions", async () => {
    const emu = await createStandin({ fixture: scenario });
    const [session] = await json(await emu.registry.request(`/v1/session/info/${LEADER}`));
    expect(session).toMatchObject({ ID: LEADER, Name: "leader", Node: "node-1", TTL: "20s", LockDelay: 10_000_000_000, NodeChecks: ["agentHealth"] });
    const [leader] = await json(await emu.registry.request("/v1/kv/service/leader"));
    expect(leader).toMatchObject({ Key: "service/leader", LockIndex: 1, Session: LEADER, Value: Buffer.from("node-1").toString("base64") });
    const [plain] = await json(await emu.registry.request("/v1/kv/config/plain"));
    expect(plain.Session).toBeUndefined();
    expect(plain.LockIndex).toBe(0);
  });

  it("start fixture TTLs run on the clock, and reset brings the session, its lock and its timer back", async () => {
    const emu = await createStandin({ fixture: scenario });
    const start = emu.stateHash();
    const fired = emu.clock.advance("40s");
    expect(fired.map((f) => f.kind)).toEqual(["registry.session-ttl"]);
    expect(await json(await emu.registry.request("/v1/session/list"))).toEqual([]);
    const [released] = await json(await emu.registry.request("/v1/kv/service/leader"));
    expect(released.Session).toBeUndefined();

    await emu.reset();
    expect(emu.stateHash()).toBe(start);
    expect(await json(await emu.registry.request("/v1/session/list"))).toHaveLength(1);
    expect(emu.clock.advance("39s")).toEqual([]);
    expect(emu.clock.advance("1s").map((f) => f.subject)).toEqual([LEADER]);
  });

  it("name the fixture entry that fails, with the registry's own error", async () => {
    await expect(createStandin({ fixture: { registry: { sessions: [{ Node: "ghost" }] } } })).rejects.toThrow("registry.sessions[0]: apply failed: Missing node registration");
    await expect(createStandin({ fixture: { registry: { sessions: [{ TTL: "5s" }] } } })).rejects.toThrow(
      "registry.sessions[0]: Invalid Session TTL '5000000000', must be between [10s=24h0m0s]",
    );
    await expect(createStandin({ fixture: { registry: { kv: [{ Key: "k", Session: "nope" }] } } })).rejects.toThrow('registry.kv[0].Session: no session "nope"');
  });

  it("a fixture applied at runtime adds nodes, sessions and keys to the running state", async () => {
    const emu = await createStandin();
    const res = await emu.registry.request("/_standin/fixtures", { method: "POST", body: JSON.stringify(scenario) });
    expect(res.status).toBe(200);
    expect(await json(await emu.registry.request("/v1/session/node/node-1"))).toHaveLength(1);
    const nodes = (await json(await emu.registry.request("/v1/catalog/nodes"))) as Array<{ Node: string }>;
    expect(nodes.map((n) => n.Node)).toEqual(["node-1", "standin"]);
  });
});

describe("a rejected runtime fixture", () => {
  it("is a 400 naming the entry, and changes nothing (store, timers and generator alike)", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const res = await emu.registry.request("/_standin/fixtures", {
      method: "POST",
      body: JSON.stringify({ registry: { nodes: [{ Node: "node-9" }], sessions: [{ Node: "node-9", TTL: "30s" }, { Node: "ghost" }] } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain("registry.sessions[1]: apply failed: Missing node registration");
    expect(emu.stateHash()).toBe(before);
    expect(emu.clock.status().pendingTimers).toBe(0);
  });
});
