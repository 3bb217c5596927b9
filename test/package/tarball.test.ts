/**
 * The npm package as a consumer gets it: `npm pack` (prepack builds dist/),
 * installed from the tarball into a scratch project that has no TypeScript
 * and no clone of standin, then `npx standin start`, the vitest helper and the
 * node:test helper run there. Also an install from a git URL (npm builds it
 * through postprepare). Slow: run by `npm run test:package`, not the unit suite.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, exerciseDefaultWorld, run, SLOW_STEP_TIMEOUT_MS, startInBackground, type Finished } from "./support.js";

const ROOT = process.cwd();
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
// The consumer installs the vitest this project was tested with: it is in the npm cache after `npm ci`.
const VITEST_VERSION = (JSON.parse(readFileSync(join(ROOT, "node_modules/vitest/package.json"), "utf8")) as { version: string }).version;
const INSTALL_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund"];

const VITEST_TEST = `
import { describe, expect, it } from "vitest";
import { useStandin } from "standin/vitest";

// A shipped fixture by name: token-expiry's only API key is ci-key-1.
const standin = useStandin({ fixture: "token-expiry" });

const echo = (key) =>
  fetch(\`\${process.env.STANDIN_ECHO_URL}/echo?key=\${key}\`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"hi"}' });

describe("standin/vitest in a consumer", () => {
  it("runs the named fixture and sets the environment", async () => {
    expect((await echo("ci-key-1")).status).toBe(200);
    expect((await echo("test-api-key")).status).toBe(400);
    expect((await fetch(\`http://\${process.env.NOMAD_ADDR.replace(/^https?:\\/\\//, "")}/v1/jobs\`)).status).toBe(200);
    standin.advance("10m"); // ci-key-1 is revoked at 10m
    expect((await echo("ci-key-1")).status).toBe(400);
  });

  it("resets before every test", async () => {
    expect(standin.emulator.clock.nowText()).toBe("2026-01-01T00:00:00Z");
    expect((await echo("ci-key-1")).status).toBe(200);
  });
});
`;

const NODE_TEST = `
import assert from "node:assert/strict";
import { test } from "node:test";
import { useStandin } from "standin/node-test";

const standin = useStandin();

test("a KV write is there to read", async () => {
  const put = await fetch(\`\${standin.urls.registry}/v1/kv/from-node-test\`, { method: "PUT", body: "yes" });
  assert.equal(await put.text(), "true");
  assert.equal(await (await fetch(\`\${standin.urls.registry}/v1/kv/from-node-test?raw\`)).text(), "yes");
});

test("the next test starts from the start state", async () => {
  assert.equal((await fetch(\`\${standin.urls.registry}/v1/kv/from-node-test\`)).status, 404);
});
`;

/** Scratch directories (packs, consumers, a repository), removed once the file is done. */
const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratchDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `standin-${name}-`));
  scratch.push(dir);
  return dir;
}

function scratchConsumer(name: string): string {
  const dir = scratchDir(name);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "standin-consumer", private: true, type: "module" }, null, 2));
  return dir;
}

function expectInstalled(step: Finished): void {
  expect(step, step.stderr).toMatchObject({ code: 0 });
  // No "install scripts not yet covered by allowScripts" (npm 11 flags a dependency's prepare script) or other warning about standin.
  expect(step.stderr).not.toMatch(/standin@.*\((preinstall|install|postinstall|prepare):/);
}

describe("the npm tarball installed in a consumer project", () => {
  let packed: Finished;
  let tarball: string;
  let files: string[];
  let consumer: string;
  let install: Finished;

  beforeAll(async () => {
    const out = scratchDir("pack");
    packed = await run("npm", ["pack", "--pack-destination", out], { cwd: ROOT });
    expect(packed, packed.stderr).toMatchObject({ code: 0 });
    tarball = join(out, `standin-${VERSION}.tgz`);
    files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map((path) => path.replace(/^package\//, ""));
    consumer = scratchConsumer("consumer");
    install = await run("npm", ["install", "--save-dev", ...INSTALL_FLAGS, tarball, `vitest@${VITEST_VERSION}`], { cwd: consumer });
  }, SLOW_STEP_TIMEOUT_MS);

  it("npm pack builds on prepack, with no prepare script to warn about", () => {
    expect(packed.stdout).toContain(`> standin@${VERSION} prepack`);
    expect(packed.stdout + packed.stderr).not.toMatch(/prepare/);
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(manifest.scripts).not.toHaveProperty("prepare");
  });

  it("the tarball holds LICENSE, dist/, fixtures/, keys/ and the bin; no sources, tests or source maps", () => {
    // dist/bundle/standin.cjs: the command line in one script, which bin/standin runs (scripts/build-cli.mjs).
    for (const file of [
      "LICENSE",
      "README.md",
      "package.json",
      "bin/standin",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cli.js",
      "dist/bundle/standin.cjs",
      "keys/test-keys.json",
    ]) {
      expect(files).toContain(file);
    }
    for (const subpath of ["vitest", "vitest-setup", "node-test"]) expect(files).toContain(`dist/testing/${subpath}.js`);
    expect(files.filter((f) => f.startsWith("fixtures/")).sort()).toEqual([
      "fixtures/default.json",
      "fixtures/leader-election-failover.json",
      "fixtures/rolling-deploy-failing-canary.json",
      "fixtures/token-expiry.json",
    ]);
    // The dashboard's page (built by scripts/build-ui.mjs) ships as three static files.
    for (const asset of ["index.html", "app.js", "app.css"]) expect(files).toContain(`dist/ui-page/${asset}`);
    const unexpected = files.filter(
      (f) =>
        !/^(LICENSE|README\.md|package\.json|bin\/standin|dist\/.+\.(js|d\.ts)|dist\/bundle\/standin\.cjs|dist\/ui-page\/(index\.html|app\.css)|fixtures\/[\w-]+\.json|keys\/test-keys\.json)$/.test(
          f,
        ),
    );
    expect(unexpected).toEqual([]);
    expect(files.filter((f) => /\.map$|\.test\.|^src\/|^test\/|sea-main/.test(f))).toEqual([]);
  });

  it("installs with no TypeScript build and no install-script warning, and ships no source map reference", () => {
    expectInstalled(install);
    const installed = join(consumer, "node_modules/standin");
    expect(existsSync(join(installed, "dist/cli.js"))).toBe(true);
    expect(existsSync(join(consumer, "node_modules/typescript"))).toBe(false);
    expect(readFileSync(join(installed, "dist/index.js"), "utf8")).not.toContain("sourceMappingURL");
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toContain("Copyright (c) 2026 the standin authors");
  });

  it("exports the shipped fixtures: names and paths inside the installed package", async () => {
    const script = `import { shippedFixtureNames, shippedFixturePath } from "standin"; console.log(JSON.stringify([shippedFixtureNames(), shippedFixturePath("default")]));`;
    const result = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: consumer });
    expect(result, result.stderr).toMatchObject({ code: 0 });
    const [names, path] = JSON.parse(result.stdout) as [string[], string];
    expect(names).toEqual(["default", "leader-election-failover", "rolling-deploy-failing-canary", "token-expiry"]);
    expect(path).toBe(join(consumer, "node_modules/standin/fixtures/default.json"));
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ seed: 1 });
  });

  it("npx standin start serves the three services with the shipped default fixture; npx standin stop ends it with 0", async () => {
    const readyFile = join(consumer, "standin-ready.json");
    const args = ["--no", "standin", "start", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0", "--ready-file", readyFile];
    const started = await startInBackground("npx", args, readyFile, { cwd: consumer, env: cleanEnv() });
    try {
      await exerciseDefaultWorld(started.ready);
      const stop = await run("npx", ["--no", "standin", "stop", "--ready-file", readyFile], { cwd: consumer });
      expect(stop, stop.stderr).toMatchObject({ code: 0, stdout: `standin stopped (pid ${started.ready.pid})\n` });
      expect(await started.exited).toBe(0);
      expect(existsSync(readyFile)).toBe(false);
    } finally {
      started.child.kill("SIGKILL");
    }
  });

  it("a vitest test file using standin/vitest passes there", async () => {
    const dir = join(consumer, "vitest-suite");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "echo.test.mjs"), VITEST_TEST);
    const report = join(consumer, "vitest-report.json");
    const result = await run("npx", ["--no", "vitest", "run", "--root", dir, "--reporter=json", `--outputFile=${report}`], { cwd: consumer });
    expect(result, result.stdout + result.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(readFileSync(report, "utf8"))).toMatchObject({ numPassedTests: 2, numFailedTests: 0, numTotalTests: 2 });
  });

  it("a node:test file using standin/node-test passes there", async () => {
    writeFileSync(join(consumer, "kv.test.mjs"), NODE_TEST);
    const result = await run(process.execPath, ["--test", "--test-reporter=tap", "kv.test.mjs"], { cwd: consumer });
    expect(result, result.stdout + result.stderr).toMatchObject({ code: 0 });
    expect(result.stdout).toMatch(/^# pass 2$/m);
    expect(result.stdout).toMatch(/^# fail 0$/m);
  });
});

function insideGitWorkTree(): boolean {
  try {
    return execFileSync("git", ["rev-parse", "--is-inside-work-tree"], { cwd: ROOT, encoding: "utf8" }).trim() === "true";
  } catch {
    return false;
  }
}

describe("installed from a git URL", () => {
  // The git install is of a commit, so the working tree (with any uncommitted change) is committed into a scratch repository first.
  it.skipIf(!insideGitWorkTree())(
    "npm builds dist/ while installing (postprepare) and standin runs",
    async () => {
      const repo = scratchDir("git");
      // The project's files as a fresh clone has them (tracked and new, not ignored), working-tree changes included.
      const tracked = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
      for (const file of tracked) if (existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(repo, file), { recursive: true });
      const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=standin", "-c", "user.email=standin@example.invalid", ...args], { cwd: repo });
      git("init", "-q");
      git("add", "-A");
      git("commit", "-q", "-m", "snapshot");
      const consumer = scratchConsumer("git-consumer");
      const install = await run("npm", ["install", ...INSTALL_FLAGS, `git+file://${repo}`], { cwd: consumer });
      expectInstalled(install);
      expect(existsSync(join(consumer, "node_modules/standin/dist/cli.js"))).toBe(true);
      const check = await run("npx", ["--no", "standin", "fixtures", "check", "default"], { cwd: consumer });
      expect(check, check.stderr).toMatchObject({ code: 0, stdout: "ok default\n" });
    },
    SLOW_STEP_TIMEOUT_MS,
  );
});
