/**
 * Measure 1: wall time from spawning a server process to its first 200.
 * standin is started by its CLI and asked `GET /_standin/ready`; the
 * baseline is a bare `node:http` process asked `GET /`. Same spawn, same
 * banner parsing, same poll: the difference is standin's own startup cost.
 */
import { pollUntilOk } from "./http-probe.mjs";
import { stopChild } from "./processes.mjs";
import { spawnBareServer, spawnStandinCli } from "./servers.mjs";

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
const bareStart = () => timeOneStart(() => spawnBareServer(), "/");

/**
 * Runs are interleaved (standin, bare, standin, …) so that any drift in
 * machine load during the measurement affects both sides alike. One run of
 * each is discarded first: the very first spawn after a build reads files
 * from disk rather than from the page cache.
 */
export async function measureStartup({ runs }) {
  await standinStart();
  await bareStart();
  const standin = [];
  const bare = [];
  for (let i = 0; i < runs; i++) {
    standin.push(await standinStart());
    bare.push(await bareStart());
  }
  return { standin, bare };
}
