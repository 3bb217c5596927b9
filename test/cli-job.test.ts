/**
 * `standin job run` and `standin job plan`: an HCL2 job file from the command
 * line, run as child processes against one shared `standin start` (reset
 * before each test). The job is parsed by the emulator, registered or
 * planned, and the output is Nomad's; what was registered is read back over
 * the HTTP API. Time moves only on the virtual clock (run waits for its
 * evaluation by awaiting it in virtual time).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, resetCli, runCli, sharedCli } from "./support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "standin-job-"));

function jobFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** The job file docs/cli.md shows, relative to the repository (the CLI runs there). */
const WEB = "test/jobs/web.nomad.hcl";

const ID = /[0-9a-f]{8}/.source;
const TIME = /2026-01-01T\d\d:\d\d:\d\dZ/.source;

describe("standin job run and job plan", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const emulator = sharedCli();
  const url = () => ["--url", emulator().urls.scheduler!];
  const scheduler = async (path: string) => (await fetch(`${emulator().urls.scheduler}${path}`)).json() as Promise<any>;
  beforeEach(() => resetCli(emulator()), CLI_TEST_TIMEOUT_MS);

  it("run registers the file's job and prints the evaluation, its allocations and the deployment as nomad job run does", async () => {
    const run = await runCli(["job", "run", WEB, ...url()]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const lines = run.stdout.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^==> 2026-01-01T00:00:00Z: Monitoring evaluation "${ID}"$`));
    expect(lines[1]).toBe('    2026-01-01T00:00:00Z: Evaluation triggered by job "web"');
    expect(run.stdout).toMatch(new RegExp(`^    ${TIME}: Evaluation within deployment: "${ID}"$`, "m"));
    expect(run.stdout.match(new RegExp(`^    ${TIME}: Allocation "${ID}" created: node "${ID}", group "web"$`, "gm"))).toHaveLength(2);
    expect(run.stdout).toMatch(new RegExp(`^    ${TIME}: Evaluation status changed: "pending" -> "complete"$`, "m"));
    expect(run.stdout).toMatch(new RegExp(`^==> ${TIME}: Evaluation "${ID}" finished with status "complete"$`, "m"));
    expect(run.stdout).toMatch(new RegExp(`^==> ${TIME}: Monitoring deployment "${ID}"$`, "m"));
    // The deployment as it stands: the clock moved only as far as the evaluation needed.
    expect(run.stdout).toMatch(/^ {4}Job ID {6}= web$/m);
    expect(run.stdout).toMatch(/^ {4}Status {6}= running$/m);
    expect(run.stdout).toMatch(/^ {4}Task Group {2}Desired {2}Placed {2}Healthy {2}Unhealthy {2}Progress Deadline$/m);
    expect(run.stdout).toMatch(new RegExp(`^    web {9}2 {8}2 {7}0 {8}0 {10}${TIME}$`, "m"));

    const job = await scheduler("/v1/job/web");
    expect(job.TaskGroups[0].Count).toBe(2);
    expect(job.TaskGroups[0].Tasks[0].Config).toEqual({ image: "nginx:1.27" });
    const allocs = (await scheduler("/v1/job/web/allocations")) as unknown[];
    expect(allocs).toHaveLength(2);
  });

  it("run --detach prints the evaluation's ID and leaves the clock alone", async () => {
    const run = await runCli(["job", "run", "--detach", WEB, ...url()]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const match = /^Job registration successful\nEvaluation ID: ([0-9a-f-]{36})\n$/.exec(run.stdout);
    expect(match, run.stdout).not.toBeNull();
    const evaluation = await scheduler(`/v1/evaluation/${match![1]}`);
    expect(evaluation.Status).toBe("pending");
    expect((await scheduler("/_standin/clock")).now).toBe("2026-01-01T00:00:00Z");
  });

  it("--var and --var-file set the file's variables (a --var wins over the file)", async () => {
    const vars = jobFile("prod.vars.hcl", 'tag = "1.25-alpine"\ncount = 1\n');
    const run = await runCli(["job", "run", "--detach", WEB, "--var-file", vars, "--var", "count=3", ...url()]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const job = await scheduler("/v1/job/web");
    expect(job.TaskGroups[0].Count).toBe(3);
    expect(job.TaskGroups[0].Tasks[0].Config.image).toBe("nginx:1.25-alpine");
  });

  it("NOMAD_VAR_* environment entries set variables below --var-file and --var; an undeclared one is no error", async () => {
    const env = { ...process.env, NOMAD_VAR_count: "4", NOMAD_VAR_tag: "1.24", NOMAD_VAR_undeclared: "x", "NOMAD_VAR_not a name": "y" };
    const fromEnv = await runCli(["job", "run", "--detach", WEB, ...url()], env);
    expect(fromEnv.stderr).toBe("");
    expect(fromEnv.code).toBe(0);
    let job = await scheduler("/v1/job/web");
    expect(job.TaskGroups[0].Count).toBe(4);
    expect(job.TaskGroups[0].Tasks[0].Config.image).toBe("nginx:1.24");

    const vars = jobFile("env.vars.hcl", 'tag = "1.25-alpine"\n');
    const overridden = await runCli(["job", "run", "--detach", WEB, "--var-file", vars, "--var", "count=3", ...url()], env);
    expect(overridden.stderr).toBe("");
    expect(overridden.code).toBe(0);
    job = await scheduler("/v1/job/web");
    expect(job.TaskGroups[0].Count).toBe(3);
    expect(job.TaskGroups[0].Tasks[0].Config.image).toBe("nginx:1.25-alpine");
  });

  it("plan of a new job shows it added and exits 1; after run the same file plans no changes and exits 0", async () => {
    const added = await runCli(["job", "plan", WEB, ...url()]);
    expect(added.stderr).toBe("");
    expect(added.code).toBe(1);
    expect(added.stdout).toBe(
      [
        '+ Job: "web"',
        '+ Task Group: "web" (2 create)',
        '  + Task: "nginx" (forces create)',
        "",
        "Scheduler dry-run:",
        "- All tasks successfully allocated.",
        "",
        "Job Modify Index: 0",
        "To submit the job with version verification run:",
        "",
        `standin job run --check-index 0 ${WEB}`,
        "",
        "When running the job with the check-index flag, the job will only be run if the",
        "job modify index given matches the server-side version. If the index has",
        "changed, another user has modified the job and the plan's results are",
        "potentially invalid.",
        "",
      ].join("\n"),
    );

    expect((await runCli(["job", "run", WEB, ...url()])).code).toBe(0);
    const same = await runCli(["job", "plan", WEB, ...url()]);
    expect(same.stderr).toBe("");
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(
      /^Job: "web"\nTask Group: "web" \(2 ignore\)\n {2}Task: "nginx"\n\nScheduler dry-run:\n- All tasks successfully allocated.\n\nJob Modify Index: \d+\n/,
    );
  });

  it("plan of a registered job whose evaluation has not run yet counts its allocations as creates but exits 0: the job would not change (Nomad's getExitCode)", async () => {
    // --detach leaves the clock alone, so the evaluation is pending, as for a fixture's job at start.
    expect((await runCli(["job", "run", "--detach", WEB, ...url()])).code).toBe(0);
    const unchanged = await runCli(["job", "plan", WEB, ...url()]);
    expect(unchanged.stderr).toBe("");
    expect(unchanged.stdout).toMatch(/^Job: "web"\nTask Group: "web" \(2 create\)\n/);
    expect(unchanged.code).toBe(0);
    const changed = await runCli(["job", "plan", WEB, "--var", "count=3", ...url()]);
    expect(changed.stdout).toMatch(/^\+\/- Job: "web"\n\+\/- Task Group: "web" \(3 create\)\n/);
    expect(changed.code).toBe(1);
  });

  it("plan of a changed count shows the edit with Nomad's alignment and exits 1; --check-index from it registers, a stale one is refused", async () => {
    expect((await runCli(["job", "run", WEB, ...url()])).code).toBe(0);
    const edited = await runCli(["job", "plan", WEB, "--var", "count=3", ...url()]);
    expect(edited.stderr).toBe("");
    expect(edited.code).toBe(1);
    expect(edited.stdout).toMatch(
      /^\+\/- Job: "web"\n\+\/- Task Group: "web" \(1 create, 2 in-place update\)\n {2}\+\/- Count: "2" => "3" \(forces create\)\n {6}Task: "nginx"\n\n/,
    );
    const index = /^Job Modify Index: (\d+)$/m.exec(edited.stdout)![1]!;
    expect(edited.stdout).toContain(`standin job run --check-index ${index} --var="count=3" ${WEB}`);

    const stale = await runCli(["job", "run", "--detach", "--check-index", String(Number(index) + 100), "--var", "count=3", WEB, ...url()]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^standin job run: Enforcing job modify index \d+: job exists with conflicting job modify index: \d+: Job not updated\n$/);
    expect((await scheduler("/v1/job/web")).TaskGroups[0].Count).toBe(2);

    const fresh = await runCli(["job", "run", "--detach", "--check-index", index, "--var", "count=3", WEB, ...url()]);
    expect(fresh.stderr).toBe("");
    expect(fresh.code).toBe(0);
    expect((await scheduler("/v1/job/web")).TaskGroups[0].Count).toBe(3);
  });

  it("a file that does not parse is one line naming the file, line and column: exit 1 for run, 255 for plan, nothing registered", async () => {
    const bad = jobFile("bad.nomad.hcl", 'job "typo" {\n  group "web" {\n    cnt = 3\n  }\n}\n');
    const diagnostic = `${bad}:3,5-8: Unsupported argument; An argument named "cnt" is not expected here. Did you mean "count"?`;
    const run = await runCli(["job", "run", bad, ...url()]);
    expect(run).toEqual({ code: 1, stdout: "", stderr: `standin job run: ${diagnostic}\n` });
    const plan = await runCli(["job", "plan", bad, ...url()]);
    expect(plan).toEqual({ code: 255, stdout: "", stderr: `standin job plan: ${diagnostic}\n` });
    expect(await scheduler("/v1/jobs")).toEqual([]);
  });

  it("an unset variable, a missing file and a --var without a value are one line each", async () => {
    const unset = jobFile("unset.nomad.hcl", 'variable "region" {\n  type = string\n}\n\njob "web" {\n  region = var.region\n}\n');
    const badVarFile = jobFile("bad.vars.hcl", "count = = 3\n");
    // Each fails before anything reaches the emulator, so the five child processes run side by side.
    const [run, missing, refused, unparsable, noValue] = await Promise.all([
      runCli(["job", "run", unset, ...url()]),
      runCli(["job", "plan", join(dir, "nope.nomad.hcl"), ...url()]),
      runCli(["job", "plan", "test/scheduler/hcl-corpus/variables-validation.nomad.hcl", "--var", "environment=qa", ...url()]),
      runCli(["job", "run", WEB, "--var-file", badVarFile, ...url()]),
      runCli(["job", "run", WEB, "--var", "count", ...url()]),
    ]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(`^standin job run: ${unset.replace(/[.]/g, "\\.")}: Unset variable "region"; A used variable must be set or have a default value; see \\S+ for details\\.\n$`),
    );
    expect(missing).toEqual({ code: 255, stdout: "", stderr: `standin job plan: cannot read ${join(dir, "nope.nomad.hcl")}: ENOENT: no such file or directory\n` });
    expect(refused.code).toBe(255);
    // The rule's place is the job file's; the refused value's is what --var sent (the range is the parser's to get right, the corpus checks it).
    expect(refused.stderr).toMatch(
      /^standin job plan: --var\/--var-file: Invalid value for varfile variable; The environment must be dev, staging or prod\. This was checked by the validation rule at test\/scheduler\/hcl-corpus\/variables-validation\.nomad\.hcl:12,3-\d+\.\n$/,
    );
    expect(unparsable.code).toBe(1);
    expect(unparsable.stderr).toMatch(/^standin job run: --var\/--var-file: unable to parse var content: [^\n]+\n$/);
    expect(noValue).toEqual({ code: 1, stdout: "", stderr: 'standin job run: --var expects name=value, got "count"\n' });
  });

  it("run of a job that cannot be placed says why, names the blocked evaluation and exits 2, as nomad job run does", async () => {
    const big = jobFile(
      "big.nomad.hcl",
      'job "big" {\n  datacenters = ["dc1"]\n  group "g" {\n    count = 2\n    task "t" {\n      driver = "docker"\n      config {\n        image = "x"\n      }\n      resources {\n        cpu    = 900000\n        memory = 64\n      }\n    }\n  }\n}\n',
    );
    const run = await runCli(["job", "run", big, ...url()]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(
      new RegExp(
        `^==> ${TIME}: Evaluation "${ID}" finished with status "complete" but failed to place all allocations:\n    ${TIME}: Task Group "g" \\(failed to place 2 allocations\\):\n {6}\\* Resources exhausted on 1 nodes\n`,
        "m",
      ),
    );
    expect(run.stdout).toMatch(new RegExp(`^    ${TIME}: Evaluation "${ID}" waiting for additional capacity to place remainder$`, "m"));
  });

  it("a periodic job is registered without monitoring, with its next launch on the virtual clock", async () => {
    const nightly = jobFile(
      "nightly.nomad.hcl",
      'job "nightly" {\n  type = "batch"\n  datacenters = ["dc1"]\n  periodic {\n    cron = "0 3 * * *"\n  }\n  group "g" {\n    task "t" {\n      driver = "exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n',
    );
    const run = await runCli(["job", "run", nightly, ...url()]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("Job registration successful\nApproximate next launch time: 2026-01-01T03:00:00Z (3h0m0s from now)\n");
  });
});
