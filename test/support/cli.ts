/**
 * `standin start` as a real child process, for the tests that need the CLI:
 * started on free ports, resolved once its banner lists every URL (read from
 * stdout, as scripts do). The caller keeps the children to kill after each test.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { join } from "node:path";

export const BIN = join(process.cwd(), "bin/standin");
export const FREE_PORTS = ["--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0"];

export interface StartedCli {
  child: ChildProcess;
  urls: Record<string, string>;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export function startCli(args: string[], children: ChildProcess[]): Promise<StartedCli> {
  const child = spawn(process.execPath, [BIN, "start", ...FREE_PORTS, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  let err = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 10 s; stdout: ${out}; stderr: ${err}`)), 10_000);
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
