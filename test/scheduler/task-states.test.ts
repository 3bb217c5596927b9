/**
 * Allocation TaskStates through HTTP: null until the client reports, then
 * Nomad's task events as allocations start, finish, fail and are stopped,
 * in both the full allocation and the list stub, and filterable.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const EVENT_KEYS = [
  "Details",
  "DiskLimit",
  "DisplayMessage",
  "DownloadError",
  "DriverError",
  "DriverMessage",
  "ExitCode",
  "FailedSibling",
  "FailsTask",
  "GenericSource",
  "KillError",
  "KillReason",
  "KillTimeout",
  "Message",
  "RestartReason",
  "SetupError",
  "Signal",
  "StartDelay",
  "TaskSignal",
  "TaskSignalReason",
  "Time",
  "Type",
  "ValidationError",
  "VaultError",
];

function job(id: string, opts: { type?: string; killTimeout?: number; restart?: Json } = {}): Json {
  const task: Json = { Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } };
  if (opts.killTimeout) task.KillTimeout = opts.killTimeout;
  const { KillTimeout: _kt, ...plain } = task;
  const group: Json = { Name: "web", Count: 1, Tasks: [task, { ...plain, Name: "sidecar" }] };
  if (opts.restart) group.RestartPolicy = opts.restart;
  return { ID: id, Type: opts.type ?? "service", Datacenters: ["dc1"], TaskGroups: [group] };
}

async function register(emu: Standin, body: Json): Promise<void> {
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: body }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function onlyAlloc(emu: Standin, jobId: string): Promise<{ full: Json; stub: Json; raw: string }> {
  const [stub] = (await (await emu.scheduler.request(`/v1/job/${jobId}/allocations`)).json()) as Json[];
  const res = await emu.scheduler.request(`/v1/allocation/${stub!.ID}`);
  const raw = await res.text();
  return { full: JSON.parse(raw), stub: stub!, raw };
}

const kinds = (state: Json) => state.Events.map((e: Json) => `${e.Type}: ${e.DisplayMessage}`);

describe("allocation TaskStates", () => {
  it("is null until the client reports, then each task's state with Received, Task Setup and Started", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("100ms"); // the evaluation runs (timing.evalProcess)
    // Placed by the scheduler, not yet started by the client: Nomad's nil map.
    const placed = await onlyAlloc(emu, "web");
    expect(placed.full.ClientStatus).toBe("pending");
    expect(placed.full).not.toHaveProperty("TaskStates"); // the full Allocation omits the nil map (omitempty)
    expect(placed.stub.TaskStates).toBeNull();

    emu.clock.advance("5s");
    const { full, stub, raw } = await onlyAlloc(emu, "web");
    expect(full.ClientStatus).toBe("running");
    expect(Object.keys(full.TaskStates)).toEqual(["server", "sidecar"]);
    const server = full.TaskStates.server;
    expect(Object.keys(server)).toEqual(["Events", "Failed", "FinishedAt", "LastRestart", "Restarts", "StartedAt", "State", "TaskHandle"]);
    expect(server).toMatchObject({ State: "running", Failed: false, Restarts: 0, LastRestart: null, FinishedAt: null, TaskHandle: null });
    expect(kinds(server)).toEqual(["Received: Task received by client", "Task Setup: Building Task Directory", "Started: Task started by client"]);
    expect(Object.keys(server.Events[0])).toEqual(EVENT_KEYS);
    expect(server.Events[1]).toMatchObject({ Message: "Building Task Directory", Details: { message: "Building Task Directory" }, ExitCode: 0, FailsTask: false });
    // Received when placed (the allocation's CreateTime), Started now; event times are unix nanoseconds.
    const events = [...raw.matchAll(/"Time":(\d+)/g)].map((m) => m[1]);
    const createTime = raw.match(/"CreateTime":(\d+),"DeploymentID"/)![1];
    expect(events.slice(0, 2)).toEqual([createTime, createTime]);
    // Started a second after placement (timing.allocStart).
    expect(events[2]).toBe(String(BigInt(Date.parse("2026-01-01T00:00:01.100Z")) * 1_000_000n));
    expect(server.StartedAt).toBe("2026-01-01T00:00:01.1Z");
    expect(stub.TaskStates).toEqual(full.TaskStates);
  });

  it("a stopped job's tasks are killed: Killing with the task's kill timeout, Terminated, Killed", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { killTimeout: 12_000_000_000 }));
    emu.clock.advance("5s");
    expect((await emu.scheduler.request("/v1/job/web", { method: "DELETE" })).status).toBe(200);
    emu.clock.advance("1s");
    const { full } = await onlyAlloc(emu, "web");
    const server = full.TaskStates.server;
    expect(server).toMatchObject({ State: "dead", Failed: false });
    expect(server.FinishedAt).not.toBeNull();
    expect(kinds(server).slice(3)).toEqual(["Killing: Sent interrupt. Waiting 12s before force killing", "Terminated: Exit Code: 0", "Killed: Task successfully killed"]);
    expect(server.Events[3]).toMatchObject({ KillTimeout: 12_000_000_000, Details: { kill_timeout: "12s" } });
    expect(server.Events[4].Details).toEqual({ exit_code: "0", signal: "0", oom_killed: "false" });
    // The sidecar used the 5 s default.
    expect(full.TaskStates.sidecar.Events[3].DisplayMessage).toBe("Sent interrupt. Waiting 5s before force killing");
  });

  it("a failed allocation's tasks: Terminated with exit code 1, then Not Restarting in the restart policy's words", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { restart: { Attempts: 3, Interval: 600_000_000_000, Delay: 1_000_000_000, Mode: "fail" } }));
    emu.clock.advance("5s");
    const before = await onlyAlloc(emu, "web");
    const res = await emu.scheduler.request(`/_standin/scheduler/allocations/${before.full.ID}`, { method: "POST", body: JSON.stringify({ ClientStatus: "failed" }) });
    expect(res.status).toBe(200);
    const after = (await (await emu.scheduler.request(`/v1/allocation/${before.full.ID}`)).json()) as Json;
    const server = after.TaskStates.server;
    expect(server).toMatchObject({ State: "dead", Failed: true });
    const reason = 'Exceeded allowed attempts 3 in interval 10m0s and mode is "fail"';
    expect(kinds(server).slice(3)).toEqual(["Terminated: Exit Code: 1", `Not Restarting: ${reason}`]);
    expect(server.Events[4]).toMatchObject({ FailsTask: true, RestartReason: reason, Details: { restart_reason: reason, fails_task: "true" } });
  });

  it("a batch job's tasks exit 0 and are dead, not failed", async () => {
    const emu = await createStandin();
    await register(emu, job("report", { type: "batch" }));
    emu.clock.advance("1m");
    const { full } = await onlyAlloc(emu, "report");
    expect(full.ClientStatus).toBe("complete");
    expect(full.TaskStates.server).toMatchObject({ State: "dead", Failed: false });
    expect(kinds(full.TaskStates.server).at(-1)).toBe("Terminated: Exit Code: 0");
  });

  it("filters see the task states (the full allocation, as Nomad filters)", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    await register(emu, { ...job("late"), TaskGroups: [{ ...job("late").TaskGroups[0], Count: 1 }] });
    emu.clock.advance("5s");
    await emu.scheduler.request("/v1/job/late", { method: "DELETE" });
    emu.clock.advance("1s");
    const running = (await (await emu.scheduler.request(`/v1/allocations?filter=${encodeURIComponent('TaskStates.server.State == "running"')}`)).json()) as Json[];
    expect(running.map((a) => a.JobID)).toEqual(["web"]);
    const killed = (await (await emu.scheduler.request(`/v1/allocations?filter=${encodeURIComponent('TaskStates["sidecar"].State == "dead"')}`)).json()) as Json[];
    expect(killed.map((a) => a.JobID)).toEqual(["late"]);
  });

  it("survives snapshot and restore byte for byte", async () => {
    const emu = await createStandin();
    await register(emu, job("web"));
    emu.clock.advance("5s");
    const { raw } = await onlyAlloc(emu, "web");
    const snapshot = await (await emu.scheduler.request("/_standin/snapshot")).text();
    await emu.scheduler.request("/_standin/reset", { method: "POST" });
    await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: snapshot });
    expect((await onlyAlloc(emu, "web")).raw).toBe(raw);
  });
});
