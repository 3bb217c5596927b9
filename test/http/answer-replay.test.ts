/**
 * Remembered answers replayed at the port: the same bytes and headers as the
 * first answer, the same bookkeeping (journal, coverage, tape), and never an
 * answer from before a change, for another token, or for another encoding.
 */
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { AnswerReplay } from "../../src/http/answer-replay.js";
import { markReplayable } from "../../src/http/known-bodies.js";
import { bufferedResponse } from "../../src/http/respond.js";
import { startStandin } from "../../src/server.js";
import { smallJob as job } from "../support/jobs.js";

type Json = Record<string, any>;

async function control(emu: Standin, path: string): Promise<Json> {
  return (await (await emu.scheduler.request(`/_standin${path}`)).json()) as Json;
}

describe("AnswerReplay", () => {
  const stamp = { store: { version: 1 }, clock: { now: () => 0 } };
  const get = (path: string, headers: Record<string, string> = {}) => new Request(`http://x${path}`, { headers });
  const answer = (body: string) => markReplayable(bufferedResponse(Buffer.from(body), { status: 200, headers: { "Content-Type": "application/json", "X-Index": "3" } }));

  it("gives back what it remembered, for the same key only", async () => {
    const replay = new AnswerReplay(stamp, (request) => new URL(request.url).pathname);
    const first = answer("[1]");
    replay.remember(get("/a"), first, first);
    const again = replay.replay(get("/a"))!;
    expect([again.status, again.headers.get("x-index"), await again.text()]).toEqual([200, "3", "[1]"]);
    expect(replay.replay(get("/b"))).toBeUndefined();
    expect(replay.replay(get("/a", { "Accept-Encoding": "gzip" }))).toBeUndefined();
  });

  it("remembers only replayable 200 answers to GETs that wait on no index", () => {
    const replay = new AnswerReplay(stamp, (request) => request.url);
    const unmarked = bufferedResponse(Buffer.from("[]"), { status: 200 });
    replay.remember(get("/u"), unmarked, unmarked);
    const notFound = markReplayable(bufferedResponse(null, { status: 404 }));
    replay.remember(get("/n"), notFound, notFound);
    const blocking = answer("[2]");
    replay.remember(get("/b?index=3"), blocking, blocking);
    const post = new Request("http://x/p", { method: "POST", body: "{}" });
    replay.remember(post, answer("[3]"), answer("[3]"));
    expect([replay.replay(get("/u")), replay.replay(get("/n")), replay.replay(get("/b?index=3")), replay.replay(post)]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it("forgets everything when the state moves", () => {
    const moving = { store: { version: 1 }, clock: { now: () => 0 } };
    const replay = new AnswerReplay(moving, (request) => request.url);
    const first = answer("[1]");
    replay.remember(get("/a"), first, first);
    expect(replay.replay(get("/a"))).toBeDefined();
    moving.store.version = 2;
    expect(replay.replay(get("/a"))).toBeUndefined();
  });
});

describe("replayed answers through the emulator", () => {
  it("are byte-identical and keep the journal and coverage as if routed", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a")] } } });
    const first = await emu.scheduler.request("/v1/jobs?prefix=a");
    const second = await emu.scheduler.request("/v1/jobs?prefix=a");
    expect([second.status, [...second.headers], await second.text()]).toEqual([first.status, [...first.headers], await first.text()]);
    const journal = (await control(emu, "/requests")).requests.filter((r: Json) => r.path === "/v1/jobs");
    expect(journal.map((r: Json) => [r.method, r.query, r.status, r.body])).toEqual([
      ["GET", "?prefix=a", 200, null],
      ["GET", "?prefix=a", 200, null],
    ]);
    const coverage = await control(emu, "/coverage");
    expect(coverage.scheduler.hit.find((h: Json) => h.route === "/v1/jobs")).toMatchObject({ count: 2 });
  });

  it("journal paths and queries are URL's pathname and search, routed or replayed", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a")] } } });
    for (const path of ["/v1/jobs?", "/v1/jobs?", "/v1/job/a%2Fb?x=1&y", "/v1/jobs"]) await emu.scheduler.request(path);
    const journal = (await control(emu, "/requests")).requests.map((r: Json) => [r.path, r.query]);
    expect(journal).toEqual([
      ["/v1/jobs", ""],
      ["/v1/jobs", ""],
      ["/v1/job/a%2Fb", "?x=1&y"],
      ["/v1/jobs", ""],
    ]);
  });

  it("a write between two reads is seen by the second", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a")] } } });
    await emu.scheduler.request("/v1/jobs");
    await emu.scheduler.request("/v1/jobs");
    await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job("b") }) });
    expect(((await (await emu.scheduler.request("/v1/jobs")).json()) as Json[]).map((j) => j.ID)).toEqual(["a", "b"]);
  });

  it("a gzipped answer is replayed only to a client that accepts gzip, and the other way round", async () => {
    const emu = await createStandin({
      fixture: {
        registry: {
          nodes: Array.from({ length: 40 }, (_, i) => ({ Node: `node-${i}`, Address: `10.0.0.${i}` })),
          sessions: Array.from({ length: 40 }, (_, i) => ({ Node: `node-${i}`, Name: `s-${i}` })),
        },
      },
    });
    const plain = async () => emu.registry.request("/v1/session/list");
    const gzipped = async () => emu.registry.request("/v1/session/list", { headers: { "Accept-Encoding": "gzip" } });
    const p1 = await plain();
    const g1 = await gzipped();
    const p2 = await plain();
    const g2 = await gzipped();
    expect([p1.headers.get("content-encoding"), p2.headers.get("content-encoding")]).toEqual([null, null]);
    expect([g1.headers.get("content-encoding"), g2.headers.get("content-encoding")]).toEqual(["gzip", "gzip"]);
    const plainText = await p1.text();
    expect(await p2.text()).toBe(plainText);
    expect(gunzipSync(Buffer.from(await g1.arrayBuffer())).toString()).toBe(plainText);
    expect(gunzipSync(Buffer.from(await g2.arrayBuffer())).toString()).toBe(plainText);
    expect(JSON.parse(plainText)).toHaveLength(40);
  });

  it("over HTTP: a replayed answer has the first one's headers, and the tape replays with no divergence", async () => {
    const running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, fixture: { scheduler: { jobs: [job("a"), job("b")] } } });
    try {
      const url = `${running.urls.scheduler}/v1/jobs`;
      const first = await fetch(url);
      const firstBody = await first.text();
      for (let i = 0; i < 3; i++) {
        const again = await fetch(url);
        const headers = (r: Response) => [...r.headers].filter(([name]) => name !== "date");
        expect([again.status, headers(again), await again.text()]).toEqual([first.status, headers(first), firstBody]);
      }
      const tape = (await (await fetch(`${running.urls.scheduler}/_standin/tape`)).json()) as Json;
      const reads = tape.entries.filter((e: Json) => e.kind === "request" && e.path === "/v1/jobs");
      expect(reads).toHaveLength(4);
      // fetch accepts gzip: the tape keeps the compressed bytes as sent, in full once, then by their hash.
      const sent = Buffer.from(reads[0].response.body.base64, "base64");
      expect(gunzipSync(sent).toString()).toBe(firstBody);
      const hashed = { sha256: createHash("sha256").update(sent).digest("hex"), bytes: sent.length };
      for (const read of reads.slice(1)) expect(read.response.body).toEqual(hashed);
      const { replayTape } = await import("../../src/replay.js");
      expect((await replayTape(tape)).divergences).toEqual([]);
    } finally {
      await running.close();
    }
  });
});
