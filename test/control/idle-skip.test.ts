/**
 * Idle time skipping (`--clock auto`): when every open request is a parked
 * blocking query, the clock jumps to the next due timer; a lock counter
 * holds skipping off.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const job = {
  ID: "web",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  Update: { MaxParallel: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000 },
};

/** A few turns of the event loop: long enough for any pending skip to happen. */
const settle = async (turns = 20) => {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
};

async function control(emu: Standin, path: string, body?: unknown): Promise<Json> {
  const res = await emu.scheduler.request(`/_standin${path}`, { method: body === undefined ? "GET" : "POST", body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as Json;
}

async function register(emu: Standin): Promise<number> {
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job }) });
  return Number(res.headers.get("X-Nomad-Index"));
}

describe("idle time skipping", () => {
  it("a parked blocking query makes the clock jump from timer to timer until its answer changes", async () => {
    const emu = await createStandin({ clock: { mode: "auto" } });
    const index = await register(emu);
    const start = emu.clock.now();
    // Wait for the job's deployment to change: the eval, placement, start and health timers are skipped through.
    let deployment: Json = {};
    for (let seen = index; deployment.Status !== "successful"; ) {
      const res = await emu.scheduler.request(`/v1/job/web/deployment?index=${seen}&wait=5m`);
      seen = Number(res.headers.get("X-Nomad-Index"));
      deployment = (await res.json()) as Json;
    }
    expect(deployment.Status).toBe("successful");
    const waited = emu.clock.now() - start;
    expect(waited).toBeGreaterThanOrEqual(10_000); // at least min_healthy_time went by, virtually
    expect(waited).toBeLessThan(60_000);
    const status = await control(emu, "/clock");
    expect(status.mode).toBe("auto");
    expect(status.skips).toBeGreaterThan(0);
    expect(((await control(emu, "/events?type=clock.auto-skip")) as Json).events.length).toBe(status.skips);
  });

  it("a query with nothing to wait for ends at its virtual deadline, at once", async () => {
    const emu = await createStandin({ clock: { mode: "auto" } });
    const index = emu.index;
    const before = emu.clock.now();
    const res = await emu.scheduler.request(`/v1/jobs?index=${index}&wait=2m`);
    expect(res.status).toBe(200);
    expect(Number(res.headers.get("X-Nomad-Index"))).toBeLessThanOrEqual(index); // nothing changed
    // The deadline is 2m plus the seeded jitter (up to wait/16).
    const waited = emu.clock.now() - before;
    expect(waited).toBeGreaterThanOrEqual(120_000);
    expect(waited).toBeLessThanOrEqual(120_000 + 7_500);
  });

  it("does not skip while a lock is held, nor in manual mode, nor with no parked query", async () => {
    const emu = await createStandin({ clock: { mode: "auto" } });
    await register(emu);
    const before = emu.clock.now();
    await settle();
    expect(emu.clock.now()).toBe(before); // nothing parked: time stands still
    expect(await control(emu, "/clock/lock", {})).toEqual({ locks: 1 });
    const answer = emu.scheduler.request(`/v1/job/web/deployment?index=${emu.index}&wait=5m`);
    await settle();
    expect(emu.clock.now()).toBe(before);
    expect(await control(emu, "/clock/unlock", {})).toEqual({ locks: 0 });
    const res = await answer;
    expect(res.status).toBe(200);
    expect(emu.clock.now()).toBeGreaterThan(before);
    expect((await emu.scheduler.request("/_standin/clock/unlock", { method: "POST" })).status).toBe(409);

    const manual = await createStandin();
    await manual.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job }) });
    const parked = manual.scheduler.request(`/v1/jobs?index=${manual.index}&wait=5m`);
    await settle();
    expect(manual.clock.now()).toBe(Date.parse("2026-01-01T00:00:00Z"));
    manual.clock.advance("1s");
    expect((await parked).status).toBe(200);
  });

  it("the control switch turns it on and off; reset clears the locks", async () => {
    const emu = await createStandin();
    expect((await control(emu, "/clock/auto", { enabled: true })).mode).toBe("auto");
    await control(emu, "/clock/lock", {});
    await emu.reset();
    expect((await control(emu, "/clock")).locks).toBe(0);
    expect((await control(emu, "/clock/auto", { enabled: false })).mode).toBe("manual");
    expect((await emu.scheduler.request("/_standin/clock/auto", { method: "POST", body: "{}" })).status).toBe(400);
  });

  it("a session's TTL passes while a client long-polls it (registry)", async () => {
    const emu = await createStandin({ clock: { mode: "auto" } });
    const created = (await (await emu.registry.request("/v1/session/create", { method: "PUT", body: JSON.stringify({ TTL: "30s" }) })).json()) as Json;
    let info: Json[] = [{}];
    let index = 0;
    const start = emu.clock.now();
    while (info.length > 0) {
      const res = await emu.registry.request(`/v1/session/info/${created.ID}?index=${index}&wait=10m`);
      index = Number(res.headers.get("X-Consul-Index"));
      info = (await res.json()) as Json[];
    }
    // Consul keeps a TTL session up to twice its TTL.
    expect(emu.clock.now() - start).toBe(60_000);
  });
});
