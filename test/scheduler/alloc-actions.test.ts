/**
 * The client's allocation actions through HTTP: restart (running tasks, one
 * task, all tasks) with Nomad's task events and counters, signal with its
 * Signaling event, stats from the tasks' resources, their errors and the
 * alloc-lifecycle / read-job capabilities, and the alloc-restart action.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const MANAGEMENT = "99999999-9999-9999-9999-999999999999";

function job(): Json {
  const task = (name: string, cpu: number, memoryMB: number) => ({ Name: name, Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: cpu, MemoryMB: memoryMB } });
  return { ID: "web", Datacenters: ["dc1"], TaskGroups: [{ Name: "web", Count: 1, Tasks: [task("server", 200, 256), task("sidecar", 100, 64)] }] };
}

async function started(fixture: Json = {}): Promise<{ emu: Standin; alloc: string }> {
  const emu = await createStandin({ fixture: { scheduler: { jobs: [job()], ...fixture } } });
  emu.clock.advance("5s");
  const [stub] = (await (await emu.scheduler.request("/v1/job/web/allocations", { headers: { "X-Nomad-Token": MANAGEMENT } })).json()) as Json[];
  return { emu, alloc: stub!.ID };
}

async function call(emu: Standin, method: string, path: string, body?: string, token = MANAGEMENT): Promise<{ status: number; body: string }> {
  const res = await emu.scheduler.request(path, { method, body, headers: { "X-Nomad-Token": token } });
  return { status: res.status, body: await res.text() };
}

async function taskStates(emu: Standin, alloc: string): Promise<Json> {
  return ((await (await emu.scheduler.request(`/v1/allocation/${alloc}`, { headers: { "X-Nomad-Token": MANAGEMENT } })).json()) as Json).TaskStates;
}

const kinds = (state: Json) => state.Events.map((e: Json) => `${e.Type}: ${e.DisplayMessage}`);

describe("POST /v1/client/allocation/:id/restart", () => {
  it("restarts the running tasks: Restart Signaled, Terminated, Restarting in 0s, Started; Restarts and LastRestart count it", async () => {
    const { emu, alloc } = await started();
    emu.clock.advance("10s");
    const before = (await emu.scheduler.request(`/v1/allocation/${alloc}`)).headers.get("x-nomad-index");
    expect(await call(emu, "POST", `/v1/client/allocation/${alloc}/restart`, "")).toEqual({ status: 200, body: '{"Index":0}' });
    const states = await taskStates(emu, alloc);
    for (const name of ["server", "sidecar"]) {
      const state = states[name];
      expect(state).toMatchObject({ State: "running", Restarts: 1, LastRestart: "2026-01-01T00:00:15Z", StartedAt: "2026-01-01T00:00:15Z", Failed: false });
      expect(kinds(state).slice(3)).toEqual([
        "Restart Signaled: User requested running tasks to restart",
        "Terminated: Exit Code: 0",
        "Restarting: Task restarting in 0s",
        "Started: Task started by client",
      ]);
      expect(state.Events[3]).toMatchObject({ RestartReason: "User requested running tasks to restart", Details: { restart_reason: "User requested running tasks to restart" } });
      expect(state.Events[5]).toMatchObject({ StartDelay: 0, RestartReason: "", Details: { start_delay: "0", restart_reason: "" } });
    }
    // The client's update is a write: the allocation's index moves on.
    const after = (await emu.scheduler.request(`/v1/allocation/${alloc}`)).headers.get("x-nomad-index");
    expect(Number(after)).toBeGreaterThan(Number(before));
  });

  it("TaskName restarts that task only; AllTasks every task, with their reasons", async () => {
    const { emu, alloc } = await started();
    expect((await call(emu, "PUT", `/v1/client/allocation/${alloc}/restart`, JSON.stringify({ TaskName: "sidecar" }))).status).toBe(200);
    let states = await taskStates(emu, alloc);
    expect([states.server.Restarts, states.sidecar.Restarts]).toEqual([0, 1]);
    expect(states.sidecar.Events[3].DisplayMessage).toBe("User requested task to restart");
    expect((await call(emu, "GET", `/v1/client/allocation/${alloc}/restart`, undefined)).status).toBe(200); // no method check
    expect((await call(emu, "POST", `/v1/client/allocation/${alloc}/restart`, JSON.stringify({ AllTasks: true }))).status).toBe(200);
    states = await taskStates(emu, alloc);
    expect([states.server.Restarts, states.sidecar.Restarts]).toEqual([2, 3]);
    expect(states.server.Events.at(-4).DisplayMessage).toBe("User requested all tasks to restart");
    // Ten events kept at most.
    expect(states.sidecar.Events).toHaveLength(10);
  });

  it("answers Nomad's errors and changes nothing", async () => {
    const { emu, alloc } = await started();
    const hash = emu.stateHash();
    const restart = (body: string) => call(emu, "POST", `/v1/client/allocation/${alloc}/restart`, body);
    expect(await restart(JSON.stringify({ TaskName: "server", AllTasks: true }))).toEqual({ status: 500, body: "task name cannot be set when restarting all tasks" });
    expect(await restart(JSON.stringify({ TaskName: "nope" }))).toEqual({ status: 500, body: "Could not find task runner for task: nope" });
    expect(await restart(JSON.stringify({ TaskName: 5 }))).toEqual({ status: 500, body: "json: cannot unmarshal number into Go struct field .TaskName of type string" });
    expect((await restart("{")).status).toBe(500);
    expect(await call(emu, "POST", "/v1/client/allocation/5d0e8a4c-0000-0000-0000-000000000000/restart", "")).toEqual({
      status: 404,
      body: 'Unknown allocation "5d0e8a4c-0000-0000-0000-000000000000"',
    });
    expect(await call(emu, "POST", `/v1/client/allocation/${alloc}/restart/x`, "")).toEqual({ status: 404, body: "resource not found" });
    expect(emu.stateHash()).toBe(hash);

    // A stopped allocation: its tasks are dead, and it should not run.
    expect((await call(emu, "DELETE", "/v1/job/web")).status).toBe(200);
    emu.clock.advance("1s");
    expect(await restart("")).toEqual({ status: 500, body: "restart of an alloc that should not run" });
    expect(await restart(JSON.stringify({ AllTasks: true }))).toEqual({ status: 500, body: "restart of an alloc that should not run" });
    expect(await restart(JSON.stringify({ TaskName: "server" }))).toEqual({ status: 500, body: "Task not running" });
  });

  it("the alloc-restart action does what the route does", async () => {
    const { emu, alloc } = await started();
    const res = await call(emu, "POST", "/_standin/actions", JSON.stringify({ do: "alloc-restart", job: "web", task: "server" }));
    expect(res.status, res.body).toBe(200);
    const states = await taskStates(emu, alloc);
    expect([states.server.Restarts, states.sidecar.Restarts]).toEqual([1, 0]);
    expect(kinds(states.server).at(-4)).toBe("Restart Signaled: User requested task to restart");
    const refused = await call(emu, "POST", "/_standin/actions", JSON.stringify({ do: "alloc-restart", alloc, task: "nope" }));
    expect(refused.status).toBe(409);
    expect(refused.body).toContain("Could not find task runner for task: nope");
  });
});

describe("POST /v1/client/allocation/:id/signal", () => {
  it("adds a Signaling event (Task being sent a signal, the signal in Details) to the task, or to every task", async () => {
    const { emu, alloc } = await started();
    expect(await call(emu, "POST", `/v1/client/allocation/${alloc}/signal`, JSON.stringify({ Task: "server", Signal: "SIGHUP" }))).toEqual({ status: 200, body: '{"Index":0}' });
    let states = await taskStates(emu, alloc);
    expect(kinds(states.server).at(-1)).toBe("Signaling: Task being sent a signal");
    expect(states.server.Events.at(-1).Details).toEqual({ signal: "SIGHUP" });
    expect(states.server.State).toBe("running");
    expect(kinds(states.sidecar).at(-1)).toBe("Started: Task started by client");
    expect((await call(emu, "PUT", `/v1/client/allocation/${alloc}/signal`, JSON.stringify({ Signal: "SIGUSR1" }))).status).toBe(200);
    states = await taskStates(emu, alloc);
    expect(states.sidecar.Events.at(-1).Details).toEqual({ signal: "SIGUSR1" });
    expect(states.server.Events.at(-1).Details).toEqual({ signal: "SIGUSR1" });
  });

  it("answers Nomad's errors", async () => {
    const { emu, alloc } = await started();
    const signal = (body: string | undefined, method = "POST") => call(emu, method, `/v1/client/allocation/${alloc}/signal`, body);
    expect(await signal(undefined, "GET")).toEqual({ status: 405, body: "Invalid method" });
    expect(await signal(JSON.stringify({ Task: "nope" }))).toEqual({ status: 500, body: "Task not found" });
    expect(await signal("")).toEqual({ status: 400, body: "Failed to decode body: Request body is empty" });
    expect(await call(emu, "POST", "/v1/client/allocation/5d0e8a4c-0000-0000-0000-000000000000/signal", "{}")).toEqual({
      status: 404,
      body: 'Unknown allocation "5d0e8a4c-0000-0000-0000-000000000000"',
    });
    expect((await call(emu, "DELETE", "/v1/job/web")).status).toBe(200);
    emu.clock.advance("1s");
    expect(await signal(JSON.stringify({ Task: "server" }))).toEqual({ status: 500, body: "Task not running" });
    expect(await signal("{}")).toEqual({
      status: 500,
      body: "2 errors occurred:\n\t* Failed to signal task: server, err: Task not running\n\t* Failed to signal task: sidecar, err: Task not running\n\n",
    });
  });
});

describe("GET /v1/client/allocation/:id/stats", () => {
  it("reports each running task's usage from its resources, their sum, and the virtual clock's timestamp", async () => {
    const { emu, alloc } = await started();
    const res = await call(emu, "GET", `/v1/client/allocation/${alloc}/stats`);
    expect(res.status).toBe(200);
    const stats = JSON.parse(res.body) as Json;
    const ts = String(BigInt(Date.parse("2026-01-01T00:00:05Z")) * 1_000_000n);
    expect(res.body).toContain(`"Timestamp":${ts}`);
    expect(Object.keys(stats)).toEqual(["ResourceUsage", "Tasks", "Timestamp"]);
    expect(Object.keys(stats.Tasks)).toEqual(["server", "sidecar"]);
    expect(Object.keys(stats.Tasks.server)).toEqual(["Pids", "ResourceUsage", "Timestamp"]);
    const server = stats.Tasks.server.ResourceUsage;
    expect(Object.keys(server.MemoryStats)).toEqual(["Cache", "KernelMaxUsage", "KernelUsage", "MappedFile", "MaxUsage", "Measured", "RSS", "Swap", "Usage"]);
    expect(server.MemoryStats).toMatchObject({ RSS: Math.floor((256 * 1048576 * 2) / 5), Cache: 16 * 1048576 });
    expect(server.CpuStats).toMatchObject({ TotalTicks: 10, Percent: 0.5 });
    expect(server.DeviceStats).toBeNull();
    const sidecar = stats.Tasks.sidecar.ResourceUsage;
    expect(stats.ResourceUsage.MemoryStats.RSS).toBe(server.MemoryStats.RSS + sidecar.MemoryStats.RSS);
    expect(stats.ResourceUsage.CpuStats.TotalTicks).toBe(15);
    expect(stats.ResourceUsage.DeviceStats).toEqual([]);
    // Deterministic: the same instant answers the same bytes.
    expect((await call(emu, "GET", `/v1/client/allocation/${alloc}/stats`)).body).toBe(res.body);

    const one = JSON.parse((await call(emu, "GET", `/v1/client/allocation/${alloc}/stats?task=sidecar`)).body) as Json;
    expect(Object.keys(one.Tasks)).toEqual(["sidecar"]);
    expect(one.ResourceUsage.CpuStats.TotalTicks).toBe(5);
    const none = JSON.parse((await call(emu, "GET", `/v1/client/allocation/${alloc}/stats?task=nope`)).body) as Json;
    expect(none).toMatchObject({ Tasks: {}, Timestamp: 0 });
    expect(none.ResourceUsage.MemoryStats.Measured).toBeNull();
    expect((await call(emu, "GET", "/v1/client/allocation/5d0e8a4c-0000-0000-0000-000000000000/stats")).status).toBe(404);
  });
});

describe("PUT /v1/allocation/:id/stop", () => {
  it("marks the allocation to migrate (NoShutdownDelay with no_shutdown_delay=true), replaces it, and its tasks can no longer be restarted", async () => {
    const { emu, alloc } = await started();
    expect(await call(emu, "PUT", `/v1/allocation/${alloc}/stop?no_shutdown_delay=maybe`)).toEqual({
      status: 500,
      body: 'no_shutdown_delay value is not a boolean: strconv.ParseBool: parsing "maybe": invalid syntax',
    });
    expect(await call(emu, "PUT", "/v1/allocation/5d0e8a4c-0000-0000-0000-000000000000/stop")).toEqual({ status: 404, body: "allocation not found" });
    const stop = await call(emu, "PUT", `/v1/allocation/${alloc}/stop?no_shutdown_delay=true`);
    expect(stop.status).toBe(200);
    expect(Object.keys(JSON.parse(stop.body))).toEqual(["EvalID", "Index"]);
    emu.clock.advance("5s");
    const stopped = (await (await emu.scheduler.request(`/v1/allocation/${alloc}`)).json()) as Json;
    expect(stopped).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc is being migrated", DesiredTransition: { Migrate: true, NoShutdownDelay: true } });
    expect(stopped.NextAllocation).toBeTruthy();
    expect(await call(emu, "POST", `/v1/client/allocation/${alloc}/restart`, "")).toEqual({ status: 500, body: "restart of an alloc that should not run" });
    expect((await call(emu, "POST", `/v1/client/allocation/${stopped.NextAllocation}/restart`, "")).status).toBe(200);
  });
});

describe("capabilities", () => {
  it("restart and signal need alloc-lifecycle, stats read-job, in the allocation's namespace", async () => {
    const policy = (name: string, caps: string[]) => ({ Name: name, Rules: JSON.stringify({ namespace: { default: { capabilities: caps } } }) });
    const READER = "11111111-1111-1111-1111-111111111111";
    const OPERATOR = "22222222-2222-2222-2222-222222222222";
    const { emu, alloc } = await started({
      acl: {
        enabled: true,
        policies: [policy("reader", ["read-job"]), policy("operator", ["alloc-lifecycle"])],
        tokens: [
          { AccessorID: "a1", SecretID: READER, Type: "client", Policies: ["reader"] },
          { AccessorID: "a2", SecretID: OPERATOR, Type: "client", Policies: ["operator"] },
          { AccessorID: "a9", SecretID: MANAGEMENT, Type: "management" },
        ],
      },
    });
    const denied = { status: 403, body: "Permission denied" };
    expect(await call(emu, "POST", `/v1/client/allocation/${alloc}/restart`, "", READER)).toEqual(denied);
    expect(await call(emu, "POST", `/v1/client/allocation/${alloc}/signal`, "{}", READER)).toEqual(denied);
    expect(await call(emu, "GET", `/v1/client/allocation/${alloc}/stats`, undefined, OPERATOR)).toEqual(denied);
    expect((await call(emu, "POST", `/v1/client/allocation/${alloc}/restart`, "", OPERATOR)).status).toBe(200);
    expect((await call(emu, "POST", `/v1/client/allocation/${alloc}/signal`, "{}", OPERATOR)).status).toBe(200);
    expect((await call(emu, "GET", `/v1/client/allocation/${alloc}/stats`, undefined, READER)).status).toBe(200);
  });
});
