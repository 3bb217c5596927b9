/**
 * Reads a V8 CPU profile (`node --cpu-prof`, e.g. from `BENCH_PROFILE=DIR`)
 * and prints where the busy time went: self time by function, then by file
 * (node_modules packages folded into one line each), as a share of the
 * profile's busy (non-idle) time.
 *
 *   node bench/profile-summary.mjs PROFILE.cpuprofile [TOP]
 */
import { readFileSync } from "node:fs";

const [file, topArg = "40"] = process.argv.slice(2);
if (!file) {
  console.error("usage: node bench/profile-summary.mjs PROFILE.cpuprofile [TOP]");
  process.exit(2);
}
const top = Number(topArg);
const profile = JSON.parse(readFileSync(file, "utf8"));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));

/** Self time (µs) by node id: each sample's time delta goes to the node it landed in. */
const selfTime = new Map();
for (const [i, id] of profile.samples.entries()) selfTime.set(id, (selfTime.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));

const shortUrl = (url) => {
  const path = url.replace(/^file:\/\//, "");
  if (path.includes("/node_modules/")) return path.replace(/^.*\/node_modules\//, "node_modules/");
  return path.replace(/^.*\/dist\//, "dist/");
};
const fileOf = (url) => shortUrl(url).replace(/^(node_modules\/(@[^/]+\/)?[^/]+)\/.*$/, "$1") || "(native)";

const byFunction = new Map();
const byFile = new Map();
let idle = 0;
let busy = 0;
for (const [id, time] of selfTime) {
  const { functionName, url, lineNumber } = nodes.get(id).callFrame;
  if (functionName === "(idle)") {
    idle += time;
    continue;
  }
  busy += time;
  const name = `${functionName || "(anonymous)"}  ${url ? `${shortUrl(url)}:${lineNumber + 1}` : ""}`;
  byFunction.set(name, (byFunction.get(name) ?? 0) + time);
  byFile.set(fileOf(url), (byFile.get(fileOf(url)) ?? 0) + time);
}

const share = (time) => `${((100 * time) / busy).toFixed(1).padStart(5)} %`;
const print = (title, rows) => {
  console.log(title);
  for (const [name, time] of [...rows].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${share(time)}  ${name}`);
};
console.log(`busy ${(busy / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms`);
print("self time by function:", byFunction);
print("self time by file:", byFile);
