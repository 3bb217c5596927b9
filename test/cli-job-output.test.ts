/**
 * `job plan`'s and `job run`'s text from the emulator's own answers, in
 * process: the diff of a plan laid out as Nomad's command/job_plan.go lays it
 * out (markers, the alignment of fields under a longer marker, object blocks
 * and their closing brace), and the deployment block of the run monitor.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../src/emulator.js";
import { formatDeployment } from "../src/cli/job/monitor.js";
import { formatPlan, type PlanAnswer } from "../src/cli/job/plan-output.js";
import { call } from "./support/call.js";

const job = (image: string, meta?: Record<string, string>) => ({
  ID: "web",
  Datacenters: ["dc1"],
  ...(meta ? { Meta: meta } : {}),
  TaskGroups: [{ Name: "web", Count: 2, Tasks: [{ Name: "nginx", Driver: "docker", Config: { image }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
});

const CONTEXT = { runArgs: "", path: "web.nomad.hcl", nowMs: 0, parameterized: false };

describe("job plan's text", () => {
  it("an edited job: job fields under the +/- marker's width, the task's Config as an object block", async () => {
    const emu = await createStandin();
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job("nginx:1.27") })).status).toBe(200);
    emu.clock.advance("1s");
    const plan = await call(emu.scheduler, "PUT", "/v1/job/web/plan", { Job: job("nginx:1.28", { team: "web" }), Diff: true });
    expect(plan.status, plan.text).toBe(200);
    const { text, exitCode } = formatPlan(plan.body as PlanAnswer, CONTEXT);
    expect(exitCode).toBe(1);
    expect(text.split("\nScheduler dry-run:")[0]).toBe(
      [
        '+/- Job: "web"',
        '+   Meta[team]: "web"',
        '+/- Task Group: "web" (1 create/destroy update, 1 ignore)',
        '  +/- Task: "nginx" (forces create/destroy update)',
        "    +/- Config {",
        '      +/- image: "nginx:1.27" => "nginx:1.28"',
        "        }",
        "",
      ].join("\n"),
    );
  });

  it("no change: no markers, exit 0", async () => {
    const emu = await createStandin();
    await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job("nginx:1.27") });
    emu.clock.advance("1s");
    const plan = await call(emu.scheduler, "PUT", "/v1/job/web/plan", { Job: job("nginx:1.27"), Diff: true });
    const { text, exitCode } = formatPlan(plan.body as PlanAnswer, CONTEXT);
    expect(exitCode).toBe(0);
    expect(text).toMatch(/^Job: "web"\nTask Group: "web" \(2 ignore\)\n {2}Task: "nginx"\n\nScheduler dry-run:\n- All tasks successfully allocated\.\n\nJob Modify Index: \d+\n/);
  });
});

describe("job run's deployment block", () => {
  it("shows the canary columns only when a group has canaries, and the progress deadline when one is set", () => {
    const text = formatDeployment({
      ID: "60081e33-0000-0000-0000-000000000000",
      JobID: "web",
      JobVersion: 1,
      Status: "running",
      StatusDescription: "Deployment is running but requires manual promotion",
      TaskGroups: {
        web: {
          DesiredTotal: 3,
          DesiredCanaries: 1,
          Promoted: false,
          PlacedAllocs: 1,
          HealthyAllocs: 0,
          UnhealthyAllocs: 0,
          ProgressDeadline: 600_000_000_000,
          RequireProgressBy: "2026-01-01T00:10:00Z",
        },
        api: { DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: 1, UnhealthyAllocs: 0, ProgressDeadline: 0, RequireProgressBy: null },
      },
    });
    expect(text).toBe(
      [
        "ID          = 60081e33",
        "Job ID      = web",
        "Job Version = 1",
        "Status      = running",
        "Description = Deployment is running but requires manual promotion",
        "",
        "Deployed",
        "Task Group  Promoted  Desired  Canaries  Placed  Healthy  Unhealthy  Progress Deadline",
        "api         N/A       1        0         1       1        0          N/A",
        "web         false     3        1         1       0        0          2026-01-01T00:10:00Z",
      ].join("\n"),
    );
  });
});
