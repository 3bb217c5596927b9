/**
 * The Go helper's start-up (bench/go-startup/): `standintest.Start` to the
 * answer of a Go test's first request, against a bare node:http process that
 * Go starts and asks the same way, alternating, in one `go test` run. Go ≥
 * 1.21 (GO, or Debian's /usr/lib/go-1.23) and no network: the helper is a
 * local module (a `replace` in bench/go-startup/go.mod). No Go: `skipped`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { BARE_SERVER } from "./servers.mjs";

const run = promisify(execFile);
const GO = process.env.GO ?? ["/usr/lib/go-1.23/bin/go", "/usr/local/go/bin/go"].find((path) => existsSync(path));
const PROGRAM = fileURLToPath(new URL("../go-startup/", import.meta.url));
const STANDIN_BIN = fileURLToPath(new URL("../../bin/standin", import.meta.url));

export async function measureGoHelperStartup({ runs }) {
  if (!GO) return { skipped: "no Go (set GO=/path/to/go)" };
  const scratch = await mkdtemp(join(tmpdir(), "standin-bench-go-"));
  try {
    const out = join(scratch, "times.json");
    const env = {
      ...process.env,
      GOPROXY: "off",
      GOWORK: "off",
      GOFLAGS: "-mod=mod",
      STANDIN_BIN,
      BENCH_RUNS: String(runs),
      BENCH_NODE: process.execPath,
      BENCH_BARE_SERVER: BARE_SERVER,
      BENCH_OUT: out,
    };
    await run(GO, ["test", "-count=1", "-run", "^TestStartupTimes$", "."], { cwd: PROGRAM, env, timeout: 600_000 });
    const { standin, bare } = JSON.parse(await readFile(out, "utf8"));
    return { standin: standin.map((readyMs) => ({ readyMs })), bare: bare.map((readyMs) => ({ readyMs })) };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
