/**
 * The recordings the parity tests compare: a suite's worth of standin's own
 * answers, and a run against an upstream that differs on purpose.
 */
import { createStandin } from "../../src/emulator.js";
import type { Recording } from "../../src/parity/recording.js";
import { smallJob } from "../support/jobs.js";
import { type Alteration, differingUpstream, editJson, type FrameAlteration } from "./differing-upstream.js";
import { TestRecorder } from "./parity-recorder.js";

export const WORLD = { scheduler: { acl: { enabled: true } } };

/** A suite's worth of traffic: jobs, an ACL bootstrap and its token, a session, KV, two blocking queries. */
export async function recordSuite(): Promise<Recording> {
  const emu = await createStandin({ fixture: WORLD, seed: 1 });
  try {
    const r = new TestRecorder(emu);
    const boot = await r.send("scheduler", "POST", "/v1/acl/bootstrap");
    const token = { "X-Nomad-Token": boot.body.SecretID as string };
    r.advance(1000);
    const registered = await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("example") }, headers: token });
    await r.send("scheduler", "GET", "/v1/jobs", { headers: token });
    const job = await r.send("scheduler", "GET", "/v1/job/example", { headers: token });
    await r.send("scheduler", "GET", `/v1/evaluation/${registered.body.EvalID}`, { headers: token });
    await r.send("scheduler", "GET", "/v1/job/example/allocations", { headers: token });
    await r.send("scheduler", "GET", "/v1/acl/token/self", { headers: token });
    await r.send("scheduler", "GET", "/v1/jobs"); // no token: 403
    // A blocking query on the job that nothing wakes: its wait runs out on the clock.
    const waiting = r.start("scheduler", "GET", `/v1/job/example?index=${job.headers["x-nomad-index"]}&wait=5s`, { headers: token });
    r.advance(5000);
    await waiting.answered();

    const session = await r.send("registry", "PUT", "/v1/session/create", { body: { TTL: "15s", Name: "lock" } });
    await r.send("registry", "PUT", `/v1/kv/config/a?acquire=${session.body.ID}`, { body: "hello" });
    const read = await r.send("registry", "GET", "/v1/kv/config/a");
    // A blocking query a write wakes.
    const watch = r.start("registry", "GET", `/v1/kv/config/a?index=${read.headers["x-consul-index"]}`);
    r.advance(2000);
    await r.send("registry", "PUT", "/v1/kv/config/a", { body: "world" });
    await watch.answered();
    await r.send("registry", "GET", `/v1/session/info/${session.body.ID}`);
    await r.send("registry", "GET", "/v1/session/list");
    // Past the TTL (and Consul's grace): the session is gone, its lock released.
    r.advance(31_000);
    await r.send("registry", "GET", `/v1/session/info/${session.body.ID}`);
    await r.send("registry", "GET", "/v1/kv/config/a");
    // The starting world's API key, sent as the recording keeps it (a reference): the replay finds the key it stands for.
    await r.send("echo", "POST", "/echo?key=test-api-key", { body: { message: "hi" } });
    return r.recording();
  } finally {
    emu.close();
  }
}

/** A task whose log says something on a timetable (fixture `scheduler.taskOutput`). */
export const STREAM_WORLD = {
  scheduler: { taskOutput: [{ job: "logged", task: "t", stdout: ["booting", { after: "2s", line: "listening on :8080" }, { after: "1m", line: "still here" }] }] },
};

/** The heartbeats (`{}`) a stream has sent. */
export function heartbeats(text: string): number {
  return text.split("\n").filter((line) => line === "{}").length;
}

/** A followed log's data, its frames decoded. */
export function logData(text: string): string {
  const frames = text === "" ? [] : (JSON.parse(`[${text.replaceAll("}{", "},{")}]`) as Array<{ Data?: string }>);
  return frames.map((frame) => Buffer.from(frame.Data ?? "", "base64").toString("utf8")).join("");
}

/**
 * Streams: the event stream open while a job is registered and placed and
 * its task starts, and the task's log followed while it writes; both cut
 * once everything sent by then has arrived (the event stream's heartbeat at
 * 10 s comes after every event before it).
 */
export async function recordStreamSuite(): Promise<Recording> {
  const emu = await createStandin({ fixture: STREAM_WORLD, seed: 1 });
  try {
    const r = new TestRecorder(emu);
    const events = await r.stream("scheduler", "/v1/event/stream"); // #1
    await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("logged") } }); // #2
    r.advance(5000);
    const [alloc] = (await r.send("scheduler", "GET", "/v1/job/logged/allocations")).body; // #3
    const log = await r.stream("scheduler", `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&follow=true`); // #4
    r.advance(3000);
    await log.until((text) => logData(text).includes("listening on :8080\n"));
    await log.cut();
    await r.send("scheduler", "GET", `/v1/allocation/${alloc.ID}`); // #5
    r.advance(2000);
    await events.until((text) => heartbeats(text) === 2);
    await events.cut();
    // After the cut: its events are in standin's stream only if the replay reads past the cut.
    await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("later") } }); // #6
    return r.recording();
  } finally {
    emu.close();
  }
}

/** The chosen changes, by exchange. */
const alter: Alteration = (request, answer) => {
  const { service, method, path, n } = request;
  if (service === "scheduler" && method === "GET" && path === "/v1/jobs" && n === 1) return editJson(answer, (list) => list.reverse());
  if (service === "scheduler" && method === "GET" && path === "/v1/job/a")
    return editJson(answer, (job) => {
      job.Priority = 70; // a value
      delete job.NodePool; // standin has it, the upstream not: extra
      job.Extra = { Added: true }; // the upstream has it, standin not: missing
      job.Version = "0"; // a type
      job.TaskGroups[0].Tasks[0].Driver = "exec"; // a value deep down
    });
  if (service === "registry" && method === "GET" && path === "/v1/kv/x" && n === 1)
    return { ...answer, headers: { ...answer.headers, "content-type": "text/plain", "x-consul-knownleader": "false" } };
  // The index rises upstream where standin's stays (nothing was written in between).
  if (service === "registry" && method === "GET" && path === "/v1/kv/x" && n === 2)
    return { ...answer, headers: { ...answer.headers, "x-consul-index": String(Number(answer.headers["x-consul-index"]) + 5) } };
  if (service === "registry" && method === "PUT" && path === "/v1/kv/y") return { ...answer, status: 201 };
  // A job standin does not have, first; a field changed on one after it (matched by ID, not by place).
  if (service === "scheduler" && method === "GET" && path === "/v1/jobs" && n === 2)
    return editJson(answer, (list) => {
      list.find((job: { ID: string }) => job.ID === "b").Priority = 60;
      list.unshift({ ...list[0], ID: "ghost", Name: "ghost" });
    });
  // A key standin has that the upstream does not.
  if (service === "registry" && method === "GET" && path === "/v1/kv/?recurse") return editJson(answer, (entries) => entries.shift());
  // A time 1.5 s off: a difference within the default 1 s tolerance's reach, none within 2 s.
  if (service === "scheduler" && method === "GET" && path === "/v1/job/b" && n === 2)
    return editJson(answer, (job) => {
      job.SubmitTime += 1_500_000_000;
    });
  // What the real products answer where standin has no route.
  if (service === "registry" && path === "/v1/acl/bootstrap") return { status: 200, headers: { "content-type": "application/json" }, body: "{}" };
  if (service === "scheduler" && path === "/v1/not-a-route") return { status: 200, headers: { "content-type": "application/json" }, body: "[]" };
  return answer;
};

/**
 * The chosen changes to the event stream's frames: job b's registration
 * with another status, job a's evaluation left out (standin has one event
 * more), an event standin never sends after job a's registration, and
 * batching and heartbeats that differ without any difference in events.
 */
const alterFrame: FrameAlteration = (_, frame) => {
  if (!Array.isArray(frame.Events)) return [frame, {}];
  const events: any[] = [];
  for (const event of frame.Events) {
    if (event.Topic === "Evaluation" && event.Type === "JobRegistered" && event.FilterKeys?.[0] === "a") continue;
    events.push(event);
    if (event.Topic === "Job" && event.Type === "JobRegistered" && event.Key === "b") event.Payload.Job.Status = "running";
    if (event.Topic === "Job" && event.Type === "JobRegistered" && event.Key === "a") events.push({ ...event, Type: "JobDeregistered", Key: "ghost", Payload: {} });
  }
  // Each event a frame of its own: batched otherwise than standin batches them.
  return events.map((event) => ({ Index: frame.Index, Events: [event] }));
};

export async function recordDifferingRun(): Promise<Recording> {
  const emu = await createStandin({ fixture: "default", seed: 3 });
  const upstream = await differingUpstream(emu, alter, undefined, alterFrame);
  try {
    const r = new TestRecorder(emu, upstream.upstream);
    await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("a") } }); // #1
    await r.send("scheduler", "PUT", "/v1/jobs", { body: { Job: smallJob("b") } }); // #2
    await r.send("scheduler", "GET", "/v1/jobs"); // #3 order
    await r.send("scheduler", "GET", "/v1/job/a"); // #4 fields
    await r.send("scheduler", "GET", "/v1/job/b"); // #5 as standin answers
    await r.send("registry", "PUT", "/v1/kv/x", { body: "1" }); // #6
    await r.send("registry", "GET", "/v1/kv/x"); // #7 headers
    await r.send("registry", "GET", "/v1/kv/x"); // #8 index movement
    await r.send("registry", "PUT", "/v1/kv/y", { body: "2" }); // #9 status
    await r.send("registry", "PUT", "/v1/acl/bootstrap"); // #10 not emulated
    await r.send("scheduler", "GET", "/v1/not-a-route"); // #11 unknown path
    await r.send("registry", "GET", "/v1/kv/y"); // #12 as standin answers
    await r.send("scheduler", "GET", "/v1/jobs"); // #13 an insertion and a change after it
    await r.send("registry", "GET", "/v1/kv/?recurse"); // #14 an element left out
    await r.send("scheduler", "GET", "/v1/job/b"); // #15 a time 1.5 s off
    // #16 the event stream from the start (index=1): changed events, batching and heartbeats.
    const events = await r.stream("scheduler", "/v1/event/stream?index=1");
    r.advance(10_000);
    // Each heartbeat is passed on twice: the one at 10 s is the 4th.
    await events.until((text) => heartbeats(text) === 4);
    await events.cut();
    return r.recording();
  } finally {
    await upstream.close();
    emu.close();
  }
}
