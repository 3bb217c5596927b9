/**
 * KV blocking reads and indexes as Consul computes them (agent/consul/
 * kvs_endpoint.go, state/kvs.go): one key answers with its own ModifyIndex
 * and sleeps through other keys' writes; a list or key listing answers with
 * the highest index under its prefix, tombstones of deletes included; an
 * unchanged write changes nothing; uint64 flags stay exact; bodies nested
 * past Go's decoder limit are refused.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}

const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const put = (emu: Standin, path: string, body = "") => req(emu, path, { method: "PUT", body });
const del = (emu: Standin, path: string) => req(emu, path, { method: "DELETE" });
const indexOf = (res: TextAnswer) => Number(res.headers.get("x-consul-index"));

async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

function track(emu: Standin, path: string) {
  const t = { done: false, promise: undefined as unknown as Promise<TextAnswer> };
  t.promise = req(emu, path).then((res) => {
    t.done = true;
    return res;
  });
  return t;
}

async function write(emu: Standin, key: string, value: string, query = ""): Promise<void> {
  const res = await put(emu, `/v1/kv/${key}${query}`, value);
  expect(res.status, res.text).toBe(200);
  expect(res.text).toBe("true");
}

async function modifyIndex(emu: Standin, key: string): Promise<number> {
  const res = await req(emu, `/v1/kv/${key}`);
  expect(res.status).toBe(200);
  return (JSON.parse(res.text) as { ModifyIndex: number }[])[0]!.ModifyIndex;
}

async function session(emu: Standin, body: Record<string, unknown> = {}): Promise<string> {
  const res = await put(emu, "/v1/session/create", JSON.stringify(body));
  expect(res.status, res.text).toBe(200);
  return (JSON.parse(res.text) as { ID: string }).ID;
}

describe("one key's blocking read", () => {
  it("answers with the key's own ModifyIndex, not the KV table's", async () => {
    const emu = await standin();
    await write(emu, "a", "1");
    const own = await modifyIndex(emu, "a");
    await write(emu, "b", "2");
    const res = await req(emu, "/v1/kv/a");
    expect(indexOf(res)).toBe(own);
    expect(res.headers.get("x-registry-index")).toBe(String(own));
    expect(indexOf(await req(emu, "/v1/kv/b"))).toBeGreaterThan(own);
  });

  it("sleeps through writes and deletes of other keys and wakes when the key changes", async () => {
    const emu = await standin();
    await write(emu, "leader", "node-a");
    const index = await modifyIndex(emu, "leader");
    const t = track(emu, `/v1/kv/leader?index=${index}&wait=1m`);
    await flush();
    for (let i = 0; i < 20; i++) await write(emu, `other/${i}`, String(i));
    await del(emu, "other/3");
    await del(emu, "other/?recurse");
    await flush();
    expect(t.done).toBe(false);
    await write(emu, "leader", "node-b");
    const res = await t.promise;
    expect(res.status).toBe(200);
    expect(indexOf(res)).toBeGreaterThan(index);
    expect(Buffer.from((JSON.parse(res.text) as { Value: string }[])[0]!.Value, "base64").toString()).toBe("node-b");
  });

  it("wakes with a 404 when the key is deleted", async () => {
    const emu = await standin();
    await write(emu, "k", "v");
    const index = await modifyIndex(emu, "k");
    const t = track(emu, `/v1/kv/k?index=${index}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    expect((await del(emu, "/v1/kv/k")).text).toBe("true");
    const res = await t.promise;
    expect(res.status).toBe(404);
    expect(indexOf(res)).toBeGreaterThan(index);
  });

  it("wakes when a session invalidated by its TTL releases the lock on the key", async () => {
    const emu = await standin();
    const id = await session(emu, { TTL: "10s", LockDelay: "0s" });
    await write(emu, "service/leader", "me", `?acquire=${id}`);
    const index = await modifyIndex(emu, "service/leader");
    const t = track(emu, `/v1/kv/service/leader?index=${index}&wait=5m`);
    await flush();
    await write(emu, "service/other", "x");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("21s"); // 2 × TTL
    const res = await t.promise;
    const [entry] = JSON.parse(res.text) as { Session?: string; LockIndex: number }[];
    expect(entry!.Session).toBeUndefined();
    expect(entry!.LockIndex).toBe(1);
  });

  it("ends at its virtual deadline with the same index when nothing changed", async () => {
    const emu = await standin();
    await write(emu, "k", "v");
    const index = await modifyIndex(emu, "k");
    const t = track(emu, `/v1/kv/k?index=${index}&wait=30s`);
    await flush();
    await write(emu, "unrelated", "x");
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("35s");
    const res = await t.promise;
    expect(res.status).toBe(200);
    expect(indexOf(res)).toBe(index);
  });

  it("a missing key answers with the KV tables' index (never 0)", async () => {
    const emu = await standin();
    const empty = await req(emu, "/v1/kv/nothing");
    expect(empty.status).toBe(404);
    expect(indexOf(empty)).toBe(1);
    await write(emu, "x", "1");
    await write(emu, "y", "1");
    const y = await modifyIndex(emu, "y");
    expect(indexOf(await req(emu, "/v1/kv/nothing"))).toBe(y);
    await del(emu, "/v1/kv/x");
    expect(indexOf(await req(emu, "/v1/kv/nothing"))).toBeGreaterThan(y);
  });
});

describe("list and keys reads", () => {
  it("answer with the highest ModifyIndex under the prefix and sleep through writes elsewhere", async () => {
    const emu = await standin();
    await write(emu, "app/a", "1");
    await write(emu, "app/b", "2");
    const b = await modifyIndex(emu, "app/b");
    await write(emu, "other/c", "3");
    const list = await req(emu, "/v1/kv/app/?recurse");
    expect(indexOf(list)).toBe(b);
    const keys = await req(emu, "/v1/kv/app/?keys");
    expect(indexOf(keys)).toBe(b);
    expect(JSON.parse(keys.text)).toEqual(["app/a", "app/b"]);

    const tl = track(emu, `/v1/kv/app/?recurse&index=${b}&wait=1m`);
    const tk = track(emu, `/v1/kv/app/?keys&index=${b}&wait=1m`);
    await flush();
    await write(emu, "other/d", "4");
    await flush();
    expect(tl.done || tk.done).toBe(false);
    await write(emu, "app/a", "changed");
    expect(indexOf(await tl.promise)).toBeGreaterThan(b);
    expect(indexOf(await tk.promise)).toBeGreaterThan(b);
  });

  it("a delete under the prefix wakes the reader: the tombstone's index counts", async () => {
    const emu = await standin();
    await write(emu, "app/a", "1");
    await write(emu, "app/b", "2");
    const b = await modifyIndex(emu, "app/b");
    const t = track(emu, `/v1/kv/app/?recurse&index=${b}&wait=1m`);
    await flush();
    expect(t.done).toBe(false);
    expect((await del(emu, "/v1/kv/app/b")).text).toBe("true");
    const res = await t.promise;
    expect(indexOf(res)).toBeGreaterThan(b);
    expect((JSON.parse(res.text) as { Key: string }[]).map((e) => e.Key)).toEqual(["app/a"]);
    // The index does not slide back to app/a's once app/b is gone.
    expect(indexOf(await req(emu, "/v1/kv/app/?recurse"))).toBe(indexOf(res));
  });

  it("a recursive delete leaves one tombstone for its prefix", async () => {
    const emu = await standin();
    await write(emu, "app/x/1", "1");
    await write(emu, "app/x/2", "2");
    await write(emu, "app/y", "3");
    const before = indexOf(await req(emu, "/v1/kv/app/?recurse"));
    await del(emu, "/v1/kv/app/x/?recurse");
    const after = indexOf(await req(emu, "/v1/kv/app/?recurse"));
    expect(after).toBeGreaterThan(before);
    // Under app/x/ nothing is left but the tombstone of app/x/ itself.
    const gone = await req(emu, "/v1/kv/app/x/?recurse");
    expect(gone.status).toBe(404);
    expect(indexOf(gone)).toBe(after);
  });

  it("tombstones are reaped 15 virtual minutes after the delete, at the next KV write", async () => {
    const emu = await standin();
    await write(emu, "app/a", "1");
    await write(emu, "app/b", "2");
    await del(emu, "/v1/kv/app/b");
    const deleted = indexOf(await req(emu, "/v1/kv/app/?recurse"));
    const a = await modifyIndex(emu, "app/a");
    expect(deleted).toBeGreaterThan(a);
    emu.clock.advance("15m");
    await write(emu, "elsewhere", "1");
    expect(indexOf(await req(emu, "/v1/kv/app/?recurse"))).toBe(a);
    expect(emu.snapshot().store.tables["registry.kv-tombstones"]?.rows ?? {}).toEqual({});
  });
});

describe("writes that change nothing", () => {
  it("leave the ModifyIndex and the blocked reader alone (Consul's kvsSetTxn compares the entry)", async () => {
    const emu = await standin();
    await write(emu, "k", "same", "?flags=7");
    const index = await modifyIndex(emu, "k");
    const t = track(emu, `/v1/kv/k?index=${index}&wait=1m`);
    await flush();
    // (After parking: a blocking read draws its jitter from the seeded generator, which is state.)
    const hash = emu.stateHash();
    await write(emu, "k", "same", "?flags=7");
    await flush();
    expect(t.done).toBe(false);
    expect(emu.stateHash()).toBe(hash);
    expect(await modifyIndex(emu, "k")).toBe(index);
    await write(emu, "k", "same", "?flags=8");
    expect(indexOf(await t.promise)).toBeGreaterThan(index);
  });

  it("a plain set of a held key keeps its holder and takes LockIndex 0 from the request, as Consul's kvsSetTxn does", async () => {
    const emu = await standin();
    const id = await session(emu);
    await write(emu, "lock", "a", `?acquire=${id}`);
    await write(emu, "lock", "b");
    const [entry] = JSON.parse((await req(emu, "/v1/kv/lock")).text) as { Session?: string; LockIndex: number }[];
    expect(entry!.Session).toBe(id);
    expect(entry!.LockIndex).toBe(0);
  });
});

describe("uint64 flags", () => {
  const LOCK_FLAG = "3304740253564472344"; // api.LockFlagValue, 0x2ddccbc058a50c18
  const SEMAPHORE_FLAG = "16210313421097356768"; // api.SemaphoreFlagValue, 0xe0f69a2baa414de0
  const MAX = "18446744073709551615";

  it.each([LOCK_FLAG, SEMAPHORE_FLAG, MAX, "9007199254740993"])("?flags=%s reads back exact, in JSON and through a snapshot", async (flags) => {
    const emu = await standin();
    await write(emu, "k", "v", `?flags=${flags}`);
    const text = (await req(emu, "/v1/kv/k")).text;
    expect(text).toContain(`"Flags":${flags},`);
    const copy = await standin();
    copy.restore(JSON.parse(JSON.stringify(emu.snapshot())));
    expect((await req(copy, "/v1/kv/k")).text).toBe(text);
    expect(copy.stateHash()).toBe(emu.stateHash());
  });

  it("flags one apart are different values (the write is not skipped as unchanged)", async () => {
    const emu = await standin();
    await write(emu, "k", "v", "?flags=18446744073709551614");
    const index = await modifyIndex(emu, "k");
    await write(emu, "k", "v", `?flags=${MAX}`);
    expect(await modifyIndex(emu, "k")).toBeGreaterThan(index);
  });

  it.each([
    ["18446744073709551616", "value out of range"],
    ["-1", "invalid syntax"],
    ["1.5", "invalid syntax"],
    ["0x10", "invalid syntax"],
  ])("?flags=%s is Consul's 500 (%s) and writes nothing", async (flags, reason) => {
    const emu = await standin();
    const hash = emu.stateHash();
    const res = await put(emu, `/v1/kv/k?flags=${flags}`, "v");
    expect(res.status).toBe(500);
    expect(res.text).toBe(`strconv.ParseUint: parsing "${flags}": ${reason}`);
    expect(emu.stateHash()).toBe(hash);
  });

  it("?cas= takes any uint64: the max value matches no entry", async () => {
    const emu = await standin();
    await write(emu, "k", "v");
    expect((await put(emu, `/v1/kv/k?cas=${MAX}`, "w")).text).toBe("false");
    expect((await del(emu, `/v1/kv/k?cas=${MAX}`)).text).toBe("false");
    expect((await put(emu, "/v1/kv/k?cas=18446744073709551616", "w")).status).toBe(500);
  });

  it("?index= takes the max uint64 and waits until the deadline", async () => {
    const emu = await standin();
    await write(emu, "k", "v");
    const t = track(emu, `/v1/kv/k?index=${MAX}&wait=10s`);
    await flush();
    expect(t.done).toBe(false);
    emu.clock.advance("11s");
    expect((await t.promise).status).toBe(200);
  });

  it("fixture entries take flags as a safe integer or as decimal digits, and refuse a rounded number", async () => {
    const emu = await standin({
      kv: [
        { Key: "big", Value: "x", Flags: SEMAPHORE_FLAG },
        { Key: "small", Value: "y", Flags: 42 },
      ],
    });
    expect((await req(emu, "/v1/kv/big")).text).toContain(`"Flags":${SEMAPHORE_FLAG},`);
    expect((await req(emu, "/v1/kv/small")).text).toContain(`"Flags":42,`);
    await expect(standin({ kv: [{ Key: "k", Flags: 2 ** 60 }] })).rejects.toThrow(/registry\.kv\[0\]\.Flags: must be a uint64/);
    await expect(standin({ kv: [{ Key: "k", Flags: "18446744073709551616" }] })).rejects.toThrow(/registry\.kv\[0\]\.Flags/);
  });
});

describe("bodies nested past Go's decoder limit", () => {
  const nested = (depth: number) => `{"Name":"x","Junk":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;

  it("a session create nested 10 001 deep is Go's 400 and creates nothing", async () => {
    const emu = await standin();
    const hash = emu.stateHash();
    const res = await put(emu, "/v1/session/create", nested(10_001));
    expect(res.status).toBe(400);
    expect(res.text).toBe("Request decode failed: invalid character '[' exceeded max depth");
    expect(emu.stateHash()).toBe(hash);
    expect(JSON.parse((await req(emu, "/v1/session/list")).text)).toEqual([]);
  });

  it("100 000 levels are refused the same way", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create", "[".repeat(100_000) + "]".repeat(100_000));
    expect(res.status).toBe(400);
    expect(res.text).toBe("Request decode failed: invalid character '[' exceeded max depth");
  });

  it("10 000 levels (Go's limit) still decode", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/session/create", nested(10_000));
    expect(res.status, res.text).toBe(200);
  });

  it("a catalog register nested too deep is refused too", async () => {
    const emu = await standin();
    const res = await put(emu, "/v1/catalog/register", `{"Node":"n","Address":"1.2.3.4","Meta":${'{"a":'.repeat(10_001)}1${"}".repeat(10_001)}}`);
    expect(res.status).toBe(400);
    expect(res.text).toBe("Request decode failed: invalid character '{' exceeded max depth");
  });
});
