/**
 * Record and replay: GET /_standin/tape and replayTape / `standin replay`.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { replayTape, formatReport } from "../../src/replay.js";
import { CLI_TEST_TIMEOUT_MS } from "../support/cli.js";

type Json = Record<string, any>;

const job = {
  ID: "web",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 2, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  Update: { MaxParallel: 1, MinHealthyTime: 2_000_000_000, HealthyDeadline: 60_000_000_000 },
};

async function tapeOf(emu: Standin): Promise<Json> {
  return (await (await emu.scheduler.request("/_standin/tape")).json()) as Json;
}

const post = (app: { request: Standin["scheduler"]["request"] }, path: string, body?: unknown, method = "POST") =>
  Promise.resolve(app.request(path, { method, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) }));

/** A mixed run: all three services, control faults, clock moves, a parked blocking query woken by a write. */
async function scriptedRun(emu: Standin): Promise<void> {
  await post(emu.scheduler, "/v1/jobs", { Job: job }, "PUT");
  const parked = Promise.resolve(emu.scheduler.request(`/v1/job/web/deployment?index=${emu.index}&wait=5m`));
  await new Promise((resolve) => setImmediate(resolve));
  await post(emu.scheduler, "/_standin/clock/advance", { by: "1s" });
  await parked;
  const [alloc] = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
  await post(emu.scheduler, `/_standin/scheduler/allocations/${alloc!.ID}`, { ClientStatus: "failed" });
  emu.clock.advance("30s"); // in process
  emu.act("node-down", { node: "standin" });
  const session = (await (await post(emu.registry, "/v1/session/create", { TTL: "10s" }, "PUT")).json()) as Json;
  await post(emu.registry, `/v1/kv/leader?acquire=${session.ID}`, "me", "PUT");
  await post(emu.scheduler, "/_standin/await", { until: { session: { id: session.ID, gone: true } } });
  const token = ((await (await post(emu.echo, "/_standin/echo/tokens", { scheme: "provider_jwt", expiresIn: "5m" })).json()) as Json).token;
  await emu.echo.request("/auth/info/providerjwt?key=test-api-key", { headers: { Authorization: `Bearer ${token}` } });
  await post(emu.echo, "/echo?key=test-api-key", { message: "hi" });
  await emu.applyFixture({ scheduler: { nodes: [{ Name: "late" }] } });
  await emu.scheduler.request("/v1/nodes");
}

describe("the tape", () => {
  it("records requests, control faults, clock moves and in-process changes since the last reset", async () => {
    const emu = await createStandin();
    await scriptedRun(emu);
    const tape = await tapeOf(emu);
    expect(tape.standinTape).toBe(1);
    expect(tape.start).toMatchObject({ seed: 1, compatHeaders: true, clock: { startMs: Date.parse("2026-01-01T00:00:00Z"), mode: "manual" } });
    const kinds = tape.entries.map((e: Json) => (e.kind === "request" ? `${e.service} ${e.method} ${e.path.split("?")[0]}` : e.kind === "clock" ? `clock ${e.op}` : e.kind));
    expect(kinds).toContain("scheduler PUT /v1/jobs");
    expect(kinds).toContain(
      "scheduler POST /_standin/scheduler/allocations/" +
        tape.entries
          .find((e: Json) => e.path?.startsWith("/_standin/scheduler/allocations/"))
          .path.split("/")
          .at(-1),
    );
    expect(kinds).toContain("clock advance-to");
    expect(kinds).toContain("action");
    expect(kinds).toContain("fixture");
    // Control routes recorded where they act: no clock or await request entries, no reads of the control API.
    expect(kinds.filter((k: string) => k.includes("/_standin/clock") || k.includes("/_standin/await") || k.includes("/_standin/tape"))).toEqual([]);
    // The parked query was still open when the advance came: not awaited; the others were.
    const parked = tape.entries.find((e: Json) => e.path?.includes("/deployment?index="));
    expect(parked.awaited).toBe(false);
    expect(tape.entries.find((e: Json) => e.path === "/v1/jobs").awaited).toBe(true);
    expect(tape.end).toEqual({ stateHash: emu.stateHash(), index: emu.index });

    await emu.reset();
    const fresh = await tapeOf(emu);
    expect(fresh.entries).toEqual([]);
  });

  it("replays with zero divergences and the same final state hash", async () => {
    const emu = await createStandin({ fixture: { seed: 7, scheduler: { nodes: [{ Name: "client-1" }] } } });
    await scriptedRun(emu);
    const tape = await tapeOf(emu);
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.stateHash.actual).toBe(emu.stateHash());
    expect(formatReport(report)).toContain("0 divergences");
  });

  it("reports the first divergence: a changed answer, then the state", async () => {
    const emu = await createStandin();
    await scriptedRun(emu);
    const tape = await tapeOf(emu);
    const target = tape.entries.find((e: Json) => e.path === "/v1/nodes");
    target.response.body.text = target.response.body.text.replace("late", "lame");
    const changed = await replayTape(tape);
    expect(changed.ok).toBe(false);
    expect(changed.divergences[0]).toMatchObject({ seq: target.seq, entry: "scheduler GET /v1/nodes", what: expect.stringContaining("body differs") });
    // A request the replay answers differently changes the end state too.
    const jobEntry = tape.entries.find((e: Json) => e.path === "/v1/jobs");
    jobEntry.body.text = jobEntry.body.text.replace('"Count":2', '"Count":3');
    const report = await replayTape(tape);
    expect(report.divergences.at(-1)).toMatchObject({ seq: -1, entry: "end" });
    expect(formatReport(report)).toMatch(/divergences; the first:\n {2}#\d+ /);
  });

  it("a body sent again is written once in full, then as its hash, and replays compare it all the same", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job] } } });
    for (let i = 0; i < 5; i++) await emu.scheduler.request("/v1/jobs"); // the first routed, the rest replayed: one body
    const tape = await tapeOf(emu);
    const reads = tape.entries.filter((e: Json) => e.path === "/v1/jobs" && e.method === "GET");
    expect(reads).toHaveLength(5);
    const [first, ...again] = reads.map((e: Json) => e.response.body);
    expect(JSON.parse(first.text)[0].ID).toBe("web");
    for (const body of again) expect(body).toEqual({ sha256: createHash("sha256").update(first.text).digest("hex"), bytes: first.bytes });
    expect((await replayTape(tape)).divergences).toEqual([]);
    // A hashed body still catches a different answer.
    reads.at(-1).response.body = { sha256: "0".repeat(64), bytes: first.bytes };
    const changed = await replayTape(tape);
    expect(changed.divergences[0]).toMatchObject({ seq: reads.at(-1).seq, what: expect.stringContaining("body differs") });
  });

  it("headers repeated request after request are recorded right, each exported entry with its own objects", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job] } } });
    const asks: Record<string, string>[] = [{ "x-trace": "1" }, { "x-trace": "1" }, { "x-trace": "2" }, { "x-trace": "2", "x-extra": "y" }, { "x-trace": "2" }];
    for (const headers of asks) await emu.scheduler.request("/v1/job/web", { headers });
    const reads = (await tapeOf(emu)).entries.filter((e: Json) => e.path === "/v1/job/web");
    expect(reads.map((e: Json) => e.headers)).toEqual(asks);
    reads[0].headers["x-trace"] = "changed";
    reads[0].response.headers["content-type"] = "changed";
    expect([reads[1].headers["x-trace"], reads[1].response.headers["content-type"]]).toEqual(["1", "application/json"]);
  });

  it("an auto-clock run replays its skips", async () => {
    const emu = await createStandin({ clock: { mode: "auto" } });
    await post(emu.scheduler, "/v1/jobs", { Job: job }, "PUT");
    let seen = emu.index;
    for (let i = 0; i < 6; i++) {
      const res = await emu.scheduler.request(`/v1/job/web/deployment?index=${seen}&wait=5m`);
      seen = Number(res.headers.get("X-Nomad-Index"));
      await res.text();
    }
    const tape = await tapeOf(emu);
    expect(tape.entries.filter((e: Json) => e.kind === "clock").length).toBeGreaterThan(0);
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
  });

  it("refuses what cannot be replayed", async () => {
    await expect(replayTape({ nope: true })).rejects.toThrow(/not a standin tape/);
    const emu = await createStandin({ clock: { mode: "realtime" } });
    const tape = await tapeOf(emu);
    emu.close();
    await expect(replayTape(tape)).rejects.toThrow(/realtime/);
  });

  it("`standin replay <tape>` prints the outcome and exits 1 on divergence", { timeout: CLI_TEST_TIMEOUT_MS }, async () => {
    const emu = await createStandin();
    await scriptedRun(emu);
    const tape = await tapeOf(emu);
    const dir = await mkdtemp(join(tmpdir(), "standin-tape-"));
    const good = join(dir, "good.json");
    await writeFile(good, JSON.stringify(tape));
    const run = promisify(execFile);
    const ok = await run(process.execPath, ["bin/standin", "replay", good]);
    expect(ok.stdout).toMatch(/^replayed \d+ entries \(\d+ requests\)\n0 divergences; state hash [0-9a-f]{64} matches\n$/);
    tape.entries.find((e: Json) => e.path === "/v1/nodes").response.status = 404;
    const bad = join(dir, "bad.json");
    await writeFile(bad, JSON.stringify(tape));
    const failed = await run(process.execPath, ["bin/standin", "replay", bad]).catch((error) => error);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("status 404 expected, 200 now");
  });
});
