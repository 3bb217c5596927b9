/**
 * The dashboard's side of a parity report: `standin ui --parity` (its
 * viewer in process, then the CLI's refusals) serves the report at
 * /ui/api/parity and names it in /ui/api/info; a file that is not a report
 * is refused in one line before anything listens. (What the page shows of
 * it, in a browser: test/ui-browser/parity-report.test.ts.)
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlError } from "../../src/control/errors.js";
import { type ParityReport, parity } from "../../src/parity/compare/index.js";
import { startTapeViewer, type TapeViewer } from "../../src/ui/viewer.js";
import { CLI_TEST_TIMEOUT_MS, runCli } from "../support/cli.js";
import { recordDifferingRun } from "./recorded-runs.js";

let report: ParityReport;
let viewer: TapeViewer;
beforeAll(async () => {
  report = await parity(await recordDifferingRun());
  viewer = await startTapeViewer({ parity: { report, name: "parity.json" }, port: 0 });
});
afterAll(async () => {
  await viewer?.close();
});

describe("a parity report in the dashboard", () => {
  it("is named in /ui/api/info and served as written at /ui/api/parity", async () => {
    expect(await (await fetch(`${viewer.url}/api/info`)).json()).toEqual({ mode: "tape", tape: null, parity: { name: "parity.json" } });
    const served = await fetch(`${viewer.url}/api/parity`);
    expect(served.status).toBe(200);
    expect(await served.json()).toEqual(JSON.parse(JSON.stringify(report)));
  });

  it("is refused when it is not a report", async () => {
    await expect(startTapeViewer({ parity: { report: { format: "standin-recording" }, name: "x.json" }, port: 0 })).rejects.toBeInstanceOf(ControlError);
  });

  it("standin ui refuses a file that is not a report, and no file at all, in one line", { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-parity-ui-"));
    const file = join(dir, "not-a-report.json");
    writeFileSync(file, '{"hello":"world"}');
    const notReport = await runCli(["ui", "--parity", file, "--port", "0"]);
    expect(notReport.code).toBe(1);
    expect(notReport.stderr).toMatch(/^standin ui: .*not-a-report\.json: not a parity report \(standin parity --json\): [^\n]+\n$/);
    const nothing = await runCli(["ui", "--port", "0"]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toBe("standin ui: give a tape file, or --parity <report.json>\n");
  });
});
