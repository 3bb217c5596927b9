/**
 * How the CLI fails and what its help says: every error one line without a
 * stack trace (bad option values with one usage line, files that cannot be
 * read or written, URLs that are not a standin's), a port given to two
 * services, `--url host:port` taken as http, and the help's environment
 * variables, token schemes and defaults. Child processes of the built CLI;
 * nothing depends on the machine's speed.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, runCli, sharedCli } from "./support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "standin-cli-errors-"));

/** One line, no stack frame: what every failure must look like. */
function expectOneLine(stderr: string): void {
  expect(stderr.endsWith("\n")).toBe(true);
  expect(stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
}

function occupyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

describe("usage errors", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("a bad option value prints the reason and one usage line, exit 1", async () => {
    const res = await runCli(["start", "--scheduler-port", "abc"]);
    expect(res).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: option '--scheduler-port <n>' argument 'abc' is invalid. expected a non-negative integer\nusage: standin start [options]  (see standin start --help)\n",
    });
  });

  it("an unknown option, a missing argument and an unknown command each get the same two lines", async () => {
    // Independent child processes, run side by side (each is its own process whichever order they run in).
    const [unknown, missing, command] = await Promise.all([runCli(["journal", "--bogus"]), runCli(["snapshot", "save"]), runCli(["frobnicate"])]);
    expect(unknown).toMatchObject({ code: 1, stderr: "error: unknown option '--bogus'\nusage: standin journal [options] [journal]  (see standin journal --help)\n" });
    expect(missing).toMatchObject({
      code: 1,
      stderr: "error: missing required argument 'file'\nusage: standin snapshot save [options] <file>  (see standin snapshot save --help)\n",
    });
    // A word no command resembles (commander adds "Did you mean …?" for a near one: "frob" is near "job").
    expect(command).toMatchObject({ code: 1, stderr: "error: unknown command 'frobnicate'\nusage: standin [options] [command]  (see standin --help)\n" });
  });

  it("two services given the same port are refused before anything listens, naming both and the port", async () => {
    // The port is taken: without the check, start would fail on it with another message (not hang on a free one).
    const { server, port } = await occupyPort();
    try {
      const res = await runCli(["start", "--scheduler-port", String(port), "--registry-port", "0", "--echo-port", String(port)]);
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(`standin: scheduler (--scheduler-port) and echo (--echo-port) are both given port ${port}: each service needs its own port (0 = any free port)\n`);
    } finally {
      server.close();
    }
  });
});

describe("start's option errors name the option", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("a --start-time that is not a timestamp is the option's error, not the fixture's", async () => {
    expect(await runCli(["start", "--start-time", "garbage"])).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: option '--start-time <iso|now>' argument 'garbage' is invalid. expected now or an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z\n" +
        "usage: standin start [options]  (see standin start --help)\n",
    });
    const outOfRange = await runCli(["start", "--start-time", "2026-02-30T00:00:00Z"]);
    expect(outOfRange.stderr.split("\n")[0]).toBe(
      "error: option '--start-time <iso|now>' argument '2026-02-30T00:00:00Z' is invalid. expected now or an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z (field out of range)",
    );
  });

  it("--port names the three port options instead of suggesting --host", async () => {
    const res = await runCli(["start", "--port", "4646"]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      "error: unknown option '--port'\n(each service has its own: --scheduler-port, --registry-port, --echo-port; 0 = any free port)\n" +
        "usage: standin start [options]  (see standin start --help)\n",
    );
    expect(res.stderr).not.toContain("--host");
  });
});

describe("a file that cannot be read reads the same everywhere", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("start --fixture, fixtures check, replay, ui and job plan: cannot read <file>: ENOENT: no such file or directory", async () => {
    const missing = join(dir, "nowhere.json");
    const said = `cannot read ${missing}: ENOENT: no such file or directory\n`;
    const runs = await Promise.all([
      runCli(["start", "--fixture", missing]),
      runCli(["fixtures", "check", missing]),
      runCli(["replay", missing]),
      runCli(["ui", missing]),
      runCli(["job", "plan", missing]),
    ]);
    expect(runs.map((r) => r.stderr)).toEqual([`standin: ${said}`, `standin: ${said}`, `standin replay: ${said}`, `standin ui: ${said}`, `standin job plan: ${said}`]);
    expect(runs.map((r) => r.code)).toEqual([1, 1, 1, 1, 255]);
  });
});

describe("client command failures", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const emulator = sharedCli();
  const hostPort = () => emulator().urls.scheduler!.replace(/^http:\/\//, "");

  it("--url host:port (the CONSUL_HTTP_ADDR form) is taken as http://host:port, from the flag or STANDIN_URL", async () => {
    const [flag, env] = await Promise.all([runCli(["clock", "--url", hostPort()]), runCli(["clock"], { ...process.env, STANDIN_URL: hostPort() })]);
    expect(flag.stderr).toBe("");
    expect(JSON.parse(flag.stdout)).toMatchObject({ mode: "manual" });
    expect(env.stderr).toBe("");
    expect(JSON.parse(env.stdout)).toMatchObject({ mode: "manual" });
  });

  it("a flag wins over its environment variable", async () => {
    const res = await runCli(["clock", "--url", hostPort()], { ...process.env, STANDIN_URL: "http://127.0.0.1:1" });
    expect(res.code).toBe(0);
  });

  it("--url that is not an http URL fails in one line", async () => {
    const [spaced, ftp, waitReady] = await Promise.all([
      runCli(["clock", "--url", "ht tp://x"]),
      runCli(["clock", "--url", "ftp://x"]),
      runCli(["wait-ready", "--url", "ht tp://x"]),
    ]);
    expect(spaced).toMatchObject({
      code: 1,
      stderr: 'standin: --url "ht tp://x" is not a URL (expected e.g. http://127.0.0.1:4646 or 127.0.0.1:4646)\n',
    });
    expect(ftp).toMatchObject({ code: 1, stderr: 'standin: --url "ftp://x": expected an http or https URL\n' });
    expect(waitReady).toMatchObject({ code: 1, stderr: expect.stringMatching(/^standin wait-ready: --url "ht tp:\/\/x" is not a URL/) });
  });

  it("https against a plain-HTTP standin says it does not answer TLS", async () => {
    const res = await runCli(["clock", "--url", `https://${hostPort()}`]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`standin: cannot reach https://${hostPort()}: it does not answer TLS (an http:// URL?)\n`);
  });

  it("snapshot load of a missing file, a directory or a file that is not JSON fails in one line", async () => {
    const missing = join(dir, "missing.json");
    const notJson = join(dir, "not.json");
    writeFileSync(notJson, "{\n");
    // None of them loads anything, so they can run side by side against the one standin.
    const [ofMissing, ofDir, res] = await Promise.all([missing, dir, notJson].map((file) => runCli(["snapshot", "load", file, "--url", hostPort()])));
    expect(ofMissing).toMatchObject({
      code: 1,
      stderr: `standin snapshot load: cannot read ${missing}: ENOENT: no such file or directory\n`,
    });
    expect(ofDir).toMatchObject({
      code: 1,
      stderr: `standin snapshot load: cannot read ${dir}: EISDIR: it is a directory\n`,
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^standin snapshot load: ${notJson.replace(/[.]/g, "\\.")} is not JSON: `));
    expectOneLine(res.stderr);
  });

  it("snapshot save into a missing directory or onto a directory fails in one line", async () => {
    const inMissing = join(dir, "no-such-dir", "snap.json");
    const [ofMissing, ofDir] = await Promise.all([inMissing, dir].map((file) => runCli(["snapshot", "save", file, "--url", hostPort()])));
    expect(ofMissing).toMatchObject({
      code: 1,
      stderr: `standin snapshot save: cannot write ${inMissing}: ENOENT: no such file or directory\n`,
    });
    expect(ofDir).toMatchObject({
      code: 1,
      stderr: `standin snapshot save: cannot write ${dir}: EISDIR: it is a directory\n`,
    });
  });

  it("--ca that cannot be read fails in one line", async () => {
    const missing = join(dir, "no-ca.pem");
    expect(await runCli(["clock", "--url", `https://${hostPort()}`, "--ca", missing])).toMatchObject({
      code: 1,
      stderr: `standin: cannot read --ca ${missing}: ENOENT: no such file or directory\n`,
    });
  });
});

describe("a URL that is not a standin's", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("an answer that is not JSON fails in one line saying what answered", async () => {
    const server = createHttpServer((_req, res) => res.writeHead(404, { "Content-Type": "text/html" }).end("<!DOCTYPE html>\n<html><body>Not Found</body></html>\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const commands = [["clock"], ["advance", "1s"], ["journal"], ["await", "index", "above=0"]];
      const results = await Promise.all(commands.map((args) => runCli([...args, "--url", `127.0.0.1:${port}`])));
      for (const res of results) {
        expect(res.code).toBe(1);
        expect(res.stderr).toMatch(
          new RegExp(`^standin: (GET|POST) /_standin/\\S+ at http://127\\.0\\.0\\.1:${port} answered 404 "<!DOCTYPE html>", not JSON: is it a standin's URL\\?\\n$`),
        );
      }
    } finally {
      server.close();
    }
  });
});

describe("help", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("standin --help lists the environment variables and the control API's Bearer scheme", async () => {
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    for (const variable of ["STANDIN_URL", "STANDIN_CONTROL_TOKEN", "STANDIN_CA", "STANDIN_DEBUG"]) expect(help.stdout).toMatch(new RegExp(`^  ${variable}`, "m"));
    expect(help.stdout).toContain('"Authorization: Bearer <secret>"');
    for (const command of ["act", "await", "journal"]) expect(help.stdout).toMatch(new RegExp(`^  ${command} \\[options\\]`, "m"));
  });

  it("a client command's help shows each option's default and environment variable", async () => {
    const help = (await runCli(["journal", "--help"])).stdout.replace(/\s+/g, " ");
    expect(help).toContain('(default: "http://127.0.0.1:4646", env: STANDIN_URL)');
    expect(help).toContain("Authorization: Bearer <secret> (env: STANDIN_CONTROL_TOKEN)");
    expect(help).toContain("(env: STANDIN_CA)");
    expect(help).toContain('(choices: "requests", "events", default: "requests")');
  });

  it("token's help names the token schemes; start's shows its defaults", async () => {
    const token = (await runCli(["token", "--help"])).stdout.replace(/\s+/g, " ");
    expect(token).toContain('choices: "provider_jwt", "app_default_service_account", "provider_service_account", "provider_id_token", "identity_platform"');
    const start = (await runCli(["start", "--help"])).stdout.replace(/\s+/g, " ");
    for (const shown of [
      "(default: 4646)",
      "(default: 8500)",
      "(default: 8080)",
      '(default: "127.0.0.1")',
      "(default: 1000)",
      "(default: the shipped default)",
      "(default: 24m)",
    ]) {
      expect(start).toContain(shown);
    }
  });
});
