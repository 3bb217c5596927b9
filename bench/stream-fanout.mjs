/**
 * The stall case `stream-subscribers` (bench/lib/stall-cases.mjs) split into
 * its phases, with the `standin start` child's CPU time in each (Linux
 * /proc): 200 unread `GET /v1/event/stream` subscribers open, 40 job writes
 * of ~100 KB, then a second of quiet. CPU time is what a loaded machine
 * changes least, so it compares two builds where the probe's latency cannot.
 *
 *   node bench/stream-fanout.mjs                 # the event stream
 *   OPEN_PATH=/v1/agent/health node bench/stream-fanout.mjs   # the same requests, no stream: the floor
 *
 * Prints each phase's wall time, the probe's p50/p99/max (GET /_standin/clock every 5 ms),
 * the child's CPU ms, and how many subscribers were still open after the writes.
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { openUnread, send } from "./lib/http-probe.mjs";
import { stopChild } from "./lib/processes.mjs";
import { spawnStandinCli } from "./lib/servers.mjs";
import { streamFanoutJob } from "./lib/stall-cases.mjs";

const OPEN_PATH = process.env.OPEN_PATH ?? "/v1/event/stream";

/** GET /_standin/clock until stopped: [sent at, latency] pairs. */
function startProbe(controlUrl) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const sentAt = performance.now();
      await new Promise((resolve, reject) => {
        const req = request(`${controlUrl}/clock`, { agent }, (res) => {
          res.resume();
          res.on("end", resolve);
        });
        req.on("error", reject);
        req.end();
      });
      latencies.push([sentAt, performance.now() - sentAt]);
      await sleep(5);
    }
    agent.destroy();
    return latencies;
  })();
  return {
    stop: () => {
      running = false;
      return done;
    },
  };
}

const standin = spawnStandinCli([]);
const urls = await standin.urls;
/** The child's user + system CPU time, ms (clock ticks of 10 ms). */
const cpuMs = () => {
  const fields = readFileSync(`/proc/${standin.child.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const probe = startProbe(`${urls.scheduler}/_standin`);
await sleep(200);
const marks = [{ name: "start", at: performance.now(), cpu: cpuMs() }];
const mark = (name) => marks.push({ name, at: performance.now(), cpu: cpuMs() });
const sockets = await openUnread(`${urls.scheduler}${OPEN_PATH}`, 200);
mark("open 200");
for (let i = 0; i < 40; i++) {
  const job = streamFanoutJob(i);
  await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", body: JSON.stringify({ Job: job }), headers: { "Content-Type": "application/json" } });
}
mark("40 writes");
await sleep(1_000);
mark("1 s after");
const streams = JSON.parse((await send(`${urls.scheduler}/_standin/scheduler/event-streams`)).body.toString());
for (const socket of sockets) socket.destroy();
const latencies = await probe.stop();
await stopChild(standin.child, 2_000);

for (let m = 1; m < marks.length; m++) {
  const [from, to] = [marks[m - 1], marks[m]];
  const waits = latencies
    .filter(([at]) => at >= from.at && at < to.at)
    .map(([, ms]) => ms)
    .sort((a, b) => a - b);
  const q = (p) => waits[Math.min(waits.length - 1, Math.ceil(p * waits.length) - 1)]?.toFixed(1) ?? "—";
  console.log(
    `${to.name.padEnd(10)} ${String(Math.round(to.at - from.at)).padStart(6)} ms   cpu ${String(to.cpu - from.cpu).padStart(5)} ms   probe n=${waits.length} p50 ${q(0.5)} p99 ${q(0.99)} max ${q(1)}`,
  );
}
console.log(`subscribers open after the writes: ${streams.Subscribers}`);
