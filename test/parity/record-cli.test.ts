/**
 * `standin record` as a CI job runs it: in the background with
 * `--ready-file`, `standin wait-ready` and `standin stop` as separate
 * processes, a request through it in between, and the recording on disk
 * once it has stopped. Runs dist/ (rebuilt by `npm run build`). Waits are for
 * conditions, bounded generously; nothing asserts how long anything took.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Recording } from "../../src/parity/recording.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { BIN, CLI_TEST_TIMEOUT_MS, runCli } from "../support/cli.js";

const children: ChildProcess[] = [];
const standins: RunningStandin[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const standin of standins.splice(0)) await standin.close();
});

function record(args: string[]): { child: ChildProcess; exited: Promise<number | null>; stdout: () => string; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, "record", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

describe("standin record --ready-file, wait-ready, stop", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("records what passes through it and writes the recording when stopped", async () => {
    const upstream = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
    standins.push(upstream);
    const dir = mkdtempSync(join(tmpdir(), "standin-record-cli-"));
    const readyFile = join(dir, "ready.json");
    const out = join(dir, "run.recording.json");
    const recorder = record([
      "--registry-upstream",
      upstream.urls.registry,
      "--scheduler-upstream",
      upstream.urls.scheduler,
      "--registry-port",
      "0",
      "--scheduler-port",
      "0",
      "--out",
      out,
      "--ready-file",
      readyFile,
    ]);

    const waited = await runCli(["wait-ready", "--ready-file", readyFile, "--timeout", "60s"]);
    expect(waited, recorder.stderr()).toMatchObject({ code: 0 });
    const ready = JSON.parse(readFileSync(readyFile, "utf8")) as Record<string, unknown>;
    expect(Object.keys(ready).sort()).toEqual(["pid", "registry", "scheduler"]);
    expect(waited.stdout).toBe(`standin ready at ${ready.scheduler}\n`);

    const put = await fetch(`${ready.registry}/v1/kv/from-ci`, { method: "PUT", body: "yes" });
    expect(await put.text()).toBe("true");
    const read = await fetch(`${ready.registry}/v1/kv/from-ci?raw`);
    expect(await read.text()).toBe("yes");

    const stopped = await runCli(["stop", "--ready-file", readyFile, "--timeout", "60s"]);
    expect(stopped).toMatchObject({ code: 0, stdout: `standin stopped (pid ${ready.pid})\n` });
    expect(await recorder.exited).toBe(0);
    expect(existsSync(readyFile)).toBe(false);
    expect(recorder.stdout()).toContain(`standin record: 2 exchanges written to ${out}`);

    const recording = JSON.parse(readFileSync(out, "utf8")) as Recording;
    expect(recording).toMatchObject({ format: "standin-recording", version: 1, truncated: false });
    expect(recording.upstreams).toEqual({ scheduler: upstream.urls.scheduler, registry: upstream.urls.registry });
    // The products' versions, read from /v1/agent/self at start (standin says which it stands for).
    expect(Object.keys(recording.products ?? {}).sort()).toEqual(["registry", "scheduler"]);
    expect(recording.exchanges.map((e) => `${e.service} ${e.method} ${e.path} ${e.response?.status}`)).toEqual([
      "registry PUT /v1/kv/from-ci 200",
      "registry GET /v1/kv/from-ci?raw 200",
    ]);
    expect(recording.exchanges[0]!.body).toEqual({ text: "yes", bytes: 3 });
  });

  it("refuses in one line: no upstream, a bad upstream, an --out it cannot write, a port taken", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-record-cli-"));
    const out = join(dir, "r.json");
    expect(await runCli(["record", "--out", out])).toMatchObject({
      code: 1,
      stderr: "standin record: give at least one upstream (--scheduler-upstream, --registry-upstream or --echo-upstream)\n",
    });
    expect(await runCli(["record", "--registry-upstream", "ftp://x", "--out", out])).toMatchObject({
      code: 1,
      stderr: "standin record: --registry-upstream ftp://x: only http and https upstreams are proxied\n",
    });
    expect(await runCli(["record", "--registry-upstream", "http://user:pw@127.0.0.1:8500", "--out", out])).toMatchObject({
      code: 1,
      stderr: "standin record: --registry-upstream: no credentials in the URL (send them in the requests)\n",
    });
    const unwritable = await runCli(["record", "--registry-upstream", "http://127.0.0.1:1", "--registry-port", "0", "--out", join(dir, "no-such-dir", "r.json")]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toMatch(/^standin record: cannot write --out .*no-such-dir.*\n$/);
    expect(existsSync(out)).toBe(false);
    const taken = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
    standins.push(taken);
    const port = taken.ports.registry;
    expect(await runCli(["record", "--registry-upstream", taken.urls.registry, "--registry-port", String(port), "--out", out])).toMatchObject({
      code: 1,
      stderr: `standin record: port ${port} on 127.0.0.1 (registry) is already in use (--registry-port 0 picks a free one)\n`,
    });
  });
});
