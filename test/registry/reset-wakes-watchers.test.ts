/**
 * A reset, a snapshot restore or a reset with a new fixture replaces the
 * whole state, and its index goes backwards. Parked blocking queries answer
 * at once with the new state and the new (lower) index, on both services:
 * before, they re-parked until the new state climbed past the old index or
 * their `wait` ran out (up to 10 minutes), so a watcher kept the previous
 * test's state. No timing is asserted: each query would otherwise hang past
 * the test's own timeout (`wait=5m` is real time too).
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { send, type TextAnswer } from "../support/call.js";
import { untilParked } from "../support/parked.js";
import { smallJob } from "../support/jobs.js";

const consulIndex = (res: TextAnswer) => Number(res.headers.get("x-consul-index"));
const nomadIndex = (res: TextAnswer) => Number(res.headers.get("x-nomad-index"));

async function registerServices(emu: Standin, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const res = await send(emu.registry, "/v1/catalog/register", {
      method: "PUT",
      body: JSON.stringify({ Node: "web-1", Address: "10.0.0.9", Service: { Service: name, Port: 80 } }),
    });
    expect(res.status, res.text).toBe(200);
  }
}

async function control(emu: Standin, method: string, path: string, body?: string): Promise<void> {
  const res = await send(emu.registry, path, { method, body });
  expect(res.status, res.text).toBe(200);
}

describe("a parked registry query when the state is replaced", () => {
  it.each<[string, (emu: Standin, snapshot: unknown) => Promise<void>]>([
    ["POST /_standin/reset", (emu) => control(emu, "POST", "/_standin/reset")],
    ["PUT /_standin/snapshot", (emu, snapshot) => control(emu, "PUT", "/_standin/snapshot", JSON.stringify(snapshot))],
    ["POST /_standin/reset with a fixture", (emu) => control(emu, "POST", "/_standin/reset", JSON.stringify({ fixture: { registry: { kv: [{ Key: "k", Value: "v" }] } } }))],
  ])("answers at once after %s, with the new state and its lower index", async (_label, replace) => {
    const emu = await createStandin();
    const snapshot = emu.snapshot();
    await registerServices(emu, ["a", "b", "c", "d", "e", "f"]);
    const before = await send(emu.registry, "/v1/catalog/services");
    expect(Object.keys(JSON.parse(before.text))).toEqual(expect.arrayContaining(["a", "f"]));
    const index = consulIndex(before);
    const parked = send(emu.registry, `/v1/catalog/services?index=${index}&wait=5m`);
    const parkedHealth = send(emu.registry, `/v1/health/service/a?index=${consulIndex(await send(emu.registry, "/v1/health/service/a"))}&wait=5m`);
    await untilParked(emu, 2);

    await replace(emu, snapshot);
    const answer = await parked;
    expect(answer.status).toBe(200);
    expect(consulIndex(answer)).toBeLessThan(index);
    expect(Object.keys(JSON.parse(answer.text))).not.toContain("a");
    const health = await parkedHealth;
    expect(health.status).toBe(200);
    expect(JSON.parse(health.text)).toEqual([]);
    expect(emu.watchers.parked).toBe(0);
  });

  it("a query parked after the reset, at the new index, waits for the next write as usual", async () => {
    const emu = await createStandin();
    await registerServices(emu, ["a", "b"]);
    await control(emu, "POST", "/_standin/reset");
    const now = consulIndex(await send(emu.registry, "/v1/catalog/services"));
    const parked = send(emu.registry, `/v1/catalog/services?index=${now}&wait=5m`);
    await untilParked(emu, 1);
    await registerServices(emu, ["late"]);
    const answer = await parked;
    expect(consulIndex(answer)).toBeGreaterThan(now);
    expect(Object.keys(JSON.parse(answer.text))).toContain("late");
  });
});

describe("a parked scheduler query when the state is replaced", () => {
  it("answers at once after POST /_standin/reset, with no jobs and the lower index", async () => {
    const emu = await createStandin();
    for (const id of ["one", "two", "three"]) {
      const res = await send(emu.scheduler, "/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: smallJob(id) }) });
      expect(res.status, res.text).toBe(200);
    }
    const before = await send(emu.scheduler, "/v1/jobs");
    expect(JSON.parse(before.text)).toHaveLength(3);
    const index = nomadIndex(before);
    const parked = send(emu.scheduler, `/v1/jobs?index=${index}&wait=5m`);
    await untilParked(emu, 1);

    const res = await send(emu.scheduler, "/_standin/reset", { method: "POST" });
    expect(res.status, res.text).toBe(200);
    const answer = await parked;
    expect(answer.status).toBe(200);
    expect(nomadIndex(answer)).toBeLessThan(index);
    expect(JSON.parse(answer.text)).toEqual([]);
  });
});
