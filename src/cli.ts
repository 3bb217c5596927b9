/**
 * The `standin` command line: `start` runs the emulator; the other commands
 * talk to a running one over its control API.
 */
import { Argument, Command, Option } from "commander";
import { FixtureError } from "./scenario-files/load.js";
import { checkStartFixtures, withFixtureBlame } from "./standin/fixtures-check.js";
import { formatInstant } from "./core/instant.js";
import { PortInUseError, startStandin, type RunningStandin } from "./server.js";
import { SERVICE_NAMES } from "./http/service-names.js";
import { packageVersion } from "./package-files.js";
import { formatReport, replayTape, TapeError } from "./replay.js";
import { ECHO_SCHEMES } from "./scenario-files/schema.js";
import { BackgroundFiles } from "./cli/background-files.js";
import { actCommand } from "./cli/commands/act.js";
import { awaitCommand } from "./cli/commands/await.js";
import { firedLines, type FiredTimer } from "./cli/commands/fired.js";
import { jobCommand } from "./cli/commands/job.js";
import { parityCommand } from "./cli/commands/parity.js";
import { journalCommand } from "./cli/commands/journal.js";
import { snapshotCommand } from "./cli/commands/snapshot.js";
import { uiCommand } from "./cli/commands/ui.js";
import { recordCommand } from "./cli/commands/record.js";
import { hostOption, pidFileOption, portOption, readyFileOption } from "./cli/listen-options.js";
import { type TlsOptionValues, tlsCertOption, tlsDirOption, tlsKeyOption, tlsOption, tlsSetting } from "./cli/tls-options.js";
import { addClientOptions, type ClientOptions, control, DEFAULT_URL, printJson } from "./cli/control-client.js";
import { CliFailure, oneLine } from "./cli/failure.js";
import { readJsonFile } from "./cli/files.js";
import { ENVIRONMENT_HELP, oneUsageLineOnError } from "./cli/help.js";
import { parseKeyValue } from "./cli/key-values.js";
import { byteSize, collect, integer, positiveInteger, positiveNumber, startTime } from "./cli/option-values.js";
import { duplicatePort } from "./cli/ports.js";
import { resumedLine } from "./cli/resumed.js";
import { stopStandin } from "./cli/stop.js";
import { waitReady } from "./cli/wait-ready.js";
import { parseTimeout } from "./cli/wall-wait.js";

/** The shipped fixture `start` loads when given no --fixture (see scenario-files/shipped.ts). */
export const DEFAULT_FIXTURE = "default";
const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

export function buildProgram(): Command {
  const program = new Command()
    .name("standin")
    .description("Deterministic emulator of a cluster scheduler, registry sessions and an echo/auth service, on a virtual clock")
    .version(packageVersion())
    .addHelpText("after", ENVIRONMENT_HELP);

  program
    .command("start")
    .description("start the emulator on its three ports")
    .addOption(
      new Option(
        "--fixture <file|name>",
        "a fixture file, or a shipped fixture by name (default, token-expiry, leader-election-failover, rolling-deploy-failing-canary); repeatable, applied in order",
      )
        .argParser(collect)
        .default([] as string[], "the shipped default"),
    )
    .option("--seed <n>", "overrides the fixture's seed (default: the fixture's; 1 in the bundled one)", integer)
    .addOption(new Option("--clock <mode>", "virtual clock mode (default: the fixture's; manual in the bundled one)").choices(["manual", "auto", "realtime"]))
    .option("--speed <x>", "realtime only: virtual seconds per real second (default: the fixture's, or 1)", positiveNumber)
    .option("--start-time <iso|now>", "overrides the fixture's clock start (default: the fixture's; 2026-01-01T00:00:00Z in the bundled one)", startTime)
    .addOption(hostOption())
    .addOption(
      new Option(
        "--allowed-host <name>",
        "a Host name the control API and the dashboard answer besides localhost, IP addresses and --host (repeatable; others get 403, a DNS-rebinding guard)",
      )
        .argParser(collect)
        .default([] as string[], "none"),
    )
    .addOption(portOption("scheduler"))
    .addOption(portOption("registry"))
    .addOption(portOption("echo"))
    .option("--no-compat-headers", "emit only the specification's header names (no X-Nomad-*/X-Consul-*; default: both)")
    .option("--state-file <file>", "load state from it at start if it exists; write it atomically while running (when changed) and on exit (default: none)")
    .option(
      "--state-file-interval <ms>",
      "with --state-file: write the changed state at most this often, so a crash loses at most about this much; 0 = only on exit",
      integer,
      1000,
    )
    .option("--control-token <secret>", "require the header Authorization: Bearer <secret> on the control API, but for GET /_standin/ready (default: none, open)")
    .addOption(tlsOption())
    .addOption(tlsDirOption())
    .addOption(tlsCertOption())
    .addOption(tlsKeyOption())
    .option("--no-tape", "do not record the tape (GET /_standin/tape answers 409; default: recorded)")
    .option("--tape-bytes <size>", "the tape's budget in bytes (k/m/g suffixes: KiB/MiB/GiB); past it the tape stops and says where (default: 24m)", byteSize)
    .option("--journal-entries <n>", "request and event journal cap in entries; the oldest go first (default: 10000)", positiveInteger)
    .option("--journal-bytes <size>", "request journal budget in bytes (k/m/g suffixes); the oldest go first (default: 16m)", byteSize)
    .option("--control-body-limit <size>", "control request bodies over this get 413 (k/m/g suffixes; default: 64m)", byteSize)
    .option("--no-ui", "do not serve the dashboard at /_standin/ui (default: served, behind --control-token)")
    .addOption(new Option("--log-level <level>", "log level; requests are logged at debug").choices(LOG_LEVELS).default("info"))
    .addOption(readyFileOption())
    .addOption(pidFileOption())
    .action(startCommand);

  program
    .command("wait-ready")
    .description("wait until a standin answers GET /_standin/ready with 200; exit 1 at the timeout")
    .addOption(new Option("--url <url>", "any service URL of the emulator (host:port means http://host:port)").env("STANDIN_URL").default(DEFAULT_URL))
    .option("--ready-file <file>", "wait for this file (start --ready-file) to appear, then for the URL in it (instead of --url)")
    .addOption(new Option("--timeout <duration>", "give up after this long (Go duration)").argParser(parseTimeout).default(parseTimeout("30s"), "30s"))
    .addOption(new Option("--ca <file>", "trust this CA certificate for an https URL (with --ready-file, the file's CA by default)").env("STANDIN_CA"))
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

  const client = (name: string, description: string) => addClientOptions(program.command(name).description(description));

  client("clock", "print the virtual clock").action(async (opts: ClientOptions) => printJson(await control(opts, "GET", "/clock")));

  client("advance", "move the clock forward by a Go duration (e.g. 90s, 1h30m) and print what fired")
    .argument("<duration>")
    .action(async (duration: string, opts: ClientOptions) => {
      const result = (await control(opts, "POST", "/clock/advance", { by: duration })) as { now: string; fired: FiredTimer[] };
      process.stdout.write(`now ${result.now}\n`);
      for (const line of firedLines(result.fired)) process.stdout.write(`${line}\n`);
    });

  client("reset", "return the running emulator to its start state").action(async (opts: ClientOptions) => printJson(await control(opts, "POST", "/reset")));

  client("token", "mint a JWT for an echo token scheme, signed by the emulator-held key and dated by the virtual clock")
    .addArgument(new Argument("<scheme>", "the echo token scheme").choices(ECHO_SCHEMES))
    .addOption(new Option("--claim <k=v>", "extra claim (repeatable; the value is parsed as JSON when it is JSON)").argParser(collect).default([] as string[], "none"))
    .option("--expires-in <d>", "lifetime as a Go duration (default: 1h)")
    .action(async (scheme: string, opts: ClientOptions & { claim: string[]; expiresIn?: string }) => {
      const claims = Object.fromEntries(opts.claim.map((pair) => parseKeyValue(pair, "standin: --claim")));
      const body: Record<string, unknown> = { scheme, claims };
      if (opts.expiresIn) body.expiresIn = opts.expiresIn;
      const result = (await control(opts, "POST", "/echo/tokens", body)) as { token: string };
      process.stdout.write(`${result.token}\n`);
    });

  actCommand(program);
  awaitCommand(program);
  jobCommand(program);
  journalCommand(program);
  parityCommand(program);
  snapshotCommand(program);
  uiCommand(program);
  recordCommand(program);

  program
    .command("fixtures")
    .description("fixture tools")
    .command("check")
    .description("check fixture files as start would use them (applied together, in order), without starting; exit 1 with start's errors")
    .argument("<file...>")
    .option("--each", "check each file on its own, as start --fixture <file> would")
    .action(async (files: string[], opts: { each?: boolean }) => {
      for (const set of opts.each ? files.map((file) => [file]) : [files]) {
        const problems = await checkStartFixtures(set);
        for (const problem of problems) process.stderr.write(`${oneLine(`standin: ${problem.oneLine}`)}\n`);
        if (problems.length > 0) process.exitCode = 1;
        else for (const file of set) process.stdout.write(`ok ${file}\n`);
      }
    });

  program
    .command("replay")
    .description("replay a tape (GET /_standin/tape) into a fresh emulator; exit 1 at any divergence, printing the first")
    .argument("<tape>", "tape file (JSON)")
    .action(async (file: string) => {
      const document = await readJsonFile("standin replay", file);
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

  oneUsageLineOnError(program);
  return program;
}

interface StartOptions extends TlsOptionValues {
  fixture: string[];
  seed?: number;
  clock?: "manual" | "auto" | "realtime";
  speed?: number;
  startTime?: string;
  host: string;
  allowedHost: string[];
  schedulerPort: number;
  registryPort: number;
  echoPort: number;
  compatHeaders: boolean;
  stateFile?: string;
  stateFileInterval: number;
  controlToken?: string;
  tape?: boolean;
  tapeBytes?: number;
  journalEntries?: number;
  journalBytes?: number;
  controlBodyLimit?: number;
  ui: boolean;
  logLevel: LogLevel;
  readyFile?: string;
  pidFile?: string;
}

async function startCommand(opts: StartOptions): Promise<void> {
  const log = logger(opts.logLevel);
  // Before anything listens: the second service would find its port taken and blame something else.
  const clash = duplicatePort({ scheduler: opts.schedulerPort, registry: opts.registryPort, echo: opts.echoPort });
  if (clash) throw new CliFailure(`standin: ${clash}`);
  const tls = await tlsSetting(opts, "standin");
  let running: RunningStandin;
  const fixtures = opts.fixture.length ? opts.fixture : [DEFAULT_FIXTURE];
  const startState = { seed: opts.seed, clock: { mode: opts.clock, speed: opts.speed, start: opts.startTime } };
  try {
    // A fixture the start state cannot be built from is named in the failure (fixtures check says the same).
    running = await withFixtureBlame(fixtures, startState, () =>
      startStandin({
        fixture: fixtures,
        ...startState,
        host: opts.host,
        allowedHosts: opts.allowedHost,
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
        ui: opts.ui,
        tls,
        tlsDir: opts.tlsDir,
        onError: (error) => log("error", `unexpected error: ${(error as Error)?.stack ?? String(error)}`),
        onRequest: opts.logLevel === "debug" ? (r) => log("debug", `${r.service} ${r.method} ${r.path} ${r.status}`) : undefined,
      }),
    );
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
  if (opts.stateFile) log("info", resumedLine(opts.stateFile, running.resumed));
  const width = Math.max(...SERVICE_NAMES.map((s) => s.length), "control".length);
  // Before the URLs: a script that stops reading at the control URL has the CA's path already.
  if (running.ca) log("info", `  ${"tls ca".padEnd(width)}  ${running.ca.path}`);
  for (const service of SERVICE_NAMES) log("info", `  ${service.padEnd(width)}  ${running.urls[service]}`);
  log("info", `  ${"control".padEnd(width)}  ${running.urls.control}`);
}

function logger(level: LogLevel) {
  const threshold = LOG_LEVELS.indexOf(level);
  return (at: LogLevel, message: string) => {
    if (LOG_LEVELS.indexOf(at) > threshold) return;
    // The ready banner goes to stdout (scripts read the URLs); diagnostics to stderr.
    (at === "info" || at === "debug" ? process.stdout : process.stderr).write(message + "\n");
  };
}

export async function main(argv: string[] = process.argv): Promise<void> {
  ignoreClosedOutput();
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CliFailure) {
      process.stderr.write(oneLine(error.message) + "\n");
      process.exit(error.exitCode);
    }
    // A bug, not a usage error: still one line, the stack only when asked for.
    if (process.env.STANDIN_DEBUG) throw error;
    process.stderr.write(`${oneLine(`standin: unexpected error: ${(error as Error)?.message ?? String(error)} (STANDIN_DEBUG=1 shows the stack)`)}\n`);
    process.exit(1);
  }
}

/**
 * A reader that stops early (`standin journal | head`, a supervisor that
 * closes the pipe once it has the URLs) must not crash the command with an
 * EPIPE stack: what is left to print goes nowhere, and a running standin
 * keeps serving.
 */
function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
    });
  }
}
