/**
 * Stalls: while one heavy request is in progress, does everyone else still
 * get answers? A probe client asks `GET /_standin/clock` over and over on its
 * own keep-alive connection and records each latency, while another client
 * sends the heavy request(s); each case runs in a fresh `standin start`.
 * Target (issues 17 and 30): probe p99 ≤ 100 ms during each case; the max
 * is the largest stall one request caused.
 *
 *   big-body      PUT /v1/jobs whose Meta has 500,000 keys (~7 MB of JSON)
 *   slow-readers  200 clients GET a 13 MB KV listing and never read it
 *   tape-export   GET /_standin/tape of a ~36 MB tape
 * and issue 30's hostile inputs (job files, tokens, subscribers, control
 * bodies, clock advances), in stall-cases.mjs.
 */
import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { stopChild } from "./processes.mjs";
import { spawnStandinCli } from "./servers.mjs";
import { openUnread, send } from "./http-probe.mjs";
import { HOSTILE_CASES } from "./stall-cases.mjs";

/**
 * Probes until `stop()`; resolves with the latencies (ms). A probe still
 * waiting when it is stopped (the server froze, or was stopped at the case's
 * time limit) counts with the time it has waited so far: a stall that
 * outlasts the case must not vanish from its figures.
 */
function startProbe(controlUrl) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  let running = true;
  let inFlightSince = null;
  const done = (async () => {
    while (running) {
      inFlightSince = performance.now();
      try {
        await new Promise((resolve, reject) => {
          const req = request(`${controlUrl}/clock`, { agent }, (res) => {
            res.resume();
            res.on("end", resolve);
          });
          req.on("error", reject);
          req.end();
        });
      } catch {
        // The server went away (stopped at the time limit), or dropped the kept-alive connection: after
        // a long stall Node's server may time the idle socket out before reading the probe waiting on
        // it. The wait still counts; the next probe opens a new connection.
        if (!running || inFlightSince === null) break;
      }
      if (inFlightSince !== null) latencies.push(performance.now() - inFlightSince);
      inFlightSince = null;
      await sleep(5);
    }
    agent.destroy();
    return latencies;
  })();
  return {
    /** Stops probing; with `abandon`, does not wait for an answer still due (a frozen server). */
    stop: async ({ abandon = false } = {}) => {
      running = false;
      if (!abandon) return done;
      if (inFlightSince !== null) latencies.push(performance.now() - inFlightSince);
      inFlightSince = null;
      agent.destroy();
      return latencies;
    },
  };
}

const value500k = () => Buffer.alloc(500 * 1024, "a").toString();

const CASES = {
  async "big-body"({ urls }) {
    const meta = {};
    for (let i = 0; i < 500_000; i++) meta[`k${i}`] = "v";
    const body = JSON.stringify({
      Job: { ID: "big", Type: "batch", Datacenters: ["dc1"], Meta: meta, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }] },
    });
    return async () => {
      const res = await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", body, headers: { "Content-Type": "application/json" } });
      return { status: res.status, bytes: Buffer.byteLength(body) };
    };
  },

  async "slow-readers"({ urls }) {
    const value = value500k();
    for (let i = 0; i < 26; i++) await send(`${urls.registry}/v1/kv/big/${i}`, { method: "PUT", body: value });
    return async () => {
      const sockets = await openUnread(`${urls.registry}/v1/kv/big?recurse`, 200);
      // Leave them unread a while: the server has 200 answers to send to clients that do not take them.
      await sleep(3_000);
      for (const socket of sockets) socket.destroy();
      return { clients: 200 };
    };
  },

  async "tape-export"({ urls }) {
    const value = value500k();
    for (let i = 0; i < 72; i++) await send(`${urls.registry}/v1/kv/t/${i % 4}`, { method: "PUT", body: value });
    return async () => {
      const res = await send(`${urls.scheduler}/_standin/tape`);
      return { status: res.status, bytes: res.body.length };
    };
  },
};

const STALL_LIMIT_SECONDS = 60;

/** Resolves with `promise`'s value, or with `{timedOut: true}` after `seconds`. */
async function within(promise, seconds) {
  let timer;
  const limit = new Promise((resolve) => (timer = setTimeout(() => resolve({ timedOut: true, limitSeconds: seconds }), seconds * 1000)));
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the cases (all of them, or those `only` names); resolves with
 * `{case: {label, p50, p99, max, samples, detail}}`. A case's heavy part runs
 * for at most its `limitSeconds` (default STALL_LIMIT_SECONDS): past it the
 * standin is stopped and the case reported as stopped, with the probe's
 * longest wait so far as its max.
 */
export async function measureStalls(progress = () => {}, { only, nodeArgs = [] } = {}) {
  const out = {};
  for (const [name, stallCase] of Object.entries(allStallCases())) {
    if (only && !only.includes(name)) continue;
    const { prepare, label, args = [], limitSeconds = STALL_LIMIT_SECONDS } = stallCase;
    progress(`  stall: ${name}`);
    const standin = spawnStandinCli(args, { nodeArgs });
    try {
      const urls = await standin.urls;
      // Preparing is bounded too: a server that freezes while the case's state is built must not hang the bench.
      const heavy = await within(
        prepare({ urls }).catch((error) => ({ failed: String(error?.message ?? error).slice(0, 200) })),
        limitSeconds,
      );
      if (typeof heavy !== "function") {
        out[name] = { label, p50: null, p99: null, max: null, samples: 0, detail: { ...heavy, during: "preparing" } };
        continue;
      }
      const probe = startProbe(`${urls.scheduler}/_standin`);
      await sleep(200);
      // Once stopped at the limit, the heavy request fails as the server goes: that is expected, not news.
      const work = heavy().catch((error) => ({ failed: String(error?.message ?? error).slice(0, 200) }));
      const t0 = performance.now();
      const detail = { ...(await within(work, limitSeconds)), heavyMs: Math.round(performance.now() - t0) };
      if (!detail.timedOut) await sleep(200);
      const latencies = (await probe.stop({ abandon: detail.timedOut === true })).sort((a, b) => a - b);
      const at = (q) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)];
      out[name] = { label, p50: at(0.5), p99: at(0.99), max: latencies.at(-1), samples: latencies.length, detail };
    } finally {
      await stopChild(standin.child, 2_000);
    }
  }
  return out;
}

/** Issue 17's cases, then issue 30's hostile inputs (stall-cases.mjs). */
function allStallCases() {
  const labelled = {
    "big-body": { label: "PUT /v1/jobs with 500k Meta keys (~7 MB)", prepare: CASES["big-body"] },
    "slow-readers": { label: "200 clients GET a 13 MB listing and never read", prepare: CASES["slow-readers"] },
    "tape-export": { label: "GET /_standin/tape of a ~36 MB tape", prepare: CASES["tape-export"], args: ["--tape-bytes", "64m"] },
  };
  return { ...labelled, ...HOSTILE_CASES };
}

export const STALL_CASE_NAMES = () => Object.keys(allStallCases());

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureStalls((m) => process.stderr.write(`${m}\n`)), null, 2));
}
