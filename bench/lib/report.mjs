/**
 * Turns measurements into rows (measure | standin | baseline | ratio |
 * target | met?), prints them as a markdown table, and writes them as JSON.
 * A missed target is reported, never fatal: this is a report, not a test.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import { dirname } from "node:path";
import { median, summarize } from "./stats.mjs";

export function environment() {
  const cores = cpus();
  // NODE_EXTRA_CA_CERTS makes every node process parse those certificates at start (a system bundle:
  // about three quarters of a bare node process's start-up instructions), the bare one's too.
  return {
    node: process.version,
    cpu: cores[0]?.model?.trim() ?? "unknown",
    cores: cores.length,
    platform: `${process.platform}-${process.arch}`,
    extraCaCerts: Boolean(process.env.NODE_EXTRA_CA_CERTS),
  };
}

export function environmentLine(env) {
  return `Environment: Node ${env.node} · ${env.cpu} · ${env.cores} cores · ${env.platform}${env.extraCaCerts ? " · NODE_EXTRA_CA_CERTS set" : ""}`;
}

// Sub-millisecond values (reset takes microseconds) keep three decimals so they do not print as 0.00.
const ms = (value) => `${value.toFixed(value < 1 ? 3 : value < 10 ? 2 : 1)} ms`;
const us = (value) => `${value.toFixed(value < 1 ? 3 : value < 10 ? 2 : 1)} µs`;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const perSecond = (value) => `${Math.round(value).toLocaleString("en-US")} req/s`;
const times = (value) => `${value.toFixed(2)}×`;
const share = (value) => `${times(value)} (${Math.round(value * 100)} %)`;
const count = (n) => n.toLocaleString("en-US");
/** 1000 → "1k", 100000 → "100k". */
const short = (n) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));

const FORMATS = { ms, "req/s": perSecond, MB: (value) => `${value.toFixed(1)} MB` };

/**
 * A row's `target` judges one number: `atMost`/`atLeast` apply to the
 * standin value, `ratioAtLeast` to standin/baseline. Rows without a target
 * (p99, max, latency) are context for the judged row above them.
 * `cells` overrides how the standin/baseline/ratio cells print.
 */
function row(measure, { unit, standin, baseline = null, target = null, ratio: givenRatio, ratioFormat = times, cells = {}, extra = {} }) {
  const ratio = givenRatio !== undefined ? givenRatio : baseline === null || standin === null ? null : standin / baseline;
  let met = null;
  let targetText = "—";
  if (target?.atMost !== undefined) {
    met = standin !== null && standin <= target.atMost;
    targetText = `≤ ${target.atMost.toLocaleString("en-US")} ${unit}`;
  } else if (target?.atLeast !== undefined) {
    met = standin !== null && standin >= target.atLeast;
    targetText = `≥ ${target.atLeast} ${unit}`;
  } else if (target?.ratioAtMost !== undefined) {
    met = ratio !== null && ratio <= target.ratioAtMost;
    targetText = `≤ ${times(target.ratioAtMost).replace(".50×", ".5×")} ${target.of}`;
  } else if (target?.ratioAtLeast !== undefined) {
    met = ratio !== null && ratio >= target.ratioAtLeast;
    targetText = `≥ ${Math.round(target.ratioAtLeast * 100)} % of floor`;
  }
  if (target?.text) targetText = target.text;
  const format = FORMATS[unit] ?? ms;
  return {
    measure,
    unit,
    standin,
    baseline,
    ratio,
    target: targetText,
    met,
    ...extra,
    cells: [
      measure,
      cells.standin ?? (standin === null ? "—" : format(standin)),
      cells.baseline ?? (baseline === null ? "—" : format(baseline)),
      cells.ratio ?? (ratio === null ? "—" : ratioFormat(ratio)),
      targetText,
      met === null ? "—" : met ? "yes" : "**MISSED**",
    ],
  };
}

/** Issue 32: standin ready within 1.5× a bare node:http process started the same way, in the same run. */
const START_TARGET = { ratioAtMost: 1.5, of: "bare node" };

function executableRow(executable, bareReady) {
  if (!executable) return row("single executable start → ready", { unit: "ms", standin: null, target: { text: "— (not built: npm run build:exe)" } });
  const ready = summarize(executable.map((r) => r.readyMs));
  return row(`single executable start → ready, median (N=${ready.n})`, { unit: "ms", standin: ready.median, baseline: bareReady.median, target: START_TARGET });
}

function goHelperRow(goHelper) {
  if (!goHelper || goHelper.skipped)
    return row("Go helper standintest.Start → first answer", { unit: "ms", standin: null, target: { text: `— (${goHelper?.skipped ?? "not run"})` } });
  const standin = summarize(goHelper.standin.map((r) => r.readyMs));
  const bare = summarize(goHelper.bare.map((r) => r.readyMs));
  return row(`Go helper standintest.Start → first answer, median (N=${standin.n})`, { unit: "ms", standin: standin.median, baseline: bare.median, target: START_TARGET });
}

function startupRows({ startup, create, reset, timers }, settings) {
  const standinReady = summarize(startup.standin.map((r) => r.readyMs));
  const bareReady = summarize(startup.bare.map((r) => r.readyMs));
  const createStats = summarize(create);
  const resetStats = summarize(reset);
  const advanceStats = summarize(timers.advance);
  const scheduleStats = summarize(timers.schedule);
  return [
    row(`CLI start → ready, median (N=${standinReady.n})`, { unit: "ms", standin: standinReady.median, baseline: bareReady.median, target: START_TARGET }),
    row("CLI start → ready, max", { unit: "ms", standin: standinReady.max, baseline: bareReady.max }),
    executableRow(startup.executable, bareReady),
    goHelperRow(startup.goHelper),
    row(`createStandin() + first request, median (N=${createStats.n})`, { unit: "ms", standin: createStats.median, target: { atMost: 20 } }),
    row("createStandin() + first request, p99", { unit: "ms", standin: createStats.p99 }),
    row(`emu.reset(), median (N=${resetStats.n})`, { unit: "ms", standin: resetStats.median, target: { atMost: 5 } }),
    row("emu.reset(), p99", { unit: "ms", standin: resetStats.p99 }),
    row(`clock: advance past ${count(settings.timers.timers)} pending timers, median (N=${advanceStats.n})`, { unit: "ms", standin: advanceStats.median, target: { atMost: 500 } }),
    row(`clock: schedule ${count(settings.timers.timers)} timers, median`, { unit: "ms", standin: scheduleStats.median }),
  ];
}

export function throughputRows(throughput, settings) {
  const load = `${settings.throughput.connections} conns, median of ${settings.throughput.rounds} rounds × ${settings.throughput.durationSeconds} s`;
  const rows = [];
  for (const [id, route] of Object.entries(throughput)) {
    const { standin, floor } = route;
    rows.push(
      row(`${route.label} throughput (${load})`, {
        unit: "req/s",
        standin: standin.requestsPerSecond,
        baseline: floor.requestsPerSecond,
        target: route.simple ? { ratioAtLeast: 0.7 } : { text: "— (RS256 verify per request; see notes)" },
        ratioFormat: share,
        extra: { route: id },
      }),
    );
    rows.push(
      row(`${route.label} latency p50 / p99`, {
        unit: "ms",
        standin: standin.p50Ms,
        baseline: floor.p50Ms,
        cells: {
          standin: `${standin.p50Ms.toFixed(3)} / ${standin.p99Ms.toFixed(3)} ms`,
          baseline: `${floor.p50Ms.toFixed(3)} / ${floor.p99Ms.toFixed(3)} ms`,
          ratio: `${times(standin.p50Ms / floor.p50Ms)} / ${times(standin.p99Ms / floor.p99Ms)}`,
        },
        extra: { route: id, p99: standin.p99Ms, baselineP99: floor.p99Ms },
      }),
    );
    if (route.hono) {
      rows.push(
        row(`${route.label}: Hono + @hono/node-server alone, same bytes (framework floor)`, {
          unit: "req/s",
          standin: route.hono.requestsPerSecond,
          baseline: route.hono.floorRequestsPerSecond,
          ratio: route.hono.ratio,
          ratioFormat: share,
          cells: route.cpu?.hono != null ? { standin: `${Math.round(route.hono.requestsPerSecond).toLocaleString("en-US")} req/s (${route.cpu.hono.toFixed(1)} µs CPU)` } : {},
          extra: { route: id },
        }),
      );
    }
    if (route.cpu?.standin != null && route.cpu?.floor != null) {
      rows.push(
        row(`${route.label} server CPU per request, median of rounds`, {
          unit: "µs",
          standin: route.cpu.standin,
          baseline: route.cpu.floor,
          cells: { standin: `${route.cpu.standin.toFixed(1)} µs`, baseline: `${route.cpu.floor.toFixed(1)} µs` },
          extra: { route: id },
        }),
      );
    }
    // Issue 17: standin's CPU per request at most 1.3× the framework floor's (Hono on @hono/node-server answering the same bytes).
    if (route.cpu?.standin != null && route.cpu?.hono != null) {
      const overFloor = route.cpu.standin / route.cpu.hono;
      rows.push(
        row(`${route.label} server CPU per request vs the framework floor`, {
          unit: "µs",
          standin: route.cpu.standin,
          baseline: route.cpu.hono,
          ratio: overFloor,
          target: route.simple ? { text: "≤ 1.3× framework floor" } : { text: "— (RS256 verify per request)" },
          cells: { standin: `${route.cpu.standin.toFixed(1)} µs`, baseline: `${route.cpu.hono.toFixed(1)} µs` },
          extra: { route: id },
        }),
      );
      if (route.simple) rows.at(-1).met = overFloor <= 1.3;
      if (route.simple) rows.at(-1).cells[5] = overFloor <= 1.3 ? "yes" : "**MISSED**";
    }
  }
  return rows;
}

/**
 * A point of a scale curve: the time, and the time per item next to it. The
 * ratio column is the time per item relative to the curve's first (smallest)
 * point: 1.00× is linear growth, 10× at ten times the items is quadratic.
 */
function curveRows(points, { label, unitName, pick, target }) {
  const first = points.find((p) => !p.timedOut);
  const firstPerItem = first ? pick(first) / first.n : null;
  return points.map((point) => {
    const measure = label(point);
    const judged = target && target.n === point.n ? { atMost: target.atMost } : null;
    if (point.timedOut) {
      return row(measure, {
        unit: "ms",
        standin: null,
        target: judged,
        cells: { standin: `> ${point.limitSeconds} s (stopped)` },
        extra: { n: point.n, timedOut: true },
      });
    }
    const value = pick(point);
    const perItemUs = (value / point.n) * 1000;
    return row(measure, {
      unit: "ms",
      standin: value,
      ratio: firstPerItem === null ? null : value / point.n / firstPerItem,
      target: judged,
      cells: { standin: `${ms(value)} (${us(perItemUs)}/${unitName})` },
      extra: { n: point.n, perItemUs },
    });
  });
}

function scaleRows(scale, settings) {
  const rows = [];
  rows.push(
    ...curveRows(scale.jobs, {
      label: (p) => `jobs: seed ${short(p.n)} (fixtures of 1,000)`,
      unitName: "job",
      pick: (p) => p.seedMs,
    }),
  );
  rows.push(
    ...curveRows(scale.jobs, {
      label: (p) => `jobs: GET /v1/jobs?filter=(10 %)&per_page=20 over ${short(p.n)}, p50${p.listMs ? ` (N=${p.listMs.length})` : ""}`,
      unitName: "job",
      pick: (p) => median(p.listMs),
      target: { n: 10_000, atMost: 20 },
    }),
  );
  rows.push(
    ...curveRows(scale.sessions, {
      label: (p) => `sessions: create ${short(p.n)} with TTL (fixtures of 10,000)`,
      unitName: "session",
      pick: (p) => p.createMs,
    }),
  );
  rows.push(
    ...curveRows(scale.sessions, {
      label: (p) => `sessions: expire ${short(p.n)} with one advance`,
      unitName: "session",
      pick: (p) => p.expireMs,
      target: { n: 100_000, atMost: 2_000 },
    }),
  );
  rows.push(
    ...curveRows(scale.blocking, {
      label: (p) => `blocking: wake ${short(p.n)} parked GET /v1/jobs?index= with one write (write → last answer)`,
      unitName: "query",
      pick: (p) => p.wakeMs,
      target: { n: 10_000, atMost: 300 },
    }),
  );
  rows.push(
    ...curveRows(scale.blocking, {
      label: (p) => `blocking: then the client reads the ${short(p.n)} bodies (web streams, in process)`,
      unitName: "query",
      pick: (p) => p.readMs,
    }),
  );
  const snap = scale.snapshot;
  const snapLabel = short(settings.scale.snapshotJobs);
  if (snap.timedOut) {
    rows.push(row(`snapshot: ${snapLabel} jobs`, { unit: "ms", standin: null, cells: { standin: `> ${snap.limitSeconds} s (stopped)` } }));
  } else {
    rows.push(row(`snapshot: GET /_standin/snapshot, ${snapLabel} jobs (${mb(snap.bytes)} of JSON)`, { unit: "ms", standin: snap.getMs }));
    rows.push(row(`snapshot: PUT /_standin/snapshot (restore that document)`, { unit: "ms", standin: snap.putMs }));
    rows.push(
      row(`snapshot: emu.snapshot() / emu.restore(), ${snapLabel} jobs`, {
        unit: "ms",
        standin: snap.snapshotMs,
        cells: { standin: `${ms(snap.snapshotMs)} / ${ms(snap.restoreMs)}` },
        extra: { restoreMs: snap.restoreMs },
      }),
    );
  }
  const memory = scale.memory;
  const empty = scale.memoryEmpty;
  const memoryLabel = `memory: RSS with ${short(settings.scale.memory.jobs)} jobs + ${short(settings.scale.memory.sessions)} sessions (fresh process, after GC)`;
  if (memory.timedOut) {
    rows.push(row(memoryLabel, { unit: "MB", standin: null, target: { atMost: 300 }, cells: { standin: `> ${memory.limitSeconds} s (stopped)` } }));
  } else {
    rows.push(row(memoryLabel, { unit: "MB", standin: memory.rssBytes / 2 ** 20, baseline: empty.rssBytes / 2 ** 20, target: { atMost: 300 } }));
    rows.push(row("memory: JS heap used, same process", { unit: "MB", standin: memory.heapUsedBytes / 2 ** 20, baseline: empty.heapUsedBytes / 2 ** 20 }));
  }
  const heavy = scale.kvHeavy;
  const heavyLabel = `long run: ${short(settings.scale.longRun.kvWrites)} KV writes of 500 KB on a 256 MB heap (peak RSS)`;
  if (!heavy || heavy.timedOut || heavy.failed) {
    rows.push(
      row(heavyLabel, {
        unit: "MB",
        standin: null,
        target: { text: "completes" },
        cells: { standin: heavy?.timedOut ? `> ${heavy.limitSeconds} s (stopped)` : `died: ${heavy?.failed ?? "not run"}` },
      }),
    );
  } else {
    rows.push(row(heavyLabel, { unit: "MB", standin: heavy.peakRssBytes / 2 ** 20, target: { atMost: Infinity, text: "completes" }, extra: { writeMs: heavy.writeMs } }));
  }
  const requests = scale.requests;
  const requestsLabel = `long run: RSS growth from 10k to ${short(settings.scale.longRun.requests)} small requests (after GC)`;
  if (!requests || requests.timedOut || requests.failed) {
    rows.push(
      row(requestsLabel, {
        unit: "MB",
        standin: null,
        target: { atMost: 50 },
        cells: { standin: requests?.timedOut ? `> ${requests.limitSeconds} s (stopped)` : `failed: ${requests?.failed ?? "not run"}` },
      }),
    );
  } else {
    const growth = (requests.rssBytes - requests.early.rssBytes) / 2 ** 20;
    rows.push(
      row(requestsLabel, {
        unit: "MB",
        standin: growth,
        baseline: requests.early.rssBytes / 2 ** 20,
        ratio: null,
        target: { atMost: 50 },
        extra: { finalRssBytes: requests.rssBytes, ms: requests.ms },
      }),
    );
  }
  return rows;
}

const STALL_LABELS = {
  "big-body": "PUT /v1/jobs with 500k Meta keys (~7 MB)",
  "slow-readers": "200 clients GET a 13 MB listing and never read",
  "tape-export": "GET /_standin/tape of a ~36 MB tape",
};

/** What a stall case's detail says about its answer, for the row (status, sizes, what a case counted). */
function stallDetail(detail = {}) {
  const during = detail.during ? ` while ${detail.during}` : "";
  if (detail.timedOut) return `stopped at ${detail.limitSeconds} s${during}`;
  if (detail.failed) return `failed${during}: ${detail.failed}`;
  const parts = [];
  if (detail.status !== undefined) parts.push(`answered ${detail.status}`);
  if (detail.answerMB !== undefined) parts.push(`${detail.answerMB} MB`);
  if (detail.children !== undefined) {
    parts.push(
      `${count(detail.children)} children; advances: first ${count(detail.firstAdvanceMs)} ms, last ${count(detail.lastAdvanceMs)} ms, slowest ${count(detail.slowestAdvanceMs)} ms`,
    );
  }
  if (detail.subscribers !== undefined)
    parts.push(
      `${count(detail.subscribers)} subscribers, writes answered ${Object.entries(detail.statuses ?? {})
        .map(([status, n]) => `${n}× ${status}`)
        .join(" ")}`,
    );
  if (detail.servicesLeft !== undefined) parts.push(`${count(detail.servicesLeft)} services left`);
  if (detail.heavyMs !== undefined) parts.push(`sent in ${count(detail.heavyMs)} ms`);
  return parts.join(", ");
}

function stallRows(stalls) {
  const rows = [];
  for (const [name, result] of Object.entries(stalls ?? {})) {
    const about = stallDetail(result.detail);
    if (result.samples === 0) {
      const r = row(`stall: GET /_standin/clock p99 while ${result.label ?? name}`, {
        unit: "ms",
        standin: null,
        target: { atMost: 100 },
        cells: { standin: about },
        extra: { case: name },
      });
      r.met = false;
      r.cells[5] = "**MISSED**";
      rows.push(r);
      continue;
    }
    rows.push(
      row(`stall: GET /_standin/clock p99 while ${result.label ?? STALL_LABELS[name] ?? name}`, {
        unit: "ms",
        standin: result.p99,
        target: { atMost: 100 },
        extra: { case: name, p50: result.p50, max: result.max, samples: result.samples, detail: result.detail },
      }),
    );
    rows.push(row(`  max, same run${about ? ` (${about})` : ""}`, { unit: "ms", standin: result.max }));
  }
  return rows;
}

/**
 * Issue 30's fan-out rows: per kind, the time of the one advance at each size
 * with its time per object; the ratio is the time per object relative to the
 * smallest size, judged (≤ FANOUT_RATIO_TARGET) at every larger size.
 */
export const FANOUT_RATIO_TARGET = 2;

function fanoutRows(fanout, { labels, limitSeconds }) {
  const rows = [];
  for (const [kind, points] of Object.entries(fanout ?? {})) {
    const { label, unit, units } = labels[kind];
    const first = points[0];
    const firstPerObject = first && !first.timedOut && !first.failed && !first.skipped ? first.advanceMs / first.n : null;
    for (const point of points) {
      const measure = `fan-out: ${label}, ${short(point.n)} ${units}, one advance`;
      const judged = point !== first;
      const targetText = judged ? `≤ ${FANOUT_RATIO_TARGET}× per ${unit} vs ${short(first.n)}` : `completes within ${limitSeconds} s`;
      const fixed = (standinCell, met) => {
        const r = row(measure, { unit: "ms", standin: null, target: { text: targetText }, cells: { standin: standinCell }, extra: { kind, n: point.n } });
        r.met = met;
        r.cells[5] = met === null ? "—" : met ? "yes" : "**MISSED**";
        return r;
      };
      if (point.skipped) {
        rows.push(fixed(`not run (${short(point.after)} was stopped)`, null));
      } else if (point.timedOut) {
        // A stopped or failed case is a miss at any size, the smallest included: its ratio cannot even be taken.
        rows.push(fixed(`> ${point.limitSeconds} s (stopped in ${point.phase ?? "start-up"})`, false));
      } else if (point.failed) {
        rows.push(fixed(`failed: ${point.failed.slice(0, 120)}`, false));
      } else {
        const perObjectUs = (point.advanceMs / point.n) * 1000;
        const ratio = firstPerObject === null ? null : point.advanceMs / point.n / firstPerObject;
        const r = row(measure, {
          unit: "ms",
          standin: point.advanceMs,
          ratio,
          target: { text: targetText },
          cells: { standin: `${ms(point.advanceMs)} (${us(perObjectUs)}/${unit}; set-up ${ms(point.setupMs)})` },
          extra: { kind, n: point.n, perObjectUs, setupMs: point.setupMs, fired: point.fired },
        });
        r.met = judged ? ratio !== null && ratio <= FANOUT_RATIO_TARGET : true;
        r.cells[5] = r.met ? "yes" : "**MISSED**";
        rows.push(r);
      }
    }
  }
  return rows;
}

/** Issue 30's churn rows: RSS after the warm-up and at the end (±50 MB), growth at the end, what the scheduler keeps. */
function churnRows(churn) {
  if (!churn) return [];
  const mib = (bytes) => bytes / 2 ** 20;
  const span = `${churn.warmMinutes} → ${churn.minutes} min`;
  const rows = [row(`churn: RSS after the first ${churn.warmMinutes} min (the reference)`, { unit: "MB", standin: mib(churn.warmRssBytes) })];
  if (churn.stoppedBy) {
    const r = row(`churn: RSS change ${span}`, { unit: "MB", standin: null, target: { text: "within ±50 MB" }, cells: { standin: `stopped: ${churn.stoppedBy}` } });
    r.met = false;
    r.cells[5] = "**MISSED**";
    return [...rows, r];
  }
  const change = mib(churn.endRssBytes - churn.warmRssBytes);
  const judged = row(`churn: RSS change ${span} (${mib(churn.endRssBytes).toFixed(0)} MB at the end)`, {
    unit: "MB",
    standin: change,
    baseline: mib(churn.warmRssBytes),
    ratio: null,
    target: { text: "within ±50 MB" },
    cells: { standin: `${change >= 0 ? "+" : ""}${change.toFixed(1)} MB` },
    extra: { endRssBytes: churn.endRssBytes, warmRssBytes: churn.warmRssBytes },
  });
  judged.met = Math.abs(change) <= 50;
  judged.cells[5] = judged.met ? "yes" : "**MISSED**";
  rows.push(judged);
  const growth = churn.growthMbPerMinute;
  rows.push(
    row("churn: RSS growth over the last fifth of the run", {
      unit: "MB",
      standin: growth,
      cells: { standin: growth === null ? "—" : `${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB/min` },
    }),
  );
  if (churn.endRequestsPerMinute != null && churn.warmRequestsPerMinute != null) {
    rows.push(
      row("churn: requests a minute over the last fifth (baseline: during the warm-up)", {
        unit: "req/min",
        standin: churn.endRequestsPerMinute,
        baseline: churn.warmRequestsPerMinute,
        cells: { standin: `${count(Math.round(churn.endRequestsPerMinute))}/min`, baseline: `${count(Math.round(churn.warmRequestsPerMinute))}/min` },
      }),
    );
  }
  const c = churn.counts ?? {};
  const kept = c.error ? `not read: ${c.error}` : ["allocations", "evaluations", "deployments", "jobs"].map((k) => `${count(c[k] ?? 0)} ${k}`).join(", ");
  rows.push(
    row(`churn: kept at the end, from the API (${count(churn.requests)} requests, ${count(churn.failures)} answered ≥ 400; clock at ${churn.virtualNow})`, {
      unit: "MB",
      standin: null,
      cells: { standin: kept },
      extra: { counts: c },
    }),
  );
  return rows;
}

export function buildRows({ startup, create, reset, timers, throughput, scale, stalls, churn, fanout }, settings) {
  return [
    ...(startup ? startupRows({ startup, create, reset, timers }, settings) : []),
    ...(throughput ? throughputRows(throughput, settings) : []),
    ...(scale ? scaleRows(scale, settings) : []),
    ...churnRows(churn),
    ...fanoutRows(fanout, settings.fanout),
    ...stallRows(stalls),
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
    "  The single executable (build/standin, when `npm run build:exe` built it) is timed the same way, interleaved with both.",
    "- Go helper: bench/go-startup's `go test`, standintest.Start (bin/standin, ready file polled every 5 ms) to the answer of",
    "  GET /v1/status/leader, against the bare server started from Go and asked once; alternating, one warm-up each discarded.",
    `- In-process rows have no baseline. p99 is nearest-rank: at N=${settings.create.iterations} it is the slowest sample.`,
    "- Throughput: one standin (CLI, a fixture with 20 jobs and 50 sessions) and, per route, a bare node:http floor answering",
    "  standin's exact status, headers and body; both in child processes, loaded one at a time with autocannon (keep-alive)",
    `  from the bench process, in ${settings.throughput.rounds} alternating rounds (each after a ${settings.throughput.warmupSeconds} s warm-up); each route shows its round with`,
    "  the median ratio (all rounds are in the JSON). Server CPU per request: the server process's user + system time over the",
    "  measured run (all threads, /proc) divided by its requests; steadier than requests/s on a shared machine.",
    "  Framework floor: Hono on @hono/node-server (standin's stack) with one handler answering the same bytes after reading",
    "  the request body, measured in the same rounds: what the stack costs before standin adds anything.",
    "  Simple routes (≥ 70 % target): /_standin/clock, /v1/jobs, /v1/session/list,",
    "  /echo. /auth/info/providerjwt verifies an RS256 signature per request (the floor does no crypto): reported, not judged.",
    "- Scale rows run in process (createStandin from dist/), each case in a fresh child process stopped after",
    `  ${settings.scale.caseLimitSeconds} s. The ratio column there is the time per item relative to the curve's smallest size`,
    "  (1.00× = linear; ~10× per tenfold size = quadratic). Jobs are seeded through fixtures (the engine registers each),",
    "  sessions through fixtures with TTL 30s; the advance is emu.clock.advance('61s'). Blocking: N in-process",
    "  GET /v1/jobs?index=<current>&wait=5m, then one PUT /v1/jobs; time from the write to the last answer.",
    "- Memory: RSS (and JS heap) after a forced GC in a fresh process holding one emulator; baseline: the same with an empty one.",
    "- Long run: 100k PUT /v1/kv of 500 KB to 4 keys in a process with --max-old-space-size=256 (target: it completes);",
    "  1M small requests (KV write, KV read, job list in turn) in process; RSS after a forced GC at 10k and at the end.",
    "- Stalls: a fresh `standin start` per case; a probe asks GET /_standin/clock every 5 ms on its own keep-alive",
    "  connection while another client sends the heavy request(s) (bench/lib/stalls.mjs); p99 and max of the probe.",
    `- Churn: one client, one request at a time, to a \`standin start\` child on 127.0.0.1 for ${settings.churn.minutes} min (job re-registers, variables,`,
    "  KV, agent services, sessions, events, echo; every 17th request advances the clock 7 s); VmRSS every 10 s; the",
    `  change is from the sample nearest ${settings.churn.warmMinutes} min to the end (bench/lib/churn.mjs).`,
    `- Fan-out: N objects set up in process, then one emu.clock.advance() timed alone, each case in a fresh process stopped`,
    `  after ${settings.fanout.limitSeconds} s (${settings.fanout.limitSeconds * 4} s at 100k; set-up included); ratio: time per object relative to the smallest size (bench/lib/fanout-cases.mjs).`,
    "- Targets are judged on the row that names one; p99, max and latency rows are context.",
  ].join("\n");
}

export function verdict(rows) {
  const missed = rows.filter((r) => r.met === false);
  const lines = [
    missed.length === 0 ? "All targets met." : `MISSED ${missed.length} target(s):\n${missed.map((r) => `  - ${r.measure}: ${r.cells[1]} (target ${r.target})`).join("\n")}`,
  ];
  // Issue 30's summary figure: the longest any one probe waited, over every stall case.
  const stalls = rows.filter((r) => r.case && r.max !== undefined);
  if (stalls.length > 0) {
    const worst = stalls.reduce((a, b) => (b.max > a.max ? b : a));
    lines.push(`Largest stall one request caused: ${ms(worst.max)} (${worst.case}; max of the probe over ${stalls.length} stall cases)`);
  }
  return lines.join("\n");
}

export async function writeJson(path, document) {
  await mkdir(dirname(path), { recursive: true });
  // Buffers (the mirrored response body) are not useful in the report; everything else is plain data.
  await writeFile(path, JSON.stringify(document, (_key, value) => (value?.type === "Buffer" ? undefined : value), 2) + "\n");
}
