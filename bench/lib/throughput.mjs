/**
 * Measure 4: requests/s and latency of `GET /_standin/clock` over keep-alive,
 * against a "floor": a bare `node:http` server answering the very same bytes.
 *
 * Both servers run as child processes and the load generator (autocannon)
 * runs in the bench process, so each server gets the same share of the
 * machine. They are measured one after the other, never together: on a
 * 2-core machine two servers under load would steal CPU from each other.
 */
import autocannon from "autocannon";
import { get, pollUntilOk } from "./http-probe.mjs";
import { stopChild } from "./processes.mjs";
import { spawnBareServer, spawnStandinCli } from "./servers.mjs";
import { percentile } from "./stats.mjs";

export const CLOCK_PATH = "/_standin/clock";

/**
 * One autocannon run. Latency percentiles are computed from autocannon's
 * per-response timings (fractional ms) because its own histogram keeps whole
 * milliseconds, which on loopback reads 0 or 1 for everything.
 */
async function load(url, { connections, durationSeconds, collectLatencies }) {
  const latencies = [];
  const instance = autocannon({ url, connections, duration: durationSeconds, pipelining: 1 });
  if (collectLatencies) instance.on("response", (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await instance;
  if (result.errors || result.timeouts || result.non2xx) {
    throw new Error(`load on ${url} had ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx answers`);
  }
  return {
    requestsPerSecond: result.requests.average,
    totalRequests: result.requests.total,
    durationSeconds: result.duration,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    autocannonLatencyMs: { p50: result.latency.p50, p99: result.latency.p99, average: result.latency.average },
  };
}

/** A short unrecorded run first, so JIT and connection setup are done before the measured one. */
async function warmAndMeasure(url, settings) {
  await load(url, { connections: settings.connections, durationSeconds: settings.warmupSeconds, collectLatencies: false });
  return load(url, { connections: settings.connections, durationSeconds: settings.durationSeconds, collectLatencies: true });
}

function describe(response) {
  return { status: response.status, contentType: response.headers["content-type"], body: response.body, headerNames: Object.keys(response.headers).sort() };
}

/** The floor must send what standin sent, byte for byte (Date aside); otherwise the comparison is void. */
function assertSameResponse(standin, floor) {
  const problems = [];
  if (floor.status !== standin.status) problems.push(`status ${floor.status} ≠ ${standin.status}`);
  if (floor.contentType !== standin.contentType) problems.push(`content-type ${floor.contentType} ≠ ${standin.contentType}`);
  if (!floor.body.equals(standin.body)) problems.push("body differs");
  if (floor.headerNames.join() !== standin.headerNames.join()) problems.push(`header names [${floor.headerNames}] ≠ [${standin.headerNames}]`);
  if (problems.length) throw new Error(`floor server does not mirror standin's response: ${problems.join("; ")}`);
}

/**
 * Both servers stay up (idle while the other is loaded) and are measured in
 * alternating rounds, the order flipped each round, so drift in the machine's
 * speed during the run hits both alike. Each round gives a ratio; the report
 * uses the round with the median ratio, and keeps every round in the JSON.
 */
export async function measureThroughput(settings) {
  const standinServer = spawnStandinCli();
  let floorServer;
  try {
    const standinUrl = (await standinServer.url) + CLOCK_PATH;
    await pollUntilOk(standinUrl.replace(CLOCK_PATH, "/_standin/ready"));
    const sample = describe(await get(standinUrl));
    if (sample.status !== 200) throw new Error(`${CLOCK_PATH} answered ${sample.status}`);
    floorServer = spawnBareServer(sample);
    const floorUrl = (await floorServer.url) + CLOCK_PATH;
    assertSameResponse(sample, describe(await get(floorUrl)));

    const rounds = [];
    for (let round = 0; round < settings.rounds; round++) {
      const order = round % 2 === 0 ? ["standin", "floor"] : ["floor", "standin"];
      const result = {};
      for (const name of order) result[name] = await warmAndMeasure(name === "standin" ? standinUrl : floorUrl, settings);
      rounds.push({ ...result, ratio: result.standin.requestsPerSecond / result.floor.requestsPerSecond });
    }
    const median = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
    return {
      standin: median.standin,
      floor: median.floor,
      rounds: rounds.map((r) => ({ standinRps: r.standin.requestsPerSecond, floorRps: r.floor.requestsPerSecond, ratio: r.ratio })),
      response: { status: sample.status, contentType: sample.contentType, bytes: sample.body.length, headerNames: sample.headerNames },
    };
  } finally {
    await stopChild(standinServer.child);
    if (floorServer) await stopChild(floorServer.child);
  }
}
