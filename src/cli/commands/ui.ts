/**
 * `standin ui <tape>`: opens a saved tape in the dashboard, read-only, on a
 * port of its own, and prints the page's address; Ctrl-C stops it. A file
 * that is not a tape standin can replay fails in one line before anything
 * listens. `--parity <report>` opens a parity report (standin parity
 * --json) beside it, or alone.
 */
import { Command, Option } from "commander";
import { basename } from "node:path";
import { ControlError } from "../../control/errors.js";
import { checkParityReport } from "../../ui/parity-file.js";
import { DEFAULT_VIEWER_PORT, startTapeViewer } from "../../ui/viewer.js";
import { CliFailure } from "../failure.js";
import { readJsonFile } from "../files.js";
import { collect, port } from "../option-values.js";

export function uiCommand(program: Command): void {
  program.addCommand(
    new Command("ui")
      .description("open a tape (GET /_standin/tape, a CI artifact) in the dashboard, read-only: timeline, state at any instant, the first divergence")
      .argument("[tape]", "tape file (JSON); optional with --parity")
      .option("--parity <report>", "open a parity report (standin parity --json): its exchanges, each differing one marked, both answers side by side")
      .option("--host <addr>", "address to listen on", "127.0.0.1")
      .addOption(new Option("--port <n>", "port; 0 = any free port").argParser(port).default(DEFAULT_VIEWER_PORT))
      .addOption(
        new Option("--allowed-host <name>", "a Host name the page answers besides localhost, IP addresses and --host (repeatable; others get 403)")
          .argParser(collect)
          .default([] as string[], "none"),
      )
      .action(async (file: string | undefined, opts: { host: string; port: number; allowedHost: string[]; parity?: string }) => {
        if (file === undefined && opts.parity === undefined) throw new CliFailure("standin ui: give a tape file, or --parity <report.json>");
        const tape = file === undefined ? undefined : await readJsonFile("standin ui", file);
        const parity = opts.parity === undefined ? undefined : { report: await readParityReport(opts.parity), name: basename(opts.parity) };
        let viewer: Awaited<ReturnType<typeof startTapeViewer>>;
        try {
          viewer = await startTapeViewer({ tape, name: file && basename(file), parity, host: opts.host, port: opts.port, allowedHosts: opts.allowedHost });
        } catch (error) {
          if (error instanceof ControlError) throw new CliFailure(`standin ui: ${file}: ${error.message}`);
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EADDRINUSE") throw new CliFailure(`standin ui: port ${opts.port} on ${opts.host} is already in use (--port 0 picks a free one)`);
          throw error;
        }
        process.stdout.write(`standin ui: ${[file, opts.parity].filter(Boolean).join(" and ")} at ${viewer.url}\n`);
        const stop = () => void viewer.close().then(() => process.exit(0));
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      }),
  );
}

/** The report's document, or a one-line failure naming the file before anything listens. */
async function readParityReport(file: string): Promise<unknown> {
  const document = await readJsonFile("standin ui", file);
  try {
    return checkParityReport(document);
  } catch (error) {
    if (error instanceof ControlError) throw new CliFailure(`standin ui: ${file}: ${error.message}`);
    throw error;
  }
}
