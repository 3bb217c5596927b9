/**
 * What waking parked blocking queries costs, counted (never timed): the bench
 * holds "wake 10k parked GET /v1/jobs?index= with one write" to 300 ms. A
 * woken query once paid for its own wall timer (clearTimeout), its own abort
 * listener (removeEventListener on its request's signal) and its own
 * header record; the answers themselves were already shared.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Watchers, type WakeReason } from "../../src/core/blocking.js";
import { Clock, type WallTime } from "../../src/core/clock.js";
import { Store } from "../../src/core/store.js";
import { createStandin } from "../../src/emulator.js";
import { knownResponseBody, knownResponseHeaders } from "../../src/http/known-bodies.js";
import { untilParked } from "../support/parked.js";

const START = 1_767_225_600_000; // 2026-01-01T00:00:00Z

/** A wall clock whose timers fire only when the test says so, counting what is asked of it. */
class CountingWall implements WallTime {
  readonly timers = new Map<number, { delay: number; fire: () => void }>();
  set = 0;
  cleared = 0;
  private nextHandle = 1;
  now(): number {
    return 0;
  }
  setTimer(fire: () => void, delayMs: number): unknown {
    this.set++;
    const handle = this.nextHandle++;
    this.timers.set(handle, { delay: delayMs, fire });
    return handle;
  }
  clearTimer(handle: unknown): void {
    this.cleared++;
    this.timers.delete(handle as number);
  }
  /** Fires the pending timer (there is at most one). */
  fire(): void {
    const [[handle, timer]] = [...this.timers];
    this.timers.delete(handle!);
    timer!.fire();
  }
}

function setup() {
  const store = new Store();
  const clock = new Clock({ startMs: START });
  const wall = new CountingWall();
  return { store, clock, wall, watchers: new Watchers(store, clock, wall) };
}

const write = (store: Store) => store.write(() => store.table("jobs").put("a", { ID: "a" }));

describe("Watchers: real deadlines", () => {
  it("1,000 parked waiters share one wall timer; one write wakes them all and clears it once", async () => {
    const { store, watchers, wall } = setup();
    const waits: Promise<WakeReason>[] = [];
    for (let i = 0; i < 1_000; i++) waits.push(watchers.wait({ tables: ["jobs"], afterIndex: store.index, realTimeoutMs: 300_000 + (i % 7) * 1_000 }));
    expect(wall.timers.size).toBe(1);
    expect(wall.set).toBe(1);
    write(store);
    expect(new Set(await Promise.all(waits))).toEqual(new Set(["changed"]));
    expect(watchers.parked).toBe(0);
    expect(wall.cleared).toBe(1);
    expect(wall.timers.size).toBe(0);
  });

  it("deadlines time out earliest first, the one timer re-armed for the next; a woken waiter is skipped", async () => {
    const { store, watchers, wall } = setup();
    const settled: string[] = [];
    const park = (name: string, table: string, realTimeoutMs: number) =>
      watchers.wait({ tables: [table], afterIndex: store.index, realTimeoutMs }).then((reason) => settled.push(`${name}:${reason}`));
    const all = [park("late", "jobs", 3_000), park("early", "evals", 1_000), park("middle", "nodes", 2_000), park("woken", "jobs", 500)];
    expect([...wall.timers.values()].map((t) => t.delay)).toEqual([500]);
    write(store); // wakes "woken" (and "late", on jobs too)
    await Promise.resolve();
    // The timer still armed for the woken waiter's deadline fires, finds it settled, and re-arms for the next.
    wall.fire();
    expect([...wall.timers.values()].map((t) => t.delay)).toEqual([1_000]);
    wall.fire();
    expect([...wall.timers.values()].map((t) => t.delay)).toEqual([2_000]);
    wall.fire();
    await Promise.all(all);
    expect(settled).toEqual(["late:changed", "woken:changed", "early:timeout", "middle:timeout"]);
    expect(wall.timers.size).toBe(0);
    expect(watchers.parked).toBe(0);
  });

  it("waiters with the same deadline time out in the order they parked", async () => {
    const { watchers, wall } = setup();
    const order: number[] = [];
    const waits = [0, 1, 2].map((i) => watchers.wait({ tables: ["jobs"], afterIndex: 1, realTimeoutMs: 1_000 }).then(() => order.push(i)));
    wall.fire();
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2]);
  });
});

describe("Watchers: abort signals", () => {
  it("one listener per signal however often it parks, none removed; an abort settles the waiter parked with it", async () => {
    const { store, watchers } = setup();
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, "addEventListener");
    const remove = vi.spyOn(controller.signal, "removeEventListener");
    // A query that re-parks (its table moved, its answer did not) waits again with the same signal.
    for (let i = 0; i < 3; i++) {
      const woken = watchers.wait({ tables: ["jobs"], afterIndex: store.index, signal: controller.signal });
      write(store);
      expect(await woken).toBe("changed");
    }
    const parked = watchers.wait({ tables: ["jobs"], afterIndex: store.index, signal: controller.signal });
    const other = watchers.wait({ tables: ["jobs"], afterIndex: store.index });
    expect(add).toHaveBeenCalledTimes(1);
    expect(remove).not.toHaveBeenCalled();
    controller.abort();
    expect(await parked).toBe("aborted");
    expect(watchers.parked).toBe(1);
    write(store);
    expect(await other).toBe("changed");
  });
});

describe("GET /v1/jobs?index= woken by one write (through the HTTP surface)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("300 parked queries answer from one encoded body and one header record; the wake clears no timer of theirs", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [{ ID: "a", Type: "batch", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] }] } } });
    const first = await emu.scheduler.request("/v1/jobs");
    const index = Number(first.headers.get("x-nomad-index"));
    const pending = Array.from({ length: 300 }, () => emu.scheduler.request(`/v1/jobs?index=${index}&wait=5m`) as Promise<Response>);
    await untilParked(emu, 300);
    const clears = vi.spyOn(globalThis, "clearTimeout");
    const put = await emu.scheduler.request("/v1/jobs", {
      method: "PUT",
      body: JSON.stringify({ Job: { ID: "b", Type: "batch", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] } }),
    });
    expect(put.status).toBe(200);
    const answers = await Promise.all(pending);
    // One shared real timer for the 300 deadlines (and none of the clock's own per query): cleared at most once or twice, not 300 times.
    expect(clears.mock.calls.length).toBeLessThan(5);
    expect(answers.every((a) => a.status === 200 && Number(a.headers.get("x-nomad-index")) > index)).toBe(true);
    expect(new Set(answers.map((a) => knownResponseBody(a))).size).toBe(1);
    expect(new Set(answers.map((a) => knownResponseHeaders(a))).size).toBe(1);
    const ids = (JSON.parse(await answers[0]!.text()) as { ID: string }[]).map((job) => job.ID);
    expect(ids).toEqual(["a", "b"]);
    expect(emu.watchers.parked).toBe(0);
  });
});

describe("a parked query's wake reads its request's URL no more", () => {
  it("the URL is read on arrival; answering (from the answer another woken query encoded) and journaling read it 0 times", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [{ ID: "a", Type: "batch", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] }] } } });
    const first = await emu.scheduler.request("/v1/jobs");
    const index = Number(first.headers.get("x-nomad-index"));
    // An in-process Request serialises its URL on every read: count them.
    const request = new Request(`http://localhost/v1/jobs?index=${index}&wait=5m`);
    const url = request.url;
    let reads = 0;
    Object.defineProperty(request, "url", {
      get() {
        reads++;
        return url;
      },
    });
    // Parked first, so woken first: it encodes the answer (asking the URL whether to pretty-print it).
    const encoding = emu.scheduler.request(`/v1/jobs?index=${index}&wait=5m`) as Promise<Response>;
    await untilParked(emu, 1);
    const answering = emu.scheduler.fetch(request) as Promise<Response>;
    await untilParked(emu, 2);
    const onArrival = reads;
    expect(onArrival).toBeGreaterThan(0);
    await emu.scheduler.request("/v1/jobs", {
      method: "PUT",
      body: JSON.stringify({ Job: { ID: "b", Type: "batch", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] } }),
    });
    const [encoded, answer] = await Promise.all([encoding, answering]);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe(await encoded.text());
    expect(reads - onArrival).toBe(0);
    // The journal still says which request it was.
    const entries = emu.requests.query();
    expect(entries.some((entry) => entry.path === "/v1/jobs" && entry.query === `?index=${index}&wait=5m` && entry.status === 200)).toBe(true);
  });
});
