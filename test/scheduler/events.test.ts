/**
 * GET /v1/event/stream through the HTTP surface: NDJSON frames as the
 * simulated cluster changes on the virtual clock, topic/namespace filters,
 * index replay, heartbeats in virtual time, and cleanup when the client goes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { webJob } from "../support/jobs.js";

type Json = Record<string, any>;

/** Reads newline-delimited frames from a streaming body. */
class Frames {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  private pending = "";
  /** Every byte read so far. */
  raw = "";

  constructor(readonly response: Response) {
    this.reader = response.body!.getReader();
  }

  /** The next frame, parsed; undefined once the stream has ended. */
  async next(): Promise<Json | undefined> {
    for (;;) {
      const newline = this.pending.indexOf("\n");
      if (newline !== -1) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        return JSON.parse(line);
      }
      const { done, value } = await this.reader.read();
      if (done) {
        expect(this.pending).toBe("");
        return undefined;
      }
      const text = this.decoder.decode(value, { stream: true });
      this.raw += text;
      this.pending += text;
    }
  }

  async take(n: number): Promise<Json[]> {
    const frames: Json[] = [];
    for (let i = 0; i < n; i++) frames.push((await this.next())!);
    return frames;
  }

  /** Reads to the end; the text after the last full line (a Nomad error the server appended). */
  async tail(): Promise<string> {
    const { tail } = await this.restWithTail();
    return tail;
  }

  /** Every remaining frame and the text after the last full line. */
  async restWithTail(): Promise<{ frames: Json[]; tail: string }> {
    const frames: Json[] = [];
    for (;;) {
      const newline = this.pending.indexOf("\n");
      if (newline !== -1) {
        frames.push(JSON.parse(this.pending.slice(0, newline)));
        this.pending = this.pending.slice(newline + 1);
        continue;
      }
      const { done, value } = await this.reader.read();
      if (done) {
        const tail = this.pending;
        this.pending = "";
        return { frames, tail };
      }
      const text = this.decoder.decode(value, { stream: true });
      this.raw += text;
      this.pending += text;
    }
  }

  /** Every remaining frame until the stream ends. */
  async rest(): Promise<Json[]> {
    const frames: Json[] = [];
    for (let frame = await this.next(); frame !== undefined; frame = await this.next()) frames.push(frame);
    return frames;
  }
}

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

async function open(emu: Standin, query = ""): Promise<{ frames: Frames; abort: () => void }> {
  const controller = new AbortController();
  controllers.push(controller);
  const res = await emu.scheduler.request(`/v1/event/stream${query}`, { signal: controller.signal });
  expect(res.status).toBe(200);
  const frames = new Frames(res);
  return { frames, abort: () => controller.abort() };
}

/** Opens a stream, runs `act`, then aborts and returns every frame the stream sent (including heartbeats). */
async function record(emu: Standin, query: string, act: () => Promise<void> | void): Promise<{ frames: Json[]; raw: string }> {
  const { frames, abort } = await open(emu, query);
  await act();
  abort();
  const all = await frames.rest();
  return { frames: all, raw: frames.raw };
}

function job(id: string, opts: { count?: number; update?: boolean; namespace?: string } = {}): Json {
  const j = webJob(id, { count: opts.count });
  if (opts.update) j.Update = { MaxParallel: 1, MinHealthyTime: 1_000_000_000, HealthyDeadline: 60_000_000_000 };
  if (opts.namespace) j.Namespace = opts.namespace;
  return j;
}

async function register(emu: Standin, body: Json, query = ""): Promise<number> {
  const res = await emu.scheduler.request(`/v1/jobs${query}`, { method: "PUT", body: JSON.stringify({ Job: body }) });
  expect(res.status, await res.clone().text()).toBe(200);
  return Number(res.headers.get("X-Nomad-Index"));
}

async function subscribers(emu: Standin): Promise<Json> {
  return (await emu.scheduler.request("/_standin/scheduler/event-streams")).json() as Promise<Json>;
}

const summary = (frames: Json[]) => frames.filter((f) => f.Events).flatMap((f) => f.Events.map((e: Json) => `${f.Index} ${e.Topic} ${e.Type} ${e.Key}`));

describe("GET /v1/event/stream", () => {
  it("answers 200 with Nomad's headers, a heartbeat at once, then the buffered events (index 0 = from the oldest)", async () => {
    const emu = await createStandin();
    const { frames, abort } = await open(emu);
    expect(frames.response.headers.get("Content-Type")).toBe("application/json");
    expect(frames.response.headers.get("Cache-Control")).toBe("no-cache");
    expect(await frames.next()).toEqual({});
    // The agent's own node registered when the state was built.
    const first = (await frames.next())!;
    expect(Object.keys(first)).toEqual(["Events", "Index"]);
    expect(first.Events).toHaveLength(1);
    const node = first.Events[0];
    expect(Object.keys(node)).toEqual(["FilterKeys", "Index", "Key", "Namespace", "Payload", "Topic", "Type"]);
    expect(node).toMatchObject({ Topic: "Node", Type: "NodeRegistration", Namespace: "", FilterKeys: null, Index: first.Index });
    expect(node.Payload.Node.ID).toBe(node.Key);
    expect(node.Payload.Node.Name).toBe("standin");
    expect(node.Payload.Node.SecretID).toBe("");
    abort();
    expect(await frames.next()).toBeUndefined();
  });

  it("streams a job's life as the clock moves: registration, plan, client updates, deployment — each frame one write's index", async () => {
    const emu = await createStandin();
    let registerIndex = 0;
    const { frames } = await record(emu, "", async () => {
      registerIndex = await register(emu, job("web", { update: true }));
      emu.clock.advance("12s");
    });
    const lines = summary(frames);
    const evalId = frames.find((f) => f.Index === registerIndex)!.Events[1].Key;
    const registered = frames.find((f) => f.Index === registerIndex)!;
    expect(registered.Events.map((e: Json) => `${e.Topic} ${e.Type}`)).toEqual(["Job JobRegistered", "Evaluation JobRegistered"]);
    const [jobEvent, evalEvent] = registered.Events;
    expect(jobEvent).toMatchObject({ Key: "web", Namespace: "default", FilterKeys: null, Index: registerIndex });
    // The full job, as GET /v1/job/web shows it (defaults filled in).
    expect(jobEvent.Payload.Job).toMatchObject({ ID: "web", Namespace: "default", Type: "service", Status: "pending", Version: 0 });
    expect(jobEvent.Payload.Job.TaskGroups[0].Tasks[0].Name).toBe("server");
    expect(evalEvent.FilterKeys).toEqual(["web", ""]);
    expect(evalEvent.Payload.Evaluation).toMatchObject({ ID: evalId, JobID: "web", Status: "pending", TriggeredBy: "job-register" });

    // The evaluation runs: the plan (job status, deployment, allocation) then the evaluation's own update.
    const plan = frames.find((f) => f.Events?.some((e: Json) => e.Type === "PlanResult"))!;
    expect(plan.Events.map((e: Json) => `${e.Topic} ${e.Type}`)).toEqual(["Job PlanResult", "Deployment PlanResult", "Allocation PlanResult", "Evaluation EvaluationUpdated"]);
    const alloc = plan.Events.find((e: Json) => e.Topic === "Allocation");
    const deployment = plan.Events.find((e: Json) => e.Topic === "Deployment");
    expect(alloc.FilterKeys).toEqual(["web", deployment.Key]);
    expect(deployment.FilterKeys).toEqual(["web"]);
    expect(alloc.Payload.Allocation).not.toHaveProperty("Job"); // Nomad strips the job from allocation events; the nil is omitted (omitempty)
    expect(alloc.Payload.Allocation.ClientStatus).toBe("pending");
    expect(plan.Events.find((e: Json) => e.Topic === "Evaluation").Payload.Evaluation.Status).toBe("complete");

    // The client starts it, then the deployment succeeds.
    expect(lines.some((l) => l.endsWith(`Allocation AllocationUpdated ${alloc.Key}`))).toBe(true);
    const running = frames.find((f) => f.Events?.some((e: Json) => e.Type === "AllocationUpdated"))!;
    expect(running.Events.find((e: Json) => e.Topic === "Allocation").Payload.Allocation.ClientStatus).toBe("running");
    const done = frames.filter((f) => f.Events?.some((e: Json) => e.Topic === "Deployment" && e.Type === "DeploymentStatusUpdate")).at(-1)!;
    expect(done.Events.find((e: Json) => e.Topic === "Deployment").Payload.Deployment.Status).toBe("successful");

    // Frames come in index order, and every event carries its frame's index.
    const indexes = frames.filter((f) => f.Index !== undefined).map((f) => f.Index);
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    for (const f of frames.filter((x) => x.Events)) for (const e of f.Events) expect(e.Index).toBe(f.Index);

    // Stopping the job: JobDeregistered for the job and the evaluation the stop creates.
    // (An index past the newest batch replays that batch first, as Nomad's StartAtClosest does.)
    const before = emu.index;
    const stop = await record(emu, `?index=${before + 1}`, async () => {
      const res = await emu.scheduler.request("/v1/job/web", { method: "DELETE" });
      expect(res.status).toBe(200);
    });
    const batches = stop.frames.filter((f) => f.Events);
    expect(batches.map((f) => f.Index)).toEqual([before, before + 1]);
    const stopFrame = batches[1]!;
    expect(stopFrame.Events.map((e: Json) => `${e.Topic} ${e.Type}`)).toEqual(["Job JobDeregistered", "Evaluation JobDeregistered"]);
    expect(stopFrame.Events[0].Payload.Job.Stop).toBe(true);
  });

  it("filters by topic and key (Topic:Key, bare topic, * wildcards; keys match Key or FilterKeys)", async () => {
    const emu = await createStandin();
    const act = async () => {
      await register(emu, job("web"));
      await register(emu, job("api"));
      emu.clock.advance("2s");
    };
    const only = async (query: string) => {
      const fresh = await createStandin();
      const { frames } = await record(fresh, query, async () => {
        await register(fresh, job("web"));
        await register(fresh, job("api"));
        fresh.clock.advance("2s");
      });
      return frames.filter((f) => f.Events).flatMap((f) => f.Events as Json[]);
    };
    await act();

    const jobs = await only("?topic=Job");
    expect(new Set(jobs.map((e) => e.Topic))).toEqual(new Set(["Job"]));
    expect(new Set(jobs.map((e) => e.Key))).toEqual(new Set(["web", "api"]));

    const web = await only("?topic=Job:web");
    expect(web.length).toBeGreaterThan(0);
    expect(web.every((e) => e.Topic === "Job" && e.Key === "web")).toBe(true);

    // Allocation:web matches through FilterKeys (the allocation's job).
    const allocs = await only("?topic=Allocation:web");
    expect(allocs.length).toBeGreaterThan(0);
    expect(allocs.every((e) => e.Topic === "Allocation" && e.FilterKeys[0] === "web")).toBe(true);

    // Repeated topics combine; *:key matches any topic.
    const two = await only("?topic=Job:api&topic=Evaluation");
    expect(new Set(two.map((e) => `${e.Topic}:${e.Topic === "Job" ? e.Key : "*"}`))).toEqual(new Set(["Job:api", "Evaluation:*"]));
    const anyWeb = await only("?topic=*:web");
    expect(new Set(anyWeb.map((e) => e.Topic))).toEqual(new Set(["Job", "Evaluation", "Deployment", "Allocation"]));
    expect(anyWeb.every((e) => e.Key === "web" || e.FilterKeys?.includes("web"))).toBe(true);

    const nodes = await only("?topic=Node:*");
    expect(nodes.map((e) => e.Type)).toEqual(["NodeRegistration"]);

    // Nomad's filter adds an event once per matching key: the same key twice, the event twice.
    const twice = await only("?topic=Job:web&topic=*:web");
    const once = await only("?topic=Job:web");
    expect(twice.filter((e) => e.Topic === "Job")).toHaveLength(2 * once.length);
  });

  it("namespace: default by default, one namespace, or * for all (node events pass every namespace)", async () => {
    const build = async (query: string) => {
      const emu = await createStandin();
      expect((await emu.scheduler.request("/v1/namespace/prod", { method: "PUT", body: JSON.stringify({ Name: "prod" }) })).status).toBe(200);
      const { frames } = await record(emu, query, async () => {
        await register(emu, job("web"));
        await register(emu, job("web", { namespace: "prod" }), "?namespace=prod");
      });
      return frames.filter((f) => f.Events).flatMap((f) => f.Events as Json[]);
    };
    const namespaces = (events: Json[]) => new Set(events.map((e) => e.Namespace));
    expect(namespaces(await build(""))).toEqual(new Set(["", "default"]));
    expect(namespaces(await build("?namespace=prod"))).toEqual(new Set(["", "prod"]));
    expect(namespaces(await build("?namespace=*"))).toEqual(new Set(["", "default", "prod"]));
  });

  it("index replays buffered batches at or after it; past the newest, Nomad starts at the newest", async () => {
    const emu = await createStandin();
    const first = await register(emu, job("a"));
    const second = await register(emu, job("b"));
    const third = await register(emu, job("c"));
    const replay = async (index: number | string) => {
      const { frames, abort } = await open(emu, `?index=${index}&topic=Job`);
      expect(await frames.next()).toEqual({});
      abort();
      return (await frames.rest()).map((f) => f.Index);
    };
    expect(await replay(second)).toEqual([second, third]);
    expect(await replay(second - 1 > first ? second - 1 : second)).toEqual([second, third]);
    expect(await replay(first)).toEqual([first, second, third]);
    expect(await replay(0)).toEqual([first, second, third]);
    expect(await replay(third + 1000)).toEqual([third]);

    // Replayed frames are exactly the frames a live stream saw.
    const live = await record(emu, "?topic=Job", async () => {
      await register(emu, job("d"));
    });
    const d = live.frames.find((f) => f.Events)!;
    const again = await record(emu, `?topic=Job&index=${d.Index}`, () => {});
    expect(again.raw).toContain(JSON.stringify(d));
  });

  it("rejects bad parameters with Nomad's 400s and other methods with 405", async () => {
    const emu = await createStandin();
    const cases: Array<[string, string, number, string]> = [
      ["GET", "?index=abc", 400, 'Unable to parse index: strconv.Atoi: parsing "abc": invalid syntax'],
      ["GET", "?index=99999999999999999999", 400, 'Unable to parse index: strconv.Atoi: parsing "99999999999999999999": value out of range'],
      ["GET", "?topic=Job:web:extra", 400, "Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: Job:web:extra"],
      ["GET", "?topic=Job&topic=a:b:c", 400, "Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: a:b:c"],
      ["PUT", "", 405, "Invalid method"],
      ["GET", "?region=elsewhere", 500, "No path to region"],
    ];
    for (const [method, query, status, text] of cases) {
      const res = await emu.scheduler.request(`/v1/event/stream${query}`, { method });
      expect([method, query, res.status, await res.text()]).toEqual([method, query, status, text]);
    }
    expect((await subscribers(emu)).Subscribers).toBe(0);
  });

  it("sends a heartbeat {} every 10 s of virtual time, and nothing while the clock stands still", async () => {
    const emu = await createStandin();
    const { frames, abort } = await open(emu, "?topic=Job");
    expect(await frames.next()).toEqual({});
    emu.clock.advance("9.999s");
    emu.clock.advance("1ms");
    expect(await frames.next()).toEqual({});
    emu.clock.advance("25s"); // 20 s and 30 s
    await register(emu, job("web"));
    emu.clock.advance("5s"); // the plan changes the job's status; 40 s
    abort();
    const rest = await frames.rest();
    expect(rest.map((f) => (f.Events ? f.Events.map((e: Json) => e.Type).join() : "heartbeat"))).toEqual(["heartbeat", "heartbeat", "JobRegistered", "PlanResult", "heartbeat"]);
  });

  it("ends when the client aborts, leaving no subscriber and no heartbeat timer behind", async () => {
    const emu = await createStandin();
    expect((await subscribers(emu)).Subscribers).toBe(0);
    const a = await open(emu);
    const b = await open(emu, "?topic=Job");
    expect(await a.frames.next()).toEqual({});
    expect((await subscribers(emu)).Subscribers).toBe(2);
    a.abort();
    await a.frames.rest();
    expect((await subscribers(emu)).Subscribers).toBe(1);
    b.abort();
    expect(await b.frames.rest()).toEqual([{}]);
    expect((await subscribers(emu)).Subscribers).toBe(0);
    // The heartbeat timers are gone: moving the clock and writing afterwards touches no closed stream.
    expect(() => emu.clock.advance("1m")).not.toThrow();
    await register(emu, job("after"));
    expect(() => emu.clock.advance("1m")).not.toThrow();
    expect((await subscribers(emu)).Subscribers).toBe(0);

    // A client that reads nothing and cancels its body cleans up too.
    const res = await emu.scheduler.request("/v1/event/stream");
    expect((await subscribers(emu)).Subscribers).toBe(1);
    await res.body!.cancel();
    expect((await subscribers(emu)).Subscribers).toBe(0);

    // An already-aborted request opens nothing.
    const gone = new AbortController();
    gone.abort();
    const late = await Promise.resolve(emu.scheduler.request("/v1/event/stream", { signal: gone.signal })).catch((e: unknown) => e);
    if (late instanceof Response) await late.body?.cancel();
    expect((await subscribers(emu)).Subscribers).toBe(0);
  });

  it("is deterministic: the same requests give the same bytes", async () => {
    const run = async () => {
      const emu = await createStandin();
      const { raw } = await record(emu, "", async () => {
        await register(emu, job("web", { count: 2, update: true }));
        emu.clock.advance("15s");
        await emu.scheduler.request("/v1/job/web", { method: "DELETE" });
        emu.clock.advance("15s");
      });
      return raw;
    };
    const [one, two] = [await run(), await run()];
    expect(one.length).toBeGreaterThan(1000);
    expect(one).toBe(two);
    expect(one.endsWith("\n")).toBe(true);
  });

  it("node faults stream as Node events (status: NodeStreamEvent; eligibility or drain: NodeDrain)", async () => {
    const emu = await createStandin();
    const node = (await (await emu.scheduler.request("/v1/nodes")).json()) as Json[];
    const id = node[0]!.ID;
    const { frames } = await record(emu, "?topic=Node", async () => {
      await emu.scheduler.request(`/_standin/scheduler/nodes/${id}`, { method: "POST", body: JSON.stringify({ SchedulingEligibility: "ineligible" }) });
      await emu.scheduler.request(`/_standin/scheduler/nodes/${id}`, { method: "POST", body: JSON.stringify({ Status: "down" }) });
    });
    const events = frames.filter((f) => f.Events).flatMap((f) => f.Events as Json[]);
    expect(events.map((e) => `${e.Type} ${e.Payload.Node.Status} ${e.Payload.Node.SchedulingEligibility}`)).toEqual([
      "NodeRegistration ready eligible",
      "NodeDrain ready ineligible",
      "NodeStreamEvent down ineligible",
    ]);
  });

  it("an operator's health report is one DeploymentAllocHealth write (allocation, deployment and the eval it creates)", async () => {
    const emu = await createStandin();
    // Two allocations, one reported: the deployment stays running (its completion would be a write of its own in Nomad).
    await register(emu, job("web", { update: true, count: 2 }));
    emu.clock.advance("1s"); // placed and running, not yet healthy
    const [deployment] = (await (await emu.scheduler.request("/v1/deployments")).json()) as Json[];
    const [alloc] = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    let index = 0;
    const { frames } = await record(emu, `?index=${emu.index + 1}`, async () => {
      const res = await emu.scheduler.request(`/v1/deployment/allocation-health/${deployment!.ID}`, {
        method: "POST",
        body: JSON.stringify({ DeploymentID: deployment!.ID, HealthyAllocationIDs: [alloc!.ID] }),
      });
      expect(res.status).toBe(200);
      index = Number(res.headers.get("X-Nomad-Index"));
    });
    const report = frames.find((f) => f.Index === index)!;
    expect(report.Events.map((e: Json) => `${e.Topic} ${e.Type}`)).toEqual([
      "Deployment DeploymentAllocHealth",
      "Allocation DeploymentAllocHealth",
      "Evaluation DeploymentAllocHealth",
    ]);
    expect(report.Events[1].Payload.Allocation.DeploymentStatus.Healthy).toBe(true);
  });

  it("keeps the last 100 batches; reset empties the buffer and ends open streams", async () => {
    const emu = await createStandin();
    for (let i = 0; i < 120; i++) await register(emu, job(`j${i}`));
    const status = await subscribers(emu);
    expect(status.BufferedBatches).toBe(100);
    const { frames } = await open(emu, "?topic=Job");
    const replayed = await frames.take(101);
    expect(replayed[0]).toEqual({});
    expect(replayed[1]!.Events[0].Key).toBe("j20");
    expect(replayed[100]!.Events[0].Key).toBe("j119");
    await emu.reset();
    expect(await frames.rest()).toEqual([]);
    expect(await subscribers(emu)).toEqual({ Subscribers: 0, BufferedBatches: 0 });
  });
});

describe("GET /v1/event/stream over a real socket", () => {
  it("flushes each frame at once (even to a gzip-accepting client) and unsubscribes when the connection closes", async () => {
    const { startStandin } = await import("../../src/server.js");
    const http = await import("node:http");
    const running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
    const until = async (check: () => boolean | Promise<boolean>) => {
      // A generous bound (a hang, not slowness: a loaded machine may take seconds to deliver a close).
      for (let i = 0; i < 1500 && !(await check()); i++) await new Promise((r) => setTimeout(r, 10));
      expect(await check()).toBe(true);
    };
    try {
      const base = running.urls.scheduler;
      const streams = async () => ((await (await fetch(`${base}/_standin/scheduler/event-streams`)).json()) as Json).Subscribers;
      const request = http.get(`${base}/v1/event/stream?topic=Job`, { headers: { "Accept-Encoding": "gzip" } });
      const response: import("node:http").IncomingMessage = await new Promise((resolve) => request.on("response", resolve));
      expect(response.headers["content-encoding"]).toBeUndefined();
      expect(response.headers["transfer-encoding"]).toBe("chunked");
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      await until(() => text === "{}\n");
      await fetch(`${base}/v1/jobs`, { method: "PUT", body: JSON.stringify({ Job: job("web") }) });
      await until(() => text.split("\n").length === 3);
      expect(JSON.parse(text.split("\n")[1]!).Events[0]).toMatchObject({ Topic: "Job", Type: "JobRegistered", Key: "web" });
      expect(await streams()).toBe(1);
      request.destroy();
      await until(async () => (await streams()) === 0);
    } finally {
      await running.close();
    }
  });

  it("drops a client that stops reading once more than 100 of its batches wait: Nomad's 'event dropped from buffer' ends the body", async () => {
    const { STREAM_SLACK_BYTES, EVENT_BUFFER_SIZE, EVENT_DROPPED } = await import("../../src/scheduler/events/events.js");
    const emu = await createStandin();
    const { frames } = await open(emu, "?topic=Job");
    expect(await frames.next()).toEqual({});
    // Never read again: each registration's Job event carries the whole job (~64 KiB of Meta).
    const blob = "x".repeat(64 * 1024);
    let registered = 0;
    while ((await subscribers(emu)).Subscribers === 1 && registered < 400) {
      await register(emu, { ...job(`big-${registered}`), Meta: { blob } });
      registered++;
    }
    expect((await subscribers(emu)).Subscribers).toBe(0);
    // What the stream queues (what a socket would take) plus the broker's buffer of batches, then no more.
    const queued = Math.ceil(STREAM_SLACK_BYTES / blob.length);
    expect(registered).toBeGreaterThan(EVENT_BUFFER_SIZE);
    expect(registered).toBeLessThanOrEqual(queued + EVENT_BUFFER_SIZE + 1);
    // The unread frames went with the subscription: the client reads the error, then the end.
    const { frames: rest, tail } = await frames.restWithTail();
    expect(rest).toEqual([]);
    expect(tail).toBe(EVENT_DROPPED);
    // It subscribes again from the buffer and is served.
    const again = await open(emu, "?topic=Job");
    expect(await again.frames.next()).toEqual({});
    expect((await again.frames.next())!.Events[0].Topic).toBe("Job");
    expect((await subscribers(emu)).Subscribers).toBe(1);
  });

  it("holds at most the budget across all subscribers: past it the one holding the most is dropped, the others keep everything", async () => {
    const { EVENT_STREAMS_BUDGET_BYTES, STREAM_SLACK_BYTES, EVENT_DROPPED } = await import("../../src/scheduler/events/events.js");
    const emu = await createStandin();
    // 80 clients that stop reading each hold about STREAM_SLACK_BYTES (1 MiB): 80 MiB wanted, 64 MiB allowed.
    const count = Math.ceil((EVENT_STREAMS_BUDGET_BYTES / STREAM_SLACK_BYTES) * 1.25);
    const streams = [];
    for (let i = 0; i < count; i++) {
      const s = await open(emu, "?topic=Job");
      expect(await s.frames.next()).toEqual({});
      streams.push(s);
    }
    const blob = "x".repeat(256 * 1024);
    const jobs = 6;
    for (let i = 0; i < jobs; i++) await register(emu, { ...job(`big-${i}`), Meta: { blob } });
    const alive = (await subscribers(emu)).Subscribers as number;
    // Each survivor holds more than the slack (its last frame went past it) and the survivors fit the budget.
    expect(alive).toBeLessThan(count);
    expect(alive * STREAM_SLACK_BYTES).toBeLessThanOrEqual(EVENT_STREAMS_BUDGET_BYTES);
    expect(alive * (STREAM_SLACK_BYTES + 2 * blob.length)).toBeGreaterThan(EVENT_STREAMS_BUDGET_BYTES);
    let dropped = 0;
    let kept = 0;
    for (const s of streams) {
      s.abort();
      const rest = await s.frames.restWithTail();
      if (rest.tail === EVENT_DROPPED) dropped++;
      else if (rest.tail === "" && rest.frames.filter((f) => f.Events).length >= 4) kept++;
    }
    expect(dropped).toBe(count - alive);
    expect(kept).toBe(alive);
  });

  it("a stuck stream's heartbeats stop piling up and resume on the 10 s grid once the client has read", async () => {
    const { HEARTBEAT_SLACK_BYTES } = await import("../../src/scheduler/events/events.js");
    const emu = await createStandin();
    const { frames, abort } = await open(emu, "?topic=Job");
    expect(await frames.next()).toEqual({});
    emu.clock.advance("168h"); // 60,480 heartbeats if nothing held them back
    expect((await subscribers(emu)).Subscribers).toBe(1);
    const beats = Math.floor(HEARTBEAT_SLACK_BYTES / 3) + 1; // "{}\n" each, until past the slack
    expect(await frames.take(beats)).toEqual(Array.from({ length: beats }, () => ({})));
    // The queue is read: the next beat is the grid's next tick.
    emu.clock.advance("10s");
    expect(await frames.next()).toEqual({});
    abort();
    expect(await frames.rest()).toEqual([]);
  });
});

describe("node and allocation operations on the stream", () => {
  it("a purge sends NodeDeregistration with the node; an allocation stop sends AllocationUpdateDesiredStatus", async () => {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "spare" }] } } as never });
    await register(emu, job("web", { count: 1 }));
    emu.clock.advance("1m");
    const nodes = (await (await emu.scheduler.request("/v1/nodes")).json()) as Json[];
    const allocs = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    const spare = nodes.find((n) => !allocs.some((a) => a.NodeID === n.ID))!;
    const { frames } = await record(emu, "?topic=Node&topic=Allocation", async () => {
      expect((await emu.scheduler.request(`/v1/node/${spare.ID}/purge`, { method: "PUT" })).status).toBe(200);
      expect((await emu.scheduler.request(`/v1/allocation/${allocs[0]!.ID}/stop`, { method: "PUT" })).status).toBe(200);
    });
    const events = frames.flatMap((f) => (f.Events as Json[] | undefined) ?? []);
    const deregistration = events.find((e) => e.Type === "NodeDeregistration");
    expect(deregistration).toMatchObject({ Topic: "Node", Key: spare.ID, Payload: { Node: { ID: spare.ID, Name: "spare" } } });
    const stopped = events.filter((e) => e.Topic === "Allocation" && e.Key === allocs[0]!.ID).at(-1);
    expect(stopped).toMatchObject({ Type: "AllocationUpdateDesiredStatus", Payload: { Allocation: { DesiredTransition: { Migrate: true } } } });
  });
});

describe("Service and NodePool topics", () => {
  /** A job with a group service "web" and a task service "api", both provider nomad. */
  function servicesJob(id: string): Json {
    const j = webJob(id);
    const group = j.TaskGroups[0];
    group.Networks = [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }];
    group.Services = [{ Name: "web", PortLabel: "http", Provider: "nomad", Tags: ["front"] }];
    group.Tasks[0].Services = [{ Name: "api", PortLabel: "http", Provider: "nomad" }];
    return j;
  }

  it("a native service's registration and deregistration are Service events carrying the registration (Key its ID; FilterKeys job and service)", async () => {
    const emu = await createStandin();
    let registered: Json[] = [];
    const { frames } = await record(emu, "?topic=Service", async () => {
      await register(emu, servicesJob("shop"));
      emu.clock.advance("10s");
      registered = (await (await emu.scheduler.request("/v1/job/shop/services")).json()) as Json[];
      const stop = await emu.scheduler.request("/v1/job/shop", { method: "DELETE" });
      expect(stop.status).toBe(200);
      emu.clock.advance("5s");
    });
    const events = frames.filter((f) => f.Events).flatMap((f) => f.Events as Json[]);
    expect(events.every((e) => e.Topic === "Service")).toBe(true);
    const web = registered.find((r) => r.ServiceName === "web")!;
    const api = registered.find((r) => r.ServiceName === "api")!;
    // The group service registers while pending, the task service once running; a stop removes both.
    expect(events.map((e) => `${e.Type} ${e.Key}`)).toEqual([
      `ServiceRegistration ${web.ID}`,
      `ServiceRegistration ${api.ID}`,
      ...[`ServiceDeregistration ${api.ID}`, `ServiceDeregistration ${web.ID}`].sort((a, b) => (a.split(" ")[1]! < b.split(" ")[1]! ? -1 : 1)),
    ]);
    const first = events[0]!;
    expect(first).toMatchObject({ Namespace: "default", FilterKeys: ["shop", "web"], Index: web.CreateIndex });
    // The payload is the registration as GET /v1/service/:name shows it, and a deregistration carries it as it was.
    expect(first.Payload).toEqual({ Service: web });
    expect(events.find((e) => e.Type === "ServiceDeregistration" && e.Key === web.ID)!.Payload).toEqual({ Service: web });
    // A key matches the ID or a filter key (the service's name).
    const byName = await record(emu, "?topic=Service:api&index=0", () => {});
    expect(summary(byName.frames).map((line) => line.split(" ").slice(2).join(" "))).toEqual([`ServiceRegistration ${api.ID}`, `ServiceDeregistration ${api.ID}`]);
  });

  it("node pool writes are NodePoolUpserted / NodePoolDeleted events carrying the pool; other topics do not see them", async () => {
    const emu = await createStandin();
    const { frames } = await record(emu, "?topic=NodePool", async () => {
      expect((await emu.scheduler.request("/v1/node/pools", { method: "PUT", body: JSON.stringify({ Name: "gpu", Description: "GPUs" }) })).status).toBe(200);
      expect((await emu.scheduler.request("/v1/node/pool/gpu", { method: "DELETE" })).status).toBe(200);
    });
    const events = frames.filter((f) => f.Events).flatMap((f) => f.Events as Json[]);
    expect(events.map((e) => `${e.Topic} ${e.Type} ${e.Key}`)).toEqual(["NodePool NodePoolUpserted gpu", "NodePool NodePoolDeleted gpu"]);
    expect(events[0]).toMatchObject({ Namespace: "", FilterKeys: null });
    expect(events[0]!.Payload.NodePool).toMatchObject({ Name: "gpu", Description: "GPUs", Meta: null, CreateIndex: events[0]!.Index, ModifyIndex: events[0]!.Index });
    expect(events[1]!.Payload.NodePool.Name).toBe("gpu");
    const jobsOnly = await record(emu, "?topic=Job&index=0", () => {});
    expect(summary(jobsOnly.frames)).toEqual([]);
  });
});

describe("the broker's work per write", () => {
  it("reads the rows a write changed, not every row of the tables it touched (an advance stays linear)", async () => {
    const { brokerWork } = await import("../../src/scheduler/events/stream-event.js");
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "big", Resources: { CPU: 1_000_000, MemoryMB: 1_000_000 } }] } } as never });
    for (let i = 0; i < 30; i++) await register(emu, job(`many-${i}`, { count: 10 }));
    emu.clock.advance("1m"); // 300 allocations running, each with its service registration
    const allocs = (await (await emu.scheduler.request("/v1/allocations")).json()) as Json[];
    expect(allocs.length).toBeGreaterThanOrEqual(300);
    const before = brokerWork.rowsRead;
    const res = await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify({ do: "alloc-fail", alloc: allocs[0]!.ID }) });
    expect(res.status).toBe(200);
    // One allocation (and what follows it in the same write) — not the 300 allocations nor every evaluation.
    const read = brokerWork.rowsRead - before;
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(20);
  });

  it("names a write's event type once per table, not once per row (a drain's one write of N migrations stays linear)", async () => {
    const { brokerWork } = await import("../../src/scheduler/events/stream-event.js");
    const big = { Resources: { CPU: 1_000_000, MemoryMB: 1_000_000 } };
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "big", ...big }] } } as never });
    const drainedJob = job("drained", { count: 300 });
    drainedJob.TaskGroups[0].Migrate = { MaxParallel: 300 }; // one drain pass migrates them all
    await register(emu, drainedJob);
    emu.clock.advance("1m");
    await emu.applyFixture({ scheduler: { nodes: [{ Name: "spare", ...big }] } } as never);
    const nodes = (await (await emu.scheduler.request("/v1/nodes")).json()) as Json[];
    const drained = nodes.find((n) => n.Name === "big")!.ID as string;
    const before = brokerWork.typeLookups;
    const res = await emu.scheduler.request(`/v1/node/${drained}/drain`, {
      method: "PUT",
      body: JSON.stringify({ NodeID: drained, DrainSpec: { Deadline: 3_600_000_000_000 } }),
    });
    expect(res.status).toBe(200);
    emu.clock.advance("1s"); // the drainer's first pass: all 300 stopped, their replacements placed
    const drainWrite = brokerWork.typeLookups - before;
    emu.clock.advance("5m");
    const allocs = (await (await emu.scheduler.request("/v1/allocations")).json()) as Json[];
    // The drain migrated all 300 (the work happened) …
    expect(allocs.filter((a) => a.NodeID !== drained && a.ClientStatus === "running").length).toBe(300);
    expect(allocs.filter((a) => a.NodeID === drained && a.ClientStatus === "running").length).toBe(0);
    // … and the drain's write (its first pass migrates all 300) asked for event types per table: the
    // old per-row lookups made one per allocation it stopped and per replacement it placed.
    expect(drainWrite).toBeGreaterThan(0);
    expect(drainWrite).toBeLessThan(20);
  });
});
