/**
 * Churn (issue 30 §1): does standin's state age as the products' does? One
 * client sends a mixed churn over HTTP to a `standin start` child for a fixed
 * number of real minutes — job re-registers of 20 jobs, variables, KV,
 * agent services, sessions, user events and echo calls, with the clock moved
 * 7 s every 17th request (about 11 virtual hours in 5 minutes) — and the
 * child's RSS (VmRSS from /proc/<pid>/status) is sampled every 10 s.
 * Target: RSS at the end within ±50 MB of RSS at the end of the warm-up.
 *
 * Traffic goes to 127.0.0.1 only (refused otherwise); the run stops by itself
 * at its duration, or as soon as one request takes longer than
 * REQUEST_TIMEOUT_MS (a frozen server is a result, not a hung bench).
 */
import { readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { stopChild } from "./processes.mjs";
import { spawnStandinCli } from "./servers.mjs";

const SAMPLE_EVERY_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
const ADVANCE_EVERY = 17;
const JOBS = 20;
const MiB = 2 ** 20;

/** VmRSS of `pid` in bytes (Linux), or null where /proc is not there. */
async function rssOf(pid) {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return kb ? Number(kb[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** A service job of 2 allocations; `round` changes its task's env, so each re-register is a destructive update (new version, deployment, allocations). */
function churnJob(j, round) {
  return {
    Job: {
      ID: `churn-${j}`,
      Type: "service",
      Datacenters: ["dc1"],
      TaskGroups: [
        {
          Name: "web",
          Count: 2,
          Update: { MaxParallel: 2, MinHealthyTime: 1e9, HealthyDeadline: 60e9, ProgressDeadline: 120e9 },
          Tasks: [{ Name: "app", Driver: "docker", Config: { image: "nginx:1.27" }, Env: { ROUND: String(round) }, Resources: { CPU: 10, MemoryMB: 10 } }],
        },
      ],
    },
  };
}

/** The i-th request of the churn: [service, method, path, body?]. Every 17th moves the clock. */
function churnRequest(i) {
  if (i % ADVANCE_EVERY === ADVANCE_EVERY - 1) return ["scheduler", "POST", "/_standin/clock/advance", { by: "7s" }];
  // The mix counts the other requests only, so that no kind of request is skipped for an advance.
  const m = i - Math.floor(i / ADVANCE_EVERY);
  const k = Math.floor(m / 8);
  switch (m % 8) {
    case 0:
      return ["scheduler", "PUT", "/v1/jobs", churnJob(k % JOBS, k)];
    case 1:
      return ["scheduler", "PUT", `/v1/var/churn/v-${k % 200}`, { Items: { value: `v-${k}` } }];
    case 2:
      return ["registry", "PUT", `/v1/kv/churn/k-${k % 500}`, `value-${k}`];
    case 3: {
      // Registers services 0…99 in turn (a re-register replaces one); each deregistered 50 turns after it came.
      const turn = Math.floor(k / 2);
      return k % 2 === 0 || turn < 50
        ? ["registry", "PUT", "/v1/agent/service/register", { ID: `churn-svc-${turn % 100}`, Name: "churn", Port: 8000 + (turn % 100), Check: { TTL: "30s", Status: "passing" } }]
        : ["registry", "PUT", `/v1/agent/service/deregister/churn-svc-${(turn - 50) % 100}`];
    }
    case 4:
      return ["registry", "PUT", "/v1/session/create", { Name: `churn-${k}`, TTL: "15s", Behavior: "delete" }];
    case 5:
      return ["registry", "PUT", `/v1/event/fire/churn-${k % 10}`, `payload-${k}`];
    case 6:
      return ["echo", "POST", "/echo?key=test-api-key", { message: `hello ${k}` }];
    default:
      return ["scheduler", "GET", "/v1/jobs"];
  }
}

/** One request on the keep-alive agent; resolves with the status (the body is read and dropped). */
function sendOn(agent, url, method, body) {
  const payload = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent, timeout: REQUEST_TIMEOUT_MS, headers: payload === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end(payload);
  });
}

/** GET `url` as JSON (the object counts at the end). */
async function getJson(agent, url) {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
        } catch (error) {
          reject(error);
        }
      });
    });
    req.on("timeout", () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on("error", reject);
    req.end();
  });
}

/** Slope (MB per minute) of a least-squares line through `samples` ({atMs, rssBytes}). */
function slopeMbPerMinute(samples) {
  if (samples.length < 2) return null;
  const xs = samples.map((s) => s.atMs / 60_000);
  const ys = samples.map((s) => s.rssBytes / MiB);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

/** Requests a minute between the first and the last of `samples`. */
function perMinute(samples) {
  const first = samples[0];
  const last = samples.at(-1);
  return last.atMs > first.atMs ? ((last.requests - first.requests) / (last.atMs - first.atMs)) * 60_000 : null;
}

const assertLoopback = (url) => {
  if (new URL(url).hostname !== "127.0.0.1") throw new Error(`churn: refusing to send traffic to ${url} (127.0.0.1 only)`);
};

/**
 * Runs the churn for `minutes` real minutes; RSS after `warmMinutes` is the reference.
 * Resolves with the samples, the two RSS figures, the end's growth rate and the object counts.
 */
export async function measureChurn({ minutes, warmMinutes }, progress = () => {}) {
  const standin = spawnStandinCli();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const urls = await standin.urls;
    for (const url of Object.values(urls)) assertLoopback(url);
    const pid = standin.child.pid;
    const began = performance.now();
    const endsAt = began + minutes * 60_000;
    const warmAt = warmMinutes * 60_000;
    const samples = [{ atMs: 0, rssBytes: await rssOf(pid), requests: 0 }];
    let nextSample = SAMPLE_EVERY_MS;
    let requests = 0;
    let failures = 0;
    const statuses = {};
    const failedRoutes = {};
    let stoppedBy = null;
    while (performance.now() < endsAt) {
      const [service, method, path, body] = churnRequest(requests);
      try {
        const status = await sendOn(agent, `${urls[service]}${path}`, method, body);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status >= 400) {
          failures++;
          const route = `${method} ${path.replace(/[-/]\d+/g, "/N")} → ${status}`;
          failedRoutes[route] = (failedRoutes[route] ?? 0) + 1;
        }
      } catch (error) {
        stoppedBy = `request ${requests} (${method} ${path}): ${error.message}`;
        break;
      }
      requests++;
      const elapsed = performance.now() - began;
      if (elapsed >= nextSample) {
        samples.push({ atMs: elapsed, rssBytes: await rssOf(pid), requests });
        if (Math.round(elapsed / 1000) % 60 < 10)
          progress(`  churn: ${(elapsed / 60_000).toFixed(1)} min, ${requests.toLocaleString("en-US")} requests, RSS ${(samples.at(-1).rssBytes / MiB).toFixed(0)} MB`);
        nextSample += SAMPLE_EVERY_MS;
      }
    }
    const elapsedMs = performance.now() - began;
    samples.push({ atMs: elapsedMs, rssBytes: await rssOf(pid), requests });
    const warm = samples.reduce((best, s) => (Math.abs(s.atMs - warmAt) < Math.abs(best.atMs - warmAt) ? s : best), samples[0]);
    const end = samples.at(-1);
    // Growth at the end: the line through the last fifth of the run (at least the last three samples).
    const tail = samples.filter((s) => s.atMs >= elapsedMs * 0.8);
    // Reading what is kept may itself be slow (every allocation, as JSON): a failure is reported, not thrown.
    const counts = stoppedBy ? null : await objectCounts(agent, urls).catch((error) => ({ error: error.message }));
    const clock = stoppedBy ? null : await getJson(agent, `${urls.scheduler}/_standin/clock`).catch(() => null);
    return {
      minutes,
      warmMinutes,
      elapsedMs,
      requests,
      failures,
      statuses,
      failedRoutes,
      stoppedBy,
      virtualNow: clock?.now ?? null,
      warmRssBytes: warm.rssBytes,
      warmAtMs: warm.atMs,
      endRssBytes: end.rssBytes,
      growthMbPerMinute: slopeMbPerMinute(tail.length >= 3 ? tail : samples.slice(-3)),
      // The client waits for each answer, so a server that slows down as its state grows also slows
      // the churn (and its RSS growth): the two rates say how much.
      warmRequestsPerMinute: warm.atMs > 0 ? (warm.requests / warm.atMs) * 60_000 : null,
      endRequestsPerMinute: perMinute(tail.length >= 2 ? tail : samples.slice(-2)),
      counts,
      samples,
    };
  } finally {
    agent.destroy();
    await stopChild(standin.child, 2_000);
  }
}

/** The scheduler's object counts, read from its list routes. */
async function objectCounts(agent, urls) {
  const count = async (path) => {
    const list = await getJson(agent, `${urls.scheduler}${path}`);
    return Array.isArray(list) ? list.length : null;
  };
  return {
    jobs: await count("/v1/jobs"),
    allocations: await count("/v1/allocations"),
    evaluations: await count("/v1/evaluations"),
    deployments: await count("/v1/deployments"),
    variables: await count("/v1/vars"),
  };
}
