import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../src/emulator.js";

type Emu = Standin;

async function control(emu: Emu, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await emu.scheduler.request(`/_standin${path}`, {
    method,
    headers: body === undefined ? headers : { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** A test-only timer kind that writes a row when it fires, so timers and rows both change the state. */
function installTicker(emu: Emu) {
  emu.clock.handle("test.tick", (timer) => {
    emu.store.write(() => emu.store.table("test.ticks").put(String(timer.id), { at: timer.at, subject: timer.subject }));
    return { wrote: timer.id };
  });
}

describe("determinism", () => {
  it("two emulators with the same seed produce the same IDs; different seeds produce different ones", async () => {
    const a = await createStandin({ seed: 42 });
    const b = await createStandin({ seed: 42 });
    const c = await createStandin({ seed: 43 });
    const draw = (e: Emu) => [e.ids.uuid(), e.ids.uuid(), e.ids.nanoid(), e.ids.jitterMs(1000)];
    const [da, db, dc] = [draw(a), draw(b), draw(c)];
    expect(da).toEqual(db);
    expect(dc[0]).not.toBe(da[0]);
    expect(dc[2]).not.toBe(da[2]);
  });

  it("the seed comes from the last start fixture that sets one, and the option overrides it", async () => {
    expect((await createStandin({ fixture: [{ seed: 5 }, { seed: 9 }, {}] })).seed).toBe(9);
    expect((await createStandin({ fixture: { seed: 5 }, seed: 11 })).seed).toBe(11);
    expect((await createStandin()).seed).toBe(1);
  });

  it("a scripted scenario run twice gives byte-identical responses (bodies and headers except Date) and state hashes", async () => {
    const run = async () => {
      const emu = await createStandin({ fixture: { seed: 7, echo: { apiKeys: ["k1"] }, registry: { agentNode: "n1" } } });
      installTicker(emu);
      const transcript: string[] = [];
      const record = async (app: keyof Pick<Emu, "scheduler" | "registry" | "echo">, path: string, init?: RequestInit) => {
        const res = await emu[app].request(path, init);
        const headers = [...res.headers].filter(([k]) => k !== "date").map(([k, v]) => `${k}: ${v}`);
        transcript.push(`${app} ${init?.method ?? "GET"} ${path} -> ${res.status}\n${headers.join("\n")}\n${await res.text()}`);
      };
      const post = (body: unknown): RequestInit => ({ method: "POST", body: JSON.stringify(body) });
      await record("scheduler", "/v1/agent/health");
      await record("registry", "/v1/status/leader");
      await record("echo", "/nope");
      for (let i = 0; i < 50; i++) {
        emu.store.write(() => emu.clock.schedule({ at: emu.clock.now() + (i % 7) * 1000 + 500, kind: "test.tick", subject: emu.ids.uuid() }));
        await record("scheduler", "/_standin/clock/advance", post({ by: `${(i % 5) + 1}s` }));
        if (i % 10 === 0) await record("echo", "/_standin/echo/tokens", post({ scheme: "provider_jwt", claims: { n: i } }));
        if (i % 13 === 0) await record("echo", "/_standin/fixtures", post({ echo: { apiKeys: [`k${i}`] } }));
        if (i % 4 === 0)
          await record("registry", "/v1/session/create", { method: "PUT", body: JSON.stringify({ Name: `s${i}`, TTL: "10s", Behavior: i % 8 === 0 ? "delete" : "release" }) });
        if (i % 6 === 0) await record("registry", "/v1/session/list?index=1&wait=5s");
        if (i % 9 === 0) {
          const sessions = JSON.parse(await (await emu.registry.request("/v1/session/list")).text()) as Array<{ ID: string }>;
          if (sessions[0]) await record("registry", `/v1/kv/leader?acquire=${sessions[0].ID}`, { method: "PUT", body: `v${i}` });
          await record("registry", "/v1/kv/leader");
        }
      }
      await record("scheduler", "/_standin/clock/next", { method: "POST" });
      await record("scheduler", "/_standin/snapshot");
      await record("scheduler", "/_standin/events");
      await record("scheduler", "/_standin/state/hash");
      return { transcript, hash: emu.stateHash() };
    };
    const first = await run();
    const second = await run();
    expect(first.transcript.length).toBeGreaterThan(60);
    expect(second.transcript).toEqual(first.transcript);
    expect(second.hash).toBe(first.hash);
  });
});

describe("reset", () => {
  it("returns to the start state hash after clock moves, timers, writes and fixtures", async () => {
    const emu = await createStandin({ fixture: { seed: 3, echo: { apiKeys: ["a"] } } });
    installTicker(emu);
    const start = await control(emu, "GET", "/ready");
    emu.store.write(() => emu.clock.schedule({ at: emu.clock.now() + 5000, kind: "test.tick" }));
    emu.ids.uuid();
    await control(emu, "POST", "/clock/advance", { by: "1h" });
    await control(emu, "POST", "/fixtures", { echo: { apiKeys: ["b"] } });
    expect(emu.stateHash()).not.toBe(start.body.stateHash);

    const reset = await control(emu, "POST", "/reset");
    expect(reset.status).toBe(200);
    expect(reset.body.stateHash).toBe(start.body.stateHash);
    expect((await control(emu, "GET", "/clock")).body.now).toBe("2026-01-01T00:00:00Z");
    expect(emu.store.table("test.ticks").size).toBe(0);
    // The generator is back at its start state too.
    const fresh = await createStandin({ fixture: { seed: 3, echo: { apiKeys: ["a"] } } });
    expect(emu.ids.uuid()).toBe(fresh.ids.uuid());
  });

  it("with a fixture, replaces the start fixture: later resets go back to the new one", async () => {
    const emu = await createStandin();
    const res = await control(emu, "POST", "/reset", { fixture: { seed: 99, clock: { start: "2030-05-05T00:00:00Z" } } });
    expect(res.status).toBe(200);
    expect(emu.seed).toBe(99);
    const hash = emu.stateHash();
    await control(emu, "POST", "/clock/advance", { by: "10m" });
    await control(emu, "POST", "/reset");
    expect(emu.stateHash()).toBe(hash);
    expect((await control(emu, "GET", "/clock")).body.now).toBe("2030-05-05T00:00:00Z");
  });

  it("rejects an invalid replacement fixture with the bad path named, and changes nothing", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const res = await control(emu, "POST", "/reset", { fixture: { scheduler: { nodes: [{ Name: 5 }] } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("scheduler.nodes[0].Name");
    expect(emu.stateHash()).toBe(before);
  });

  it("clears the request and event journals", async () => {
    const emu = await createStandin();
    await emu.scheduler.request("/v1/agent/health");
    await control(emu, "POST", "/clock/advance", { by: "1s" });
    await control(emu, "POST", "/reset");
    expect((await control(emu, "GET", "/requests")).body.requests).toEqual([]);
    const events = (await control(emu, "GET", "/events")).body.events;
    expect(events.map((e: { type: string }) => e.type)).toEqual(["state.reset"]);
  });
});

describe("snapshot and restore", () => {
  it("snapshot → mutate → restore gives the original state hash, pending timers included, over HTTP", async () => {
    const emu = await createStandin();
    installTicker(emu);
    emu.store.write(() => {
      emu.clock.schedule({ at: emu.clock.now() + 10_000, kind: "test.tick", subject: "a" });
      emu.clock.schedule({ at: emu.clock.now() + 20_000, kind: "test.tick", subject: "b" });
    });
    const snapshot = await control(emu, "GET", "/snapshot");
    const hash = (await control(emu, "GET", "/state/hash")).body.hash;

    const advanced = await control(emu, "POST", "/clock/advance", { by: "30s" });
    expect(advanced.body.fired.map((f: { subject: string }) => f.subject)).toEqual(["a", "b"]);
    emu.ids.uuid();
    expect(emu.stateHash()).not.toBe(hash);

    const restored = await control(emu, "PUT", "/snapshot", snapshot.body);
    expect(restored.status).toBe(200);
    expect(restored.body.stateHash).toBe(hash);
    // The restored timers fire again, identically.
    const again = await control(emu, "POST", "/clock/advance", { by: "30s" });
    expect(again.body).toEqual(advanced.body);
  });

  it("a malformed snapshot is rejected with 400 and changes nothing", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const good = (await control(emu, "GET", "/snapshot")).body;
    for (const bad of [{}, { ...good, format: "other" }, { ...good, rng: { algorithm: "sfc32", words: [1, 2, 3] } }, "not json"]) {
      const res = await control(emu, "PUT", "/snapshot", bad);
      expect(res.status).toBe(400);
      expect(typeof res.body.error).toBe("string");
    }
    // A timer of a kind no handler knows cannot be re-created: rejected whole.
    const unknownKind = structuredClone(good);
    unknownKind.clock.timers = [{ id: 1, at: good.clock.nowMs, kind: "nobody.handles", subject: "", data: null }];
    const res = await control(emu, "PUT", "/snapshot", unknownKind);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("nobody.handles");
    expect(emu.stateHash()).toBe(before);
  });
});

describe("snapshot restore: rows, copies and the tape", () => {
  const jobs = Array.from({ length: 3 }, (_, i) => ({
    ID: `job-${i}`,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "app", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  }));

  it("a snapshot with one corrupted row is rejected with 400 naming the row, and changes nothing", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs } } });
    const good = (await control(emu, "GET", "/snapshot")).body;
    // Change the state after the snapshot, so a partial restore would show.
    await control(emu, "POST", "/fixtures", { scheduler: { jobs: [{ ...jobs[0], ID: "later" }] } });
    const before = emu.stateHash();
    const snapshotBefore = JSON.stringify(emu.snapshot());
    const rows = good.store.tables["scheduler.jobs"].rows;
    const id = Object.keys(rows)[1]!;
    for (const corrupt of ["not a row", null, 7, true]) {
      const bad = structuredClone(good);
      bad.store.tables["scheduler.jobs"].rows[id] = corrupt;
      const res = await control(emu, "PUT", "/snapshot", bad);
      expect(res.status).toBe(400);
      expect(res.body.problems).toHaveLength(1);
      expect(res.body.problems[0]).toContain(`rows[${JSON.stringify(id)}]`);
      expect(emu.stateHash()).toBe(before);
      expect(JSON.stringify(emu.snapshot())).toBe(snapshotBefore);
    }
    // A bad table index after every row is fine: still nothing restored.
    const badIndex = structuredClone(good);
    badIndex.store.tables["scheduler.jobs"].index = "12";
    expect((await control(emu, "PUT", "/snapshot", badIndex)).status).toBe(400);
    expect(emu.stateHash()).toBe(before);
    // The good document still restores.
    const restored = await control(emu, "PUT", "/snapshot", good);
    expect(restored.status).toBe(200);
    expect(restored.body.stateHash).toBe(emu.stateHash());
    expect(emu.stateHash()).not.toBe(before);
  });

  it("a state restored over HTTP takes writes, answers reads, and restores again to the same hash", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs } } });
    const text = await (await emu.scheduler.request("/_standin/snapshot")).text();
    const hash = emu.stateHash();
    const put = () => emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: text, headers: { "Content-Type": "application/json" } });
    expect((await put()).status).toBe(200);
    expect(emu.stateHash()).toBe(hash);
    // Restored rows are frozen and shared with nothing outside: updating a job replaces its rows.
    const update = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: { ...jobs[1], Meta: { v: "2" } } }) });
    expect(update.status).toBe(200);
    const listed = (await (await emu.scheduler.request("/v1/jobs")).json()) as Array<{ ID: string }>;
    expect(listed.map((j) => j.ID).sort()).toEqual(["job-0", "job-1", "job-2"]);
    expect(emu.stateHash()).not.toBe(hash);
    expect((await put()).status).toBe(200);
    expect(emu.stateHash()).toBe(hash);
  });

  it("emu.restore copies the caller's document: changing or freezing it afterwards is the caller's business", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs } } });
    const document = JSON.parse(JSON.stringify(emu.snapshot()));
    const hash = emu.stateHash();
    emu.restore(document);
    expect(emu.stateHash()).toBe(hash);
    const row = Object.values(document.store.tables["scheduler.jobs"].rows)[0] as { TaskGroups: Array<{ Count: number }> };
    expect(Object.isFrozen(row)).toBe(false);
    row.TaskGroups[0]!.Count = 99;
    document.store.index = 1;
    expect(emu.stateHash()).toBe(hash);
  });

  it("a restore over HTTP is on the tape, and the tape replays to the same state", async () => {
    const { replayTape } = await import("../src/replay.js");
    const emu = await createStandin({ fixture: { scheduler: { jobs } } });
    const text = await (await emu.scheduler.request("/_standin/snapshot")).text();
    await emu.scheduler.request("/v1/job/job-0", { method: "DELETE" });
    const restored = await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: text, headers: { "Content-Type": "application/json" } });
    expect(restored.status).toBe(200);
    await emu.scheduler.request("/v1/job/job-1", { method: "DELETE" });
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as { entries: Array<{ kind: string }> };
    expect(tape.entries.map((e) => e.kind)).toContain("restore");
    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.ok).toBe(true);
  });
});

describe("control API", () => {
  it("ready reports seed, virtual now, index and state hash", async () => {
    const emu = await createStandin({ seed: 12 });
    const res = await control(emu, "GET", "/ready");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ready: true, seed: 12, now: "2026-01-01T00:00:00Z", index: emu.index, stateHash: emu.stateHash() });
    expect(res.body.index).toBeGreaterThanOrEqual(1);
  });

  it("is served on every service port against one shared state", async () => {
    const emu = await createStandin();
    await emu.registry.request("/_standin/clock/advance", { method: "POST", body: JSON.stringify({ by: "2m" }) });
    for (const app of [emu.scheduler, emu.registry, emu.echo]) {
      expect(((await (await app.request("/_standin/clock")).json()) as { now: string }).now).toBe("2026-01-01T00:02:00Z");
    }
  });

  it("clock routes: advance, advance-to, next, and their errors", async () => {
    const emu = await createStandin();
    installTicker(emu);
    emu.store.write(() => {
      for (const s of [5, 5, 8]) emu.clock.schedule({ at: emu.clock.now() + s * 1000, kind: "test.tick", subject: `t${s}` });
    });
    const clock = (await control(emu, "GET", "/clock")).body;
    expect(clock).toMatchObject({ mode: "manual", speed: 1, paused: false, pendingTimers: 3, nextTimerAt: "2026-01-01T00:00:05Z" });

    const next = await control(emu, "POST", "/clock/next");
    expect(next.body.now).toBe("2026-01-01T00:00:05Z");
    expect(next.body.fired).toHaveLength(2);
    expect(next.body.fired[0]).toEqual({ at: "2026-01-01T00:00:05Z", kind: "test.tick", subject: "t5", detail: { wrote: 1 } });

    const to = await control(emu, "POST", "/clock/advance-to", { to: "2026-01-01T01:00:00Z" });
    expect(to.body.fired.map((f: { subject: string }) => f.subject)).toEqual(["t8"]);
    expect(to.body.now).toBe("2026-01-01T01:00:00Z");

    expect((await control(emu, "POST", "/clock/advance-to", { to: "2026-01-01T00:30:00Z" })).status).toBe(409);
    expect((await control(emu, "POST", "/clock/advance", { by: "5 minutes" })).body.error).toContain('time: unknown unit " minutes" in duration "5 minutes"');
    expect((await control(emu, "POST", "/clock/advance", { by: "-5s" })).status).toBe(400);
    expect((await control(emu, "POST", "/clock/advance", { by: 5 })).status).toBe(400);
    expect((await control(emu, "POST", "/clock/advance", "{")).status).toBe(400);
    expect((await control(emu, "POST", "/clock/advance-to", { to: "tomorrow" })).status).toBe(400);
    expect((await control(emu, "POST", "/clock/pause")).status).toBe(409); // manual mode
    expect((await control(emu, "GET", "/clock")).body.now).toBe("2026-01-01T01:00:00Z");
  });

  it("a runaway timer trips the loop guard: 409 with a clear message, not a hang", async () => {
    const emu = await createStandin({ clock: { loopLimit: 100 } });
    emu.clock.handle("test.runaway", (t) => void emu.clock.schedule({ at: t.at + 1, kind: "test.runaway" }));
    emu.store.write(() => emu.clock.schedule({ at: emu.clock.now(), kind: "test.runaway" }));
    const res = await control(emu, "POST", "/clock/advance", { by: "1h" });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatch(/loop guard.*test\.runaway/);
  });

  it("pause and resume work in realtime mode", async () => {
    const emu = await createStandin({ clock: { mode: "realtime", speed: 1 } });
    try {
      const paused = await control(emu, "POST", "/clock/pause");
      expect(paused.status).toBe(200);
      expect(paused.body.paused).toBe(true);
      const resumed = await control(emu, "POST", "/clock/resume");
      expect(resumed.body).toMatchObject({ paused: false, mode: "realtime" });
    } finally {
      emu.close();
    }
  });

  it("fixtures apply to the current state; seed and clock are refused there", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const ok = await control(emu, "POST", "/fixtures", { registry: { agentNode: "other" } });
    expect(ok.status).toBe(200);
    expect(ok.body.stateHash).not.toBe(before);
    expect(emu.store.table("registry.config").get("agent")).toMatchObject({ agentNode: "other" });

    const mid = emu.stateHash();
    for (const bad of [{ seed: 3 }, { clock: { mode: "realtime" } }, { registry: { nope: 1 } }, { echo: { proxy: "nginx" } }]) {
      const res = await control(emu, "POST", "/fixtures", bad);
      expect(res.status).toBe(400);
    }
    expect((await control(emu, "POST", "/fixtures", "")).status).toBe(400);
    expect(emu.stateHash()).toBe(mid);
  });

  it("answers unknown control routes with a JSON 404", async () => {
    const emu = await createStandin();
    const res = await control(emu, "GET", "/nope");
    expect(res.status).toBe(404);
    expect(res.body.error).toContain("/_standin/nope");
  });

  it("with a control token, requires it on every control route (including unknown ones) but not on the services", async () => {
    const emu = await createStandin({ controlToken: "s3cret" });
    expect((await control(emu, "GET", "/clock")).status).toBe(401);
    expect((await control(emu, "GET", "/nope")).status).toBe(401);
    expect((await control(emu, "GET", "/clock", undefined, { Authorization: "Bearer wrong" })).status).toBe(401);
    expect((await control(emu, "GET", "/clock", undefined, { Authorization: "Bearer s3cret" })).status).toBe(200);
    expect((await control(emu, "GET", "/clock", undefined, { Authorization: "bearer  s3cret" })).status).toBe(200);
    expect((await emu.scheduler.request("/v1/agent/health")).status).toBe(200);
  });
});

describe("journals", () => {
  it("records service requests (not control requests) with virtual time, status and body; since/limit page it; DELETE clears it", async () => {
    const emu = await createStandin();
    await emu.scheduler.request("/v1/agent/health?pretty");
    await control(emu, "POST", "/clock/advance", { by: "10s" });
    await emu.echo.request("/echo", { method: "POST", body: '{"message":"hi"}', headers: { "x-api-key": "k" } });
    const all = (await control(emu, "GET", "/requests")).body;
    expect(all.requests).toHaveLength(2);
    expect(all.requests[0]).toMatchObject({
      seq: 1,
      service: "scheduler",
      method: "GET",
      path: "/v1/agent/health",
      query: "?pretty",
      status: 200,
      at: "2026-01-01T00:00:00Z",
      body: null,
    });
    expect(all.requests[1]).toMatchObject({ seq: 2, service: "echo", method: "POST", path: "/echo", body: '{"message":"hi"}', at: "2026-01-01T00:00:10Z" });
    expect(all.requests[1].headers["x-api-key"]).toBe("k");
    expect((await control(emu, "GET", "/requests?since=1")).body.requests.map((r: { seq: number }) => r.seq)).toEqual([2]);
    expect((await control(emu, "GET", "/requests?limit=1")).body.requests.map((r: { seq: number }) => r.seq)).toEqual([2]);
    expect((await control(emu, "GET", "/requests?limit=zero")).status).toBe(400);
    expect((await control(emu, "DELETE", "/requests")).status).toBe(200);
    expect((await control(emu, "GET", "/requests")).body.requests).toEqual([]);
  });

  it("is capped: the oldest entries are dropped and counted", async () => {
    const emu = await createStandin({ journalCapacity: 5 });
    for (let i = 0; i < 12; i++) await emu.scheduler.request(`/v1/agent/health?i=${i}`);
    const body = (await control(emu, "GET", "/requests")).body;
    expect(body.requests.map((r: { query: string }) => r.query)).toEqual(["?i=7", "?i=8", "?i=9", "?i=10", "?i=11"]);
    expect(body.dropped).toBe(7);
  });

  it("the event journal records fired timers and clock operations with virtual time and index; type filters it", async () => {
    const emu = await createStandin();
    installTicker(emu);
    emu.store.write(() => emu.clock.schedule({ at: emu.clock.now() + 1000, kind: "test.tick", subject: "x" }));
    await control(emu, "POST", "/clock/advance", { by: "2s" });
    const events = (await control(emu, "GET", "/events")).body.events;
    expect(events.map((e: { type: string }) => e.type)).toEqual(["timer.fired", "clock.advance"]);
    expect(events[0]).toMatchObject({ at: "2026-01-01T00:00:01Z", subject: "x", detail: { kind: "test.tick", detail: { wrote: 1 } } });
    expect(events[1]).toMatchObject({ at: "2026-01-01T00:00:02Z", detail: { by: "2s" } });
    expect(events[0].index).toBeLessThan(events[1].index + 1);
    const onlyClock = (await control(emu, "GET", "/events?type=clock")).body.events;
    expect(onlyClock.map((e: { type: string }) => e.type)).toEqual(["clock.advance"]);
  });
});

describe("shared HTTP behaviour", () => {
  it("gzips when the client accepts it", async () => {
    const emu = await createStandin();
    const res = await emu.scheduler.request("/v1/agent/health", { headers: { "Accept-Encoding": "gzip" } });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    const body = gunzipSync(Buffer.from(await res.arrayBuffer())).toString();
    expect(JSON.parse(body)).toEqual({ client: { message: "ok", ok: true }, server: { message: "ok", ok: true } });
    const plain = await emu.scheduler.request("/v1/agent/health");
    expect(plain.headers.get("content-encoding")).toBeNull();
  });

  it("answers 413 to bodies over 16 MiB, as plain text, and journals nothing of them", async () => {
    const emu = await createStandin();
    const res = await emu.echo.request("/echo", { method: "POST", body: "x".repeat(16 * 1024 * 1024 + 1) });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe("http: request body too large");
    expect((await control(emu, "GET", "/requests")).body.requests).toEqual([]);
  });

  it("the health routes honour ?pretty as their products read it", async () => {
    const emu = await createStandin();
    expect(await (await emu.scheduler.request("/v1/agent/health?pretty")).text()).toBe(
      '{\n    "client": {\n        "message": "ok",\n        "ok": true\n    },\n    "server": {\n        "message": "ok",\n        "ok": true\n    }\n}\n',
    );
    expect(await (await emu.scheduler.request("/v1/agent/health?pretty=0")).text()).toBe('{"client":{"message":"ok","ok":true},"server":{"message":"ok","ok":true}}');
    expect(await (await emu.registry.request("/v1/status/leader?pretty=0")).text()).toBe('"127.0.0.1:8300"\n');
    expect(await (await emu.registry.request("/v1/status/leader")).text()).toBe('"127.0.0.1:8300"');
  });

  it("each service answers unknown paths as its real product does", async () => {
    const emu = await createStandin();
    const nomad = await emu.scheduler.request("/v1/nope");
    expect(nomad.status).toBe(404);
    expect(await nomad.text()).toBe("");
    const root = await emu.scheduler.request("/?a=1");
    expect(root.status).toBe(307);
    expect(root.headers.get("location")).toBe("/ui/?a=1");
    const consul = await emu.registry.request("/v1/nope");
    expect(await consul.text()).toBe("Invalid URL path: not a recognized HTTP API endpoint\n");
    const outside = await emu.registry.request("/nope");
    expect(await outside.text()).toBe("Invalid URL path: if attempting to use the HTTP API, ensure the path starts with '/v1/'\n");
    const esp = await emu.echo.request("/nope");
    expect(esp.status).toBe(404);
    expect(((await esp.json()) as { message: string }).message).toBe("Method does not exist.");
  });

  it("a realtime clock fires due timers before a request reads the state", async () => {
    let wall = 1_000_000;
    const emu = await createStandin({
      clock: { mode: "realtime", speed: 60 },
      wall: { now: () => wall, setTimer: () => 1, clearTimer: () => {} },
    });
    installTicker(emu);
    emu.store.write(() => emu.clock.schedule({ at: emu.clock.now() + 60_000, kind: "test.tick", subject: "due" }));
    wall += 1000; // one real second at speed 60 = one virtual minute
    const clock = (await control(emu, "GET", "/clock")).body;
    expect(clock.now).toBe("2026-01-01T00:01:00Z");
    expect(clock.pendingTimers).toBe(0);
    expect(emu.store.table("test.ticks").size).toBe(1);
  });
});

describe("compression thresholds", () => {
  it("the registry leaves bodies under 1400 bytes uncompressed and gzips larger ones, as Consul's handler does", async () => {
    const emu = await createStandin({ fixture: { registry: { kv: [{ Key: "big", Value: "x".repeat(3000) }] } } });
    const small = await emu.registry.request("/v1/session/list", { headers: { "Accept-Encoding": "gzip, deflate" } });
    expect(small.headers.get("content-encoding")).toBeNull();
    expect(await small.text()).toBe("[]");
    const large = await emu.registry.request("/v1/kv/big", { headers: { "Accept-Encoding": "gzip" } });
    expect(large.headers.get("content-encoding")).toBe("gzip");
    const entries = JSON.parse(gunzipSync(Buffer.from(await large.arrayBuffer())).toString()) as Array<{ Value: string }>;
    expect(Buffer.from(entries[0]!.Value, "base64").toString()).toBe("x".repeat(3000));
  });
});
