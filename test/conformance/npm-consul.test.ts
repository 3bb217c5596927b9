/**
 * Conformance: the leader-election recipe with the npm `consul` package
 * (2.0.1): sessions, acquire/release, TTL expiry and lock-delay on the virtual
 * clock, and a `kv.get` watch that must see only its own key's changes.
 */
import Consul from "consul";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../../src/server.js";

type KVEntry = { Key: string; Value: string | null; Session?: string; LockIndex: number; Flags: number };

/** node-consul takes more options than its typings say (acquire, release, flags, cas). */
type Loose = (options: Record<string, unknown>) => Promise<unknown>;

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`nothing after 60 s: ${what}`)), 60_000)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

describe("npm consul 2.0.1", () => {
  let srv: RunningStandin;
  let consul: Consul;
  let set: Loose;
  beforeAll(async () => {
    srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
    consul = new Consul({ host: "127.0.0.1", port: srv.ports.registry });
    set = consul.kv.set.bind(consul.kv) as unknown as Loose;
  });
  afterAll(async () => {
    await srv?.close();
  });

  it("lock: acquire, refusal, TTL expiry on the virtual clock, lock-delay, hand-over", async () => {
    const key = "conformance/npm/leader";
    const a = (await consul.session.create({ name: "a", ttl: "10s", lockdelay: "15s" })).ID;
    const b = (await consul.session.create({ name: "b", ttl: "120s", lockdelay: "15s" })).ID;
    expect(await set({ key, value: "a", acquire: a })).toBe(true);
    // node-consul 2.0.1 resolves a refused acquire (Consul's body `false`) to undefined.
    expect(await set({ key, value: "b", acquire: b })).toBeUndefined();
    srv.emulator.clock.advance("21s"); // 2 × A's TTL
    expect(await consul.session.info(a)).toBeUndefined();
    const released = (await consul.kv.get(key)) as KVEntry;
    expect(released.Session).toBeUndefined();
    expect(await set({ key, value: "b", acquire: b })).toBeUndefined(); // lock-delay
    srv.emulator.clock.advance("16s");
    expect(await set({ key, value: "b", acquire: b })).toBe(true);
    expect(await consul.kv.get(key)).toMatchObject({ Session: b, LockIndex: 2 });
  });

  it("a kv.get watch emits its key's changes only, however many other keys change", async () => {
    const key = "conformance/npm/watched";
    await consul.kv.set(key, "v1");
    const watch = consul.watch({ method: consul.kv.get, options: { key, wait: "60s" } as never });
    const values: string[] = [];
    const first = new Promise<void>((resolve) => watch.once("change", () => resolve()));
    const stopped = new Promise<void>((resolve, reject) => {
      watch.on("change", (entry: KVEntry) => {
        values.push(entry.Value ?? ""); // node-consul decodes the base64 itself
        if (values.at(-1) === "stop") resolve();
      });
      watch.on("error", reject);
    });
    try {
      await within(first, "the watch's first answer");
      for (let i = 0; i < 20; i++) await consul.kv.set(`conformance/npm/noise/${i}`, "x");
      await consul.kv.set(key, "stop");
      await within(stopped, "the watch seeing its key change");
      expect(values).toEqual(["v1", "stop"]);
    } finally {
      watch.end();
    }
  });
});
