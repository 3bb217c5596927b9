/**
 * The event stream's fan-out: one write taken by many subscribers is
 * serialised once per distinct set of events their filters let through, and
 * every subscriber of that set gets the same bytes. Counted (the broker's
 * `linesEncoded` / `bytesEncoded`), not timed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { brokerWork } from "../../src/scheduler/events/stream-event.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

/** A subscriber: its stream is read to the end once `stop` aborts it. */
async function subscribe(emu: Standin, query = ""): Promise<{ stop: () => Promise<string> }> {
  const controller = new AbortController();
  controllers.push(controller);
  const res = await emu.scheduler.request(`/v1/event/stream${query}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const body = res.text();
  return {
    stop: async () => {
      controller.abort();
      return body;
    },
  };
}

/** The frames of a body that carry events (heartbeats `{}` left out), as the lines sent. */
const eventLines = (raw: string) => raw.split("\n").filter((line) => line.startsWith('{"Events"'));

async function registerBig(emu: Standin, id: string): Promise<void> {
  const job = { ...webJob(id), Meta: { blob: "m".repeat(16 * 1024) } };
  const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job }) });
  expect(res.status).toBe(200);
}

/** Every batch's events as one subscriber of `query` sees them: the broker's buffer, replayed. */
async function buffered(emu: Standin, query: string): Promise<string[]> {
  const late = await subscribe(emu, query);
  await new Promise((resolve) => setImmediate(resolve));
  return eventLines(await late.stop());
}

describe("GET /v1/event/stream fan-out", () => {
  it("encodes each write's frame once however many subscribers take it; each gets the same bytes", async () => {
    const emu = await createStandin();
    const subscribers = await Promise.all(Array.from({ length: 25 }, () => subscribe(emu)));
    const before = { ...brokerWork };
    for (let i = 0; i < 3; i++) await registerBig(emu, `fan-${i}`);
    emu.clock.advance("1m"); // plans, allocations running, a deployment: batches of every topic
    const linesEncoded = brokerWork.linesEncoded - before.linesEncoded;
    const bytesEncoded = brokerWork.bytesEncoded - before.bytesEncoded;
    const bodies = await Promise.all(subscribers.map((s) => s.stop()));

    // Every subscriber got the same body (heartbeats included).
    expect(new Set(bodies).size).toBe(1);
    const lines = eventLines(bodies[0]!).slice(1); // the first is the buffered node registration, replayed at subscribe
    expect(lines.length).toBeGreaterThanOrEqual(6);
    expect(lines.filter((line) => line.includes('"Topic":"Job"')).length).toBeGreaterThanOrEqual(3);
    // Encoded once each: not once per subscriber (25×).
    expect(linesEncoded).toBe(lines.length);
    expect(bytesEncoded).toBe(lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0));
  });

  it("subscribers whose filters let the same events through share one encoding of them", async () => {
    const emu = await createStandin();
    const queries = ["?topic=Job", "?topic=Evaluation", "", "?topic=Job&topic=Evaluation", "?topic=Allocation&namespace=*"];
    const groups = await Promise.all(queries.map((query) => Promise.all(Array.from({ length: 8 }, () => subscribe(emu, query)))));
    const before = brokerWork.linesEncoded;
    for (let i = 0; i < 3; i++) await registerBig(emu, `filtered-${i}`);
    emu.clock.advance("1m");
    const encoded = brokerWork.linesEncoded - before;
    const bodies = await Promise.all(groups.map((group) => Promise.all(group.map((s) => s.stop()))));

    const distinct = new Set<string>();
    for (const [g, group] of bodies.entries()) {
      expect(new Set(group).size, queries[g]).toBe(1);
      // The unfiltered subscribers' first line is the node registration replayed at subscribe: not this write's.
      for (const line of eventLines(group[0]!)) if (!line.includes('"Topic":"Node"')) distinct.add(line);
    }
    // What each filter let through is what it asked for …
    const topics = (body: string) => new Set(eventLines(body).flatMap((line) => (JSON.parse(line) as Json).Events.map((e: Json) => e.Topic)));
    expect([...topics(bodies[0]![0]!)]).toEqual(["Job"]);
    expect([...topics(bodies[1]![0]!)]).toEqual(["Evaluation"]);
    expect([...topics(bodies[4]![0]!)]).toEqual(["Allocation"]);
    // … and each distinct line was encoded once, for all 8 of its subscribers (and the groups it was the same for).
    expect(distinct.size).toBeGreaterThanOrEqual(9);
    expect(encoded).toBe(distinct.size);
  });

  it("a subscriber replaying the buffer later gets the very lines the live ones got", async () => {
    const emu = await createStandin();
    const queries = ["", "?topic=Job", "?topic=Evaluation"];
    const live = await Promise.all(queries.map((query) => subscribe(emu, query)));
    for (let i = 0; i < 3; i++) await registerBig(emu, `replay-${i}`);
    emu.clock.advance("1m");
    const bodies = await Promise.all(live.map((s) => s.stop()));
    for (const [q, query] of queries.entries()) {
      const lines = eventLines(bodies[q]!);
      expect(lines.length, query).toBeGreaterThanOrEqual(3);
      const topic = query.split("=")[1];
      if (topic)
        for (const line of lines)
          expect(
            (JSON.parse(line) as Json).Events.every((e: Json) => e.Topic === topic),
            query,
          ).toBe(true);
      expect(await buffered(emu, query), query).toEqual(lines);
    }
  });
});
