/**
 * The agent's checks through HTTP and the control API: register
 * (validation order and texts), the TTL updates, TTL expiry on the virtual
 * clock (Consul's output texts, sessions bound to the check invalidated),
 * the DeregisterCriticalServiceAfter reaper (1 m minimum, 30 s ticks), the
 * check fault and the check/service conditions, and agent/self's counts.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type Standin } from "../../src/emulator.js";

const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const put = (emu: Standin, path: string, body?: unknown) =>
  req(emu, path, { method: "PUT", ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });
const checks = async (emu: Standin) => JSON.parse((await req(emu, "/v1/agent/checks")).text) as Record<string, Record<string, unknown>>;

describe("PUT /v1/agent/check/register", () => {
  it("validates in Consul's order with its texts, changing nothing when refused", async () => {
    const emu = await createStandin();
    const cases: [unknown, number, string][] = [
      ["{", 400, "Request decode failed: unexpected EOF"],
      [{ Name: "x", TTL: "10s", CheckID: "y" }, 400, 'Request decode failed: json: unknown field "CheckID"'],
      [{ TTL: "10s" }, 400, "Missing check name"],
      [{ Name: "x", TTL: "10s", Status: "maintenance" }, 400, "Bad check status"],
      [{ Name: "x" }, 400, "Invalid check: TTL must be > 0 for TTL checks"],
      [{ Name: "x", AliasService: "web", TTL: "10s" }, 400, "Invalid check: TTL must be not be set for Alias checks"],
      [{ Name: "x", TTL: "10s", FailuresBeforeWarning: 2 }, 400, "Invalid check: FailuresBeforeWarning can't be higher than FailuresBeforeCritical"],
      [{ Name: "x", TTL: "10s", ServiceID: "nope" }, 404, 'ServiceID "nope" does not exist'],
    ];
    const before = emu.stateHash();
    for (const [body, status, text] of cases) {
      const res = await put(emu, "/v1/agent/check/register", body);
      expect({ body, status: res.status, text: res.text }).toEqual({ body, status, text });
    }
    expect(emu.stateHash()).toBe(before);
  });

  it("registers a node check (ID defaults to Name, durations as Go prints them) and a service's check", async () => {
    const emu = await createStandin();
    expect((await put(emu, "/v1/agent/check/register", { Name: "disk", TTL: 15_000_000_000, Notes: "n" })).status).toBe(200);
    await put(emu, "/v1/agent/service/register", { Name: "web", Tags: ["v1"] });
    await put(emu, "/v1/agent/check/register", { ID: "web-http", Name: "http", ServiceID: "web", HTTP: "http://x", Interval: "10s", Status: "passing" });
    const all = await checks(emu);
    expect(all.disk).toMatchObject({ CheckID: "disk", Name: "disk", Status: "critical", Notes: "n", ServiceID: "", ServiceTags: [], Type: "ttl", Interval: "0s", Timeout: "0s" });
    expect(all["web-http"]).toMatchObject({ ServiceID: "web", ServiceName: "web", ServiceTags: ["v1"], Status: "passing", Type: "http", Interval: "10s" });
    // serfHealth is the catalog's, not the agent's.
    expect(Object.keys(all)).toEqual(["disk", "web-http"]);
    const self = JSON.parse((await req(emu, "/v1/agent/self")).text);
    expect(self.Stats.agent).toMatchObject({ checks: "2", check_ttls: "1", services: "1" });
  });
});

describe("TTL updates", () => {
  it("pass/warn/fail set the status and the note as output; update takes a strict body", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/check/register", { Name: "ttl", TTL: "30s" });
    expect((await put(emu, "/v1/agent/check/pass/ttl?note=all%20good")).status).toBe(200);
    expect((await checks(emu)).ttl).toMatchObject({ Status: "passing", Output: "all good" });
    await put(emu, "/v1/agent/check/warn/ttl");
    expect((await checks(emu)).ttl).toMatchObject({ Status: "warning", Output: "" });
    await put(emu, "/v1/agent/check/update/ttl", { Status: "critical", Output: "down" });
    expect((await checks(emu)).ttl).toMatchObject({ Status: "critical", Output: "down" });

    expect(await put(emu, "/v1/agent/check/update/ttl", { Status: "ok" })).toMatchObject({ status: 400, text: "Invalid check status: 'ok'" });
    expect(await put(emu, "/v1/agent/check/update/ttl", {})).toMatchObject({ status: 400, text: "Invalid check status: ''" });
    expect(await put(emu, "/v1/agent/check/update/ttl", { Status: "passing", Note: "x" })).toMatchObject({
      status: 400,
      text: 'Request decode failed: json: unknown field "Note"',
    });
    const unknown = await put(emu, "/v1/agent/check/pass/nope");
    expect(unknown).toMatchObject({ status: 404, text: 'Unknown check ID "nope". Ensure that the check ID is passed, not the check name.' });
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "http", HTTP: "http://x", Interval: "5s" } });
    expect(await put(emu, "/v1/agent/check/pass/http")).toMatchObject({ status: 500, text: 'CheckID "http" does not have associated TTL' });
    expect((await req(emu, "/v1/agent/check/pass/ttl")).status).toBe(405);
  });

  it("caps the output at 4096 bytes, saying how much was captured", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/check/register", { Name: "ttl", TTL: "30s" });
    await put(emu, "/v1/agent/check/update/ttl", { Status: "passing", Output: "x".repeat(5000) });
    expect((await checks(emu)).ttl!.Output).toBe(`${"x".repeat(4096)} ... (captured 4096 of 5000 bytes)`);
  });

  it("a TTL not renewed in time turns critical with Consul's text; an update restarts it; bound sessions are invalidated", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "web-ttl", TTL: "10s", Status: "passing" } });
    const session = JSON.parse((await put(emu, "/v1/session/create", { Name: "lock", ServiceChecks: [{ ID: "web-ttl" }], Checks: [] })).text).ID as string;
    emu.clock.advance("9s");
    await put(emu, "/v1/agent/check/pass/web-ttl?note=fine");
    emu.clock.advance("9s");
    expect((await checks(emu))["web-ttl"]).toMatchObject({ Status: "passing", Output: "fine" });
    expect((await req(emu, `/v1/session/info/${session}`)).text).not.toBe("[]");
    emu.clock.advance("2s");
    expect((await checks(emu))["web-ttl"]).toMatchObject({ Status: "critical", Output: "TTL expired (last output before timeout follows): fine" });
    expect((await req(emu, `/v1/session/info/${session}`)).text).toBe("[]");
    // The catalog (health of the agent's node) sees the same.
    const health = JSON.parse((await req(emu, "/v1/health/node/standin")).text) as { CheckID: string; Status: string }[];
    expect(health.find((c) => c.CheckID === "web-ttl")!.Status).toBe("critical");
  });

  it("says only 'TTL expired' when no update gave an output", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/check/register", { Name: "ttl", TTL: "10s", Status: "passing" });
    emu.clock.advance("10s");
    expect((await checks(emu)).ttl).toMatchObject({ Status: "critical", Output: "TTL expired" });
  });
});

describe("DeregisterCriticalServiceAfter", () => {
  it("removes the whole service once a check has been critical longer than the timeout (at least 1m), on the reaper's 30s ticks", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/service/register", {
      Name: "web",
      Checks: [
        { CheckID: "ttl", TTL: "10s", Status: "passing", DeregisterCriticalServiceAfter: "10s" },
        { CheckID: "other", TTL: "1h", Status: "passing" },
      ],
    });
    emu.clock.advance("10s"); // the TTL lapses: critical from here
    expect((await checks(emu)).ttl!.Status).toBe("critical");
    emu.clock.advance("60s"); // critical for exactly 1m: not longer than it
    expect(Object.keys(JSON.parse((await req(emu, "/v1/agent/services")).text))).toEqual(["web"]);
    expect(await emu.await({ service: { id: "web", gone: true } }, "31s")).toMatchObject({ met: true });
    expect((await req(emu, "/v1/agent/services")).text).toBe("{}");
    expect((await req(emu, "/v1/agent/checks")).text).toBe("{}");
  });

  it("forgets the critical time when the check passes again", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "ttl", TTL: "10m", DeregisterCriticalServiceAfter: "1m" } });
    emu.clock.advance("50s");
    await put(emu, "/v1/agent/check/pass/ttl");
    emu.clock.advance("20s");
    await put(emu, "/v1/agent/check/fail/ttl");
    emu.clock.advance("50s");
    expect(JSON.parse((await req(emu, "/v1/agent/services")).text)).toHaveProperty("web");
  });
});

describe("the control API on service checks", () => {
  it("sets a service check's status through POST /_standin/registry/checks, restarting its TTL", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "web-ttl", TTL: "10s" } });
    emu.clock.advance("8s");
    const res = await emu.registry.request("/_standin/registry/checks", { method: "POST", body: JSON.stringify({ CheckID: "web-ttl", Status: "passing", Output: "set" }) });
    expect(res.status).toBe(200);
    emu.clock.advance("8s");
    expect((await checks(emu))["web-ttl"]).toMatchObject({ Status: "passing", Output: "set" });
    expect((await req(emu, "/v1/agent/health/service/id/web")).status).toBe(200);
    emu.clock.advance("2s");
    expect((await checks(emu))["web-ttl"]).toMatchObject({ Status: "critical", Output: "TTL expired (last output before timeout follows): set" });
  });

  it("check-critical and check-passing work on a service check; the check and service conditions see them", async () => {
    const emu = await createStandin();
    await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "web-ttl", TTL: "1h", Status: "passing" } });
    expect(await emu.await({ service: { id: "web", health: "passing" } })).toMatchObject({ met: true });
    emu.act("check-critical", { check: "web-ttl" });
    expect(await emu.await({ check: { check: "web-ttl", status: "critical" }, service: { id: "web", health: "critical" } })).toMatchObject({ met: true });
    emu.act("check-passing", { check: "web-ttl" });
    expect((await checks(emu))["web-ttl"]!.Status).toBe("passing");
    await put(emu, "/v1/agent/check/deregister/web-ttl");
    expect(await emu.await({ check: { check: "web-ttl", gone: true } })).toMatchObject({ met: true });
  });
});

describe("determinism", () => {
  it("the same requests and clock moves give the same state hash, snapshot and restore included", async () => {
    const run = async () => {
      const emu = await createStandin();
      await put(emu, "/v1/agent/service/register", { Name: "web", Check: { CheckID: "t", TTL: "10s", DeregisterCriticalServiceAfter: "1m" } });
      emu.clock.advance("15s");
      return emu;
    };
    const a = await run();
    const b = await run();
    expect(a.stateHash()).toBe(b.stateHash());
    const snapshot = a.snapshot();
    a.clock.advance("2m");
    expect((await req(a, "/v1/agent/services")).text).toBe("{}");
    a.restore(snapshot);
    expect(JSON.parse((await req(a, "/v1/agent/services")).text)).toHaveProperty("web");
    a.clock.advance("2m");
    expect((await req(a, "/v1/agent/services")).text).toBe("{}");
  });
});
