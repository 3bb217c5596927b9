/**
 * An HCL2 job file turned into an api.Job by the running standin itself:
 * `POST /v1/jobs/parse` with the file's text and its variables, as Nomad's
 * `JobsParseRequest`. The emulator parses it exactly as the scheduler would
 * (one parser, one set of diagnostics), and the CLI only puts the user's file
 * name back where the endpoint says `input.hcl`.
 *
 * Variables: the endpoint takes one variables file's content, so `--var-file`
 * contents come first and each `--var name=value` becomes a line
 * `name = <value>` after them. A value that starts with `[`, `{` or `"` is
 * taken as an HCL expression (a list, map or quoted string); any other value
 * as a string, which HCL converts to the declared number or bool type — the
 * rule Nomad's CLI applies to `-var`. `NOMAD_VAR_<name>` environment entries
 * are read the same way, below both (Nomad's precedence: environment, then
 * var files, then `-var`), for names neither of them sets.
 */
import type { NomadApi } from "./nomad-api.js";

/** Where Nomad's parse endpoint says its diagnostics are (jobspec2's ParseConfig.Path). */
const ENDPOINT_FILE = "input.hcl";
const PARSE_FAILURE = "Failed to parse job: ";

export interface JobFileInput {
  file: string;
  vars: string[];
  varFiles: string[];
  /** The command's environment, for its NOMAD_VAR_* entries. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The prefix of the environment entries Nomad's CLI reads as variables. */
const ENV_PREFIX = "NOMAD_VAR_";

export async function parseJobFile(api: NomadApi, input: JobFileInput): Promise<Record<string, unknown>> {
  const text = await api.readFile(input.file);
  const variables = await variablesContent(api, input);
  const body: Record<string, unknown> = { JobHCL: text, Canonicalize: false };
  if (variables !== "") body.Variables = variables;
  const answer = await api.request("POST", "/v1/jobs/parse", body);
  if (answer.status === 400) throw api.failure(diagnostics(answer.text, input.file));
  if (!answer.ok || typeof answer.body !== "object" || answer.body === null) {
    return (await api.expect(`cannot parse ${input.file}`, "POST", "/v1/jobs/parse", body)) as Record<string, unknown>;
  }
  return answer.body as Record<string, unknown>;
}

/**
 * Nomad's `Failed to parse job: input.hcl:3,5-8: …` as `<file>:3,5-8: …`, the
 * way an editor or a terminal turns it into a link; a diagnostic without a
 * place (`<nil>: Unset variable …`) is about the file as a whole. Several
 * diagnostics (and a detail's own blank lines) become one line.
 */
export function diagnostics(text: string, file: string): string {
  if (!text.startsWith(PARSE_FAILURE)) return `${file}: ${text.trim()}`;
  return text
    .slice(PARSE_FAILURE.length)
    .trim()
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => placed(line, file))
    .join(" ");
}

/** One diagnostic line with its place named for the user: the job file, or the variables the command sent. */
function placed(line: string, file: string): string {
  if (line.startsWith("<nil>: ")) return `${file}: ${line.slice("<nil>: ".length)}`;
  // A variables content that is not HCL: its place is in the lines the command built, of no use to the user.
  const unparsable = /^unable to parse var content: input\.hcl:\S+: (.*)$/.exec(line);
  if (unparsable) return `--var/--var-file: unable to parse var content: ${unparsable[1]}`;
  // The endpoint calls the variables content input.hcl too; a refused value is in what --var/--var-file gave.
  const varfile = /^input\.hcl:\S+: (Invalid value for varfile variable;.*)$/.exec(line);
  if (varfile) return `--var/--var-file: ${varfile[1]!.replaceAll(`${ENDPOINT_FILE}:`, `${file}:`)}`;
  return line.replaceAll(`${ENDPOINT_FILE}:`, `${file}:`);
}

async function variablesContent(api: NomadApi, input: JobFileInput): Promise<string> {
  const assigned = input.vars.map((pair) => varLine(api, pair));
  const names = new Set(assigned.map(([name]) => name));
  const parts: string[] = [];
  const fileContents: string[] = [];
  for (const varFile of input.varFiles) fileContents.push(await api.readFile(varFile));
  // Lowest precedence: the environment, for the names no var file and no --var sets.
  const setElsewhere = new Set([...names, ...fileContents.flatMap((content) => content.split("\n").map((line) => topLevelName(line) ?? ""))]);
  parts.push(...environmentLines(input.env ?? {}, setElsewhere));
  for (const content of fileContents) {
    // One variables file may set a name once: a --var wins over a var file by replacing the file's line.
    parts.push(
      content
        .split("\n")
        .filter((line) => !names.has(topLevelName(line) ?? ""))
        .join("\n"),
    );
  }
  parts.push(...assigned.map(([, line]) => line));
  return parts.filter((part) => part.trim() !== "").join("\n");
}

/** `NOMAD_VAR_name=value` entries as variables lines, in name order; names HCL cannot declare are skipped, as Nomad's CLI skips them. */
function environmentLines(env: Readonly<Record<string, string | undefined>>, setElsewhere: ReadonlySet<string>): string[] {
  const lines: string[] = [];
  for (const key of Object.keys(env).sort()) {
    const value = env[key];
    if (!key.startsWith(ENV_PREFIX) || value === undefined) continue;
    const name = key.slice(ENV_PREFIX.length);
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) || setElsewhere.has(name)) continue;
    lines.push(`${name} = ${/^\s*[[{"]/.test(value) ? value : JSON.stringify(value)}`);
  }
  return lines;
}

function varLine(api: NomadApi, pair: string): [string, string] {
  const eq = pair.indexOf("=");
  const name = pair.slice(0, eq).trim();
  if (eq <= 0 || !/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) throw api.failure(`--var expects name=value, got ${JSON.stringify(pair)}`);
  const value = pair.slice(eq + 1);
  const expression = /^\s*[[{"]/.test(value) ? value : JSON.stringify(value);
  return [name, `${name} = ${expression}`];
}

/** `name` of a variables file's line `name = …` written at the top level (not indented). */
function topLevelName(line: string): string | undefined {
  return /^([A-Za-z_][A-Za-z0-9_-]*)\s*=/.exec(line)?.[1];
}
