/**
 * Issue 30's hostile inputs, as stall cases for bench/lib/stalls.mjs: while
 * each is sent (from a fresh `standin start`), a probe asks GET /_standin/clock
 * and records how long it waits. `prepare({urls})` builds the input (and any
 * state it needs, untimed) and returns the heavy part; what the heavy part
 * resolves with is kept as the row's detail (status, answer size).
 *
 * Sizes follow the issue; the regex case is kept at 28 characters so that a
 * backtracking engine still finishes in seconds.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { openUnread, send } from "./http-probe.mjs";

const json = (value) => ({ body: JSON.stringify(value), headers: { "Content-Type": "application/json" } });
const MB = (bytes) => Math.round((bytes / 1e6) * 10) / 10;

/** A job file: `before` at the top, `meta` entries (HCL expressions) in the job's meta, one task. */
function jobFile({ before = "", meta = "" } = {}) {
  return `${before}job "hostile" {\n  meta {\n${meta}\n  }\n  group "g" {\n    task "t" {\n      driver = "docker"\n    }\n  }\n}\n`;
}

/** POST /v1/jobs/parse of `hcl`: the answer's status and size. */
function parseJob(urls, hcl) {
  const request = json({ JobHCL: hcl, Canonicalize: false });
  return async () => {
    const res = await send(`${urls.scheduler}/v1/jobs/parse`, { method: "POST", ...request });
    return {
      status: res.status,
      requestMB: MB(Buffer.byteLength(request.body)),
      answerMB: MB(res.body.length),
      answerMeta: /"Meta":(\{[^}]{0,80})/.exec(res.body.subarray(0, 4096).toString("utf8"))?.[1] ?? res.body.subarray(0, 120).toString("utf8"),
    };
  };
}

/** A fixture of `count` KV entries under `big/` (100-byte values). */
function kvFixture(count) {
  const value = "v".repeat(100);
  return { registry: { kv: Array.from({ length: count }, (_, i) => ({ Key: `big/${i}`, Value: value })) } };
}

/** How many keys are under `big/` now. */
async function countKeys(urls) {
  const res = await send(`${urls.registry}/v1/kv/big/?keys`);
  return res.status === 200 ? JSON.parse(res.body).length : `status ${res.status}`;
}

const STREAM_FANOUT_META = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`k${i}`, "m".repeat(95)]));

/** The ~100 KB batch job the event-stream fan-out cases write (1,000 Meta values of 95 bytes); `i` names it. */
export function streamFanoutJob(i) {
  return {
    ID: `stream-${i}`,
    Type: "batch",
    Datacenters: ["dc1"],
    Meta: STREAM_FANOUT_META,
    TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }],
  };
}

export const HOSTILE_CASES = {
  "hcl-unknown-args": {
    label: "POST /v1/jobs/parse, 2 MB job file of 200,000 unknown arguments",
    async prepare({ urls }) {
      const lines = [];
      for (let i = 0; i < 200_000; i++) lines.push(`u${i}=1`);
      return parseJob(urls, `job "hostile" {\n${lines.join("\n")}\n}\n`);
    },
  },

  "hcl-heredoc": {
    label: "POST /v1/jobs/parse, 15 MB heredoc",
    async prepare({ urls }) {
      const line = "a".repeat(999);
      const text = Array.from({ length: 15_000 }, () => line).join("\n");
      return parseJob(urls, jobFile({ meta: `    big = <<EOT\n${text}\nEOT` }));
    },
  },

  "hcl-sum": {
    label: "POST /v1/jobs/parse, `1+1+…+1` with a million terms",
    async prepare({ urls }) {
      return parseJob(urls, jobFile({ before: `locals {\n  n = ${Array(1_000_000).fill("1").join("+")}\n}\n`, meta: "    n = local.n" }));
    },
  },

  "hcl-regex": {
    label: 'POST /v1/jobs/parse, regex_replace with "^(a+)+$" over 28 characters',
    async prepare({ urls }) {
      return parseJob(urls, jobFile({ meta: `    r = regex_replace("${"a".repeat(27)}!", "^(a+)+$", "b")` }));
    },
  },

  "hcl-doubling": {
    label: "POST /v1/jobs/parse, a job file doubling a local 20 times (8 MiB string)",
    async prepare({ urls }) {
      const locals = ['  s0 = "aaaaaaaa"'];
      for (let i = 1; i <= 20; i++) locals.push(`  s${i} = "\${local.s${i - 1}}\${local.s${i - 1}}"`);
      return parseJob(urls, jobFile({ before: `locals {\n${locals.join("\n")}\n}\n`, meta: "    s = local.s20" }));
    },
  },

  "token-claims": {
    label: "POST /_standin/echo/tokens with 30 MB of claims",
    async prepare({ urls }) {
      const claims = {};
      const value = "c".repeat(290);
      for (let i = 0; i < 100_000; i++) claims[`claim${i}`] = value;
      const body = json({ scheme: "provider_jwt", claims });
      return async () => {
        const res = await send(`${urls.echo}/_standin/echo/tokens`, { method: "POST", ...body });
        return { status: res.status, requestMB: MB(Buffer.byteLength(body.body)), answerMB: MB(res.body.length) };
      };
    },
  },

  "stream-subscribers": {
    label: "200 unread GET /v1/event/stream subscribers, then 40 job writes of ~100 KB",
    async prepare({ urls }) {
      return async () => {
        const sockets = await openUnread(`${urls.scheduler}/v1/event/stream`, 200);
        const statuses = {};
        for (let i = 0; i < 40; i++) {
          const job = streamFanoutJob(i);
          const res = await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", ...json({ Job: job }) });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        }
        await sleep(1_000);
        for (const socket of sockets) socket.destroy();
        return { subscribers: sockets.length, statuses };
      };
    },
  },

  "control-unknown-keys": {
    label: "POST /_standin/fixtures, 5.9 MB body of unknown keys",
    async prepare({ urls }) {
      const parts = [];
      for (let i = 0; i < 500_000; i++) parts.push(`"k${i}":0`);
      const body = `{${parts.join(",")}}`;
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/fixtures`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
        return { status: res.status, requestMB: MB(Buffer.byteLength(body)), answerMB: MB(res.body.length) };
      };
    },
  },

  "control-valid-fixture": {
    label: "POST /_standin/fixtures, a valid fixture of 20,000 KV entries",
    async prepare({ urls }) {
      const body = JSON.stringify(kvFixture(20_000));
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/fixtures`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
        return { status: res.status, requestMB: MB(Buffer.byteLength(body)), keys: await countKeys(urls) };
      };
    },
  },

  "control-reset-fixture": {
    label: "POST /_standin/reset with a start fixture of 20,000 KV entries",
    async prepare({ urls }) {
      const body = JSON.stringify({ fixture: kvFixture(20_000) });
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/reset`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
        return { status: res.status, requestMB: MB(Buffer.byteLength(body)), keys: await countKeys(urls) };
      };
    },
  },

  "control-snapshot-restore": {
    label: "PUT /_standin/snapshot of 20,000 KV entries",
    async prepare({ urls }) {
      // The snapshot is taken and the state emptied untimed: the timed part is the restore.
      const applied = await send(`${urls.scheduler}/_standin/fixtures`, { method: "POST", ...json(kvFixture(20_000)) });
      if (applied.status !== 200) throw new Error(`fixture answered ${applied.status}: ${applied.body}`);
      const body = (await send(`${urls.scheduler}/_standin/snapshot`)).body.toString("utf8");
      await send(`${urls.scheduler}/_standin/reset`, { method: "POST" });
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/snapshot`, { method: "PUT", body, headers: { "Content-Type": "application/json" } });
        return { status: res.status, requestMB: MB(Buffer.byteLength(body)), keys: await countKeys(urls) };
      };
    },
  },

  "control-large-handover": {
    label: "POST /_standin/actions, a valid 15 MB document (its arguments over the limit: the hand-over alone, no apply)",
    async prepare({ urls }) {
      // Checked off the event loop and handed to the route, which refuses its arguments at once (a walk that stops at
      // 10 000 values): what the row measures is the parse and the hand-over of a valid document near the route's 16 MiB limit.
      const value = "v".repeat(40);
      const rows = Array.from({ length: 195_000 }, (_, i) => ({ Key: `big/${i}`, Value: value, Index: i }));
      const body = JSON.stringify({ do: "no-such-action", rows });
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/actions`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
        return { status: res.status, requestMB: MB(Buffer.byteLength(body)), answer: res.body.subarray(0, 120).toString("utf8") };
      };
    },
  },

  "job-max-values": {
    label: "PUT /v1/jobs, a valid job of 24,900 Meta keys (the most a service body may hold is 25,000 values)",
    async prepare({ urls }) {
      const meta = Object.fromEntries(Array.from({ length: 24_900 }, (_, i) => [`m${i}`, "v"]));
      const job = {
        ID: "widest",
        Type: "service",
        Datacenters: ["dc1"],
        Meta: meta,
        TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }],
      };
      const request = json({ Job: job });
      return async () => {
        const res = await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", ...request });
        return { status: res.status, requestMB: MB(Buffer.byteLength(request.body)) };
      };
    },
  },

  "reap-2000": {
    label: "2,000 critical services (DeregisterCriticalServiceAfter) reaped in one advance",
    async prepare({ urls }) {
      for (let i = 0; i < 2_000; i++) {
        const service = { ID: `svc-${i}`, Name: `svc-${i}`, Port: 8000, Check: { CheckID: `svc-${i}-ttl`, TTL: "10s", Status: "passing", DeregisterCriticalServiceAfter: "1m" } };
        const res = await send(`${urls.registry}/v1/agent/service/register`, { method: "PUT", ...json(service) });
        if (res.status !== 200) throw new Error(`service register answered ${res.status}: ${res.body}`);
      }
      // Every TTL check goes critical first (untimed): the timed advance is the reaper's.
      await send(`${urls.scheduler}/_standin/clock/advance`, { method: "POST", ...json({ by: "11s" }) });
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/clock/advance`, { method: "POST", ...json({ by: "2m" }) });
        const left = JSON.parse((await send(`${urls.registry}/v1/agent/services`)).body);
        return { status: res.status, servicesLeft: Object.keys(left).length };
      };
    },
  },

  "periodic-48h": {
    label: "a per-minute periodic job over 48 virtual hours (48 advances of 1h)",
    async prepare({ urls }) {
      const job = {
        ID: "every-minute",
        Type: "batch",
        Datacenters: ["dc1"],
        Periodic: { Enabled: true, SpecType: "cron", Spec: "* * * * *", ProhibitOverlap: false, TimeZone: "UTC" },
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
      };
      const res = await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", ...json({ Job: job }) });
      if (res.status !== 200) throw new Error(`periodic job answered ${res.status}: ${res.body}`);
      return async () => {
        const advanceMs = [];
        for (let hour = 0; hour < 48; hour++) {
          const t0 = performance.now();
          const step = await send(`${urls.scheduler}/_standin/clock/advance`, { method: "POST", ...json({ by: "1h" }) });
          advanceMs.push(Math.round(performance.now() - t0));
          if (step.status !== 200) return { failedAt: hour, status: step.status };
        }
        const jobs = JSON.parse((await send(`${urls.scheduler}/v1/jobs?prefix=every-minute`)).body);
        return { children: jobs.length - 1, firstAdvanceMs: advanceMs[0], lastAdvanceMs: advanceMs.at(-1), slowestAdvanceMs: Math.max(...advanceMs) };
      };
    },
  },

  "system-gc": {
    label: "PUT /v1/system/gc of 50 stopped jobs of 1,000 allocations each (50,000 terminal allocations), then GET /v1/jobs",
    limitSeconds: 180,
    async prepare({ urls }) {
      // Built untimed: one node big enough, 50 jobs of 1,000 tiny allocations each, stopped (every allocation terminal).
      const fixture = { scheduler: { nodes: [{ Name: "big", Resources: { CPU: 100_000_000, MemoryMB: 100_000_000 } }] } };
      const applied = await send(`${urls.scheduler}/_standin/fixtures`, { method: "POST", ...json(fixture) });
      if (applied.status !== 200) throw new Error(`fixture answered ${applied.status}: ${applied.body}`);
      const jobs = Array.from({ length: 50 }, (_, i) => `wide-${i}`);
      for (const id of jobs) {
        const job = {
          ID: id,
          Type: "service",
          Datacenters: ["dc1"],
          TaskGroups: [{ Name: "g", Count: 1_000, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 1, MemoryMB: 10 } }] }],
        };
        const registered = await send(`${urls.scheduler}/v1/jobs`, { method: "PUT", ...json({ Job: job }) });
        if (registered.status !== 200) throw new Error(`job answered ${registered.status}: ${registered.body}`);
      }
      await send(`${urls.scheduler}/_standin/clock/advance`, { method: "POST", ...json({ by: "1m" }) });
      for (const id of jobs) {
        const stopped = await send(`${urls.scheduler}/v1/job/${id}`, { method: "DELETE" });
        if (stopped.status !== 200) throw new Error(`stop answered ${stopped.status}: ${stopped.body}`);
      }
      await send(`${urls.scheduler}/_standin/clock/advance`, { method: "POST", ...json({ by: "1m" }) });
      const last = JSON.parse((await send(`${urls.scheduler}/v1/job/wide-49/allocations`)).body);
      if (last.length !== 1_000 || last.some((a) => a.DesiredStatus !== "stop")) throw new Error(`wide-49 has ${last.length} allocations, not 1000 stopped ones`);
      return async () => {
        const gc = await send(`${urls.scheduler}/v1/system/gc`, { method: "PUT" });
        // Answered once the collection is done (a scheduler request waits for it).
        const left = JSON.parse((await send(`${urls.scheduler}/v1/jobs`)).body);
        const allocs = JSON.parse((await send(`${urls.scheduler}/v1/allocations`)).body);
        return { status: gc.status, jobsLeft: left.length, allocsLeft: allocs.length };
      };
    },
  },

  "ui-tape-replay": {
    label: "POST /_standin/ui/api/tape of a 20,000-request tape (replayed into a scratch emulator)",
    // Recording the tape is 20,000 requests: on a loaded machine that alone can take a minute.
    limitSeconds: 180,
    async prepare({ urls }) {
      // The tape is recorded untimed, 8 clients at a time: KV writes and reads, a clock move after every 500 requests.
      const value = "v".repeat(64);
      let next = 0;
      const client = async () => {
        for (let i = next++; i < 20_000; i = next++) {
          if (i % 2 === 0) await send(`${urls.registry}/v1/kv/tape/${i % 1_000}`, { method: "PUT", body: value });
          else await send(`${urls.registry}/v1/kv/tape/${(i - 1) % 1_000}`);
          if (i % 500 === 499) await send(`${urls.scheduler}/_standin/clock/advance`, { method: "POST", ...json({ by: "10s" }) });
        }
      };
      await Promise.all(Array.from({ length: 8 }, client));
      const tape = await send(`${urls.scheduler}/_standin/tape`);
      if (tape.status !== 200) throw new Error(`tape export answered ${tape.status}`);
      const body = tape.body.toString("utf8");
      return async () => {
        const res = await send(`${urls.scheduler}/_standin/ui/api/tape?name=bench.json`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
        const answer = res.status === 200 ? JSON.parse(res.body) : undefined;
        return { status: res.status, requestMB: MB(Buffer.byteLength(body)), entries: answer?.entries, divergences: answer?.divergences.length, ok: answer?.report?.ok };
      };
    },
  },
};
