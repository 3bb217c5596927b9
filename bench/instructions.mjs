/**
 * Instructions a request costs, counted by valgrind's callgrind: a figure the
 * machine's load does not move, for comparing two builds on a shared machine
 * where requests/s and even CPU time drift by tens of percent between runs.
 *
 *   node bench/instructions.mjs <case> [ROOT…]
 *
 * Cases: the throughput routes (`clock`, `jobs`, `sessions`, `echo`; lib/throughput.mjs),
 * each served by `standin start` under callgrind with instrumentation off, warmed up
 * with 15,000 requests, then counted over 10,000 (10 connections); and `wake`: the
 * scale case's 10k parked `GET /v1/jobs?index=` woken by one write
 * (lib/scale-case.mjs), counted from the write to the last answer; and
 * `stream-fanout`: 200 `GET /v1/event/stream` subscribers that never read
 * (the stall case of lib/stall-cases.mjs), then job writes of ~100 KB, counted
 * per write over 20 after 2 uncounted (the kernel's socket copies are not
 * instructions callgrind sees: what is counted is the process's own work).
 * Each ROOT is a checkout with its dist/ built (default: this one), so a
 * build of another commit can be compared side by side. Prints instructions
 * per request (per woken query): all of them, and those of V8's compiler and
 * garbage collector apart (they run when the optimiser or the heap decides,
 * which moves more between runs than the requests' own work).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { openUnread, send } from "./lib/http-probe.mjs";
import { streamFanoutJob } from "./lib/stall-cases.mjs";
import { ROUTES, throughputFixture } from "./lib/throughput.mjs";

const HERE = fileURLToPath(new URL("..", import.meta.url));
const [caseName, ...rootArgs] = process.argv.slice(2);
const roots = rootArgs.length > 0 ? rootArgs.map((root) => resolve(root)) : [HERE];
const WARM_REQUESTS = 15_000;
const COUNTED_REQUESTS = 10_000;
const WOKEN_QUERIES = 10_000;
/** STREAM_SUBSCRIBERS=0 counts the same writes with no stream open: the floor the fan-out adds to. */
const FANOUT_SUBSCRIBERS = Number(process.env.STREAM_SUBSCRIBERS ?? 200);
const FANOUT_WARM_WRITES = 2;
const FANOUT_WRITES = 20;
const CASES = ["clock", "jobs", "sessions", "echo", "wake", "stream-fanout"];
const CALLGRIND = ["-q", "--tool=callgrind", "--instr-atstart=no", "--smc-check=all-non-file"];
// Functions of V8's optimising compiler and of its garbage collector, by name.
const BACKGROUND = /compiler::|Marking|Sweep|Scaveng|heap::base|MemoryChunk|BodyDescriptor|SizeFromMap|IterateObjectCache|Evacuat|Zone::/;

if (!CASES.includes(caseName)) {
  console.error(`usage: node bench/instructions.mjs <${CASES.join("|")}> [ROOT…]`);
  process.exit(2);
}

/** Total instructions in a callgrind output, and those of the compiler and the collector. */
function instructions(file) {
  const text = execFileSync("callgrind_annotate", ["--threshold=100", file], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  let total = 0;
  let background = 0;
  for (const line of text.split("\n")) {
    const match = /^\s*([\d,]+) \(/.exec(line);
    if (!match || line.includes("PROGRAM TOTALS")) continue;
    const count = Number(match[1].replaceAll(",", ""));
    total += count;
    if (BACKGROUND.test(line)) background += count;
  }
  return { total, background };
}

const toggle = (pid, on) => execFileSync("callgrind_control", ["-i", on ? "on" : "off", String(pid)], { stdio: "ignore" });

/** `standin start` of ROOT under callgrind (instrumentation off until toggled), and its URLs once it listens. */
async function startUnderCallgrind(root, out, extraArgs = []) {
  const args = [
    ...CALLGRIND,
    `--callgrind-out-file=${out}`,
    process.execPath,
    join(root, "bin/standin"),
    "start",
    "--scheduler-port",
    "0",
    "--registry-port",
    "0",
    "--echo-port",
    "0",
    ...extraArgs,
  ];
  const child = spawn("valgrind", args, { cwd: root, stdio: ["ignore", "pipe", "ignore"] });
  const urls = await new Promise((resolveUrls, reject) => {
    let output = "";
    child.on("exit", (code) => reject(new Error(`standin under valgrind exited (${code}) before it listened`)));
    child.stdout.on("data", (chunk) => {
      output += chunk;
      const banner = /scheduler\s+(http:\S+)\s*\n\s*registry\s+(http:\S+)\s*\n\s*echo\s+(http:\S+)/.exec(output);
      if (banner) resolveUrls({ scheduler: banner[1], registry: banner[2], echo: banner[3] });
    });
  });
  return { child, urls };
}

async function stopUnderCallgrind(child) {
  child.removeAllListeners("exit");
  const exited = new Promise((done) => child.on("exit", done));
  child.kill("SIGTERM");
  await exited;
}

async function routeCase(root, route, out, fixtureFile) {
  const { child, urls } = await startUnderCallgrind(root, out, ["--fixture", fixtureFile]);
  const load = (amount) =>
    autocannon({ url: urls[route.service] + route.path, connections: 10, amount, method: route.method ?? "GET", headers: route.headers, body: route.body, timeout: 60 });
  await load(WARM_REQUESTS);
  toggle(child.pid, true);
  const counted = await load(COUNTED_REQUESTS);
  toggle(child.pid, false);
  await stopUnderCallgrind(child);
  if (counted.non2xx || counted.errors) throw new Error(`${counted.non2xx} non-2xx answers, ${counted.errors} errors`);
  return counted.requests.total;
}

async function streamFanoutCase(root, out) {
  const { child, urls } = await startUnderCallgrind(root, out);
  const write = async (i) => {
    const job = streamFanoutJob(i);
    const res = await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", body: JSON.stringify({ Job: job }), headers: { "Content-Type": "application/json" } });
    if (res.status !== 200) throw new Error(`job write answered ${res.status}`);
  };
  const sockets = await openUnread(`${urls.scheduler}/v1/event/stream`, FANOUT_SUBSCRIBERS);
  if (sockets.length !== FANOUT_SUBSCRIBERS) throw new Error(`${sockets.length} of ${FANOUT_SUBSCRIBERS} subscribers opened`);
  for (let i = 0; i < FANOUT_WARM_WRITES; i++) await write(i);
  toggle(child.pid, true);
  for (let i = FANOUT_WARM_WRITES; i < FANOUT_WARM_WRITES + FANOUT_WRITES; i++) await write(i);
  toggle(child.pid, false);
  for (const socket of sockets) socket.destroy();
  await stopUnderCallgrind(child);
  return FANOUT_WRITES;
}

async function wakeCase(root, out) {
  // This checkout's case, on ROOT's build.
  const child = spawn(
    "valgrind",
    [...CALLGRIND, `--callgrind-out-file=${out}`, process.execPath, "--expose-gc", join(HERE, "bench/lib/scale-case.mjs"), "blocking", String(WOKEN_QUERIES)],
    {
      cwd: root,
      env: { ...process.env, BENCH_COUNT_WAKE: "1", BENCH_DIST: join(root, "dist") },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  const code = await new Promise((done) => child.on("exit", done));
  if (code !== 0 || !output.includes("RESULT")) throw new Error(`the blocking case under valgrind failed (${code}): ${output}`);
  return WOKEN_QUERIES;
}

const workDir = mkdtempSync(join(tmpdir(), "standin-instructions-"));
try {
  const fixtureFile = join(workDir, "fixture.json");
  writeFileSync(fixtureFile, JSON.stringify(throughputFixture()));
  for (const [i, root] of roots.entries()) {
    const out = join(workDir, `callgrind.${i}.out`);
    const route = ROUTES.find((r) => r.id === caseName);
    const count =
      caseName === "wake" ? await wakeCase(root, out) : caseName === "stream-fanout" ? await streamFanoutCase(root, out) : await routeCase(root, route, out, fixtureFile);
    const { total, background } = instructions(out);
    const per = (n) => Math.round(n / count).toLocaleString("en-US");
    const unit = { wake: "woken query", "stream-fanout": `write to ${FANOUT_SUBSCRIBERS} subscribers` }[caseName] ?? "request";
    console.log(
      `${caseName} ${root}: ${per(total)} instructions per ${unit} (compiler and collector ${per(background)}, the rest ${per(total - background)}) over ${count.toLocaleString("en-US")}`,
    );
    rmSync(out, { force: true });
  }
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
