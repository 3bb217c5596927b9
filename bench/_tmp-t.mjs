import { pollUntilOk } from "./lib/http-probe.mjs";
import { spawnNode, stopChild, waitForOutput } from "./lib/processes.mjs";
import { spawnBareServer } from "./lib/servers.mjs";
import { median } from "./lib/stats.mjs";
const BANNER = /^\s*scheduler\s+(http:\/\/\S+)/m;
const variants = {
  bare: async () => { const { child, url } = spawnBareServer(); return [child, await url, "/"]; },
};
for (const bin of process.argv.slice(3)) variants[bin] = async () => { const child = spawnNode([bin, "start", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"]); return [child, await waitForOutput(child, BANNER), "/_standin/ready"]; };
const runs = Number(process.argv[2]);
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
for (let i = -1; i < runs; i++) for (const [k, v] of Object.entries(variants)) {
  const t0 = performance.now(); const [child, url, p] = await v(); await pollUntilOk(url + p); const t = performance.now() - t0; await stopChild(child); if (i >= 0) times[k].push(t);
}
for (const [k, t] of Object.entries(times)) console.log(k.padEnd(24), median(t).toFixed(1), "ms", (median(t) / median(times.bare)).toFixed(2) + "x");
