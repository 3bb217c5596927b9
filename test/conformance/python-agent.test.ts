/**
 * Conformance: the agent's services and TTL checks (register with a TTL
 * check, ttl_pass, the TTL lapsing on the virtual clock, `health.service`
 * with `passing=True` leaving the lapsed instance out until the next
 * ttl_pass, deregister) with
 * Debian's python3-consul and python3-consul2 (unpacked by .ci/run into
 * .cache/python3-consul2, put first on PYTHONPATH here). python3-consul
 * 0.7.1 sends check/pass and service/deregister as GETs, which Consul (and
 * standin) answer with a 405: the script asserts that, then PUTs through the
 * client's own HTTP layer.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../../src/server.js";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SCRIPT = resolve(ROOT, "test/conformance/python/agent_services.py");
const CONSUL2 = resolve(ROOT, ".cache/python3-consul2/usr/lib/python3/dist-packages");
const CHECKS = ["register-with-ttl-check", "ttl-pass-and-lapse", "health-service-passing", "deregister"];

const CLIENTS = [
  { name: "python3-consul", env: {} as Record<string, string> },
  { name: "python3-consul2", env: { PYTHONPATH: CONSUL2 } },
];

type Result = { check: string; ok: boolean; error?: string };

for (const client of CLIENTS) {
  describe(`${client.name}: agent services`, () => {
    let srv: RunningStandin;
    let results: Map<string, Result>;
    beforeAll(async () => {
      if (client.env.PYTHONPATH && !existsSync(client.env.PYTHONPATH))
        throw new Error(`${client.name} is not unpacked at ${CONSUL2} (.ci/run does it: apt-get download python3-consul2 && dpkg -x)`);
      srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
      const { stdout } = await run("/usr/bin/python3", [SCRIPT, srv.urls.registry, srv.urls.scheduler], { env: { ...process.env, ...client.env }, timeout: 300_000 });
      results = new Map(
        stdout
          .trim()
          .split("\n")
          .map((line) => [(JSON.parse(line) as Result).check, JSON.parse(line) as Result]),
      );
    }, 300_000);
    afterAll(async () => {
      await srv?.close();
    });

    it("runs exactly the checks listed here", () => {
      expect([...results.keys()]).toEqual(CHECKS);
    });
    for (const check of CHECKS) {
      it(check, () => {
        const result = results.get(check);
        expect(result, `${check} did not run`).toBeDefined();
        expect(result!.error ?? "").toBe("");
        expect(result!.ok).toBe(true);
      });
    }
  });
}
