/**
 * standin in the background of a CI job, as the recipe in docs/ci.md runs it:
 * `start --ready-file --pid-file` as a real child process, then `wait-ready`
 * and `stop` as separate processes. Waits are for conditions (a process's
 * exit, an HTTP answer), bounded generously; nothing asserts how long anything took.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, CLI_TEST_TIMEOUT_MS, FREE_PORTS, runCli } from "./support/cli.js";

/** Child processes wait on each other here; a loaded 2-core machine may take its time. */
const GENEROUS_MS = 60_000;

const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

function freshDir(): string {
  return mkdtempSync(join(tmpdir(), "standin-background-"));
}

/** `standin start` in the background, as `standin start … &` in a shell: nothing waits for its banner. */
function startInBackground(args: string[]): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, "start", ...FREE_PORTS, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

/** A port that nothing listens on: taken from the OS, then let go. */
function unusedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The pid of a process that has run and ended (and been collected), so no process has it now. */
function pidOfAnEndedProcess(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    child.on("exit", () => resolve(child.pid!));
  });
}

describe("standin start --ready-file --pid-file, wait-ready, stop", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it(
    "writes both files once ready, serves every URL in the ready file, and stop ends it and removes them",
    async () => {
      const dir = freshDir();
      const readyFile = join(dir, "standin.json");
      const pidFile = join(dir, "standin.pid");
      const standin = startInBackground(["--ready-file", readyFile, "--pid-file", pidFile]);

      const waited = await runCli(["wait-ready", "--ready-file", readyFile, "--timeout", "60s"]);
      expect(waited.stderr).toBe("");
      expect(waited.code).toBe(0);

      const ready = JSON.parse(readFileSync(readyFile, "utf8")) as Record<string, unknown>;
      expect(Object.keys(ready).sort()).toEqual(["control", "echo", "pid", "registry", "scheduler"]);
      expect(ready.pid).toBe(standin.child.pid);
      expect(waited.stdout).toBe(`standin ready at ${ready.scheduler}\n`);
      expect(readFileSync(pidFile, "utf8")).toBe(`${standin.child.pid}\n`);
      for (const service of ["scheduler", "registry", "echo"]) {
        const response = await fetch(`${ready[service]}/_standin/ready`);
        expect(response.status, service).toBe(200);
      }
      // Each service answers its own API, not just the shared control routes.
      expect((await fetch(`${ready.scheduler}/v1/jobs`)).status).toBe(200);
      expect((await fetch(`${ready.registry}/v1/session/list`)).status).toBe(200);
      const clock = await fetch(`${ready.control}/clock`);
      expect(clock.status).toBe(200);
      expect(await clock.json()).toMatchObject({ now: "2026-01-01T00:00:00Z", mode: "manual" });

      const stopped = await runCli(["stop", "--pid-file", pidFile, "--timeout", "60s"]);
      expect(stopped).toEqual({ code: 0, stdout: `standin stopped (pid ${standin.child.pid})\n`, stderr: "" });
      expect(await standin.exited).toBe(0);
      expect(standin.stderr()).toBe("");
      // Both files gone, and no temporary file left beside them.
      expect(readdirSync(dir)).toEqual([]);
    },
    GENEROUS_MS,
  );

  it(
    "stop --ready-file takes the pid from the ready file, and the shutdown still writes the state file",
    async () => {
      const dir = freshDir();
      const readyFile = join(dir, "standin.json");
      const stateFile = join(dir, "state.json");
      const standin = startInBackground(["--ready-file", readyFile, "--state-file", stateFile, "--state-file-interval", "0"]);
      expect((await runCli(["wait-ready", "--ready-file", readyFile, "--timeout", "60s"])).code).toBe(0);
      const { control } = JSON.parse(readFileSync(readyFile, "utf8")) as { control: string };
      expect((await fetch(`${control}/clock/advance`, { method: "POST", body: JSON.stringify({ by: "90s" }) })).status).toBe(200);

      const stopped = await runCli(["stop", "--ready-file", readyFile, "--timeout", "60s"]);
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toBe(`standin stopped (pid ${standin.child.pid})\n`);
      expect(await standin.exited).toBe(0);
      expect(existsSync(readyFile)).toBe(false);
      // Written at exit only (interval 0), so it holds the advanced clock only if SIGTERM shut down gracefully.
      expect(JSON.parse(readFileSync(stateFile, "utf8"))).toMatchObject({ clock: { nowMs: Date.parse("2026-01-01T00:01:30Z") } });
    },
    GENEROUS_MS,
  );
});

describe("standin start --ready-file that cannot be written", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("exits 1 with one line and leaves no process listening", async () => {
    const readyFile = join(freshDir(), "missing-dir", "standin.json");
    const res = await runCli(["start", ...FREE_PORTS, "--ready-file", readyFile]);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe("");
    expect(res.stderr).toMatch(new RegExp(`^standin: cannot write --ready-file ${readyFile.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: ENOENT: [^\\n]*\\n$`));
  });
});

describe("standin wait-ready", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it(
    "exits 1 with one line when nothing answers at the URL by the timeout",
    async () => {
      const port = await unusedPort();
      const res = await runCli(["wait-ready", "--url", `http://127.0.0.1:${port}`, "--timeout", "1s"]);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe("");
      // What it last saw is the refused connection; "no answer" only if every look was still under way at the deadline (a very busy machine).
      const lastSeen = `(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}|no answer)`;
      expect(res.stderr).toMatch(new RegExp(`^standin wait-ready: http://127\\.0\\.0\\.1:${port}/_standin/ready not ready within 1s \\(last: ${lastSeen}\\)\n$`));
    },
    GENEROUS_MS,
  );

  it(
    "exits 1 with one line when the ready file does not appear by the timeout",
    async () => {
      const readyFile = join(freshDir(), "never.json");
      const res = await runCli(["wait-ready", "--ready-file", readyFile, "--timeout", "1s"]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`standin wait-ready: ready file ${readyFile} did not appear within 1s\n`);
    },
    GENEROUS_MS,
  );

  it(
    "waits past a ready file a killed standin left behind, for the one the new standin writes over it",
    async () => {
      const dir = freshDir();
      const readyFile = join(dir, "standin.json");
      const deadUrl = `http://127.0.0.1:${await unusedPort()}`;
      writeFileSync(readyFile, JSON.stringify({ pid: await pidOfAnEndedProcess(), scheduler: deadUrl, registry: deadUrl, echo: deadUrl, control: `${deadUrl}/_standin` }));
      // wait-ready first, so it finds the stale file before the new standin replaces it.
      const waiting = runCli(["wait-ready", "--ready-file", readyFile, "--timeout", "60s"]);
      const standin = startInBackground(["--ready-file", readyFile]);
      const waited = await waiting;
      expect(waited.stderr).toBe("");
      expect(waited.code).toBe(0);
      const ready = JSON.parse(readFileSync(readyFile, "utf8")) as { pid: number; scheduler: string };
      expect(ready.pid).toBe(standin.child.pid);
      expect(waited.stdout).toBe(`standin ready at ${ready.scheduler}\n`);
      expect((await runCli(["stop", "--ready-file", readyFile, "--timeout", "60s"])).code).toBe(0);
      expect(await standin.exited).toBe(0);
    },
    GENEROUS_MS,
  );

  it("refuses a timeout that is not a Go duration", async () => {
    const res = await runCli(["wait-ready", "--timeout", "30"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: option '--timeout <duration>' argument '30' is invalid\. time: missing unit in duration "30"\n/);
  });
});

describe("standin stop", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("says so and exits 0 when the pid file names no running process", async () => {
    const pidFile = join(freshDir(), "standin.pid");
    const pid = await pidOfAnEndedProcess();
    writeFileSync(pidFile, `${pid}\n`);
    const res = await runCli(["stop", "--pid-file", pidFile]);
    expect(res).toEqual({ code: 0, stdout: `standin stop: not running (pid ${pid} from ${pidFile} is gone)\n`, stderr: "" });
  });

  it("says so and exits 0 when there is no pid file", async () => {
    const pidFile = join(freshDir(), "standin.pid");
    const res = await runCli(["stop", "--pid-file", pidFile]);
    expect(res).toEqual({ code: 0, stdout: `standin stop: not running (no ${pidFile})\n`, stderr: "" });
  });

  it.runIf(existsSync("/proc/self/cmdline"))("refuses, with one line, to signal a pid that is not a standin's (a stale pid file reused by the system)", async () => {
    const pidFile = join(freshDir(), "standin.pid");
    const other = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      writeFileSync(pidFile, `${other.pid}\n`);
      const res = await runCli(["stop", "--pid-file", pidFile]);
      expect(res).toEqual({ code: 1, stdout: "", stderr: `standin stop: pid ${other.pid} from ${pidFile} is not a standin (it runs "sleep 60"); not signalled\n` });
      expect(other.exitCode).toBeNull();
      expect(other.signalCode).toBeNull();
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("exits 1 with one line for a pid file without a pid, and without any file to go by", async () => {
    const pidFile = join(freshDir(), "standin.pid");
    writeFileSync(pidFile, "0\n");
    expect(await runCli(["stop", "--pid-file", pidFile])).toEqual({ code: 1, stdout: "", stderr: `standin: ${pidFile} does not hold a pid\n` });
    expect(await runCli(["stop"])).toEqual({ code: 1, stdout: "", stderr: "standin stop: give --pid-file or --ready-file (one of them)\n" });
  });
});
