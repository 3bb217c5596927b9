/**
 * The edges of a parity run: an answer the upstream gave that standin never
 * gives (a blocking query woken by nothing standin saw), an exchange the
 * upstream never answered, and list order that differs only because the
 * two worlds' IDs sort differently.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { parity } from "../../src/parity/compare/index.js";
import { diffJson } from "../../src/parity/compare/json-diff.js";
import { WorldMap } from "../../src/parity/compare/world-map.js";
import type { Recording } from "../../src/parity/recording.js";
import { differingUpstream } from "./differing-upstream.js";
import { TestRecorder } from "./parity-recorder.js";

describe("standin parity at the edges", () => {
  it("reports a blocking query the upstream answered and standin still holds as unanswered, once", async () => {
    const emu = await createStandin({ fixture: "default" });
    // The upstream answers the blocking query at once, as if something had written the key.
    const upstream = await differingUpstream(
      emu,
      (_, answer) => answer,
      (request) => (request.path.startsWith("/v1/kv/z?index=") ? { status: 200, headers: { "content-type": "application/json", "x-consul-index": "99" }, body: "[]" } : undefined),
    );
    let recording: Recording;
    try {
      const r = new TestRecorder(emu, upstream.upstream);
      const put = await r.send("registry", "PUT", "/v1/kv/z", { body: "1" });
      expect(put.status).toBe(200);
      const read = await r.send("registry", "GET", "/v1/kv/z");
      await r.send("registry", "GET", `/v1/kv/z?index=${read.headers["x-consul-index"]}&wait=1m`);
      await r.send("registry", "GET", "/v1/kv/z");
      recording = r.recording();
    } finally {
      await upstream.close();
      emu.close();
    }
    const report = await parity(recording);
    expect(report.differences.map((d) => `#${d.seq} ${d.kind} ${d.at}`)).toEqual(["#3 unanswered status"]);
    expect(report.ok).toBe(false);
  });

  it("does not compare an exchange the upstream never answered, and says so", async () => {
    const emu = await createStandin({ fixture: "default" });
    let recording: Recording;
    try {
      const r = new TestRecorder(emu);
      await r.send("registry", "PUT", "/v1/kv/a", { body: "1" });
      recording = r.recording();
    } finally {
      emu.close();
    }
    const refused = { seq: 2, service: "registry" as const, method: "GET", path: "/v1/kv/a", headers: {}, sentMs: 0, error: "the upstream refused the connection" };
    const report = await parity({ ...recording, exchanges: [...recording.exchanges, refused] });
    expect(report.summary).toMatchObject({ exchanges: 2, differences: 0, skipped: 1 });
    expect(report.exchanges.find((e) => e.seq === 2)!.skipped).toBe("the upstream refused the connection");
    expect(report.ok).toBe(true);
  });

  it("takes a list both sides sort by ID as the same order, and any other reordering as one order difference", () => {
    const ids = (prefix: string) => [1, 2, 3].map((n) => `${prefix}${n}aaaaaa-0000-4000-8000-000000000000`.slice(0, 36));
    const [upstream, local] = [ids("0"), ids("9")];
    const sessions = (list: string[]) => list.map((ID, i) => ({ ID, Name: `s${i}` }));
    // The upstream's s0 is standin's s2: each side sorted by its own IDs.
    const world = new WorldMap(0, 0);
    expect(
      diffJson(
        world,
        "registry",
        sessions(upstream),
        sessions(local)
          .reverse()
          .map((s, i) => ({ ...s, Name: `s${2 - i}` }))
          .reverse(),
      ),
    ).toEqual([]);
    expect(diffJson(new WorldMap(0, 0), "registry", ["a", "b", "c"], ["c", "a", "b"])).toEqual([{ kind: "order", at: "$", note: "the same elements in another order" }]);
  });

  it("refuses a recording that holds an exchange twice", async () => {
    const exchange = { seq: 1, service: "registry", method: "GET", path: "/v1/kv/a", headers: {}, sentMs: 0 };
    const recording = {
      format: "standin-recording",
      version: 1,
      recordedBy: "test",
      upstreams: {},
      startedAt: "2026-01-01T00:00:00Z",
      exchanges: [exchange, exchange],
      truncated: false,
    };
    await expect(parity(recording)).rejects.toThrow("not a standin recording: exchange #1 appears twice");
  });

  it("reports a request standin cannot even take (a header value it refuses) as unanswered, not a crash", async () => {
    const exchange = {
      seq: 1,
      service: "registry" as const,
      method: "GET",
      path: "/v1/kv/a",
      headers: { "x-bad": "line\nbreak" },
      sentMs: 0,
      answeredMs: 1,
      response: { status: 404, headers: {} },
    };
    const recording: Recording = {
      format: "standin-recording",
      version: 1,
      recordedBy: "test",
      upstreams: {},
      startedAt: "2026-01-01T00:00:00Z",
      exchanges: [exchange],
      truncated: false,
    };
    const report = await parity(recording);
    expect(report.differences.map((d) => d.kind)).toEqual(["unanswered"]);
  });
});
