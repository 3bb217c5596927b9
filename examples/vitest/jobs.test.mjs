// A Nomad job's deployment, driven by the virtual clock. `useStandin()` with no
// options shares the setup file's emulator (same STANDIN_FIXTURE) and hands back a
// handle for the clock.
import { useStandin } from "standin/vitest";
import { describe, expect, it } from "vitest";

const standin = useStandin();

const job = {
  ID: "web",
  Name: "web",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [
    {
      Name: "web",
      Count: 2,
      Tasks: [{ Name: "nginx", Driver: "docker", Config: { image: "nginx:1.27" } }],
    },
  ],
};

async function nomad(path, init) {
  const response = await fetch(`${process.env.NOMAD_ADDR}${path}`, init);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

describe("scheduler deployments on the virtual clock", () => {
  it("a registered job's deployment becomes successful as virtual time passes", async () => {
    const registered = await nomad("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job }) });
    expect(registered.EvalID).toBeTruthy();

    // Nothing moves until the clock does: step it until the deployment is done.
    let deployment;
    for (let second = 0; second < 300; second += 1) {
      standin.advance("1s");
      deployment = await nomad("/v1/job/web/deployment");
      if (deployment && deployment.Status !== "running") break;
    }
    expect(deployment.Status).toBe("successful");

    const allocations = await nomad("/v1/job/web/allocations");
    expect(allocations.map((a) => a.ClientStatus)).toEqual(["running", "running"]);
    // The fixture's extra client nodes: the two allocations land on two different nodes.
    expect(new Set(allocations.map((a) => a.NodeName)).size).toBe(2);
    expect(standin.emulator.clock.nowText()).not.toBe("2026-01-01T00:00:00Z");
  });

  it("starts from a clean state: no job from the previous test, clock back at the start", async () => {
    expect(await nomad("/v1/jobs")).toEqual([]);
    expect((await nomad("/v1/nodes")).map((n) => n.Name).sort()).toEqual(["client-1", "client-2", "standin"]);
    expect(standin.emulator.clock.nowText()).toBe("2026-01-01T00:00:00Z");
    expect(process.env.NOMAD_ADDR).toBe(standin.urls.scheduler);
  });
});
