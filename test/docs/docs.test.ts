/**
 * The README and docs/*.md stay navigable and true: the README is a short front
 * page linking every docs page, every relative link and anchor resolves, no
 * text points at internal work items, and every ```console sample is run
 * against a real `standin start` and its output compared (the convention is in
 * ./samples.ts). Waits are for conditions (the banner, the commands' exit),
 * bounded generously; nothing here depends on how fast the machine is.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, CLI_TEST_TIMEOUT_MS, FREE_PORTS } from "../support/cli.js";
import { anchors, links, proseLines } from "./links.js";
import { blockScript, type Command, isStart, masked, parseSamples, recorded, type Sample, splitOutputs, startOptions, toDocumentedPorts, toRealPorts } from "./samples.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOCS = readdirSync(join(ROOT, "docs"))
  .filter((name) => name.endsWith(".md"))
  .sort()
  .map((name) => `docs/${name}`);
const PAGES = ["README.md", ...DOCS];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

/** A hang guard for one block's shell and for a banner, not a claim about speed. */
const GENEROUS_MS = 60_000;
const README_MAX_LINES = 250;

describe("the README and docs pages", () => {
  it(`the README is a front page of at most ${README_MAX_LINES} lines`, () => {
    expect(read("README.md").trimEnd().split("\n").length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("the README links every docs page", () => {
    const linked = new Set(links(read("README.md")).map((l) => l.target.split("#")[0]));
    expect(DOCS.filter((page) => !linked.has(page))).toEqual([]);
  });

  it("every relative link resolves to a file, and every #anchor to a heading of it", () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const { line, target } of links(read(page))) {
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split("#") as [string, string | undefined];
        const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path);
        if (!existsSync(file)) {
          broken.push(`${page}:${line}: ${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && !anchors(readFileSync(file, "utf8")).has(anchor)) broken.push(`${page}:${line}: ${target}: no such heading`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("no text refers to internal work items or states what is no longer so", () => {
    const forbidden = [
      /\bissues? #?\d+/i,
      /\bitems? #?\d+/i,
      /\bnext issue\b/i,
      /\barrives? with\b/i,
      /\bthis session\b/i,
      /\bTODO\b/,
      /a3bb…/, // a state hash of an older default world
    ];
    const found: string[] = [];
    for (const page of PAGES) {
      read(page)
        .split("\n")
        .forEach((line, i) => {
          for (const re of forbidden) if (re.test(line)) found.push(`${page}:${i + 1}: ${re}: ${line.trim()}`);
        });
    }
    expect(found).toEqual([]);
  });

  it("output is shown only in checked console blocks, never as comments in sh blocks or in blocks of another kind", () => {
    const found: string[] = [];
    for (const page of PAGES) {
      let lang: string | undefined;
      read(page)
        .split("\n")
        .forEach((line, i) => {
          const fence = /^\s*```(\S*)/.exec(line);
          if (fence) {
            lang = lang === undefined ? fence[1] : undefined;
            return;
          }
          if (lang === "sh" && /(^|\s)# *([[{"]|\d{3}\b|HTTP\/)/.test(line)) found.push(`${page}:${i + 1}: ${line.trim()}`);
          if (lang !== undefined && lang !== "console" && line.startsWith("$ ")) found.push(`${page}:${i + 1}: a $ command outside a console block`);
        });
    }
    expect(found).toEqual([]);
  });

  it("every console block is a checked sample with at least one command", () => {
    for (const page of PAGES) for (const sample of parseSamples(page, read(page))) expect(sample.commands.length, `${page}:${sample.line}`).toBeGreaterThan(0);
  });

  it("docs/cli.md names every command and every start option the CLI's help lists", async () => {
    const { buildProgram } = await import("../../src/cli.js");
    const program = buildProgram();
    const page = read("docs/cli.md");
    const missing: string[] = [];
    for (const command of program.commands) {
      const names = command.commands.length > 0 ? command.commands.map((sub) => `standin ${command.name()} ${sub.name()}`) : [`standin ${command.name()}`];
      for (const name of names) if (!page.includes(name)) missing.push(name);
    }
    for (const option of program.commands.find((c) => c.name() === "start")!.options) if (!page.includes(option.long!)) missing.push(`start ${option.long}`);
    expect(missing).toEqual([]);
  });

  it("prose outside code names no old README sections (the reference lives in docs/)", () => {
    const found: string[] = [];
    for (const page of PAGES)
      for (const { line, text } of proseLines(read(page))) if (/the README's (?!known differences)/.test(text)) found.push(`${page}:${line}: ${text.trim()}`);
    expect(found).toEqual([]);
  });
});

/** A directory for a page's commands: the repository's fixtures, keys and test files, and `standin` on PATH. */
function scratch(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(join(tmpdir(), "standin-docs-"));
  for (const name of ["fixtures", "keys", "test"]) symlinkSync(join(ROOT, name), join(dir, name));
  const bin = join(dir, ".bin");
  mkdirSync(bin);
  const shims = {
    standin: `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`,
    // `npx standin` is the checkout's CLI; a sample needs no other npx.
    npx: `#!/bin/sh\nif [ "$1" = standin ]; then shift; exec "${process.execPath}" "${BIN}" "$@"; fi\necho "npx $1: not available in the docs check" >&2; exit 127\n`,
  };
  for (const [name, script] of Object.entries(shims)) {
    writeFileSync(join(bin, name), script);
    chmodSync(join(bin, name), 0o755);
  }
  return { dir, env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } };
}

interface Running {
  child: ChildProcess;
  banner: string;
  /** documented port → real port */
  ports: Record<string, number>;
  url: string;
}

/** `standin start <args>` on free ports in `dir`, resolved with its banner (stdout up to the control line). */
function start(args: string[], dir: string): Promise<Running> {
  const child = spawn(process.execPath, [BIN, "start", ...FREE_PORTS, ...args], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`standin start ${args.join(" ")}: no banner within ${GENEROUS_MS / 1000} s; ${out} ${err}`)), GENEROUS_MS);
    child.stderr!.on("data", (d) => (err += d));
    child.stdout!.on("data", (d) => {
      out += d;
      const end = /^ {2}control +\S+\n/m.exec(out);
      if (!end) return;
      clearTimeout(timer);
      const banner = out.slice(0, end.index + end[0].length);
      const port = (name: string) => Number(new RegExp(`^ {2}${name} +\\S+:(\\d+)`, "m").exec(banner)![1]);
      const ports = { "4646": port("scheduler"), "8500": port("registry"), "8080": port("echo") };
      resolvePromise({ child, banner, ports, url: /^ {2}scheduler +(\S+)$/m.exec(banner)![1]! });
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`standin start ${args.join(" ")} exited ${code} before its banner: ${err}`));
    });
  });
}

async function stop(running: Running | undefined): Promise<void> {
  const child = running?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolvePromise) => child.once("exit", resolvePromise));
  child.kill("SIGTERM");
  await exited;
}

function sh(script: string, dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile("/bin/sh", ["-c", script], { cwd: dir, env, timeout: GENEROUS_MS, maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      // A command's own failure is part of its output; only a hung block is an error here.
      if (error?.killed) reject(new Error(`the block did not finish within ${GENEROUS_MS / 1000} s: ${stdout}`));
      else resolvePromise(stdout);
    });
  });
}

/** `DOCS_RECORD=1`: write each sample's actual output into its page instead of failing (review the diff). */
const RECORD = process.env.DOCS_RECORD === "1";

const withoutOneNewline = (text: string) => text.replace(/\n$/, "");

for (const page of PAGES) {
  const samples = parseSamples(page, read(page));
  if (samples.length === 0) continue;
  describe(`the checked samples of ${page}`, { timeout: CLI_TEST_TIMEOUT_MS }, () => {
    const { dir, env } = scratch();
    let running: Running | undefined;
    const actual = new Map<number, string[]>();
    afterAll(async () => {
      if (RECORD) writeFileSync(join(ROOT, page), recorded(read(page), actual));
      await stop(running);
      rmSync(dir, { recursive: true, force: true });
    }, CLI_TEST_TIMEOUT_MS);

    const check = async (sample: Sample) => {
      const where = `${page}:${sample.line}`;
      const outputs: string[] = [];
      actual.set(sample.line, outputs);
      const compare = (got: string, command: Command) => {
        outputs.push(got);
        if (!RECORD) expect(masked(got, sample.vary), `${where}: $ ${command.text}`).toBe(masked(command.expected.join("\n"), sample.vary));
      };
      if (!isStart(sample.commands[0]?.text ?? "") && running === undefined) running = await start([], dir);
      if (sample.reset) {
        const res = await fetch(`${running!.url}/_standin/reset`, { method: "POST" });
        expect(res.status, `${where}: reset`).toBe(200);
      }
      // Runs of commands between start lines go to one shell each.
      let pending: typeof sample.commands = [];
      const flush = async () => {
        if (pending.length === 0) return;
        const commands = pending;
        pending = [];
        const output = await sh(blockScript(commands.map((c) => toRealPorts(c.script, running!.ports))), dir, { ...env, STANDIN_URL: running!.url });
        const split = splitOutputs(output);
        expect(split.length, `${where}: the block's commands did not all run: ${output}`).toBe(commands.length);
        for (const [i, command] of commands.entries()) compare(withoutOneNewline(toDocumentedPorts(split[i]!, running!.ports)), command);
      };
      for (const command of sample.commands) {
        if (!isStart(command.text)) {
          pending.push(command);
          continue;
        }
        await flush();
        await stop(running);
        const { args, redirected } = startOptions(command.text);
        running = await start(args, dir);
        compare(redirected ? "" : withoutOneNewline(toDocumentedPorts(running.banner, running.ports)), command);
      }
      await flush();
    };

    for (const sample of samples) it(`line ${sample.line}`, () => check(sample));
  });
}
