/**
 * Tapes recorded by earlier code replay against today's with zero
 * divergences: a restructure (issue 18) or any change meant to keep
 * behaviour must not move a byte of these answers or the final state.
 *
 * multi-service.json: recorded over real ports, before the scheduler was
 * split into folders, by record-multi-service.mjs (all three services, the
 * control API's clock, actions and fixtures, a woken blocking read of each
 * registry and scheduler, gzip answers, refusals of each service).
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { formatReport, replayTape } from "../../src/replay.js";

const tape = async (name: string) => JSON.parse(await readFile(new URL(`./${name}`, import.meta.url), "utf8")) as Record<string, any>;

describe("recorded tapes", () => {
  it("multi-service.json replays with zero divergences and the recorded final state", async () => {
    const document = await tape("multi-service.json");
    const report = await replayTape(document);
    expect(formatReport(report)).toContain("0 divergences");
    expect(report.divergences).toEqual([]);
    expect(report.requests).toBe(document.entries.filter((e: { kind: string }) => e.kind === "request").length);
    expect(report.stateHash.actual).toBe(report.stateHash.expected);
    expect(report.ok).toBe(true);
  });
});
