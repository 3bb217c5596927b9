/**
 * standin compared with itself: a recording of standin's own answers (seed
 * 1) replayed against a fresh standin with another seed (2), so every ID
 * and secret differs between the two runs, must give 0 differences — which
 * proves the world map sound (IDs by first appearance, the bootstrap's
 * secret, indexes, times, a blocking query's wait on the virtual clock).
 */
import { describe, expect, it } from "vitest";
import { parity } from "../../src/parity/compare/index.js";
import { replayRecording } from "../../src/parity/compare/replay-recording.js";
import { recordSuite, WORLD } from "./recorded-runs.js";

describe("standin parity against standin's own answers", () => {
  it("finds no difference although every ID, secret and time differs", async () => {
    const recording = await recordSuite();
    // Another seed (every ID and secret differs) and another start (every time does): still the same answers.
    const report = await parity(recording, { fixture: [{ ...WORLD, seed: 2, clock: { start: "2026-06-01T12:00:00Z" } }] });
    expect(report.differences).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.summary).toMatchObject({ exchanges: recording.exchanges.length, differences: 0, notEmulated: 0, skipped: 0 });
    expect(report.routes.map((r) => `${r.service} ${r.route} ×${r.exchanges}`)).toEqual([
      "echo POST /echo ×1",
      "registry GET /v1/kv/:key* ×3",
      "registry GET /v1/session/info/:session_id* ×2",
      "registry GET /v1/session/list ×1",
      "registry PUT /v1/kv/:key* ×2",
      "registry PUT /v1/session/create ×1",
      "scheduler GET /v1/acl/token/self ×1",
      "scheduler GET /v1/evaluation/:eval_id ×1",
      "scheduler GET /v1/job/:job_id+ ×2",
      "scheduler GET /v1/job/:job_id+/allocations ×1",
      "scheduler GET /v1/jobs ×2",
      "scheduler POST /v1/acl/bootstrap ×1",
      "scheduler PUT /v1/jobs ×1",
    ]);
  });

  it("maps the two worlds: the IDs and the secret did differ, and the replay used standin's", async () => {
    const recording = await recordSuite();
    const compared = await replayRecording(recording, { fixture: [{ ...WORLD, seed: 2 }] });
    const text = (seq: number, side: "recorded" | "standin") => compared.find((e) => e.seq === seq)![side]!.body!.text!;
    // The job's evaluation: a different ID, found (200) by the ID standin gave.
    const recordedEval = JSON.parse(text(2, "recorded")).EvalID;
    const standinEval = JSON.parse(text(2, "standin")).EvalID;
    expect(recordedEval).not.toBe(standinEval);
    expect(compared.find((e) => e.seq === 5)!.standin!.status).toBe(200);
    expect(JSON.parse(text(5, "standin")).ID).toBe(standinEval);
    // The bootstrap's secret: another one, and the token it is sent as is standin's (token/self answers 200).
    expect(text(1, "recorded")).not.toBe(text(1, "standin"));
    expect(compared.find((e) => e.seq === 7)!.standin!.status).toBe(200);
    // The blocking queries answered in the replay, the one at its wait's end, the one by the write.
    expect(compared.find((e) => e.seq === 9)!.standin!.status).toBe(200);
    expect(JSON.parse(text(13, "standin"))[0].Value).toBe(Buffer.from("world").toString("base64"));
    // The session's TTL ran out in the replay too.
    expect(JSON.parse(text(17, "standin"))).toEqual(JSON.parse(text(17, "recorded")));
    // The API key, recorded as a reference, was sent as the key the starting world holds.
    expect(compared.find((e) => e.seq === 19)!.path).toMatch(/^\/echo\?key=standin-redacted%3Asha256%3A[0-9a-f]{16}$/);
    expect(compared.find((e) => e.seq === 19)!.standin!.status).toBe(200);
  });
});
