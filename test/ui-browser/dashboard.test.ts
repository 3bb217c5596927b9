/**
 * The dashboard in a real browser (Debian's chromium through playwright-core),
 * against a standin started in process with a control token, running the
 * shipped rolling-deployment scenario plus two registry sessions:
 *
 * - the live view follows the deployment and a session's expiry as the clock
 *   is moved from the page's own controls (advance, await);
 * - the timeline lists the scenario's events in virtual-time order;
 * - the state at an instant, rebuilt from the tape, equals what
 *   GET /_standin/snapshot answered at that instant (document and hash);
 * - `standin ui <tape>` opens the run's tape read-only, and a tape whose
 *   replay diverges is shown with its first divergence highlighted.
 *
 * Every wait is for a DOM condition, never for time. Screenshots of each
 * view go to test-results/ui/ (not committed) for a reviewer to look at.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashState, type StateSnapshot } from "../../src/core/snapshot.js";
import { type RunningStandin, startStandin } from "../../src/server.js";
import { BIN } from "../support/cli.js";
import { HAVE_CHROMIUM, launch, openPage, screenshot } from "./browser.js";

const TOKEN = "dashboard-test-token";
const AUTH = { Authorization: `Bearer ${TOKEN}` };

type Json = any;

describe.skipIf(!HAVE_CHROMIUM)("the dashboard in chromium", () => {
  let running: RunningStandin;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  const children: ChildProcess[] = [];
  /** Live snapshots taken between the steps, with how many tape entries there were then. */
  const taken: Array<{ entries: number; snapshot: StateSnapshot }> = [];
  const scratch = mkdtempSync(join(tmpdir(), "standin-ui-"));

  const control = async (path: string, init: RequestInit = {}): Promise<Json> => {
    const response = await fetch(`${running.urls.control}${path}`, { ...init, headers: { ...AUTH, ...(init.headers ?? {}) } });
    expect(response.status, path).toBe(200);
    return response.json();
  };

  /** The live state now, and the tape's length: what the timeline's entry #entries must show. */
  const take = async () => {
    const recording = await control("/recording");
    taken.push({ entries: recording.tape.entries, snapshot: await control("/snapshot") });
  };

  const advance = async (by: string) => {
    await page.fill("#advance-by", by);
    await page.click("#advance");
  };

  const registryText = () => page.locator("#panel-live .service.registry").textContent();

  beforeAll(async () => {
    running = await startStandin({
      fixture: join(process.cwd(), "fixtures/rolling-deploy-failing-canary.json"),
      ports: { scheduler: 0, registry: 0, echo: 0 },
      controlToken: TOKEN,
    });
    browser = await launch();
    page = await openPage(browser, errors);
  });

  afterAll(async () => {
    for (const child of children) child.kill();
    await browser?.close();
    await running?.close();
  });

  it("the live view follows a rolling deployment and a session expiry as the clock advances", async () => {
    const ids: string[] = [];
    for (const [name, ttl] of [
      ["leader", "20s"],
      ["worker", "10m"],
    ]) {
      const response = await fetch(`${running.urls.registry}/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: name, TTL: ttl }) });
      expect(response.status).toBe(200);
      ids.push(((await response.json()) as Json).ID);
    }
    // The worker holds a lock; an API key authenticates at the echo service.
    expect(await (await fetch(`${running.urls.registry}/v1/kv/service/web/owner?acquire=${ids[1]}`, { method: "PUT", body: "worker" })).json()).toBe(true);
    const echo = await fetch(`${running.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"hi"}' });
    expect(echo.status).toBe(200);
    await take();

    // The token travels in the address's fragment (never sent to the server) and is kept for the tab.
    await page.goto(`${running.urls.control}/ui#token=${TOKEN}`);
    await page.waitForSelector("#panel-live .service.registry >> text=leader");
    expect(await page.locator("#panel-live .service.scheduler").textContent()).toContain("no jobs");
    expect(await page.locator('#panel-live .service.registry tr:has-text("service/web/owner")').textContent()).toContain("worker");
    expect(await page.locator("#panel-live .service.echo").textContent()).toContain("POST /echo");
    // Sessions live until 2×TTL: 40 s for the leader.
    await page.waitForSelector('#panel-live .service.registry tr:has-text("leader") .countdown[data-left-ms="40000"]');

    // The timeline's first step registers the job at 0s: the deployment starts.
    await advance("1s");
    await page.waitForSelector('.deployment[data-version="0"][data-status="running"]');
    await take();

    await advance("15s");
    await page.waitForSelector('.deployment[data-version="0"][data-status="successful"]');
    await page.waitForSelector('#panel-live .service.registry tr:has-text("leader") .countdown[data-left-ms="24000"]');
    expect(await page.locator(".deployment[data-version='0']").textContent()).toContain("3/3 healthy");
    await take();

    // Past 2×TTL the leader's session is gone; the worker's lives on.
    await advance("30s");
    await page.waitForFunction(() => !document.querySelector("#panel-live .service.registry")?.textContent?.includes("leader"));
    expect(await registryText()).toContain("worker");
    await take();

    // Version 1's canary deployment: placed, waiting for promotion.
    await advance("79s");
    await page.waitForSelector('.deployment[data-version="1"][data-status="running"]');
    await page.waitForSelector('.deployment[data-version="1"] >> text=canaries 1/1');
    await take();
    await screenshot(page, "live");
    // At 1,400 px (the page's viewport): the scheduler on the left, the other three stacked beside it, the
    // registry and echo within the first screen, and no section's tables cut at its right edge.
    const boxes = await page.$$eval("#panel-live .service", (sections) =>
      sections.map((section) => {
        const box = section.getBoundingClientRect();
        return { id: section.className, top: box.top + window.scrollY, left: box.left, right: box.right, cut: section.scrollWidth - section.clientWidth };
      }),
    );
    expect(boxes.map((b) => b.id)).toEqual(["service scheduler", "service registry", "service echo", "service timers"]);
    const [scheduler, ...others] = boxes;
    const viewport = page.viewportSize()!;
    for (const box of others) expect(box.left, box.id).toBeGreaterThan(scheduler!.right);
    for (const box of boxes.slice(0, 3)) expect(box.top, box.id).toBeLessThan(viewport.height);
    for (const box of boxes) {
      expect(box.right, box.id).toBeLessThanOrEqual(viewport.width);
      expect(box.cut, `${box.id}: cut by ${box.cut} px`).toBeLessThanOrEqual(0);
    }
    // A smaller one, the candidate for the README's picture (docs/ui.png).
    await page.setViewportSize({ width: 1200, height: 700 });
    await screenshot(page, "readme");
    await page.setViewportSize({ width: 1400, height: 1000 });

    // Await from the page: the canary fails at 2m20s and the deployment fails.
    await page.fill("#await-until", JSON.stringify({ deployment: { job: "web", status: "failed" } }));
    await page.click("#await");
    await page.waitForSelector('.deployment[data-version="1"][data-status="failed"]');
    await page.waitForSelector(".clock-line .now >> text=2026-01-01T00:02:20Z");
    await take();
    // The page reads the control API only: the run's journal holds the test's requests, nothing of the page's.
    const journal = await control("/requests");
    expect(journal.requests.map((r: Json) => `${r.method} ${r.path}`)).toEqual(["PUT /v1/session/create", "PUT /v1/session/create", "PUT /v1/kv/service/web/owner", "POST /echo"]);
    expect(errors).toEqual([]);
  });

  it("the timeline shows the scenario's events in virtual-time order", async () => {
    await page.click("#tab-timeline");
    await page.waitForSelector("#panel-timeline .events li");
    // Every entry is on the axis: wait until the last step's (the await's clock move) is listed.
    const last = taken.at(-1)!.entries;
    await page.waitForSelector(`#panel-timeline .events li[data-seq="${last}"]`);
    const rows = await page.$$eval("#panel-timeline .events li", (items) => items.map((li) => ({ time: li.querySelector("time")!.textContent!, text: li.textContent! })));
    const times = rows.map((r) => r.time);
    expect(times).toEqual([...times].sort());
    const firstIndex = (text: string) => rows.findIndex((r) => r.text.includes(text));
    const expected = ["PUT /v1/session/create", "job.registered", "deployment.created", "deployment.successful", "session.invalidated", "deployment.failed"];
    const order = expected.map(firstIndex);
    expect(expected.filter((_, i) => order[i]! < 0)).toEqual([]);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    await screenshot(page, "timeline");

    // The filter narrows the list to what matches.
    await page.fill("#panel-timeline .filter", "session");
    await page.waitForFunction(() => [...document.querySelectorAll("#panel-timeline .events li")].every((li) => li.textContent!.toLowerCase().includes("session")));
    expect(await page.locator("#panel-timeline .events li").count()).toBeGreaterThanOrEqual(3);
    await page.fill("#panel-timeline .filter", "");

    // The legend says what each kind of mark is, in the marks' own colours.
    const legend = await page.$$eval("#panel-timeline .legend li", (items) => items.map((li) => li.textContent!));
    expect(legend).toHaveLength(7);
    expect(legend[0]).toBe("a request to a service, or a fault set over the control API");
    const fill = (selector: string) => page.$eval(selector, (element) => getComputedStyle(element).fill);
    expect(await fill('#panel-timeline .legend li[data-marks="mark request"] circle')).toBe(await fill("#panel-timeline .axis circle.mark.request"));
    expect(await fill('#panel-timeline .legend li[data-marks="mark event"] circle')).toBe(await fill("#panel-timeline .axis circle.mark.event"));
    expect(errors).toEqual([]);
  });

  it("the tape viewer shows its drop zone alone until a tape is opened, no empty boxes", async () => {
    await page.click("#tab-tape");
    expect(await page.locator("#panel-tape .drop").isVisible()).toBe(true);
    expect(await page.locator("#panel-tape .timeline").isHidden()).toBe(true);
    expect(await page.locator("#panel-tape .axis").isHidden()).toBe(true);
    await page.click("#tab-timeline");
    expect(errors).toEqual([]);
  });

  it("the state at an instant equals GET /_standin/snapshot taken at that instant", async () => {
    for (const { entries, snapshot } of taken) {
      await page.click(`#panel-timeline .events li[data-seq="${entries}"]:not([data-kind="timer"]):not([data-kind="event"])`);
      await page.waitForSelector(`#panel-timeline .instant h2 >> text=State after #${entries}:`);
      expect(await page.locator("#panel-timeline .state-hash").textContent()).toBe(hashState(snapshot));
      // The document itself, as the page received it.
      const shown = await page.evaluate(
        async ([seq, token]) => (await fetch(`/_standin/ui/api/instant?source=live&seq=${seq}`, { headers: { Authorization: `Bearer ${token}` } })).json(),
        [entries, TOKEN] as const,
      );
      expect(shown.snapshot).toEqual(snapshot);
    }
    // Keyboard: in the list, Home and End go to the first and the last event, Enter shows the state after its entry.
    await page.focus("#panel-timeline .events");
    await page.keyboard.press("Home");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#panel-timeline .instant h2 >> text=State after #1:");
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.waitForSelector(`#panel-timeline .instant h2 >> text=State after #${taken.at(-1)!.entries}:`);
    // The arrows move the choice, one event at a time.
    const chosen = () => page.getAttribute("#panel-timeline .events", "aria-activedescendant");
    const before = await chosen();
    await page.keyboard.press("ArrowUp");
    await page.waitForFunction((id) => document.querySelector("#panel-timeline .events")!.getAttribute("aria-activedescendant") !== id, before);
    expect(Number((await chosen())!.replace("event-", ""))).toBe(Number(before!.replace("event-", "")) - 1);
    // An event inside a clock move: the state at its own instant, on the way.
    await page.click('#panel-timeline .events li[data-kind="event"]:has-text("session.invalidated")');
    await page.waitForSelector("#panel-timeline .instant h2 >> text=State at 2026-01-01T00:00:40Z, during #");
    expect(await page.locator("#panel-timeline .instant .diff").textContent()).toContain("registry.sessions");
    await page.click(`#panel-timeline .events li[data-seq="${taken[2]!.entries}"]:not([data-kind="timer"]):not([data-kind="event"])`);
    await page.waitForSelector(`#panel-timeline .instant h2 >> text=State after #${taken[2]!.entries}:`);
    await screenshot(page, "instant");

    // The open timeline follows the run: a clock move made elsewhere appears once, after what was there.
    const firstEntryRows = await page.locator('#panel-timeline .events li[data-seq="1"]').count();
    await control("/clock/advance", { method: "POST", body: JSON.stringify({ by: "5s" }) });
    await page.waitForSelector('#panel-timeline .events li[data-kind="clock"] >> text=2026-01-01T00:02:25.000Z');
    expect(await page.locator('#panel-timeline .events li[data-seq="1"]').count()).toBe(firstEntryRows);
    expect(errors).toEqual([]);
  });

  it("standin ui opens the run's tape read-only, and shows where a diverging replay went wrong", async () => {
    const tape = await control("/tape");
    const file = join(scratch, "run.tape.json");
    writeFileSync(file, JSON.stringify(tape));
    const child = spawn(process.execPath, [BIN, "ui", file, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      let err = "";
      child.stdout!.on("data", (d) => {
        out += d;
        const match = / at (http:\S+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.stderr!.on("data", (d) => (err += d));
      child.on("exit", (code) => reject(new Error(`standin ui exited ${code}: ${err}`)));
    });

    const viewer = await openPage(browser, errors);
    await viewer.goto(url);
    await viewer.waitForSelector("#panel-tape .events li");
    await viewer.waitForSelector("#panel-tape .replay-ok");
    expect(await viewer.locator("#panel-tape .timeline-summary").textContent()).toContain(`tape: ${tape.entries.length} entries`);
    // The same state at the same instant, from the file.
    const { entries, snapshot } = taken[3]!;
    await viewer.click(`#panel-tape .events li[data-seq="${entries}"]:not([data-kind="timer"]):not([data-kind="event"])`);
    await viewer.waitForSelector(`#panel-tape .instant h2 >> text=State after #${entries}:`);
    expect(await viewer.locator("#panel-tape .state-hash").textContent()).toBe(hashState(snapshot));
    await screenshot(viewer, "tape");

    // A tape whose first answer was recorded differently: its replay diverges there, and the page says so.
    const altered = structuredClone(tape);
    altered.entries[0].response.status = 201;
    const alteredFile = join(scratch, "diverging.tape.json");
    writeFileSync(alteredFile, JSON.stringify(altered));
    await viewer.setInputFiles("#tape-file", alteredFile);
    await viewer.waitForSelector("#panel-tape .divergence >> text=the first at #1");
    await viewer.click("#panel-tape .divergence-jump");
    await viewer.waitForSelector('#panel-tape .events li.diverged[aria-selected="true"][data-seq="1"]');
    await viewer.waitForSelector("#panel-tape .instant h2 >> text=State after #1:");
    await screenshot(viewer, "tape-divergence");
    expect(errors).toEqual([]);
  });
});
