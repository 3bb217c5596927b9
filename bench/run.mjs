/**
 * `npm run bench`: standin's performance report. Measures, in one run and
 * against baselines taken in the same run on the same machine:
 *   1. CLI start to ready (vs. a bare node:http process),
 *   2. in-process createStandin() + first request,
 *   3. emu.reset(),
 *   4. control-route throughput over HTTP (vs. a bare node:http floor).
 * Prints a markdown table to stdout (progress goes to stderr) and writes
 * bench/results/latest.json. Exits 0 even when a target is missed; exits 1
 * only when the bench itself could not run.
 */
import { fileURLToPath } from "node:url";
import { measureCreate, measureReset, measureTimerAdvance } from "./lib/in-process.mjs";
import { interruption, killChildrenOnExit, stopAllChildren } from "./lib/processes.mjs";
import { buildRows, environment, environmentLine, markdownTable, notes, verdict, writeJson } from "./lib/report.mjs";
import { summarize } from "./lib/stats.mjs";
import { measureStartup } from "./lib/startup.mjs";
import { measureThroughput } from "./lib/throughput.mjs";

const RESULTS_FILE = fileURLToPath(new URL("./results/latest.json", import.meta.url));

// Sized to keep the whole run well under 90 s on a 2-core machine.
const SETTINGS = {
  startup: { runs: 10 },
  create: { warmups: 5, iterations: 50 },
  reset: { warmups: 50, iterations: 500 },
  timers: { timers: 100_000, iterations: 5 },
  throughput: { connections: 10, warmupSeconds: 1, durationSeconds: 3, rounds: 3 },
};

const progress = (message) => process.stderr.write(`bench: ${message}\n`);

async function main() {
  const env = environment();
  const began = performance.now();

  progress(`CLI start to ready, ${SETTINGS.startup.runs} runs each (standin, bare node)…`);
  const startup = await measureStartup(SETTINGS.startup);
  progress(`createStandin() + first request, ${SETTINGS.create.iterations} iterations…`);
  const create = await measureCreate(SETTINGS.create);
  progress(`reset, ${SETTINGS.reset.iterations} iterations…`);
  const reset = await measureReset(SETTINGS.reset);
  progress(`clock: ${SETTINGS.timers.timers} timers, ${SETTINGS.timers.iterations} runs…`);
  const timers = await measureTimerAdvance(SETTINGS.timers);
  progress(`throughput, ${SETTINGS.throughput.rounds} alternating rounds of ${SETTINGS.throughput.durationSeconds} s per server…`);
  const throughput = await measureThroughput(SETTINGS.throughput);

  const rows = buildRows({ startup, create, reset, timers, throughput }, SETTINGS);
  const elapsedSeconds = (performance.now() - began) / 1000;

  console.log(environmentLine(env));
  console.log("");
  console.log(markdownTable(rows));
  console.log("");
  console.log(notes(SETTINGS));
  console.log("");
  console.log(verdict(rows));
  console.log(`(bench took ${elapsedSeconds.toFixed(1)} s; JSON in bench/results/latest.json)`);

  await writeJson(RESULTS_FILE, {
    generatedAt: new Date().toISOString(),
    environment: env,
    settings: SETTINGS,
    elapsedSeconds,
    rows: rows.map(({ cells, ...data }) => data),
    allTargetsMet: rows.every((r) => r.met !== false),
    raw: {
      startup: {
        standin: { readyMs: summarize(startup.standin.map((r) => r.readyMs)), bannerMs: summarize(startup.standin.map((r) => r.bannerMs)), runs: startup.standin },
        bare: { readyMs: summarize(startup.bare.map((r) => r.readyMs)), bannerMs: summarize(startup.bare.map((r) => r.bannerMs)), runs: startup.bare },
      },
      create: { ...summarize(create), samples: create },
      reset: { ...summarize(reset), samples: reset },
      timers,
      throughput,
    },
  });
}

killChildrenOnExit();
try {
  await main();
} catch (error) {
  // After Ctrl-C the children are stopped on purpose; their "failure" is not news.
  if (!interruption()) console.error(`bench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await stopAllChildren();
}
