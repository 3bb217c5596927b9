import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PortInUseError, startStandin } from "../src/server.js";

const dir = mkdtempSync(join(tmpdir(), "standin-server-"));
const anyPorts = { scheduler: 0, registry: 0, echo: 0 };

describe("startStandin", () => {
  it("listens on free ports, serves each service and the shared control API, and closes", async () => {
    const srv = await startStandin({ ports: anyPorts, fixture: { seed: 3 } });
    try {
      expect(new Set(Object.values(srv.ports)).size).toBe(3);
      expect(srv.urls.control).toBe(`${srv.urls.scheduler}/_standin`);
      const health = await fetch(`${srv.urls.scheduler}/v1/agent/health`);
      expect(health.status).toBe(200);
      await fetch(`${srv.urls.registry}/_standin/clock/advance`, { method: "POST", body: JSON.stringify({ by: "1m" }) });
      const clock = (await (await fetch(`${srv.urls.echo}/_standin/clock`)).json()) as { now: string };
      expect(clock.now).toBe("2026-01-01T00:01:00Z");
    } finally {
      await srv.close();
    }
    await expect(fetch(`${srv.urls.scheduler}/_standin/ready`)).rejects.toThrow();
  });

  it("closes the ports it opened when a later one is taken", async () => {
    const first = await startStandin({ ports: anyPorts });
    try {
      const attempt = startStandin({ ports: { scheduler: 0, registry: 0, echo: first.ports.echo } });
      await expect(attempt).rejects.toBeInstanceOf(PortInUseError);
      await expect(attempt).rejects.toThrow(`port ${first.ports.echo} on 127.0.0.1 (echo) is already in use`);
    } finally {
      await first.close();
    }
  });

  it("a state file's clock settings give way to settings given explicitly", async () => {
    const stateFile = join(dir, "state.json");
    const saver = await startStandin({ ports: anyPorts, stateFile });
    saver.emulator.clock.advance("1h");
    await saver.close();

    const plain = await startStandin({ ports: anyPorts, stateFile });
    expect(plain.emulator.clock.status()).toMatchObject({ mode: "manual", nowMs: Date.parse("2026-01-01T01:00:00Z") });
    await plain.close();

    const overridden = await startStandin({ ports: anyPorts, stateFile, clock: { mode: "realtime", speed: 5 } });
    expect(overridden.emulator.clock.status()).toMatchObject({ mode: "realtime", speed: 5 });
    expect(overridden.emulator.clock.now()).toBeGreaterThanOrEqual(Date.parse("2026-01-01T01:00:00Z"));
    await overridden.close();
  });

  it("rejects a state file that is not a snapshot, naming the bad paths", async () => {
    const stateFile = join(dir, "bad-state.json");
    writeFileSync(stateFile, JSON.stringify({ format: "standin.snapshot/v1", seed: 1 }));
    await expect(startStandin({ ports: anyPorts, stateFile })).rejects.toThrow(/bad-state\.json: invalid state file\n {2}- rng: /);
  });
});
