/**
 * The read-answer cache: repeated GETs reuse one encoding, and nothing a
 * read depends on (a write, a restore, a reset, the clock, the token, the
 * headers the query parsing reads) is ever answered from a stale entry.
 */
import { describe, expect, it } from "vitest";
import { AnswerCache, answerKey, StampedMemo } from "../../src/http/answer-cache.js";
import { createStandin, type Standin } from "../../src/emulator.js";
import { startStandin } from "../../src/server.js";
import { smallJob as job } from "../support/jobs.js";
import { untilParked } from "../support/parked.js";

type Json = Record<string, any>;

function bytes(text: string): Uint8Array {
  return Buffer.from(text, "utf8");
}

describe("AnswerCache", () => {
  it("forgets every entry when the version or the instant moves", () => {
    let version = 1;
    let now = 1000;
    const cache = new AnswerCache<number>({ version: () => version, now: () => now });
    cache.set("a", { body: bytes("[1]"), meta: 7 });
    expect(cache.get("a")?.meta).toBe(7);
    version++;
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", { body: bytes("[2]"), meta: 8 });
    now++;
    expect(cache.get("a")).toBeUndefined();
  });

  it("keeps within its entry count and byte budget, oldest out first", () => {
    const cache = new AnswerCache<null>({ version: () => 1, now: () => 0, maxEntries: 2, budgetBytes: 10 });
    cache.set("a", { body: bytes("aaaa"), meta: null });
    cache.set("b", { body: bytes("bbbb"), meta: null });
    cache.set("c", { body: bytes("cc"), meta: null });
    expect([cache.get("a"), cache.get("b") !== undefined, cache.get("c") !== undefined]).toEqual([undefined, true, true]);
    cache.set("d", { body: bytes("dddddddd"), meta: null }); // 8 more bytes: b (the oldest) must go
    expect([cache.get("b"), cache.get("c") !== undefined, cache.get("d") !== undefined]).toEqual([undefined, true, true]);
    cache.set("huge", { body: bytes("x".repeat(11)), meta: null }); // over the budget on its own: never kept
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it("StampedMemo computes once per key and state", () => {
    let version = 1;
    const memo = new StampedMemo<number>({ version: () => version, now: () => 0 });
    let runs = 0;
    const compute = () => ++runs;
    expect([memo.get("a", compute), memo.get("a", compute), memo.get("b", compute)]).toEqual([1, 1, 2]);
    version++;
    expect(memo.get("a", compute)).toBe(3);
  });

  it("keys cannot collide by shifting text between parts", () => {
    expect(answerKey("/v1/a", "?b", "c")).not.toBe(answerKey("/v1/a?", "b", "c"));
    expect(answerKey("/x", undefined, "t")).not.toBe(answerKey("/x", "t", undefined));
  });
});

async function jobIds(emu: Standin, path = "/v1/jobs", headers: Record<string, string> = {}): Promise<{ status: number; ids: string[]; index: string | null }> {
  const res = await emu.scheduler.request(path, { headers });
  const text = await res.text();
  return { status: res.status, ids: res.status === 200 ? (JSON.parse(text) as Json[]).map((j) => j.ID) : [], index: res.headers.get("x-nomad-index") };
}

describe("scheduler reads answered from the cache", () => {
  it("a repeated read is byte-identical, and a write, a clock move, a restore and a reset each show through", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a")] } } });
    const first = await emu.scheduler.request("/v1/jobs");
    const again = await emu.scheduler.request("/v1/jobs");
    expect(await again.text()).toBe(await first.text());
    expect([...again.headers]).toEqual([...first.headers]);

    const saved = emu.snapshot();
    const put = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job("b") }) });
    expect(put.status).toBe(200);
    expect((await jobIds(emu)).ids).toEqual(["a", "b"]);

    // The clock moving (allocations turning running) changes job summaries without any request writing.
    const before = await (await emu.scheduler.request("/v1/job/b/summary")).text();
    emu.clock.advance("30s");
    expect(await (await emu.scheduler.request("/v1/job/b/summary")).text()).not.toBe(before);

    emu.restore(saved);
    expect((await jobIds(emu)).ids).toEqual(["a"]);
    await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job("c") }) });
    expect((await jobIds(emu)).ids).toEqual(["a", "c"]);
    emu.reset();
    expect((await jobIds(emu)).ids).toEqual(["a"]);
  });

  it("the page token and the query string are part of what is cached", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a"), job("b"), job("c")] } } });
    const page1 = await emu.scheduler.request("/v1/jobs?per_page=2");
    expect(page1.headers.get("x-nomad-nexttoken")).toBe("default.c");
    const page1again = await emu.scheduler.request("/v1/jobs?per_page=2");
    expect(page1again.headers.get("x-nomad-nexttoken")).toBe("default.c");
    const all = await emu.scheduler.request("/v1/jobs");
    expect(all.headers.get("x-nomad-nexttoken")).toBeNull();
    expect((await jobIds(emu, "/v1/jobs?prefix=b")).ids).toEqual(["b"]);
  });

  it("one token's cached answer is never another token's (ACL)", async () => {
    const reader = "11111111-1111-1111-1111-111111111111";
    const emu = await createStandin({
      fixture: {
        scheduler: {
          namespaces: [{ Name: "prod" }],
          jobs: [job("web"), { ...job("api"), Namespace: "prod" }],
          acl: {
            enabled: true,
            policies: [{ Name: "readonly", Rules: 'namespace "default" { policy = "read" }' }],
            tokens: [
              { SecretID: "00000000-0000-0000-0000-000000000001", Name: "root", Type: "management" },
              { SecretID: reader, Name: "reader", Type: "client", Policies: ["readonly"] },
            ],
          },
        },
      },
    });
    const all = "/v1/jobs?namespace=*";
    expect((await jobIds(emu, all, { "X-Nomad-Token": "00000000-0000-0000-0000-000000000001" })).ids.sort()).toEqual(["api", "web"]);
    expect((await jobIds(emu, all, { "X-Nomad-Token": reader })).ids).toEqual(["web"]);
    expect((await jobIds(emu, all, { Authorization: `Bearer ${reader}` })).ids).toEqual(["web"]);
    expect(await jobIds(emu, all)).toMatchObject({ status: 200, ids: [] }); // anonymous: nothing readable
  });

  it("a blocking read is never answered from the cache before the index moves", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a")] } } });
    const { index } = await jobIds(emu);
    await jobIds(emu); // a cached answer at this very state
    let answered = false;
    const parked = jobIds(emu, `/v1/jobs?index=${index}`).then((r) => ((answered = true), r));
    await untilParked(emu, 1);
    expect(answered).toBe(false);
    await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job("b") }) });
    expect((await parked).ids).toEqual(["a", "b"]);
  });

  it("many parked readers woken by one write all get the new answer", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a")] } } });
    const { index } = await jobIds(emu);
    const parked = Array.from({ length: 50 }, () =>
      Promise.resolve(emu.scheduler.request(`/v1/jobs?index=${index}`)).then(async (r: Response) => [r.headers.get("x-nomad-index"), await r.text()]),
    );
    await untilParked(emu, 50);
    await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job("b") }) });
    const answers = await Promise.all(parked);
    const expected = await emu.scheduler.request("/v1/jobs");
    const expectedAnswer = [expected.headers.get("x-nomad-index"), await expected.text()];
    for (const answer of answers) expect(answer).toEqual(expectedAnswer);
  });
});

describe("parked list reads woken together", () => {
  it("share one page, next-page token included", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("a"), job("b")] } } });
    const { index } = await jobIds(emu);
    const parked = Array.from({ length: 30 }, () =>
      Promise.resolve(emu.scheduler.request(`/v1/jobs?per_page=2&index=${index}`)).then(async (r: Response) => [
        r.headers.get("x-nomad-nexttoken"),
        ((await r.json()) as Json[]).map((j) => j.ID),
      ]),
    );
    await untilParked(emu, 30);
    await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job("c") }) });
    for (const answer of await Promise.all(parked)) expect(answer).toEqual(["default.c", ["a", "b"]]);
  });

  it("registry: parked session lists woken by one create all see it, with one index", async () => {
    const emu = await createStandin({ fixture: { registry: { nodes: [{ Node: "n1", Address: "10.0.0.1" }] } } });
    const index = (await emu.registry.request("/v1/session/list")).headers.get("x-consul-index");
    const parked = Array.from({ length: 30 }, () =>
      Promise.resolve(emu.registry.request(`/v1/session/list?index=${index}`)).then(async (r: Response) => [
        r.headers.get("x-consul-index"),
        ((await r.json()) as Json[]).map((x) => x.Name),
      ]),
    );
    await untilParked(emu, 30);
    expect((await emu.registry.request("/v1/session/create", { method: "PUT", body: JSON.stringify({ Node: "n1", Name: "woken" }) })).status).toBe(200);
    const answers = await Promise.all(parked);
    for (const answer of answers) expect(answer).toEqual([String(emu.index), ["woken"]]);
    expect(emu.index).toBeGreaterThan(Number(index));
  });
});

describe("registry reads answered from the cache", () => {
  const NODES = [
    { Node: "n1", Address: "10.0.0.1" },
    { Node: "n2", Address: "10.0.0.2" },
  ];

  it("headers the query parsing reads still give their 400s after the same URL was cached", async () => {
    const emu = await createStandin({ fixture: { registry: { nodes: NODES } } });
    expect((await emu.registry.request("/v1/session/list")).status).toBe(200);
    expect((await emu.registry.request("/v1/session/list")).status).toBe(200);
    const namespaced = await emu.registry.request("/v1/session/list", { headers: { "X-Consul-Namespace": "team" } });
    expect([namespaced.status, await namespaced.text()]).toEqual([400, 'Invalid header: "X-Consul-Namespace" - Namespaces are a Consul Enterprise feature']);
    const badCache = await emu.registry.request("/v1/session/list", { headers: { "Cache-Control": "max-age=soon" } });
    expect([badCache.status, await badCache.text()]).toEqual([400, "Invalid Cache-Control header."]);
  });

  it("a session created, renewed away or expired shows in the very next list", async () => {
    const emu = await createStandin({ fixture: { registry: { nodes: NODES } } });
    const list = async () => (await (await emu.registry.request("/v1/session/list")).json()) as Json[];
    expect(await list()).toEqual([]);
    const created = (await (await emu.registry.request("/v1/session/create", { method: "PUT", body: JSON.stringify({ Node: "n1", TTL: "10s" }) })).json()) as Json;
    expect((await list()).map((s) => s.ID)).toEqual([created.ID]);
    emu.clock.advance("21s"); // past 2×TTL: invalidated by the clock alone
    expect(await list()).toEqual([]);
  });

  it("one token's filtered answer is never another token's", async () => {
    const emu = await createStandin({
      fixture: {
        registry: {
          nodes: NODES,
          sessions: [{ Node: "n1" }, { Node: "n2" }],
          acl: {
            enabled: true,
            defaultPolicy: "deny",
            tokens: [
              { AccessorID: "acc-all", SecretID: "s-all", Rules: { session_prefix: { "": { policy: "read" } } } },
              { AccessorID: "acc-n1", SecretID: "s-n1", Rules: { session_prefix: { n1: { policy: "read" } } } },
            ],
          },
        },
      },
    });
    const nodes = async (headers: Record<string, string>) => {
      const res = await emu.registry.request("/v1/session/list", { headers });
      return { nodes: ((await res.json()) as Json[]).map((s) => s.Node), filtered: res.headers.get("x-consul-results-filtered-by-acls") };
    };
    expect(await nodes({ "X-Consul-Token": "s-all" })).toEqual({ nodes: expect.arrayContaining(["n1", "n2"]), filtered: null });
    expect(await nodes({ "X-Consul-Token": "s-n1" })).toEqual({ nodes: ["n1"], filtered: "true" });
    expect(await nodes({ Authorization: "Bearer s-n1" })).toEqual({ nodes: ["n1"], filtered: "true" });
    expect(await nodes({})).toEqual({ nodes: [], filtered: null });
    // ?token= counts too, also with its name percent-encoded (Go decodes query names).
    for (const query of ["?token=s-n1", "?tok%65n=s-n1"]) {
      const res = await emu.registry.request(`/v1/session/list${query}`);
      expect(((await res.json()) as Json[]).map((s) => s.Node)).toEqual(["n1"]);
    }
  });
});

describe("the tape over HTTP", () => {
  it("keeps a request body that the journal read (a body with a stated length)", async () => {
    const running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, fixture: { registry: { nodes: [{ Node: "n1", Address: "10.0.0.1" }] } } });
    try {
      const body = JSON.stringify({ Node: "n1", Name: "over-http" });
      const res = await fetch(`${running.urls.registry}/v1/session/create`, {
        method: "PUT",
        headers: { "content-type": "application/json", "content-length": String(body.length) },
        body,
      });
      expect(res.status).toBe(200);
      const tape = (await (await fetch(`${running.urls.scheduler}/_standin/tape`)).json()) as Json;
      const entry = tape.entries.find((e: Json) => e.kind === "request" && e.path === "/v1/session/create");
      expect(entry.body).toEqual({ text: body, bytes: body.length });
      expect(JSON.parse(entry.response.body.text).ID).toBe(((await res.json()) as Json).ID);
    } finally {
      await running.close();
    }
  });
});
