/**
 * `npm run bench`: standin's performance report. Measures, in one run and
 * against baselines taken in the same run on the same machine:
 *   1. CLI start to ready (vs. a bare node:http process),
 *   2. in-process createStandin() + first request, emu.reset(), the clock at 100k timers,
 *   3. throughput and latency of five routes over HTTP (each vs. a bare node:http
 *      floor serving the same bytes),
 *   4. scale curves in process (jobs list/filter/page, TTL sessions, blocking
 *      queries woken by one write, snapshot/restore) and memory, each case in a
 *      fresh child process.
 * Prints a markdown table to stdout (progress goes to stderr) and writes
 * bench/results/latest.json. Exits 0 even when a target is missed; exits 1
 * only when the bench itself could not run.
 *
 * While working on one route (environment variables):
 *   BENCH_ONLY=echo,clock   only the throughput rows of these routes (ids in lib/throughput.mjs);
 *                           prints those rows and each round's CPU per request, writes no JSON
 *   BENCH_ROUNDS=5          alternating rounds per route (default 3)
 *   BENCH_PROFILE=DIR       the standin child runs under `node --cpu-prof`, its profile written to DIR
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { measureCreate, measureReset, measureTimerAdvance } from "./lib/in-process.mjs";
import { interruption, killChildrenOnExit, stopAllChildren } from "./lib/processes.mjs";
import { buildRows, environment, environmentLine, markdownTable, notes, throughputRows, verdict, writeJson } from "./lib/report.mjs";
import { measureScale } from "./lib/scale.mjs";
import { summarize } from "./lib/stats.mjs";
import { measureStartup } from "./lib/startup.mjs";
import { measureStalls } from "./lib/stalls.mjs";
import { measureThroughput, ROUTES, throughputFixture } from "./lib/throughput.mjs";

const RESULTS_FILE = fileURLToPath(new URL("./results/latest.json", import.meta.url));

// Sized to keep the whole run around 3 minutes on a 2-core machine (the 100k cases dominate).
const SETTINGS = {
  startup: { runs: 10 },
  create: { warmups: 5, iterations: 50 },
  reset: { warmups: 50, iterations: 500 },
  timers: { timers: 100_000, iterations: 5 },
  throughput: { connections: 10, warmupSeconds: 0.5, durationSeconds: 2, rounds: 3 },
  scale: {
    jobs: [1_000, 10_000, 100_000],
    sessions: [1_000, 10_000, 100_000],
    blocking: [100, 1_000, 10_000],
    snapshotJobs: 10_000,
    memory: { jobs: 10_000, sessions: 100_000 },
    // Issue 17's long-run targets: 100k writes of 500 KB on a 256 MB heap complete; RSS after 1M small requests.
    longRun: { kvWrites: 100_000, requests: 1_000_000, limitSeconds: 400 },
    caseLimitSeconds: 45,
  },
};

const progress = (message) => process.stderr.write(`bench: ${message}\n`);

const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(",").map((id) => id.trim()) : undefined;
if (process.env.BENCH_ROUNDS) SETTINGS.throughput.rounds = Number(process.env.BENCH_ROUNDS);
const NODE_ARGS = process.env.BENCH_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];

/** The throughput rows of the routes BENCH_ONLY names, alone: what working on a route's cost needs. */
async function onlyRoutes(env) {
  const unknown = ONLY.filter((id) => !ROUTES.some((route) => route.id === id));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: no route ${unknown.join(", ")} (routes: ${ROUTES.map((route) => route.id).join(", ")})`);
  progress(`throughput of ${ONLY.join(", ")}, ${SETTINGS.throughput.rounds} alternating rounds of ${SETTINGS.throughput.durationSeconds} s per server…`);
  const throughput = await withFixture((fixtureFile) => measureThroughput(SETTINGS.throughput, { fixtureFile, progress, only: ONLY, nodeArgs: NODE_ARGS }));
  console.log(environmentLine(env));
  console.log("");
  console.log(markdownTable(throughputRows(throughput, SETTINGS)));
  console.log("");
  const us = (value) => (value === null ? "—" : value.toFixed(1));
  for (const [id, route] of Object.entries(throughput)) {
    const perRound = route.rounds.map((r) => `${us(r.standinCpuUs)}/${us(r.honoCpuUs)}/${us(r.floorCpuUs)}`).join("  ");
    console.log(`${id}: CPU µs per request by round (standin/framework/bare): ${perRound}`);
  }
}

/** Runs `measure` with the throughput fixture written to a temporary file. */
async function withFixture(measure) {
  const fixtureDir = await mkdtemp(join(tmpdir(), "standin-bench-"));
  try {
    const fixtureFile = join(fixtureDir, "throughput.json");
    await writeFile(fixtureFile, JSON.stringify(throughputFixture()));
    return await measure(fixtureFile);
  } finally {
    await rm(fixtureDir, { recursive: true, force: true });
  }
}

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

  progress(`throughput, ${SETTINGS.throughput.rounds} alternating rounds of ${SETTINGS.throughput.durationSeconds} s per server and route…`);
  const throughput = await withFixture((fixtureFile) => measureThroughput(SETTINGS.throughput, { fixtureFile, progress, nodeArgs: NODE_ARGS }));

  progress(`scale curves and memory (each case in a fresh process, at most ${SETTINGS.scale.caseLimitSeconds} s)…`);
  const scale = await measureScale(SETTINGS.scale, progress);

  progress("stalls: GET /_standin/clock latency while a heavy request is in progress (each case in a fresh standin)…");
  const stalls = await measureStalls(progress);

  const rows = buildRows({ startup, create, reset, timers, throughput, scale, stalls }, SETTINGS);
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
      scale,
    },
  });
}

killChildrenOnExit();
try {
  if (ONLY) await onlyRoutes(environment());
  else await main();
} catch (error) {
  // After Ctrl-C the children are stopped on purpose; their "failure" is not news.
  if (!interruption()) console.error(`bench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await stopAllChildren();
}
