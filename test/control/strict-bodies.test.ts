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

describe("POST /_standin/clock/lock, /unlock, /next, /pause and /resume take no arguments", () => {
  it.each(["/_standin/clock/lock", "/_standin/clock/unlock"])("%s with a key is a 400 naming it and leaves the lock count alone", async (path) => {
    const emu = await createStandin();
    const send = (body?: string) => emu.scheduler.request(path, { method: "POST", ...(body === undefined ? {} : { body }) });
    await send();
    const res = await send(JSON.stringify({ count: 3 }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid body: count: unknown key (this body takes no keys)" });
    expect(((await (await emu.scheduler.request("/_standin/clock")).json()) as { locks: number }).locks).toBe(path.endsWith("/lock") ? 1 : 0);
  });

  it.each(["/_standin/clock/next", "/_standin/clock/pause", "/_standin/clock/resume"])("%s with a key is a 400 naming it and does not move the clock", async (path) => {
    const emu = await createStandin();
    // A session with a TTL leaves a timer for /next to jump to.
    expect((await emu.registry.request("/v1/session/create", { method: "PUT", body: JSON.stringify({ TTL: "10s" }) })).status).toBe(200);
    expect(((await (await emu.scheduler.request("/_standin/clock")).json()) as { pendingTimers: number }).pendingTimers).toBeGreaterThan(0);
    const before = await (await emu.scheduler.request("/_standin/clock")).text();
    const res = await emu.scheduler.request(path, { method: "POST", body: JSON.stringify({ by: "5s" }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid body: by: unknown key (this body takes no keys)" });
    expect(await (await emu.scheduler.request("/_standin/clock")).text()).toBe(before);
  });

  it("with no body or {}, it counts", async () => {
    const emu = await createStandin();
    expect(await (await emu.scheduler.request("/_standin/clock/lock", { method: "POST" })).json()).toEqual({ locks: 1 });
    expect(await (await emu.scheduler.request("/_standin/clock/lock", { method: "POST", body: "{}" })).json()).toEqual({ locks: 2 });
    expect(await (await emu.scheduler.request("/_standin/clock/unlock", { method: "POST", body: "{}" })).json()).toEqual({ locks: 1 });
  });
});

describe("errors about unknown keys name the first few and count the rest", () => {
  const manyKeys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`key${i}`, i]));

  it("a control body of 15,000 unknown keys answers a short error", async () => {
    const emu = await createStandin();
    const hash = emu.stateHash();
    const res = await emu.scheduler.request("/_standin/scheduler/nodes/standin", { method: "POST", body: JSON.stringify({ Status: "down", ...manyKeys(15_000) }) });
    expect(res.status).toBe(400);
    const takes = "unknown key (this body takes Status, SchedulingEligibility, Drain)";
    expect(await res.json()).toEqual({ error: `invalid body: key0: ${takes}; key1: ${takes}; key2: ${takes}; key3: ${takes}; key4: ${takes}; and 14995 more unknown keys` });
    expect(emu.stateHash()).toBe(hash);
  });

  it("a route that takes arguments refuses a body over 256 KiB with 413 before parsing it; documents may be larger", async () => {
    const emu = await createStandin();
    // One long value rather than 350,000 keys: spreading that many keys outlasted the timeout on a loaded machine.
    const body = JSON.stringify({ by: "1s", pad: "x".repeat(6_000_000) });
    expect(body.length).toBeGreaterThan(5_900_000);
    const res = await emu.scheduler.request("/_standin/clock/advance", { method: "POST", body });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "request body too large: POST /_standin/clock/advance takes at most 262144 bytes" });
    const fixture = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: JSON.stringify({ description: "x".repeat(2_000_000) }) });
    expect(fixture.status).toBe(200);
  });

  it("a fixture with 100,000 unknown keys lists five and counts the rest, over HTTP and in process", async () => {
    const emu = await createStandin();
    const hash = emu.stateHash();
    const services = Array.from({ length: 100_000 }, (_, i) => ({ Name: "web", [`key${i}`]: true }));
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: JSON.stringify({ registry: { services } }) });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(1_000);
    expect((JSON.parse(text) as { problems: string[] }).problems).toEqual([
      "registry.services[0].key0: unknown key",
      "registry.services[1].key1: unknown key",
      "registry.services[2].key2: unknown key",
      "registry.services[3].key3: unknown key",
      "registry.services[4].key4: unknown key",
      "and 99995 more unknown keys",
    ]);
    expect(emu.stateHash()).toBe(hash);
    await expect(createStandin({ fixture: { registry: { services: services.slice(0, 1_000) } } })).rejects.toThrow(/and 995 more unknown keys/);
  });

  it("other problems are listed up to 100, then counted", async () => {
    const emu = await createStandin();
    const nodes = Array.from({ length: 250 }, () => ({ Name: 5 }));
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: JSON.stringify({ scheduler: { nodes } }) });
    const body = (await res.json()) as { problems: string[] };
    expect(body.problems).toHaveLength(101);
    expect(body.problems[0]).toMatch(/^scheduler\.nodes\[0\]\.Name: Invalid type/);
    expect(body.problems[100]).toBe("and 150 more problems");
  });
});
