/**
 * Load and concurrency: many parallel writers (job registers, KV CAS
 * increments, lock acquire/release, session create/destroy) against many
 * blocking readers (`?index=N&wait=…` on jobs, KV and session lists) while
 * the clock moves, in process and over real sockets.
 *
 * What it proves, per round:
 * - no lost wake-up: a reader watching a table that writers keep changing
 *   waits up to 10 minutes, yet every one of its reads returns with a higher
 *   index (a missed wake-up would park it past the round's bound);
 * - a reader of a table nobody writes returns at its deadline (virtual or
 *   real), with its index unchanged;
 * - indexes never go backwards for any reader;
 * - no deadlock: the whole round (writers stop once every reader is done)
 *   finishes within a bound;
 * - CAS increments lose no update, a lock is never held twice;
 * - nothing is left behind: parked waiters and event-stream subscribers go
 *   back to 0, real timers back to where they were, the request journal
 *   stays at its cap, and the heap stays flat over repeated rounds (counted,
 *   and compared after a forced GC with a generous bound).
 */
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { setImmediate as turn, setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { smallJob } from "../support/jobs.js";

type Service = "scheduler" | "registry" | "control";
type Call = (service: Service, path: string, init?: RequestInit) => Promise<Response>;

const inProcess =
  (emu: Standin): Call =>
  async (service, path, init) =>
    emu[service === "control" ? "scheduler" : service].request(path, init);

const overSockets =
  (srv: RunningStandin): Call =>
  (service, path, init) =>
    fetch(`${srv.urls[service === "control" ? "scheduler" : service]}${path}`, init);

const INDEX_HEADER = { scheduler: "X-Nomad-Index", registry: "X-Consul-Index" } as const;

/** Tables the writers keep changing: a reader's every wait must end with a higher index. */
const ACTIVE = [
  { service: "scheduler", path: "/v1/jobs" },
  { service: "registry", path: "/v1/kv/load/?recurse" },
  { service: "registry", path: "/v1/kv/load/cas-0" },
  { service: "registry", path: "/v1/session/list" },
] as const;

/** Tables nobody writes during a round: a reader's wait ends at its deadline with the index unchanged. */
const IDLE = [
  { service: "scheduler", path: "/v1/namespaces" },
  { service: "registry", path: "/v1/catalog/nodes" },
] as const;

const CAS_KEYS = 3;
const JOBS = 4;

function job(id: string, n: number) {
  return smallJob(id, { meta: { n: String(n) } });
}

const withQuery = (path: string, query: string) => `${path}${path.includes("?") ? "&" : "?"}${query}`;

interface RoundOptions {
  readersPerTable: number;
  readsPerReader: number;
  /** Readers keep reading (and streams keep opening) for at least this long, so writers overlap them throughout. */
  windowMs: number;
  idleReaders: number;
  idleWait: number;
  /** Bound on the whole round: a lost wake-up parks a reader for 10 minutes. */
  boundMs: number;
}

interface Outcome {
  before: number;
  after: number;
  status: number;
}

/** One round of load; returns what the readers saw and what the writers got acknowledged. */
async function round(call: Call, now: () => number, options: RoundOptions) {
  const abort = new AbortController();
  const { signal } = abort;
  let stop = false;
  const problems: string[] = [];
  const active: Outcome[][] = [];
  const idle: Array<Outcome & { realMs: number; virtualMs: number }> = [];
  let casWins = 0;
  let lockHolder: string | null = null;
  let locksTaken = 0;
  let jobsAcked = 0;
  let streamsOpened = 0;

  const json = async (res: Response) => JSON.parse(await res.text()) as any;
  const windowEnds = performance.now() + options.windowMs;
  const open = () => performance.now() < windowEnds;

  async function activeReader(w: (typeof ACTIVE)[number]): Promise<void> {
    const header = INDEX_HEADER[w.service];
    const first = await call(w.service, w.path, { signal });
    await first.arrayBuffer();
    let last = Number(first.headers.get(header));
    const seen: Outcome[] = [];
    active.push(seen);
    for (let i = 0; i < options.readsPerReader || open(); i++) {
      const res = await call(w.service, withQuery(w.path, `index=${last}&wait=10m`), { signal });
      await res.arrayBuffer();
      const index = Number(res.headers.get(header));
      seen.push({ before: last, after: index, status: res.status });
      last = index;
    }
  }

  async function idleReader(w: (typeof IDLE)[number]): Promise<void> {
    const header = INDEX_HEADER[w.service];
    const first = await call(w.service, w.path, { signal });
    await first.arrayBuffer();
    const before = Number(first.headers.get(header));
    do {
      const startedReal = performance.now();
      const startedVirtual = now();
      const res = await call(w.service, withQuery(w.path, `index=${before}&wait=${options.idleWait}ms`), { signal });
      await res.arrayBuffer();
      idle.push({ before, after: Number(res.headers.get(header)), status: res.status, realMs: performance.now() - startedReal, virtualMs: now() - startedVirtual });
    } while (open());
  }

  /** A reader whose client goes away mid-wait: its waiter must not stay parked. */
  async function abandonedReader(): Promise<void> {
    do {
      await abandonOne();
      await turn();
    } while (open());
  }

  async function abandonOne(): Promise<void> {
    const gone = new AbortController();
    const first = await call("registry", "/v1/session/list", { signal });
    await first.arrayBuffer();
    const pending = call("registry", `/v1/session/list?index=${first.headers.get("X-Consul-Index")}&wait=10m`, { signal: gone.signal }).then(
      (res) => res.arrayBuffer(),
      () => undefined,
    );
    await turn();
    gone.abort();
    await pending;
  }

  /** An event stream read for a few frames, then dropped. */
  async function eventStream(): Promise<void> {
    do {
      await streamOnce();
      // In process, a stream's frames arrive as microtasks: yield so timers (the clock mover, real deadlines) run.
      await turn();
    } while (open());
  }

  async function streamOnce(): Promise<void> {
    const gone = new AbortController();
    const res = await call("scheduler", "/v1/event/stream?topic=Job", { signal: gone.signal });
    streamsOpened++;
    const reader = res.body!.getReader();
    try {
      for (let frames = 0; frames < 3 && !stop; frames++) {
        await reader.read();
        await turn();
      }
    } finally {
      gone.abort();
      await reader.cancel().catch(() => undefined);
    }
  }

  async function jobWriter(w: number): Promise<void> {
    for (let n = 0; !stop; n++) {
      const res = await call("scheduler", "/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: job(`load-${(w + n) % JOBS}`, n) }), signal });
      await res.arrayBuffer();
      if (res.status !== 200) problems.push(`job register answered ${res.status}`);
      else jobsAcked++;
      await turn();
    }
  }

  /** Read-modify-write with ?cas=: every increment that answers true must show in the final value. */
  async function casWriter(w: number): Promise<void> {
    for (let n = 0; !stop; n++) {
      const key = `load/cas-${(w + n) % CAS_KEYS}`;
      const res = await call("registry", `/v1/kv/${key}`, { signal });
      let value = 0;
      let modify = 0;
      if (res.status === 200) {
        const [entry] = await json(res);
        value = Number(Buffer.from(entry.Value ?? "", "base64").toString() || "0");
        modify = entry.ModifyIndex;
      } else await res.arrayBuffer();
      const put = await call("registry", `/v1/kv/${key}?cas=${modify}`, { method: "PUT", body: String(value + 1), signal });
      if ((await put.text()) === "true") casWins++;
      await turn();
    }
  }

  /** Session, acquire, release, destroy: the lock must never be held twice. */
  async function lockWriter(): Promise<void> {
    while (!stop) {
      const created = await call("registry", "/v1/session/create", { method: "PUT", body: JSON.stringify({ LockDelay: "0s" }), signal });
      const { ID } = await json(created);
      const acquired = await call("registry", `/v1/kv/load/lock?acquire=${ID}`, { method: "PUT", body: ID, signal });
      if ((await acquired.text()) === "true") {
        if (lockHolder !== null) problems.push(`lock acquired by ${ID} while ${lockHolder} holds it`);
        lockHolder = ID;
        locksTaken++;
        await turn();
        lockHolder = null;
        const released = await call("registry", `/v1/kv/load/lock?release=${ID}`, { method: "PUT", signal });
        if ((await released.text()) !== "true") problems.push(`release by the holder ${ID} refused`);
      }
      const destroyed = await call("registry", `/v1/session/destroy/${ID}`, { method: "PUT", signal });
      await destroyed.arrayBuffer();
      await turn();
    }
  }

  async function clockMover(): Promise<void> {
    while (!stop) {
      const res = await call("control", "/_standin/clock/advance", { method: "POST", body: JSON.stringify({ by: "250ms" }), signal });
      if (res.status !== 200) problems.push(`advance answered ${res.status}: ${await res.text()}`);
      else await res.arrayBuffer();
      await sleep(1);
    }
  }

  const readers = [
    ...ACTIVE.flatMap((w) => Array.from({ length: options.readersPerTable }, () => activeReader(w))),
    ...IDLE.flatMap((w) => Array.from({ length: options.idleReaders }, () => idleReader(w))),
    ...Array.from({ length: 4 }, () => abandonedReader()),
    ...Array.from({ length: 3 }, () => eventStream()),
  ];
  const writers = [
    ...Array.from({ length: 4 }, (_, w) => jobWriter(w)),
    ...Array.from({ length: 4 }, (_, w) => casWriter(w)),
    ...Array.from({ length: 3 }, () => lockWriter()),
    clockMover(),
  ];

  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`round not finished within ${options.boundMs} ms: a reader or writer hangs`)), options.boundMs);
  });
  const started = performance.now();
  try {
    await Promise.race([Promise.all(readers), bound]);
    stop = true;
    await Promise.race([Promise.all(writers), bound]);
  } finally {
    stop = true;
    clearTimeout(timer);
    abort.abort();
  }
  return { active, idle, problems, casWins, locksTaken, jobsAcked, streamsOpened, elapsedMs: performance.now() - started };
}

type RoundResult = Awaited<ReturnType<typeof round>>;

/** The per-round invariants. */
async function checkRound(result: RoundResult, call: Call, options: RoundOptions): Promise<void> {
  expect(result.problems).toEqual([]);
  expect(result.active.length).toBe(ACTIVE.length * options.readersPerTable);
  for (const seen of result.active) {
    expect(seen.length).toBeGreaterThanOrEqual(options.readsPerReader);
    for (const read of seen) {
      expect([200, 404]).toContain(read.status);
      // Woken by a change, never by the 10-minute deadline: the index moved.
      expect(read.after).toBeGreaterThan(read.before);
    }
  }
  expect(result.idle.length).toBeGreaterThanOrEqual(IDLE.length * options.idleReaders);
  for (const read of result.idle) {
    expect(read.status).toBe(200);
    expect(read.after).toBe(read.before);
    // It ended at its deadline: virtual (the clock moved past it) or real (the same span of wall time).
    expect(read.virtualMs >= options.idleWait || read.realMs >= options.idleWait - 5).toBe(true);
  }
  expect(result.jobsAcked).toBeGreaterThan(0);
  expect(result.locksTaken).toBeGreaterThan(0);
  expect(result.streamsOpened).toBeGreaterThanOrEqual(3);

  // No update lost: the counters hold exactly the increments acknowledged with true.
  let total = 0;
  for (let k = 0; k < CAS_KEYS; k++) {
    const res = await call("registry", `/v1/kv/load/cas-${k}?raw`);
    total += res.status === 200 ? Number(await res.text()) : (await res.arrayBuffer(), 0);
  }
  expect(total).toBe(result.casWins);
  const lock = await call("registry", "/v1/kv/load/lock");
  if (lock.status === 200) expect((await lock.json())[0].Session).toBeUndefined();
}

/** Lets aborted requests and closed streams finish their clean-up. */
async function quiesce(): Promise<void> {
  for (let i = 0; i < 20; i++) await turn();
}

async function subscribers(call: Call): Promise<number> {
  const res = await call("control", "/_standin/scheduler/event-streams");
  return ((await res.json()) as { Subscribers: number }).Subscribers;
}

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

let running: RunningStandin | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/**
 * A round's bound is a hang detector, not a speed check: it is far above what a round takes on a busy
 * machine, and the tests' own timeout is above it, so a slow machine makes a round slower, never a failure.
 */
const HANG_BOUND_MS = 30_000;

describe("load: parallel writers, blocking readers and clock moves", { timeout: 90_000 }, () => {
  const options: RoundOptions = { readersPerTable: 6, readsPerReader: 5, windowMs: 1_200, idleReaders: 3, idleWait: 300, boundMs: HANG_BOUND_MS };
  /** Requests a round makes however slow the machine: each active reader's first read and readsPerReader more, each idle reader's two. */
  const guaranteedRequests = ACTIVE.length * options.readersPerTable * (1 + options.readsPerReader) + IDLE.length * options.idleReaders * 2;

  it("in process: no lost wake-up, no backwards index, no hang, no lost update, nothing left parked", async () => {
    // A journal smaller than the requests any round makes (how many more a fast machine makes does not matter).
    const capacity = Math.floor(guaranteedRequests / 2);
    const emu = await createStandin({ journalCapacity: capacity });
    const call = inProcess(emu);
    const timersBefore = timers();
    const result = await round(call, () => emu.clock.now(), options);
    await checkRound(result, call, options);
    await quiesce();
    expect(emu.watchers.parked).toBe(0);
    expect(await subscribers(call)).toBe(0);
    expect(timers()).toBeLessThanOrEqual(timersBefore);
    // More requests than the journal holds: it stays at its cap and counts the rest.
    expect(emu.requests.size).toBe(capacity);
    expect(emu.requests.droppedCount).toBeGreaterThan(0);
    expect(emu.events.size).toBeLessThanOrEqual(capacity);
  });

  it("every reader parked on a table wakes on the one write that passes its index, and no other reader does", async () => {
    const emu = await createStandin({});
    const call = inProcess(emu);
    const put = async (service: Service, path: string, body: unknown) => {
      const res = await call(service, path, { method: "PUT", body: typeof body === "string" ? body : JSON.stringify(body) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    };
    const tables = [
      { service: "scheduler", read: "/v1/jobs", write: (n: number) => put("scheduler", "/v1/jobs", { Job: job("barrier", n) }) },
      { service: "registry", read: "/v1/kv/barrier/key", write: (n: number) => put("registry", "/v1/kv/barrier/key", String(n)) },
      { service: "registry", read: "/v1/session/list", write: () => put("registry", "/v1/session/create", {}) },
      { service: "registry", read: "/v1/catalog/nodes", write: (n: number) => put("registry", "/v1/catalog/register", { Node: `n${n}`, Address: "10.0.0.1" }) },
    ] as const;
    const perTable = 8;
    for (let cycle = 0; cycle < 3; cycle++) {
      const waiting = await Promise.all(
        tables.map(async (t) => {
          const first = await call(t.service, t.read);
          await first.arrayBuffer();
          const before = Number(first.headers.get(INDEX_HEADER[t.service]));
          return Array.from({ length: perTable }, () => {
            const reader = { before, after: undefined as number | undefined };
            void call(t.service, withQuery(t.read, `index=${before}&wait=10m`)).then(async (res) => {
              await res.arrayBuffer();
              reader.after = Number(res.headers.get(INDEX_HEADER[t.service]));
            });
            return reader;
          });
        }),
      );
      for (let i = 0; i < 1_000 && emu.watchers.parked < tables.length * perTable; i++) await turn();
      expect(emu.watchers.parked).toBe(tables.length * perTable);
      for (const [i, t] of tables.entries()) {
        await t.write(cycle);
        await quiesce();
        // Exactly this table's readers answered, each with an index past the one it waited on.
        for (const reader of waiting[i]!) expect(reader.after, `${t.read} after one write`).toBeGreaterThan(reader.before);
        for (const others of waiting.slice(i + 1)) for (const reader of others) expect(reader.after, `woken by a write to another table`).toBeUndefined();
        expect(emu.watchers.parked).toBe((tables.length - i - 1) * perTable);
      }
    }
  });

  it("over sockets (startStandin on port 0): the same invariants through HTTP", async () => {
    running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, journalCapacity: 1_000 });
    const srv = running;
    const call = overSockets(srv);
    const sockets = { ...options, readersPerTable: 4, readsPerReader: 4 };
    const result = await round(call, () => srv.emulator.clock.now(), sockets);
    await checkRound(result, call, sockets);
    // The server notices closed connections on its own schedule: poll (by count, not by time) until it has.
    for (let i = 0; i < 4_000 && (srv.emulator.watchers.parked > 0 || (await subscribers(call)) > 0); i++) await sleep(5);
    expect(srv.emulator.watchers.parked).toBe(0);
    expect(await subscribers(call)).toBe(0);
    expect(srv.emulator.requests.size).toBeLessThanOrEqual(1_000);
  });

  it("repeated rounds with a reset between them: counts go back to zero and the heap stays flat", async () => {
    const gc = collector();
    const emu = await createStandin({ journalCapacity: 500 });
    const call = inProcess(emu);
    const small: RoundOptions = { readersPerTable: 3, readsPerReader: 3, windowMs: 120, idleReaders: 1, idleWait: 50, boundMs: HANG_BOUND_MS };
    const timersBefore = timers();
    const heaps: number[] = [];
    for (let r = 0; r < 6; r++) {
      const result = await round(call, () => emu.clock.now(), small);
      await checkRound(result, call, small);
      await quiesce();
      expect(emu.watchers.parked).toBe(0);
      expect(await subscribers(call)).toBe(0);
      expect(emu.requests.size).toBeLessThanOrEqual(500);
      expect(timers()).toBeLessThanOrEqual(timersBefore);
      expect((await call("control", "/_standin/reset", { method: "POST" })).status).toBe(200);
      gc();
      heaps.push(process.memoryUsage().heapUsed);
    }
    // After two warm-up rounds the heap may wobble (V8 keeps compiling code) but not climb with the load.
    const settled = heaps.slice(2);
    const growth = settled[settled.length - 1]! - settled[0]!;
    expect(growth, `heapUsed per round: ${heaps.map((h) => (h / 1e6).toFixed(1)).join(", ")} MB`).toBeLessThan(16e6);
  });
});

/** global.gc when node runs with --expose-gc; otherwise the same function, exposed at run time. */
function collector(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}
