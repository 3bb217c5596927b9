/**
 * core/json-stream: large JSON written in slices, byte for byte what
 * JSON.stringify writes, with turns of the event loop between slices.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonStream, LazyArray } from "../../src/core/json-stream.js";
import { createStandin } from "../../src/emulator.js";
import { turnsDuring } from "../support/turns.js";

const text = (value: unknown) => new Response(jsonStream(value)).text();

describe("jsonStream", () => {
  it("writes exactly JSON.stringify's bytes for any plain JSON value", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        expect(await text(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  it("skips undefined members and writes null for undefined items, as stringify does", async () => {
    const value = { a: undefined, b: [undefined, 1, () => 0], c: { d: undefined }, e: new Date(0) };
    expect(await text(value)).toBe(JSON.stringify(value));
  });

  it("makes a lazy array's items one by one, in order", async () => {
    const made: number[] = [];
    const value = { items: new LazyArray(3, (i) => (made.push(i), { i })) };
    expect(await text(value)).toBe('{"items":[{"i":0},{"i":1},{"i":2}]}');
    expect(made).toEqual([0, 1, 2]);
  });

  it("gives the event loop turns while a large document is written", async () => {
    const big = Array.from({ length: 50_000 }, (_, i) => ({ id: i, name: `item-${i}`, tags: ["a", "b", "c"] }));
    const { result: out, turns } = await turnsDuring(() => text(big));
    expect(out).toBe(JSON.stringify(big));
    // Several slices, each followed by a turn in which other work (here, the ticker) runs.
    expect(turns).toBeGreaterThan(3);
  });
});

describe("streamed control answers", () => {
  it("GET /_standin/tape and GET /_standin/snapshot are the documents, as before", async () => {
    const emu = await createStandin();
    for (let i = 0; i < 50; i++) await emu.registry.request(`/v1/kv/k${i}`, { method: "PUT", body: `v${i}` });
    const tape = await (await emu.scheduler.request("/_standin/tape")).text();
    expect(tape).toBe(JSON.stringify(await emu.exportTape()));
    const res = await emu.scheduler.request("/_standin/snapshot");
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe(JSON.stringify(emu.snapshot()));
  });
});
