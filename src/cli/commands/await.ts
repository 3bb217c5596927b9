/**
 * `standin await <condition> [key=value…] [<condition> [key=value…]…]`:
 * moves the virtual clock timer by timer until every condition holds, through
 * `POST /_standin/await`. A word without `=` starts the next condition. Exit 0
 * once they hold; exit 1, in one line with what was observed, when they did
 * not within `--within` of virtual time. Without a condition, lists them.
 */
import type { Command } from "commander";
import { DEFAULT_AWAIT_WITHIN } from "../../control/scenario.js";
import { addClientOptions, type ClientOptions, control, controlRequest, printJson, refusal } from "../control-client.js";
import { CliFailure } from "../failure.js";
import { isKeyValue, parseKeyValue } from "../key-values.js";
import { describedTable, type Described } from "./act.js";
import { firedLines, type FiredTimer } from "./fired.js";

interface AwaitOptions extends ClientOptions {
  within: string;
  json?: boolean;
}

interface AwaitAnswer {
  met: boolean;
  waited: string;
  observed: Record<string, unknown>;
  now: string;
  fired: FiredTimer[];
  index: number;
  error?: string;
}

export function awaitCommand(program: Command): void {
  addClientOptions(
    program
      .command("await")
      .description("move the virtual clock timer by timer until every condition holds (exit 0), or exit 1 after --within of virtual time; without a condition, list the conditions")
      .argument("[until...]", "a condition's name, then its arguments as key=value (JSON when it parses as JSON); another name starts another condition")
      .option("--within <duration>", "the limit in virtual time (Go duration)", DEFAULT_AWAIT_WITHIN)
      .option("--json", "print the emulator's whole answer as JSON (also when not met)"),
  ).action(async (words: string[], opts: AwaitOptions) => {
    if (words.length === 0) {
      const listed = (await control(opts, "GET", "/actions")) as { conditions: Described[] };
      process.stdout.write(describedTable(listed.conditions));
      return;
    }
    const answer = await controlRequest(opts, "POST", "/await", { until: conditions(words), within: opts.within });
    // 408: not met in time, with what was observed; any other refusal is the usual one line.
    if (!answer.ok && answer.status !== 408) throw refusal(answer);
    const result = answer.body as AwaitAnswer;
    if (opts.json) printJson(result);
    if (!result.met) throw new CliFailure(`standin await: ${result.error ?? "not met"} (now ${result.now}; observed ${JSON.stringify(result.observed)})`);
    if (opts.json) return;
    process.stdout.write(`met after ${result.waited} (now ${result.now}, index ${result.index})\n`);
    for (const [name, seen] of Object.entries(result.observed)) process.stdout.write(`  ${name}  ${JSON.stringify(seen)}\n`);
    for (const line of firedLines(result.fired)) process.stdout.write(`${line}\n`);
  });
}

/** `allocations job=web count=2 deployment job=web status=successful` → `{allocations: {…}, deployment: {…}}`. */
function conditions(words: string[]): Record<string, Record<string, unknown>> {
  const until: Record<string, Record<string, unknown>> = {};
  let current: Record<string, unknown> | undefined;
  for (const word of words) {
    if (!isKeyValue(word)) {
      if (word in until) throw new CliFailure(`standin await: condition ${JSON.stringify(word)} is given twice`);
      current = until[word] = {};
      continue;
    }
    if (!current) throw new CliFailure(`standin await: expected a condition name first, got ${JSON.stringify(word)}`);
    const [key, value] = parseKeyValue(word, "standin await: a condition argument");
    current[key] = value;
  }
  return until;
}
