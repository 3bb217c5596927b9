/**
 * Conformance: the leader-election recipe (sessions, acquire/release, TTL
 * expiry on the virtual clock, lock-delay, blocking reads, uint64 flags) with
 * Debian's python3-consul and python3-consul2 (the two conflict as packages:
 * .ci/run unpacks python3-consul2 into .cache/python3-consul2, put first on
 * PYTHONPATH here).
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
const RECIPE = resolve(ROOT, "test/conformance/python/lock_recipe.py");
const CONSUL2 = resolve(ROOT, ".cache/python3-consul2/usr/lib/python3/dist-packages");
const CHECKS = ["lock-and-handover-by-ttl-expiry", "flags-exact", "blocking-loop-request-count"];

const CLIENTS = [
  { name: "python3-consul", env: {} as Record<string, string>, version: "0.7.1" },
  { name: "python3-consul2", env: { PYTHONPATH: CONSUL2 }, version: "0.1.5" },
];

type Result = { check: string; ok: boolean; error?: string };

for (const client of CLIENTS) {
  describe(client.name, () => {
    let srv: RunningStandin;
    let results: Map<string, Result>;
    beforeAll(async () => {
      if (client.env.PYTHONPATH && !existsSync(client.env.PYTHONPATH))
        throw new Error(`${client.name} is not unpacked at ${CONSUL2} (.ci/run does it: apt-get download python3-consul2 && dpkg -x)`);
      srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
      const { stdout } = await run("/usr/bin/python3", [RECIPE, srv.urls.registry, srv.urls.scheduler], { env: { ...process.env, ...client.env }, timeout: 300_000 });
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

    it(`is the ${client.name} ${client.version} the suite means`, async () => {
      const { stdout } = await run("/usr/bin/python3", ["-c", "import consul; print(consul.__file__, getattr(consul, '__version__', '?'))"], {
        env: { ...process.env, ...client.env },
      });
      expect(stdout).toContain(client.version);
      if (client.env.PYTHONPATH) expect(stdout).toContain(CONSUL2);
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
