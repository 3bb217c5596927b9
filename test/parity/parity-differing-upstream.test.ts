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
      "#13 missing $[0]",
      "#13 value $[2].Priority",
      "#14 extra $[0]",
      "#15 value $.SubmitTime",
      "#16 missing stream[2]",
      "#16 extra stream[2]",
      "#16 value stream[3].Payload.Job.Status",
    ]);
    const priority = report.differences.find((d) => d.at === "$.Priority")!;
    expect(priority).toMatchObject({ route: "GET /v1/job/:job_id+", recorded: 70, standin: 50 });
    expect(report.differences.find((d) => d.at === "headers.x-consul-index")!.note).toMatch(/moves differently/);
    expect(report.summary).toEqual({ exchanges: 16, routes: 8, differences: 17, differingRoutes: 5, notEmulated: 2, waived: 0, skipped: 0 });
    expect(report.settings).toEqual({ timeTolerance: "1s", timeToleranceMs: 1000 });
    expect(report.ok).toBe(false);
  });

  it("matches list elements by identity: one insertion is one missing element, a change after it is at the element's own place", async () => {
    const report = await parity(recording);
    const at13 = report.differences.filter((d) => d.seq === 13);
    expect(at13.map((d) => [d.kind, d.at, d.kind === "missing" ? (d.recorded as { ID: string }).ID : d.recorded, d.standin])).toEqual([
      ["missing", "$[0]", "ghost", undefined],
      ["value", "$[2].Priority", 60, 50],
    ]);
    expect(report.differences.find((d) => d.seq === 14)).toMatchObject({ kind: "extra", at: "$[0]", standin: { Key: "x" } });
  });

  it("compares the event stream by its events: batching and heartbeats aside, each changed event once at its place", async () => {
    const report = await parity(recording);
    const stream = report.differences.filter((d) => d.seq === 16);
    expect(stream.map((d) => `${d.kind} ${d.at}`)).toEqual(["missing stream[2]", "extra stream[2]", "value stream[3].Payload.Job.Status"]);
    expect(stream[0]).toMatchObject({ route: "GET /v1/event/stream", recorded: { Topic: "Job", Type: "JobDeregistered", Key: "ghost" } });
    expect(stream[1]).toMatchObject({ standin: { Topic: "Evaluation", Type: "JobRegistered", FilterKeys: ["a", ""] } });
    expect(stream[2]).toMatchObject({ recorded: "running", standin: "pending" });
    // The upstream sent every event in a frame of its own and every heartbeat twice; standin batches by index.
    const recorded = report.exchanges.find((e) => e.seq === 16)!.recorded as { body: { text: string } };
    const standin = report.exchanges.find((e) => e.seq === 16)!.standin as { body: { text: string } };
    const frames = (text: string) => text.split("\n").filter((line) => line.startsWith('{"Index"') || line.startsWith('{"Events"')).length;
    expect(frames(recorded.body.text)).toBeGreaterThan(frames(standin.body.text));
    // A stream's paths are waived as a body's are.
    const waived = await parity(recording, { waivers: [{ route: "GET /v1/event/stream", path: "stream[*].Payload.**", reason: "payloads we do not read" }] });
    expect(waived.differences.filter((d) => d.waived).map(named)).toEqual(["#16 value stream[3].Payload.Job.Status (waived)"]);
  });

  it("takes instants within --time-tolerance as the same", async () => {
    const wider = await parity(recording, { timeToleranceMs: 2000 });
    expect(wider.settings).toEqual({ timeTolerance: "2s", timeToleranceMs: 2000 });
    expect(wider.differences.filter((d) => d.at === "$.SubmitTime")).toEqual([]);
    expect(wider.summary.differences).toBe(16);
    // Narrower: the times standin and the upstream agree on exactly (the same clock) still agree.
    const exact = await parity(recording, { timeToleranceMs: 0 });
    expect(exact.differences.map(named)).toEqual((await parity(recording)).differences.map(named));
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
    expect(lines[0]).toBe("parity: 16 exchanges, 8 routes, 17 differences in 5 routes, 2 not emulated");
    expect(lines).toContain("scheduler GET /v1/job/:job_id+  (3 exchanges, 6 differences)");
    expect(lines).toContain('  #16 GET /v1/event/stream?index=1: stream[3].Payload.Job.Status: upstream "running", standin "pending"');
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
    expect(report.summary).toMatchObject({ differences: 13, waived: 4, differingRoutes: 5, notEmulated: 2 });
    expect(report.ok).toBe(false);

    const all = [...some, { route: "**", path: "**", reason: "everything else" }];
    const passing = await parity(recording, { waivers: all });
    expect(passing.summary).toMatchObject({ differences: 0, waived: 19, notEmulated: 0 });
    expect(passing.ok).toBe(true);
  });

  it("refuses a waiver file that is not a list of {route, path, reason}", async () => {
    await expect(parity(recording, { waivers: [{ route: "GET /v1/jobs" }] })).rejects.toThrow(/not a waiver list/);
  });
});
