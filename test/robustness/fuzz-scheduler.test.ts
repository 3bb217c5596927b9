/**
 * Bad-input fuzzing of the scheduler (Nomad's HTTP API): the regression tests for what the
 * fuzzing found, each with its shrunk input.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

// ---- regressions: inputs the fuzz properties found, as shrunk, one test per fix -------------------

describe("scheduler: regressions found by fuzzing", () => {
  const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  const call = async (emu: Standin, method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await emu.scheduler.request(path, { method, body, headers });
    return { status: res.status, text: await res.text() };
  };
  const task = { Name: "t", Driver: "docker", Config: { image: "x", args: [] as unknown[] }, Resources: { CPU: 10, MemoryMB: 10 } };
  const job = (id: string, extra: Record<string, unknown> = {}) => ({ ID: id, Type: "service", Datacenters: ["dc1"], TaskGroups: [{ Name: "web", Count: 1, Tasks: [task] }], ...extra });
  // {"Job":{"TaskGroups":[{"Tasks":[{"Config":{"args": — the args value starts seven levels down.
  const withArgs = (args: string) => JSON.stringify({ Job: job("deep") }).replace('"args":[]', `"args":${args}`);

  it("a body nested deeper than 1000 levels is refused with Go's decoder text before anything walks it", async () => {
    // Shrunk: PUT /v1/namespace {"Name":"team","Description":"d","Quota":1e999,"Meta":{"a":[[[…1]]]}} was stored, and every
    // stateHash() after it overflowed the stack.
    const emu = await createStandin();
    const before = emu.stateHash();
    expect(await call(emu, "PUT", "/v1/namespace", `{"Name":"team","Meta":{"a":${nested(1001)}}}`)).toEqual({ status: 400, text: "invalid character '[' exceeded max depth" });
    expect(await call(emu, "PUT", "/v1/jobs", withArgs(nested(994)))).toEqual({ status: 400, text: "invalid character '[' exceeded max depth" });
    expect(await call(emu, "PUT", "/v1/jobs", `{"Job":${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}`)).toEqual({ status: 400, text: "invalid character '{' exceeded max depth" });
    expect(emu.stateHash()).toBe(before);
  });

  it("a job nested exactly 1000 levels deep still registers, reads back, plans and hashes", async () => {
    const emu = await createStandin();
    const registered = await call(emu, "PUT", "/v1/jobs", withArgs(nested(993)));
    expect(registered.status, registered.text).toBe(200);
    expect((await call(emu, "GET", "/v1/job/deep")).status).toBe(200);
    expect((await call(emu, "PUT", "/v1/job/deep/plan", withArgs(nested(992, "2")).replace('{"Job"', '{"Diff":true,"Job"'))).status).toBe(200);
    expect(emu.stateHash()).toMatch(/^[0-9a-f]{64}$/);
    emu.restore(emu.snapshot());
  });
});
