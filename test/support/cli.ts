/**
 * `standin start` as a real child process, for the tests that need the CLI:
 * started on free ports, resolved once its banner lists every URL (read from
 * stdout, as scripts do). The caller keeps the children to kill after each test,
 * or lets `sharedCli` start one process for a whole describe block.
 *
 * Every bound here is generous on purpose: a child process on a busy 2-core
 * machine can take many seconds to start, and a slow machine must make these
 * tests slower, never failed. None of them is a claim about speed.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";

export const BIN = join(process.cwd(), "bin/standin");
export const FREE_PORTS = ["--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"];

/**
 * The timeout for tests (and describe blocks) that start child processes:
 * `describe(name, { timeout: CLI_TEST_TIMEOUT_MS }, …)`. vitest.config.ts keeps
 * 20 s for the in-process tests; a test running the CLI a few times can need
 * far more on a loaded machine.
 */
export const CLI_TEST_TIMEOUT_MS = 120_000;

/** How long `startCli` waits for the banner before it gives up (a hang, not slowness). */
const BANNER_WAIT_MS = 60_000;

export interface StartedCli {
  child: ChildProcess;
  urls: Record<string, string>;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function startCli(args: string[], children: ChildProcess[], env: NodeJS.ProcessEnv = process.env): Promise<StartedCli> {
  const child = spawn(process.execPath, [BIN, "start", ...FREE_PORTS, ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  children.push(child);
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within ${BANNER_WAIT_MS / 1000} s; stdout: ${out}; stderr: ${err}`)), BANNER_WAIT_MS);
    child.stderr!.on("data", (d) => (err += d));
    child.stdout!.on("data", (d) => {
      out += d;
      const urls = Object.fromEntries([...out.matchAll(/^ {2}(scheduler|registry|echo|control) +(\S+)$/gm)].map((m) => [m[1], m[2]]));
      if (Object.keys(urls).length === 4) {
        clearTimeout(timer);
        resolve({ child, urls, stdout: () => out, stderr: () => err, exited });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code} before ready; stderr: ${err}`));
    });
  });
}

/**
 * One `standin start <args>` shared by every test of the describe block this is
 * called in: started in `beforeAll`, stopped with SIGTERM in `afterAll`. For the
 * tests that use a running emulator rather than test `start` itself (starting
 * the CLI once per test is what makes a suite slow and flaky on a busy machine).
 * The returned function gives the running process inside a test; tests that need
 * a clean state call `resetCli` first.
 */
export function sharedCli(args: string[] = []): () => StartedCli {
  const children: ChildProcess[] = [];
  let started: StartedCli | undefined;
  beforeAll(async () => {
    started = await startCli(args, children);
  }, CLI_TEST_TIMEOUT_MS);
  afterAll(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }, CLI_TEST_TIMEOUT_MS);
  return () => {
    if (!started) throw new Error("the shared standin has not started (its beforeAll failed)");
    return started;
  };
}

/** Sends one request; `fetch` by default, a client trusting a CA for an https emulator. */
type Send = (url: string, init: { method: string }) => Promise<{ status: number; text(): Promise<string> }>;

/** `POST /_standin/reset` on a running CLI: back to its start state (clock, world, recordings). */
export async function resetCli(s: StartedCli, send: Send = fetch): Promise<void> {
  const res = await send(`${s.urls.control}/reset`, { method: "POST" });
  if (res.status !== 200) throw new Error(`reset answered ${res.status}: ${await res.text()}`);
}

/** Runs the CLI to its end: exit code and output (a failure is a result here, not an error). */
export async function runCli(args: string[], env?: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], env ? { env } : {});
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
