/**
 * `standin parity <recording>`: replays a recording (`standin record`, a
 * suite run against the real products) against a fresh standin in process
 * and reports every difference: a one-line summary and the readable report
 * on stdout, the JSON report with `--json`. Exit 0 when nothing differs
 * beyond the waivers, 1 when something does, 2 for a bad recording, waiver
 * file, fixture or usage.
 */
import { Command, Option } from "commander";
import { parseTimeout } from "../wall-wait.js";
import { FixtureError } from "../../scenario-files/load.js";
import { fixtureReference } from "../../scenario-files/shipped.js";
import { formatReport, parity, RecordingError, WaiverError } from "../../parity/compare/index.js";
import { CliFailure } from "../failure.js";
import { readJsonFile, writeTextFile } from "../files.js";
import { collect } from "../option-values.js";

/** The exit status for a recording, waiver file or fixture standin cannot use (1 means "differences"). */
const BAD_INPUT = 2;

export function parityCommand(program: Command): void {
  program.addCommand(
    new Command("parity")
      .description("replay a recording (standin record) against a fresh standin and report every difference; exit 0 when none beyond the waivers, 1 when some, 2 for bad input")
      .argument("<recording>", "recording file (JSON, standin record --out)")
      .addOption(
        new Option("--fixture <file|name>", "the starting world: a fixture file or a shipped fixture by name (repeatable, applied in order)")
          .argParser(collect)
          .default([] as string[], "default, the world of a dev agent: one node, one server"),
      )
      .option("--waive <file>", "a waiver file: [{route, path, reason}], the differences it covers are listed but do not fail")
      .option("--json <file>", "also write the JSON report here (the dashboard opens it: standin ui --parity <file>)")
      .addOption(
        new Option("--time-tolerance <duration>", "how far apart two instants may be, offset from each run's start, and still be the same (a Go duration; default 1s)").argParser(
          tolerance,
        ),
      )
      .option("--quiet", "print the summary line only")
      // A usage error is bad input too (status 2), never to be read as "differences found" (1).
      .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : BAD_INPUT))
      .action(async (file: string, opts: { fixture: string[]; waive?: string; json?: string; quiet?: boolean; timeTolerance?: number }) => {
        const recording = await badInput(() => readJsonFile("standin parity", file));
        const waivers = opts.waive === undefined ? undefined : await badInput(() => readJsonFile("standin parity", opts.waive!));
        const fixture = opts.fixture.length > 0 ? opts.fixture.map(fixtureReference) : undefined;
        let report: Awaited<ReturnType<typeof parity>>;
        try {
          report = await parity(recording, {
            ...(fixture && { fixture }),
            ...(waivers !== undefined && { waivers }),
            ...(opts.timeTolerance !== undefined && { timeToleranceMs: opts.timeTolerance }),
          });
        } catch (error) {
          if (error instanceof RecordingError) throw new CliFailure(`standin parity: ${file}: ${error.message}`, BAD_INPUT);
          if (error instanceof WaiverError) throw new CliFailure(`standin parity: ${opts.waive}: ${error.message}`, BAD_INPUT);
          if (error instanceof FixtureError) throw new CliFailure(`standin parity: ${error.oneLine}`, BAD_INPUT);
          throw error;
        }
        if (opts.json !== undefined) await writeTextFile("standin parity", opts.json, `${JSON.stringify(report, null, 2)}\n`);
        const text = opts.quiet ? formatReport(report).split("\n")[0]! : formatReport(report);
        process.stdout.write(`${text}\n`);
        if (!report.ok) process.exitCode = 1;
      }),
  );
}

async function badInput<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof CliFailure) throw new CliFailure(error.message, BAD_INPUT);
    throw error;
  }
}

/** `--time-tolerance`: a Go duration of 0 or more, in ms (parsed as `--timeout` is). */
function tolerance(text: string): number {
  return parseTimeout(text).ms;
}
