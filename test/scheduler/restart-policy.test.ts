/**
 * Restart policies through HTTP: a task that exits (the `task-fail` action)
 * is restarted in place by the client per its group's `restart` block, on
 * the virtual clock: the exact task events, Restarts / LastRestart, the
 * allocation pending through the delay, mode fail and mode delay once the
 * attempts in the interval are used up, the interval starting over, batch
 * tasks that exit 0, and the action's refusals.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const SECOND = 1_000_000_000;

function job(id: string, opts: { type?: string; restart?: Json; sidecar?: boolean; reschedule?: Json } = {}): Json {
  const task = (name: string): Json => ({ Name: name, Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } });
  const group: Json = { Name: "g", Count: 1, Tasks: opts.sidecar ? [task("app"), task("side")] : [task("app")] };
  if (opts.restart) group.RestartPolicy = opts.restart;
  if (opts.reschedule) group.ReschedulePolicy = opts.reschedule;
  return { ID: id, Type: opts.type ?? "service", Datacenters: ["dc1"], TaskGroups: [group] };
}

async function register(emu: Standin, body: Json): Promise<void> {
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: body }) });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function act(emu: Standin, body: Json): Promise<{ status: number; body: Json }> {
  const res = await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

async function allocs(emu: Standin, jobId: string): Promise<Json[]> {
  const stubs = (await (await emu.scheduler.request(`/v1/job/${jobId}/allocations`)).json()) as Json[];
  return stubs.sort((a, b) => a.CreateIndex - b.CreateIndex);
}

const events = (state: Json) => state.Events.map((e: Json) => `${e.Type}: ${e.DisplayMessage}`);

describe("restart policies", () => {
  it("restarts a failed service task after the delay, Restarting first, and fails it once the attempts are used up", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { sidecar: true })); // the service defaults: 2 attempts in 30m, 15s delay, mode fail
    emu.clock.advance("30s");
    const started = emu.clock.now();

    const first = await act(emu, { do: "task-fail", job: "web", task: "app" });
    expect(first.status).toBe(200);
    expect(first.body.result).toMatchObject({ ClientStatus: "pending", Tasks: { app: { State: "pending", Restarts: 1, Failed: false }, side: { State: "running" } } });
    let [alloc] = await allocs(emu, "web");
    expect(alloc!.ClientStatus).toBe("pending");
    expect(alloc!.ClientDescription).toBe("No tasks have started");
    const app = alloc!.TaskStates.app;
    expect(app).toMatchObject({ State: "pending", Restarts: 1, Failed: false, LastRestart: new Date(started).toISOString().replace(".000", "") });
    expect(events(app).slice(-2)).toEqual(["Terminated: Exit Code: 1", "Restarting: Task restarting in 15s"]);
    const restarting = app.Events.at(-1);
    expect(restarting).toMatchObject({
      RestartReason: "Restart within policy",
      StartDelay: 15 * SECOND,
      Details: { start_delay: String(15 * SECOND), restart_reason: "Restart within policy" },
    });

    // Exactly the delay later, not before, the task starts again and the allocation runs.
    emu.clock.advance("14999ms");
    expect((await allocs(emu, "web"))[0]!.TaskStates.app.State).toBe("pending");
    emu.clock.advance("1ms");
    [alloc] = await allocs(emu, "web");
    expect(alloc!.ClientStatus).toBe("running");
    expect(alloc!.TaskStates.app.State).toBe("running");
    expect(alloc!.TaskStates.app.StartedAt).toBe(new Date(started + 15_000).toISOString().replace(".000", ""));
    expect(events(alloc!.TaskStates.app).at(-1)).toBe("Started: Task started by client");

    await act(emu, { do: "task-fail", job: "web", task: "app" });
    emu.clock.advance("15s");
    const third = await act(emu, { do: "task-fail", job: "web", task: "app" });
    expect(third.body.result).toMatchObject({ ClientStatus: "failed", Tasks: { app: { State: "dead", Failed: true, Restarts: 2 }, side: { State: "dead", Failed: false } } });
    [alloc] = await allocs(emu, "web");
    expect(alloc!.ClientStatus).toBe("failed");
    expect(events(alloc!.TaskStates.app).slice(-2)).toEqual(["Terminated: Exit Code: 1", 'Not Restarting: Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"']);
    expect(alloc!.TaskStates.app.Events.at(-1)).toMatchObject({ FailsTask: true, Details: { fails_task: "true" } });
    // The sibling is killed, told why first; it is dead but not failed.
    expect(events(alloc!.TaskStates.side).slice(-4)).toEqual([
      'Sibling Task Failed: Task\'s sibling "app" failed',
      "Killing: Sent interrupt. Waiting 5s before force killing",
      "Terminated: Exit Code: 0",
      "Killed: Task successfully killed",
    ]);
    expect(alloc!.TaskStates.side.Events.at(-4)).toMatchObject({ FailedSibling: "app", Details: { failed_sibling: "app" } });
    expect(alloc!.TaskStates.side.Failed).toBe(false);
    const summary = (await (await emu.scheduler.request("/v1/job/web/summary")).json()) as Json;
    expect(summary.Summary.g).toMatchObject({ Failed: 1, Running: 0, Starting: 0 });
  });

  it("mode delay restarts the task when the interval ends once the attempts are used up", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { restart: { Attempts: 1, Interval: 60 * SECOND, Delay: 5 * SECOND, Mode: "delay" } }));
    emu.clock.advance("2s"); // placed at 100ms (the window starts when the client receives it), running at 1.1s
    await act(emu, { do: "task-fail", job: "web" });
    emu.clock.advance("5s");
    await act(emu, { do: "task-fail", job: "web" }); // at 7s: the second exit in the window that began at 100ms
    const [alloc] = await allocs(emu, "web");
    const last = alloc!.TaskStates.app.Events.at(-1);
    expect(`${last.Type}: ${last.DisplayMessage}`).toBe("Restarting: Exceeded allowed attempts, applying a delay - Task restarting in 53.1s");
    expect(last).toMatchObject({ RestartReason: "Exceeded allowed attempts, applying a delay", StartDelay: 53.1 * SECOND });
    expect(alloc!.TaskStates.app.Restarts).toBe(2);
    emu.clock.advance("53099ms");
    expect((await allocs(emu, "web"))[0]!.ClientStatus).toBe("pending");
    emu.clock.advance("1ms");
    expect((await allocs(emu, "web"))[0]!.ClientStatus).toBe("running");
  });

  it("counts exits per interval: an exit after the interval starts a new window", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { restart: { Attempts: 1, Interval: 10 * SECOND, Delay: 5 * SECOND, Mode: "fail" } }));
    emu.clock.advance("2s");
    await act(emu, { do: "task-fail", job: "web" });
    emu.clock.advance("20s"); // restarted at 7s; the window (from 100ms) ended at 10.1s
    const second = await act(emu, { do: "task-fail", job: "web" });
    expect(second.body.result.Tasks.app).toMatchObject({ State: "pending", Restarts: 2 });
    emu.clock.advance("5s");
    const third = await act(emu, { do: "task-fail", job: "web" }); // the second exit within the new window
    expect(third.body.result).toMatchObject({ ClientStatus: "failed", Tasks: { app: { State: "dead", Failed: true } } });
    expect(events((await allocs(emu, "web"))[0]!.TaskStates.app).at(-1)).toBe('Not Restarting: Exceeded allowed attempts 1 in interval 10s and mode is "fail"');
  });

  it("attempts 0 never restarts; a batch task that exits 0 ends and its allocation completes", async () => {
    const emu = await createStandin();
    await register(emu, job("once", { restart: { Attempts: 0, Interval: 60 * SECOND, Delay: 5 * SECOND, Mode: "fail" } }));
    await register(emu, job("report", { type: "batch", sidecar: true }));
    emu.clock.advance("2s");
    await act(emu, { do: "task-fail", job: "once" });
    const [once] = await allocs(emu, "once");
    expect(once!.ClientStatus).toBe("failed");
    expect(events(once!.TaskStates.app).at(-1)).toBe("Not Restarting: Policy allows no restarts");

    // The batch defaults (3 attempts in 24h): an exit 0 is no failure and is not restarted.
    const stored = (await (await emu.scheduler.request("/v1/job/report")).json()) as Json;
    expect(stored.TaskGroups[0].RestartPolicy).toEqual({ Attempts: 3, Interval: 24 * 3600 * SECOND, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false });
    const exit0 = await act(emu, { do: "task-fail", job: "report", task: "app", exitCode: 0 });
    expect(exit0.body.result).toMatchObject({ ClientStatus: "running", Tasks: { app: { State: "dead", Failed: false, Restarts: 0 }, side: { State: "running" } } });
    await act(emu, { do: "task-fail", job: "report", task: "side", exitCode: 0 });
    const [report] = await allocs(emu, "report");
    expect(report!.ClientStatus).toBe("complete");
    expect(events(report!.TaskStates.side).at(-1)).toBe("Terminated: Exit Code: 0");
    // A batch failure within the attempts restarts, as a service's does.
    await register(emu, job("crash", { type: "batch" }));
    emu.clock.advance("2s");
    const crash = await act(emu, { do: "task-fail", job: "crash", exitCode: 2 });
    expect(crash.body.result.Tasks.app).toMatchObject({ State: "pending", Restarts: 1 });
    expect(events((await allocs(emu, "crash"))[0]!.TaskStates.app).slice(-2)).toEqual(["Terminated: Exit Code: 2", "Restarting: Task restarting in 15s"]);
  });

  it("a restarting batch task runs its full time again after the restart", async () => {
    const emu = await createStandin();
    await register(emu, { ...job("run", { type: "batch" }), Meta: { "standin.batch_run": "10s" } });
    emu.clock.advance("5s"); // running since 1.1s
    await act(emu, { do: "task-fail", job: "run" });
    emu.clock.advance("15s"); // running again at 20s
    emu.clock.advance("9999ms");
    expect((await allocs(emu, "run"))[0]!.ClientStatus).toBe("running");
    emu.clock.advance("1ms");
    expect((await allocs(emu, "run"))[0]!.ClientStatus).toBe("complete");
  });

  it("refuses tasks that are not running, unknown tasks and allocations that are not running", async () => {
    const emu = await createStandin();
    await register(emu, job("web", { sidecar: true }));
    emu.clock.advance("200ms");
    const pending = await act(emu, { do: "task-fail", job: "web" });
    expect(pending.status).toBe(409);
    expect(pending.body.error).toMatch(/is pending, not running/);
    emu.clock.advance("2s");
    const unknown = await act(emu, { do: "task-fail", job: "web", task: "nope" });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/has no task "nope"/);
    await act(emu, { do: "task-fail", job: "web", task: "app" });
    const [alloc] = await allocs(emu, "web");
    const again = await act(emu, { do: "task-fail", alloc: alloc!.ID, task: "side" });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/is pending, not running/);
  });

  it("a pending restart survives a snapshot and restore, and the same steps give the same state hash", async () => {
    const run = async () => {
      const emu = await createStandin();
      await register(emu, job("web"));
      emu.clock.advance("30s");
      await act(emu, { do: "task-fail", job: "web" });
      return emu;
    };
    const emu = await run();
    const snapshot = emu.snapshot();
    const hash = emu.stateHash();
    expect((await run()).stateHash()).toBe(hash);
    const restarted = emu.clock.advance("15s").filter((f) => f.kind === "scheduler.task-restart");
    expect(restarted).toHaveLength(1);
    const after = emu.stateHash();
    emu.restore(snapshot);
    expect(emu.stateHash()).toBe(hash);
    expect((await allocs(emu, "web"))[0]!.ClientStatus).toBe("pending");
    expect(emu.clock.advance("15s").filter((f) => f.kind === "scheduler.task-restart")).toHaveLength(1);
    expect((await allocs(emu, "web"))[0]!.ClientStatus).toBe("running");
    expect(emu.stateHash()).toBe(after);
  });
});
