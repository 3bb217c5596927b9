/**
 * `standin ui <tape>` as a real child process: it prints the page's address
 * and serves the tape there; a file that is not a tape, or is missing, fails
 * in one line before anything listens. `standin start --no-ui` serves no
 * dashboard.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { BIN, CLI_TEST_TIMEOUT_MS, startCli } from "../support/cli.js";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "standin-ui-cli-"));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

async function failure(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await run(process.execPath, [BIN, ...args]);
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
  throw new Error("expected a failure");
}

describe("standin ui", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("serves a tape and prints where", async () => {
    const emu = await createStandin({});
    emu.clock.advance("1s");
    const file = join(dir, "run.tape.json");
    writeFileSync(file, JSON.stringify(await emu.exportTape()));
    emu.close();
    const child = spawn(process.execPath, [BIN, "ui", file, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (d) => {
        out += d;
        if (out.includes("\n")) resolve(out);
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}`)));
    });
    const url = /^standin ui: .*run\.tape\.json at (http:\/\/127\.0\.0\.1:\d+\/_standin\/ui)\n$/.exec(line)?.[1];
    expect(url, line).toBeDefined();
    expect(await (await fetch(`${url}/api/info`)).json()).toEqual({ mode: "tape", tape: { name: "run.tape.json", entries: 1 } });
    expect((await fetch(url!)).headers.get("content-type")).toBe("text/html; charset=utf-8");
  });

  it("refuses a file that is not a tape, or is not there, in one line", async () => {
    const file = join(dir, "not-a-tape.json");
    writeFileSync(file, '{"hello":"world"}');
    const notTape = await failure(["ui", file, "--port", "0"]);
    expect(notTape.code).toBe(1);
    expect(notTape.stderr).toMatch(new RegExp(`^standin ui: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: not a standin tape: [^\\n]+\\n$`));
    const missing = await failure(["ui", join(dir, "nope.json"), "--port", "0"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^standin ui: cannot read .*nope\.json: [^\n]+\n$/);
  });

  it("start --no-ui serves no dashboard; start without it does", async () => {
    const off = await startCli(["--no-ui"], children);
    expect((await fetch(`${off.urls.control}/ui`)).status).toBe(404);
    expect((await fetch(`${off.urls.control}/clock`)).status).toBe(200);
    const on = await startCli([], children);
    expect((await fetch(`${on.urls.control}/ui`)).status).toBe(200);
  });
});
