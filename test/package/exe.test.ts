/**
 * The single executable (`npm run build:exe`), as a CI job without Node runs
 * it: copied alone into an empty directory and started with a PATH on which
 * there is no node, it serves the three services, over TLS too, with the
 * shipped fixtures by name. Slow: run by `npm run test:package`.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtExecutable } from "./executable.js";
import { call, exerciseDefaultWorld, run, SLOW_STEP_TIMEOUT_MS, startInBackground } from "./support.js";

const ROOT = process.cwd();
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const NAME = process.platform === "win32" ? "standin.exe" : "standin";
const FREE_PORTS = ["--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"];

describe("the single executable, alone in an empty directory with no node on PATH", () => {
  let dir: string;
  let exe: string;
  // Nothing but the executable: no node, no node_modules, no npm configuration.
  const bare = () => ({ PATH: "/nonexistent-bin", HOME: dir });

  beforeAll(async () => {
    const built = await builtExecutable(ROOT);
    dir = mkdtempSync(join(tmpdir(), "standin-exe-"));
    exe = join(dir, NAME);
    copyFileSync(built, exe);
  }, SLOW_STEP_TIMEOUT_MS);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("the directory holds only the executable, and no node is reachable from it", async () => {
    expect(readdirSync(dir)).toEqual([NAME]);
    const lookup = await run("/bin/sh", ["-c", "command -v node"], { cwd: dir, env: bare() });
    expect(lookup.code).not.toBe(0);
  });

  it("--version and --help answer", async () => {
    expect(await run(exe, ["--version"], { cwd: dir, env: bare() })).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    const help = await run(exe, ["--help"], { cwd: dir, env: bare() });
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toMatch(/^Usage: standin \[options\] \[command\]$/m);
    expect(help.stdout).toMatch(/^ {2}start \[options\] +start the emulator on its three ports$/m);
  });

  it("start serves the three services with the default fixture; stop ends it with 0", async () => {
    const readyFile = join(dir, "ready.json");
    const started = await startInBackground(exe, ["start", ...FREE_PORTS, "--ready-file", readyFile], readyFile, { cwd: dir, env: bare() });
    try {
      await exerciseDefaultWorld(started.ready);
      // The dashboard's page and script are embedded too.
      const page = await call(`${started.ready.control}/ui`);
      expect(page.status).toBe(200);
      expect(page.body).toContain("<title>standin dashboard</title>");
      expect((await call(`${started.ready.control}/ui/app.js`)).status).toBe(200);
      expect(started.output()).not.toMatch(/ExperimentalWarning|single executable/i);
      const stop = await run(exe, ["stop", "--ready-file", readyFile], { cwd: dir, env: bare() });
      expect(stop, stop.stderr).toMatchObject({ code: 0, stdout: `standin stopped (pid ${started.ready.pid})\n` });
      expect(await started.exited).toBe(0);
      expect(existsSync(readyFile)).toBe(false);
    } finally {
      started.child.kill("SIGKILL");
    }
  });

  it("a large control document is checked in the executable's own worker thread: refused with the route's answer, or applied", async () => {
    const readyFile = join(dir, "documents-ready.json");
    const started = await startInBackground(exe, ["start", ...FREE_PORTS, "--ready-file", readyFile], readyFile, { cwd: dir, env: bare() });
    try {
      const threads = () => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${started.ready.pid}/status`, "utf8"))?.[1]);
      const before = process.platform === "linux" ? threads() : 0;
      const unknownKeys = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":0`).join(",")}}`;
      const json = { "Content-Type": "application/json" };
      const refused = await call(`${started.ready.control}/fixtures`, { method: "POST", body: unknownKeys, headers: json });
      expect(refused).toEqual({ status: 400, body: JSON.stringify({ error: "fixture[0]: k0: unknown key", problems: ["k0: unknown key"] }) });
      // The checker's thread started (the executable has no script file: it runs the bundled source).
      if (process.platform === "linux") expect(threads()).toBeGreaterThan(before);
      const kv = Array.from({ length: 2_000 }, (_, i) => ({ Key: `big/${i}`, Value: "v".repeat(100) }));
      const applied = await call(`${started.ready.control}/fixtures`, { method: "POST", body: JSON.stringify({ registry: { kv } }), headers: json });
      expect(applied.status, applied.body).toBe(200);
      expect(JSON.parse((await call(`${started.ready.registry}/v1/kv/big/?keys`)).body)).toHaveLength(2_000);
      started.child.kill("SIGTERM");
      expect(await started.exited).toBe(0);
    } finally {
      started.child.kill("SIGKILL");
    }
  });

  it("--tls and a shipped fixture by name: HTTPS with its CA, tokens signed with the embedded keys; SIGTERM exits 0", async () => {
    const readyFile = join(dir, "tls-ready.json");
    const args = ["start", ...FREE_PORTS, "--ready-file", readyFile, "--tls-dir", join(dir, "tls"), "--fixture", "token-expiry"];
    const started = await startInBackground(exe, args, readyFile, { cwd: dir, env: bare() });
    try {
      const ca = readFileSync(started.ready.ca!, "utf8");
      expect(started.ready.echo).toMatch(/^https:/);
      const hi = { method: "POST", body: JSON.stringify({ message: "hi" }), headers: { "Content-Type": "application/json" }, ca };
      expect(await call(`${started.ready.echo}/echo?key=ci-key-1`, hi)).toEqual({ status: 200, body: JSON.stringify({ message: "hi" }) });
      expect((await call(`${started.ready.echo}/echo?key=test-api-key`, hi)).status).toBe(400);

      const minted = await call(`${started.ready.control}/echo/tokens`, { method: "POST", body: JSON.stringify({ scheme: "provider_jwt" }), ca });
      expect(minted.status).toBe(200);
      const token = (JSON.parse(minted.body) as { token: string }).token;
      const header = JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { alg: string; kid: string };
      expect(header).toMatchObject({ alg: "RS256", kid: "standin-test-provider_jwt-1" });
      const authInfo = await call(`${started.ready.echo}/auth/info/providerjwt`, { headers: { Authorization: `Bearer ${token}` }, ca });
      expect(authInfo.status, authInfo.body).toBe(200);

      started.child.kill("SIGTERM");
      expect(await started.exited).toBe(0);
    } finally {
      started.child.kill("SIGKILL");
    }
  });
});
