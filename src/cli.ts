/**
 * The `standin` command line: `start` runs the emulator; the other commands
 * talk to a running one over its control API.
 */
import { readFile, writeFile } from "node:fs/promises";
import { Command, InvalidArgumentError, Option } from "commander";
import { FixtureError, loadFixtureFile } from "./scenario-files/load.js";
import { formatInstant } from "./core/instant.js";
import { PortInUseError, startStandin, type RunningStandin } from "./server.js";
import { SERVICE_NAMES } from "./http/service-names.js";
import { packageVersion } from "./package-files.js";
import { formatReport, replayTape, TapeError } from "./replay.js";
import type { TlsFiles } from "./tls.js";
import { BackgroundFiles } from "./cli/background-files.js";
import { CliFailure, oneLine } from "./cli/failure.js";
import { send } from "./cli/send.js";
import { stopStandin } from "./cli/stop.js";
import { waitReady } from "./cli/wait-ready.js";
import { parseTimeout } from "./cli/wall-wait.js";

/** The shipped fixture `start` loads when given no --fixture (see scenario-files/shipped.ts). */
export const DEFAULT_FIXTURE = "default";
const DEFAULT_URL = "http://127.0.0.1:4646";
const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export function buildProgram(): Command {
  const program = new Command()
    .name("standin")
    .description("Deterministic emulator of a cluster scheduler, registry sessions and an echo/auth service, on a virtual clock")
    .version(packageVersion())
    .showHelpAfterError();

  program
    .command("start")
    .description("start the emulator on its three ports")
    .option("--fixture <file>", "fixture to load at start (repeatable; applied in order)", collect, [] as string[])
    .option("--seed <n>", "overrides the fixture's seed", integer)
    .addOption(new Option("--clock <mode>", "virtual clock mode").choices(["manual", "auto", "realtime"]))
    .option("--speed <x>", "realtime only: virtual seconds per real second (default 1)", positiveNumber)
    .option("--start-time <iso|now>", "overrides the fixture's clock start (default 2026-01-01T00:00:00Z)")
    .option("--host <addr>", "address to listen on", "127.0.0.1")
    .option("--scheduler-port <n>", "scheduler port; 0 = any free port", port, 4646)
    .option("--registry-port <n>", "registry port; 0 = any free port", port, 8500)
    .option("--echo-port <n>", "echo port; 0 = any free port", port, 8080)
    .option("--no-compat-headers", "emit only the specification's header names (no X-Nomad-*/X-Consul-*)")
    .option("--state-file <file>", "load state from it at start if it exists; write it atomically while running (when changed) and on exit")
    .option(
      "--state-file-interval <ms>",
      "with --state-file: write the changed state at most this often, so a crash loses at most about this much; 0 = only on exit",
      integer,
      1000,
    )
    .option("--control-token <secret>", "require Authorization: Bearer <secret> on the control API")
    .option("--tls", "serve every port over HTTPS with a certificate made at start, signed by a CA written to <tls-dir>/ca.pem")
    .option("--tls-dir <dir>", "where --tls writes ca.pem (created if needed; default a new directory under the OS temp dir, removed on exit); implies --tls")
    .option("--tls-cert <file>", "serve HTTPS with this certificate (PEM, chain allowed) instead of a generated one; needs --tls-key")
    .option("--tls-key <file>", "the private key (PEM) of --tls-cert")
    .option("--no-tape", "do not record the tape (GET /_standin/tape answers 409)")
    .option("--tape-bytes <size>", "the tape's budget in bytes (k/m/g suffixes: KiB/MiB/GiB); past it the tape stops and says where (default 24m)", byteSize)
    .option("--journal-entries <n>", "request and event journal cap in entries; the oldest go first (default 10000)", positiveInteger)
    .option("--journal-bytes <size>", "request journal budget in bytes (k/m/g suffixes); the oldest go first (default 16m)", byteSize)
    .option("--control-body-limit <size>", "control request bodies over this get 413 (k/m/g suffixes; default 64m)", byteSize)
    .addOption(new Option("--log-level <level>", "log level; requests are logged at debug").choices(LOG_LEVELS).default("info"))
    .option("--ready-file <file>", "once every port listens, write the URLs and the pid here as JSON (atomically); removed on exit")
    .option("--pid-file <file>", "once every port listens, write the pid here; removed on exit")
    .action(startCommand);

  program
    .command("wait-ready")
    .description("wait until a standin answers GET /_standin/ready with 200; exit 1 at the timeout")
    .option("--url <url>", "any service URL of the emulator", process.env.STANDIN_URL ?? DEFAULT_URL)
    .option("--ready-file <file>", "wait for this file (start --ready-file) to appear, then for the URL in it (instead of --url)")
    .addOption(new Option("--timeout <duration>", "give up after this long (Go duration)").argParser(parseTimeout).default(parseTimeout("30s"), "30s"))
    .option("--ca <file>", "trust this CA certificate for an https URL (or STANDIN_CA; with --ready-file, the file's CA by default)", process.env.STANDIN_CA)
    .action(async (opts: Parameters<typeof waitReady>[0]) => {
      process.stdout.write(`standin ready at ${await waitReady(opts)}\n`);
    });

  program
    .command("stop")
    .description("stop a standin started in the background: SIGTERM to its pid, then wait until it is gone")
    .option("--pid-file <file>", "the pid file of start --pid-file")
    .option("--ready-file <file>", "or the ready file of start --ready-file (it holds the pid)")
    .addOption(new Option("--timeout <duration>", "give up after this long (Go duration)").argParser(parseTimeout).default(parseTimeout("10s"), "10s"))
    .action(async (opts: Parameters<typeof stopStandin>[0]) => {
      process.stdout.write(`${await stopStandin(opts)}\n`);
    });

  const client = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .option("--url <url>", "any service URL of the running emulator", process.env.STANDIN_URL ?? DEFAULT_URL)
      .option("--control-token <secret>", "control API token (or STANDIN_CONTROL_TOKEN)", process.env.STANDIN_CONTROL_TOKEN)
      .option("--ca <file>", "trust this CA certificate for an https --url (the `tls ca` file of `start --tls`; or STANDIN_CA)", process.env.STANDIN_CA);

  client("clock", "print the virtual clock").action(async (opts: ClientOptions) => print(await control(opts, "GET", "/clock")));

  client("advance", "move the clock forward by a Go duration (e.g. 90s, 1h30m) and print what fired")
    .argument("<duration>")
    .action(async (duration: string, opts: ClientOptions) => {
      const result = (await control(opts, "POST", "/clock/advance", { by: duration })) as AdvanceResult;
      process.stdout.write(`now ${result.now}\n`);
      for (const f of result.fired) process.stdout.write(`  ${f.at}  ${f.kind}  ${f.subject}${f.detail === null ? "" : "  " + JSON.stringify(f.detail)}\n`);
      if (result.fired.length === 0) process.stdout.write("  (no timers fired)\n");
    });

  client("reset", "return the running emulator to its start state").action(async (opts: ClientOptions) => print(await control(opts, "POST", "/reset")));

  client("token", "mint a JWT for an echo token scheme")
    .argument("<scheme>")
    .option("--claim <k=v>", "extra claim (repeatable; the value is parsed as JSON when it is JSON)", collect, [] as string[])
    .option("--expires-in <d>", "lifetime as a Go duration (default 1h)")
    .action(async (scheme: string, opts: ClientOptions & { claim: string[]; expiresIn?: string }) => {
      const claims = Object.fromEntries(opts.claim.map(parseClaim));
      const body: Record<string, unknown> = { scheme, claims };
      if (opts.expiresIn) body.expiresIn = opts.expiresIn;
      const result = (await control(opts, "POST", "/echo/tokens", body)) as { token: string };
      process.stdout.write(`${result.token}\n`);
    });

  const snapshot = program.command("snapshot").description("save or load the whole state");
  for (const [name, description] of [
    ["save", "write the state to a file"],
    ["load", "restore the state from a file"],
  ] as const) {
    snapshot
      .command(name)
      .description(description)
      .argument("<file>")
      .option("--url <url>", "any service URL of the running emulator", process.env.STANDIN_URL ?? DEFAULT_URL)
      .option("--control-token <secret>", "control API token (or STANDIN_CONTROL_TOKEN)", process.env.STANDIN_CONTROL_TOKEN)
      .option("--ca <file>", "trust this CA certificate for an https --url (or STANDIN_CA)", process.env.STANDIN_CA)
      .action(async (file: string, opts: ClientOptions) => {
        if (name === "save") {
          const state = await control(opts, "GET", "/snapshot");
          await writeFile(file, JSON.stringify(state) + "\n");
          process.stdout.write(`saved ${file}\n`);
        } else {
          const document = JSON.parse(await readFile(file, "utf8"));
          print(await control(opts, "PUT", "/snapshot", document));
        }
      });
  }

  program
    .command("fixtures")
    .description("fixture tools")
    .command("check")
    .description("validate fixture files; exit 1 with readable errors")
    .argument("<file...>")
    .action(async (files: string[]) => {
      let failed = false;
      for (const file of files) {
        try {
          await loadFixtureFile(file);
          process.stdout.write(`ok ${file}\n`);
        } catch (error) {
          if (!(error instanceof FixtureError)) throw error;
          failed = true;
          process.stderr.write(`${error.message}\n`);
        }
      }
      if (failed) process.exitCode = 1;
    });

  program
    .command("replay")
    .description("replay a tape (GET /_standin/tape) into a fresh emulator; exit 1 at any divergence, printing the first")
    .argument("<tape>", "tape file (JSON)")
    .action(async (file: string) => {
      let document: unknown;
      try {
        document = JSON.parse(await readFile(file, "utf8"));
      } catch (error) {
        process.stderr.write(`standin replay: cannot read ${file}: ${(error as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      try {
        const report = await replayTape(document);
        process.stdout.write(`${formatReport(report)}\n`);
        if (!report.ok) process.exitCode = 1;
      } catch (error) {
        if (!(error instanceof TapeError)) throw error;
        process.stderr.write(`standin replay: ${error.message}\n`);
        process.exitCode = 1;
      }
    });

  return program;
}

interface StartOptions {
  fixture: string[];
  seed?: number;
  clock?: "manual" | "auto" | "realtime";
  speed?: number;
  startTime?: string;
  host: string;
  schedulerPort: number;
  registryPort: number;
  echoPort: number;
  compatHeaders: boolean;
  stateFile?: string;
  stateFileInterval: number;
  controlToken?: string;
  tls?: boolean;
  tlsDir?: string;
  tlsCert?: string;
  tlsKey?: string;
  tape?: boolean;
  tapeBytes?: number;
  journalEntries?: number;
  journalBytes?: number;
  controlBodyLimit?: number;
  logLevel: LogLevel;
  readyFile?: string;
  pidFile?: string;
}

async function startCommand(opts: StartOptions): Promise<void> {
  const log = logger(opts.logLevel);
  const tls = await tlsSetting(opts);
  let running: RunningStandin;
  try {
    running = await startStandin({
      fixture: opts.fixture.length ? opts.fixture : [DEFAULT_FIXTURE],
      seed: opts.seed,
      clock: { mode: opts.clock, speed: opts.speed, start: opts.startTime },
      host: opts.host,
      ports: { scheduler: opts.schedulerPort, registry: opts.registryPort, echo: opts.echoPort },
      compatHeaders: opts.compatHeaders,
      stateFile: opts.stateFile,
      stateFileIntervalMs: opts.stateFileInterval,
      controlToken: opts.controlToken,
      // Commander's --no-tape: `tape` is true unless given (then the fixture's recording.tape decides).
      tape: opts.tape === false ? false : undefined,
      tapeBytes: opts.tapeBytes,
      journalCapacity: opts.journalEntries,
      journalBytes: opts.journalBytes,
      controlBodyLimit: opts.controlBodyLimit,
      tls,
      tlsDir: opts.tlsDir,
      onError: (error) => log("error", `unexpected error: ${(error as Error)?.stack ?? String(error)}`),
      onRequest: opts.logLevel === "debug" ? (r) => log("debug", `${r.service} ${r.method} ${r.path} ${r.status}`) : undefined,
    });
  } catch (error) {
    if (error instanceof PortInUseError) throw new CliFailure(`standin: ${error.message}`);
    if (error instanceof FixtureError) throw new CliFailure(`standin: ${error.oneLine}`);
    // By name: tls.ts (and node:tls with it) is loaded only when TLS is asked for, which keeps it off the start-up path.
    if (error instanceof Error && error.name === "TlsError") throw new CliFailure(`standin: ${error.message}`);
    throw new CliFailure(`standin: cannot start: ${(error as Error).message}`);
  }

  const files = new BackgroundFiles({ readyFile: opts.readyFile, pidFile: opts.pidFile });
  // Every way out passes here (process.exit below, a failure in main), so the files never outlive the process but for a SIGKILL.
  process.on("exit", () => files.removeAll());

  const shutdown = async (signal: string) => {
    log("info", `standin: ${signal}, shutting down`);
    files.removeReadyFile();
    try {
      await running.close();
      if (opts.stateFile) log("info", `standin: state written to ${opts.stateFile}`);
      process.exit(0);
    } catch (error) {
      log("error", `standin: shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    }
  };
  // Only the first signal counts: a repeated one (Ctrl-C reaches both npm and standin, npm forwards it
  // again) must not cut the state file's write short.
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    void shutdown(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  // The files and the banner last: a supervisor that signals as soon as it reads the URLs finds the handlers in place.
  try {
    await files.write({ pid: process.pid, ...running.urls, ...(running.ca && { ca: running.ca.path }) });
  } catch (error) {
    await running.close();
    throw error;
  }
  const emu = running.emulator;
  const clock = emu.clock.status();
  log("info", `standin ready (seed ${emu.seed}, clock ${clock.mode} at ${formatInstant(clock.nowMs)})`);
  const width = Math.max(...SERVICE_NAMES.map((s) => s.length), "control".length);
  // Before the URLs: a script that stops reading at the control URL has the CA's path already.
  if (running.ca) log("info", `  ${"tls ca".padEnd(width)}  ${running.ca.path}`);
  for (const service of SERVICE_NAMES) log("info", `  ${service.padEnd(width)}  ${running.urls[service]}`);
  log("info", `  ${"control".padEnd(width)}  ${running.urls.control}`);
}

/** `--tls`, `--tls-dir` → a generated certificate; `--tls-cert` + `--tls-key` → the user's, read here. */
async function tlsSetting(opts: StartOptions): Promise<TlsFiles | boolean> {
  if (opts.tlsCert === undefined && opts.tlsKey === undefined) return Boolean(opts.tls || opts.tlsDir !== undefined);
  if (opts.tlsCert === undefined || opts.tlsKey === undefined) throw new CliFailure("standin: --tls-cert and --tls-key go together");
  if (opts.tlsDir !== undefined) throw new CliFailure("standin: --tls-dir is for a generated certificate, not with --tls-cert");
  const read = async (flag: string, file: string) => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new CliFailure(`standin: cannot read ${flag} ${file}: ${(error as Error).message}`);
    }
  };
  return { cert: await read("--tls-cert", opts.tlsCert), key: await read("--tls-key", opts.tlsKey) };
}

interface ClientOptions {
  url: string;
  controlToken?: string;
  /** A CA certificate file to trust for an https URL. */
  ca?: string;
}

interface AdvanceResult {
  now: string;
  fired: Array<{ at: string; kind: string; subject: string; detail: unknown }>;
}

async function control(opts: ClientOptions, method: string, path: string, body?: unknown): Promise<unknown> {
  const base = new URL(opts.url);
  const url = new URL(`/_standin${path}`, base);
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (opts.controlToken) headers.Authorization = `Bearer ${opts.controlToken}`;
  let response: { ok: boolean; status: number; text: string };
  try {
    response = await send(url, method, headers, body === undefined ? undefined : JSON.stringify(body), opts.ca);
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(`standin: cannot reach ${base.origin}: ${((error as Error).cause as Error)?.message ?? (error as Error).message}`);
  }
  const text = response.text;
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  if (!response.ok) {
    const message = (parsed as { error?: string })?.error ?? text;
    throw new CliFailure(`standin: ${method} ${url.pathname} failed (${response.status}): ${message}`);
  }
  return parsed;
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + "\n");
}

function logger(level: LogLevel) {
  const threshold = LOG_LEVELS.indexOf(level);
  return (at: LogLevel, message: string) => {
    if (LOG_LEVELS.indexOf(at) > threshold) return;
    // The ready banner goes to stdout (scripts read the URLs); diagnostics to stderr.
    (at === "info" || at === "debug" ? process.stdout : process.stderr).write(message + "\n");
  };
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function integer(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError("expected a non-negative integer");
  return n;
}

function positiveInteger(value: string): number {
  const n = integer(value);
  if (n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

const SIZE_UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A size in bytes: `1048576`, `512k`, `64m`, `1g` (binary units). */
function byteSize(value: string): number {
  const match = /^(\d+)([kmg]?)$/i.exec(value.trim());
  const n = match ? Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a size in bytes, e.g. 1048576, 512k, 64m or 1g");
  return n;
}

function port(value: string): number {
  const n = integer(value);
  if (n > 65535) throw new InvalidArgumentError("expected a port from 0 to 65535");
  return n;
}

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a positive number");
  return n;
}

function parseClaim(pair: string): [string, unknown] {
  const eq = pair.indexOf("=");
  if (eq <= 0) throw new CliFailure(`standin: --claim expects key=value, got "${pair}"`);
  const raw = pair.slice(eq + 1);
  try {
    return [pair.slice(0, eq), JSON.parse(raw)];
  } catch {
    return [pair.slice(0, eq), raw];
  }
}

export async function main(argv: string[] = process.argv): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CliFailure) {
      process.stderr.write(oneLine(error.message) + "\n");
      process.exit(1);
    }
    throw error;
  }
}
