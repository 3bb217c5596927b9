/**
 * A parity report in the dashboard, in a real browser (Debian's chromium
 * through playwright-core): `standin ui --parity` (here its viewer, in
 * process) shows the exchanges with the differing ones marked and, for the
 * one chosen, both answers side by side; a report dropped on the tape
 * viewer of a running standin opens the same way. Every wait is for a DOM
 * condition, never for time.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parity } from "../../src/parity/compare/index.js";
import { startTapeViewer, type TapeViewer } from "../../src/ui/viewer.js";
import { recordDifferingRun } from "../parity/recorded-runs.js";
import { HAVE_CHROMIUM, launch, openPage, screenshot } from "./browser.js";

describe.skipIf(!HAVE_CHROMIUM)("a parity report in the dashboard", () => {
  let browser: Browser;
  let page: Page;
  let viewer: TapeViewer;
  const errors: string[] = [];

  beforeAll(async () => {
    const report = await parity(await recordDifferingRun());
    viewer = await startTapeViewer({ parity: { report, name: "parity.json" }, port: 0 });
    browser = await launch();
    page = await openPage(browser, errors);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
  });

  it("marks each differing exchange and shows a chosen one's two answers side by side", async () => {
    await page.goto(viewer.url);
    await page.waitForSelector("#parity-summary");
    expect(await page.textContent("#parity-summary")).toBe("parity: 16 exchanges, 8 routes, 17 differences in 5 routes, 2 not emulated");
    // Exchanges #3 (order), #4 (fields), #7, #8 (headers), #9 (status), #10, #11 (routes), #13, #14 (list elements), #15 (a time), #16 (the event stream) differ.
    const marked = await page.$$eval(".parity-row.differs", (rows) => rows.map((row) => Number(row.getAttribute("data-seq"))));
    expect(marked).toEqual([3, 4, 7, 8, 9, 10, 11, 13, 14, 15, 16]);
    expect(await page.locator(".parity-mark.differs").count()).toBe(11);

    await page.click('.parity-row[data-seq="4"]');
    await page.waitForSelector("#parity-detail h3:has-text('#4')");
    const upstream = JSON.parse((await page.textContent("#parity-upstream .parity-answer"))!);
    const standin = JSON.parse((await page.textContent("#parity-standin .parity-answer"))!);
    expect([upstream.Priority, standin.Priority]).toEqual([70, 50]);
    expect([upstream.NodePool, standin.NodePool]).toEqual([undefined, "default"]);
    expect(await page.$$eval("#parity-detail .parity-differences li code", (codes) => codes.map((c) => c.textContent))).toEqual([
      "$.Priority",
      "$.TaskGroups[0].Tasks[0].Driver",
      "$.Version",
      "$.Extra",
      "$.NodePool",
    ]);
    await screenshot(page, "parity-report");
    expect(errors).toEqual([]);
  });
});
