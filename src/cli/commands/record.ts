/**
 * `standin record`: a recording proxy in front of the real products, on
 * the ports `standin start` would take (one per upstream given), for a
 * suite to run against the real thing through it. The recording
 * (parity/recording.ts) is written when it stops: SIGTERM (`standin stop`),
 * SIGINT (Ctrl-C), or on `POST /_standin/recording/flush` while it runs.
 */
import { readFile } from "node:fs/promises";
import { Command, Option } from "commander";
import { startRecorder, RecorderError, RECORDED_SERVICES, type RunningRecorder } from "../../parity/record/recorder.js";
import type { RecordedService } from "../../parity/recording.js";
import { BackgroundFiles } from "../background-files.js";
import { CliFailure } from "../failure.js";
import { fileErrorReason } from "../files.js";
import { hostOption, pidFileOption, portOption, readyFileOption } from "../listen-options.js";
import { byteSize } from "../option-values.js";
import { duplicatePort } from "../ports.js";
import { type TlsOptionValues, tlsCertOption, tlsDirOption, tlsKeyOption, tlsOption, tlsSetting } from "../tls-options.js";

interface RecordOptions extends TlsOptionValues {
  schedulerUpstream?: string;
  registryUpstream?: string;
  echoUpstream?: string;
  out: string;
  host: string;
  schedulerPort: number;
  registryPort: number;
  echoPort: number;
  recordingBytes?: number;
  readyFile?: string;
  pidFile?: string;
  upstreamCa?: string;
  upstreamTlsSkipVerify?: boolean;
}

export function recordCommand(program: Command): void {
  program.addCommand(
    new Command("record")
      .description("a recording proxy: forward every request to the real products, unchanged, and write each exchange (secrets redacted) to a recording for standin parity")
      .option("--scheduler-upstream <url>", "the scheduler (Nomad) to forward to, e.g. http://127.0.0.1:4646; listens on --scheduler-port")
      .option("--registry-upstream <url>", "the registry (Consul) to forward to, e.g. http://127.0.0.1:8500; listens on --registry-port")
      .option("--echo-upstream <url>", "the echo service (ESP) to forward to; listens on --echo-port")
      .addOption(new Option("--out <file>", "where the recording is written (atomically) when it stops").makeOptionMandatory())
      .addOption(hostOption())
      .addOption(portOption("scheduler"))
      .addOption(portOption("registry"))
      .addOption(portOption("echo"))
      .option(
        "--recording-bytes <size>",
        "the recording's budget in bytes (k/m/g suffixes); past it the recording stops and says where, forwarding goes on (default: 24m)",
        byteSize,
      )
      .addOption(tlsOption())
      .addOption(tlsDirOption())
      .addOption(tlsCertOption())
      .addOption(tlsKeyOption())
      .option("--upstream-ca <file>", "trust the CA certificates in this PEM file for https upstreams, besides the system's")
      .option("--upstream-tls-skip-verify", "accept any certificate from an https upstream (as nomad -tls-skip-verify; default: checked)")
      .addOption(readyFileOption())
      .addOption(pidFileOption())
      .action(recordAction),
  );
}

async function recordAction(opts: RecordOptions): Promise<void> {
  const upstreams: Partial<Record<RecordedService, string>> = {};
  if (opts.schedulerUpstream !== undefined) upstreams.scheduler = opts.schedulerUpstream;
  if (opts.registryUpstream !== undefined) upstreams.registry = opts.registryUpstream;
  if (opts.echoUpstream !== undefined) upstreams.echo = opts.echoUpstream;
  const allPorts = { scheduler: opts.schedulerPort, registry: opts.registryPort, echo: opts.echoPort };
  // Only the ports that will listen can clash (a port 0 never does).
  const ports = Object.fromEntries(RECORDED_SERVICES.map((service) => [service, service in upstreams ? allPorts[service] : 0])) as Record<RecordedService, number>;
  const clash = duplicatePort(ports);
  if (clash) throw new CliFailure(`standin record: ${clash}`);

  const tls = await tlsSetting(opts, "standin record");
  const upstreamCa = opts.upstreamCa === undefined ? undefined : await readUpstreamCa(opts.upstreamCa);

  let recorder: RunningRecorder;
  try {
    recorder = await startRecorder({
      upstreams,
      out: opts.out,
      host: opts.host,
      ports,
      budgetBytes: opts.recordingBytes,
      tls,
      tlsDir: opts.tlsDir,
      upstreamCa,
      upstreamTlsSkipVerify: opts.upstreamTlsSkipVerify,
    });
  } catch (error) {
    if (error instanceof RecorderError) throw new CliFailure(`standin record: ${error.message}`);
    // By name, as start does: tls.ts is loaded only when TLS is asked for.
    if (error instanceof Error && error.name === "TlsError") throw new CliFailure(`standin record: ${error.message}`);
    throw new CliFailure(`standin record: cannot start: ${(error as Error).message}`);
  }

  // An --out that cannot be written is said now, not after the whole suite has run.
  try {
    await recorder.flush();
  } catch (error) {
    await recorder.close().catch(() => undefined);
    throw new CliFailure(`standin record: cannot write --out ${opts.out}: ${fileErrorReason(error)}`);
  }

  const files = new BackgroundFiles({ readyFile: opts.readyFile, pidFile: opts.pidFile });
  process.on("exit", () => files.removeAll());
  let stopping = false;
  const onSignal = (signal: string) => {
    // Only the first signal counts: a second one must not cut the recording's write short.
    if (stopping) return;
    stopping = true;
    process.stdout.write(`standin record: ${signal}, writing ${opts.out}\n`);
    files.removeReadyFile();
    recorder.close().then(
      (recording) => {
        const cut = recording.truncation ? ` (stopped at exchange ${recording.truncation.seq}: the ${recording.truncation.reason} budget)` : "";
        process.stdout.write(`standin record: ${recording.exchanges.length} exchanges written to ${opts.out}${cut}\n`);
        process.exit(0);
      },
      (error: Error) => {
        process.stderr.write(`standin record: cannot write ${opts.out}: ${fileErrorReason(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  try {
    await files.write({ pid: process.pid, ...recorder.urls, ...(recorder.ca && { ca: recorder.ca.path }) });
  } catch (error) {
    await recorder.close();
    throw error;
  }
  process.stdout.write(`standin record: recording to ${opts.out}\n`);
  const width = Math.max(...RECORDED_SERVICES.map((s) => s.length));
  if (recorder.ca) process.stdout.write(`  ${"tls ca".padEnd(width)}  ${recorder.ca.path}\n`);
  for (const service of RECORDED_SERVICES) {
    const url = recorder.urls[service];
    if (url) process.stdout.write(`  ${service.padEnd(width)}  ${url} -> ${upstreams[service]}\n`);
  }
}

/** `--upstream-ca`, read now (the recorder checks what it holds). */
async function readUpstreamCa(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new CliFailure(`standin record: cannot read --upstream-ca ${file}: ${fileErrorReason(error)}`);
  }
}
