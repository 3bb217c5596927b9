/**
 * Process faults, with the built CLI in a child process (`npm test` builds
 * first): SIGTERM in the middle of a stream of writes loses none that were
 * acknowledged, the state file on disk is always whole JSON (written beside
 * and renamed over, behind while running too), SIGKILL leaves a whole file
 * that keeps what was there before, and a corrupt state
 * file stops `start` with one clean line naming the file. Every test starts
 * processes, so each has CLI_TEST_TIMEOUT_MS; the waits are on conditions.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { watchStateFile } from "../support/state-file.js";
import { BIN, CLI_TEST_TIMEOUT_MS, FREE_PORTS, startCli, type StartedCli } from "../support/cli.js";
import { smallJob } from "../support/jobs.js";

const PORTS = FREE_PORTS;
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const start = (args: string[] = []): Promise<StartedCli> => startCli(args, children);

/** Runs `start` expecting it to fail before it is ready. */
function startFailing(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, "start", ...PORTS, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

function job(id: string) {
  return smallJob(id, { type: "batch" });
}

/**
 * Writers that keep sending jobs and KV puts until their requests fail (the
 * server went away). Only what answered 200 is recorded as acknowledged.
 */
function writeLoad(s: StartedCli, tag: string, writers = 6) {
  const acked = { jobs: [] as string[], kv: new Map<string, string>() };
  let sent = 0;
  let stopped = false;
  const loop = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      try {
        const id = `${tag}-${w}-${n}`;
        sent++;
        const res =
          n % 2 === 0
            ? await fetch(`${s.urls.scheduler}/v1/jobs`, { method: "PUT", body: JSON.stringify({ Job: job(id) }) })
            : await fetch(`${s.urls.registry}/v1/kv/acked/${id}`, { method: "PUT", body: `value of ${id}` });
        const text = await res.text();
        if (res.status !== 200) continue;
        if (n % 2 === 0) acked.jobs.push(id);
        else if (text === "true") acked.kv.set(`acked/${id}`, `value of ${id}`);
      } catch {
        return; // connection refused or reset: the process is going away
      }
    }
  };
  const done = Promise.all(Array.from({ length: writers }, (_, w) => loop(w)));
  return {
    acked,
    sent: () => sent,
    /** Lets the writers run until they fail on their own. */
    done,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

async function presentAfterRestart(s: StartedCli, acked: { jobs: string[]; kv: Map<string, string> }) {
  const jobs = (await (await fetch(`${s.urls.scheduler}/v1/jobs`)).json()) as Array<{ ID: string }>;
  const ids = new Set(jobs.map((j) => j.ID));
  const kvRes = await fetch(`${s.urls.registry}/v1/kv/acked/?recurse`);
  const entries = kvRes.status === 200 ? ((await kvRes.json()) as Array<{ Key: string; Value: string }>) : [];
  const kv = new Map(entries.map((e) => [e.Key, Buffer.from(e.Value, "base64").toString()]));
  return {
    missingJobs: acked.jobs.filter((id) => !ids.has(id)),
    missingKeys: [...acked.kv].filter(([key, value]) => kv.get(key) !== value).map(([key]) => key),
  };
}

describe("SIGTERM under load", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("keeps every acknowledged write, the state file is never torn, and SIGKILL leaves a whole one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-faults-"));
    const stateFile = join(dir, "state.json");
    const watcher = watchStateFile(stateFile);
    try {
      // First life: writes in flight when SIGTERM arrives.
      const first = await start(["--state-file", stateFile]);
      const load1 = writeLoad(first, "a");
      while (load1.acked.jobs.length < 20 || load1.acked.kv.size < 20) await new Promise((r) => setTimeout(r, 5));
      first.child.kill("SIGTERM");
      await load1.done;
      expect(await first.exited).toBe(0);
      expect(first.stdout()).toContain(`state written to ${stateFile}`);
      expect(readdirSync(dir)).toEqual(["state.json"]); // no temporary file left beside it
      expect(() => JSON.parse(readFileSync(stateFile, "utf8"))).not.toThrow();

      // Second life: everything acknowledged is there; more writes, and the file is replaced under the watcher.
      const second = await start(["--state-file", stateFile]);
      expect(await presentAfterRestart(second, load1.acked)).toEqual({ missingJobs: [], missingKeys: [] });
      const load2 = writeLoad(second, "b");
      while (load2.acked.jobs.length < 20) await new Promise((r) => setTimeout(r, 5));
      second.child.kill("SIGTERM");
      await load2.done;
      expect(await second.exited).toBe(0);

      // Third life: a SIGKILL runs no shutdown code; the file (written behind meanwhile) stays whole and keeps the first two lives.
      const third = await start(["--state-file", stateFile]);
      const both = { jobs: [...load1.acked.jobs, ...load2.acked.jobs], kv: new Map([...load1.acked.kv, ...load2.acked.kv]) };
      expect(await presentAfterRestart(third, both)).toEqual({ missingJobs: [], missingKeys: [] });
      const load3 = writeLoad(third, "c", 2);
      while (load3.acked.jobs.length < 5) await new Promise((r) => setTimeout(r, 5));
      third.child.kill("SIGKILL");
      await load3.done;
      await third.exited;
      expect(third.stdout()).not.toContain("state written to");
      expect(() => JSON.parse(readFileSync(stateFile, "utf8"))).not.toThrow();

      const fourth = await start(["--state-file", stateFile]);
      expect(await presentAfterRestart(fourth, both)).toEqual({ missingJobs: [], missingKeys: [] });
      fourth.child.kill("SIGTERM");
      expect(await fourth.exited).toBe(0);
    } finally {
      const { reads, torn } = await watcher.stop();
      expect(torn).toEqual([]);
      expect(reads).toBeGreaterThan(0);
    }
  });
});

describe("a signal right after the banner", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("a signal the moment the first banner line is read, and again on every later line, still ends in a clean exit with the state file written (regression)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-early-"));
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const stateFile = join(dir, `state-${i}.json`);
        const child = spawn(process.execPath, [BIN, "start", ...PORTS, "--state-file", stateFile], { stdio: ["ignore", "pipe", "pipe"] });
        children.push(child);
        let out = "";
        child.stdout!.on("data", (d) => {
          out += d;
          // Handlers must be in place before the banner is printed, and a repeated signal must not kill the shutdown.
          if (out.includes("standin ready")) child.kill(i % 2 ? "SIGINT" : "SIGTERM");
        });
        const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
        let written = false;
        try {
          written = JSON.parse(readFileSync(stateFile, "utf8")).format === "standin.snapshot/v1";
        } catch {
          // not written
        }
        return { code, signal: child.signalCode, written };
      }),
    );
    expect(outcomes).toEqual(Array.from({ length: 6 }, () => ({ code: 0, signal: null, written: true })));
  });
});

describe("a corrupt state file", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("makes start exit 1 with one line naming the file (no stack trace, no raw bytes) and leaves the file alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-corrupt-"));
    // A real state file to cut short.
    const goodFile = join(dir, "good.json");
    const good = await start(["--state-file", goodFile]);
    good.child.kill("SIGTERM");
    expect(await good.exited).toBe(0);
    const whole = readFileSync(goodFile);

    const cases: Array<[string, Buffer | string]> = [
      ["truncated.json", whole.subarray(0, Math.floor(whole.length / 2))],
      ["empty.json", ""],
      ["null.json", "null"],
      ["array.json", "[1, 2, 3]"],
      ["wrong-shape.json", JSON.stringify({ format: "standin.snapshot/v1", seed: "one", store: [] })],
      ["other-format.json", JSON.stringify({ ...JSON.parse(whole.toString()), format: "something/v9" })],
      // Bytes that are not text: a newline and a terminal escape among them must not reach the terminal raw.
      ["garbage.json", Buffer.from([0x00, 0xff, 0x0a, 0x1b, 0x5b, 0x33, 0x31, 0x6d, 0x07, 0x0d, 0xfe, 0x80, 0x41])],
    ];
    const results = await Promise.all(
      cases.map(async ([name, content]) => {
        const file = join(dir, name);
        writeFileSync(file, content);
        return { name, file, content, ...(await startFailing(["--state-file", file])) };
      }),
    );
    for (const r of results) {
      expect(r.code, r.name).toBe(1);
      expect(r.stdout, r.name).not.toContain("standin ready");
      expect(r.stderr.startsWith(`standin: ${r.file}: `), `${r.name}: ${r.stderr}`).toBe(true);
      expect(r.stderr.endsWith("\n"), r.name).toBe(true);
      // One line, printable: no other newline, no control character, no stack frame.
      expect(r.stderr.slice(0, -1), r.name).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(r.stderr, r.name).not.toMatch(/^\s+at /m);
      // Nothing was written over it.
      expect(readFileSync(r.file).equals(Buffer.from(r.content)), r.name).toBe(true);
    }
    expect(results.find((r) => r.name === "truncated.json")!.stderr).toContain("cannot read state file: ");
    expect(results.find((r) => r.name === "garbage.json")!.stderr).toContain("\\u001b");
  });
});

describe("a state file that cannot be written", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("makes start exit 1 with one line before any port is bound: a missing directory, a directory, a read-only directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-unwritable-"));
    const asDirectory = join(dir, "state-dir");
    mkdirSync(asDirectory);
    const readOnly = join(dir, "read-only");
    mkdirSync(readOnly);
    chmodSync(readOnly, 0o500);
    const cases: Array<[string, string]> = [
      [join(dir, "missing", "state.json"), "its directory does not exist"],
      [asDirectory, "it is a directory"],
    ];
    // root writes anywhere: the read-only case only means something for other users.
    if (process.getuid?.() !== 0) cases.push([join(readOnly, "state.json"), "permission denied"]);
    for (const [file, reason] of cases) {
      const r = await startFailing(["--state-file", file]);
      expect(r.code, file).toBe(1);
      expect(r.stdout, file).not.toContain("standin ready");
      expect(r.stderr, file).toBe(`standin: ${file}: cannot write state file: ${reason}\n`);
    }
    chmodSync(readOnly, 0o700);
  });
});
