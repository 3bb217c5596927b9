/**
 * A check on the agent's node removed by a path other than the agent's own
 * (catalog deregister by ServiceID or CheckID, a txn delete, the node's
 * removal) takes its agent-local row (`registry.agent-checks`) and its TTL
 * timer with it: nothing of it stays in the state, and its TTL never fires.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type Standin } from "../../src/emulator.js";
import { AGENT_CHECKS_TABLE, CHECK_TTL_TIMER } from "../../src/registry/agent-local.js";

const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const put = async (emu: Standin, path: string, body: unknown) => {
  const res = await req(emu, path, { method: "PUT", body: JSON.stringify(body) });
  expect(res.status, res.text).toBe(200);
  return res;
};

const agentRows = (emu: Standin) => Object.keys(emu.snapshot().store.tables[AGENT_CHECKS_TABLE]?.rows ?? {});
const ttlTimers = (emu: Standin, checkId: string) => emu.clock.timersFor(CHECK_TTL_TIMER, checkId);

async function agentNode(emu: Standin): Promise<string> {
  return JSON.parse((await req(emu, "/v1/agent/self")).text).Config.NodeName as string;
}

/** Advances past every TTL and says whether anything was written meanwhile. */
async function writesWhileTTLsLapse(emu: Standin): Promise<boolean> {
  const before = emu.store.index;
  await emu.clock.advance("2m");
  return emu.store.index !== before;
}

async function webWithTTL(emu: Standin): Promise<void> {
  await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "web-ttl", TTL: "30s" } });
  expect(agentRows(emu)).toEqual(["web-ttl"]);
  expect(ttlTimers(emu, "web-ttl")).toHaveLength(1);
}

describe("agent-local check rows go with the catalog's check", () => {
  it("PUT /v1/catalog/deregister with the ServiceID: no row, no timer, nothing fires", async () => {
    const emu = await createStandin();
    await webWithTTL(emu);
    await put(emu, "/v1/catalog/deregister", { Node: await agentNode(emu), ServiceID: "web" });
    expect(agentRows(emu)).toEqual([]);
    expect(ttlTimers(emu, "web-ttl")).toEqual([]);
    expect(await writesWhileTTLsLapse(emu)).toBe(false);
    expect(JSON.parse((await req(emu, "/v1/agent/checks")).text)).toEqual({});
    expect(JSON.parse((await req(emu, "/v1/agent/self")).text).Stats.agent).toMatchObject({ checks: "0", check_ttls: "0", services: "0" });
  });

  it("a node check deregistered by CheckID, and one deleted by a txn", async () => {
    const emu = await createStandin();
    const node = await agentNode(emu);
    await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: "30s" });
    await put(emu, "/v1/agent/check/register", { Name: "mem", TTL: "30s" });
    expect(agentRows(emu)).toEqual(["disk", "mem"]);
    await put(emu, "/v1/catalog/deregister", { Node: node, CheckID: "disk" });
    expect(agentRows(emu)).toEqual(["mem"]);
    expect(ttlTimers(emu, "disk")).toEqual([]);
    const txn = await put(emu, "/v1/txn", [{ Check: { Verb: "delete", Check: { Node: node, CheckID: "mem" } } }]);
    expect(JSON.parse(txn.text).Errors).toBeNull();
    expect(agentRows(emu)).toEqual([]);
    expect(ttlTimers(emu, "mem")).toEqual([]);
    expect(await writesWhileTTLsLapse(emu)).toBe(false);
  });

  it("the agent node's removal through the catalog takes every row", async () => {
    const emu = await createStandin();
    await webWithTTL(emu);
    await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: "30s" });
    await put(emu, "/v1/catalog/deregister", { Node: await agentNode(emu) });
    expect(agentRows(emu)).toEqual([]);
    expect([...ttlTimers(emu, "web-ttl"), ...ttlTimers(emu, "disk")]).toEqual([]);
    expect(await writesWhileTTLsLapse(emu)).toBe(false);
  });

  it("a check of the same ID on another node leaves the agent's alone, and its TTL still lapses", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: "30s", Status: "passing" });
    await put(emu, "/v1/catalog/register", { Node: "other", Address: "10.0.0.9", Check: { CheckID: "disk", Name: "disk", Status: "passing" } });
    await put(emu, "/v1/catalog/deregister", { Node: "other", CheckID: "disk" });
    expect(agentRows(emu)).toEqual(["disk"]);
    expect(ttlTimers(emu, "disk")).toHaveLength(1);
    expect(await writesWhileTTLsLapse(emu)).toBe(true);
    expect(JSON.parse((await req(emu, "/v1/agent/checks")).text).disk).toMatchObject({ Status: "critical", Output: "TTL expired" });
  });
});
