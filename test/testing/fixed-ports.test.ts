/**
 * The test helpers on fixed ports (`useStandin({ ports })`): the ports are
 * asked of the OS first (a listener on port 0, closed again), then given; the
 * emulator must answer on exactly those. A port already taken fails the start
 * with a message that says what to do.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { useStandinWith } from "../../src/testing/shared.js";
import { manualHooks } from "../support/manual-hooks.js";
import { useStandin } from "../../src/testing/vitest.js";
import { CLI_TEST_TIMEOUT_MS } from "../support/cli.js";

/** A port the OS says is free now (its listener closed again before it is used). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function occupiedPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

async function ready(url: string): Promise<number> {
  return (await fetch(`${url}/_standin/ready`)).status;
}

const fixed = { scheduler: await freePort(), registry: await freePort(), echo: await freePort() };

describe("useStandin({ ports }) (vitest hooks)", () => {
  const standin = useStandin({ ports: fixed, env: false });

  it("listens on the ports given, and the URLs and variables name them", async () => {
    expect(standin.ports).toEqual(fixed);
    expect(standin.urls).toEqual({
      scheduler: `http://127.0.0.1:${fixed.scheduler}`,
      registry: `http://127.0.0.1:${fixed.registry}`,
      echo: `http://127.0.0.1:${fixed.echo}`,
      control: `http://127.0.0.1:${fixed.scheduler}/_standin`,
    });
    expect(standin.env.NOMAD_ADDR).toBe(`http://127.0.0.1:${fixed.scheduler}`);
    expect(standin.env.CONSUL_HTTP_ADDR).toBe(`127.0.0.1:${fixed.registry}`);
    for (const port of Object.values(fixed)) expect(await ready(`http://127.0.0.1:${port}`)).toBe(200);
  });
});

describe("useStandin({ ports }) (hooks run by hand)", () => {
  it("fixes only the ports given; the others are any free port", async () => {
    const registry = await freePort();
    const { hooks, run } = manualHooks();
    const handle = useStandinWith(hooks, { env: false, ports: { registry } });
    try {
      await run("beforeAll");
      expect(handle.ports.registry).toBe(registry);
      expect(handle.ports.scheduler).toBeGreaterThan(0);
      expect(handle.ports.echo).toBeGreaterThan(0);
      expect(new Set(Object.values(handle.ports)).size).toBe(3);
      for (const url of [handle.urls.scheduler, handle.urls.registry, handle.urls.echo]) expect(await ready(url)).toBe(200);
    } finally {
      await run("afterAll");
    }
  });

  it("fails the start on a fixed port already in use, saying which and what to do", async () => {
    const { server, port } = await occupiedPort();
    const { hooks, run } = manualHooks();
    const handle = useStandinWith(hooks, { env: false, ports: { scheduler: port } });
    try {
      const failure = run("beforeAll");
      await expect(failure).rejects.toThrow(`standin: port ${port} on 127.0.0.1 (scheduler) is already in use; with fixed ports only one emulator can run at a time`);
      await expect(failure).rejects.toThrow("fileParallelism: false");
      expect(() => handle.emulator).toThrow(/not available yet/);
    } finally {
      await run("afterAll");
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("useStandin({ ports }) (standin/node-test, under node --test)", () => {
  it("listens on the ports given", { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const ports = { scheduler: await freePort(), registry: await freePort(), echo: await freePort() };
    const dir = mkdtempSync(join(tmpdir(), "standin-fixed-ports-"));
    const file = join(dir, "fixed-ports.test.mjs");
    const helper = pathToFileURL(join(process.cwd(), "dist/testing/node-test.js")).href;
    writeFileSync(
      file,
      `import assert from "node:assert/strict";
import { test } from "node:test";
import { useStandin } from ${JSON.stringify(helper)};
const ports = ${JSON.stringify(ports)};
const standin = useStandin({ ports });
test("fixed ports", async () => {
  assert.deepEqual(standin.ports, ports);
  assert.equal(process.env.NOMAD_ADDR, "http://127.0.0.1:" + ports.scheduler);
  for (const port of Object.values(ports)) assert.equal((await fetch("http://127.0.0.1:" + port + "/_standin/ready")).status, 200);
});
`,
    );
    const outcome = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(process.execPath, ["--test", file], { timeout: CLI_TEST_TIMEOUT_MS - 10_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
    });
    expect(outcome.code, outcome.output).toBe(0);
    expect(outcome.output).toMatch(/^# pass 1$/m);
    expect(outcome.output).toMatch(/^# fail 0$/m);
  });
});

describe("useStandin({ ports }) in a setup file of one's own (standin/vitest, under vitest), as docs/testing.md shows it", () => {
  it("started at once, the variables are set while test files are imported, and a test file with the same options shares it", { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const ports = { scheduler: await freePort(), registry: await freePort(), echo: await freePort() };
    const dir = mkdtempSync(join(tmpdir(), "standin-setup-ports-"));
    const helper = JSON.stringify(pathToFileURL(join(process.cwd(), "dist/testing/vitest.js")).href);
    writeFileSync(join(dir, "standin-ports.mjs"), `export const ports = ${JSON.stringify(ports)};\n`);
    writeFileSync(join(dir, "standin.setup.mjs"), `import { useStandin } from ${helper};\nimport { ports } from "./standin-ports.mjs";\nawait useStandin({ ports }).start();\n`);
    // No import of vitest/config: the directory has no node_modules to find it in.
    writeFileSync(join(dir, "vitest.config.mjs"), `export default { test: { include: ["*.test.mjs"], setupFiles: ["./standin.setup.mjs"], fileParallelism: false } };\n`);
    writeFileSync(
      join(dir, "sessions.test.mjs"),
      `import { expect, test } from "vitest";
import { useStandin } from ${helper};
import { ports } from "./standin-ports.mjs";
const standin = useStandin({ ports });
// Read at import, as the README's test file does: the setup file's start() has set it.
const [host, port] = process.env.CONSUL_HTTP_ADDR.split(":");
const registry = \`http://\${host}:\${port}\`;
test("a session expires at 2xTTL on the shared emulator", async () => {
  expect(Number(port)).toBe(ports.registry);
  const { ID } = await (await fetch(\`\${registry}/v1/session/create\`, { method: "PUT", body: JSON.stringify({ TTL: "15s" }) })).json();
  standin.advance("30s");
  expect(await (await fetch(\`\${registry}/v1/session/info/\${ID}\`)).json()).toEqual([]);
});
`,
    );
    const env: NodeJS.ProcessEnv = { NO_COLOR: "1" };
    for (const [name, value] of Object.entries(process.env)) if (!/^(VITEST|VITE_|TEST$|NODE_OPTIONS$|NOMAD_|CONSUL_|STANDIN_)/.test(name)) env[name] = value;
    const outcome = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        join(process.cwd(), "node_modules/.bin/vitest"),
        ["run", "--root", dir, "--config", join(dir, "vitest.config.mjs")],
        { cwd: dir, env, timeout: CLI_TEST_TIMEOUT_MS - 10_000 },
        (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
      );
    });
    expect(outcome.code, outcome.output).toBe(0);
    expect(outcome.output).toMatch(/Tests\s+1 passed \(1\)/);
  });
});
