/**
 * Building the conformance suite's Go programs (the official clients' checks
 * and the oracles), one way for all: Go 1.23 from Debian's backports (.ci/run
 * installs it), GOPATH mode and offline, the sources beside the clone in
 * ../shared first, Debian's /usr/share/gocode last. STANDIN_SKIP_GO=1 skips
 * the suites on a machine without Go.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** The folder beside the clone that holds the Go clients and the products' open sources. */
export const SHARED = resolve(PROJECT_ROOT, "../shared");
export const GO = process.env.GO ?? ["/usr/lib/go-1.23/bin/go", "/usr/local/go/bin/go"].find((path) => existsSync(path));
export const SKIP_GO = process.env.STANDIN_SKIP_GO === "1";

export interface GoProgram {
  /** What the program is for, in the error a machine without Go gets. */
  readonly what: string;
  /** The folder of its package main. */
  readonly source: string;
  /** GOPATH entries in order (the first wins for an import path two of them hold); /usr/share/gocode is added last. */
  readonly gopath: readonly string[];
  /** Where the binary goes (under node_modules/.cache, so a clean clone builds it again). */
  readonly binary: string;
}

/** Builds `program` and returns its binary's path; a missing Go or a missing source folder is an error that says what to do. */
export async function buildGoProgram(program: GoProgram): Promise<string> {
  if (!GO)
    throw new Error(
      `Go ≥ 1.21 is needed for ${program.what}: apt-get install golang-1.23-go from bookworm-backports (see .ci/run), set GO=/path/to/go, or STANDIN_SKIP_GO=1 to skip it`,
    );
  for (const dir of program.gopath) if (!existsSync(dir)) throw new Error(`the sources ${program.what} builds from are not at ${dir} (shared/ beside the project)`);
  mkdirSync(dirname(program.binary), { recursive: true });
  const env = { ...process.env, GO111MODULE: "off", GOFLAGS: "", GOPATH: [...program.gopath, "/usr/share/gocode"].join(":") };
  await run(GO, ["build", "-o", program.binary, "."], { cwd: program.source, env, timeout: 600_000 });
  return program.binary;
}

/** Runs a built program once: `input` as JSON on its stdin, its stdout parsed as JSON (an exit other than 0 is an error). */
export function runGoProgramJson<T>(binary: string, input: unknown): Promise<T> {
  const child = execFile(binary, [], { maxBuffer: 256 << 20, timeout: 300_000 });
  const done = new Promise<string>((resolveOutput, reject) => {
    let out = "";
    child.stdout!.on("data", (data) => (out += data));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolveOutput(out) : reject(new Error(`${binary} exited ${code}`))));
  });
  child.stdin!.end(JSON.stringify(input));
  return done.then((out) => JSON.parse(out) as T);
}
