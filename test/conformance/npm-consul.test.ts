/**
 * Conformance: the leader-election recipe with the npm `consul` package
 * (2.0.1): sessions, acquire/release, TTL expiry and lock-delay on the virtual
 * clock, a `kv.get` watch that must see only its own key's changes, and a
 * `health.service` watch (passing only) that sees an instance drop out when
 * its check goes critical.
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

  it("a health.service watch (passing only) sees an instance drop out when its check goes critical", async () => {
    const registry = `http://127.0.0.1:${srv.ports.registry}`;
    for (const n of [1, 2]) {
      const res = await fetch(`${registry}/v1/catalog/register`, {
        method: "PUT",
        body: JSON.stringify({
          Node: `npm-node-${n}`,
          Address: `10.9.0.${n}`,
          Service: { ID: `npm-web-${n}`, Service: "npm-web", Port: 8080 },
          Check: { CheckID: `npm-web-${n}-ttl`, ServiceID: `npm-web-${n}`, Status: "passing" },
        }),
      });
      expect(res.status).toBe(200);
    }
    type Entry = { Service: { ID: string }; Checks: Array<{ Status: string }> };
    const watch = consul.watch({ method: consul.health.service, options: { service: "npm-web", passing: true, wait: "60s" } as never });
    const seen: string[][] = [];
    const first = new Promise<void>((resolve) => watch.once("change", () => resolve()));
    const dropped = new Promise<void>((resolve, reject) => {
      watch.on("change", (entries: Entry[]) => {
        seen.push(entries.map((e) => e.Service.ID));
        if (entries.length === 1) resolve();
      });
      watch.on("error", reject);
    });
    try {
      await within(first, "the watch's first answer");
      const res = await fetch(`${registry}/_standin/registry/checks`, {
        method: "POST",
        body: JSON.stringify({ Node: "npm-node-2", CheckID: "npm-web-2-ttl", Status: "critical" }),
      });
      expect(res.status).toBe(200);
      await within(dropped, "the watch seeing npm-web-2 drop out");
      expect(seen).toEqual([["npm-web-1", "npm-web-2"], ["npm-web-1"]]);
    } finally {
      watch.end();
    }
  });
});
