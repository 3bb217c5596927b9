/**
 * The CLI as users run it: the built `bin/standin` in a child process
 * (`npm test` builds first). Every server is started on ports 0 so tests
 * never collide with each other or with a standin already running. Tests of
 * `start` itself (flags, banner, exit codes, signals) start their own process;
 * the client commands share one per describe block. Nothing here depends on
 * the machine's speed: the bound is CLI_TEST_TIMEOUT_MS, far above a normal run.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, resetCli, runCli, sharedCli, startCli, type StartedCli } from "./support/cli.js";

const children: ChildProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), "standin-cli-"));

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

const start = (args: string[] = []): Promise<StartedCli> => startCli(args, children);

const cli = (args: string[]) => runCli(args);

async function json(url: string, init?: RequestInit) {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function occupyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

describe("standin start", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("serves /_standin/ready on all three ports, prints the URLs, and stops cleanly on SIGINT", async () => {
    const s = await start();
    expect(s.stdout()).toMatch(/^standin ready \(seed 1, clock manual at 2026-01-01T00:00:00Z\)$/m);
    for (const service of ["scheduler", "registry", "echo"]) {
      const ready = await json(`${s.urls[service]}/_standin/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ ready: true, seed: 1, now: "2026-01-01T00:00:00Z" });
    }
    expect(s.urls.control).toBe(`${s.urls.scheduler}/_standin`);
    s.child.kill("SIGINT");
    expect(await s.exited).toBe(0);
  });

  it("reports a taken port in one line and exits 1", async () => {
    const { server, port } = await occupyPort();
    try {
      const res = await cli(["start", "--scheduler-port", "0", "--registry-port", String(port), "--echo-port", "0"]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`standin: port ${port} on 127.0.0.1 (registry) is already in use\n`);
    } finally {
      server.close();
    }
  });

  it("reports an invalid fixture in one line naming the bad path, and exits 1", async () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ scheduler: { nodez: [] } }));
    const res = await cli(["start", "--fixture", file, "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`standin: ${file}: scheduler.nodez: unknown key\n`);
  });

  it("takes the recording budgets and the control body limit as flags (sizes with k/m/g suffixes)", async () => {
    const s = await start(["--no-tape", "--tape-bytes", "2m", "--journal-entries", "5", "--journal-bytes", "512k", "--control-body-limit", "1k"]);
    const recording = await json(`${s.urls.control}/recording`);
    expect(recording.body).toMatchObject({ tape: { enabled: false, budget: 2 * 1024 * 1024 }, journal: { capacity: 5, budget: 512 * 1024 } });
    expect((await json(`${s.urls.control}/tape`)).status).toBe(409);
    const refused = await json(`${s.urls.control}/fixtures`, { method: "POST", body: JSON.stringify({ description: "x".repeat(2000) }) });
    expect(refused.status).toBe(413);
    expect(refused.body.error).toBe("request body too large: the control API takes at most 1024 bytes (--control-body-limit)");
  });

  it("answers control requests for --allowed-host names and refuses other Host names with 403 (DNS-rebinding guard)", async () => {
    const s = await start(["--allowed-host", "standin.ci", "--allowed-host", "docker.host"]);
    const port = Number(new URL(s.urls.scheduler).port);
    const status = (path: string, host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path, headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await status("/_standin/clock", `standin.ci:${port}`)).toBe(200);
    expect(await status("/_standin/clock", "docker.host")).toBe(200);
    expect(await status("/_standin/clock", `127.0.0.1:${port}`)).toBe(200);
    expect(await status("/_standin/clock", `rebound.example:${port}`)).toBe(403);
    expect(await status("/_standin/ui", `rebound.example:${port}`)).toBe(403);
    expect(await status("/v1/agent/health", `rebound.example:${port}`)).toBe(200);
  });

  it("refuses a malformed size in one line", async () => {
    const res = await cli(["start", "--tape-bytes", "12x", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain("expected a size in bytes, e.g. 1048576, 512k, 64m or 1g");
  });

  it("applies --seed, --start-time and --clock over the fixture", async () => {
    const s = await start(["--seed", "77", "--start-time", "2031-03-04T05:06:07Z", "--clock", "realtime", "--speed", "2"]);
    const ready = await json(`${s.urls.scheduler}/_standin/ready`);
    expect(ready.body.seed).toBe(77);
    const clock = await json(`${s.urls.scheduler}/_standin/clock`);
    expect(clock.body).toMatchObject({ mode: "realtime", speed: 2 });
    expect(Date.parse(clock.body.now as string)).toBeGreaterThanOrEqual(Date.parse("2031-03-04T05:06:07Z"));
  });

  it("with --state-file, writes the state atomically on SIGTERM and loads it at the next start", async () => {
    const stateFile = join(dir, "state.json");
    const first = await start(["--state-file", stateFile]);
    expect(first.stdout()).toContain(`state file ${stateFile} not found: starting from the fixtures (it is written while running and on exit)\n`);
    await json(`${first.urls.scheduler}/_standin/clock/advance`, { method: "POST", body: JSON.stringify({ by: "2h30m" }) });
    expect((await fetch(`${first.urls.registry}/v1/kv/resumed`, { method: "PUT", body: "yes" })).status).toBe(200);
    const hash = (await json(`${first.urls.scheduler}/_standin/state/hash`)).body.hash;
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(first.stdout()).toContain(`state written to ${stateFile}`);
    expect(existsSync(stateFile)).toBe(true);
    expect(existsSync(`${stateFile}.tmp-${first.child.pid}`)).toBe(false);
    expect(JSON.parse(readFileSync(stateFile, "utf8")).format).toBe("standin.snapshot/v1");

    const second = await start(["--state-file", stateFile]);
    // The banner says what came back: the agent's client node and the key written above, at the clock it was saved at.
    expect(second.stdout()).toMatch(
      new RegExp(
        `^state resumed from ${stateFile.replace(/[.]/g, "\\.")} \\(index \\d+: 0 jobs, 0 allocations, 1 node, 0 sessions, 1 KV key; clock at 2026-01-01T02:30:00Z\\)$`,
        "m",
      ),
    );
    expect((await json(`${second.urls.scheduler}/_standin/clock`)).body.now).toBe("2026-01-01T02:30:00Z");
    expect((await json(`${second.urls.scheduler}/_standin/state/hash`)).body.hash).toBe(hash);
  });

  it("refuses a corrupt state file in one line", async () => {
    const stateFile = join(dir, "corrupt.json");
    writeFileSync(stateFile, "{");
    const res = await cli(["start", "--state-file", stateFile, "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^standin: .*corrupt\.json: cannot read state file/);
  });
});

describe("client commands", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  // One emulator for these tests (they test the client commands, not start), reset before each.
  const emulator = sharedCli();
  const url = () => ["--url", emulator().urls.echo!];
  // Moves the clock through the control API, so that a test has a state to change back.
  const advanceBy = async (by: string) => {
    const res = await json(`${emulator().urls.control}/clock/advance`, { method: "POST", body: JSON.stringify({ by }) });
    expect(res.status).toBe(200);
  };
  beforeEach(() => resetCli(emulator()), CLI_TEST_TIMEOUT_MS);

  it("clock prints the virtual clock", async () => {
    const clock = await cli(["clock", ...url()]);
    expect(clock.code).toBe(0);
    expect(JSON.parse(clock.stdout)).toMatchObject({ now: "2026-01-01T00:00:00Z", mode: "manual" });
  });

  it("advance moves the clock and says which timers fired", async () => {
    const advance = await cli(["advance", "1h30m", ...url()]);
    expect(advance).toMatchObject({ code: 0, stdout: "now 2026-01-01T01:30:00Z\n  (no timers fired)\n" });
  });

  it("token signs a JWT at the virtual now with the claims and expiry given", async () => {
    await advanceBy("1h30m");
    const token = await cli(["token", "provider_jwt", "--claim", "email=a@b.test", "--claim", "n=5", "--expires-in", "10m", ...url()]);
    expect(token.code).toBe(0);
    const payload = JSON.parse(Buffer.from(token.stdout.trim().split(".")[1]!, "base64url").toString());
    expect(payload).toMatchObject({ email: "a@b.test", n: 5, iat: Date.parse("2026-01-01T01:30:00Z") / 1000 });
    expect(payload.exp - payload.iat).toBe(600);
  });

  it("snapshot save and load bring a saved state back", async () => {
    const snapshotFile = join(dir, "snap.json");
    expect((await cli(["snapshot", "save", snapshotFile, ...url()])).code).toBe(0);
    await advanceBy("1h30m");
    const load = await cli(["snapshot", "load", snapshotFile, ...url()]);
    expect(load.code).toBe(0);
    expect(JSON.parse(load.stdout)).toMatchObject({ restored: true, now: "2026-01-01T00:00:00Z" });
  });

  it("reset returns the emulator to its start state", async () => {
    await advanceBy("5m");
    const reset = await cli(["reset", ...url()]);
    expect(JSON.parse(reset.stdout)).toMatchObject({ reset: true, now: "2026-01-01T00:00:00Z" });
  });

  it("a refused request fails in one line naming it", async () => {
    const bad = await cli(["advance", "soon", ...url()]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('standin: POST /_standin/clock/advance failed (400): time: invalid duration "soon"\n');
  });
});

describe("client commands with --control-token", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const emulator = sharedCli(["--control-token", "t0ken"]);

  it("clients need the token", async () => {
    // Three reads of the clock: independent, so side by side.
    const [without, wrong, withToken] = await Promise.all([
      cli(["clock", "--url", emulator().urls.scheduler!]),
      cli(["clock", "--url", emulator().urls.scheduler!, "--control-token", "other"]),
      cli(["clock", "--url", emulator().urls.scheduler!, "--control-token", "t0ken"]),
    ]);
    expect(without.code).toBe(1);
    expect(without.stderr).toBe(
      "standin: GET /_standin/clock failed (401): the control API needs Authorization: Bearer <control token> (give the token of start --control-token with --control-token or STANDIN_CONTROL_TOKEN)\n",
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/\(401\): .*\(the token given by --control-token or STANDIN_CONTROL_TOKEN is not the one this standin was started with\)\n$/);
    expect(withToken.code).toBe(0);
  });
});

describe("client commands without an emulator", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("says clearly when nothing is listening", async () => {
    const { server, port } = await occupyPort();
    server.close();
    const res = await cli(["clock", "--url", `http://127.0.0.1:${port}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^standin: cannot reach http://127.0.0.1:${port}: `));
  });
});

describe("standin fixtures check", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("prints ok for valid files and start's one-line errors (exit 1) for invalid ones", async () => {
    const good = join(dir, "good.json");
    const bad = join(dir, "bad-check.json");
    writeFileSync(good, JSON.stringify({ seed: 4, registry: { agentNode: "n" } }));
    writeFileSync(bad, JSON.stringify({ seed: "four", echo: { apiKeys: [1] } }));
    const [ok, res] = await Promise.all([cli(["fixtures", "check", "fixtures/default.json", good]), cli(["fixtures", "check", good, bad])]);
    expect(ok).toMatchObject({ code: 0, stdout: `ok fixtures/default.json\nok ${good}\n` });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    const [line, ...rest] = res.stderr.split("\n");
    expect(rest).toEqual([""]);
    expect(line).toContain(`standin: ${bad}: seed: `);
    expect(line).toContain("; echo.apiKeys[0]: ");
  });
});
