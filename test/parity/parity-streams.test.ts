/**
 * Streamed answers compared by what they carry: Nomad's event stream by its
 * events (heartbeats and batching aside), a followed log by its data, last
 * offset and file events; standin's stream read on the virtual clock up to
 * the instant the client stopped reading upstream, and no further.
 */
import { describe, expect, it } from "vitest";
import { parity } from "../../src/parity/compare/index.js";
import { replayRecording } from "../../src/parity/compare/replay-recording.js";
import { diffStreams, jsonSequence } from "../../src/parity/compare/stream-diff.js";
import { WorldMap } from "../../src/parity/compare/world-map.js";
import { keptBody } from "../../src/control/tape.js";
import { heartbeats, logData, recordStreamSuite, STREAM_WORLD } from "./recorded-runs.js";

const eventsIn = (text: string) => (jsonSequence(text) ?? []).flatMap((frame) => (frame as { Events?: unknown[] }).Events ?? []) as Array<{ Type: string; Key: string }>;

describe("standin parity on streamed answers, standin against its own recorded streams", () => {
  it("finds no difference in the event stream and the followed log, every ID and time differing", async () => {
    const recording = await recordStreamSuite();
    const report = await parity(recording, { fixture: [{ ...STREAM_WORLD, seed: 2, clock: { start: "2026-06-01T12:00:00Z" } }] });
    expect(report.differences).toEqual([]);
    expect(report.summary).toMatchObject({ exchanges: 6, differences: 0, skipped: 0 });
  });

  it("read standin's streams up to the recorded cuts: the same events and log data, none of what came after", async () => {
    const recording = await recordStreamSuite();
    const compared = await replayRecording(recording, { fixture: [{ ...STREAM_WORLD, seed: 2 }] });
    const text = (seq: number, side: "recorded" | "standin") => compared.find((e) => e.seq === seq)![side]!.body!.text!;
    // The event stream: the same events (by type), so something was compared; the job registered after the cut is in neither.
    const types = (side: "recorded" | "standin") => eventsIn(text(1, side)).map((e) => e.Type);
    expect(types("standin")).toEqual(types("recorded"));
    expect(types("recorded")).toContain("AllocationUpdated");
    expect(eventsIn(text(1, "standin")).filter((e) => e.Key === "later")).toEqual([]);
    expect(heartbeats(text(1, "standin"))).toBe(2);
    expect(compared.find((e) => e.seq === 1)!.standin!.streamed).toBe(true);
    // The followed log: what the task had written by the cut, 2 s after it started.
    expect(logData(text(4, "standin"))).toBe("booting\nlistening on :8080\n");
    expect(logData(text(4, "recorded"))).toBe("booting\nlistening on :8080\n");
  });
});

describe("comparing two streams", () => {
  const body = (text: string) => keptBody(text);
  const frame = (data: string, offset: number, fileEvent?: string) =>
    JSON.stringify({ Data: Buffer.from(data).toString("base64"), File: "alloc/logs/t.stdout.0", ...(fileEvent && { FileEvent: fileEvent }), Offset: offset });
  const logs = "/v1/client/fs/logs/x?task=t&type=stdout&follow=true";

  it("takes a log's data end to end, however it was framed, heartbeats aside", () => {
    const upstream = `${frame("boot", 4)}{}${frame("ing\n", 8)}`;
    const standin = `{}${frame("booting\n", 8)}{}`;
    expect(diffStreams(new WorldMap(0, 0), "scheduler", logs, body(upstream), body(standin))).toEqual([]);
  });

  it("reports different data once, the offset and file events apart", () => {
    const upstream = `${frame("booting\n", 8)}${frame("ready\n", 14, "file truncated")}`;
    const standin = `${frame("booting\n", 8)}${frame("stopping\n", 17)}`;
    const found = diffStreams(new WorldMap(0, 0), "scheduler", logs, body(upstream), body(standin));
    expect(found.map((d) => `${d.kind} ${d.at}`)).toEqual(["value stream.Data", "value stream.Offset", "missing stream.FileEvents[0]"]);
    expect(found[0]).toMatchObject({ recorded: "booting\nready\n", standin: "booting\nstopping\n", note: expect.stringMatching(/part at character 8$/) });
  });

  it("leaves out a last frame the cut broke in two, and maps the IDs a log mentions", () => {
    const [a, x] = ["0b8e2c1a-1111-4a4a-8b8b-000000000001", "f00dfeed-3333-4c4c-9d9d-000000000003"];
    const upstream = `${frame(`alloc ${a}\n`, 43)}${frame("more", 47).slice(0, 20)}`;
    const standin = frame(`alloc ${x}\n`, 43);
    expect(diffStreams(new WorldMap(0, 0), "scheduler", logs, body(upstream), body(standin))).toEqual([]);
  });

  it("compares a plain text stream as text, and any other JSON stream as its documents", () => {
    const plain = "/v1/client/fs/logs/x?task=t&type=stdout&follow=true&plain=true";
    expect(diffStreams(new WorldMap(0, 0), "scheduler", plain, body("a\nb\n"), body("a\nb\n"))).toEqual([]);
    expect(diffStreams(new WorldMap(0, 0), "scheduler", plain, body("a\nb\n"), body("a\nc\n")).map((d) => d.at)).toEqual(["stream"]);
    const found = diffStreams(new WorldMap(0, 0), "registry", "/v1/some/stream", body('{}{"A":1}\n{"A":2}'), body('{"A":1}\n{}\n{"A":3}'));
    expect(found.map((d) => `${d.kind} ${d.at}`)).toEqual(["value stream[1].A"]);
  });

  it("aligns events by topic, type and key: one event more is one extra, not a difference at every later place", () => {
    const event = (Type: string, Key: string, Index: number) => ({ Topic: "Job", Type, Key, Namespace: "default", FilterKeys: null, Index, Payload: { Job: { ID: Key } } });
    const stream = (...frames: unknown[]) => body(frames.map((f) => JSON.stringify(f)).join("\n"));
    const upstream = stream({}, { Index: 3, Events: [event("JobRegistered", "a", 3), event("JobRegistered", "b", 3)] }, { Index: 5, Events: [event("JobDeregistered", "a", 5)] });
    const standin = stream(
      {},
      { Index: 7, Events: [event("JobRegistered", "a", 7)] },
      { Index: 8, Events: [event("PlanResult", "a", 8)] },
      { Index: 9, Events: [event("JobRegistered", "b", 9)] },
      { Index: 10, Events: [event("JobDeregistered", "a", 10)] },
    );
    const found = diffStreams(new WorldMap(0, 0), "scheduler", "/v1/event/stream", upstream, standin);
    // Upstream's a and b share an index where standin's do not: the index moves differently at b, once.
    expect(found.map((d) => `${d.kind} ${d.at}`)).toEqual(["extra stream[1]", "value stream[1].Index"]);
  });
});
