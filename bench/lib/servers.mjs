/**
 * The two kinds of server child the bench starts: standin through its real
 * CLI, and the bare `node:http` baseline. Both listen on free ports (port 0)
 * so runs never collide with each other or with anything else on the machine.
 */
import { fileURLToPath } from "node:url";
import { spawnNode, waitForOutput } from "./processes.mjs";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const STANDIN_BIN = fileURLToPath(new URL("../../bin/standin", import.meta.url));
const BARE_SERVER = fileURLToPath(new URL("./bare-server.mjs", import.meta.url));

// The banner line `  scheduler  http://127.0.0.1:PORT` (printed once every port listens).
const SCHEDULER_LINE = /^\s*scheduler\s+(http:\/\/\S+)\s*$/m;
const BARE_LINE = /^listening (http:\/\/\S+)\s*$/m;

/** Spawns `standin start` with all ports 0; `url` resolves to the scheduler URL from the banner. */
export function spawnStandinCli() {
  const child = spawnNode([STANDIN_BIN, "start", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"], { cwd: PROJECT_ROOT });
  return { child, url: waitForOutput(child, SCHEDULER_LINE) };
}

/** Spawns the bare server; with `response`, it answers every request with exactly those bytes. */
export function spawnBareServer(response) {
  const args = [BARE_SERVER];
  if (response) args.push(JSON.stringify({ status: response.status, contentType: response.contentType, bodyBase64: response.body.toString("base64") }));
  const child = spawnNode(args, { cwd: PROJECT_ROOT });
  return { child, url: waitForOutput(child, BARE_LINE) };
}
