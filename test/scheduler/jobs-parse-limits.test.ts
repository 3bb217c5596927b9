/**
 * Job files cannot freeze standin (issue 30, items 2 and 3), through
 * `POST /v1/jobs/parse`: patterns run on Go's RE2 (linear, whatever the
 * pattern) with Go's replacement rules; what expressions build is counted
 * (characters and elements) and what calls read and return is charged to
 * the evaluation budget; diagnostics stop at 100; operator chains are
 * evaluated in a loop; job files are read up to 128 KiB, and decode
 * at most 500 group and task blocks. Nothing here is
 * timed: each test asserts an answer that the unbounded code could not give
 * (a backtracking engine never finishes `^(a+)+$` on 40 characters) or a
 * bound's diagnostic.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { MAX_JOB_SOURCE_BYTES } from "../../src/scheduler/jobspec/hcl/index.js";
import { call, type Answer } from "../support/call.js";

type Json = Record<string, any>;

let shared: Standin | undefined;
async function parse(hcl: string, extra: Json = {}): Promise<Answer> {
  shared ??= await createStandin();
  return call(shared.scheduler, "POST", "/v1/jobs/parse", { JobHCL: hcl, ...extra });
}

/** The job's `meta` for a file whose job block holds only `meta = { … }` lines. */
async function meta(lines: string, locals = ""): Promise<Record<string, string>> {
  const res = await parse(`${locals ? `locals {\n${locals}\n}\n` : ""}job "x" {\n  meta = {\n${lines}\n  }\n}\n`);
  expect(res.status, res.text).toBe(200);
  return res.body.Meta;
}

async function failure(hcl: string, extra: Json = {}): Promise<string> {
  const res = await parse(hcl, extra);
  expect(res.status, res.text.slice(0, 500)).toBe(400);
  expect(res.text.startsWith("Failed to parse job: ")).toBe(true);
  return res.text.slice("Failed to parse job: ".length);
}

describe("regex_replace runs on Go's RE2", () => {
  it("answers a pattern that makes a backtracking engine run for ages, on 40 characters", async () => {
    const a40 = "a".repeat(40);
    const m = await meta(
      `    whole = regex_replace("${a40}", "^(a+)+$", "b")\n    miss  = regex_replace("${a40}!", "^(a+)+$", "b")\n    alt   = regex_replace("${"ab".repeat(20)}c", "(a|b|ab)*c", "-")`,
    );
    expect(m).toEqual({ whole: "b", miss: `${a40}!`, alt: "-" });
  });

  it("takes Go's syntax and refuses what Go refuses, with Go's error text", async () => {
    expect((await meta('    ci = regex_replace("Hello", "(?i)h", "J")')).ci).toBe("Jello");
    expect(await failure('job "x" {\n  meta = { v = regex_replace("ab", "a(?=b)", "x") }\n}')).toBe(
      'input.hcl:2,16-30: Error in function call; Call to function "regex_replace" failed: error parsing regexp: invalid or unsupported Perl syntax: `(?=`.',
    );
    expect(await failure('job "x" {\n  meta = { v = regex_replace("a", "(a", "x") }\n}')).toBe(
      'input.hcl:2,16-30: Error in function call; Call to function "regex_replace" failed: error parsing regexp: missing closing ): `(a`.',
    );
  });

  it("expands the replacement as Go's Regexp.Expand does", async () => {
    const m = await meta(
      [
        '    named  = regex_replace("abc-123", "(?P<word>[a-z]+)-(\\\\d+)", "$${2}_$word")',
        '    dollar = regex_replace("a", "a", "$$")',
        '    joined = regex_replace("ab", "(a)(b)", "$1x|$${1}x")',
        '    absent = regex_replace("ab", "(a)", "[$3][$nope]")',
      ].join("\n"),
    );
    // ($$ stays $$ in HCL unless a { follows.) $1x names a group "1x" (none: empty), as in Go; ${1}x is group 1 then "x".
    expect(m).toEqual({ named: "123_abc", dollar: "$", joined: "|ax", absent: "[][]b" });
  });

  it("does not replace an empty match right after a match (Go's rule; JavaScript's gives XX)", async () => {
    expect(await meta('    star = regex_replace("aaa", "a*", "X")\n    empty = regex_replace("abc", "", "-")')).toEqual({ star: "X", empty: "-a-b-c-" });
  });

  it("a failing pattern is false under can(), and validation conditions use the same engine", async () => {
    const text = `variable "name" {
  type    = string
  default = "${"a".repeat(40)}"
  validation {
    condition     = regex_replace(var.name, "^(a+)+$", "") == "" && !can(regex_replace("x", "(", ""))
    error_message = "The name must be made of a's."
  }
}
job "x" {
  meta = { name = var.name }
}
`;
    const res = await parse(text);
    expect(res.status, res.text).toBe(200);
    expect(res.body.Meta).toEqual({ name: "a".repeat(40) });
  });
});

describe("replace is cty's plain substring replacement", () => {
  it("takes /…/ literally (Nomad's replace has no pattern form) and inserts around every character for an empty substring", async () => {
    expect(await meta('    slashes = replace("a.b/./", "/./", "x")\n    empty = replace("abc", "", "-")\n    none = replace("", "", "-")')).toEqual({
      slashes: "a.bx",
      empty: "-a-b-c-",
      none: "-",
    });
  });
});

describe("the value budget", () => {
  const doubling = Array.from({ length: 23 }, (_, i) => `  a${i + 1} = "\${local.a${i}}\${local.a${i}}"`).join("\n");

  it("stops a local doubled 23 times (64 MB from 848 bytes) with a diagnostic at the local that crosses it", async () => {
    const res = await parse(`locals {\n  a0 = "xxxxxxxx"\n${doubling}\n}\njob "x" {\n  meta = { v = local.a23 }\n}\n`);
    expect(res.status).toBe(400);
    expect(res.text.length).toBeLessThan(1000);
    // a20 (line 22) is 8 Mi characters: with a1…a19 already counted it crosses the 8 Mi budget.
    expect(res.text).toMatch(
      /^Failed to parse job: input\.hcl:22,\d+-\d+: Value too large; This configuration builds more string characters and collection elements than standin allows/,
    );
  });

  it("counts values shared by reference as often as they appear", async () => {
    const lists = Array.from({ length: 30 }, (_, i) => `  l${i + 1} = [local.l${i}, local.l${i}]`).join("\n");
    const text = await failure(`locals {\n  l0 = ["x"]\n${lists}\n}\njob "x" {\n  meta = { v = jsonencode(local.l30) }\n}\n`);
    expect(text).toMatch(/^input\.hcl:\d+,\d+-\d+: Value too large; /);
  });

  it("stops templates repeated over a collection while they grow, and try() does not swallow the limit", async () => {
    const big = `  big = "\${join("", [for i in range(1000) : "0123456789abcdef"])}"`;
    const text = await failure(`locals {\n${big}\n  t = try("%{for i in range(1000)}\${local.big}%{endfor}", "small")\n}\njob "x" {\n  meta = { v = local.t }\n}\n`);
    expect(text).toMatch(/^input\.hcl:3,\d+-\d+: Value too large; /);
  });

  it("refuses a call whose result would pass 4 Mi characters before building it", async () => {
    const text = await failure(`locals {\n  lines = join("\\n", [for i in range(1000) : "x"])\n}\njob "x" {\n  meta = { v = indent(100000, local.lines) }\n}\n`);
    expect(text).toBe('input.hcl:5,16-23: Error in function call; Call to function "indent" failed: the result would be longer than standin allows (4194304 characters).');
  });

  it("leaves ordinary expansion alone", async () => {
    const m = await meta(`    v = strlen(join(",", [for i in range(1000) : format("%04d", i)]))\n    d = length(distinct([for i in range(1000) : i % 7]))`);
    expect(m).toEqual({ v: "4999", d: "7" });
  });
});

describe("the evaluation budget counts what calls read", () => {
  it("a loop over a call on a large list runs out of budget instead of running for minutes", async () => {
    const text = await failure(
      `locals {\n  big = [for i in range(1000) : "\${i}"]\n  x = [for i in range(1000) : [for j in range(1000) : sort(local.big)]]\n}\njob "x" {\n  meta = { v = length(local.x) }\n}\n`,
    );
    expect(text).toMatch(/^input\.hcl:3,\d+-\d+: Evaluation too large; /);
  });

  it("so does a loop comparing large values", async () => {
    const text = await failure(
      `locals {\n  big = [for i in range(1000) : "\${i}"]\n  x = [for i in range(1000) : [for j in range(1000) : local.big == local.big]]\n}\njob "x" {\n  meta = { v = length(local.x) }\n}\n`,
    );
    expect(text).toMatch(/^input\.hcl:3,\d+-\d+: Evaluation too large; /);
  });

  it("a slow function (yamldecode) is charged for its measured cost, so a loop over it stops after a few calls", async () => {
    const text = await failure(
      `locals {\n  doc = join("\\n", [for i in range(500) : "k\${i}: [a, b]"])\n  x = [for i in range(1000) : yamldecode(local.doc)]\n}\njob "x" {\n  meta = { v = length(local.x) }\n}\n`,
    );
    expect(text).toMatch(/^input\.hcl:3,\d+-\d+: Evaluation too large; /);
    // One call is well within the budget.
    expect((await meta("    v = length(yamldecode(local.doc))", '  doc = join("\\n", [for i in range(500) : "k${i}: [a, b]"])')).v).toBe("500");
  });

  it("a regex over a long text is charged per character", async () => {
    const text = await failure(
      `locals {\n  s = join("", [for i in range(1000) : "abcdefghabcdefghabcdefghabcdefgh"])\n}\njob "x" {\n  meta = { v = regex_replace(local.s, "[a-c]+", "-") }\n}\n`,
    );
    expect(text).toMatch(/^input\.hcl:5,\d+-\d+: Evaluation too large; /);
  });
});

describe("decoded documents", () => {
  it("jsondecode of 15,000 nested brackets is a diagnostic, not a 500 from an overflowed stack", async () => {
    const brackets = `${"[".repeat(15_000)}${"]".repeat(15_000)}`;
    expect(await failure(`job "x" {\n  meta = { a = jsonencode(jsondecode("${brackets}")) }\n}\n`)).toMatch(
      /^input\.hcl:2,27-\d+: Error in function call; Call to function "jsondecode" failed: the document nests more than 1000 levels deep \(standin's limit\)\.$/,
    );
    const fine = `${"[".repeat(1000)}${"]".repeat(1000)}`;
    expect((await meta(`    a = length(jsondecode("${fine}"))`)).a).toBe("1");
  });
});

describe("diagnostics are capped", () => {
  it("500 unknown arguments answer the first 100 and say more were not listed", async () => {
    const args = Array.from({ length: 500 }, (_, i) => `  a${i} = 1`).join("\n");
    const text = await failure(`job "x" {\n${args}\n}\n`);
    const lines = text.split("\n");
    expect(lines).toHaveLength(100);
    expect(lines[0]).toBe('input.hcl:2,3-5: Unsupported argument; An argument named "a0" is not expected here. Did you mean "id"?');
    expect(lines[99]).toMatch(
      /^input\.hcl:101,3-6: Unsupported argument; An argument named "a99" is not expected here\..*, and further diagnostic\(s\) not listed \(standin stops after 100\)$/,
    );
  });
});

describe("operator chains and the job-file size limit", () => {
  it("a chain of 7,000 additions (in a local and in the job) is its value, not a stack overflow", async () => {
    const chain = `${"1+".repeat(6_999)}1`;
    expect(await meta(`    n = ${chain}\n    l = local.n`, `  n = ${chain}`)).toEqual({ n: "7000", l: "7000" });
  });

  it("a million-term sum is refused by the job-file limit with a diagnostic, not a 500", async () => {
    const source = `job "x" {\n  meta = { n = ${"1+".repeat(999_999)}1 }\n}\n`;
    expect(await failure(source)).toBe(
      `input.hcl:1,1-1: Job file too large; This job file and its variables are ${source.length} bytes; standin reads at most ${MAX_JOB_SOURCE_BYTES} bytes.`,
    );
  });

  it("reads a file of exactly 128 KiB and refuses one byte more (variables count too)", async () => {
    const head = 'job "x" {}\n#';
    const exact = head + "x".repeat(MAX_JOB_SOURCE_BYTES - head.length);
    expect((await parse(exact)).status).toBe(200);
    expect(await failure(`${exact}x`)).toMatch(new RegExp(`^input\\.hcl:1,1-1: Job file too large; This job file and its variables are ${MAX_JOB_SOURCE_BYTES + 1} bytes; `));
    expect(await failure(exact, { Variables: "x = 1" })).toContain(`are ${MAX_JOB_SOURCE_BYTES + 5} bytes; `);
  });

  it("decodes 500 group and task blocks and refuses the 501st, dynamic ones included, at its block", async () => {
    const groups = (n: number) => `job "x" {\n${Array.from({ length: n }, (_, i) => `  group "g${i}" {}\n`).join("")}}\n`;
    const ok = await parse(groups(500));
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    expect(ok.body.TaskGroups).toHaveLength(500);
    expect(await failure(groups(501))).toBe("input.hcl:502,16-16: Too many groups and tasks; This job file has more than 500 group and task blocks; standin decodes at most 500.");
    const dynamicTasks = `job "x" {\n  group "g" {\n    dynamic "task" {\n      for_each = range(600)\n      labels   = ["t\${task.value}"]\n      content {\n        driver = "exec"\n      }\n    }\n  }\n}\n`;
    expect(await failure(dynamicTasks)).toMatch(/Too many groups and tasks; This job file has more than 500 group and task blocks/);
  });

  it("a request declaring more bytes than a job file within the limit can take is refused before its body is parsed", async () => {
    shared ??= await createStandin();
    // Not even JSON: the answer shows the body was never parsed.
    const body = `{${"x".repeat(7 * MAX_JOB_SOURCE_BYTES)}`;
    const res = await call(shared.scheduler, "POST", "/v1/jobs/parse", body, { "content-length": String(body.length) });
    expect(res.status).toBe(400);
    expect(res.text).toBe(
      `Failed to parse job: input.hcl:1,1-1: Job file too large; This request is ${body.length} bytes, more than a job file of at most ${MAX_JOB_SOURCE_BYTES} bytes with its variables can take.`,
    );
    // A body within the bound is read as before (here: Go's JSON syntax error).
    const small = `{${"x".repeat(100)}`;
    expect((await call(shared.scheduler, "POST", "/v1/jobs/parse", small, { "content-length": String(small.length) })).text).not.toContain("Job file too large");
  });

  it("a heredoc of a thousand indented lines keeps every line, the indentation cut once", async () => {
    const body = Array.from({ length: 1000 }, (_, i) => `${i % 2 ? "        " : "      "}line ${i}`).join("\n");
    const m = await meta(`    v = <<-EOT\n${body}\n    EOT`);
    expect(m.v?.split("\n")).toHaveLength(1001);
    expect(m.v?.startsWith("line 0\n  line 1\nline 2\n")).toBe(true);
  });
});
