/**
 * The agent and status endpoints checked against the wire reference (§6):
 * status/leader parses the query as every read does, and agent/self counts
 * the agent node's services.
 */
import { describe, expect, it } from "vitest";
import { send } from "../support/call.js";
import { createStandin } from "../../src/emulator.js";

describe("status/leader", () => {
  it("refuses conflicting consistency modes as parse() does, and takes ?stale", async () => {
    const emu = await createStandin({});
    const res = await send(emu.registry, "/v1/status/leader?stale&consistent");
    expect([res.status, res.text]).toEqual([400, "Cannot specify ?stale with ?consistent, conflicting semantics."]);
    const stale = await send(emu.registry, "/v1/status/leader?stale");
    expect([stale.status, stale.text]).toEqual([200, '"127.0.0.1:8300"']);
    expect(stale.headers.get("x-consul-index")).toBeNull();
  });
});

describe("agent/self", () => {
  it("counts the agent node's services in Stats.agent", async () => {
    const emu = await createStandin({});
    const stats = async () => (JSON.parse((await send(emu.registry, "/v1/agent/self")).text) as { Stats: { agent: Record<string, string> } }).Stats.agent;
    expect((await stats()).services).toBe("0");
    const ops = [{ Service: { Verb: "set", Node: "standin", Service: { Service: "web" } } }, { Service: { Verb: "set", Node: "standin", Service: { Service: "db" } } }];
    expect((await send(emu.registry, "/v1/txn", { method: "PUT", body: JSON.stringify(ops) })).status).toBe(200);
    expect((await stats()).services).toBe("2");
  });
});
