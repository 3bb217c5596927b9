/**
 * The examples under examples/ run as a user would run them, as child
 * processes against the built package (dist/, which `pretest` builds):
 * `vitest run --root examples/vitest` and `node --test` on examples/node-test.
 * They import `standin/vitest`, `standin/vitest/setup` and `standin/node-test`
 * by the package's own name, through the `exports` map.
 */
import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Each example is a whole test run in a child process (a vitest or node start,
 * module loading, an emulator): seconds normally, far more on a busy machine.
 * The child is stopped a little before the test's own limit so a hang reports
 * its output; neither bound is a claim about speed.
 */
const TEST_TIMEOUT_MS = 180_000;
const CHILD_RUN_LIMIT_MS = 170_000;

interface Outcome {
  code: number;
  output: string;
}

/** The parent's environment without what marks it as a vitest worker (the child is a run of its own). */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NO_COLOR: "1", FORCE_COLOR: "0" };
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(VITEST|VITE_|TEST$|NODE_OPTIONS$|NOMAD_|CONSUL_|STANDIN_|FORCE_COLOR$|NO_COLOR$)/.test(name)) continue;
    env[name] = value;
  }
  return env;
}

function run(command: string, args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: root, env: childEnv(), timeout: CHILD_RUN_LIMIT_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
      resolve({ code, output: `${stdout}\n${stderr}` });
    });
  });
}

describe("examples", () => {
  it("examples/vitest passes under vitest (setupFiles: standin/vitest/setup)", { timeout: TEST_TIMEOUT_MS }, async () => {
    const { code, output } = await run(join(root, "node_modules/.bin/vitest"), ["run", "--root", "examples/vitest"]);
    expect(code, output).toBe(0);
    expect(output).toMatch(/Test Files\s+2 passed \(2\)/);
    expect(output).toMatch(/Tests\s+4 passed \(4\)/);
  });

  it("examples/node-test passes under node --test (standin/node-test)", { timeout: TEST_TIMEOUT_MS }, async () => {
    const dir = "examples/node-test";
    const files = readdirSync(join(root, dir))
      .filter((name) => name.endsWith(".test.mjs"))
      .map((name) => `${dir}/${name}`);
    expect(files).toEqual([`${dir}/sessions.test.mjs`]);
    const { code, output } = await run(process.execPath, ["--test", ...files]);
    expect(code, output).toBe(0);
    expect(output).toMatch(/^# tests 2$/m);
    expect(output).toMatch(/^# pass 2$/m);
    expect(output).toMatch(/^# fail 0$/m);
  });
});
