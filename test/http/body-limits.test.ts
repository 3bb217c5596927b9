/**
 * A JSON body past MAX_BODY_VALUES is refused before it is parsed (413, plain
 * text, nothing changes), on every route that decodes JSON; one within it is
 * decoded as before; a KV value is bytes, never parsed, whatever it holds.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_BODY_VALUES, TOO_MANY_VALUES, exceedsValueCount } from "../../src/core/json.js";
import { createStandin } from "../../src/emulator.js";
import { turnsDuring } from "../support/turns.js";

const metaOf = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
const jobWithMeta = (n: number) =>
  JSON.stringify({
    Job: { ID: "big", Type: "batch", Datacenters: ["dc1"], Meta: metaOf(n), TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }] },
  });

describe("exceedsValueCount", () => {
  it.each([
    ["[1,2,3]", 2, true],
    ["[1,2,3]", 3, false],
    ['{"a":"x,y,z,w"}', 1, false],
    ['["a\\",b","c"]', 2, false],
    ['["a\\\\",",",""]', 2, true],
  ])("%s with limit %i → %s", (text, limit, expected) => {
    expect(exceedsValueCount(text, limit)).toBe(expected);
  });
});

describe("bodies past the value limit", () => {
  it.each([
    ["scheduler", "PUT", "/v1/jobs", () => jobWithMeta(MAX_BODY_VALUES + 10)],
    ["scheduler", "PUT", "/v1/validate/job", () => jobWithMeta(MAX_BODY_VALUES + 10)],
    ["registry", "PUT", "/v1/session/create", () => JSON.stringify(metaOf(MAX_BODY_VALUES + 10))],
    ["registry", "PUT", "/v1/catalog/register", () => JSON.stringify({ Node: "n", Address: "10.0.0.1", NodeMeta: metaOf(MAX_BODY_VALUES + 10) })],
  ] as const)("%s %s %s: 413 in plain text, nothing changes", async (service, method, path, body) => {
    const emu = await createStandin();
    const hash = emu.stateHash();
    const res = await emu[service].request(path, { method, body: body() });
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(TOO_MANY_VALUES);
    expect(emu.stateHash()).toBe(hash);
  });

  it("a job just within the limit registers as before", async () => {
    const emu = await createStandin();
    const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: jobWithMeta(MAX_BODY_VALUES - 100) });
    expect(res.status).toBe(200);
    const job = (await (await emu.scheduler.request("/v1/job/big")).json()) as { Meta: Record<string, string> };
    expect(Object.keys(job.Meta)).toHaveLength(MAX_BODY_VALUES - 100);
  });

  it("a KV value is bytes: a JSON value past the limit is stored (within Consul's 512 KB)", async () => {
    const emu = await createStandin();
    const value = JSON.stringify(Array.from({ length: MAX_BODY_VALUES + 10 }, () => 1));
    const res = await emu.registry.request("/v1/kv/json", { method: "PUT", body: value });
    expect(res.status).toBe(200);
    expect(await (await emu.registry.request("/v1/kv/json?raw")).text()).toBe(value);
  });
});

describe("large answers go out in slices", () => {
  it("a 1.5 MB listing: same bytes and Content-Length, other work runs between its slices, and the tape still has it", async () => {
    const emu = await createStandin();
    const value = "a".repeat(500 * 1024);
    for (let i = 0; i < 3; i++) await emu.registry.request(`/v1/kv/big/${i}`, { method: "PUT", body: value });
    let res!: Response;
    const { result: text, turns } = await turnsDuring(async () => {
      res = await emu.registry.request("/v1/kv/big?recurse");
      return res.text();
    });
    const entries = JSON.parse(text) as Array<{ Value: string }>;
    expect(entries).toHaveLength(3);
    expect(Buffer.from(entries[0]!.Value, "base64").toString()).toBe(value);
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(turns).toBeGreaterThan(3);
    // Past 1 MiB the tape keeps a body as its hash.
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as { entries: Array<{ path: string; response: { body: { sha256?: string; bytes: number } } }> };
    const kept = tape.entries.find((e) => e.path === "/v1/kv/big?recurse")!.response.body;
    expect(kept).toEqual({ sha256: createHash("sha256").update(text).digest("hex"), bytes: Buffer.byteLength(text) });
  });
});
