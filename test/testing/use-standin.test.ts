/**
 * The test-runner integration (`standin/vitest`, `src/testing/*`): env vars
 * pointing at live ports, a reset before every test, one shared instance per
 * set of options in a worker, closing with the last user, clear errors when
 * the handle is used outside the emulator's lifetime.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useStandin } from "../../src/testing/vitest.js";
import { useStandinWith, type StandinHandle } from "../../src/testing/shared.js";
import { manualHooks } from "../support/manual-hooks.js";

const ENV_NAMES = ["NOMAD_ADDR", "CONSUL_HTTP_ADDR", "STANDIN_ECHO_URL", "STANDIN_SCHEDULER_URL", "STANDIN_REGISTRY_URL", "STANDIN_CONTROL_URL", "STANDIN_URL"] as const;

// Captured while the file is collected, before any hook has run.
const standin = useStandin({ seed: 7 });
let earlyError: unknown;
try {
  void standin.emulator;
} catch (error) {
  earlyError = error;
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  expect(response.status, url).toBe(200);
  return (await response.json()) as T;
}

async function createSession(registryUrl: string, name: string): Promise<string> {
  const { ID } = await json<{ ID: string }>(`${registryUrl}/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: name, TTL: "15s" }) });
  return ID;
}

async function sessionNames(registryUrl: string): Promise<string[]> {
  return (await json<Array<{ Name: string }>>(`${registryUrl}/v1/session/list`)).map((s) => s.Name);
}

describe("useStandin (vitest hooks)", () => {
  it("throws a clear error when the handle is used before beforeAll ran", () => {
    expect(earlyError).toBeInstanceOf(Error);
    expect((earlyError as Error).message).toMatch(/^standin: emulator is not available yet: useStandin\(\) starts the emulator in a vitest before-all hook/);
  });

  it("sets the clients' environment variables to the live ports", async () => {
    const { urls, ports } = standin;
    expect(process.env.NOMAD_ADDR).toBe(urls.scheduler);
    expect(process.env.NOMAD_ADDR).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(process.env.CONSUL_HTTP_ADDR).toBe(`127.0.0.1:${ports.registry}`);
    expect(process.env.STANDIN_ECHO_URL).toBe(urls.echo);
    expect(process.env.STANDIN_SCHEDULER_URL).toBe(urls.scheduler);
    expect(process.env.STANDIN_REGISTRY_URL).toBe(urls.registry);
    expect(process.env.STANDIN_CONTROL_URL).toBe(`${urls.scheduler}/_standin`);
    expect(process.env.STANDIN_URL).toBe(urls.scheduler);
    expect(standin.env).toEqual(Object.fromEntries(ENV_NAMES.map((name) => [name, process.env[name]])));

    // Every one answers: the scheduler, the registry (host:port, Consul's form), echo, the control API.
    expect((await fetch(`${process.env.NOMAD_ADDR}/v1/agent/health`)).status).toBe(200);
    expect(await json(`http://${process.env.CONSUL_HTTP_ADDR}/v1/session/list`)).toEqual([]);
    expect((await json<{ ready: boolean }>(`${process.env.STANDIN_ECHO_URL}/_standin/ready`)).ready).toBe(true);
    expect((await json<{ seed: number }>(`${process.env.STANDIN_CONTROL_URL}/ready`)).seed).toBe(7);
  });

  it("changes state and moves the clock (the next test must not see it)", async () => {
    await createSession(standin.urls.registry, "leftover");
    const fired = standin.advance("29s");
    expect(fired).toEqual([]);
    expect(standin.emulator.clock.nowText()).toBe("2026-01-01T00:00:29Z");
    expect(standin.emulator.events.query({ where: (e) => e.type === "clock.advance" }).map((e) => e.detail)).toEqual([{ by: "29s" }]);
    expect(await sessionNames(standin.urls.registry)).toEqual(["leftover"]);
  });

  it("resets the state before every test", async () => {
    expect(await sessionNames(standin.urls.registry)).toEqual([]);
    expect(standin.emulator.clock.nowText()).toBe("2026-01-01T00:00:00Z");
    expect(standin.emulator.requests.query({}).length).toBe(1); // just the list above
  });

  it("advance fires what is due; reset() goes back to the start state within a test", async () => {
    const id = await createSession(standin.urls.registry, "expires");
    const fired = standin.advance(30_000); // 2×TTL
    expect(fired.map((f) => f.subject)).toContain(id);
    expect(await sessionNames(standin.urls.registry)).toEqual([]);
    await createSession(standin.urls.registry, "again");
    await standin.reset();
    expect(await sessionNames(standin.urls.registry)).toEqual([]);
    expect(standin.emulator.clock.nowText()).toBe("2026-01-01T00:00:00Z");
  });

  describe("a second user with the same options", () => {
    const inner = useStandin({ seed: 7 });

    it("shares the worker's instance (kept on globalThis under a registered symbol)", () => {
      expect(inner.emulator).toBe(standin.emulator);
      expect(inner.urls).toEqual(standin.urls);
      const registry = (globalThis as Record<symbol, Map<string, { users: number }>>)[Symbol.for("standin.testing.instances")]!;
      const entries = [...registry.values()];
      expect(entries).toHaveLength(1);
      expect(entries[0]!.users).toBe(2);
    });
  });

  it("keeps running when the inner user is done (closes with the last user only)", async () => {
    expect((await fetch(`${standin.urls.scheduler}/v1/agent/health`)).status).toBe(200);
    const registry = (globalThis as Record<symbol, Map<string, { users: number }>>)[Symbol.for("standin.testing.instances")]!;
    expect([...registry.values()].map((e) => e.users)).toEqual([1]);
  });

  let otherHandle: StandinHandle | undefined;
  let otherUrl = "";
  describe("a user with other options and env: false", () => {
    const other = useStandin({ seed: 8, env: false, reset: false });
    otherHandle = other;

    it("gets its own instance and leaves process.env alone", async () => {
      otherUrl = other.urls.scheduler;
      expect(other.emulator).not.toBe(standin.emulator);
      expect(other.urls.scheduler).not.toBe(standin.urls.scheduler);
      expect(process.env.NOMAD_ADDR).toBe(standin.urls.scheduler);
      expect(other.env.NOMAD_ADDR).toBe(other.urls.scheduler);
      expect((await json<{ seed: number }>(`${other.urls.control}/ready`)).seed).toBe(8);
      await createSession(other.urls.registry, "kept");
    });

    it("with reset: false, keeps the state between tests", async () => {
      expect(await sessionNames(other.urls.registry)).toEqual(["kept"]);
    });
  });

  it("closed that instance after its block, with a clear error on late use", async () => {
    expect(otherUrl).not.toBe("");
    await expect(fetch(`${otherUrl}/_standin/ready`)).rejects.toThrow();
    expect(() => otherHandle!.emulator).toThrow(/^standin: emulator is not available any more: the emulator was closed/);
    expect(() => otherHandle!.advance("1s")).toThrow(/advance\(\) is not available any more/);
  });
});

describe("useStandin lifecycle (hooks run by hand)", () => {
  it("restores the environment after the last user, and start() starts before the hooks", async () => {
    const before = Object.fromEntries(ENV_NAMES.map((name) => [name, process.env[name]]));
    const a = manualHooks();
    const b = manualHooks();
    const first = useStandinWith(a.hooks, { seed: 99 });
    const second = useStandinWith(b.hooks, { seed: 99 });
    try {
      expect(await first.start()).toBe(first);
      expect(process.env.NOMAD_ADDR).toBe(first.urls.scheduler);
      await a.run("beforeAll"); // finds it started
      await b.run("beforeAll");
      expect(second.emulator).toBe(first.emulator);

      await createSession(first.urls.registry, "x");
      await b.run("beforeEach");
      expect(await sessionNames(first.urls.registry)).toEqual([]);

      await b.run("afterAll");
      expect((await fetch(`${first.urls.scheduler}/v1/agent/health`)).status).toBe(200);
      expect(process.env.NOMAD_ADDR).toBe(first.urls.scheduler);
      const url = first.urls.scheduler;
      await a.run("afterAll");
      await expect(fetch(`${url}/v1/agent/health`)).rejects.toThrow();
      expect(Object.fromEntries(ENV_NAMES.map((name) => [name, process.env[name]]))).toEqual(before);
    } finally {
      await b.run("afterAll");
      await a.run("afterAll");
    }
  });

  it("passes the fixture through, and starts again after a close", async () => {
    const hooks = manualHooks();
    const handle = useStandinWith(hooks.hooks, {
      env: false,
      fixture: { seed: 5, registry: { sessions: [{ Name: "from-fixture", TTL: "10s" }] } },
    });
    try {
      await hooks.run("beforeAll");
      expect(handle.emulator.seed).toBe(5);
      expect(await sessionNames(handle.urls.registry)).toEqual(["from-fixture"]);
      handle.advance("20s");
      expect(await sessionNames(handle.urls.registry)).toEqual([]);
      await hooks.run("beforeEach");
      expect(await sessionNames(handle.urls.registry)).toEqual(["from-fixture"]);
      await hooks.run("afterAll");
      expect(() => handle.urls).toThrow(/not available any more/);
      await hooks.run("beforeAll");
      expect(await sessionNames(handle.urls.registry)).toEqual(["from-fixture"]);
    } finally {
      await hooks.run("afterAll");
    }
  });

  it("takes a shipped fixture's name from STANDIN_FIXTURE, as the CLI's --fixture does", async () => {
    const previous = process.env.STANDIN_FIXTURE;
    process.env.STANDIN_FIXTURE = "token-expiry";
    const hooks = manualHooks();
    let handle: StandinHandle;
    try {
      handle = useStandinWith(hooks.hooks, { env: false });
    } finally {
      if (previous === undefined) delete process.env.STANDIN_FIXTURE;
      else process.env.STANDIN_FIXTURE = previous;
    }
    try {
      await hooks.run("beforeAll");
      // token-expiry starts with ci-key-1 the only valid API key (the default world has test-api-key).
      const echo = (key: string) => fetch(`${handle.urls.echo}/echo?key=${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"hi"}' });
      expect((await echo("ci-key-1")).status).toBe(200);
      expect((await echo("test-api-key")).status).toBe(400);
    } finally {
      await hooks.run("afterAll");
    }
  });

  it("fails an unknown name in STANDIN_FIXTURE with the shipped names, not a file error", async () => {
    const previous = process.env.STANDIN_FIXTURE;
    process.env.STANDIN_FIXTURE = "no-such-world";
    const hooks = manualHooks();
    try {
      useStandinWith(hooks.hooks, { env: false });
    } finally {
      if (previous === undefined) delete process.env.STANDIN_FIXTURE;
      else process.env.STANDIN_FIXTURE = previous;
    }
    try {
      await expect(hooks.run("beforeAll")).rejects.toThrow(/no shipped fixture by that name \(shipped: default, .*token-expiry\)/);
    } finally {
      await hooks.run("afterAll");
    }
  });

  it("takes the start fixture from STANDIN_FIXTURE when no fixture is given", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-testing-"));
    writeFileSync(join(dir, "world.json"), JSON.stringify({ seed: 11, registry: { sessions: [{ Name: "from-env" }] } }));
    const previous = process.env.STANDIN_FIXTURE;
    process.env.STANDIN_FIXTURE = join(dir, "world.json");
    const hooks = manualHooks();
    let handle: StandinHandle;
    try {
      handle = useStandinWith(hooks.hooks, { env: false });
    } finally {
      if (previous === undefined) delete process.env.STANDIN_FIXTURE;
      else process.env.STANDIN_FIXTURE = previous;
    }
    try {
      await hooks.run("beforeAll");
      expect(handle.emulator.seed).toBe(11);
      expect(await sessionNames(handle.urls.registry)).toEqual(["from-env"]);
    } finally {
      await hooks.run("afterAll");
    }
  });

  it("reports a failed start from beforeAll and leaves nothing registered", async () => {
    const hooks = manualHooks();
    const handle = useStandinWith(hooks.hooks, { env: false, fixture: { seed: "not a number" } as never });
    await expect(hooks.run("beforeAll")).rejects.toThrow(/seed/);
    expect(() => handle.emulator).toThrow(/not available yet/);
    await hooks.run("afterAll");
    const registry = (globalThis as Record<symbol, Map<string, unknown>>)[Symbol.for("standin.testing.instances")]!;
    expect([...registry.keys()].filter((key) => key.includes("not a number"))).toEqual([]);
  });
});
