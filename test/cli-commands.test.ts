/**
 * `standin act`, `await` and `journal`: the control API's actions, await and
 * journals from the command line, run as child processes against one shared
 * `standin start` (reset before each test). Waits are in virtual time (the
 * emulator's await); nothing here depends on the machine's speed.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { smallJob } from "./support/jobs.js";
import { CLI_TEST_TIMEOUT_MS, resetCli, runCli, sharedCli } from "./support/cli.js";

describe("act, await and journal", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const emulator = sharedCli();
  const url = () => ["--url", emulator().urls.registry!];
  beforeEach(() => resetCli(emulator()), CLI_TEST_TIMEOUT_MS);

  const registerWeb = async (count: number) => {
    const act = await runCli(["act", "job-register", `job=${JSON.stringify(smallJob("web", { count }))}`, ...url()]);
    expect(act.stderr).toBe("");
    expect(act.code).toBe(0);
    return JSON.parse(act.stdout) as { do: string; service: string; result: { JobID: string }; index: number };
  };

  it("act without an action lists the actions, one a line with its service", async () => {
    const list = await runCli(["act", ...url()]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^node-down +scheduler +a client node goes down/m);
    expect(list.stdout).toMatch(/^session-destroy +registry +/m);
  });

  it("act runs an action with key=value arguments (JSON values parsed) and prints what it did", async () => {
    const done = await registerWeb(2);
    expect(done).toMatchObject({ do: "job-register", service: "scheduler", result: { JobID: "web" } });
    const jobs = (await (await fetch(`${emulator().urls.scheduler}/v1/jobs`)).json()) as Array<{ ID: string }>;
    expect(jobs.map((j) => j.ID)).toEqual(["web"]);
  });

  it("act refuses in one line what the emulator refuses", async () => {
    const missing = await runCli(["act", "node-down", "node=no-such-node", ...url()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('standin: POST /_standin/actions failed (404): no node "no-such-node"\n');
  });

  it("await moves virtual time until every condition holds, a bare word starting the next condition", async () => {
    await registerWeb(2);
    const met = await runCli(["await", "allocations", "job=web", "count=2", "job", "job=web", "status=running", ...url()]);
    expect(met.stderr).toBe("");
    expect(met.code).toBe(0);
    expect(met.stdout).toMatch(/^met after \S+ \(now 2026-01-01T\S+Z, index \d+\)$/m);
    expect(met.stdout).toContain('  allocations  {"running":2}\n');
    expect(met.stdout).toContain('  job  {"Status":"running","Version":0}\n');
    expect(met.stdout).toMatch(/scheduler\.alloc-start/);
  });

  it("await that is not met within --within exits 1 with one line saying what was observed", async () => {
    const late = await runCli(["await", "index", "above=1000000", "--within", "1m", ...url()]);
    expect(late.code).toBe(1);
    expect(late.stdout).toBe("");
    expect(late.stderr).toMatch(/^standin await: the condition did not hold within 1m of virtual time \(now 2026-01-01T00:01:00Z; observed \{"index":\{"index":\d+\}\}\)\n$/);
  });

  it("await --json prints the emulator's answer, met or not", async () => {
    const met = await runCli(["await", "--json", "index", "above=0", ...url()]);
    expect(met.code).toBe(0);
    expect(JSON.parse(met.stdout)).toMatchObject({ met: true, waited: "0s", now: "2026-01-01T00:00:00Z" });
    const late = await runCli(["await", "--json", "index", "above=1000000", "--within", "30s", ...url()]);
    expect(late.code).toBe(1);
    expect(JSON.parse(late.stdout)).toMatchObject({ met: false, waited: "30s", now: "2026-01-01T00:00:30Z" });
  });

  it("await without a condition lists them; an argument before a name is refused", async () => {
    const list = await runCli(["await", ...url()]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^allocations +scheduler +/m);
    expect(list.stdout).toMatch(/^index +standin +/m);
    const bad = await runCli(["await", "count=2", ...url()]);
    expect(bad).toMatchObject({ code: 1, stderr: 'standin await: expected a condition name first, got "count=2"\n' });
  });

  it("journal prints the request journal as a table, filtered by service and limited", async () => {
    expect((await fetch(`${emulator().urls.scheduler}/v1/jobs?prefix=w`)).status).toBe(200);
    expect((await fetch(`${emulator().urls.registry}/v1/kv/missing`)).status).toBe(404);
    const all = await runCli(["journal", ...url()]);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^\d+ +2026-01-01T00:00:00Z +scheduler +200 +GET \/v1\/jobs\?prefix=w$/m);
    expect(all.stdout).toMatch(/^\d+ +2026-01-01T00:00:00Z +registry +404 +GET \/v1\/kv\/missing$/m);

    const registry = await runCli(["journal", "--service", "registry", "--json", ...url()]);
    const lines = registry.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { service: string; path: string });
    expect(lines.map((l) => [l.service, l.path])).toEqual([["registry", "/v1/kv/missing"]]);

    const newest = await runCli(["journal", "--limit", "1", "--json", ...url()]);
    expect(
      newest.stdout
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { path: string }).path),
    ).toEqual(["/v1/kv/missing"]);
  });

  it("journal events prints the event journal, --type filtering by type", async () => {
    expect((await runCli(["advance", "90s", ...url()])).code).toBe(0);
    const events = await runCli(["journal", "events", "--type", "clock", ...url()]);
    expect(events.code).toBe(0);
    expect(events.stdout).toMatch(/^\d+ +2026-01-01T00:01:30Z +clock\.advance +- +- +\{"by":"90s"\}$/m);
    const wrong = await runCli(["journal", "--type", "clock", ...url()]);
    expect(wrong).toMatchObject({ code: 1, stderr: "standin journal: --type is for the event journal (standin journal events --type …)\n" });
  });
});
