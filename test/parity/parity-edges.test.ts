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
import { smallJob } from "../support/jobs.js";
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

  describe("lists of identified things, matched by identity", () => {
    const diff = (recorded: unknown, local: unknown, world = new WorldMap(0, 0)) => diffJson(world, "scheduler", recorded, local).map((d) => `${d.kind} ${d.at}`);
    const uuid = (n: number, prefix = "0") => `${prefix}${n}aaaaaa-0000-4000-8000-000000000000`.slice(0, 36);

    it("one element more upstream is one missing element, its neighbours compared with their own", () => {
      const jobs = (...ids: string[]) => ids.map((ID) => ({ ID, Status: "running" }));
      expect(diff(jobs("ghost", "a", "b", "c"), jobs("a", "b", "c"))).toEqual(["missing $[0]"]);
      expect(diff(jobs("a", "b", "c"), jobs("a", "x", "b", "c"))).toEqual(["extra $[1]"]);
      const changed = jobs("a", "b", "c");
      changed[2]!.Status = "dead";
      expect(diff([{ ID: "ghost", Status: "x" }, ...changed], jobs("a", "b", "c"))).toEqual(["missing $[0]", "value $[3].Status"]);
    });

    it("the same elements in another order are one order difference, with each element's own differences", () => {
      const checks = (statuses: Record<string, string>) => Object.entries(statuses).map(([key, Status]) => ({ Node: key.split("/")[0], CheckID: key.split("/")[1], Status }));
      // A check ID alone repeats across nodes: Node + CheckID identifies a check.
      const upstream = checks({ "n1/serfHealth": "passing", "n2/serfHealth": "passing", "n1/web": "critical" });
      const standin = checks({ "n1/web": "passing", "n1/serfHealth": "passing", "n2/serfHealth": "passing" });
      const world = new WorldMap(0, 0);
      world.same("name", "n1", "n1", "registry");
      world.same("name", "n2", "n2", "registry");
      expect(diff(upstream, standin, world)).toEqual(["order $", "value $[2].Status"]);
    });

    it("pairs elements whose IDs are not paired yet by their content, then the rest by order", () => {
      const allocs = (prefix: string, ...statuses: string[]) => statuses.map((ClientStatus, i) => ({ ID: uuid(i + 1, prefix), ClientStatus }));
      // Standin's running alloc sorts first, the upstream's second: paired by content, no order difference (each side sorted by its IDs).
      expect(diff(allocs("0", "pending", "running", "failed"), allocs("9", "running", "pending"))).toEqual(["missing $[2]"]);
      // Nothing equal: the one left on each side is the same thing, differing.
      expect(diff(allocs("0", "running"), allocs("9", "failed"))).toEqual(["value $[0].ClientStatus"]);
    });

    it("keeps position matching for lists without identities, and a list of strings of the same length", () => {
      expect(diff([{ A: 1 }, { A: 2 }], [{ A: 0 }, { A: 1 }, { A: 2 }])).toEqual(["value $[0].A", "value $[1].A", "extra $[2]"]);
      expect(diff(["a", "b"], ["a", "c"])).toEqual(["value $[1]"]);
      expect(diff(["a", "b", "c"], ["a", "c"])).toEqual(["missing $[1]"]);
    });
  });

  it("replays a request to standin's own control API for its effect: a clock advance moves the replay's clock as far, not compared", async () => {
    const emu = await createStandin({ fixture: "default", seed: 1 });
    let recording: Recording;
    try {
      const r = new TestRecorder(emu);
      await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("moved") } });
      // The upstream's clock jumps 5 s ahead of the recording's time, as `control.Advance("5s")` does in a realtime upstream.
      await r.send("scheduler", "POST", "/_standin/clock/advance", { body: { by: "5s" } });
      r.advance(20);
      const [alloc] = (await r.send("scheduler", "GET", "/v1/job/moved/allocations")).body;
      expect(alloc.ClientStatus).toBe("running");
      // 3 s of recorded time later, a job is submitted: its SubmitTime is 8.02 s after the start upstream, and must be in the replay.
      r.advance(3000);
      await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("later") } });
      await r.send("scheduler", "GET", "/v1/job/later");
      recording = r.recording();
    } finally {
      emu.close();
    }
    // The recorded times: the advance took no recorded time, so without it the replay would still be at 20 ms.
    expect(recording.exchanges.map((e) => e.sentMs)).toEqual([0, 0, 20, 3020, 3020]);
    const report = await parity(recording, { fixture: ["default", { seed: 2 }] });
    expect(report.differences).toEqual([]);
    expect(report.exchanges.find((e) => e.seq === 2)).toMatchObject({ skipped: "a request to standin's control API: replayed for its effect, not compared" });
    expect(report.summary).toMatchObject({ exchanges: 5, differences: 0, skipped: 1 });
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
