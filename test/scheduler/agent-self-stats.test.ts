/**
 * `GET /v1/agent/self`'s `stats`: a server agent's Agent.Stats (Nomad 1.9's
 * Server.Stats sections), every value a string as the api's
 * `map[string]map[string]string` decodes it; raft's indexes follow the state.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Stats = Record<string, Record<string, unknown>>;

let emu: Standin | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

async function stats(standin: Standin): Promise<Stats> {
  const res = await call(standin.scheduler, "GET", "/v1/agent/self");
  expect(res.status, res.text).toBe(200);
  return res.body.stats as Stats;
}

describe("GET /v1/agent/self stats", () => {
  it("has a server agent's sections, every value a string, led by this server", async () => {
    emu = await createStandin();
    const s = await stats(emu);
    expect(Object.keys(s).sort()).toEqual(["nomad", "raft", "runtime", "serf", "vault"]);
    for (const section of Object.values(s)) for (const value of Object.values(section)) expect(typeof value).toBe("string");
    expect(s.nomad).toEqual({ bootstrap: "true", known_regions: "1", leader: "true", leader_addr: "127.0.0.1:4647", server: "true" });
    expect(s.raft).toMatchObject({ state: "Leader", num_peers: "0", protocol_version: "3" });
    expect(s.serf).toMatchObject({ members: "1", failed: "0", left: "0" });
    expect(Object.keys(s.runtime!).sort()).toEqual(["arch", "cpu_count", "goroutines", "kernel.name", "max_procs", "version"]);
  });

  it("raft's indexes move with the state's writes", async () => {
    emu = await createStandin();
    const before = Number((await stats(emu)).raft!.commit_index);
    const job = { ID: "web", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }] };
    const reg = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job });
    expect(reg.status, reg.text).toBe(200);
    const after = (await stats(emu)).raft!;
    expect(Number(after.commit_index)).toBeGreaterThanOrEqual(Number(reg.body.JobModifyIndex));
    expect(Number(after.commit_index)).toBeGreaterThan(before);
    expect(after.applied_index).toBe(after.commit_index);
    expect(after.last_log_index).toBe(after.commit_index);
  });

  it("counts one server per region in the federation", async () => {
    emu = await createStandin({ fixture: { scheduler: { regions: { east: {}, west: {} } } } });
    const s = await stats(emu);
    expect(s.nomad!.known_regions).toBe("3");
    expect(s.serf!.members).toBe("3");
  });
});
