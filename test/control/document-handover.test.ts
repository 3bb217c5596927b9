/**
 * A large valid control document is parsed once, in the document checker's
 * thread, and handed to its route in pieces (src/control/document-pieces.ts):
 * the route gets what JSON.parse would have given it (the same keys in the
 * same order, `"__proto__"` as an own key, the same numbers), no piece is over
 * the budget, and the main thread never parses the text. Documents in flight
 * together do not mix; a worker that stops, or a client that goes away,
 * mid-transfer leaves nothing held.
 *
 * The sources have no worker script beside them (it is built into dist/), so
 * these tests point the checker at the built one: `npm test` builds first.
 */
import { Worker } from "node:worker_threads";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DOCUMENT_CHECKS } from "../../src/control/document-checks.js";
import { type Piece, PIECE_BUDGET } from "../../src/control/document-pieces.js";
import { documentWorker, OFF_LOOP_BODY_BYTES, offLoopCheck } from "../../src/control/document-worker.js";
import { createStandin } from "../../src/emulator.js";
import { DocumentedRoutes } from "../../src/http/documented-routes.js";
import { UPLOAD_SLICE_BYTES } from "../../src/http/precheck.js";

const BUILT_WORKER = new URL("../../dist/control/document-worker-thread.js", import.meta.url);

const previousScript = documentWorker.scriptUsed;
beforeAll(() => documentWorker.useScript(BUILT_WORKER));
afterAll(() => documentWorker.useScript(previousScript));
afterEach(() => {
  documentWorker.pieceObserver = undefined;
  vi.restoreAllMocks();
});

/** A route taking any JSON document (the dashboard's tape check), which keeps what it was handed. */
function recordingRoute(): { request: (body: string, init?: RequestInit) => Promise<Response>; received: unknown[] } {
  const received: unknown[] = [];
  const routes = new DocumentedRoutes("test").post(
    "/doc",
    { summary: "keeps its body", body: DOCUMENT_CHECKS.tape.body, maxBodyBytes: "control-limit", precheck: offLoopCheck("tape"), responses: { 200: "ok" } },
    (c, { body }) => {
      received.push(body);
      return c.json({ ok: true });
    },
  );
  return { request: (body, init) => Promise.resolve(routes.app.request("/doc", { method: "POST", body, ...init })), received };
}

/** The JSON text a piece carries, member by member (commas and keys included), and its count of values. */
function pieceSize(piece: Piece): { chars: number; values: number } {
  let chars = 0;
  let values = 0;
  const count = (value: unknown): number => {
    if (value === null || typeof value !== "object") return 1;
    return 1 + (Array.isArray(value) ? value : Object.values(value)).reduce<number>((sum, member) => sum + count(member), 0);
  };
  const add = (text: number, value: unknown) => {
    chars += text;
    values += count(value);
  };
  for (const op of piece) {
    if (op.op === "items") for (const item of op.items) add(JSON.stringify(item).length + 1, item);
    if (op.op === "entries") for (const [i, key] of op.keys.entries()) add(JSON.stringify(key).length + 1 + JSON.stringify(op.values[i]).length + 1, op.values[i]);
    if (op.op === "text") add(op.text.length, op.text);
    if (op.op === "value") add(JSON.stringify(op.value).length, op.value);
  }
  return { chars, values };
}

const pad = "p".repeat(OFF_LOOP_BODY_BYTES);

/** Documents over the worker's threshold, written as text (so that what JSON.parse makes of them is the reference). */
const DOCUMENTS: Array<{ name: string; text: string }> = [
  {
    name: "a large array of objects",
    text: JSON.stringify(Array.from({ length: 60_000 }, (_, i) => ({ z: i, a: `row ${i}`, m: { deep: [i, i * 0.5, null, true] } }))),
  },
  {
    name: "an object of 100,000 keys (integer-like ones among them, which enumerate first)",
    text: `{${Array.from({ length: 100_000 }, (_, i) => `${JSON.stringify(i % 7 === 0 ? String(100_000 - i) : `k${100_000 - i}`)}:${i}`).join(",")}}`,
  },
  {
    name: "nested containers, each split",
    text: JSON.stringify({
      b: { c: [Array.from({ length: 40_000 }, (_, i) => [i, { x: String(i) }])], d: Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`d${i}`, [i]])) },
      a: [],
    }),
  },
  {
    name: "unicode and long strings (one over a piece, split mid-way through a surrogate pair)",
    text: JSON.stringify({
      short: 'é ü 中文 🎉 \u2028 \u0000 "quoted" back\\slash',
      long: `${"é".repeat(PIECE_BUDGET.chars - 1)}🎉${"中".repeat(PIECE_BUDGET.chars)}`,
      keys: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`ключ-${i}-🔑`, `значение ${i}`])),
    }).replace('"short":', '"lone":"\\ud800 and \\udfff","short":'),
  },
  {
    name: '"__proto__" keys, at the top of a split object and inside members',
    text: `{"__proto__":{"polluted":true},"list":[${Array.from({ length: 20_000 }, (_, i) => `{"__proto__":[${i}],"i":${i}}`).join(",")}],"pad":"${pad}","constructor":{"prototype":{"x":1}}}`,
  },
  {
    name: "numbers as JSON.parse reads them",
    text: `{"n":[${Array.from({ length: 20_000 }, (_, i) => ["-0", "1e400", "-1e400", "1e-400", "12345678901234567890123", "0.1", "-5e-324", "9007199254740993", "1E2", String(i)][i % 10]).join(",")}]}`,
  },
  { name: "one string over the threshold", text: JSON.stringify(pad.repeat(40)) },
  {
    name: "empty containers and literals beside a large array",
    text: JSON.stringify({ e: {}, f: [], g: [[]], t: true, n: null, big: Array.from({ length: 100_000 }, (_, i) => i) }),
  },
];

describe("a large valid document is handed to its route in pieces", () => {
  it("the route gets what JSON.parse gives: equal values, keys in the same order, own __proto__ keys, the same numbers", async () => {
    const route = recordingRoute();
    for (const { name, text } of DOCUMENTS) {
      expect(Buffer.byteLength(text), name).toBeGreaterThanOrEqual(OFF_LOOP_BODY_BYTES);
      const answered = documentWorker.answered;
      let pieces = 0;
      documentWorker.pieceObserver = () => pieces++;
      const res = await route.request(text);
      expect(res.status, name).toBe(200);
      expect(documentWorker.answered, `${name}: checked in the worker`).toBe(answered + 1);
      expect(pieces, name).toBeGreaterThan(0);
      const received = route.received.pop();
      const reference = JSON.parse(text) as unknown;
      expect(received, name).toEqual(reference);
      expect(JSON.stringify(received), name).toBe(JSON.stringify(reference));
    }
    expect(documentWorker.inFlight).toBe(0);
    expect(await documentWorker.held()).toBe(0);
  });

  it('"__proto__" members are own properties and change no prototype', async () => {
    const route = recordingRoute();
    const doc = DOCUMENTS.find((d) => d.name.startsWith('"__proto__"'))!;
    await route.request(doc.text);
    const received = route.received.pop() as Record<string, unknown> & { list: Array<Record<string, unknown>> };
    expect(Object.getPrototypeOf(received)).toBe(Object.prototype);
    expect(Object.hasOwn(received, "__proto__")).toBe(true);
    expect(Object.keys(received)).toEqual(["__proto__", "list", "pad", "constructor"]);
    expect(Object.getOwnPropertyDescriptor(received, "__proto__")?.value).toEqual({ polluted: true });
    expect((received as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.hasOwn(received.list[19_999]!, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(received.list[19_999])).toBe(Object.prototype);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("-0, overflowing and underflowing exponents and big integers come out as JSON.parse makes them", async () => {
    const route = recordingRoute();
    const doc = DOCUMENTS.find((d) => d.name.startsWith("numbers"))!;
    await route.request(doc.text);
    const { n } = route.received.pop() as { n: number[] };
    const reference = (JSON.parse(doc.text) as { n: number[] }).n;
    expect(n.length).toBe(reference.length);
    expect(n.every((value, i) => Object.is(value, reference[i]))).toBe(true);
    expect(n.slice(0, 9)).toEqual([-0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, 1.2345678901234568e22, 0.1, -5e-324, 9007199254740992, 100]);
    expect(Object.is(n[0], -0)).toBe(true);
  });

  it("a 20 MB document: every piece within the budget, the body sent a slice at a time, and the main thread never parses it", async () => {
    const route = recordingRoute();
    const value = "v".repeat(40);
    const text = JSON.stringify({ rows: Array.from({ length: 250_000 }, (_, i) => ({ Key: `big/${i}`, Value: value, Index: i })), tail: "x".repeat(3 * PIECE_BUDGET.chars) });
    expect(text.length).toBeGreaterThan(20_000_000);
    const sizes: Array<{ chars: number; values: number }> = [];
    documentWorker.pieceObserver = (piece) => sizes.push(pieceSize(piece));
    const parse = vi.spyOn(JSON, "parse");
    const posted = vi.spyOn(Worker.prototype, "postMessage");
    const res = await route.request(text);
    const largeParses = parse.mock.calls.filter(([parsed]) => typeof parsed === "string" && parsed.length >= OFF_LOOP_BODY_BYTES);
    parse.mockRestore();
    expect(res.status).toBe(200);
    expect(largeParses).toEqual([]);
    // At least one piece per budget's worth of document, none over the budget.
    expect(sizes.length).toBeGreaterThanOrEqual(Math.ceil(text.length / PIECE_BUDGET.chars));
    expect(Math.max(...sizes.map((s) => s.chars))).toBeLessThanOrEqual(PIECE_BUDGET.chars);
    expect(Math.max(...sizes.map((s) => s.values))).toBeLessThanOrEqual(PIECE_BUDGET.values);
    // Sent in process as one chunk, the body went to the worker a slice at a time, every byte of it.
    const slices = posted.mock.calls.map(([message]) => message as { kind: string; bytes?: Uint8Array }).filter((m) => m.kind === "bytes");
    expect(slices.length).toBeGreaterThanOrEqual(Math.ceil(text.length / UPLOAD_SLICE_BYTES));
    expect(Math.max(...slices.map((m) => m.bytes!.byteLength))).toBeLessThanOrEqual(UPLOAD_SLICE_BYTES);
    expect(JSON.stringify(route.received.pop())).toBe(text);
  });

  it("two documents in flight at once each reach their own request", async () => {
    const route = recordingRoute();
    const one = JSON.stringify({ who: "one", rows: Array.from({ length: 80_000 }, (_, i) => ({ one: i })) });
    const two = JSON.stringify({ who: "two", rows: Array.from({ length: 90_000 }, (_, i) => ({ two: i })) });
    const seen: Array<"one" | "two"> = [];
    documentWorker.pieceObserver = (piece) => seen.push(JSON.stringify(piece).includes('"one"') ? "one" : "two");
    const answers = await Promise.all([route.request(one), route.request(two)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    // Their pieces did interleave: each took turns with the other.
    expect(seen.slice(0, seen.lastIndexOf("one")).includes("two")).toBe(true);
    const texts = route.received.map((body) => JSON.stringify(body)).sort();
    expect(texts).toEqual([one, two].sort());
  });

  it("a document under the threshold is parsed by the route as before", async () => {
    const route = recordingRoute();
    const text = JSON.stringify({ small: Array.from({ length: 100 }, (_, i) => i) });
    const answered = documentWorker.answered;
    const parse = vi.spyOn(JSON, "parse");
    expect((await route.request(text)).status).toBe(200);
    expect(parse.mock.calls.some(([parsed]) => parsed === text)).toBe(true);
    expect(documentWorker.answered).toBe(answered);
    expect(route.received.pop()).toEqual(JSON.parse(text));
  });

  it("a precheck checks with the route's own schema, or the route cannot be declared", () => {
    const declare = () =>
      new DocumentedRoutes("test").post(
        "/doc",
        { summary: "x", body: DOCUMENT_CHECKS.action.body, maxBodyBytes: "control-limit", precheck: offLoopCheck("tape"), responses: { 200: "ok" } },
        (c) => c.json({}),
      );
    expect(declare).toThrow("a precheck checks with the route's own body schema");
  });
});

describe("the hand-over through the control API", () => {
  it("a large fixture keeps its key order on the tape and in the state", async () => {
    const emu = await createStandin();
    // Members in an order of their own (Value before Key), and a key order the tape must keep.
    const kv = Array.from({ length: 20_000 }, (_, i) => ({ Value: `v${i}`, Key: `order/${i}`, Flags: i }));
    const text = `{"registry":{"kv":${JSON.stringify(kv)}}}`;
    const answered = documentWorker.answered;
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: text, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(200);
    expect(documentWorker.answered).toBe(answered + 1);
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as { entries: Array<{ kind: string; fixture?: unknown }> };
    expect(JSON.stringify(tape.entries.find((e) => e.kind === "fixture")?.fixture)).toBe(text);
    const entry = (await (await emu.registry.request("/v1/kv/order/19999")).json()) as Array<{ Flags: number }>;
    expect(entry[0]?.Flags).toBe(19_999);
    emu.close();
  });

  it("documents the worker passes get the answers they got when the route parsed them: refused later, or applied", async () => {
    const big = "x".repeat(OFF_LOOP_BODY_BYTES);
    const kv = (prefix: string) => ({ registry: { kv: Array.from({ length: 3_000 }, (_, i) => ({ Key: `${prefix}/${i}`, Value: "v".repeat(30) })) } });
    const cases: Array<{ name: string; path: string; method?: string; body: string }> = [
      { name: "an unknown action", path: "/_standin/actions", body: JSON.stringify({ do: "no-such-action", pad: big }) },
      { name: "an action with an argument it does not take", path: "/_standin/actions", body: JSON.stringify({ do: "node-down", node: "n1", pad: big }) },
      { name: "an action on a node that does not exist", path: "/_standin/actions", body: JSON.stringify({ pad: big, node: "nowhere", do: "node-down" }) },
      { name: "a dashboard tape that is JSON but no tape", path: "/_standin/ui/api/tape", body: JSON.stringify({ hello: big }) },
      { name: "a fixture applied", path: "/_standin/fixtures", body: JSON.stringify(kv("fixture")) },
      { name: "a reset to a fixture", path: "/_standin/reset", body: JSON.stringify({ fixture: kv("reset") }) },
    ];
    const answer = async (emu: Awaited<ReturnType<typeof createStandin>>, { path, method, body }: (typeof cases)[number]) => {
      const res = await emu.scheduler.request(path, { method: method ?? "POST", body, headers: { "Content-Type": "application/json" } });
      return { status: res.status, text: await res.text(), hash: emu.stateHash() };
    };
    const offLoop = await createStandin();
    const onLoop = await createStandin();
    const statuses: number[] = [];
    for (const each of cases) {
      const answered = documentWorker.answered;
      const handedOver = await answer(offLoop, each);
      expect(documentWorker.answered, `${each.name}: checked in the worker`).toBe(answered + 1);
      await documentWorker.useScript(undefined);
      const parsedHere = await answer(onLoop, each);
      await documentWorker.useScript(BUILT_WORKER);
      expect(handedOver, each.name).toEqual(parsedHere);
      statuses.push(handedOver.status);
    }
    expect(statuses).toEqual([404, 400, 400, 400, 200, 200]);
    offLoop.close();
    onLoop.close();
  });

  it("a worker that stops mid-transfer: the existing error answer, nothing applied, nothing held", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const text = JSON.stringify({ registry: { kv: Array.from({ length: 40_000 }, (_, i) => ({ Key: `big/${i}`, Value: "v".repeat(100) })) } });
    let pieces = 0;
    documentWorker.pieceObserver = () => {
      if (pieces++ === 0) void documentWorker.stop();
    };
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: text, headers: { "Content-Type": "application/json" } });
    expect(pieces).toBeGreaterThanOrEqual(1);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: "internal error: the document check stopped (worker thread exit code 1); send the document again" });
    expect(emu.stateHash()).toBe(before);
    expect(documentWorker.inFlight).toBe(0);
    documentWorker.pieceObserver = undefined;
    const again = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: text, headers: { "Content-Type": "application/json" } });
    expect(again.status).toBe(200);
    emu.close();
  });

  it("a client that goes away mid-transfer: its pieces are freed on both threads, and nothing is applied", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const text = JSON.stringify({ registry: { kv: Array.from({ length: 40_000 }, (_, i) => ({ Key: `big/${i}`, Value: "v".repeat(100) })) } });
    const client = new AbortController();
    let pieces = 0;
    documentWorker.pieceObserver = () => {
      if (pieces++ === 0) client.abort();
    };
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: text, headers: { "Content-Type": "application/json" }, signal: client.signal });
    expect(pieces).toBe(1);
    expect(res.status).toBe(500);
    expect(emu.stateHash()).toBe(before);
    expect(documentWorker.inFlight).toBe(0);
    expect(await documentWorker.held()).toBe(0);
    emu.close();
  });

  it("a client that goes away while its body is still arriving: the bytes sent so far are freed on both threads", async () => {
    const emu = await createStandin();
    const text = JSON.stringify({ registry: { kv: Array.from({ length: 40_000 }, (_, i) => ({ Key: `big/${i}`, Value: "v".repeat(100) })) } });
    const client = new AbortController();
    const post = Worker.prototype.postMessage;
    let slices = 0;
    vi.spyOn(Worker.prototype, "postMessage").mockImplementation(function (this: Worker, message: unknown, transfer?: Parameters<Worker["postMessage"]>[1]) {
      if ((message as { kind: string }).kind === "bytes" && slices++ === 1) client.abort();
      return post.call(this, message, transfer);
    });
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: text, headers: { "Content-Type": "application/json" }, signal: client.signal });
    expect(slices).toBeGreaterThanOrEqual(2);
    expect(slices).toBeLessThan(Math.ceil(text.length / UPLOAD_SLICE_BYTES));
    expect(res.status).toBe(500);
    expect(documentWorker.inFlight).toBe(0);
    expect(await documentWorker.held()).toBe(0);
    emu.close();
  });
});
