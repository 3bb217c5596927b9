/**
 * Stalls: while one heavy request is in progress, does everyone else still
 * get answers? A probe client asks `GET /_standin/clock` over and over on its
 * own keep-alive connection and records each latency, while another client
 * sends the heavy request(s); each case runs in a fresh `standin start`.
 * Target (issue 17): probe p99 ≤ 100 ms during each case.
 *
 *   big-body      PUT /v1/jobs whose Meta has 500,000 keys (~7 MB of JSON)
 *   slow-readers  200 clients GET a 13 MB KV listing and never read it
 *   tape-export   GET /_standin/tape of a ~36 MB tape
 */
import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { stopChild } from "./processes.mjs";
import { spawnStandinCli } from "./servers.mjs";
import { send } from "./http-probe.mjs";

/** Probes until `stop()`; resolves with the latencies (ms). */
function startProbe(controlUrl) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      await new Promise((resolve, reject) => {
        const req = request(`${controlUrl}/clock`, { agent }, (res) => {
          res.resume();
          res.on("end", resolve);
        });
        req.on("error", reject);
        req.end();
      });
      latencies.push(performance.now() - t0);
      await sleep(5);
    }
    agent.destroy();
    return latencies;
  })();
  return { stop: () => ((running = false), done) };
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
      const sockets = [];
      await Promise.all(
        Array.from(
          { length: 200 },
          () =>
            new Promise((resolve) => {
              const req = request(`${urls.registry}/v1/kv/big?recurse`, { agent: false }, (res) => {
                res.pause(); // never read
                sockets.push(res.socket);
                resolve();
              });
              req.on("error", resolve);
              req.end();
            }),
        ),
      );
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

/** Runs every case; resolves with `{case: {p50, p99, max, samples, detail}}`. */
export async function measureStalls(progress = () => {}) {
  const out = {};
  for (const [name, prepare] of Object.entries(CASES)) {
    progress(`  stall: ${name}`);
    const standin = spawnStandinCli(name === "tape-export" ? ["--tape-bytes", "64m"] : []);
    try {
      const urls = await standin.urls;
      const heavy = await prepare({ urls });
      const probe = startProbe(`${urls.scheduler}/_standin`);
      await sleep(200);
      const detail = await heavy();
      await sleep(200);
      const latencies = (await probe.stop()).sort((a, b) => a - b);
      const at = (q) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)];
      out[name] = { p50: at(0.5), p99: at(0.99), max: latencies.at(-1), samples: latencies.length, detail };
    } finally {
      await stopChild(standin.child, 2_000);
    }
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureStalls((m) => process.stderr.write(`${m}\n`)), null, 2));
}
