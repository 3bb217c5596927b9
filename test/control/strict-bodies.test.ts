/**
 * Control bodies are validated strictly: a key the route does not take (a
 * misspelling, a wrong case) is a 400 naming it and changes nothing, instead
 * of a 200 that silently does nothing.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";

async function post(path: string, body: unknown) {
  const emu = await createStandin();
  const hash = emu.stateHash();
  const res = await emu.scheduler.request(path, { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { error?: string }, unchanged: emu.stateHash() === hash, emu };
}

describe("unknown keys in control bodies", () => {
  it.each([
    ["/_standin/scheduler/nodes/standin", { status: "down" }, "status: unknown key (this body takes Status, SchedulingEligibility, Drain)"],
    ["/_standin/registry/checks", { CheckID: "agentHealth", Status: "critical", node: "standin" }, "node: unknown key"],
    ["/_standin/clock/advance", { By: "10s" }, "By: unknown key"],
  ])("%s %j is a 400 naming the key and changes nothing", async (path, body, message) => {
    const r = await post(path, body);
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(message);
    expect(r.unchanged).toBe(true);
  });

  it("the right keys still work", async () => {
    const r = await post("/_standin/scheduler/nodes/standin", { Status: "down" });
    expect(r.status).toBe(200);
    const nodes = (await (await r.emu.scheduler.request("/v1/nodes")).json()) as Array<{ Status: string }>;
    expect(nodes[0]!.Status).toBe("down");
  });
});
