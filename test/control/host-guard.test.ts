/**
 * The DNS-rebinding guard: control and dashboard requests are answered only
 * when `Host` names this machine (localhost, *.localhost, an IP address, the
 * listen address) or a name allowed with `allowedHosts` / `--allowed-host`.
 * The products' own routes answer any Host (issue 30, item 3).
 */
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { startStandin, type RunningStandin } from "../../src/server.js";

const REFUSED = /^the control API and the dashboard answer only requests whose Host names this machine .*\(a guard against DNS rebinding\)$/;

describe("in process", () => {
  it("without a Host header (app.request) the control API answers, as it always has", async () => {
    const emu = await createStandin();
    expect((await emu.scheduler.request("/_standin/clock")).status).toBe(200);
    expect((await emu.registry.request("/_standin/ready")).status).toBe(200);
  });

  it.each(["localhost", "localhost:4646", "LOCALHOST.", "ci.localhost:1", "127.0.0.1:4646", "127.9.9.9", "[::1]:4646", "[::1]", "10.1.2.3:4646", "[fd00::5]:80"])(
    "Host %s reaches the control API",
    async (host) => {
      const emu = await createStandin();
      const res = await emu.scheduler.request("/_standin/clock", { headers: { Host: host } });
      expect(res.status).toBe(200);
    },
  );

  it.each(["evil.example", "evil.example:4646", "localhost.evil.example", "127.0.0.1.nip.io:4646", "[::1", "localhost:abc", ""])(
    "Host %j gets 403 with the control API's JSON error, on every port, the dashboard too, and changes nothing",
    async (host) => {
      const emu = await createStandin();
      const hash = emu.stateHash();
      for (const app of [emu.scheduler, emu.registry, emu.echo]) {
        for (const [method, path] of [
          ["GET", "/_standin/clock"],
          ["POST", "/_standin/clock/advance"],
          ["GET", "/_standin/ui"],
          ["GET", "/_standin/ui/api/state"],
          ["POST", "/_standin/echo/tokens"],
        ] as const) {
          const res = await app.request(path, { method, headers: { Host: host }, ...(method === "POST" ? { body: '{"by":"1h"}' } : {}) });
          expect(res.status, `${method} ${path}`).toBe(403);
          expect(res.headers.get("content-type")).toBe("application/json");
          expect(res.headers.get("x-content-type-options")).toBe("nosniff");
          expect(((await res.json()) as { error: string }).error).toMatch(REFUSED);
        }
      }
      expect(emu.stateHash()).toBe(hash);
      expect(emu.clock.status().nowMs).toBe(Date.parse("2026-01-01T00:00:00Z"));
    },
  );

  it("the products' routes answer any Host (clients use service names)", async () => {
    const emu = await createStandin();
    expect((await emu.scheduler.request("/v1/agent/health", { headers: { Host: "nomad.service.consul:4646" } })).status).toBe(200);
    expect((await emu.registry.request("/v1/status/leader", { headers: { Host: "consul.internal" } })).status).toBe(200);
  });

  it("allowedHosts names more (case and a trailing dot aside); others stay refused", async () => {
    const emu = await createStandin({ allowedHosts: ["standin.ci", "Docker.Host"] });
    for (const host of ["standin.ci", "STANDIN.CI:4646", "docker.host.", "localhost"]) {
      expect((await emu.scheduler.request("/_standin/clock", { headers: { Host: host } })).status, host).toBe(200);
    }
    expect((await emu.scheduler.request("/_standin/clock", { headers: { Host: "other.ci" } })).status).toBe(403);
  });
});

describe("over the network", () => {
  let running: RunningStandin | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  const raw = (port: number, path: string, host: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, path, method: "GET", headers: { Host: host } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      req.on("error", reject);
      req.end();
    });

  it("a rebound name is refused; the listen address, localhost and --allowed-host names are answered", async () => {
    running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, allowedHosts: ["standin.ci"] });
    const port = running.ports.scheduler;
    expect((await raw(port, "/_standin/clock", `attacker.example:${port}`)).status).toBe(403);
    expect((await raw(port, "/_standin/ui", `attacker.example:${port}`)).status).toBe(403);
    expect((await raw(port, "/v1/agent/health", `attacker.example:${port}`)).status).toBe(200);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `standin.ci:${port}`]) expect((await raw(port, "/_standin/clock", host)).status, host).toBe(200);
    // The answers say nosniff (the dashboard's JSON and the control API's).
    const res = await fetch(`${running.urls.control}/ui/api/state`);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("a --host name is answered", async () => {
    running = await startStandin({ host: "localhost", ports: { scheduler: 0, registry: 0, echo: 0 } });
    expect((await fetch(`${running.urls.control}/clock`)).status).toBe(200);
  });
});
