/**
 * One scale case in a fresh process (so one case's heap and garbage never
 * weigh on the next one's figures). Run by bench/lib/scale.mjs as
 *
 *   node --expose-gc bench/lib/scale-case.mjs <case> <n>
 *
 * and prints one JSON line with the measurements. Everything runs in process
 * on the built package (dist/), through the same Hono apps the ports serve,
 * with the web Request and Response classes a `standin start` process uses:
 * @hono/node-server installs its lightweight ones when a server starts (a
 * Response whose body is in hand never becomes a web stream). Undici's own
 * classes, which a process without a server keeps, build a stream for every
 * body; for 10k woken queries that alone is ~0.2 s to build the answers and
 * ~1 s to read them.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { getRequestListener } from "@hono/node-server";

getRequestListener(() => new Response(null));
// BENCH_DIST: another build's dist/ (bench/instructions.mjs compares builds with this checkout's cases).
const { createStandin } = await import(process.env.BENCH_DIST ? pathToFileURL(join(process.env.BENCH_DIST, "index.js")).href : "../../dist/index.js");
const { FANOUT_KINDS } = await import("./fanout-cases.mjs");

const [caseName, countText, extraText] = process.argv.slice(2);
const n = Number(countText);
const extra = Number(extraText ?? 0);

const JOB_CHUNK = 1_000;
const SESSION_CHUNK = 10_000;

/** A small service job; every tenth is `Meta.tier = "gold"`, so the filter below matches 10 %. */
function benchJob(i) {
  return {
    ID: `job-${String(i).padStart(6, "0")}`,
    Type: "service",
    Datacenters: ["dc1"],
    Meta: { tier: i % 10 === 0 ? "gold" : "standard", owner: `team-${i % 7}` },
    TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "app", Driver: "docker", Config: { image: "nginx:1.27" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  };
}

const FILTER = 'Meta.tier == "gold"';
const LIST_PATH = `/v1/jobs?filter=${encodeURIComponent(FILTER)}&per_page=20`;

const since = (t0) => performance.now() - t0;

/** Turns callgrind's counting on or off for this process (it runs under valgrind); the event loop runs meanwhile. */
const countInstructions = (on) =>
  new Promise((resolve, reject) => {
    spawn("callgrind_control", ["-i", on ? "on" : "off", String(process.pid)], { stdio: "ignore" })
      .on("exit", resolve)
      .on("error", reject);
  });

/** Applies N jobs as fixtures of JOB_CHUNK jobs each (the engine registers each one: job, version, summary, eval). */
async function seedJobs(emu, count) {
  const t0 = performance.now();
  for (let start = 0; start < count; start += JOB_CHUNK) {
    const jobs = [];
    for (let i = start; i < Math.min(count, start + JOB_CHUNK); i++) jobs.push(benchJob(i));
    await emu.applyFixture({ scheduler: { jobs } });
  }
  return since(t0);
}

async function seedSessions(emu, count, ttl) {
  const t0 = performance.now();
  for (let start = 0; start < count; start += SESSION_CHUNK) {
    const sessions = [];
    for (let i = start; i < Math.min(count, start + SESSION_CHUNK); i++) sessions.push({ Name: `s-${i}`, ...(ttl ? { TTL: ttl } : {}) });
    await emu.applyFixture({ registry: { sessions } });
  }
  return since(t0);
}

async function timedRequest(app, path, init) {
  const t0 = performance.now();
  const response = await app.request(path, init);
  const body = await response.text();
  return { ms: since(t0), status: response.status, body };
}

const cases = {
  /**
   * Seed N jobs, then `GET /v1/jobs?filter=…&per_page=20` repeatedly (p50 of up to 15 requests or ~3 s).
   * Each request adds a parameter of its own (Nomad ignores unknown ones), so none is answered from the
   * read-answer cache: every sample filters and pages the N jobs.
   */
  async jobs() {
    const emu = await createStandin({ fixture: {} });
    const seedMs = await seedJobs(emu, n);
    const samples = [];
    const budgetEnds = performance.now() + 3_000;
    // The first request is a warm-up (JIT), not a sample.
    for (let i = 0; i < 16 && (i < 4 || performance.now() < budgetEnds); i++) {
      const r = await timedRequest(emu.scheduler, `${LIST_PATH}&sample=${i}`);
      if (r.status !== 200) throw new Error(`${LIST_PATH} answered ${r.status}: ${r.body.slice(0, 200)}`);
      const page = JSON.parse(r.body);
      if (page.length !== Math.min(20, Math.ceil(n / 10))) throw new Error(`expected a page of 20 jobs, got ${page.length}`);
      if (i > 0) samples.push(r.ms);
    }
    return { seedMs, listMs: samples, filter: FILTER };
  },

  /** Create N sessions with TTL 30s (fixtures), then one advance past 2×TTL expires them all. */
  async sessions() {
    const emu = await createStandin({ fixture: {} });
    const createMs = await seedSessions(emu, n, "30s");
    const table = emu.store.table("registry.sessions");
    if (table.size !== n) throw new Error(`created ${table.size} of ${n} sessions`);
    const t0 = performance.now();
    const fired = emu.clock.advance("61s");
    const expireMs = since(t0);
    if (table.size !== 0 || fired.length !== n) throw new Error(`after the advance: ${table.size} sessions left, ${fired.length} timers fired`);
    return { createMs, expireMs };
  },

  /**
   * N parked `GET /v1/jobs?index=<current>&wait=5m` (20 jobs), then one write
   * (PUT /v1/jobs): time from the write to the last answer (its Response, with
   * status and index checked). Reading the N bodies out of the web streams
   * they come in is the client's work, so it is timed after, on its own.
   */
  async blocking() {
    const emu = await createStandin({ fixture: { scheduler: { jobs: Array.from({ length: 20 }, (_, i) => benchJob(i)) } } });
    const first = await emu.scheduler.request("/v1/jobs");
    const index = Number(first.headers.get("x-nomad-index"));
    await first.arrayBuffer();
    let answered = 0;
    let lastAnswer = 0;
    let wrongIndex = 0;
    const t0 = performance.now();
    const pending = [];
    for (let i = 0; i < n; i++) {
      pending.push(
        Promise.resolve(emu.scheduler.request(`/v1/jobs?index=${index}&wait=5m`)).then((response) => {
          // Only the status here: asking a lightweight Response for its headers builds a web Response
          // around its body (client work, like reading the body); the index is checked after the clock stops.
          if (response.status !== 200) wrongIndex++;
          answered++;
          lastAnswer = performance.now();
          return response;
        }),
      );
    }
    while (emu.watchers.parked < n) {
      if (answered > 0) throw new Error("a blocking query answered before the write");
      await new Promise((resolve) => setImmediate(resolve));
    }
    const parkMs = since(t0);
    // Under callgrind (bench/instructions.mjs wake): count the instructions from the write to the last answer only.
    if (process.env.BENCH_COUNT_WAKE) await countInstructions(true);
    const write = performance.now();
    const response = await emu.scheduler.request("/v1/jobs", {
      method: "PUT",
      body: JSON.stringify({ Job: benchJob(n + 1_000) }),
      headers: { "content-type": "application/json" },
    });
    const writeMs = since(write);
    if (response.status !== 200) throw new Error(`PUT /v1/jobs answered ${response.status}`);
    const responses = await Promise.all(pending);
    const wakeMs = lastAnswer - write;
    if (process.env.BENCH_COUNT_WAKE) await countInstructions(false);
    for (const response of responses) if (Number(response.headers.get("x-nomad-index")) <= index) wrongIndex++;
    if (wrongIndex) throw new Error(`${wrongIndex} blocking queries answered without the new index`);
    const read = performance.now();
    const bodies = await Promise.all(responses.map((r) => r.text()));
    const readMs = since(read);
    if (new Set(bodies).size !== 1 || JSON.parse(bodies[0]).length !== 21) throw new Error("the woken queries did not all answer the 21 jobs");
    return { parkMs, writeMs, wakeMs, readMs };
  },

  /** N jobs; GET /_standin/snapshot, PUT it back (in process, JSON both ways); emu.snapshot()/restore() too. */
  async snapshot() {
    const emu = await createStandin({ fixture: {} });
    await seedJobs(emu, n);
    const hash = emu.stateHash();
    const get = await timedRequest(emu.scheduler, "/_standin/snapshot");
    if (get.status !== 200) throw new Error(`GET /_standin/snapshot answered ${get.status}`);
    let t0 = performance.now();
    const put = await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: get.body, headers: { "content-type": "application/json" } });
    await put.arrayBuffer();
    const putMs = since(t0);
    if (put.status !== 200) throw new Error(`PUT /_standin/snapshot answered ${put.status}`);
    if (emu.stateHash() !== hash) throw new Error("the state differs after PUT /_standin/snapshot");
    t0 = performance.now();
    const snap = emu.snapshot();
    const snapshotMs = since(t0);
    t0 = performance.now();
    emu.restore(snap);
    const restoreMs = since(t0);
    return { getMs: get.ms, putMs, bytes: Buffer.byteLength(get.body), snapshotMs, restoreMs };
  },

  /**
   * RSS once `extra` jobs and N sessions (1h TTL) are loaded, after a full GC.
   * `n = 0` with case "memory-empty" gives the baseline: the same process with an empty emulator.
   */
  async memory() {
    const emu = await createStandin({ fixture: {} });
    const t0 = performance.now();
    await seedJobs(emu, extra);
    await seedSessions(emu, n, "1h");
    const loadMs = since(t0);
    return { jobs: extra, sessions: n, loadMs, ...settledMemory(), kept: emu.index };
  },

  /**
   * N writes of 500 KB to four keys (PUT /v1/kv/key-<i % 4>), with the body's length stated as a
   * client sends it; run on a 256 MB heap (`--max-old-space-size=256`): completing is the target.
   */
  async "kv-heavy"() {
    const emu = await createStandin({ fixture: {} });
    const value = new Uint8Array(500 * 1024).fill(97);
    const t0 = performance.now();
    let peakRss = 0;
    for (let i = 0; i < n; i++) {
      const res = await emu.registry.request(`/v1/kv/key-${i % 4}`, { method: "PUT", body: value, headers: { "content-length": String(value.length) } });
      if (res.status !== 200) throw new Error(`PUT answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      if (i % 1000 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    const writeMs = since(t0);
    return { writes: n, writeMs, peakRssBytes: peakRss, heapLimitMb: 256, ...settledMemory() };
  },

  /**
   * N small requests (a KV write, a KV read, a job list in turn); RSS after a forced GC once 10,000 are
   * done and again after all N: the difference is what a long run keeps.
   */
  async requests() {
    const emu = await createStandin({ fixture: { scheduler: { jobs: Array.from({ length: 5 }, (_, i) => benchJob(i)) } } });
    const t0 = performance.now();
    let early;
    for (let i = 0; i < n; i++) {
      const res =
        i % 3 === 0
          ? await emu.registry.request(`/v1/kv/app/key-${i % 100}`, { method: "PUT", body: `value-${i}`, headers: { "content-length": String(`value-${i}`.length) } })
          : i % 3 === 1
            ? await emu.registry.request(`/v1/kv/app/key-${(i - 1) % 100}`)
            : await emu.scheduler.request("/v1/jobs");
      if (res.status !== 200) throw new Error(`request ${i} answered ${res.status}`);
      await res.arrayBuffer();
      if (i + 1 === 10_000) early = settledMemory();
    }
    return { requests: n, ms: since(t0), early, ...settledMemory() };
  },

  async "memory-empty"() {
    const emu = await createStandin({ fixture: {} });
    return { loadMs: 0, ...settledMemory(), kept: emu.index };
  },
};

/**
 * `fanout-<kind>`: N objects set up (untimed), then ONE clock advance timed alone (see fanout-cases.mjs).
 * Prints `PHASE <name>` lines so that a case stopped at its time limit says where it was.
 */
for (const [kind, spec] of Object.entries(FANOUT_KINDS)) {
  cases[`fanout-${kind}`] = async () => {
    // The clock's loop guard (100,000 timers scheduled and fired within one advance) is there to stop a
    // runaway timer; a drain of 100k allocations legitimately schedules more, so the fan-out cases raise it.
    const emu = await createStandin({ fixture: spec.fixture ?? {}, clock: { loopLimit: 10 * n } });
    process.stdout.write("PHASE setup\n");
    const t0 = performance.now();
    await spec.setup(emu, n);
    const setupMs = since(t0);
    process.stdout.write("PHASE advance\n");
    const t1 = performance.now();
    const fired = emu.clock.advance(spec.advance);
    const advanceMs = since(t1);
    process.stdout.write("PHASE check\n");
    const { objects } = spec.check(emu, n);
    return { kind, setupMs, advanceMs, fired: fired.length, objects };
  };
}

function settledMemory() {
  for (let i = 0; i < 3; i++) globalThis.gc?.();
  const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { rssBytes: rss, heapUsedBytes: heapUsed, externalBytes: external + arrayBuffers, gcForced: typeof globalThis.gc === "function" };
}

const run = cases[caseName];
if (!run) {
  process.stderr.write(`unknown case ${caseName} (cases: ${Object.keys(cases).join(", ")})\n`);
  process.exit(2);
}
const result = await run();
process.stdout.write(`RESULT ${JSON.stringify({ case: caseName, n, ...result })}\n`);
process.exit(0);
