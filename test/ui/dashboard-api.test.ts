/**
 * The dashboard's server side, through the HTTP surface (in process): the
 * state at an instant, rebuilt from the tape in a scratch emulator, is what
 * GET /_standin/snapshot answered at that instant, for every entry of a
 * mixed run (past the checkpoints, after a restore); the timeline follows the
 * growing tape and starts over after a reset; the change stream; the errors;
 * `ui: false`; the control token; `standin ui`'s viewer; the page's budget.
 */
import { readFileSync, statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { hashState } from "../../src/core/snapshot.js";
import { startTapeViewer, type TapeViewer } from "../../src/ui/viewer.js";
import { call } from "../support/call.js";

type Json = any;

const job = {
  ID: "web",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 2, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  Update: { MaxParallel: 1, MinHealthyTime: 2_000_000_000, HealthyDeadline: 60_000_000_000 },
};

let emu: Standin | undefined;
let viewer: TapeViewer | undefined;
afterEach(async () => {
  emu?.close();
  emu = undefined;
  await viewer?.close();
  viewer = undefined;
});

const control = (method: string, path: string, body?: unknown) => call(emu!.scheduler, method, `/_standin${path}`, body);

/** Runs `step`, then notes the live snapshot (as JSON) with the tape's length then. */
async function stepAndTake(taken: Array<{ seq: number; snapshot: Json }>, step: () => Promise<unknown> | unknown): Promise<void> {
  await step();
  await new Promise((resolve) => setImmediate(resolve));
  const snapshot = (await control("GET", "/snapshot")).body;
  taken.push({ seq: emu!.tape.length, snapshot });
}

describe("the dashboard's API", () => {
  it("the state after every tape entry equals GET /_standin/snapshot taken right after it", async () => {
    emu = await createStandin({});
    const taken: Array<{ seq: number; snapshot: Json }> = [];
    await stepAndTake(taken, () => call(emu!.scheduler, "PUT", "/v1/jobs", { Job: job }));
    const parked = Promise.resolve(emu.scheduler.request(`/v1/job/web/deployment?index=${emu.index}&wait=5m`));
    await stepAndTake(taken, () => control("POST", "/clock/advance", { by: "1s" }));
    await parked;
    const [alloc] = (await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
    await stepAndTake(taken, () => control("POST", `/scheduler/allocations/${alloc.ID}`, { ClientStatus: "failed" }));
    const session = (await call(emu.registry, "PUT", "/v1/session/create", { TTL: "10s", Name: "lead" })).body as Json;
    await stepAndTake(taken, () => call(emu!.registry, "PUT", `/v1/kv/leader?acquire=${session.ID}`, "me"));
    await stepAndTake(taken, () => control("POST", "/actions", { do: "node-down", node: "standin" }));
    const saved = (await control("GET", "/snapshot")).body;
    await stepAndTake(taken, () => control("POST", "/await", { until: { session: { id: session.ID, gone: true } } }));
    await stepAndTake(taken, () => control("POST", "/fixtures", { scheduler: { nodes: [{ Name: "late" }] } }));
    await stepAndTake(taken, () => control("PUT", "/snapshot", saved));
    // Enough entries to pass several checkpoints: the later states are rebuilt from one, not from the start.
    for (let i = 0; i < 40; i++) await stepAndTake(taken, () => call(emu!.echo, "POST", "/echo?key=test-api-key", { message: `m${i}` }));
    await stepAndTake(taken, () => control("POST", "/clock/advance", { by: "1m" }));

    const timeline = (await control("GET", "/ui/api/timeline")).body;
    expect(timeline.source).toBe("live");
    expect(timeline.entries).toBe(emu.tape.length);
    expect(timeline.divergences).toEqual([]);
    const seqs = new Set(timeline.items.map((i: Json) => i.seq));
    for (const { seq } of taken) expect(seqs.has(seq)).toBe(true);
    // Backwards, so the states come from checkpoints and from replays in both directions.
    for (const { seq, snapshot } of [...taken].reverse()) {
      const answer = await control("GET", `/ui/api/instant?seq=${seq}`);
      expect(answer.status, `#${seq}`).toBe(200);
      expect(answer.body.snapshot, `the state after #${seq}`).toEqual(snapshot);
      expect(answer.body.stateHash).toBe(hashState(snapshot));
    }
    // The live emulator was never touched: its state is the last one taken.
    expect((await control("GET", "/snapshot")).body).toEqual(taken.at(-1)!.snapshot);
  });

  it("says what an entry changed, and lays the run out in virtual-time order", async () => {
    emu = await createStandin({});
    await call(emu.registry, "PUT", "/v1/session/create", { TTL: "10s", Name: "lead" });
    await control("POST", "/clock/advance", { by: "25s" });
    const timeline = (await control("GET", "/ui/api/timeline")).body;
    const labels = timeline.items.map((i: Json) => `${i.lane} ${i.label}`);
    expect(labels).toEqual([
      "registry PUT /v1/session/create",
      "registry session.created",
      "registry session.invalidated",
      "registry timer registry.session-ttl",
      "clock clock → 2026-01-01T00:00:25.000Z",
    ]);
    const ats = timeline.items.map((i: Json) => i.at);
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
    expect(timeline.items[2].at).toBe(Date.parse("2026-01-01T00:00:20Z"));

    const created = (await control("GET", "/ui/api/instant?seq=1")).body;
    expect(created.entry).toBe("registry PUT /v1/session/create");
    expect(created.diff.rows).toEqual([{ table: "registry.sessions", key: expect.any(String), change: "added" }]);
    expect(created.diff.timers.added.map((t: Json) => [t.kind, t.at])).toEqual([["registry.session-ttl", Date.parse("2026-01-01T00:00:20Z")]]);
    const expired = (await control("GET", "/ui/api/instant?seq=2")).body;
    expect(expired.diff.clock).toEqual({ from: Date.parse("2026-01-01T00:00:00Z"), to: Date.parse("2026-01-01T00:00:25Z") });
    expect(expired.diff.rows.map((r: Json) => [r.table, r.change])).toEqual([["registry.sessions", "removed"]]);
    // The start state is entry 0: nothing before it changed.
    const start = (await control("GET", "/ui/api/instant?seq=0")).body;
    expect(start.entry).toBe("start");
    expect(start.diff.rows).toEqual([]);
  });

  it("shows the state at an instant inside a clock move, as a run that stopped there has it", async () => {
    emu = await createStandin({});
    await call(emu.registry, "PUT", "/v1/session/create", { TTL: "10s", Name: "lead" });
    await control("POST", "/clock/advance", { by: "25s" });
    const expiry = Date.parse("2026-01-01T00:00:20Z");
    const before = (await control("GET", `/ui/api/instant?seq=2&at=${expiry - 1}`)).body;
    expect(before).toMatchObject({ seq: 2, during: true, at: expiry - 1 });
    expect(Object.keys(before.snapshot.store.tables["registry.sessions"].rows)).toHaveLength(1);
    const then = (await control("GET", `/ui/api/instant?seq=2&at=${expiry}`)).body;
    expect(then.diff.rows.map((r: Json) => [r.table, r.change])).toEqual([["registry.sessions", "removed"]]);
    // Another run of the same requests that stopped the clock at the expiry has this very state.
    const stopped = await createStandin({});
    try {
      await call(stopped.registry, "PUT", "/v1/session/create", { TTL: "10s", Name: "lead" });
      stopped.clock.advance("20s");
      expect(then.stateHash).toBe(stopped.stateHash());
    } finally {
      stopped.close();
    }
    // An instant the move does not pass is the state after the entry.
    expect((await control("GET", `/ui/api/instant?seq=2&at=${Date.parse("2026-01-01T00:01:00Z")}`)).body).not.toHaveProperty("during");
    expect((await control("GET", `/ui/api/instant?seq=1&at=${expiry}`)).body.stateHash).toBe((await control("GET", "/ui/api/instant?seq=1")).body.stateHash);
  });

  it("follows the growing tape, and starts over after a reset", async () => {
    emu = await createStandin({});
    await control("POST", "/clock/advance", { by: "1s" });
    expect((await control("GET", "/ui/api/timeline")).body.entries).toBe(1);
    await control("POST", "/clock/advance", { by: "1s" });
    await control("POST", "/clock/advance", { by: "1s" });
    const grown = (await control("GET", "/ui/api/timeline")).body;
    expect(grown.items.map((i: Json) => i.label)).toEqual(["clock → 2026-01-01T00:00:01.000Z", "clock → 2026-01-01T00:00:02.000Z", "clock → 2026-01-01T00:00:03.000Z"]);
    // A page that has the first item asks only for what follows it.
    const rest = (await control("GET", "/ui/api/timeline?since=1")).body;
    expect(rest).toMatchObject({ session: grown.session, from: 1, entries: 3 });
    expect(rest.items).toEqual(grown.items.slice(1));
    await control("POST", "/reset");
    for (const by of ["5s", "5s", "5s", "5s"]) await control("POST", "/clock/advance", { by });
    // More entries than before the reset, and the same kinds: still a new tape, read from its start.
    const after = (await control("GET", "/ui/api/timeline")).body;
    expect(after.session).not.toBe(grown.session);
    expect(after.items.map((i: Json) => i.label)).toEqual([5, 10, 15, 20].map((s) => `clock → 2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`));
    expect((await control("GET", "/ui/api/instant?seq=4")).body.stateHash).toBe(emu.stateHash());
  });

  it("streams a change event at once and after each change", async () => {
    emu = await createStandin({});
    const response = await emu.scheduler.request("/_standin/ui/api/stream");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const nextEvent = async (): Promise<Json> => {
      let text = "";
      while (!text.includes("\n\n")) text += decoder.decode((await reader.read()).value, { stream: true });
      expect(text).toMatch(/^event: change\ndata: /);
      return JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n")));
    };
    expect((await nextEvent()).clock.now).toBe("2026-01-01T00:00:00Z");
    await control("POST", "/clock/advance", { by: "90s" });
    const changed = await nextEvent();
    expect(changed.clock.now).toBe("2026-01-01T00:01:30Z");
    expect(changed.index).toBe(emu.index);
    await reader.cancel();
  });

  it("answers bad requests with the control API's errors", async () => {
    emu = await createStandin({});
    expect(await control("GET", "/ui/api/instant?seq=7")).toMatchObject({ status: 404, body: { error: "no tape entry #7 (yet)" } });
    expect((await control("GET", "/ui/api/instant?seq=x")).status).toBe(400);
    expect((await control("GET", "/ui/api/timeline?source=tape")).status).toBe(404);
    const notTape = await control("POST", "/ui/api/tape", { hello: "world" });
    expect(notTape.status).toBe(400);
    expect(notTape.body.error).toMatch(/^not a standin tape: /);
    expect(await control("POST", "/recording", { tape: false })).toMatchObject({ status: 200 });
    expect((await control("GET", "/ui/api/timeline")).status).toBe(409);
  });

  it("opens a dropped tape beside the live run without touching it", async () => {
    emu = await createStandin({});
    await call(emu.registry, "PUT", "/v1/session/create", { TTL: "10s" });
    const tape = (await control("GET", "/tape")).body;
    await control("POST", "/reset");
    const before = emu.stateHash();
    const opened = await control("POST", "/ui/api/tape?name=ci.json", tape);
    expect(opened.status).toBe(200);
    expect(opened.body).toMatchObject({ source: "tape", entries: 1, report: { ok: true } });
    expect((await control("GET", "/ui/api/info")).body).toEqual({ mode: "live", tape: { name: "ci.json", entries: 1 } });
    expect((await control("GET", "/ui/api/instant?source=tape&seq=1")).body.stateHash).toBe(tape.end.stateHash);
    expect(emu.stateHash()).toBe(before);
    expect(emu.tape.length).toBe(0);
  });

  it("is not served with ui: false (--no-ui)", async () => {
    emu = await createStandin({ ui: false });
    for (const path of ["/ui", "/ui/app.js", "/ui/api/timeline", "/ui/api/stream"]) expect((await control("GET", path)).status, path).toBe(404);
  });

  it("serves the page's files without the control token, and nothing else", async () => {
    emu = await createStandin({ controlToken: "s3cret" });
    const page = await control("GET", "/ui");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect((await control("GET", "/ui/app.js")).status).toBe(200);
    for (const path of ["/ui/api/info", "/ui/api/timeline", "/ui/api/instant?seq=0", "/ui/api/stream", "/ui/other"]) expect((await control("GET", path)).status, path).toBe(401);
    expect((await call(emu.scheduler, "GET", "/_standin/ui/api/info", undefined, { Authorization: "Bearer s3cret" })).status).toBe(200);
  });

  it("standin ui's viewer serves a tape read-only, and refuses what is not a tape", async () => {
    emu = await createStandin({});
    await control("POST", "/clock/advance", { by: "1s" });
    const tape = (await control("GET", "/tape")).body;
    viewer = await startTapeViewer({ tape, name: "run.json", port: 0 });
    expect(viewer.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_standin\/ui$/);
    const base = viewer.url.replace(/\/ui$/, "");
    expect(await (await fetch(`${base}/ui/api/info`)).json()).toEqual({ mode: "tape", tape: { name: "run.json", entries: 1 } });
    const timeline = (await (await fetch(`${base}/ui/api/timeline`)).json()) as Json;
    expect(timeline).toMatchObject({ source: "tape", entries: 1, report: { ok: true } });
    // No running emulator behind it: no stream, no clock.
    expect((await fetch(`${base}/ui/api/stream`)).status).toBe(404);
    expect((await fetch(`${base}/clock/advance`, { method: "POST", body: '{"by":"1s"}' })).status).toBe(404);
    await expect(startTapeViewer({ tape: { standinTape: 99 }, name: "x", port: 0 })).rejects.toThrow(/not a standin tape/);
    // The viewer has the dashboard's DNS-rebinding guard and says nosniff (issue 30).
    expect((await fetch(`${base}/ui/api/info`)).headers.get("x-content-type-options")).toBe("nosniff");
    const port = Number(new URL(viewer.url).port);
    const status = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/_standin/ui/api/info", headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on("error", reject);
        req.end();
      });
    expect(await status(`rebound.example:${port}`)).toBe(403);
    expect(await status(`localhost:${port}`)).toBe(200);
  });

  it("keeps the page within its budget and its files on standin itself", () => {
    const dir = join(process.cwd(), "dist/ui-page");
    expect(statSync(join(dir, "app.js")).size).toBeLessThanOrEqual(100 * 1024);
    const html = readFileSync(join(dir, "index.html"), "utf8");
    const css = readFileSync(join(dir, "app.css"), "utf8");
    expect([...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1])).toEqual(["data:,", "/_standin/ui/app.css", "/_standin/ui/app.js"]);
    expect(css).not.toMatch(/url\(|@import/);
  });
});
