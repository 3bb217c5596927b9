/**
 * A client repeating itself (a poller, a load test) gets journal and tape
 * entries that share what they have in common with the previous request:
 * one header record, one path, one decoded body, one held copy of the body
 * (core/repeats). Sharing must never mix two requests up: every entry still
 * says exactly what its request sent.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LastMade, sameBytes, sameStrings } from "../../src/core/repeats.js";
import { ENTRY_OVERHEAD } from "../../src/control/tape.js";
import { noteIncoming, requestHeaderRecord } from "../../src/http/known-bodies.js";
import { startStandin, type RunningStandin } from "../../src/server.js";

describe("LastMade", () => {
  it("makes a value once for a repeated key and again for a different one", () => {
    const made: string[] = [];
    const upper = new LastMade(
      (a: string, b: string) => a === b,
      (key: string) => {
        made.push(key);
        return key.toUpperCase();
      },
    );
    expect([upper.get("a"), upper.get("a"), upper.get("b"), upper.get("a")]).toEqual(["A", "A", "B", "A"]);
    expect(made).toEqual(["a", "b", "a"]);
  });

  it("compares bytes and string lists by content, short and long", () => {
    expect(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(sameBytes(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
    const long = Buffer.alloc(5000, 7);
    const other = Buffer.alloc(5000, 7);
    expect(sameBytes(long, other)).toBe(true);
    other[4999] = 8;
    expect(sameBytes(long, other)).toBe(false);
    // A view into a larger buffer compares its own bytes only.
    const pool = Buffer.from("xxhelloyy");
    expect(sameBytes(pool.subarray(2, 7), Buffer.from("hello"))).toBe(true);
    expect(sameStrings(["a", "b"], ["a", "b"])).toBe(true);
    expect(sameStrings(["a", "b"], ["a", "c"])).toBe(false);
    expect(sameStrings(["a"], ["a", "b"])).toBe(false);
  });
});

describe("request header records", () => {
  const requestWith = (rawHeaders: string[]) => {
    const request = new Request("http://h/x");
    noteIncoming(request, { rawHeaders });
    return request;
  };

  it("requests with the same raw headers share one frozen record; others get their own", () => {
    const first = requestHeaderRecord(requestWith(["Host", "h", "X-Token", "one"]));
    const again = requestHeaderRecord(requestWith(["Host", "h", "X-Token", "one"]));
    const changed = requestHeaderRecord(requestWith(["Host", "h", "X-Token", "two"]));
    expect(again).toBe(first);
    expect(changed).not.toBe(first);
    expect(first).toEqual({ host: "h", "x-token": "one" });
    expect(changed).toEqual({ host: "h", "x-token": "two" });
    expect(Object.isFrozen(first)).toBe(true);
    expect(() => {
      (first as Record<string, string>)["x-token"] = "changed";
    }).toThrow(TypeError);
  });
});

describe("repeated requests over HTTP", () => {
  let srv: RunningStandin;
  beforeAll(async () => {
    srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
  });
  afterAll(() => srv.close());

  const echo = (message: string, headers: Record<string, string> = {}) =>
    fetch(`${srv.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify({ message }) });
  const tapeBytes = async () => ((await (await fetch(`${srv.urls.control}/recording`)).json()) as { tape: { bytes: number } }).tape.bytes;

  it("a repeated body is held once by the tape; a new body is charged; every entry says what its request sent", async () => {
    await (await fetch(`${srv.urls.control}/reset`, { method: "POST" })).arrayBuffer();
    await (await echo("same")).arrayBuffer();
    const afterFirst = await tapeBytes();
    await (await echo("same")).arrayBuffer();
    const afterRepeat = await tapeBytes();
    // Same headers, same body, same answer: only the entry and its path are new.
    expect(afterRepeat - afterFirst).toBe(ENTRY_OVERHEAD + "/echo?key=test-api-key".length);
    await (await echo("diff")).arrayBuffer();
    const afterNew = await tapeBytes();
    // A body of the same length but other bytes, and so another answer: both are held.
    expect(afterNew - afterRepeat).toBe(ENTRY_OVERHEAD + "/echo?key=test-api-key".length + '{"message":"diff"}'.length * 2);
    await (await echo("same", { "X-Trace": "t1" })).arrayBuffer();

    const { requests } = (await (await fetch(`${srv.urls.control}/requests`)).json()) as {
      requests: Array<{ path: string; body: string | null; headers: Record<string, string> }>;
    };
    const echoes = requests.filter((r) => r.path === "/echo");
    expect(echoes.map((r) => r.body)).toEqual(['{"message":"same"}', '{"message":"same"}', '{"message":"diff"}', '{"message":"same"}']);
    expect(echoes.map((r) => r.headers["x-trace"])).toEqual([undefined, undefined, undefined, "t1"]);

    const tape = (await (await fetch(`${srv.urls.control}/tape`)).json()) as {
      entries: Array<{ path: string; headers: Record<string, string>; body?: { text?: string }; response?: { body?: { text?: string; sha256?: string } } }>;
    };
    const recorded = tape.entries.filter((e) => e.path === "/echo?key=test-api-key");
    expect(recorded.map((e) => e.body?.text)).toEqual(['{"message":"same"}', '{"message":"same"}', '{"message":"diff"}', '{"message":"same"}']);
    // An answer written once in full is written again as its hash (the tape's export rule).
    const sha = (text: string) => createHash("sha256").update(text).digest("hex");
    expect(recorded.map((e) => e.response?.body?.text ?? e.response?.body?.sha256)).toEqual([
      '{"message":"same"}',
      sha('{"message":"same"}'),
      '{"message":"diff"}',
      sha('{"message":"same"}'),
    ]);
    expect(recorded.map((e) => e.headers["x-trace"])).toEqual([undefined, undefined, undefined, "t1"]);
  });

  it("the echo's reused parse and answer follow what each request sent: its bytes, its charset, its encoding", async () => {
    const send = async (body: string, contentType: string, extra: Record<string, string> = {}) => {
      const res = await fetch(`${srv.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": contentType, ...extra }, body });
      return `${res.status} ${await res.text()}`;
    };
    const same = JSON.stringify({ message: "same" });
    const deep = `{"message":${"[".repeat(20_000)}${"]".repeat(20_000)}}`;
    const answers = [
      await send(same, "application/json"),
      await send(same, "application/json"),
      // The same bytes under a charset body-parser refuses, then an encoding it refuses: refused, not the last answer.
      await send(same, "application/json; charset=latin1"),
      await send(same, "application/json", { "Content-Encoding": "br" }),
      await send(same, "application/json"),
      await send(JSON.stringify({ message: ["a", 1] }), "application/json"),
      // Too deep for res.json: express's 500 page every time (nothing is kept of a failed answer).
      (await send(deep, "application/json")).slice(0, 3),
      (await send(deep, "application/json")).slice(0, 3),
      await send(same, "application/json"),
    ];
    expect(answers).toEqual([
      `200 ${same}`,
      `200 ${same}`,
      expect.stringMatching(/^415 /),
      expect.stringMatching(/^415 /),
      `200 ${same}`,
      '200 {"message":["a",1]}',
      "500",
      "500",
      `200 ${same}`,
    ]);
  });

  it("a repeated URL with a token is written down redacted every time; the same URL with another method is covered as that method", async () => {
    // Coverage describes the run (a reset keeps it): counted from here.
    const echoHits = async () =>
      ((await (await fetch(`${srv.urls.control}/coverage`)).json()) as { echo: { hit: Array<{ route: string; count: number }> } }).echo.hit.find((h) => h.route === "/echo")
        ?.count ?? 0;
    const before = await echoHits();
    await (await fetch(`${srv.urls.control}/reset`, { method: "POST" })).arrayBuffer();
    for (let i = 0; i < 2; i++) await (await fetch(`${srv.urls.echo}/echo?key=test-api-key&token=s3cret`, { method: "POST", body: "{}" })).arrayBuffer();
    await (await fetch(`${srv.urls.echo}/echo?key=test-api-key&token=s3cret`)).arrayBuffer();
    const tape = (await (await fetch(`${srv.urls.control}/tape`)).json()) as { entries: Array<{ kind: string; method?: string; path?: string }> };
    const paths = tape.entries.filter((e) => e.kind === "request").map((e) => `${e.method} ${e.path}`);
    expect(paths).toHaveLength(3);
    for (const path of paths) expect(path).not.toContain("s3cret");
    expect(paths[0]).toBe(paths[1]);
    expect((await echoHits()) - before).toBe(2);
  });
});
