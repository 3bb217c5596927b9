/**
 * The checked samples' parser reads a command as a reader's shell would
 * (test/docs/samples.ts): what runs is the lines as pasted, a newline inside
 * quotes is part of the string, and a `\` continuation inside single quotes
 * (which a shell keeps, backslash and newline) is refused.
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { openQuote, parseSamples } from "./samples.js";

const block = (...lines: string[]) => ["<!-- checked -->", "```console", ...lines, "```", ""].join("\n");

describe("the checked samples' parser", () => {
  it("refuses a \\ continuation inside single quotes, naming the line", () => {
    const page = block(`$ curl -d '{"a":1,\\`, `  "b":2}'`, "{}");
    expect(() => parseSamples("p.md", page)).toThrow(/^p\.md:3: a \\ line continuation inside single quotes/);
  });

  it("takes a line that ends inside quotes as going on, and runs the lines as pasted", () => {
    const page = block(`$ printf '%s' '{"a":1,`, `  "b":2}' | tr -d ' \\n'`, `{"a":1,"b":2}`, "$ echo done", "done");
    const [sample] = parseSamples("p.md", page);
    expect(sample!.commands.map((c) => c.expected)).toEqual([[`{"a":1,"b":2}`], ["done"]]);
    const script = sample!.commands[0]!.script;
    expect(script).toBe(`printf '%s' '{"a":1,\n  "b":2}' | tr -d ' \\n'`);
    expect(execFileSync("/bin/sh", ["-c", script], { encoding: "utf8" })).toBe(`{"a":1,"b":2}`);
  });

  it("keeps a \\ continuation outside quotes for the shell to join, as pasted", () => {
    const [sample] = parseSamples("p.md", block("$ echo one \\", "  two", "one two"));
    const command = sample!.commands[0]!;
    expect(command.text).toBe("echo one two");
    expect(command.script).toBe("echo one \\\n  two");
    expect(execFileSync("/bin/sh", ["-c", command.script], { encoding: "utf8" })).toBe("one two\n");
  });

  it("refuses a quote left open at the end of the block", () => {
    expect(() => parseSamples("p.md", block("$ echo 'never closed", "output"))).toThrow(/quote is not closed before the block ends/);
  });

  it("knows the shell's quoting: an apostrophe inside double quotes or a comment opens nothing", () => {
    expect(openQuote(`echo "it's"`)).toBeUndefined();
    expect(openQuote("echo hi # it's")).toBeUndefined();
    expect(openQuote("echo it\\'s")).toBeUndefined();
    expect(openQuote(`echo '"`)).toBe("'");
    expect(openQuote(`echo "a'b`)).toBe('"');
  });
});
