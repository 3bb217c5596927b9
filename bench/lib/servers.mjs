/**
 * The two kinds of server child the bench starts: standin through its real
 * CLI, and the bare `node:http` baseline. Both listen on free ports (port 0)
 * so runs never collide with each other or with anything else on the machine.
 */
import { fileURLToPath } from "node:url";
import { spawnNode, spawnProgram, waitForOutput } from "./processes.mjs";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STANDIN_BIN = fileURLToPath(new URL("../../bin/standin", import.meta.url));
export const BARE_SERVER = fileURLToPath(new URL("./bare-server.mjs", import.meta.url));
const HONO_SERVER = fileURLToPath(new URL("./hono-server.mjs", import.meta.url));

// The banner lines `  scheduler  http://127.0.0.1:PORT`, registry, echo (printed once every port listens).
const BANNER = /^\s*scheduler\s+(http:\/\/\S+)\s*\n\s*registry\s+(http:\/\/\S+)\s*\n\s*echo\s+(http:\/\/\S+)\s*$/m;
const BARE_LINE = /^listening (http:\/\/\S+)\s*$/m;

/**
 * Spawns `standin start` with all ports 0 (plus `extraArgs`, e.g. `--fixture f`).
 * `url` resolves to the scheduler URL from the banner; `urls` to all three services.
 * `nodeArgs` go to node itself (the bench's `BENCH_PROFILE` passes `--cpu-prof`).
 */
export function spawnStandinCli(extraArgs = [], { nodeArgs = [] } = {}) {
  return standinChild(spawnNode([...nodeArgs, STANDIN_BIN, ...startArgs(extraArgs)], { cwd: PROJECT_ROOT }));
}

/** The single executable (`npm run build:exe`), where it is built. */
export const STANDIN_EXECUTABLE = fileURLToPath(new URL(`../../build/${process.platform === "win32" ? "standin.exe" : "standin"}`, import.meta.url));

/** Spawns the single executable's `standin start` as spawnStandinCli does the CLI. */
export function spawnStandinExecutable(extraArgs = []) {
  return standinChild(spawnProgram(STANDIN_EXECUTABLE, startArgs(extraArgs), { cwd: PROJECT_ROOT }));
}

const startArgs = (extraArgs) => ["start", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0", ...extraArgs];

function standinChild(child) {
  const urls = waitForOutput(child, BANNER, 10_000, { allGroups: true }).then(([scheduler, registry, echo]) => ({ scheduler, registry, echo }));
  const url = urls.then((u) => u.scheduler);
  // Callers await one of the two: the other must not become an unhandled rejection.
  urls.catch(() => {});
  url.catch(() => {});
  return { child, url, urls };
}

/**
 * Spawns the bare server; with `response` ({status, contentType, body, headers?}), it
 * answers every request with exactly those bytes (and those extra headers). With `hono`,
 * the framework floor (hono-server.mjs) instead, which needs `response`.
 */
export function spawnBareServer(response, { hono = false } = {}) {
  const args = [hono ? HONO_SERVER : BARE_SERVER];
  if (response) {
    args.push(JSON.stringify({ status: response.status, contentType: response.contentType, bodyBase64: response.body.toString("base64"), headers: response.extraHeaders ?? [] }));
  }
  const child = spawnNode(args, { cwd: PROJECT_ROOT });
  return { child, url: waitForOutput(child, BARE_LINE) };
}
