/**
 * Shared by the packaging tests (npm run test:package): child processes in a
 * clean environment, `standin start` in the background until its ready file
 * appears, and real requests to the three services it serves.
 *
 * Every bound is generous: packing, installing and building are slow on a
 * loaded machine, and a slow machine must make these tests slower, never failed.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { request } from "node:https";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import type { ReadyFile as Ready } from "../../src/cli/background-files.js";

/** For a pack, an install or a build. */
export const SLOW_STEP_TIMEOUT_MS = 600_000;
const READY_WAIT_MS = 120_000;

/**
 * The environment for a consumer's commands: this run's own vitest, npm-script and standin
 * variables would leak into a nested vitest or npm otherwise.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(VITEST|STANDIN_|npm_lifecycle_|npm_package_)/.test(key) || key === "NOMAD_ADDR" || key === "CONSUL_HTTP_ADDR") continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never rejects on a non-zero exit (the test asserts the code). */
export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Finished> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number") return reject(error);
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

export type { Ready };

export interface Background {
  child: ChildProcess;
  ready: Ready;
  exited: Promise<number | null>;
  output: () => string;
}

/** Spawns `… start … --ready-file <readyFile>` and resolves once the ready file is written. */
export async function startInBackground(command: string, args: string[], readyFile: string, options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Background> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  for (let waited = 0; !existsSync(readyFile); waited += 100) {
    if (gone) throw new Error(`exited before ready: ${output}`);
    if (waited > READY_WAIT_MS) {
      child.kill("SIGKILL");
      throw new Error(`no ready file after ${READY_WAIT_MS / 1000} s: ${output}`);
    }
    await sleep(100);
  }
  // The ready file is written atomically (a rename), so once it exists it is whole.
  return { child, ready: JSON.parse(readFileSync(readyFile, "utf8")) as Ready, exited, output: () => output };
}

interface Answer {
  status: number;
  body: string;
}

/** One HTTP(S) request; HTTPS trusts only `ca` (standin's own CA with --tls). */
export async function call(url: string, init: { method?: string; body?: string; headers?: Record<string, string>; ca?: string } = {}): Promise<Answer> {
  if (url.startsWith("http:")) {
    const res = await fetch(url, { method: init.method, body: init.body, headers: init.headers });
    return { status: res.status, body: await res.text() };
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers, ca: init.ca }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/**
 * Real requests to the three services of a standin started with the default fixture:
 * the scheduler's job list, a registry KV write and read back and a session, and the
 * echo service behind its API key.
 */
export async function exerciseDefaultWorld(ready: Ready, ca?: string): Promise<void> {
  const jobs = await call(`${ready.scheduler}/v1/jobs`, { ca });
  expect(jobs).toEqual({ status: 200, body: "[]" });

  expect(await call(`${ready.registry}/v1/kv/packaging/check`, { method: "PUT", body: "it works", ca })).toMatchObject({ status: 200, body: "true" });
  expect(await call(`${ready.registry}/v1/kv/packaging/check?raw`, { ca })).toEqual({ status: 200, body: "it works" });
  const session = await call(`${ready.registry}/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: "packaging", TTL: "15s" }), ca });
  expect(session.status).toBe(200);
  expect(JSON.parse(session.body)).toEqual({ ID: expect.stringMatching(/^[0-9a-f-]{36}$/) });

  const echo = await call(`${ready.echo}/echo?key=test-api-key`, {
    method: "POST",
    body: JSON.stringify({ message: "hello" }),
    headers: { "Content-Type": "application/json" },
    ca,
  });
  expect(echo).toEqual({ status: 200, body: JSON.stringify({ message: "hello" }) });
  const refused = await call(`${ready.echo}/echo?key=not-a-key`, {
    method: "POST",
    body: JSON.stringify({ message: "hello" }),
    headers: { "Content-Type": "application/json" },
    ca,
  });
  expect(refused.status).toBe(400);
}
