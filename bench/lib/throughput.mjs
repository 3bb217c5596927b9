/**
 * Requests/s and latency of standin's routes over keep-alive, each against a
 * "floor": a bare `node:http` server answering the very same bytes (status,
 * content-type, body and the other headers, captured from standin first).
 *
 * Both servers run as child processes and the load generator (autocannon)
 * runs in the bench process, so each server gets the same share of the
 * machine. They are measured one after the other, never together: on a
 * 2-core machine two servers under load would steal CPU from each other.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import { send, pollUntilOk } from "./http-probe.mjs";
import { stopChild } from "./processes.mjs";
import { spawnBareServer, spawnStandinCli } from "./servers.mjs";
import { percentile } from "./stats.mjs";

/** Filled in at run time: the bearer token minted through the control API. */
const TOKEN = "<minted>";

/**
 * The routes under load. `simple` routes are judged against the 70 % target;
 * the JWT route verifies an RS256 signature on every request (real crypto,
 * which the floor does not do), so it is reported without a target.
 */
export const ROUTES = [
  { id: "clock", label: "GET /_standin/clock", service: "scheduler", path: "/_standin/clock", simple: true },
  { id: "jobs", label: "GET /v1/jobs (20 jobs)", service: "scheduler", path: "/v1/jobs", simple: true },
  { id: "sessions", label: "GET /v1/session/list (50 sessions)", service: "registry", path: "/v1/session/list", simple: true },
  {
    id: "echo",
    label: "POST /echo?key=… (API key)",
    service: "echo",
    path: "/echo?key=test-api-key",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "hi" }),
    simple: true,
  },
  { id: "jwt", label: "GET /auth/info/providerjwt (RS256 JWT)", service: "echo", path: "/auth/info/providerjwt", headers: { authorization: `Bearer ${TOKEN}` }, simple: false },
];

/** What the standin under load holds: the route sizes named above (20 jobs, 50 sessions). */
export function throughputFixture() {
  const jobs = Array.from({ length: 20 }, (_, i) => ({
    ID: `bench-${String(i).padStart(2, "0")}`,
    Type: "service",
    Datacenters: ["dc1"],
    Meta: { tier: i % 10 === 0 ? "gold" : "standard" },
    TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "app", Driver: "docker", Config: { image: "nginx:1.27" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  }));
  const sessions = Array.from({ length: 50 }, (_, i) => ({ Name: `bench-session-${i}`, TTL: "60s" }));
  return { scheduler: { jobs }, registry: { sessions } };
}

/**
 * CPU time (user + system, all threads) a child process has used so far, in µs, from
 * /proc/<pid>/stat; null off Linux. Unlike requests/s, CPU per request barely moves
 * with what else the machine runs, so it is reported beside the throughput.
 */
function cpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the command).
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * One autocannon run. Latency percentiles are computed from autocannon's
 * per-response timings (fractional ms) because its own histogram keeps whole
 * milliseconds, which on loopback reads 0 or 1 for everything.
 */
async function load(url, route, { connections, durationSeconds, collectLatencies, serverPid }) {
  const latencies = [];
  const cpuBefore = serverPid === undefined ? null : cpuMicros(serverPid);
  const instance = autocannon({ url, connections, duration: durationSeconds, pipelining: 1, method: route.method ?? "GET", headers: route.headers, body: route.body });
  if (collectLatencies) instance.on("response", (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await instance;
  const cpuAfter = serverPid === undefined ? null : cpuMicros(serverPid);
  if (result.errors || result.timeouts || result.non2xx) {
    throw new Error(`load on ${url} had ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`);
  }
  return {
    requestsPerSecond: result.requests.average,
    totalRequests: result.requests.total,
    durationSeconds: result.duration,
    cpuMicrosPerRequest: cpuBefore === null || cpuAfter === null || result.requests.total === 0 ? null : (cpuAfter - cpuBefore) / result.requests.total,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, average: result.latency.average },
  };
}

/** A short unrecorded run first, so JIT and connection setup are done before the measured one. */
async function warmAndMeasure(url, route, settings, serverPid) {
  await load(url, route, { connections: settings.connections, durationSeconds: settings.warmupSeconds, collectLatencies: false });
  return load(url, route, { connections: settings.connections, durationSeconds: settings.durationSeconds, collectLatencies: true, serverPid });
}

// Set by node:http itself on each response (or per connection): not part of what the floor mirrors.
const TRANSPORT_HEADERS = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding", "content-type"]);

function describe(response) {
  return {
    status: response.status,
    contentType: response.headers["content-type"],
    body: response.body,
    headerNames: Object.keys(response.headers).sort(),
    extraHeaders: Object.entries(response.headers).filter(([name]) => !TRANSPORT_HEADERS.has(name)),
  };
}

/** The floor must send what standin sent, byte for byte (Date aside); otherwise the comparison is void. */
function assertSameResponse(what, standin, floor) {
  const problems = [];
  if (floor.status !== standin.status) problems.push(`status ${floor.status} ≠ ${standin.status}`);
  if (floor.contentType !== standin.contentType) problems.push(`content-type ${floor.contentType} ≠ ${standin.contentType}`);
  if (!floor.body.equals(standin.body)) problems.push("body differs");
  const names = (d) => d.headerNames.filter((n) => n !== "transfer-encoding" && n !== "content-length").join();
  if (names(floor) !== names(standin)) problems.push(`header names [${floor.headerNames}] ≠ [${standin.headerNames}]`);
  for (const [name, value] of standin.extraHeaders) if (floor.extraHeaders.find(([n]) => n === name)?.[1] !== value) problems.push(`header ${name} differs`);
  if (problems.length) throw new Error(`${what}: floor server does not mirror standin's response: ${problems.join("; ")}`);
}

/** Asks the running standin for a long-lived provider_jwt token (POST /_standin/echo/tokens). */
async function mintToken(echoUrl) {
  const response = await send(`${echoUrl}/_standin/echo/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ scheme: "provider_jwt", expiresIn: "8760h" }),
  });
  if (response.status !== 200) throw new Error(`POST /_standin/echo/tokens answered ${response.status}: ${response.body}`);
  return JSON.parse(response.body.toString("utf8")).token;
}

/**
 * One route: capture standin's answer, start a floor serving those bytes (and
 * the framework floor, Hono on @hono/node-server serving them too), then
 * alternate rounds (order rotated each round, so drift in the machine's speed
 * hits all alike). Each round gives a ratio; the route's figures are the round
 * with the median ratio, every round is kept for the JSON.
 */
async function measureRoute(route, standinBase, settings, standinPid) {
  const standinUrl = standinBase + route.path;
  const sample = describe(await send(standinUrl, route));
  if (sample.status !== 200) throw new Error(`${route.label} answered ${sample.status}: ${sample.body}`);
  const floorServer = spawnBareServer(sample);
  const honoServer = spawnBareServer(sample, { hono: true });
  try {
    const urls = { standin: standinUrl, floor: (await floorServer.url) + route.path, hono: (await honoServer.url) + route.path };
    const pids = { standin: standinPid, floor: floorServer.child.pid, hono: honoServer.child.pid };
    assertSameResponse(route.label, sample, describe(await send(urls.floor, route)));
    assertSameResponse(`${route.label} (framework floor)`, sample, describe(await send(urls.hono, route)));
    const rounds = [];
    const names = ["standin", "floor", "hono"];
    for (let round = 0; round < settings.rounds; round++) {
      const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
      const result = {};
      for (const name of order) result[name] = await warmAndMeasure(urls[name], route, settings, pids[name]);
      rounds.push({
        ...result,
        ratio: result.standin.requestsPerSecond / result.floor.requestsPerSecond,
        honoRatio: result.hono.requestsPerSecond / result.floor.requestsPerSecond,
      });
    }
    const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
    const honoMedian = [...rounds].sort((a, b) => a.honoRatio - b.honoRatio)[Math.floor(rounds.length / 2)];
    return {
      label: route.label,
      simple: route.simple,
      standin: median.standin,
      floor: median.floor,
      hono: { ...honoMedian.hono, floorRequestsPerSecond: honoMedian.floor.requestsPerSecond, ratio: honoMedian.honoRatio },
      rounds: rounds.map((r) => ({
        standinRps: r.standin.requestsPerSecond,
        floorRps: r.floor.requestsPerSecond,
        honoRps: r.hono.requestsPerSecond,
        ratio: r.ratio,
        honoRatio: r.honoRatio,
        standinCpuUs: r.standin.cpuMicrosPerRequest,
        floorCpuUs: r.floor.cpuMicrosPerRequest,
        honoCpuUs: r.hono.cpuMicrosPerRequest,
      })),
      cpu: medianCpu(rounds),
      response: { status: sample.status, contentType: sample.contentType, bytes: sample.body.length, headerNames: sample.headerNames },
    };
  } finally {
    await Promise.all([stopChild(floorServer.child), stopChild(honoServer.child)]);
  }
}

/**
 * The routes (all, or those whose ids `only` lists) against one standin (started by its CLI with
 * `fixtureFile`, and `nodeArgs` for node); returns results by route id.
 */
export async function measureThroughput(settings, { fixtureFile, progress = () => {}, only, nodeArgs = [] }) {
  const standinServer = spawnStandinCli(["--fixture", fixtureFile], { nodeArgs });
  try {
    const urls = await standinServer.urls;
    await pollUntilOk(`${urls.scheduler}/_standin/ready`);
    const token = await mintToken(urls.echo);
    const results = {};
    for (const template of ROUTES) {
      if (only && !only.includes(template.id)) continue;
      const route = template.headers?.authorization ? { ...template, headers: { ...template.headers, authorization: `Bearer ${token}` } } : template;
      progress(`  ${route.label}`);
      results[route.id] = await measureRoute(route, urls[route.service], settings, standinServer.child.pid);
    }
    return results;
  } finally {
    await stopChild(standinServer.child);
  }
}

/** The median CPU µs per request over the rounds, for standin and the floor (null where unmeasured). */
function medianCpu(rounds) {
  const median = (values) => {
    const known = values.filter((v) => v !== null).sort((a, b) => a - b);
    return known.length === 0 ? null : known[Math.floor(known.length / 2)];
  };
  return {
    standin: median(rounds.map((r) => r.standin.cpuMicrosPerRequest)),
    floor: median(rounds.map((r) => r.floor.cpuMicrosPerRequest)),
    hono: median(rounds.map((r) => r.hono.cpuMicrosPerRequest)),
  };
}
