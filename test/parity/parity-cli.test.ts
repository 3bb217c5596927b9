/**
 * `standin parity` through the CLI (the built dist/, as users run it): the
 * summary and report on stdout, the JSON report with --json, and the exit
 * status — 0 when nothing differs beyond the waivers, 1 when something
 * does, 2 for a bad recording, waiver file or usage.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, runCli } from "../support/cli.js";
import { recordDifferingRun, recordSuite, WORLD } from "./recorded-runs.js";

const dir = mkdtempSync(join(tmpdir(), "standin-parity-cli-"));
const file = (name: string, document: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof document === "string" ? document : JSON.stringify(document));
  return path;
};

let same: string;
let differing: string;
let world: string;
beforeAll(async () => {
  same = file("same.recording.json", await recordSuite());
  differing = file("differing.recording.json", await recordDifferingRun());
  world = file("world.json", { ...WORLD, seed: 2 });
});

describe("standin parity", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("exits 0 when nothing differs", async () => {
    const res = await runCli(["parity", same, "--fixture", world]);
    expect(res.stderr).toBe("");
    expect(res.stdout).toMatch(/^parity: 19 exchanges, 13 routes, 0 differences in 0 routes, 0 not emulated\n/);
    expect(res.code).toBe(0);
  });

  it("exits 1 when something differs, and writes the JSON report", async () => {
    const json = join(dir, "report.json");
    const res = await runCli(["parity", differing, "--json", json]);
    expect(res.code).toBe(1);
    expect(res.stdout.split("\n")[0]).toBe("parity: 16 exchanges, 8 routes, 17 differences in 5 routes, 2 not emulated");
    const report = JSON.parse(readFileSync(json, "utf8"));
    expect(report).toMatchObject({
      format: "standin-parity-report",
      version: 1,
      ok: false,
      summary: { differences: 17 },
      settings: { timeTolerance: "1s", timeToleranceMs: 1000 },
    });
    expect(report.differences).toHaveLength(19);
  });

  it("takes --time-tolerance as a Go duration, into the comparison and the report's settings", async () => {
    const json = join(dir, "tolerant.json");
    const res = await runCli(["parity", differing, "--time-tolerance", "1.5s", "--json", json]);
    expect(res.stdout.split("\n")[0]).toBe("parity: 16 exchanges, 8 routes, 16 differences in 5 routes, 2 not emulated");
    const report = JSON.parse(readFileSync(json, "utf8"));
    expect(report.settings).toEqual({ timeTolerance: "1.5s", timeToleranceMs: 1500 });
    expect(report.differences.map((d: { at: string }) => d.at)).not.toContain("$.SubmitTime");
  });

  it("exits 0 when the waivers cover every difference, and --quiet prints the summary alone", async () => {
    const waivers = file("waivers.json", [{ route: "**", path: "**", reason: "known" }]);
    const res = await runCli(["parity", differing, "--waive", waivers, "--quiet"]);
    expect(res.stdout).toBe("parity: 16 exchanges, 8 routes, 0 differences in 0 routes, 0 not emulated, 19 waived\n");
    expect(res.code).toBe(0);
  });

  it.each([
    ["a file that is not JSON", () => ["parity", file("broken.json", "{")], /is not JSON/],
    ["a tape", () => ["parity", file("tape.json", { standinTape: 1 })], /this is a tape/],
    ["a recording of another shape", () => ["parity", file("other.json", { format: "standin-recording", version: 7 })], /not a standin recording: version/],
    ["a missing file", () => ["parity", join(dir, "none.json")], /cannot read/],
    ["a bad waiver file", () => ["parity", differing, "--waive", file("w.json", { route: "x" })], /not a waiver list/],
    ["an unknown fixture", () => ["parity", differing, "--fixture", "no-such-fixture"], /no-such-fixture/],
    ["an unknown option", () => ["parity", differing, "--bogus"], /unknown option/],
    ["a time tolerance that is not a Go duration", () => ["parity", differing, "--time-tolerance", "2 seconds"], /--time-tolerance.*unknown unit/],
    ["a negative time tolerance", () => ["parity", differing, "--time-tolerance", "-1s"], /expected a duration of 0 or more/],
    ["no recording", () => ["parity"], /missing required argument/],
  ])("exits 2 for %s, saying why in one line", async (_, args, message) => {
    const res = await runCli(args());
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe("");
  });
});
