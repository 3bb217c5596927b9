#!/usr/bin/env node
/**
 * Runs the unit suite several times in a row while every core is kept busy
 * (as `stress --cpu <cores>` would), to show it does not flake on a loaded
 * machine: `npm run test:stress` (5 runs), or `node scripts/stress-suite.mjs 3`.
 * Build first (`npm run build`): the suite's CLI tests run dist/.
 * Prints one line per run and exits 1 if any run failed.
 */
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";

const runs = Number(process.argv[2] ?? 5);
const burners = Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }));
const stopBurners = () => {
  for (const burner of burners) burner.kill("SIGKILL");
};
process.on("exit", stopBurners);

let failed = 0;
for (let run = 1; run <= runs; run++) {
  const started = process.hrtime.bigint();
  const { code, summary } = await vitestRun();
  const seconds = Number((process.hrtime.bigint() - started) / 1_000_000n) / 1000;
  if (code !== 0) failed++;
  console.log(`run ${run}/${runs}: ${code === 0 ? "passed" : `FAILED (exit ${code})`} in ${seconds.toFixed(0)} s under ${burners.length} CPU burners: ${summary}`);
}
stopBurners();
process.exit(failed === 0 ? 0 : 1);

/** One `vitest run`, its output kept; the summary is its "Tests" line. */
function vitestRun() {
  return new Promise((resolve) => {
    const child = spawn("npx", ["vitest", "run"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, FORCE_COLOR: "0" } });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("close", (code) => {
      const summary = /^\s*Tests\s+(.*)$/m.exec(output)?.[1]?.trim() ?? "no summary";
      if (code !== 0) process.stderr.write(output.split("\n").filter((line) => /FAIL|×|Error/.test(line)).slice(0, 40).join("\n") + "\n");
      resolve({ code: code ?? 1, summary });
    });
  });
}
