/**
 * `standin replay` through the CLI, with tapes tampered from the recorded
 * test/tapes/multi-service.json: a divergent answer is shown where it first
 * differs (the byte offset, both bodies around it with control characters
 * escaped, a caret under the difference); status and header differences in
 * a plain line each. The expected windows are built here from the tape's own
 * text, independently of the code under test.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, runCli } from "./support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "standin-cli-replay-"));
const TAPE = "test/tapes/multi-service.json";

// biome-ignore lint/suspicious/noExplicitAny: a tape is JSON the tests reach into
type Json = any;

function recordedTape(): Json {
  return JSON.parse(readFileSync(TAPE, "utf8"));
}

function entry(tape: Json, seq: number): Json {
  return tape.entries.find((e: Json) => e.seq === seq);
}

/** Writes the tampered tape and replays it with the CLI. */
async function replay(tape: Json, name: string) {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(tape));
  return runCli(["replay", file]);
}

/** The report's lines from the first divergence's heading on. */
function firstDivergence(stdout: string): string[] {
  const lines = stdout.trimEnd().split("\n");
  const heading = lines.findIndex((l) => /divergences?; the first:$/.test(l));
  expect(heading).toBeGreaterThan(0);
  return lines.slice(heading + 1);
}

/** The window the report shows: `…` where the body goes on, ASCII text with newlines as `\n`. */
function window(text: string, at: number): string {
  const from = Math.max(0, at - 40);
  const escaped = (s: string) => s.replaceAll("\n", "\\n");
  return `${from > 0 ? "…" : ""}${escaped(text.slice(from, at + 40))}${at + 40 < text.length ? "…" : ""}`;
}

function caretUnder(text: string, at: number): string {
  const from = Math.max(0, at - 40);
  const before = `${from > 0 ? "…" : ""}${text.slice(from, at).replaceAll("\n", "\\n")}`;
  return `${" ".repeat(16 + before.length)}^`;
}

describe("standin replay", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("replays the recorded tape with no divergence (exit 0)", async () => {
    const res = await runCli(["replay", TAPE]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^replayed \d+ entries \(\d+ requests\)\n0 divergences; state hash \S+ matches\n$/);
  });

  it("shows where a text body first differs: the offset, both bodies around it (newlines escaped) and a caret", async () => {
    const tape = recordedTape();
    const target = entry(tape, 55); // echo's 400 for a wrong API key: JSON over several lines
    const actual: string = target.response.body.text;
    const at = actual.indexOf("not valid") + "not va".length;
    const expected = `${actual.slice(0, at)}I${actual.slice(at + 1)}`;
    target.response.body.text = expected;
    const res = await replay(tape, "text-body.json");
    expect(res.code).toBe(1);
    const lines = firstDivergence(res.stdout);
    expect(lines.slice(0, 4)).toEqual([
      `  #55 echo POST /echo?key=wrong: body differs at byte ${at} (${target.response.body.bytes} bytes expected, ${target.response.body.bytes} now)`,
      `      expected  ${window(expected, at)}`,
      `      now       ${window(actual, at)}`,
      caretUnder(actual, at),
    ]);
    expect(lines[1]).toContain("\\n");
  });

  it("escapes other control characters as \\xNN", async () => {
    const tape = recordedTape();
    const target = entry(tape, 53); // '{"message":"hi"}'
    expect(target.response.body.text).toBe('{"message":"hi"}');
    target.response.body.text = '{"message":"h\u0001"}';
    const res = await replay(tape, "control-character.json");
    expect(res.code).toBe(1);
    expect(firstDivergence(res.stdout).slice(0, 4)).toEqual([
      "  #53 echo POST /echo?key=test-api-key: body differs at byte 13 (16 bytes expected, 16 now)",
      '      expected  {"message":"h\\x01"}',
      '      now       {"message":"hi"}',
      `${" ".repeat(16 + 13)}^`,
    ]);
  });

  it("shows a gzip body's difference unzipped", async () => {
    const tape = recordedTape();
    const target = entry(tape, 2); // GET /v1/jobs, sent gzipped
    const actual = gunzipSync(Buffer.from(target.response.body.base64, "base64")).toString("utf8");
    const at = actual.indexOf('"ID":"web"') + '"ID":"we'.length;
    const expected = `${actual.slice(0, at)}B${actual.slice(at + 1)}`;
    const zipped = gzipSync(expected);
    target.response.body = { base64: zipped.toString("base64"), bytes: zipped.length };
    const res = await replay(tape, "gzip-body.json");
    expect(res.code).toBe(1);
    const lines = firstDivergence(res.stdout);
    expect(lines[0]).toMatch(
      new RegExp(
        `^ {2}#2 scheduler GET /v1/jobs: body differs \\(${zipped.length} bytes expected, \\d+ now, gzip\\); unzipped, at byte ${at} \\(${actual.length} bytes expected, ${actual.length} now\\)$`,
      ),
    );
    expect(lines.slice(1, 4)).toEqual([`      expected  ${window(expected, at)}`, `      now       ${window(actual, at)}`, caretUnder(actual, at)]);
  });

  it("shows a body the tape kept as a hash by the full copy of it the tape holds", async () => {
    const tape = recordedTape();
    const kept = entry(tape, 55).response.body; // kept in full
    const hashed = entry(tape, 54); // '{"message":"hi"}', kept as the hash of #53's body
    expect(hashed.response.body.sha256).toBeDefined();
    hashed.response.body = { sha256: createHash("sha256").update(kept.text).digest("hex"), bytes: kept.bytes };
    const res = await replay(tape, "hashed-body.json");
    expect(res.code).toBe(1);
    const lines = firstDivergence(res.stdout);
    const actual = '{"message":"hi"}';
    expect(lines.slice(0, 4)).toEqual([
      `  #54 echo POST /echo?key=test-api-key: body differs at byte 1 (${kept.bytes} bytes expected, ${actual.length} now)`,
      `      expected  ${window(kept.text, 1)}`,
      `      now       ${window(actual, 1)}`,
      caretUnder(actual, 1),
    ]);
  });

  it("says a status or header difference plainly, one line each", async () => {
    const tape = recordedTape();
    const target = entry(tape, 53); // echo's 200, JSON
    const recorded = target.response.headers["content-type"];
    expect(recorded).toMatch(/^application\/json/);
    target.response.status = 201;
    target.response.headers["content-type"] = "text/plain";
    target.response.headers["x-recorded-only"] = "1";
    const res = await replay(tape, "status-headers.json");
    expect(res.code).toBe(1);
    const lines = firstDivergence(res.stdout);
    const where = "  #53 echo POST /echo?key=test-api-key: ";
    expect(lines).toContain(`${where}status 201 expected, 200 now`);
    expect(lines).toContain(`${where}header content-type: "text/plain" expected, ${JSON.stringify(recorded)} now`);
    expect(lines).toContain(`${where}header x-recorded-only: "1" expected, none now`);
    // The body is the same: nothing said about it.
    expect(lines.filter((l) => l.includes("body differs"))).toEqual([]);
  });
});
