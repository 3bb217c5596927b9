/**
 * Placement constraints with the `regexp` operand use Go's regexp (RE2), as
 * Nomad's checkRegexpMatch does: `(?i)` flags work, the match is unanchored,
 * and a pattern Go cannot compile (a look-around) makes the node infeasible.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Json = Record<string, any>;

async function placed(pattern: string): Promise<{ running: number; eval: Json }> {
  const emu = await createStandin();
  const job = {
    ID: "web",
    Type: "service",
    Datacenters: ["dc1"],
    Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: pattern, Operand: "regexp" }],
    TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  };
  const res = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job });
  expect(res.status, res.text).toBe(200);
  emu.clock.advance("1m");
  const allocs = (await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
  return { running: allocs.filter((a) => a.ClientStatus === "running").length, eval: (await call(emu.scheduler, "GET", `/v1/evaluation/${res.body.EvalID}`)).body };
}

describe("regexp constraints (RE2)", () => {
  it.each([
    ["(?i)LINUX", 1],
    ["^lin", 1],
    ["nux", 1], // unanchored, as Go's MatchString
    ["^windows$", 0],
    ["lin(?=ux)", 0], // a look-ahead does not compile in Go: the node is infeasible
  ])("%s places %i allocation(s) on the linux node", async (pattern, running) => {
    const result = await placed(pattern);
    expect(result.running).toBe(running);
    if (running === 0) expect(result.eval.FailedTGAllocs).toBeDefined();
  });
});
