/**
 * `standin fixtures check` makes every check `standin start` makes, and says
 * what `start` says: each fixture `start` refuses fails the check with exit 1
 * and the very line `start` prints, naming the file. Both run as real child
 * processes (`start` on ports 0; it must exit before listening).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { BIN, CLI_TEST_TIMEOUT_MS, FREE_PORTS } from "./support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "standin-fixtures-check-"));
writeFileSync(join(dir, "bad.nomad.hcl"), 'job "web" {\n  group "web" {\n    cnt = 1\n  }\n}\n');

/** Runs the CLI to its end; a `start` that wrongly came up is killed at the bound (and fails the test by its exit code). */
async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], { timeout: CLI_TEST_TIMEOUT_MS / 2 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number | null; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function fixture(name: string, document: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(document));
  return file;
}

const SESSION_ID = "8f0c5a52-93c0-4f4b-8c5e-1a9f0f6d2a11";
const job = (count: number) => ({
  ID: "web",
  Type: "service",
  TaskGroups: [{ Name: "web", Count: count, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx" } }] }],
});

/** Each fixture `start` refuses (issue 19), and the problem its message must give after the file name. */
const REFUSED: Array<{ name: string; document: unknown; problem: string }> = [
  { name: "unknown-action.json", document: { timeline: [{ at: "30s", do: "no-such-action" }] }, problem: 'timeline[0]: unknown action "no-such-action"' },
  { name: "bad-duration.json", document: { timeline: [{ at: "soon", do: "node-down", node: "client-1" }] }, problem: 'timeline[0].at: time: invalid duration "soon"' },
  { name: "negative-count.json", document: { scheduler: { jobs: [job(-1)] } }, problem: "scheduler.jobs[0]: " },
  {
    name: "bad-hcl-job.json",
    document: { scheduler: { jobs: [{ hcl: "bad.nomad.hcl" }] } },
    problem: 'scheduler.jobs[0]: bad.nomad.hcl:3,5-8: Unsupported argument; An argument named "cnt" is not expected here. Did you mean "count"?',
  },
  {
    name: "kv-missing-session.json",
    document: { registry: { kv: [{ Key: "leader", Value: "", Session: SESSION_ID }] } },
    problem: `registry.kv[0].Session: no session "${SESSION_ID}"`,
  },
  // Files are read only from under the fixture file's directory (issue 30).
  {
    name: "hcl-outside.json",
    document: { scheduler: { jobs: [{ hcl: "../outside.nomad.hcl" }] } },
    problem: 'scheduler.jobs[0].hcl: "../outside.nomad.hcl" is not under the fixture file\'s directory (',
  },
  {
    name: "jwks-absolute.json",
    document: { echo: { schemes: { identity_platform: { jwksFile: "/etc/passwd" } } } },
    problem: 'echo.schemes.identity_platform.jwksFile: "/etc/passwd" is not under the fixture file\'s directory (',
  },
  { name: "short-ttl.json", document: { registry: { sessions: [{ Name: "lock", TTL: "1s" }] } }, problem: "registry.sessions[0]: Invalid Session TTL" },
  { name: "community-namespace.json", document: { registry: { sessions: [{ Name: "lock", Namespace: "team" }] } }, problem: "registry.sessions[0].Namespace: " },
];

/** The one line a failed run printed (and that it printed only one). */
function onlyLine(stderr: string): string {
  const [line, ...rest] = stderr.split("\n");
  expect(rest).toEqual([""]);
  return line!;
}

/**
 * One `fixtures check --each` over every refused file (each checked on its own, as its own `check` would be):
 * a child process per file made this suite slow, and `--each` runs the very same check per file.
 */
let refusedChecked: Promise<{ code: number | null; stdout: string; lines: string[] }> | undefined;
function checkEachRefused() {
  refusedChecked ??= run(["fixtures", "check", "--each", ...REFUSED.map(({ name, document }) => fixture(name, document))]).then((r) => ({
    code: r.code,
    stdout: r.stdout,
    lines: r.stderr.split("\n"),
  }));
  return refusedChecked;
}

describe("standin fixtures check", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("fails every refused fixture, each on its own, with exit 1, no ok line and one line per file", async () => {
    const check = await checkEachRefused();
    expect(check.code).toBe(1);
    expect(check.stdout).toBe("");
    expect(check.lines).toHaveLength(REFUSED.length + 1);
    expect(check.lines.at(-1)).toBe("");
  });

  it.each(REFUSED)("fails $name with exit 1 and the line start prints", async ({ name, document, problem }) => {
    const file = fixture(name, document);
    const [check, start] = await Promise.all([checkEachRefused(), run(["start", ...FREE_PORTS, "--fixture", file])]);
    expect(start.code).toBe(1);
    const lines = check.lines.filter((l) => l.startsWith(`standin: ${file}: `));
    expect(lines).toHaveLength(1);
    const line = lines[0]!;
    expect(line.startsWith(`standin: ${file}: ${problem}`)).toBe(true);
    expect(onlyLine(start.stderr)).toBe(line);
  });

  it("passes every shipped fixture, together and each on its own", async () => {
    const shipped = readdirSync("fixtures")
      .filter((f) => f.endsWith(".json"))
      .map((f) => join("fixtures", f));
    expect(shipped.length).toBeGreaterThan(1);
    const expected = shipped.map((f) => `ok ${f}\n`).join("");
    expect(await run(["fixtures", "check", ...shipped])).toEqual({ code: 0, stdout: expected, stderr: "" });
    expect(await run(["fixtures", "check", "--each", ...shipped])).toEqual({ code: 0, stdout: expected, stderr: "" });
  });

  it("checks several files as start applies them, in order, and names the file at fault", async () => {
    const base = fixture("base.json", { registry: { sessions: [{ ID: SESSION_ID, Name: "lock", TTL: "30s" }] } });
    const overlay = fixture("overlay.json", { registry: { kv: [{ Key: "leader", Value: "", Session: SESSION_ID }] } });
    const badTimeline = fixture("bad-timeline.json", { timeline: [{ at: "10s", do: "no-such-action" }] });

    // The overlay's KV entry names the base's session: together, in this order, they start.
    expect(await run(["fixtures", "check", base, overlay])).toEqual({ code: 0, stdout: `ok ${base}\nok ${overlay}\n`, stderr: "" });

    // The other way round (or the overlay alone), the session is not there yet when the entry is made.
    const [reversed, reversedStart] = await Promise.all([run(["fixtures", "check", overlay, base]), run(["start", ...FREE_PORTS, "--fixture", overlay, "--fixture", base])]);
    expect(reversed.code).toBe(1);
    const line = onlyLine(reversed.stderr);
    expect(line.startsWith(`standin: ${overlay}: registry.kv[0].Session: no session`)).toBe(true);
    expect(reversedStart.code).toBe(1);
    expect(onlyLine(reversedStart.stderr)).toBe(line);

    const each = await run(["fixtures", "check", "--each", base, overlay]);
    expect(each.code).toBe(1);
    expect(each.stdout).toBe(`ok ${base}\n`);
    expect(onlyLine(each.stderr)).toBe(line);

    // A later file's timeline is named by its file, not by its place in the list.
    const [third, thirdStart] = await Promise.all([
      run(["fixtures", "check", base, overlay, badTimeline]),
      run(["start", ...FREE_PORTS, "--fixture", base, "--fixture", overlay, "--fixture", badTimeline]),
    ]);
    expect(third.code).toBe(1);
    const thirdLine = onlyLine(third.stderr);
    expect(thirdLine.startsWith(`standin: ${badTimeline}: timeline[0]: unknown action "no-such-action"`)).toBe(true);
    expect(onlyLine(thirdStart.stderr)).toBe(thirdLine);
  });

  it("reports every file that cannot be read or validated, each on its line", async () => {
    const missing = join(dir, "missing.json");
    const notJson = join(dir, "not-json.json");
    writeFileSync(notJson, "{ nope");
    const res = await run(["fixtures", "check", missing, notJson]);
    expect(res.code).toBe(1);
    const lines = res.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(`standin: cannot read ${missing}: ENOENT: no such file or directory`);
    expect(lines[1]!.startsWith(`standin: ${notJson}: not valid JSON: `)).toBe(true);
  });
});
