/**
 * The bench's judging of the virtual-time rows (bench/lib/report.mjs): a
 * report is only as good as its met? column, so the rules are pinned here on
 * made-up measurements (nothing is timed).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

type Row = { measure: string; met: boolean | null; ratio: number | null; cells: string[] };
type Report = { buildRows(measured: Record<string, unknown>, settings: Record<string, unknown>): Row[]; verdict(rows: Row[]): string };

// A path held in a variable: the bench is plain JavaScript, outside the typed program.
const REPORT = fileURLToPath(new URL("../../bench/lib/report.mjs", import.meta.url));
const { buildRows, verdict } = (await import(REPORT)) as Report;

const MiB = 2 ** 20;
const settings = { fanout: { labels: { reap: { label: "reaping", unit: "service", units: "services" } }, limitSeconds: 30 } };

describe("fan-out rows", () => {
  it("judge the time per object at each larger size against the smallest (≤ 2×)", () => {
    const fanout = {
      reap: [
        { n: 1_000, advanceMs: 10, setupMs: 1 },
        { n: 10_000, advanceMs: 150, setupMs: 1 },
        { n: 100_000, advanceMs: 3_000, setupMs: 1 },
      ],
    };
    const rows = buildRows({ fanout }, settings);
    expect(rows.map((r) => r.met)).toEqual([true, true, false]);
    expect(rows.map((r) => r.ratio)).toEqual([1, 1.5, 3]);
  });

  it("count a case stopped at its limit as a miss, even the smallest, and skip nothing silently", () => {
    const fanout = {
      reap: [
        { n: 1_000, timedOut: true, limitSeconds: 30, phase: "setup" },
        { n: 10_000, skipped: true, after: 1_000 },
      ],
    };
    const rows = buildRows({ fanout }, settings);
    expect(rows.map((r) => r.met)).toEqual([false, null]);
    expect(rows[0]!.cells[1]).toBe("> 30 s (stopped in setup)");
    expect(rows[1]!.cells[1]).toBe("not run (1k was stopped)");
  });
});

describe("churn rows", () => {
  const churn = (warmMb: number, endMb: number) => ({
    minutes: 30,
    warmMinutes: 5,
    warmRssBytes: warmMb * MiB,
    endRssBytes: endMb * MiB,
    growthMbPerMinute: 0,
    requests: 10,
    failures: 0,
    virtualNow: "2026-01-01T11:00:00Z",
    counts: { allocations: 1, evaluations: 1, deployments: 1, jobs: 1 },
  });

  it("hold RSS at the end within ±50 MB of RSS after the warm-up", () => {
    const judged = (warm: number, end: number) => buildRows({ churn: churn(warm, end) }, settings).find((r) => r.measure.startsWith("churn: RSS change"))!.met;
    expect(judged(200, 249)).toBe(true);
    expect(judged(200, 151)).toBe(true);
    expect(judged(200, 251)).toBe(false);
    expect(judged(200, 149)).toBe(false);
  });

  it("report a churn that stopped on an unanswered request as a miss", () => {
    const rows = buildRows({ churn: { ...churn(200, 200), stoppedBy: "request 7 (PUT /v1/jobs): no answer within 30000 ms" } }, settings);
    expect(rows.at(-1)!.met).toBe(false);
  });
});

describe("stall rows", () => {
  it("judge each case's p99 and name the largest single stall over all cases", () => {
    const stalls = {
      quick: { label: "a small body", p50: 1, p99: 4, max: 9, samples: 50, detail: { status: 200 } },
      slow: { label: "a big body", p50: 1, p99: 120, max: 4_000, samples: 50, detail: { status: 400 } },
      frozen: { label: "a frozen one", p50: null, p99: null, max: null, samples: 0, detail: { timedOut: true, limitSeconds: 60, during: "preparing" } },
    };
    const rows = buildRows({ stalls }, settings);
    expect(rows.filter((r) => r.met !== null).map((r) => r.met)).toEqual([true, false, false]);
    expect(verdict(rows)).toContain("Largest stall one request caused: 4000.0 ms (slow;");
  });
});
