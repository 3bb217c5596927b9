/**
 * What a run records is bounded: the request journal by entries and bytes,
 * the tape by bytes (it stops and says where), rejected bodies as digests.
 * Settings come from options (flags), the start fixture's `recording`
 * section, and POST /_standin/recording.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { JOURNAL_BODY_BYTES, REJECTED_BODY_BYTES } from "../../src/http/middleware.js";
import { replayTape } from "../../src/replay.js";

type Json = Record<string, any>;

const control = async (emu: Standin, method: string, path: string, body?: unknown) => {
  const res = await emu.scheduler.request(`/_standin${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
};
const put = (emu: Standin, key: string, value: string) => emu.registry.request(`/v1/kv/${key}`, { method: "PUT", body: value });

describe("the request journal's byte budget", () => {
  it("drops the oldest entries past its bytes and counts them", async () => {
    const emu = await createStandin({ journalBytes: 100_000 });
    for (let i = 0; i < 20; i++) await put(emu, `k${i}`, "v".repeat(20_000));
    const { body } = await control(emu, "GET", "/requests");
    expect(body.requests.length).toBeGreaterThan(0);
    expect(body.requests.length).toBeLessThan(6);
    expect(body.requests.at(-1).path).toBe("/v1/kv/k19");
    expect(body.dropped).toBe(20 - body.requests.length);
    const status = (await control(emu, "GET", "/recording")).body;
    expect(status.journal.bytes).toBeLessThanOrEqual(100_000);
    expect(status.journal.budget).toBe(100_000);
  });

  it("keeps the newest entry whatever its size", async () => {
    const emu = await createStandin({ journalBytes: 1000 });
    await put(emu, "big", "v".repeat(50_000));
    const { body } = await control(emu, "GET", "/requests");
    expect(body.requests).toHaveLength(1);
  });

  it("keeps the first 64 KiB of a long body, with its length", async () => {
    const emu = await createStandin();
    await put(emu, "long", "é".repeat(100_000));
    const [entry] = (await control(emu, "GET", "/requests")).body.requests;
    expect(entry.bodyTruncated).toBe(true);
    expect(entry.bodyBytes).toBe(200_000);
    expect(Buffer.byteLength(entry.body, "utf8")).toBe(JOURNAL_BODY_BYTES);
  });

  it("keeps a large rejected body as its digest only, a small one whole", async () => {
    const emu = await createStandin();
    const big = JSON.stringify({ Job: { ID: "x".repeat(REJECTED_BODY_BYTES) } });
    expect((await emu.scheduler.request("/v1/jobs", { method: "PUT", body: big })).status).toBeGreaterThanOrEqual(400);
    expect((await emu.scheduler.request("/v1/jobs", { method: "PUT", body: "{" })).status).toBe(400);
    const [large, small] = (await control(emu, "GET", "/requests")).body.requests;
    expect(large.body).toBeNull();
    expect(large.bodyBytes).toBe(big.length);
    expect(large.bodyDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(small.body).toBe("{");
    expect(small.bodyDigest).toBeUndefined();
  });
});

describe("the tape's byte budget", () => {
  it("stops at its budget, says where, and the entries before it replay with no divergence", async () => {
    const emu = await createStandin({ tapeBytes: 60_000 });
    for (let i = 0; i < 10; i++) await put(emu, `k${i % 2}`, `${i}`.repeat(10_000));
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as Json;
    expect(tape.truncated).toBe(true);
    expect(tape.truncation.reason).toBe("bytes");
    expect(tape.truncation.limit).toBe(60_000);
    expect(tape.entries.length).toBeGreaterThan(0);
    expect(tape.entries.length).toBeLessThan(10);
    expect(tape.truncation.seq).toBeGreaterThan(tape.entries.at(-1).seq);
    const status = (await control(emu, "GET", "/recording")).body;
    expect(status.tape).toMatchObject({ enabled: true, budget: 60_000, truncated: true });
    expect(status.tape.bytes).toBeLessThanOrEqual(60_000);
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.truncatedAt).toBe(tape.truncation.seq);
  });

  it("a large rejected body is kept as a digest and not sent again by the replay", async () => {
    const emu = await createStandin();
    await put(emu, "a", "1");
    const big = JSON.stringify({ Job: { ID: "x".repeat(REJECTED_BODY_BYTES) } });
    expect((await emu.scheduler.request("/v1/jobs", { method: "PUT", body: big, headers: { "Content-Length": String(big.length) } })).status).toBeGreaterThanOrEqual(400);
    await put(emu, "b", "2");
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as Json;
    const rejected = tape.entries.find((e: Json) => e.path === "/v1/jobs");
    expect(rejected.body).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: big.length });
    const report = await replayTape(tape);
    expect(report.skipped).toBe(1);
    expect(report.ok).toBe(true);
  });
});

describe("recording settings", () => {
  it("--no-tape (tape: false): nothing is recorded and GET /_standin/tape is a 409", async () => {
    const emu = await createStandin({ tape: false });
    await put(emu, "a", "1");
    const res = await control(emu, "GET", "/tape");
    expect(res.status).toBe(409);
    expect(res.body.error).toContain("--no-tape");
    expect(emu.tape.length).toBe(0);
  });

  it("a start fixture's recording section sets the budgets; options win over it", async () => {
    const fixture = { recording: { tapeBytes: 1234567, journalEntries: 7, journalBytes: 7654321 } };
    const emu = await createStandin({ fixture });
    expect((await control(emu, "GET", "/recording")).body).toMatchObject({ tape: { budget: 1234567 }, journal: { capacity: 7, budget: 7654321 } });
    const overridden = await createStandin({ fixture, tapeBytes: 99, journalCapacity: 3 });
    expect((await control(overridden, "GET", "/recording")).body).toMatchObject({ tape: { budget: 99 }, journal: { capacity: 3, budget: 7654321 } });
    const off = await createStandin({ fixture: { recording: { tape: false } } });
    expect((await control(off, "GET", "/recording")).body.tape.enabled).toBe(false);
  });

  it("a runtime fixture cannot set them (they belong to start fixtures)", async () => {
    const emu = await createStandin();
    const res = await control(emu, "POST", "/fixtures", { recording: { tapeBytes: 5 } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("recording can only be set by a start fixture");
  });

  it("POST /_standin/recording trims the journal at once and is strict about its keys", async () => {
    const emu = await createStandin();
    for (let i = 0; i < 5; i++) await put(emu, `k${i}`, "v");
    const res = await control(emu, "POST", "/recording", { journalEntries: 2, tapeBytes: 1_000_000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tape: { budget: 1_000_000 }, journal: { capacity: 2, entries: 2, dropped: 3 } });
    expect((await control(emu, "GET", "/requests")).body.requests.map((r: Json) => r.path)).toEqual(["/v1/kv/k3", "/v1/kv/k4"]);
    expect((await control(emu, "POST", "/recording", { journalentries: 2 })).status).toBe(400);
    expect((await control(emu, "POST", "/recording", { journalEntries: 0 })).status).toBe(400);
  });

  it("turning the tape off stops it at once; on again, it records from the next reset", async () => {
    const emu = await createStandin();
    await control(emu, "POST", "/recording", { tape: false });
    await put(emu, "a", "1");
    expect((await control(emu, "GET", "/tape")).status).toBe(409);
    await control(emu, "POST", "/recording", { tape: true });
    expect((await control(emu, "GET", "/tape")).status).toBe(409);
    await control(emu, "POST", "/reset");
    await put(emu, "b", "2");
    const tape = (await control(emu, "GET", "/tape")).body;
    expect(tape.entries.map((e: Json) => e.path)).toEqual(["/v1/kv/b"]);
  });
});
