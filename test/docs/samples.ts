/**
 * The checked samples of the README and docs/*.md: how they are found and run.
 *
 * The convention (docs/development.md says it for writers):
 *
 * - A fenced block opened with ```console is a checked sample. A line starting
 *   with `$ ` is a command (a line ending in `\` continues it on the next one,
 *   as does a line ending inside quotes, whose newline is part of the string;
 *   the shell gets the lines as written, as a reader's shell would: a `\`
 *   continuation inside single quotes, where a shell keeps the backslash and
 *   the newline, is refused);
 *   the lines after it, up to the next command, are its expected output,
 *   compared exactly (stdout and stderr together; one trailing newline of the
 *   output is not significant).
 * - The commands of one block run in one `sh` (so `TOKEN=$(…)` carries over),
 *   in a scratch directory where `fixtures/`, `keys/` and `test/` are the
 *   repository's, with `standin` (and `npx standin`) meaning this checkout's
 *   `bin/standin`, and `STANDIN_URL` pointing at the page's emulator.
 * - The blocks of one page share one emulator, in page order. A command
 *   `$ standin start …` (or `npx standin start …`) is not run through `sh`:
 *   the check starts that emulator itself, on free ports, with those options
 *   (a trailing `&` and redirections are dropped), after stopping the page's
 *   previous one. The lines after it are its banner, compared like any output;
 *   with a redirection (`> standin.log`) nothing may follow. A page's first
 *   block without such a line gets `standin start` with the default fixture.
 * - The documented ports 4646, 8500 and 8080 stand for the emulator's real
 *   ones: `:4646` in a command is the real scheduler port, and the real ports
 *   in the output read as the documented ones.
 * - An HTML comment right before the block may add directives:
 *   `<!-- checked: reset -->` resets the emulator first (POST /_standin/reset);
 *   `vary=<regex>` (repeatable) marks a part of the output that differs from
 *   run to run by nature — a temporary path, a process id — and must say why
 *   in the comment; it is replaced by `<varies>` on both sides. Nothing
 *   standin computes varies: ids, hashes and instants follow from the fixture,
 *   the seed and the requests, so they are compared as they are.
 */

export interface Command {
  /** The command without `$ `, continuation lines joined (for matching and `standin start`'s options). */
  text: string;
  /** What the shell runs: the command's lines as written, without `$ `, newlines kept (as pasted). */
  script: string;
  /** The command's lines as written (with `$ ` and any continuation lines). */
  raw: string[];
  expected: string[];
}

export interface Sample {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  commands: Command[];
  reset: boolean;
  vary: RegExp[];
}

const START = /^(?:npx )?standin start\b/;

export function isStart(command: string): boolean {
  return START.test(command);
}

/** `standin start …` as options for the check's own start: `&` and redirections dropped. */
export function startOptions(command: string): { args: string[]; redirected: boolean } {
  let rest = command.replace(START, "").trim();
  const redirected = />/.test(rest);
  rest = rest
    .replace(/\s*&\s*$/, "")
    .replace(/\s*\d?>&\d/g, "")
    .replace(/\s*\d?>\s*\S+/g, "");
  return { args: rest.split(/\s+/).filter(Boolean), redirected };
}

export function parseSamples(page: string, text: string): Sample[] {
  const lines = text.split("\n");
  const samples: Sample[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```console") continue;
    const comment = /^<!-- checked(?::(.*))? -->$/.exec(lines[i - 1] ?? "");
    const directives = comment?.[1]?.trim() ?? "";
    const sample: Sample = {
      page,
      line: i + 1,
      commands: [],
      reset: /(^|\s)reset(\s|$)/.test(directives),
      vary: [...directives.matchAll(/vary=(\S+)/g)].map((m) => new RegExp(m[1]!, "g")),
    };
    let j = i + 1;
    for (; j < lines.length && lines[j] !== "```"; j++) {
      const line = lines[j]!;
      if (line.startsWith("$ ")) {
        let command = line.slice(2);
        const raw = [line];
        const script = () => [raw[0]!.slice(2), ...raw.slice(1)].join("\n");
        // As a shell reads it: a line that ends inside quotes goes on (the newline is part of the
        // string); a trailing backslash outside them continues the command (inside single quotes
        // a shell would keep both, so it is refused).
        for (;;) {
          const open = openQuote(script());
          if (open === "'" && command.endsWith("\\") && openQuote(script().slice(0, -1)) === "'") {
            throw new Error(
              `${page}:${j + 1}: a \\ line continuation inside single quotes: a shell keeps the backslash and the newline there (drop the \\: the newline inside the quotes is part of the string)`,
            );
          }
          if (j + 1 >= lines.length || lines[j + 1] === "```") {
            if (open !== undefined) throw new Error(`${page}:${j + 1}: the command's ${open} quote is not closed before the block ends`);
            break;
          }
          if (open !== undefined) {
            raw.push(lines[++j]!);
            command = `${command}\n${lines[j]!}`;
          } else if (command.endsWith("\\")) {
            raw.push(lines[++j]!);
            command = `${command.slice(0, -1)}${lines[j]!.trim()}`;
          } else break;
        }
        sample.commands.push({ text: command, script: script(), raw, expected: [] });
      } else if (sample.commands.length > 0) {
        sample.commands.at(-1)!.expected.push(line);
      } else {
        throw new Error(`${page}:${j + 1}: a console block starts with a command ($ …)`);
      }
    }
    if (j === lines.length) throw new Error(`${page}:${i + 1}: the console block is not closed`);
    samples.push(sample);
    i = j;
  }
  return samples;
}

/**
 * The quote a POSIX shell reading `text` would be inside at its end, if any:
 * single quotes outside double quotes open and close one (a backslash means
 * nothing inside them), a backslash elsewhere escapes the next character, and
 * `#` at the start of a word outside quotes starts a comment to the line's end.
 */
export function openQuote(text: string): "'" | '"' | undefined {
  let single = false;
  let double = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (single) {
      if (c === "'") single = false;
    } else if (c === "\\") i++;
    else if (double) {
      if (c === '"') double = false;
    } else if (c === "'") single = true;
    else if (c === '"') double = true;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i + 1 < text.length && text[i + 1] !== "\n") i++;
    }
  }
  return single ? "'" : double ? '"' : undefined;
}

/** The page with each block's expected outputs replaced by the actual ones (`DOCS_RECORD=1`). */
export function recorded(text: string, actual: Map<number, string[]>): string {
  const lines = text.split("\n");
  const samples = parseSamples("", text).reverse();
  for (const sample of samples) {
    const outputs = actual.get(sample.line);
    if (!outputs) continue;
    const body = sample.commands.flatMap((c, i) => [...c.raw, ...(outputs[i] === "" ? [] : outputs[i]!.split("\n"))]);
    let end = sample.line;
    while (lines[end] !== "```") end++;
    lines.splice(sample.line, end - sample.line, ...body);
  }
  return lines.join("\n");
}

/** The documented ports in a command, read as the real ones. */
export function toRealPorts(text: string, ports: Record<string, number>): string {
  return text.replace(/:(4646|8500|8080)\b/g, (_, documented: string) => `:${ports[documented]}`);
}

/** The real ports in an output, read as the documented ones. */
export function toDocumentedPorts(text: string, ports: Record<string, number>): string {
  let out = text;
  for (const [documented, real] of Object.entries(ports)) out = out.replace(new RegExp(`:${real}\\b`, "g"), `:${documented}`);
  return out;
}

export function masked(text: string, vary: RegExp[]): string {
  return vary.reduce((out, re) => out.replace(re, "<varies>"), text);
}

/** A marker line between the outputs of a block's commands. */
export const MARKER = "@@standin-docs-command-done@@";

/** One `sh` script for a block's commands (start lines left out), each output followed by the marker. */
export function blockScript(commands: string[]): string {
  return ["exec 2>&1", ...commands.flatMap((c) => [c, `printf '\\n%s\\n' '${MARKER}'`])].join("\n");
}

/** The script's output split back into one output per command (without the marker's own newline). */
export function splitOutputs(output: string): string[] {
  const parts = output.split(`\n${MARKER}\n`);
  parts.pop(); // after the last marker
  return parts;
}
