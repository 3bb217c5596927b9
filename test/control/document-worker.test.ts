/**
 * Large control documents are parsed and checked in a worker thread before
 * their route sees them (src/control/document-worker.ts). Whether the check
 * runs there or on the main thread, a refused document gets the same answer,
 * byte for byte, and changes nothing; a valid one is applied whole, on the
 * tape as one entry. A stopped worker is an error answer, and the worker
 * keeps no process alive.
 *
 * The sources have no worker script beside them (it is built into dist/), so
 * these tests point the checker at the built one: `npm test` builds first.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChildProcess } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { documentWorker, OFF_LOOP_BODY_BYTES } from "../../src/control/document-worker.js";
import { createStandin, type Standin } from "../../src/emulator.js";
import { replayTape } from "../../src/replay.js";
import { CLI_TEST_TIMEOUT_MS, runCli, startCli } from "../support/cli.js";

const BUILT_WORKER = new URL("../../dist/control/document-worker-thread.js", import.meta.url);
/** Child processes on a loaded 2-core machine may take their time: a bound on a hang, not a claim about speed. */
const GENEROUS_MS = 60_000;

const previousScript = documentWorker.scriptUsed;
beforeAll(() => documentWorker.useScript(BUILT_WORKER));
afterAll(() => documentWorker.useScript(previousScript));

type Answer = { status: number; text: string };

async function send(emu: Standin, path: string, body: string, method = "POST"): Promise<Answer> {
  const res = await emu.scheduler.request(path, { method, body, headers: { "Content-Type": "application/json" } });
  return { status: res.status, text: await res.text() };
}

/** `{"k0":0,"k1":0,…}` with `count` keys, and `prefix` members first. */
function unknownKeys(count: number, prefix = ""): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`"k${i}":0`);
  return `{${prefix}${parts.join(",")}}`;
}

function kvFixture(count: number): { registry: { kv: Array<{ Key: string; Value: string }> } } {
  return { registry: { kv: Array.from({ length: count }, (_, i) => ({ Key: `big/${i}`, Value: "v".repeat(100) })) } };
}

const padding = "x".repeat(OFF_LOOP_BODY_BYTES);

/** Refused documents, each over the size from which the worker checks them. */
const REFUSED: Array<{ name: string; path: string; method?: string; body: string }> = [
  { name: "a fixture of 100,000 unknown keys", path: "/_standin/fixtures", body: unknownKeys(100_000) },
  { name: "a fixture that is not JSON", path: "/_standin/fixtures", body: unknownKeys(10_000).slice(0, -1) },
  { name: "a fixture nesting too deep", path: "/_standin/fixtures", body: `{"pad":"${padding}","x":${"[".repeat(1_001)}${"]".repeat(1_001)}}` },
  {
    name: "a fixture with a bad entry among many",
    path: "/_standin/fixtures",
    body: JSON.stringify({ registry: { kv: [...kvFixture(2_000).registry.kv, { Value: "no key" }] } }),
  },
  { name: "a fixture given as a file path", path: "/_standin/fixtures", body: JSON.stringify(`/etc/${padding}`) },
  { name: "a reset whose fixture has unknown keys", path: "/_standin/reset", body: `{"fixture":${unknownKeys(50_000)}}` },
  { name: "a reset with unknown keys of its own", path: "/_standin/reset", body: unknownKeys(50_000, '"fixture":{},') },
  { name: "a snapshot of unknown keys", path: "/_standin/snapshot", method: "PUT", body: unknownKeys(100_000) },
  { name: "an action whose name is not a string", path: "/_standin/actions", body: `{"do":5,"pad":"${padding}"}` },
  { name: "an action that is not JSON", path: "/_standin/actions", body: `{"do":"node-down","pad":"${padding}"` },
  { name: "a dashboard tape that is not JSON", path: "/_standin/ui/api/tape", body: `[${unknownKeys(10_000)}` },
];

describe("large control documents checked in a worker thread", () => {
  it("a refused document gets the same answer as when checked on the main thread, and changes nothing", async () => {
    const emu = await createStandin({ fixture: { registry: { kv: [{ Key: "keep", Value: "me" }] } } });
    const before = { hash: emu.stateHash(), index: emu.index };
    for (const { name, path, method, body } of REFUSED) {
      expect(body.length, name).toBeGreaterThanOrEqual(OFF_LOOP_BODY_BYTES);
      const answered = documentWorker.answered;
      const offLoop = await send(emu, path, body, method);
      expect(documentWorker.answered, `${name}: checked in the worker`).toBe(answered + 1);
      await documentWorker.useScript(undefined);
      const onLoop = await send(emu, path, body, method);
      await documentWorker.useScript(BUILT_WORKER);
      expect(offLoop.status, name).toBe(400);
      expect(offLoop, name).toEqual(onLoop);
      expect({ hash: emu.stateHash(), index: emu.index }, name).toEqual(before);
    }
    // The capped answer: a few unknown keys named and the rest counted, not a list of 100,000.
    const capped = JSON.parse((await send(emu, "/_standin/snapshot", unknownKeys(100_000), "PUT")).text) as { problems: string[] };
    expect(capped.problems.length).toBeLessThanOrEqual(7);
    emu.close();
  });

  it("a valid document is applied whole: reads made meanwhile see none of it or all of it; the tape holds it once and replays", async () => {
    const emu = await createStandin();
    const count = 5_000;
    const body = JSON.stringify(kvFixture(count));
    expect(body.length).toBeGreaterThanOrEqual(OFF_LOOP_BODY_BYTES);
    const answered = documentWorker.answered;
    let done = false;
    const applied = send(emu, "/_standin/fixtures", body).finally(() => (done = true));
    const seen: number[] = [];
    while (!done) {
      const res = await emu.registry.request("/v1/kv/big/?keys");
      seen.push(res.status === 404 ? 0 : ((await res.json()) as string[]).length);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const answer = await applied;
    expect(answer.status).toBe(200);
    expect(documentWorker.answered).toBe(answered + 1);
    // The answer's hash, computed a slice at a time, is the state's.
    expect(JSON.parse(answer.text)).toEqual({ applied: true, index: emu.index, stateHash: emu.stateHash() });
    // Reads were answered while the worker checked the document (from the state before it), and none saw part of it.
    expect(seen[0]).toBe(0);
    expect(seen.filter((n) => n !== 0 && n !== count)).toEqual([]);
    expect(((await (await emu.registry.request("/v1/kv/big/?keys")).json()) as string[]).length).toBe(count);

    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as { entries: Array<{ kind: string }> };
    expect(tape.entries.filter((e) => e.kind === "fixture")).toHaveLength(1);
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.stateHash.actual).toBe(emu.stateHash());
    emu.close();
  });

  it("a large snapshot is restored whole: reads made meanwhile see the state before or after; the answer's hash is the state's", async () => {
    const count = 10_000;
    const emu = await createStandin();
    await emu.applyFixture(kvFixture(count));
    const snapshot = await (await emu.scheduler.request("/_standin/snapshot")).text();
    const hash = emu.stateHash();
    await emu.reset();
    expect(emu.stateHash()).not.toBe(hash);
    let done = false;
    const restored = send(emu, "/_standin/snapshot", snapshot, "PUT").finally(() => (done = true));
    const seen: number[] = [];
    while (!done) {
      const res = await emu.registry.request("/v1/kv/big/?keys");
      seen.push(res.status === 404 ? 0 : ((await res.json()) as string[]).length);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const answer = await restored;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ restored: true, index: emu.index, stateHash: hash });
    expect(emu.stateHash()).toBe(hash);
    expect(seen[0]).toBe(0);
    expect(seen.filter((n) => n !== 0 && n !== count)).toEqual([]);
    // Hashed in turns (the canonical text is over a megabyte), by the route too.
    expect(await (await emu.scheduler.request("/_standin/state/hash")).json()).toEqual({ hash });
    emu.close();
  });

  it("a large fixture given to reset becomes the start state, checked in the worker", async () => {
    const count = 5_000;
    const emu = await createStandin();
    const answered = documentWorker.answered;
    const answer = await send(emu, "/_standin/reset", JSON.stringify({ fixture: kvFixture(count) }));
    expect(answer.status).toBe(200);
    expect(documentWorker.answered).toBe(answered + 1);
    expect(JSON.parse(answer.text)).toMatchObject({ reset: true, index: emu.index, stateHash: emu.stateHash() });
    await send(emu, "/_standin/reset", "");
    expect(((await (await emu.registry.request("/v1/kv/big/?keys")).json()) as string[]).length).toBe(count);
    emu.close();
  });

  it("a worker stopped during a check is an error answer that changes nothing; the next document starts another", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const body = JSON.stringify(kvFixture(5_000));
    const pending = send(emu, "/_standin/fixtures", body);
    while (documentWorker.inFlight === 0) await new Promise((resolve) => setImmediate(resolve));
    await documentWorker.stop();
    const answer = await pending;
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.text)).toEqual({ error: "internal error: the document check stopped (worker thread exit code 1); send the document again" });
    expect(emu.stateHash()).toBe(before);

    const again = await send(emu, "/_standin/fixtures", body);
    expect(again.status).toBe(200);
    expect(emu.stateHash()).not.toBe(before);
    emu.close();
  });
});

describe("the worker keeps no process alive", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  it("in process: after a large document and close(), the process ends by itself", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-document-worker-"));
    const script = join(dir, "main.mjs");
    const index = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
    writeFileSync(
      script,
      `import { createStandin } from ${JSON.stringify(index)};
const emu = await createStandin();
const parts = [];
for (let i = 0; i < 100000; i++) parts.push('"k' + i + '":0');
const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: "{" + parts.join(",") + "}" });
console.log(res.status);
emu.close();
`,
    );
    const child = spawn(process.execPath, [script], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    const ended = await new Promise<{ code: number | null; signal: string | null } | "still running">((resolve) => {
      const timer = setTimeout(() => resolve("still running"), GENEROUS_MS);
      child.on("exit", (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
    expect(ended).toEqual({ code: 0, signal: null });
    expect(out).toBe("400\n");
  });

  it("standin start: after a large document, standin stop ends it", async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), "standin-document-worker-")), "standin.pid");
    const standin = await startCli(["--pid-file", pidFile], children);
    const res = await fetch(`${standin.urls.control}/fixtures`, { method: "POST", body: unknownKeys(100_000), headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await res.json()) as unknown).toEqual({ error: "fixture[0]: k0: unknown key", problems: ["k0: unknown key"] });
    const stopped = await runCli(["stop", "--pid-file", pidFile, "--timeout", "60s"]);
    expect(stopped.code).toBe(0);
    expect(await standin.exited).toBe(0);
  });
});
