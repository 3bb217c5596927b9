/**
 * `npm run bench`: standin's performance report. Measures, in one run and
 * against baselines taken in the same run on the same machine:
 *   1. CLI start to ready (vs. a bare node:http process),
 *   2. in-process createStandin() + first request, emu.reset(), the clock at 100k timers,
 *   3. throughput and latency of five routes over HTTP (each vs. a bare node:http
 *      floor serving the same bytes),
 *   4. scale curves in process (jobs list/filter/page, TTL sessions, blocking
 *      queries woken by one write, snapshot/restore) and memory, each case in a
 *      fresh child process,
 *   5. issue 30: a mixed churn against a `standin start` child (its RSS after a
 *      warm-up and at the end), the fan-out of one clock advance at 1k / 10k /
 *      100k objects per kind (per-object ratio), and stalls: a probe's latency
 *      while each hostile input is sent.
 * Prints a markdown table to stdout (progress goes to stderr) and writes
 * bench/results/latest.json. Exits 0 even when a target is missed; exits 1
 * only when the bench itself could not run.
 *
 * While working on one route (environment variables):
 *   BENCH_ONLY=echo,clock   only the throughput rows of these routes (ids in lib/throughput.mjs);
 *                           prints those rows and each round's CPU per request, writes no JSON
 *   BENCH_ROUNDS=5          alternating rounds per route (default 3)
 *   BENCH_PROFILE=DIR       the standin child runs under `node --cpu-prof`, its profile written to DIR
 *
 * Running some sections only (their rows, and bench/results/only.json instead of latest.json):
 *   BENCH_ONLY_CASES=churn,fanout,stalls   sections: startup, throughput, scale, churn, fanout, stalls;
 *                           `fanout:<kind>` and `stall:<case>` narrow those two (kinds in
 *                           lib/fanout-cases.mjs, cases in lib/stalls.mjs and lib/stall-cases.mjs)
 *   BENCH_FANOUT_SIZES=1000,10000   the fan-out sizes (default 1000,10000,100000)
 *   BENCH_FANOUT_LIMIT=30   seconds a fan-out case may take, set-up included (default 30; four times that at 100k)
 *   BENCH_CHURN_MINUTES=30  the churn's length in real minutes (default 3); its reference RSS is
 *                           taken after BENCH_CHURN_WARM_MINUTES (default 1; 5 when the churn
 *                           lasts 10 minutes or more). `npm run bench:churn` is issue 30's 5-then-30.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { measureCreate, measureReset, measureTimerAdvance } from "./lib/in-process.mjs";
import { interruption, killChildrenOnExit, stopAllChildren } from "./lib/processes.mjs";
import { buildRows, environment, environmentLine, markdownTable, notes, throughputRows, verdict, writeJson } from "./lib/report.mjs";
import { measureChurn } from "./lib/churn.mjs";
import { FANOUT_KINDS } from "./lib/fanout-cases.mjs";
import { measureFanout, measureScale } from "./lib/scale.mjs";
import { summarize } from "./lib/stats.mjs";
import { measureStartup } from "./lib/startup.mjs";
import { measureStalls, STALL_CASE_NAMES } from "./lib/stalls.mjs";
import { measureThroughput, ROUTES, throughputFixture } from "./lib/throughput.mjs";

const RESULTS_FILE = fileURLToPath(new URL("./results/latest.json", import.meta.url));
const ONLY_RESULTS_FILE = fileURLToPath(new URL("./results/only.json", import.meta.url));

// Sizes and limits bound each part: the issue-17 long-run rows take about 4 minutes, the churn 3, the
// fan-out and stall cases each stop at their limit (see docs/development.md for a whole run's length).
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
  // Issue 30. The default churn is short (1 + 2 minutes); BENCH_CHURN_MINUTES=30 is the run.
  churn: { minutes: 3, warmMinutes: 1 },
  fanout: {
    sizes: [1_000, 10_000, 100_000],
    kinds: Object.keys(FANOUT_KINDS),
    limitSeconds: 30,
    labels: Object.fromEntries(Object.entries(FANOUT_KINDS).map(([kind, spec]) => [kind, { label: spec.label, unit: spec.unit, units: spec.units }])),
  },
};

const progress = (message) => process.stderr.write(`bench: ${message}\n`);

const ONLY = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(",").map((id) => id.trim()) : undefined;
if (process.env.BENCH_ROUNDS) SETTINGS.throughput.rounds = Number(process.env.BENCH_ROUNDS);
const numbers = (text) => text.split(",").map((item) => Number(item.trim()));
if (process.env.BENCH_FANOUT_SIZES) SETTINGS.fanout.sizes = numbers(process.env.BENCH_FANOUT_SIZES);
if (process.env.BENCH_FANOUT_LIMIT) SETTINGS.fanout.limitSeconds = Number(process.env.BENCH_FANOUT_LIMIT);
if (process.env.BENCH_CHURN_MINUTES) {
  SETTINGS.churn.minutes = Number(process.env.BENCH_CHURN_MINUTES);
  SETTINGS.churn.warmMinutes = SETTINGS.churn.minutes >= 10 ? 5 : 1;
}
if (process.env.BENCH_CHURN_WARM_MINUTES) SETTINGS.churn.warmMinutes = Number(process.env.BENCH_CHURN_WARM_MINUTES);
const ONLY_CASES = process.env.BENCH_ONLY_CASES ? process.env.BENCH_ONLY_CASES.split(",").map((id) => id.trim()) : undefined;
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

const SECTIONS = ["startup", "throughput", "scale", "churn", "fanout", "stalls"];

/** BENCH_ONLY_CASES: the sections it names and, for fan-out and stalls, the kinds and cases. */
function onlyCasesPlan() {
  const plan = { sections: new Set(), fanoutKinds: [], stallCases: [] };
  for (const id of ONLY_CASES) {
    const [section, item] = id.split(":");
    const name = section === "stall" ? "stalls" : section;
    if (!SECTIONS.includes(name)) throw new Error(`BENCH_ONLY_CASES: no section ${section} (sections: ${SECTIONS.join(", ")}; fanout:<kind>, stall:<case>)`);
    plan.sections.add(name);
    if (item && name === "fanout") {
      if (!FANOUT_KINDS[item]) throw new Error(`BENCH_ONLY_CASES: no fan-out kind ${item} (kinds: ${Object.keys(FANOUT_KINDS).join(", ")})`);
      plan.fanoutKinds.push(item);
    }
    if (item && name === "stalls") {
      if (!STALL_CASE_NAMES().includes(item)) throw new Error(`BENCH_ONLY_CASES: no stall case ${item} (cases: ${STALL_CASE_NAMES().join(", ")})`);
      plan.stallCases.push(item);
    }
  }
  return plan;
}

/** The virtual-time sections (issue 30), each when `wanted`: churn, fan-out, stalls. */
async function measureAgeingAndStalls(wanted, plan = { fanoutKinds: [], stallCases: [] }) {
  const out = {};
  if (wanted("churn")) {
    progress(`churn: ${SETTINGS.churn.minutes} min of mixed requests against a standin child, RSS every 10 s (reference after ${SETTINGS.churn.warmMinutes} min)…`);
    out.churn = await measureChurn(SETTINGS.churn, progress);
  }
  if (wanted("fanout")) {
    const settings = plan.fanoutKinds.length > 0 ? { ...SETTINGS.fanout, kinds: plan.fanoutKinds } : SETTINGS.fanout;
    progress(`fan-out: one clock advance over ${settings.sizes.join(" / ")} objects per kind (each case in a fresh process, at most ${settings.limitSeconds} s)…`);
    out.fanout = await measureFanout(settings, progress);
  }
  if (wanted("stalls")) {
    progress("stalls: GET /_standin/clock latency while a heavy request is in progress (each case in a fresh standin)…");
    out.stalls = await measureStalls(progress, { only: plan.stallCases.length > 0 ? plan.stallCases : undefined, nodeArgs: NODE_ARGS });
  }
  return out;
}

/** BENCH_ONLY_CASES: the sections it names, their rows, and bench/results/only.json. */
async function onlyCases(env) {
  const plan = onlyCasesPlan();
  const wanted = (section) => plan.sections.has(section);
  const began = performance.now();
  const measured = {};
  if (wanted("startup")) {
    measured.startup = await measureStartup(SETTINGS.startup);
    measured.create = await measureCreate(SETTINGS.create);
    measured.reset = await measureReset(SETTINGS.reset);
    measured.timers = await measureTimerAdvance(SETTINGS.timers);
  }
  if (wanted("throughput")) measured.throughput = await withFixture((fixtureFile) => measureThroughput(SETTINGS.throughput, { fixtureFile, progress, nodeArgs: NODE_ARGS }));
  if (wanted("scale")) measured.scale = await measureScale(SETTINGS.scale, progress);
  Object.assign(measured, await measureAgeingAndStalls(wanted, plan));
  const rows = buildRows(measured, SETTINGS);
  const elapsedSeconds = (performance.now() - began) / 1000;
  console.log(environmentLine(env));
  console.log("");
  console.log(markdownTable(rows));
  console.log("");
  console.log(verdict(rows));
  console.log(`(took ${elapsedSeconds.toFixed(1)} s; JSON in bench/results/only.json)`);
  await writeJson(ONLY_RESULTS_FILE, {
    generatedAt: new Date().toISOString(),
    environment: env,
    settings: SETTINGS,
    only: ONLY_CASES,
    elapsedSeconds,
    rows: rows.map(({ cells, ...data }) => data),
    raw: measured,
  });
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

  progress(`start to ready, ${SETTINGS.startup.runs} runs each (CLI, the single executable if built, bare node; then the Go helper)…`);
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

  const { churn, fanout, stalls } = await measureAgeingAndStalls(() => true);

  const rows = buildRows({ startup, create, reset, timers, throughput, scale, stalls, churn, fanout }, SETTINGS);
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
        executable: startup.executable && { readyMs: summarize(startup.executable.map((r) => r.readyMs)), runs: startup.executable },
        goHelper: startup.goHelper,
      },
      create: { ...summarize(create), samples: create },
      reset: { ...summarize(reset), samples: reset },
      timers,
      throughput,
      scale,
      churn,
      fanout,
      stalls,
    },
  });
}

killChildrenOnExit();
try {
  if (ONLY) await onlyRoutes(environment());
  else if (ONLY_CASES) await onlyCases(environment());
  else await main();
} catch (error) {
  // After Ctrl-C the children are stopped on purpose; their "failure" is not news.
  if (!interruption()) console.error(`bench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await stopAllChildren();
}
