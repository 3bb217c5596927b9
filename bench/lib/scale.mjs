/**
 * Scale curves and memory: each case runs in its own child process
 * (bench/lib/scale-case.mjs) with a time limit, so one case that grows out of
 * hand is stopped and reported as such instead of holding up the whole bench.
 */
import { fileURLToPath } from "node:url";
import { spawnNode, stopChild } from "./processes.mjs";
import { PROJECT_ROOT } from "./servers.mjs";

const CASE_SCRIPT = fileURLToPath(new URL("./scale-case.mjs", import.meta.url));
const RESULT_LINE = /^RESULT (.*)$/m;

/** Runs one case; resolves with its JSON, or `{timedOut: true, limitSeconds}` when it ran past the limit. */
export async function runCase(caseName, n, limitSeconds, extraArgs = [], nodeArgs = []) {
  const child = spawnNode(["--expose-gc", ...nodeArgs, CASE_SCRIPT, caseName, String(n), ...extraArgs.map(String)], { cwd: PROJECT_ROOT });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stopChild(child, 1_000);
  }, limitSeconds * 1000);
  const started = performance.now();
  const code = await new Promise((resolve) => child.once("exit", (exitCode, signal) => resolve(signal ?? exitCode)));
  clearTimeout(timer);
  const wallMs = performance.now() - started;
  // The last `PHASE <name>` line a case printed: where it was when it was stopped.
  if (timedOut) return { case: caseName, n, timedOut: true, limitSeconds, wallMs, phase: [...child.output.matchAll(/^PHASE (\S+)$/gm)].at(-1)?.[1] ?? null };
  const match = RESULT_LINE.exec(child.output);
  if (code !== 0 || !match) throw new Error(`scale case ${caseName} ${n} failed (${code}):\n${child.output}`);
  return { ...JSON.parse(match[1]), wallMs };
}

/** A case whose dying (out of memory) is a result to report, not a failure of the bench. */
async function runCaseOrFailure(...args) {
  try {
    return await runCase(...args);
  } catch (error) {
    return { case: args[0], n: args[1], failed: String(error.message).split("\n").slice(0, 3).join(" ") };
  }
}

/** Every scale case of `settings`, one after the other (never two at once: they would share 2 cores). */
export async function measureScale(settings, progress = () => {}) {
  const limit = settings.caseLimitSeconds;
  const out = { jobs: [], sessions: [], blocking: [], snapshot: null, memory: null, memoryEmpty: null, kvHeavy: null, requests: null };
  for (const n of settings.jobs) {
    progress(`  ${n.toLocaleString("en-US")} jobs: seed, then list + filter + page`);
    out.jobs.push(await runCase("jobs", n, limit));
  }
  for (const n of settings.sessions) {
    progress(`  ${n.toLocaleString("en-US")} TTL sessions: create, expire with one advance`);
    out.sessions.push(await runCase("sessions", n, limit));
  }
  for (const n of settings.blocking) {
    progress(`  ${n.toLocaleString("en-US")} parked blocking queries, one write`);
    out.blocking.push(await runCase("blocking", n, limit));
  }
  progress(`  snapshot + restore of ${settings.snapshotJobs.toLocaleString("en-US")} jobs`);
  out.snapshot = await runCase("snapshot", settings.snapshotJobs, limit);
  progress(`  memory: ${settings.memory.jobs.toLocaleString("en-US")} jobs + ${settings.memory.sessions.toLocaleString("en-US")} sessions (fresh process), and an empty emulator`);
  out.memory = await runCase("memory", settings.memory.sessions, limit, [settings.memory.jobs]);
  out.memoryEmpty = await runCase("memory-empty", 0, limit);
  const heavy = settings.longRun;
  progress(`  long run: ${heavy.kvWrites.toLocaleString("en-US")} KV writes of 500 KB on a 256 MB heap`);
  out.kvHeavy = await runCaseOrFailure("kv-heavy", heavy.kvWrites, heavy.limitSeconds, [], ["--max-old-space-size=256"]);
  progress(`  long run: ${heavy.requests.toLocaleString("en-US")} small requests, RSS after 10k and after all`);
  out.requests = await runCaseOrFailure("requests", heavy.requests, heavy.limitSeconds);
  return out;
}

/**
 * Issue 30's fan-out rows: for each kind (fanout-cases.mjs) and size, one case
 * in a fresh process. Once a size is stopped at the limit (or dies), the
 * larger sizes of that kind are not run: they could only take longer.
 */
export async function measureFanout(settings, progress = () => {}) {
  const out = {};
  for (const kind of settings.kinds) {
    out[kind] = [];
    let stopped = null;
    for (const n of settings.sizes) {
      if (stopped) {
        out[kind].push({ case: `fanout-${kind}`, n, skipped: true, after: stopped });
        continue;
      }
      progress(`  fan-out ${kind}: ${n.toLocaleString("en-US")} objects, one advance`);
      const result = await runCaseOrFailure(`fanout-${kind}`, n, fanoutLimitSeconds(settings, n));
      out[kind].push(result);
      if (result.timedOut || result.failed) stopped = n;
    }
  }
  return out;
}

/**
 * A fan-out case's time limit, set-up included. Setting 100k objects up through the HTTP surface
 * alone takes 20–30 s on the 2-core machine, so the 100k cases get four times the limit: a linear
 * advance at 100k then fits, and a quadratic one still does not.
 */
export function fanoutLimitSeconds(settings, n) {
  return n >= 100_000 ? settings.limitSeconds * 4 : settings.limitSeconds;
}
