/**
 * An upstream that differs on purpose (a node:http server in front of a
 * standin, changing chosen answers) must yield exactly those differences,
 * each reported once, at the right exchange and path; waivers remove
 * exactly the ones they cover.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { formatReport, parity } from "../../src/parity/compare/index.js";
import type { Recording } from "../../src/parity/recording.js";
import { recordDifferingRun } from "./recorded-runs.js";

let recording: Recording;
beforeAll(async () => {
  recording = await recordDifferingRun();
});

/** A difference as the assertions name it. */
const named = (d: { seq: number; kind: string; at: string; waived?: string }) => `#${d.seq} ${d.kind} ${d.at}${d.waived ? " (waived)" : ""}`;

describe("standin parity against an upstream that differs on purpose", () => {
  it("reports exactly the changes made, each once, at its exchange and path", async () => {
    const report = await parity(recording);
    expect(report.differences.map(named)).toEqual([
      "#3 order $",
      "#4 value $.Priority",
      "#4 value $.TaskGroups[0].Tasks[0].Driver",
      "#4 type $.Version",
      "#4 missing $.Extra",
      "#4 extra $.NodePool",
      "#7 header headers.content-type",
      "#7 header headers.x-consul-knownleader",
      "#8 header headers.x-consul-index",
      "#9 status status",
      "#10 not-emulated route",
      "#11 unknown-path route",
    ]);
    const priority = report.differences.find((d) => d.at === "$.Priority")!;
    expect(priority).toMatchObject({ route: "GET /v1/job/:job_id+", recorded: 70, standin: 50 });
    expect(report.differences.find((d) => d.at === "headers.x-consul-index")!.note).toMatch(/moves differently/);
    expect(report.summary).toEqual({ exchanges: 12, routes: 7, differences: 10, differingRoutes: 4, notEmulated: 2, waived: 0, skipped: 0 });
    expect(report.ok).toBe(false);
  });

  it("keeps both answers of a differing exchange, the statuses alone of the others", async () => {
    const report = await parity(recording);
    const differing = report.exchanges.find((e) => e.seq === 4)!;
    expect(differing.differences).toBe(5);
    expect(JSON.parse((differing.recorded as { body: { text: string } }).body.text).Priority).toBe(70);
    expect(JSON.parse((differing.standin as { body: { text: string } }).body.text).Priority).toBe(50);
    expect(report.exchanges.find((e) => e.seq === 5)).toMatchObject({ differences: 0, recorded: { status: 200 }, standin: { status: 200 } });
    expect(report.exchanges.find((e) => e.seq === 5)!.standin).toEqual({ status: 200 });
  });

  it("prints a summary line and each difference under its route", async () => {
    const text = formatReport(await parity(recording));
    const lines = text.split("\n");
    expect(lines[0]).toBe("parity: 12 exchanges, 7 routes, 10 differences in 4 routes, 2 not emulated");
    expect(lines).toContain("scheduler GET /v1/job/:job_id+  (2 exchanges, 5 differences)");
    expect(lines).toContain("  #4 GET /v1/job/a: $.Priority: upstream 70, standin 50");
    expect(lines).toContain('  #4 GET /v1/job/a: $.Version type: upstream "0", standin 0 (string upstream, number in standin)');
    expect(lines).toContain('  #7 GET /v1/kv/x: headers.content-type: upstream "text/plain", standin "application/json"');
    expect(lines).toContain("  #9 PUT /v1/kv/y: status: upstream 201, standin 200");
  });

  it("waivers remove exactly the differences they cover, and the run passes once all are", async () => {
    const some = [
      { route: "GET /v1/job/:job_id+", path: "$.TaskGroups[*].Tasks[*].Driver", reason: "the test driver" },
      { route: "registry GET /v1/kv/:key*", path: "headers.*", reason: "headers we do not read" },
    ];
    const report = await parity(recording, { waivers: some });
    expect(report.differences.filter((d) => d.waived).map(named)).toEqual([
      "#4 value $.TaskGroups[0].Tasks[0].Driver (waived)",
      "#7 header headers.content-type (waived)",
      "#7 header headers.x-consul-knownleader (waived)",
      "#8 header headers.x-consul-index (waived)",
    ]);
    expect(report.summary).toMatchObject({ differences: 6, waived: 4, differingRoutes: 3, notEmulated: 2 });
    expect(report.ok).toBe(false);

    const all = [...some, { route: "**", path: "**", reason: "everything else" }];
    const passing = await parity(recording, { waivers: all });
    expect(passing.summary).toMatchObject({ differences: 0, waived: 12, notEmulated: 0 });
    expect(passing.ok).toBe(true);
  });

  it("refuses a waiver file that is not a list of {route, path, reason}", async () => {
    await expect(parity(recording, { waivers: [{ route: "GET /v1/jobs" }] })).rejects.toThrow(/not a waiver list/);
  });
});
