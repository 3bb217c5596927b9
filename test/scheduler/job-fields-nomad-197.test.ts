/**
 * A registered job keeps the fields Nomad 1.9.7's server structs have and
 * `POST /v1/jobs/parse` sends (found by the wire-shape oracle): the task's
 * `Resources.SecretsMB`, a service's `Weights` and an identity's `Filepath`,
 * in the job, its versions, and the job embedded in its allocations. The
 * check's `Advertise` is api-only (structs.ServiceCheck has none): a server
 * never writes it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Json = Record<string, any>;

let emu: Standin | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

const HCL = `job "web" {
  datacenters = ["dc1"]
  group "g" {
    service {
      name     = "web"
      provider = "nomad"
      weights {
        passing = 5
      }
      check {
        type      = "tcp"
        port      = 8080
        interval  = "10s"
        timeout   = "2s"
        advertise = "ignored"
      }
    }
    task "t" {
      driver = "docker"
      config {
        image = "nginx:1"
      }
      identity {
        file     = true
        filepath = "local/jwt"
      }
      resources {
        cpu     = 100
        memory  = 128
        secrets = 16
      }
    }
  }
}`;

async function register(job: Json): Promise<Standin> {
  const standin = await createStandin();
  const reg = await call(standin.scheduler, "PUT", "/v1/jobs", { Job: job });
  expect(reg.status, reg.text).toBe(200);
  standin.clock.advance("100ms");
  return standin;
}

/** The fields under test, read from a job as any route returns it. */
function fields(job: Json): Json {
  const group = job.TaskGroups[0];
  const task = group.Tasks[0];
  return {
    secrets: task.Resources.SecretsMB,
    weights: group.Services[0].Weights,
    filepath: task.Identity.Filepath,
    checkKeys: Object.keys(group.Services[0].Checks[0]),
  };
}

describe("registration keeps what Nomad 1.9.7's structs keep", () => {
  it("a job parsed from HCL and registered answers SecretsMB, Weights and Filepath everywhere it is embedded", async () => {
    const parseHost = await createStandin();
    const parsed = await call(parseHost.scheduler, "POST", "/v1/jobs/parse", { JobHCL: HCL, Canonicalize: true });
    parseHost.close();
    expect(parsed.status, parsed.text).toBe(200);
    emu = await register(parsed.body);
    const job = (await call(emu.scheduler, "GET", "/v1/job/web")).body as Json;
    const expected = { secrets: 16, weights: { Passing: 5, Warning: 1 }, filepath: "local/jwt" };
    expect(fields(job)).toMatchObject(expected);
    expect(fields(job).checkKeys).not.toContain("Advertise");
    const versions = (await call(emu.scheduler, "GET", "/v1/job/web/versions")).body as Json;
    expect(fields(versions.Versions[0])).toMatchObject(expected);
    const [stub] = (await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
    const alloc = (await call(emu.scheduler, "GET", `/v1/allocation/${stub!.ID}`)).body as Json;
    expect(fields(alloc.Job)).toMatchObject(expected);
    const onNode = (await call(emu.scheduler, "GET", `/v1/node/${alloc.NodeID}/allocations`)).body as Json[];
    expect(fields(onNode[0]!.Job)).toMatchObject(expected);
  });

  it("a JSON job gets Nomad's defaults: SecretsMB 0, Weights null (or raised to 1), Filepath empty", async () => {
    emu = await register({
      ID: "web",
      Datacenters: ["dc1"],
      TaskGroups: [
        {
          Name: "g",
          Services: [
            { Name: "a", Provider: "nomad", Weights: { Passing: 0, Warning: 3 } },
            { Name: "b", Provider: "nomad" },
          ],
          Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx:1" } }],
        },
      ],
    });
    const job = (await call(emu.scheduler, "GET", "/v1/job/web")).body as Json;
    const group = job.TaskGroups[0];
    expect(group.Tasks[0].Resources).toHaveProperty("SecretsMB", 0);
    expect(group.Tasks[0].Identity).toHaveProperty("Filepath", "");
    expect(group.Services.map((s: Json) => s.Weights)).toEqual([{ Passing: 1, Warning: 3 }, null]);
  });

  it("a change of secrets or weights makes a new job version", async () => {
    const base = (secrets: number) => ({
      ID: "web",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 128, SecretsMB: secrets } }] }],
    });
    emu = await register(base(8));
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: base(8) })).status).toBe(200);
    expect(((await call(emu.scheduler, "GET", "/v1/job/web")).body as Json).Version).toBe(0);
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: base(32) })).status).toBe(200);
    const job = (await call(emu.scheduler, "GET", "/v1/job/web")).body as Json;
    expect(job.Version).toBe(1);
    expect(job.TaskGroups[0].Tasks[0].Resources.SecretsMB).toBe(32);
  });

  it("a plan diffs the secrets (a Resources field) and the service's weights (a Weights object)", async () => {
    const base = (secrets: number, passing: number) => ({
      ID: "web",
      Datacenters: ["dc1"],
      TaskGroups: [
        {
          Name: "g",
          Services: [{ Name: "web", Provider: "nomad", Weights: { Passing: passing, Warning: 1 } }],
          Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 128, SecretsMB: secrets } }],
        },
      ],
    });
    emu = await register(base(8, 2));
    const plan = await call(emu.scheduler, "PUT", "/v1/job/web/plan", { Job: base(16, 3), Diff: true });
    expect(plan.status, plan.text).toBe(200);
    const group = plan.body.Diff.TaskGroups[0] as Json;
    const weights = (group.Objects as Json[]).find((o) => o.Name === "Service")?.Objects.find((o: Json) => o.Name === "Weights");
    expect(weights?.Fields).toContainEqual(expect.objectContaining({ Name: "Passing", Old: "2", New: "3", Type: "Edited" }));
    const resources = (group.Tasks[0].Objects as Json[]).find((o) => o.Name === "Resources");
    expect(resources?.Fields).toContainEqual(expect.objectContaining({ Name: "SecretsMB", Old: "8", New: "16", Type: "Edited" }));
  });

  it("counts the secrets tmpfs as allocated memory, in the allocation and in what fits on a node", async () => {
    const job = (memory: number, secrets: number) => ({
      ID: "web",
      Datacenters: ["*"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: memory, SecretsMB: secrets } }] }],
    });
    emu = await register(job(128, 64));
    const [stub] = (await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
    const alloc = (await call(emu.scheduler, "GET", `/v1/allocation/${stub!.ID}`)).body as Json;
    expect(alloc.AllocatedResources.Tasks.t.Memory.MemoryMB).toBe(192);
    // The same ask fits a node without secrets and not with them: probe the largest ask that places.
    const nodes = (await call(emu.scheduler, "GET", "/v1/nodes?resources=true")).body as Json[];
    const largest = Math.max(...nodes.map((n) => Number(n.NodeResources.Memory.MemoryMB)));
    const placed = async (memory: number, secrets: number): Promise<boolean> => {
      const fresh = await register(job(memory, secrets));
      const allocs = (await call(fresh.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
      fresh.close();
      return allocs.length === 1;
    };
    let memory = largest;
    while (memory > 10 && !(await placed(memory, 0))) memory -= 64;
    expect(memory).toBeGreaterThan(10);
    // memory + 64 did not place (or is beyond the largest node); memory with 64 of secrets asks as much.
    expect(await placed(memory, 64)).toBe(false);
    expect(await placed(memory - 64, 64)).toBe(true);
  });

  it("refuses secrets above the task's memory or below zero, with Nomad's words, and registers nothing", async () => {
    emu = await createStandin();
    const job = (secrets: number) => ({
      ID: "web",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 128, SecretsMB: secrets } }] }],
    });
    const above = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job(400) });
    expect(above.status).toBe(500);
    expect(above.text).toContain("SecretsMB value (400) cannot be larger than MemoryMB value (128)");
    const negative = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job(-1) });
    expect(negative.status).toBe(500);
    expect(negative.text).toContain("SecretsMB value (-1) cannot be negative");
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(404);
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job(128) })).status).toBe(200);
  });

  it("refuses a filepath without file = true, with Nomad's words, and registers nothing", async () => {
    emu = await createStandin();
    const job = {
      ID: "web",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx:1" }, Identity: { Filepath: "local/jwt" } }] }],
    };
    const res = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job });
    expect(res.status).toBe(500);
    expect(res.text).toContain("file parameter must be true in order to specify filepath");
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(404);
  });
});
