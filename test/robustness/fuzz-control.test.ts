/**
 * Bad-input fuzzing of the control API: the regression tests for what the
 * fuzzing found, each with its shrunk input.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

// ---- regressions: inputs the fuzz properties found, as shrunk, one test per fix -------------------

describe("control API: regressions found by fuzzing", () => {
  const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  const call = async (emu: Standin, method: string, path: string, body?: string) => {
    const res = await emu.scheduler.request(path, { method, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const task = { Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } };
  const job = (id: string, count: unknown = 1) => ({ ID: id, Type: "service", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Count: count, Tasks: [task] }] });

  it("a body nested deeper than 1000 levels is a 400 before anything walks it", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("web")] } } });
    const before = emu.stateHash();
    const refused = { status: 400, body: { error: "request body nests arrays and objects deeper than 1000 levels" } };
    // Shrunk: a snapshot whose rows held a value nested a few thousand levels deep answered 500 `internal error: Maximum
    // call stack size exceeded` (and once restored it before failing).
    const snapshot = JSON.stringify(emu.snapshot()).replace('"Datacenters":["dc1"]', `"Datacenters":${nested(1001, '"dc1"')}`);
    expect(await call(emu, "PUT", "/_standin/snapshot", snapshot)).toEqual(refused);
    // Shrunk: claims nested a few thousand levels deep made token minting overflow the stack.
    expect(await call(emu, "POST", "/_standin/echo/tokens", `{"scheme":"provider_jwt","claims":{"sub":${nested(1001, '"x"')}}}`)).toEqual(refused);
    expect(emu.stateHash()).toBe(before);
    // Within the limit, both work.
    const deepClaims = await call(emu, "POST", "/_standin/echo/tokens", `{"scheme":"provider_jwt","claims":{"deep":${nested(990)}}}`);
    expect(deepClaims.status).toBe(200);
    const restored = await call(emu, "PUT", "/_standin/snapshot", JSON.stringify(emu.snapshot()).replace('"Datacenters":["dc1"]', `"Datacenters":${nested(990, '"dc1"')}`));
    expect(restored.status).toBe(200);
    expect(emu.stateHash()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a reset whose fixture a service refuses is a 400 that changes nothing, start fixture included", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("web")] } } });
    const start = emu.stateHash();
    await emu.clock.advance("1m");
    const before = emu.stateHash();
    // Shrunk: each answered 500 `internal error: …` after the emulator had dropped its state and replaced its start fixture.
    const fixtures = [
      { registry: { acl: { tokens: [{ SecretID: "x", Rules: { key_prefix: { "0": "maybe" } } }] } } },
      { scheduler: { acl: { policies: [{ Name: "", Rules: "" }] } } },
      { registry: { sessions: [{ Node: ["node-a"] }] } },
      { scheduler: { jobs: [{ ...job("x"), Datacenters: 5 }] } },
    ];
    for (const fixture of fixtures) {
      const res = await call(emu, "POST", "/_standin/reset", JSON.stringify({ fixture }));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.problems).toEqual([expect.any(String)]);
      expect(emu.stateHash()).toBe(before);
    }
    expect((await call(emu, "POST", "/_standin/reset")).body.stateHash).toBe(start);
  });

  it("await within the longest Go duration answers 408 with what it waited (it was a 500 after moving the clock)", async () => {
    const emu = await createStandin();
    // Shrunk: within the longest Go duration rounds up to one millisecond more, which msToNanos refused: 500 after the clock had moved.
    const res = await call(emu, "POST", "/_standin/await", JSON.stringify({ until: { index: { above: 1000 } }, within: "2562047h47m16.854775807s" }));
    expect(res.status).toBe(408);
    expect(res.body.waited).toBe("2562047h47m16.854s");
    expect(res.body.now).toBe("2318-04-12T23:47:16.855Z");
  });

  it("a job-register action with a wrongly typed field is a 400 naming it (it was a 500)", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    // Shrunk: {"do":"job-register","job":{…,"TaskGroups":[{…,"Count":-63.2405077576376}]}} answered 500 `internal error: json: cannot unmarshal …`.
    const res = await call(emu, "POST", "/_standin/actions", JSON.stringify({ do: "job-register", job: job("web", -63.2405077576376) }));
    expect(res).toEqual({ status: 400, body: { error: "job-register: json: cannot unmarshal number -63.2405077576376 into Go struct field TaskGroup.Job.TaskGroups.Count of type int" } });
    expect(emu.stateHash()).toBe(before);
  });
});
