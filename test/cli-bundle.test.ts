/**
 * How bin/standin starts: the command line's bundle (dist/bundle/standin.cjs,
 * scripts/build-cli.mjs) compiled with V8's code cache, which the first run
 * writes at its exit; dist/cli.js when the bundle is missing or older than
 * dist/. A cache changes how fast standin starts, never what it answers: the
 * answers with a fresh cache, a used one and a refused one are the same bytes.
 * Nothing here measures time (bench/lib/startup.mjs does).
 */
import { execFile, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, CLI_TEST_TIMEOUT_MS, startCli } from "./support/cli.js";

const run = promisify(execFile);
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const scratch = (name: string) => mkdtempSync(join(tmpdir(), `standin-${name}-`));

/** A few answers of a fresh `standin start` (the shipped default fixture), then its exit code after SIGTERM. */
async function answersOfOneStart(env: NodeJS.ProcessEnv): Promise<{ bodies: string[]; code: number | null }> {
  const started = await startCli([], children, env);
  const bodies: string[] = [];
  for (const url of [
    `${started.urls.scheduler}/v1/jobs`,
    `${started.urls.scheduler}/v1/nodes`,
    `${started.urls.registry}/v1/catalog/services`,
    `${started.urls.control}/clock`,
    `${started.urls.control}/snapshot`,
  ]) {
    const response = await fetch(url);
    bodies.push(`${response.status} ${await response.text()}`);
  }
  started.child.kill("SIGTERM");
  return { bodies, code: await started.exited };
}

const cacheFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".bin"));

describe("bin/standin runs the bundle with a code cache", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it.skipIf(!existsSync("dist/bundle/standin.cjs"))(
    "the first start writes the cache at exit, the next uses it unchanged, a refused one is rewritten; the answers are the same bytes",
    async () => {
      const cache = scratch("compile-cache");
      const env = { ...process.env, STANDIN_COMPILE_CACHE: cache };
      const first = await answersOfOneStart(env);
      expect(first.code).toBe(0);
      const [file, ...others] = cacheFiles(cache);
      expect(others).toEqual([]);
      expect(file).toMatch(new RegExp(`^${process.version}-${process.arch}-[0-9a-f]{16}-start\\.bin$`));
      const written = readFileSync(join(cache, file!));
      expect(written.length).toBeGreaterThan(100_000);

      const second = await answersOfOneStart(env);
      expect(second).toEqual(first);
      expect(readFileSync(join(cache, file!)).equals(written)).toBe(true);

      // Bytes V8 refuses (another node's cache, a torn file): compiled from the source, and the cache written anew.
      writeFileSync(join(cache, file!), Buffer.alloc(4096, 7));
      const third = await answersOfOneStart(env);
      expect(third).toEqual(first);
      expect(readFileSync(join(cache, file!)).equals(Buffer.alloc(4096, 7))).toBe(false);
      expect(cacheFiles(cache)).toEqual([file]);

      const off = await answersOfOneStart({ ...process.env, STANDIN_COMPILE_CACHE: "off" });
      expect(off).toEqual(first);
    },
  );
});

describe("bin/standin chooses between the bundle and dist/", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  /** A package with bin/standin (and the code cache it runs a bundle with) and two stand-ins that say which one ran. */
  function fakePackage(): { root: string; bundle: string; compiled: string; say: () => Promise<string> } {
    const root = scratch("bin-choice");
    mkdirSync(join(root, "bin"));
    mkdirSync(join(root, "dist/bundle"), { recursive: true });
    copyFileSync(BIN, join(root, "bin/standin"));
    copyFileSync("dist/code-cache.js", join(root, "dist/code-cache.js"));
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "standin", type: "module" }));
    const compiled = join(root, "dist/cli.js");
    const bundle = join(root, "dist/bundle/standin.cjs");
    writeFileSync(compiled, 'export async function main() { console.log("dist"); }\n');
    writeFileSync(bundle, '// standin bundle 0123456789abcdef\nexports.main = async () => console.log("bundle", typeof require, __filename.endsWith("standin.cjs"));\n');
    const env = { ...process.env, STANDIN_COMPILE_CACHE: scratch("compile-cache") };
    const say = async () => (await run(process.execPath, [join(root, "bin/standin")], { env })).stdout.trim();
    return { root, bundle, compiled, say };
  }

  it("the bundle when it is at least as new as dist/cli.js (npm packs both with one time); dist/ when compiled after it, or alone", async () => {
    const { bundle, compiled, say } = fakePackage();
    const at = (file: string, seconds: number) => utimesSync(file, seconds, seconds);
    at(compiled, 1_000_000);
    at(bundle, 1_000_100);
    expect(await say()).toBe("bundle function true");
    at(bundle, 1_000_000);
    expect(await say()).toBe("bundle function true");
    at(compiled, 1_000_200);
    expect(await say()).toBe("dist");
    rmSync(bundle);
    expect(await say()).toBe("dist");
  });
});

describe("the bundle's document checker", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it.skipIf(!existsSync("dist/bundle/standin.cjs") || process.platform !== "linux")(
    "a large control document is checked in a worker thread beside the bundle (dist/bundle/document-worker-thread.js), not on the event loop",
    async () => {
      const started = await startCli([], children, { ...process.env, STANDIN_COMPILE_CACHE: "off" });
      const threads = () => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${started.child.pid}/status`, "utf8"))?.[1]);
      const before = threads();
      const unknownKeys = `{${Array.from({ length: 20_000 }, (_, i) => `"k${i}":0`).join(",")}}`;
      const refused = await fetch(`${started.urls.control}/fixtures`, { method: "POST", body: unknownKeys, headers: { "Content-Type": "application/json" } });
      expect({ status: refused.status, body: await refused.text() }).toEqual({
        status: 400,
        body: JSON.stringify({ error: "fixture[0]: k0: unknown key", problems: ["k0: unknown key"] }),
      });
      expect(threads()).toBeGreaterThan(before);
      started.child.kill("SIGTERM");
      expect(await started.exited).toBe(0);
    },
  );
});
