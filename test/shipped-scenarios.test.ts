/**
 * The shipped scenario fixtures (fixtures/rolling-deploy-failing-canary.json,
 * leader-election-failover.json, token-expiry.json), run end to end: their
 * timelines fire on the virtual clock, and what a client sees is asserted
 * through the services' HTTP APIs, the control API and `emu.await`. The
 * leader election also runs as users run it: `standin start --clock auto`
 * in a child process with a python3-consul client loop (test/leader-election.py).
 */
import { execFile, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { replayTape } from "../src/replay.js";
import { createStandin, type Standin } from "../src/emulator.js";
import { PYTHON, PYTHON_SKIP_NOTE, pythonConsul, warnIfNoPythonConsul } from "./support/python-consul.js";
import { CLI_TEST_TIMEOUT_MS, startCli } from "./support/cli.js";

type Json = Record<string, any>;

const fixture = (name: string) => join(process.cwd(), "fixtures", `${name}.json`);
const START = Date.parse("2026-01-01T00:00:00Z");
/** Virtual time since the fixture's clock start, in ms. */
const elapsed = (emu: Standin) => emu.clock.now() - START;

async function getJson(emu: Standin, service: "scheduler" | "registry" | "echo", path: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await emu[service].request(path, init);
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text), headers: res.headers };
}

const control = (emu: Standin, method: string, path: string, body?: unknown) =>
  getJson(emu, "scheduler", `/_standin${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });

// ---------------------------------------------------------------------------
// rolling-deploy-failing-canary
// ---------------------------------------------------------------------------

describe("scenario: rolling-deploy-failing-canary", () => {
  const image = (job: Json) => job.TaskGroups[0].Tasks[0].Config.image as string;

  it("version 0 deploys; version 1's canary fails at 2m20s; the deployment fails and auto-revert brings version 0's spec back", async () => {
    const emu = await createStandin({ fixture: fixture("rolling-deploy-failing-canary") });

    // 0s: version 0 (example/web:1.0, 3 allocations) is registered; its deployment succeeds once min_healthy_time has passed.
    const first = await emu.await({ deployment: { job: "web", version: 0, status: "successful" } }, "1m");
    expect(first).toMatchObject({ met: true, observed: { deployment: { JobVersion: 0, Status: "successful" } } });
    expect(elapsed(emu)).toBe(11_100); // eval 100ms, start 1s, min_healthy_time 10s
    let job = (await getJson(emu, "scheduler", "/v1/job/web")).body;
    expect(job).toMatchObject({ Version: 0, Stable: true, Status: "running" });
    expect(image(job)).toBe("example/web:1.0");
    const v0Allocs = ((await getJson(emu, "scheduler", "/v1/job/web/allocations")).body as Json[]).map((a) => a.ID).sort();
    expect(v0Allocs).toHaveLength(3);

    // 2m: version 1 (example/web:2.0) places one canary beside the three 1.0 allocations and waits for promotion.
    const canaryUp = await control(emu, "POST", "/await", {
      until: { deployment: { job: "web", version: 1, status: "running" }, allocations: { job: "web", count: 4 } },
      within: "3m",
    });
    expect(canaryUp.status).toBe(200);
    emu.clock.advanceTo("2026-01-01T00:02:19Z");
    const waiting = (await getJson(emu, "scheduler", "/v1/job/web/deployment")).body;
    expect(waiting).toMatchObject({ JobVersion: 1, Status: "running", StatusDescription: "Deployment is running but requires manual promotion" });
    expect(waiting.TaskGroups.web).toMatchObject({ DesiredCanaries: 1, Promoted: false, AutoRevert: true });
    const [canaryId] = waiting.TaskGroups.web.PlacedCanaries as string[];
    const canary = (await getJson(emu, "scheduler", `/v1/allocation/${canaryId}`)).body;
    expect(canary).toMatchObject({ JobVersion: 1, ClientStatus: "running", DeploymentStatus: { Canary: true, Healthy: true } });
    expect(image(canary.Job)).toBe("example/web:2.0");

    // 2m20s: the timeline fails the canary; the deployment fails and rolls back.
    const failed = await emu.await({ deployment: { job: "web", version: 1, status: "failed" } }, "1m");
    expect(failed.met).toBe(true);
    expect(elapsed(emu)).toBe(140_000);
    expect(failed.observed.deployment).toMatchObject({ ID: waiting.ID, StatusDescription: "Failed due to unhealthy allocations - rolling back to job version 0" });
    // Regression: a failed canary stays a canary.
    expect((await getJson(emu, "scheduler", `/v1/allocation/${canaryId}`)).body).toMatchObject({ ClientStatus: "failed", DeploymentStatus: { Healthy: false, Canary: true } });

    // Auto-revert registered version 0's spec again as version 2; the 1.0 allocations run on, updated in place.
    job = (await getJson(emu, "scheduler", "/v1/job/web")).body;
    expect(job).toMatchObject({ Version: 2, Status: "running" });
    expect(image(job)).toBe("example/web:1.0");
    const versions = (await getJson(emu, "scheduler", "/v1/job/web/versions")).body.Versions as Json[];
    expect(versions.map((v) => [v.Version, image(v), v.Stable])).toEqual([
      [2, "example/web:1.0", false],
      [1, "example/web:2.0", false],
      [0, "example/web:1.0", true],
    ]);
    emu.clock.advance("5m");
    const allocs = (await getJson(emu, "scheduler", "/v1/job/web/allocations")).body as Json[];
    const running = allocs.filter((a) => a.ClientStatus === "running");
    expect(running.map((a) => a.ID).sort()).toEqual(v0Allocs);
    expect(running.every((a) => a.JobVersion === 2)).toBe(true);
    expect(allocs.find((a) => a.ID === canaryId)).toMatchObject({ ClientStatus: "failed", JobVersion: 1 });
    const deployments = (await getJson(emu, "scheduler", "/v1/job/web/deployments")).body as Json[];
    expect(deployments.map((d) => [d.JobVersion, d.Status])).toEqual([
      // The revert only updates in place: no canary, and its deployment succeeds (regression: it waited for a promotion forever).
      [2, "successful"],
      [1, "failed"],
      [0, "successful"],
    ]);
    // The timeline steps, in the event journal at their instants.
    const steps = (await control(emu, "GET", "/events?type=action")).body.events as Json[];
    expect(steps.map((e) => [e.at, e.subject])).toEqual([
      ["2026-01-01T00:00:00Z", "job-register"],
      ["2026-01-01T00:02:00Z", "job-register"],
      ["2026-01-01T00:02:20Z", "alloc-fail"],
    ]);
  });

  it("the revert's deployment has no canary (in-place updates only) and succeeds (regression)", async () => {
    const emu = await createStandin({ fixture: fixture("rolling-deploy-failing-canary") });
    const done = await emu.await({ deployment: { job: "web", version: 2, status: "successful" } }, "10m");
    expect(done.met).toBe(true);
    const deployment = (await getJson(emu, "scheduler", "/v1/job/web/deployment")).body;
    expect(deployment.TaskGroups.web).toMatchObject({ DesiredCanaries: 0, PlacedCanaries: null, HealthyAllocs: 3 });
  });

  it("is deterministic: two runs give the same state hash", async () => {
    const run = async () => {
      const emu = await createStandin({ fixture: fixture("rolling-deploy-failing-canary") });
      const outcome = await emu.await({ deployment: { job: "web", version: 1, status: "failed" } }, "5m");
      emu.clock.advance("5m");
      return { met: outcome.met, now: emu.clock.now(), hash: emu.stateHash(), index: emu.index };
    };
    const [a, b] = [await run(), await run()];
    expect(a.met).toBe(true);
    expect(b).toEqual(a);
  });
});

// ---------------------------------------------------------------------------
// leader-election-failover
// ---------------------------------------------------------------------------

const LEADER_KEY = "service/leader";
const SESSION_A = "5e55104a-0000-4000-8000-00000000000a";

interface Election {
  session: string;
  attempts: boolean[];
  entry: Json;
  rounds: number;
}

/**
 * node-b's standby, as a real client does it over HTTP: a session on its node,
 * then blocking reads of the key, trying to acquire it whenever it is free; a
 * refused acquire on a free key (lock-delay) waits 5s before the next try.
 */
async function electNodeB(emu: Standin, maxRounds = 50): Promise<Election> {
  const created = await getJson(emu, "registry", "/v1/session/create", { method: "PUT", body: JSON.stringify({ Name: "leader-node-b", Node: "node-b", LockDelay: "15s" }) });
  expect(created.status).toBe(200);
  const session = created.body.ID as string;
  const attempts: boolean[] = [];
  let index = 0;
  let wait = "1m";
  for (let rounds = 1; rounds <= maxRounds; rounds++) {
    const read = await getJson(emu, "registry", `/v1/kv/${LEADER_KEY}?index=${index}&wait=${wait}`);
    index = Number(read.headers.get("X-Consul-Index"));
    const entry = (read.body as Json[])[0]!;
    if (entry.Session === session) return { session, attempts, entry, rounds };
    wait = "1m";
    if (entry.Session === undefined) {
      const acquired = (await getJson(emu, "registry", `/v1/kv/${LEADER_KEY}?acquire=${session}`, { method: "PUT", body: "node-b" })).body as boolean;
      attempts.push(acquired);
      if (acquired) index = 0;
      else wait = "5s";
    }
  }
  throw new Error(`node-b not leader after ${maxRounds} rounds (acquire attempts: ${JSON.stringify(attempts)})`);
}

describe("scenario: leader-election-failover", () => {
  it("node-a holds the key; at 2m its serfHealth goes critical, its session goes and the key is released, lock-delay until 2m15s", async () => {
    const emu = await createStandin({ fixture: fixture("leader-election-failover") });
    const held = (await getJson(emu, "registry", `/v1/kv/${LEADER_KEY}`)).body[0];
    expect(held).toMatchObject({ Session: SESSION_A, LockIndex: 1, Value: Buffer.from("node-a").toString("base64") });
    const sessionA = (await getJson(emu, "registry", `/v1/session/info/${SESSION_A}`)).body[0];
    expect(sessionA).toMatchObject({ Node: "node-a", NodeChecks: ["serfHealth"], LockDelay: 15_000_000_000, Behavior: "release", TTL: "" });

    // node-b's session (bound to node-b's serfHealth) cannot take a held key.
    const b = (await getJson(emu, "registry", "/v1/session/create", { method: "PUT", body: JSON.stringify({ Name: "leader-node-b", Node: "node-b" }) })).body.ID as string;
    const acquire = async () => (await getJson(emu, "registry", `/v1/kv/${LEADER_KEY}?acquire=${b}`, { method: "PUT", body: "node-b" })).body as boolean;
    expect(await acquire()).toBe(false);

    const released = await emu.await({ kv: { key: LEADER_KEY, held: false }, session: { id: SESSION_A, gone: true } }, "5m");
    expect(released).toMatchObject({ met: true, waitedMs: 120_000, observed: { kv: { Session: null, Value: "node-a", LockIndex: 1 }, session: null } });
    expect((await getJson(emu, "registry", "/v1/health/node/node-a")).body[0]).toMatchObject({
      CheckID: "serfHealth",
      Status: "critical",
      Output: "Agent not live or unreachable",
    });
    const invalidated = (await control(emu, "GET", "/events?type=session.invalidated")).body.events as Json[];
    expect(invalidated).toMatchObject([{ at: "2026-01-01T00:02:00Z", subject: SESSION_A }]);

    // Consul's lock-delay: acquires are refused for 15s after the release.
    expect(await acquire()).toBe(false);
    emu.clock.advance("14999ms");
    expect(await acquire()).toBe(false);
    emu.clock.advance("1ms");
    expect(await acquire()).toBe(true);
    const taken = await emu.await({ kv: { key: LEADER_KEY, session: b, value: "node-b" } }, "1s");
    expect(taken).toMatchObject({ met: true, waitedMs: 0, observed: { kv: { Session: b, LockIndex: 2 } } });
  });

  it("node-b's client loop (blocking reads, acquire, retry) becomes leader just after the lock-delay, on the auto clock", async () => {
    const emu = await createStandin({ fixture: fixture("leader-election-failover"), clock: { mode: "auto" } });
    const election = await electNodeB(emu);
    // Refused during the lock-delay (2m to 2m15s), then acquired.
    expect(election.attempts.at(-1)).toBe(true);
    expect(election.attempts.slice(0, -1)).toEqual(election.attempts.slice(0, -1).map(() => false));
    expect(election.attempts.length).toBeGreaterThan(1);
    expect(elapsed(emu)).toBeGreaterThanOrEqual(135_000);
    expect(elapsed(emu)).toBeLessThan(150_000);
    expect(election.entry).toMatchObject({ Session: election.session, LockIndex: 2, Value: Buffer.from("node-b").toString("base64") });
    const sessions = (await getJson(emu, "registry", "/v1/session/list")).body as Json[];
    expect(sessions.map((s) => [s.Node, s.Name])).toEqual([["node-b", "leader-node-b"]]);
    expect(await emu.await({ kv: { key: LEADER_KEY, session: election.session }, session: { id: SESSION_A, gone: true } })).toMatchObject({ met: true, waitedMs: 0 });
  });

  it("is deterministic: the same client loop gives the same leader, virtual time and state hash", async () => {
    const run = async () => {
      const emu = await createStandin({ fixture: fixture("leader-election-failover"), clock: { mode: "auto" } });
      const election = await electNodeB(emu);
      return { session: election.session, attempts: election.attempts, rounds: election.rounds, now: emu.clock.now(), hash: emu.stateHash() };
    };
    const [a, b] = [await run(), await run()];
    expect(b).toEqual(a);
  });
});

// ---------------------------------------------------------------------------
// token-expiry
// ---------------------------------------------------------------------------

describe("scenario: token-expiry", () => {
  const echo = async (emu: Standin, key: string) => {
    const res = await getJson(emu, "echo", `/echo?key=${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ message: "hi" }) });
    return res.status === 200 ? res.body.message === "hi" && 200 : `${res.status} ${res.body.message}`;
  };
  const at = (emu: Standin, offset: string) => emu.clock.advanceTo(new Date(START + offsetMs(offset)).toISOString());
  const offsetMs = (s: string) => {
    const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(s)!;
    return (Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 1000;
  };
  const INVALID = "400 API key not valid. Please pass a valid API key.";

  it("ci-key-2 is added at 9m and ci-key-1 revoked at 10m", async () => {
    const emu = await createStandin({ fixture: fixture("token-expiry") });
    const both = async () => [await echo(emu, "ci-key-1"), await echo(emu, "ci-key-2")];
    expect(await both()).toEqual([200, INVALID]);
    expect(await echo(emu, "test-api-key")).toBe(INVALID); // the fixture's key list replaces the default
    at(emu, "8m59s");
    expect(await both()).toEqual([200, INVALID]);
    at(emu, "9m");
    expect(await both()).toEqual([200, 200]);
    at(emu, "9m59s");
    expect(await both()).toEqual([200, 200]);
    at(emu, "10m");
    expect(await both()).toEqual([INVALID, 200]);
    const steps = (await control(emu, "GET", "/events?type=action")).body.events as Json[];
    expect(steps.map((e) => [e.at, e.subject, e.detail.args.key])).toEqual([
      ["2026-01-01T00:09:00Z", "api-key-add", "ci-key-2"],
      ["2026-01-01T00:10:00Z", "api-key-revoke", "ci-key-1"],
    ]);
    // A revoked key cannot be revoked twice: the action says so (and changes nothing).
    const hash = emu.stateHash();
    expect(await control(emu, "POST", "/actions", { do: "api-key-revoke", key: "ci-key-1" })).toMatchObject({ status: 404, body: { error: 'no API key "ci-key-1"' } });
    expect(emu.stateHash()).toBe(hash);
  });

  it("a JWT minted at 0s with expiresIn 15m is accepted until 16m (60s skew) and rejected after", async () => {
    const emu = await createStandin({ fixture: fixture("token-expiry") });
    const minted = await control(emu, "POST", "/echo/tokens", { scheme: "provider_jwt", expiresIn: "15m" });
    expect(minted.status).toBe(200);
    const token = minted.body.token as string;
    const payload = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString());
    expect(payload.exp - payload.iat).toBe(900);
    const info = () => getJson(emu, "echo", "/auth/info/providerjwt", { headers: { Authorization: `Bearer ${token}` } });
    expect((await info()).status).toBe(200);
    at(emu, "15m");
    expect((await info()).status).toBe(200);
    at(emu, "16m");
    expect((await info()).status).toBe(200);
    at(emu, "16m1s");
    const rejected = await info();
    expect(rejected.status).toBe(401);
    expect(rejected.body).toMatchObject({ code: 16, message: "JWT validation failed: TIME_CONSTRAINT_FAILURE" });
    expect(rejected.headers.get("WWW-Authenticate")).toBe('Bearer, error="invalid_token"');
    // The API key path is independent of the token: ci-key-2 still works.
    expect(await echo(emu, "ci-key-2")).toBe(200);
  });

  it("is deterministic: two runs give the same state hash and the same token", async () => {
    const run = async () => {
      const emu = await createStandin({ fixture: fixture("token-expiry") });
      const token = (await control(emu, "POST", "/echo/tokens", { scheme: "provider_jwt", expiresIn: "15m" })).body.token as string;
      const outcome = await emu.await({ index: { above: 1_000_000 } }, "20m"); // nothing to wait for: runs the timeline to the limit
      return { met: outcome.met, fired: outcome.fired.length, now: emu.clock.now(), token, hash: emu.stateHash() };
    };
    const [a, b] = [await run(), await run()];
    expect(a).toMatchObject({ met: false, fired: 2, now: START + 20 * 60_000 });
    expect(b).toEqual(a);
  });
});

// ---------------------------------------------------------------------------
// leader-election-failover from the CLI, with python3-consul
// ---------------------------------------------------------------------------

const PY_CLIENT = join(process.cwd(), "test/leader-election.py");
const SKIP_NOTE = PYTHON_SKIP_NOTE;
warnIfNoPythonConsul("scenarios: the python3-consul leader-election test");

const execFileAsync = promisify(execFile);
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

describe("scenario: leader-election-failover from `standin start` with a python3-consul client", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it.skipIf(!pythonConsul)(
    `standin start --fixture fixtures/leader-election-failover.json --clock auto; test/leader-election.py on node-b becomes leader after the failover${SKIP_NOTE}`,
    async () => {
      const { child, urls, exited } = await startCli(["--fixture", "fixtures/leader-election-failover.json", "--clock", "auto"], children);
      const { stdout } = await execFileAsync(PYTHON, [PY_CLIENT, urls.registry!, "node-b", LEADER_KEY], { timeout: 90_000 });
      const result = JSON.parse(stdout.trim()) as Json;
      expect(result).toMatchObject({ leader: "node-b", key: LEADER_KEY, value: "node-b", lockIndex: 2 });
      expect(result.acquireAttempts.at(-1)).toBe(true);
      expect(result.acquireAttempts.slice(0, -1).every((a: boolean) => a === false)).toBe(true);
      // Leader at or just after 2m15s of virtual time (the failover at 2m, then the 15s lock-delay).
      const at = Date.parse(result.now) - START;
      expect(at).toBeGreaterThanOrEqual(135_000);
      expect(at).toBeLessThan(150_000);

      const kv = (await (await fetch(`${urls.registry}/v1/kv/${LEADER_KEY}`)).json()) as Json[];
      expect(kv[0]).toMatchObject({ Session: result.session, LockIndex: 2 });
      const clock = (await (await fetch(`${urls.control}/clock`)).json()) as Json;
      expect(clock).toMatchObject({ mode: "auto", now: result.now });
      expect(clock.skips).toBeGreaterThan(0);
      const awaited = await fetch(`${urls.control}/await`, {
        method: "POST",
        body: JSON.stringify({ until: { kv: { key: LEADER_KEY, session: result.session }, session: { id: SESSION_A, gone: true } } }),
      });
      expect(awaited.status).toBe(200);

      // The run's tape (the Python client's requests, the idle skips, the await) replays with zero divergence.
      const tape = (await (await fetch(`${urls.control}/tape`)).json()) as Json;
      expect(tape.entries.filter((e: Json) => e.kind === "request" && e.service === "registry").length).toBeGreaterThan(3);
      expect(tape.entries.filter((e: Json) => e.kind === "clock").length).toBeGreaterThan(0);
      const report = await replayTape(tape);
      expect(report.divergences).toEqual([]);
      expect(report.stateHash.actual).toBe(tape.end.stateHash);

      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    },
  );
});
