/**
 * Measure 1: wall time from spawning a server process to its first 200.
 * standin is started by its CLI (bin/standin under node) and, where it is
 * built, as the single executable (build/standin), and asked
 * `GET /_standin/ready`; the baseline is a bare `node:http` process asked
 * `GET /`. Same spawn, same banner parsing, same poll: the difference is
 * standin's own start-up cost. The Go helper's start (go-startup.mjs) is
 * measured after, against the bare process started from Go.
 */
import { existsSync } from "node:fs";
import { measureGoHelperStartup } from "./go-startup.mjs";
import { pollUntilOk } from "./http-probe.mjs";
import { stopChild } from "./processes.mjs";
import { STANDIN_EXECUTABLE, spawnBareServer, spawnStandinCli, spawnStandinExecutable } from "./servers.mjs";

async function timeOneStart(spawnServer, readyPath) {
  const started = performance.now();
  const { child, url } = spawnServer();
  try {
    const baseUrl = await url;
    const bannerMs = performance.now() - started;
    await pollUntilOk(baseUrl + readyPath);
    const readyMs = performance.now() - started;
    return { readyMs, bannerMs };
  } finally {
    // Wait for the exit too: a child still shutting down would compete with the next run.
    await stopChild(child);
  }
}

const standinStart = () => timeOneStart(spawnStandinCli, "/_standin/ready");
const executableStart = () => timeOneStart(spawnStandinExecutable, "/_standin/ready");
const bareStart = () => timeOneStart(() => spawnBareServer(), "/");

/**
 * Runs are interleaved (standin, executable, bare, standin, …) so that any
 * drift in machine load during the measurement affects all sides alike. One
 * run of each is discarded first: the very first spawn after a build reads
 * files from disk rather than from the page cache. `executable` is null when
 * `npm run build:exe` has not built one; `goHelper` has `skipped` without Go.
 */
export async function measureStartup({ runs }) {
  const withExecutable = existsSync(STANDIN_EXECUTABLE);
  const sides = [["standin", standinStart], ...(withExecutable ? [["executable", executableStart]] : []), ["bare", bareStart]];
  const measured = Object.fromEntries(sides.map(([name]) => [name, []]));
  for (let i = -1; i < runs; i++) {
    for (const [name, start] of sides) {
      const result = await start();
      if (i >= 0) measured[name].push(result);
    }
  }
  const goHelper = await measureGoHelperStartup({ runs });
  return { standin: measured.standin, bare: measured.bare, executable: withExecutable ? measured.executable : null, goHelper };
}
