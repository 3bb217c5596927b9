/**
 * `standin act <action> [key=value…]`: runs one named action now, through
 * `POST /_standin/actions` (the vocabulary of fixture timelines: a node going
 * down, a leader change, a check turning critical…). Without an action, lists
 * them (`GET /_standin/actions`).
 */
import type { Command } from "commander";
import { addClientOptions, type ClientOptions, control, printJson } from "../control-client.js";
import { CliFailure } from "../failure.js";
import { isKeyValue, parseKeyValue } from "../key-values.js";

export interface Described {
  name: string;
  service: string;
  summary: string;
}

export function actCommand(program: Command): void {
  addClientOptions(
    program
      .command("act")
      .description("run one named action now (as a fixture timeline step would) and print what it did; without an action, list the actions")
      .argument("[action]", "the action's name (`standin act` lists them)")
      .argument("[args...]", "the action's arguments as key=value (the value is JSON when it parses as JSON, text otherwise)"),
  ).action(async (name: string | undefined, args: string[], opts: ClientOptions) => {
    if (name === undefined) {
      const listed = (await control(opts, "GET", "/actions")) as { actions: Described[] };
      process.stdout.write(describedTable(listed.actions));
      return;
    }
    if (isKeyValue(name)) throw new CliFailure(`standin act: expected an action name first, got ${JSON.stringify(name)}`);
    const body: Record<string, unknown> = Object.fromEntries(args.map((pair) => parseKeyValue(pair, "standin act: an action argument")));
    if ("do" in body) throw new CliFailure('standin act: "do" is the action\'s name, not an argument');
    printJson(await control(opts, "POST", "/actions", { do: name, ...body }));
  });
}

/** `name  service  summary`, aligned, one a line. */
export function describedTable(rows: readonly Described[]): string {
  const nameWidth = Math.max(0, ...rows.map((r) => r.name.length));
  const serviceWidth = Math.max(0, ...rows.map((r) => r.service.length));
  return rows.map((r) => `${r.name.padEnd(nameWidth)}  ${r.service.padEnd(serviceWidth)}  ${r.summary}\n`).join("");
}
