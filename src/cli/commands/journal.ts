/**
 * `standin journal [requests|events]`: the request journal (the service
 * requests the run answered) or the event journal (timers fired, clock
 * operations, resets…), from `GET /_standin/requests` / `/events`, as an
 * aligned table or, with `--json`, one JSON object a line.
 */
import { Argument, type Command, Option } from "commander";
import { SERVICE_NAMES } from "../../http/service-names.js";
import { addClientOptions, type ClientOptions, control } from "../control-client.js";
import { CliFailure } from "../failure.js";
import { integer, positiveInteger } from "../option-values.js";

interface JournalOptions extends ClientOptions {
  since?: number;
  limit?: number;
  service?: string;
  type?: string;
  json?: boolean;
}

interface Entry {
  seq: number;
  at: string;
  service?: string;
}

interface RequestEntry extends Entry {
  service: string;
  method: string;
  path: string;
  query: string;
  status: number;
}

interface EventEntry extends Entry {
  type: string;
  subject?: string;
  detail?: unknown;
}

export function journalCommand(program: Command): void {
  addClientOptions(
    program
      .command("journal")
      .description("print the request journal (service requests answered) or the event journal (timers fired, clock operations, resets…), oldest first")
      .addArgument(new Argument("[journal]", "which journal").choices(["requests", "events"]).default("requests"))
      .option("--since <seq>", "only entries with a sequence number above this", integer)
      .option("--limit <n>", "at most this many entries (the newest; after --service)", positiveInteger)
      .addOption(new Option("--service <name>", "only this service's entries").choices(SERVICE_NAMES))
      .option("--type <type>", "events only: this event type (`clock` matches `clock.*`)")
      .option("--json", "one JSON object a line, as the control API gives them (headers and bodies included)"),
  ).action(async (journal: "requests" | "events", opts: JournalOptions) => {
    if (opts.type !== undefined && journal !== "events") throw new CliFailure("standin journal: --type is for the event journal (standin journal events --type …)");
    const query = new URLSearchParams();
    if (opts.since !== undefined) query.set("since", String(opts.since));
    if (opts.type !== undefined) query.set("type", opts.type);
    // The service filter is applied here (the API has none), so the limit must be too: the newest N of that service.
    if (opts.limit !== undefined && opts.service === undefined) query.set("limit", String(opts.limit));
    const path = `/${journal}${query.size ? `?${query}` : ""}`;
    const answer = (await control(opts, "GET", path)) as { requests?: Entry[]; events?: Entry[]; dropped: number };
    let entries = (journal === "requests" ? answer.requests : answer.events) ?? [];
    if (opts.service !== undefined) entries = entries.filter((e) => e.service === opts.service);
    if (opts.limit !== undefined && entries.length > opts.limit) entries = entries.slice(entries.length - opts.limit);
    if (opts.json) {
      process.stdout.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
      return;
    }
    const rows = journal === "requests" ? (entries as RequestEntry[]).map(requestRow) : (entries as EventEntry[]).map(eventRow);
    process.stdout.write(table(rows));
    if (entries.length === 0) process.stdout.write(`(no ${journal === "requests" ? "requests" : "events"})\n`);
    if (answer.dropped > 0) process.stdout.write(`(${answer.dropped} older entries were dropped by the journal's cap: start --journal-entries, --journal-bytes)\n`);
  });
}

function requestRow(r: RequestEntry): string[] {
  return [String(r.seq), r.at, r.service, String(r.status), `${r.method} ${r.path}${r.query}`];
}

function eventRow(e: EventEntry): string[] {
  return [String(e.seq), e.at, e.type, e.service ?? "-", e.subject ?? "-", e.detail === undefined ? "" : JSON.stringify(e.detail)];
}

/** Columns aligned, the last one left ragged. */
function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}
