/**
 * The package's type declarations (dist/*.d.ts) as a consumer's compiler
 * checks them with `skipLibCheck: false`: a TypeScript project importing every
 * entry point type-checks clean. The repository's own TypeScript always runs;
 * TypeScript 7 (where the whole inferred fixture type was once "excessively
 * deep", TS2589) runs from `.cache/typescript7` (`.ci/run` installs 7.0.2
 * there) or the binary `STANDIN_TSGO` names, since it is not a dependency of
 * the project; without either it is skipped.
 *
 * Needs dist/ built (`npm run build`); the consumer reaches it through a
 * symlink, so the declarations' own imports (hono, valibot, vitest) resolve
 * from this repository's node_modules, as they would from the consumer's.
 */
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { cleanEnv, run, SLOW_STEP_TIMEOUT_MS } from "./support.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHED_TS7 = join(ROOT, ".cache/typescript7/node_modules/.bin/tsc");
const TS7 = process.env.STANDIN_TSGO ?? (existsSync(CACHED_TS7) ? CACHED_TS7 : undefined);

const CONSUMER = `import { createStandin, shippedFixtureNames, startStandin, type FixtureSource } from "standin";
import { useStandin } from "standin/vitest";
import { useStandin as useNodeStandin } from "standin/node-test";

const fixture: FixtureSource = { seed: 7, registry: { sessions: [{ Name: "s" }] } };
const emu = await createStandin({ fixture: [fixture, "default"], seed: 7 });
const res: Response = await emu.scheduler.request("/v1/agent/health");
emu.clock.advance("30s");
const hash: string = emu.stateHash();
const srv = await startStandin({ fixture: {}, ports: { scheduler: 0, registry: 0, echo: 0 } });
const url: string = srv.urls.scheduler;
await srv.close();
const names: string[] = shippedFixtureNames();
const handle = useStandin({ ports: { scheduler: 4646 }, fixture: "token-expiry" });
const other = useNodeStandin({ seed: 7 });
export { res, hash, url, names, handle, other };
`;

function consumerProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "standin-types-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(ROOT, join(dir, "node_modules/standin"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ["node"],
        typeRoots: [join(ROOT, "node_modules/@types")],
      },
      files: ["consumer.ts"],
    }),
  );
  writeFileSync(join(dir, "consumer.ts"), CONSUMER);
  return dir;
}

describe("the type declarations under a consumer's skipLibCheck: false", () => {
  it("type-check with the repository's TypeScript", { timeout: SLOW_STEP_TIMEOUT_MS }, async () => {
    const dir = consumerProject();
    const result = await run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: dir, env: cleanEnv() });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it.skipIf(!TS7)("type-check with TypeScript 7 (.cache/typescript7 or STANDIN_TSGO), without TS2589", { timeout: SLOW_STEP_TIMEOUT_MS }, async () => {
    const dir = consumerProject();
    const result = await run(TS7!, ["-p", "tsconfig.json"], { cwd: dir, env: cleanEnv() });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  });
});
