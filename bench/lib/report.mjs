/**
 * Turns measurements into rows (measure | standin | baseline | ratio |
 * target | met?), prints them as a markdown table, and writes them as JSON.
 * A missed target is reported, never fatal: this is a report, not a test.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname } from "node:path";
import { summarize } from "./stats.mjs";

export function environment() {
  const cores = cpus();
  return { node: process.version, cpu: cores[0]?.model?.trim() ?? "unknown", cores: cores.length, platform: `${process.platform}-${process.arch}` };
}

export function environmentLine(env) {
  return `Environment: Node ${env.node} · ${env.cpu} · ${env.cores} cores · ${env.platform}`;
}

// Sub-millisecond values (reset takes microseconds) keep three decimals so they do not print as 0.00.
const ms = (value) => `${value.toFixed(value < 1 ? 3 : value < 10 ? 2 : 1)} ms`;
const perSecond = (value) => `${Math.round(value).toLocaleString("en-US")} req/s`;
const times = (value) => `${value.toFixed(2)}×`;
const share = (value) => `${times(value)} (${Math.round(value * 100)} %)`;

/**
 * A row's `target` judges one number: `atMost`/`atLeast` apply to the
 * standin value, `ratioAtLeast` to standin/baseline. Rows without a target
 * (p99, max, latency) are context for the judged row above them.
 */
function row(measure, { unit, standin, baseline = null, target = null, ratioFormat = times }) {
  const ratio = baseline === null ? null : standin / baseline;
  let met = null;
  let targetText = "—";
  if (target?.atMost !== undefined) {
    met = standin <= target.atMost;
    targetText = `≤ ${target.atMost} ms`;
  } else if (target?.atLeast !== undefined) {
    met = standin >= target.atLeast;
    targetText = `≥ ${target.atLeast}`;
  } else if (target?.ratioAtLeast !== undefined) {
    met = ratio >= target.ratioAtLeast;
    targetText = `≥ ${Math.round(target.ratioAtLeast * 100)} % of baseline`;
  }
  const format = unit === "req/s" ? perSecond : ms;
  return {
    measure,
    unit,
    standin,
    baseline,
    ratio,
    target: targetText,
    met,
    cells: [measure, format(standin), baseline === null ? "—" : format(baseline), ratio === null ? "—" : ratioFormat(ratio), targetText, met === null ? "—" : met ? "yes" : "**MISSED**"],
  };
}

export function buildRows({ startup, create, reset, timers, throughput }, settings) {
  const standinReady = summarize(startup.standin.map((r) => r.readyMs));
  const bareReady = summarize(startup.bare.map((r) => r.readyMs));
  const createStats = summarize(create);
  const resetStats = summarize(reset);
  const advanceStats = summarize(timers.advance);
  const scheduleStats = summarize(timers.schedule);
  const { standin: standinLoad, floor } = throughput;
  const load = `${settings.throughput.connections} conns, median of ${settings.throughput.rounds} rounds × ${settings.throughput.durationSeconds} s`;
  return [
    row(`CLI start → ready, median (N=${standinReady.n})`, { unit: "ms", standin: standinReady.median, baseline: bareReady.median, target: { atMost: 300 } }),
    row("CLI start → ready, max", { unit: "ms", standin: standinReady.max, baseline: bareReady.max }),
    row(`createStandin() + first request, median (N=${createStats.n})`, { unit: "ms", standin: createStats.median, target: { atMost: 20 } }),
    row("createStandin() + first request, p99", { unit: "ms", standin: createStats.p99 }),
    row(`emu.reset(), median (N=${resetStats.n})`, { unit: "ms", standin: resetStats.median, target: { atMost: 5 } }),
    row("emu.reset(), p99", { unit: "ms", standin: resetStats.p99 }),
    row(`clock: advance past ${settings.timers.timers.toLocaleString("en-US")} pending timers, median (N=${advanceStats.n})`, { unit: "ms", standin: advanceStats.median, target: { atMost: 500 } }),
    row(`clock: schedule ${settings.timers.timers.toLocaleString("en-US")} timers, median`, { unit: "ms", standin: scheduleStats.median }),
    row(`GET /_standin/clock throughput (${load})`, {
      unit: "req/s",
      standin: standinLoad.requestsPerSecond,
      baseline: floor.requestsPerSecond,
      target: { ratioAtLeast: 0.7 },
      ratioFormat: share,
    }),
    row("GET /_standin/clock latency p50", { unit: "ms", standin: standinLoad.p50Ms, baseline: floor.p50Ms }),
    row("GET /_standin/clock latency p99", { unit: "ms", standin: standinLoad.p99Ms, baseline: floor.p99Ms }),
  ];
}

export function markdownTable(rows) {
  const header = ["measure", "standin", "baseline", "ratio", "target", "met?"];
  const lines = [header, header.map(() => "---"), ...rows.map((r) => r.cells)];
  return lines.map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

/** What the baselines are and how rows are judged, printed under the table. */
export function notes(settings) {
  return [
    "Notes:",
    "- CLI start → ready: spawn of `node bin/standin start` (ports 0) to the first 200 from GET /_standin/ready;",
    "  baseline: spawn of bench/lib/bare-server.mjs (bare node:http) to its first 200. Runs interleaved, one warm-up each discarded.",
    `- In-process rows have no baseline. p99 is nearest-rank: at N=${settings.create.iterations} it is the slowest sample.`,
    "- Throughput: both servers in child processes, loaded one at a time with autocannon (keep-alive) from the bench process,",
    `  in ${settings.throughput.rounds} alternating rounds (each after a ${settings.throughput.warmupSeconds} s warm-up); the row shows the round with the median ratio`,
    "  (all rounds are in the JSON). The floor is bare node:http answering standin's exact status, content-type and body.",
    "- Targets are judged on the first row of each group (median, or requests/s); p99, max and latency rows are context.",
  ].join("\n");
}

export function verdict(rows) {
  const missed = rows.filter((r) => r.met === false);
  if (missed.length === 0) return "All targets met.";
  return `MISSED ${missed.length} target(s):\n${missed.map((r) => `  - ${r.measure}: ${r.cells[1]} (target ${r.target})`).join("\n")}`;
}

export async function writeJson(path, document) {
  await mkdir(dirname(path), { recursive: true });
  // Buffers (the mirrored response body) are not useful in the report; everything else is plain data.
  await writeFile(path, JSON.stringify(document, (_key, value) => (value?.type === "Buffer" ? undefined : value), 2) + "\n");
}
