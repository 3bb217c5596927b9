/**
 * Conformance: the Go test helper (go/standintest) as a Go user runs it. Its
 * own tests start the built `bin/standin` through the helper (STANDIN_BIN) and
 * drive it: in module mode with the standard library only (the module must
 * build offline with no dependencies), and in GOPATH mode with `-tags clients`
 * through HashiCorp's official clients from ../shared/go-clients. Each Go test
 * is one case here, read from `go test -json`. STANDIN_SKIP_GO=1 skips it.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GO, PROJECT_ROOT, SHARED, SKIP_GO } from "./support/go-build.js";

const run = promisify(execFile);
const MODULE_DIR = resolve(PROJECT_ROOT, "go");
const MODULE_PATH = "github.com/standin-dev/standin/go";
const STANDIN_BIN = resolve(PROJECT_ROOT, "bin/standin");

/** The tests each mode must run: one missing from `go test -json` fails. */
const STDLIB_TESTS = [
  "TestStartGivesFourURLsAndTheClockMoves",
  "TestOptionsReachTheCommandLine",
  "TestClockModeOption",
  "TestTLS",
  "TestSetEnv",
  "TestSnapshotRestoreAndApplyFixture",
  "TestAwaitAndAct",
  "TestControlRefusalsFailTheTestWithStandinsMessage",
  "TestAFailedStartIsStandinsOneLineError",
  "TestFindsStandinInNodeModulesLikeNpx",
];
const CLIENT_TESTS = ["TestSessionExpiresWhenTheTestAdvancesTheClock", "TestJobDeploys", "TestLockHandedOver", "TestOfficialClientsOverTLS", "TestDeployAndSessionExpiry"];

interface GoTestEvent {
  Action: string;
  Test?: string;
  Output?: string;
}

/** Each top-level test's outcome (pass/fail/skip) and its output, from `go test -json`. */
function outcomes(stdout: string): Map<string, { action: string; output: string }> {
  const results = new Map<string, { action: string; output: string }>();
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as GoTestEvent;
    if (!event.Test || event.Test.includes("/")) continue;
    const entry = results.get(event.Test) ?? { action: "run", output: "" };
    if (event.Action === "output") entry.output += event.Output ?? "";
    if (["pass", "fail", "skip"].includes(event.Action)) entry.action = event.Action;
    results.set(event.Test, entry);
  }
  return results;
}

/** Runs `go` and keeps its output even when it exits non-zero (a failing test is reported per case). */
async function go(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    return (await run(GO!, args, { cwd, env, timeout: 600_000, maxBuffer: 32 << 20 })).stdout;
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    if (failure.stdout?.includes('"Action"')) return failure.stdout;
    throw new Error(`go ${args.join(" ")} failed: ${failure.stderr || failure.message}`);
  }
}

/** The helper runs bin/standin, which runs dist/: build it when this suite runs on a fresh clone. */
async function ensureBuilt(): Promise<void> {
  if (existsSync(resolve(PROJECT_ROOT, "dist/cli.js"))) return;
  await run(process.execPath, [resolve(PROJECT_ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: PROJECT_ROOT, timeout: 600_000 });
}

function goEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, STANDIN_BIN, GOPROXY: "off", GOFLAGS: "", ...extra };
  // A user's real cluster must not leak into the helper's tests.
  for (const name of ["NOMAD_ADDR", "NOMAD_TOKEN", "NOMAD_CACERT", "CONSUL_HTTP_ADDR", "CONSUL_HTTP_TOKEN", "CONSUL_CACERT", "CONSUL_HTTP_SSL"]) delete env[name];
  return env;
}

function expectEachPassed(results: Map<string, { action: string; output: string }>, test: string): void {
  const result = results.get(test);
  expect(result, `${test} did not run`).toBeDefined();
  expect(result!.action, result!.output).toBe("pass");
}

describe.skipIf(SKIP_GO)("the Go helper (go/standintest)", () => {
  beforeAll(async () => {
    if (!GO) throw new Error("Go ≥ 1.21 is needed for the Go helper's tests (see .ci/run), or STANDIN_SKIP_GO=1 to skip them");
    await ensureBuilt();
  }, 600_000);

  describe("module mode, standard library only", () => {
    const env = goEnv({ GO111MODULE: "on", GOFLAGS: "-mod=mod" });
    let results: Map<string, { action: string; output: string }>;
    beforeAll(async () => {
      results = outcomes(await go(["test", "-count=1", "-json", "./..."], MODULE_DIR, env));
    }, 600_000);

    it("the module requires nothing and imports only the standard library", async () => {
      expect(readFileSync(join(MODULE_DIR, "go.mod"), "utf8")).not.toMatch(/\brequire\b/);
      const { stdout } = await run(GO!, ["list", "-deps", "-test", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./..."], { cwd: MODULE_DIR, env, timeout: 600_000 });
      const outside = stdout.split("\n").filter((path) => path !== "" && !path.startsWith(MODULE_PATH));
      expect(outside).toEqual([]);
    });

    it("go vet finds nothing, for Unix and for Windows", async () => {
      await run(GO!, ["vet", "./..."], { cwd: MODULE_DIR, env, timeout: 600_000 });
      await run(GO!, ["vet", "./..."], { cwd: MODULE_DIR, env: { ...env, GOOS: "windows" }, timeout: 600_000 });
    });

    it("runs exactly the listed tests", () => {
      expect([...results.keys()].sort()).toEqual([...STDLIB_TESTS].sort());
    });
    for (const test of STDLIB_TESTS) it(test, () => expectEachPassed(results, test));
  });

  describe("GOPATH mode with the official clients (-tags clients)", () => {
    let gopath: string;
    let link: string;
    let env: NodeJS.ProcessEnv;
    let results: Map<string, { action: string; output: string }>;
    beforeAll(async () => {
      // GOPATH mode finds the module's package by its import path: a link in a scratch GOPATH.
      gopath = mkdtempSync(join(tmpdir(), "standin-go-helper-"));
      link = join(gopath, "src", MODULE_PATH);
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(MODULE_DIR, link);
      env = goEnv({ GO111MODULE: "off", GOPATH: [gopath, resolve(SHARED, "go-clients/gopath"), "/usr/share/gocode"].join(":") });
      // Only the client tests: module mode has run the others.
      const only = `^(${CLIENT_TESTS.join("|")})$`;
      results = outcomes(await go(["test", "-count=1", "-json", "-tags", "clients", "-run", only, "./..."], link, env));
    }, 600_000);
    afterAll(() => {
      if (gopath) rmSync(gopath, { recursive: true, force: true });
    });

    it("runs exactly the listed tests", () => {
      expect([...results.keys()].sort()).toEqual([...CLIENT_TESTS].sort());
    });
    it("go vet -tags clients finds nothing", async () => {
      await run(GO!, ["vet", "-tags", "clients", "./..."], { cwd: link, env, timeout: 600_000 });
    });
    for (const test of CLIENT_TESTS) it(test, () => expectEachPassed(results, test));
  });

  it("docs/go.md's full example is example_clients_test.go, as run here", () => {
    const page = readFileSync(resolve(PROJECT_ROOT, "docs/go.md"), "utf8");
    const example = readFileSync(join(MODULE_DIR, "standintest/example_clients_test.go"), "utf8");
    const blocks = [...page.matchAll(/```go\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toContain(example);
  });
});
