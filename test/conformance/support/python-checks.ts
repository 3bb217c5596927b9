/**
 * Runs a python conformance script once per Debian consul client
 * (python3-consul 0.7.1, and python3-consul2 0.1.5, which .ci/run unpacks into
 * .cache/python3-consul2 since the two packages conflict; it is put first on
 * PYTHONPATH here) against a standin started for it, and makes one test per
 * named check the script reports (one JSON line `{check, ok, error?}` each).
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../../../src/server.js";

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const CONSUL2 = resolve(ROOT, ".cache/python3-consul2/usr/lib/python3/dist-packages");

export const PYTHON_CLIENTS = [
  { name: "python3-consul", env: {} as Record<string, string>, version: "0.7.1" },
  { name: "python3-consul2", env: { PYTHONPATH: CONSUL2 } as Record<string, string>, version: "0.1.5" },
];

type Result = { check: string; ok: boolean; error?: string };

/** `script`: a path under test/conformance/python; `checks`: every check it must report, in its order. */
export function pythonChecks(title: string, script: string, checks: readonly string[]): void {
  const path = resolve(ROOT, "test/conformance/python", script);
  for (const client of PYTHON_CLIENTS) {
    describe(`${client.name}: ${title}`, () => {
      let srv: RunningStandin;
      let results: Map<string, Result>;
      beforeAll(async () => {
        if (client.env.PYTHONPATH && !existsSync(client.env.PYTHONPATH))
          throw new Error(`${client.name} is not unpacked at ${CONSUL2} (.ci/run does it: apt-get download python3-consul2 && dpkg -x)`);
        srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
        const { stdout } = await run("/usr/bin/python3", [path, srv.urls.registry, srv.urls.scheduler], { env: { ...process.env, ...client.env }, timeout: 300_000 });
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
      it("runs exactly the checks listed here", () => {
        expect([...results.keys()]).toEqual(checks);
      });
      for (const check of checks) {
        it(check, () => {
          const result = results.get(check);
          expect(result, `${check} did not run`).toBeDefined();
          expect(result!.error ?? "").toBe("");
          expect(result!.ok).toBe(true);
        });
      }
    });
  }
}
