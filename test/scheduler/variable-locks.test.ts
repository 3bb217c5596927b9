/**
 * Variable locks through the HTTP surface: acquire (defaults, overwrite, the
 * Lock's JSON), a conflicting acquire, renew, the lapse on the virtual clock
 * (2 × TTL, then the lock delay), release, the error texts and statuses, the
 * interplay with plain writes and check-and-set, the control action and
 * condition, and snapshots.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { callScheduler } from "../support/call.js";

let emu: Standin;

afterEach(() => {
  emu?.close();
});

function call(path: string, init: { method?: string; body?: unknown } = {}) {
  return callScheduler(emu, init.method ?? "PUT", path, init.body);
}

const start = async () => {
  emu = await createStandin({ fixture: { scheduler: { variables: [{ Path: "locks/leader", Items: { owner: "nobody" } }] } } });
};

const acquire = (path: string, body: unknown = {}) => call(`/v1/var/${path}?lock-acquire`, { body });
const renew = (path: string, id: string) => call(`/v1/var/${path}?lock-renew`, { body: { Path: path, Lock: { ID: id } } });
const release = (path: string, id: string) => call(`/v1/var/${path}?lock-release`, { body: { Path: path, Lock: { ID: id } } });
const get = (path: string) => call(`/v1/var/${path}`, { method: "GET" });

describe("variable locks", () => {
  it("acquires with the 15s defaults, overwriting the Items; the Lock is written TTL, LockDelay, ID", async () => {
    await start();
    const res = await acquire("locks/leader");
    expect(res.status).toBe(200);
    expect(res.body.Items).toBeUndefined(); // an acquire without Items erases them
    expect(res.text).toMatch(/"Lock":\{"TTL":"15s","LockDelay":"15s","ID":"[0-9a-f-]{36}"\}/);
    expect(res.headers.get("X-Nomad-Index")).toBe(String(res.body.ModifyIndex));
    const read = await get("locks/leader");
    expect(read.body.Lock).toEqual(res.body.Lock);
    expect(read.body.Items).toBeUndefined();
  });

  it("creates the variable when absent, with Items and a TTL as a duration or nanoseconds", async () => {
    await start();
    const res = await acquire("locks/new", { Items: { who: "a" }, Lock: { TTL: 30_000_000_000, LockDelay: "1m" } });
    expect(res.status).toBe(200);
    expect(res.body.Items).toEqual({ who: "a" });
    expect(res.body.Lock).toMatchObject({ TTL: "30s", LockDelay: "1m0s" });
    // The official client sends its unset durations as "": taken as zero, so the defaults apply.
    const blank = await acquire("locks/blank", { Lock: { ID: "", TTL: "", LockDelay: "" } });
    expect(blank.body.Lock).toMatchObject({ TTL: "15s", LockDelay: "15s" });
  });

  it("refuses a bad TTL with the multierror text", async () => {
    await start();
    const short = await acquire("locks/x", { Lock: { TTL: "5s" } });
    expect(short).toMatchObject({ status: 400, text: "RPC Error:: 400,1 error occurred:\n\t* TTL must be between 10 seconds and 24 hours\n\n" });
    expect((await acquire("locks/x", { Lock: { TTL: "25h" } })).status).toBe(400);
    expect((await acquire("locks/x", { Lock: { LockDelay: "-1s" } })).text).toContain("Lock delay and TTL must be positive");
    expect((await acquire("locks/x", { Lock: { TTL: "soon" } })).text).toBe('time: invalid duration "soon"');
  });

  it("answers a conflicting acquire 409 with the zero value and no index; the holder may acquire again", async () => {
    await start();
    const held = (await acquire("locks/leader")).body;
    const other = await acquire("locks/leader", { Items: { owner: "b" } });
    expect(other.status).toBe(409);
    expect(other.text).toBe('{"CreateIndex":0,"CreateTime":0,"ModifyIndex":0,"ModifyTime":0,"Namespace":"default","Path":"locks/leader"}');
    expect(other.headers.get("X-Nomad-Index")).toBeNull();
    const again = await acquire("locks/leader", { Items: { owner: "a" }, Lock: { ID: held.Lock.ID } });
    expect(again.status).toBe(200);
    expect(again.body.Lock.ID).toBe(held.Lock.ID);
  });

  it("guards the variable: writes and deletes without the lock ID conflict, the holder's write goes through and keeps the lock", async () => {
    await start();
    const held = (await acquire("locks/leader")).body;
    const plain = await call("/v1/var/locks/leader", { body: { Items: { owner: "intruder" } } });
    expect(plain.status).toBe(409);
    expect(plain.body).toEqual({ CreateIndex: 0, CreateTime: 0, ModifyIndex: 0, ModifyTime: 0, Namespace: "default", Path: "locks/leader" });
    expect((await call("/v1/var/locks/leader", { method: "DELETE" })).status).toBe(409);
    // cas is checked first, then the lock.
    const casRight = await call(`/v1/var/locks/leader?cas=${held.ModifyIndex}`, { body: { Items: { owner: "intruder" } } });
    expect(casRight.status).toBe(409);
    expect(casRight.body.ModifyIndex).toBe(0);
    const casWrong = await call("/v1/var/locks/leader?cas=1", { body: { Items: { owner: "intruder" } } });
    expect(casWrong.body.ModifyIndex).toBe(held.ModifyIndex);

    const own = await call(`/v1/var/locks/leader?cas=${held.ModifyIndex}`, { body: { Items: { owner: "me" }, Lock: { ID: held.Lock.ID } } });
    expect(own.status).toBe(200);
    expect(own.body.Items).toEqual({ owner: "me" });
    expect(own.body.Lock).toEqual(held.Lock);
  });

  it("renews: 200 with the metadata and lock, no index move, no X-Nomad-Index; the errors in Nomad's statuses", async () => {
    await start();
    const held = (await acquire("locks/leader")).body;
    const renewed = await renew("locks/leader", held.Lock.ID);
    expect(renewed.status).toBe(200);
    expect(renewed.body).toEqual({ ...held, Items: undefined, Lock: held.Lock } as any);
    expect(renewed.body.ModifyIndex).toBe(held.ModifyIndex);
    expect(renewed.headers.get("X-Nomad-Index")).toBeNull();
    expect(await renew("locks/leader", "00000000-0000-0000-0000-000000000000")).toMatchObject({ status: 409, text: "attempting to modify locked variable" });
    expect(await renew("locks/absent", held.Lock.ID)).toMatchObject({ status: 404, text: "variable doesn't exist" });
    expect(await call("/v1/var/locks/leader?lock-renew", { body: {} })).toMatchObject({ status: 500, text: "1 error occurred:\n\t* missing lock ID\n\n" });
    await call("/v1/var/plain", { body: { Items: { a: "b" } } });
    expect(await renew("plain", held.Lock.ID)).toMatchObject({ status: 409, text: "variable doesn't hold a lock" });
  });

  it("releases: metadata without Lock and Items (Items kept in state); the errors in Nomad's statuses", async () => {
    await start();
    const held = (await acquire("locks/leader", { Items: { owner: "a" } })).body;
    expect(await release("locks/leader", "00000000-0000-0000-0000-000000000000")).toMatchObject({ status: 409 });
    expect(await call("/v1/var/locks/leader?lock-release", { body: {} })).toMatchObject({ status: 400, text: "RPC Error:: 400,missing lock information" });
    expect(await call("/v1/var/locks/leader?lock-release", { body: { Items: { a: "b" }, Lock: { ID: held.Lock.ID } } })).toMatchObject({
      status: 400,
      text: "RPC Error:: 400,lock release operation doesn't take variable items",
    });
    const released = await release("locks/leader", held.Lock.ID);
    expect(released.status).toBe(200);
    expect(Object.keys(released.body)).toEqual(["CreateIndex", "CreateTime", "ModifyIndex", "ModifyTime", "Namespace", "Path"]);
    expect(released.body.ModifyIndex).toBeGreaterThan(held.ModifyIndex);
    expect(released.body.ModifyTime).toBe(held.ModifyTime);
    const read = await get("locks/leader");
    expect(read.body.Lock).toBeUndefined();
    expect(read.body.Items).toEqual({ owner: "a" });
    expect(await release("locks/leader", held.Lock.ID)).toMatchObject({ status: 500, text: "variable doesn't hold a lock" });
    expect(await release("locks/absent", held.Lock.ID)).toMatchObject({ status: 500, text: "variable doesn't exist" });
    // Released by its holder: free at once (no lock delay), and its timers are gone.
    expect((await acquire("locks/leader")).status).toBe(200);
  });

  it("names its timers <namespace>/<path> where fired timers are shown (no unprintable separator)", async () => {
    await start();
    await acquire("locks/leader", { Lock: { TTL: "10s", LockDelay: "5s" } });
    const fired = emu.clock.advance("30s");
    expect(fired.map((f) => [f.kind, f.subject])).toEqual([
      ["scheduler.variable-lock-ttl", "default/locks/leader"],
      ["scheduler.variable-lock-delay", "default/locks/leader"],
    ]);
    expect((await get("locks/leader")).body.Lock).toBeUndefined();
  });

  it("lapses on the virtual clock: held until 2×TTL, then refused for the lock delay, then released by the server", async () => {
    await start();
    const held = (await acquire("locks/leader", { Items: { owner: "a" }, Lock: { TTL: "10s", LockDelay: "5s" } })).body;
    await emu.clock.advance("19s");
    expect((await renew("locks/leader", held.Lock.ID)).status).toBe(200); // inside 2×TTL: renewed, timer restarts
    await emu.clock.advance("19s");
    expect((await get("locks/leader")).body.Lock.ID).toBe(held.Lock.ID);
    await emu.clock.advance("2s"); // 20s since the renewal: the TTL timer fires, the delay begins
    const during = await get("locks/leader");
    expect(during.body.Lock.ID).toBe(held.Lock.ID);
    expect(await renew("locks/leader", held.Lock.ID)).toMatchObject({ status: 409, text: "attempting to modify locked variable" });
    expect((await acquire("locks/leader")).status).toBe(409);
    await emu.clock.advance("5s");
    const after = await get("locks/leader");
    expect(after.body.Lock).toBeUndefined();
    expect(after.body.Items).toEqual({ owner: "a" });
    expect(after.body.ModifyIndex).toBeGreaterThan(held.ModifyIndex);
    expect((await acquire("locks/leader")).status).toBe(200);
  });

  it("wakes a blocked read when the lapsed lock is released", async () => {
    await start();
    const held = (await acquire("locks/leader", { Lock: { TTL: "10s", LockDelay: "10s" } })).body;
    const pending = call(`/v1/var/locks/leader?index=${held.ModifyIndex}&wait=5m`, { method: "GET" });
    await emu.clock.advance("30s");
    const woke = await pending;
    expect(woke.body.Lock).toBeUndefined();
  });

  it("keeps locks and their timers in snapshots", async () => {
    await start();
    const held = (await acquire("locks/leader", { Lock: { TTL: "10s", LockDelay: "10s" } })).body;
    const snapshot = emu.snapshot();
    const hash = emu.stateHash();
    await emu.clock.advance("40s");
    expect((await get("locks/leader")).body.Lock).toBeUndefined();
    emu.restore(snapshot);
    expect(emu.stateHash()).toBe(hash);
    expect((await get("locks/leader")).body.Lock.ID).toBe(held.Lock.ID);
    await emu.clock.advance("40s");
    expect((await get("locks/leader")).body.Lock).toBeUndefined();
  });

  it("awaits a lock's lapse with the `variable` condition; the `variable-lock-release` action frees a lock at once", async () => {
    await start();
    const held = (await acquire("locks/leader", { Lock: { TTL: "10s", LockDelay: "10s" } })).body;
    emu.act("variable-lock-release", { path: "locks/leader" });
    const read = await get("locks/leader");
    expect(read.body.Lock).toBeUndefined();
    expect(await renew("locks/leader", held.Lock.ID)).toMatchObject({ status: 409, text: "variable doesn't hold a lock" });
    expect(() => emu.act("variable-lock-release", { path: "locks/leader" })).toThrow(/holds no lock/);
    expect(() => emu.act("variable-lock-release", { path: "locks/none" })).toThrow(/no variable/);

    const again = (await acquire("locks/leader", { Lock: { TTL: "10s", LockDelay: "10s" } })).body;
    const locked = await emu.await({ variable: { path: "locks/leader", state: "locked" } });
    expect(locked.met).toBe(true);
    expect(locked.waitedMs).toBe(0);
    const unlocked = await emu.await({ variable: { path: "locks/leader", state: "unlocked" } });
    expect(unlocked.met).toBe(true);
    expect(unlocked.waitedMs).toBe(30_000); // 2 × TTL, then the delay
    expect(again.Lock.ID).not.toBe(held.Lock.ID);
    await call("/v1/var/locks/leader", { method: "DELETE" });
    expect((await emu.await({ variable: { path: "locks/leader", state: "gone" } })).met).toBe(true);
  });
});
