/**
 * The control API, served under `/_standin` on every service port (one
 * shared state). JSON in, JSON out; errors are `{"error": "<message>"}`.
 * It reaches the emulator only through `ControlTarget`, and each service's
 * own control routes are mounted under `/_standin/<service>`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { Hono, type Context } from "hono";
import * as v from "valibot";
import { ClockError, type Clock, type FiredTimer } from "../core/clock.js";
import { DurationError, formatGoDuration, msToNanos } from "../core/durations.js";
import { formatInstant, InstantError } from "../core/instant.js";
import type { CappedLog, EmulatorEvent, RecordedRequest } from "../core/journal.js";
import { SnapshotError, type StateSnapshot } from "../core/snapshot.js";
import { FixtureError } from "../fixtures/load.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { bearerToken } from "../http/tokens.js";
import { BodyTooLargeError } from "../http/body-cap.js";
import { jsonStreamResponse } from "../core/json-stream.js";
import type { CoverageTracker } from "../http/coverage.js";
import { coverageRoutes } from "./coverage.js";
import { ActionError } from "../http/actions.js";
import { ControlError } from "./errors.js";
import type { IdleSkipper } from "./idle-skip.js";
import { buildOpenApiDocument, fixtureDocument } from "./openapi.js";
import { recordingSection as recordingBody } from "../fixtures/schema.js";
import { DEFAULT_AWAIT_WITHIN, type Scenario } from "./scenario.js";

export const CONTROL_PREFIX = "/_standin";
/** The longest Go duration (2^63-1 ns) in whole milliseconds. */
const MAX_GO_DURATION_MS = 9_223_372_036_854;

export interface ControlTarget {
  readonly clock: Clock;
  readonly requests: CappedLog<RecordedRequest>;
  readonly events: CappedLog<EmulatorEvent>;
  readonly isReady: boolean;
  readonly seed: number;
  readonly index: number;
  stateHash(): string;
  reset(fixture?: unknown): Promise<void>;
  applyFixture(fixture: unknown): Promise<void>;
  snapshot(): StateSnapshot;
  /** Validates, then restores; a bad document changes nothing. With `adopt`, the document is handed over (not copied). */
  restore(snapshot: unknown, options?: { adopt?: boolean }): void;
  /** Records a clock operation (advance, next, pause…) in the event journal. */
  noteClockOperation(operation: string, detail: unknown): void;
  /** Named actions, timelines and await. */
  readonly scenario: Scenario;
  /** Idle skipping's locks (`--clock auto`). */
  readonly idle: IdleSkipper;
  /** Runs a named action now (and puts it on the tape). */
  act(name: string, args: Record<string, unknown>): unknown;
  /** The tape since the last reset, to be written by core/json-stream. */
  exportTapeLazily(): Promise<unknown>;
  /** Whether the tape records (`--no-tape` turns it off). */
  readonly tapeEnabled: boolean;
  /** What the run records and how much. */
  recording(): unknown;
  setRecording(settings: v.InferOutput<typeof recordingBody>): unknown;
}

export interface ControlOptions {
  /** When set, every control request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Service control routes (documented), mounted at `/<name>`. */
  services?: ReadonlyArray<{ name: string; app: DocumentedRoutes }>;
  /** The run's route coverage, served at `/coverage`. */
  coverage?: CoverageTracker;
}

// The request schemas: the routes validate with these and the OpenAPI document is generated from them.
const advanceBody = v.strictObject({ by: v.pipe(v.string(), v.description("a Go duration, e.g. `30s`, `1h30m`")) });
const advanceToBody = v.strictObject({ to: v.pipe(v.string(), v.description("an RFC 3339 instant, not before now")) });
const resetBody = v.strictObject({ fixture: v.optional(fixtureDocument) });
const autoBody = v.strictObject({ enabled: v.boolean() });
const actionBody = v.looseObject({ do: v.pipe(v.string(), v.minLength(1), v.description("the action's name; its arguments sit beside it")) });
const awaitBody = v.strictObject({
  until: v.pipe(v.record(v.string(), v.unknown()), v.description("condition name → its arguments; every one must hold")),
  within: v.optional(v.pipe(v.string(), v.description(`a Go duration of virtual time (default ${DEFAULT_AWAIT_WITHIN})`))),
});
const snapshotDocument = v.pipe(v.unknown(), v.description("a document from GET /_standin/snapshot; checked by the emulator, which answers 400 with `problems`"));
const queryCount = (min: number, description: string) =>
  v.optional(v.pipe(v.string(), v.description(description), v.regex(/^\d+$/, "expected a whole number"), v.transform(Number), v.minValue(min)));
const since = queryCount(0, "only entries with a sequence number above this");
const limit = queryCount(1, "at most this many entries (the newest)");
const requestsQuery = v.object({ since, limit });
const journalQuery = v.object({ since, limit, type: v.optional(v.pipe(v.string(), v.description("an event type; `clock` matches `clock.*`"))) });

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

export function createControlApp(target: ControlTarget, options: ControlOptions = {}): Hono {
  const app = new Hono().basePath(CONTROL_PREFIX);
  app.onError((error, c) => controlErrorResponse(c, error));
  app.notFound((c) => c.json({ error: `no control route ${c.req.method} ${c.req.path}` }, 404));

  if (options.token !== undefined) {
    const expected = digest(options.token);
    app.use("*", async (c, next) => {
      const presented = bearerToken(c.req.header("Authorization"));
      // Compared in constant time (digests of equal length), so response timing says nothing about the token.
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        // The readiness probe stays public (orchestrators and CI scripts wait on it without the
        // secret), and without the token says nothing but whether standin is ready.
        if (c.req.method === "GET" && c.req.path === `${CONTROL_PREFIX}/ready`) return target.isReady ? c.json({ ready: true }) : c.json({ ready: false }, 503);
        return c.json({ error: "the control API needs Authorization: Bearer <control token>" }, 401, { "WWW-Authenticate": "Bearer" });
      }
      await next();
    });
  }

  // Every route is declared with its documentation; the helper validates bodies and queries with the schemas it documents.
  const routes = new DocumentedRoutes("state", app);
  const clock = routes.withTag("clock");
  const journal = routes.withTag("journal");
  const scenario = routes.withTag("scenario");

  routes.get(
    "/ready",
    {
      summary: "whether the emulator is ready (fixtures loaded); public even with a control token, then `{ready}` alone without it",
      responses: { 200: "`{ready: true, seed, now, index, stateHash}` (without the control token when one is set: `{ready: true}`)", 503: "`{ready: false}`: loading or shutting down" },
    },
    (c) => {
      if (!target.isReady) return c.json({ ready: false }, 503);
      return c.json({ ready: true, seed: target.seed, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
    },
  );

  clock.get("/clock", { summary: "the virtual clock's status", responses: { 200: "`{now, nowMs, mode, speed, paused, pendingTimers, nextTimerAt, locks, skips}`" } }, (c) =>
    c.json(clockStatus(target.clock, target.idle.status())),
  );

  // Idle skipping: on with the auto clock; a lock counter holds it off around a section of a test.
  clock.post(
    "/clock/auto",
    {
      summary: "idle time skipping on (the auto mode) or off (back to manual)",
      body: autoBody,
      responses: { 200: "the clock's status with `locks` and `skips`", 400: "bad body", 409: "the clock cannot change mode now" },
    },
    (c, { body: { enabled } }) => {
      const mode = target.clock.status().mode;
      if (enabled && mode !== "auto") target.clock.setMode("auto");
      if (!enabled && mode === "auto") target.clock.setMode("manual");
      target.noteClockOperation("auto", { enabled });
      target.idle.poke();
      return c.json(clockStatus(target.clock, target.idle.status()));
    },
  );

  clock.post("/clock/lock", { summary: "holds idle skipping off (a counter)", responses: { 200: "`{locks}`" } }, (c) => c.json({ locks: target.idle.lock() }));

  clock.post("/clock/unlock", { summary: "releases one lock", responses: { 200: "`{locks}`", 409: "the clock is not locked" } }, (c) => c.json({ locks: target.idle.unlock() }));

  clock.post(
    "/clock/advance",
    {
      summary: "advances the clock by a duration, firing every due timer in virtual-time order",
      body: advanceBody,
      responses: { 200: "`{now, fired: [{at, kind, subject, detail}]}`", 400: "bad body or duration", 409: "loop guard, or the clock cannot move now" },
    },
    (c, { body: { by } }) => {
      const fired = target.clock.advance(by);
      target.noteClockOperation("advance", { by });
      return c.json(advanceResult(target.clock, fired));
    },
  );

  clock.post(
    "/clock/advance-to",
    {
      summary: "advances the clock to an instant, firing every due timer in virtual-time order",
      body: advanceToBody,
      responses: { 200: "`{now, fired: [{at, kind, subject, detail}]}`", 400: "bad body or instant", 409: "backwards, loop guard, or the clock cannot move now" },
    },
    (c, { body: { to } }) => {
      const fired = target.clock.advanceTo(to);
      target.noteClockOperation("advance-to", { to });
      return c.json(advanceResult(target.clock, fired));
    },
  );

  clock.post(
    "/clock/next",
    { summary: "jumps to the next due timer and fires it and any at the same instant", responses: { 200: "`{now, fired}`", 409: "the clock cannot move now" } },
    (c) => {
      const fired = target.clock.next();
      target.noteClockOperation("next", {});
      return c.json(advanceResult(target.clock, fired));
    },
  );

  clock.post("/clock/pause", { summary: "pauses the realtime clock", responses: { 200: "the clock's status", 409: "not in realtime mode" } }, (c) => {
    target.clock.pause();
    target.noteClockOperation("pause", {});
    return c.json(clockStatus(target.clock));
  });

  clock.post("/clock/resume", { summary: "resumes the realtime clock", responses: { 200: "the clock's status", 409: "not in realtime mode" } }, (c) => {
    target.clock.resume();
    target.noteClockOperation("resume", {});
    return c.json(clockStatus(target.clock));
  });

  routes.post(
    "/reset",
    {
      summary: "back to the start state; with a fixture, that fixture becomes the start fixture",
      body: resetBody,
      bodyOptional: true,
      responses: { 200: "`{reset: true, now, index, stateHash}`", 400: "bad body or fixture (`problems` lists each)" },
    },
    async (c, { body: { fixture } }) => {
      await target.reset(fixture);
      return c.json({ reset: true, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
    },
  );

  routes.post(
    "/fixtures",
    {
      summary: "applies a fixture to the current state (adds to it; seed and clock are refused)",
      body: fixtureDocument,
      responses: { 200: "`{applied: true, index, stateHash}`", 400: "bad fixture (`problems` lists each)" },
    },
    async (c, { body }) => {
      await target.applyFixture(body);
      return c.json({ applied: true, index: target.index, stateHash: target.stateHash() });
    },
  );

  // Streamed in slices (the captured document shares the state's frozen rows, so later writes do not change it).
  routes.get("/snapshot", { summary: "the whole state: store, indexes, clock, pending timers, generator state", responses: { 200: "the snapshot document" } }, () =>
    jsonStreamResponse(target.snapshot()),
  );

  routes.put(
    "/snapshot",
    {
      summary: "restores a snapshot exactly (validated; a bad one changes nothing)",
      body: snapshotDocument,
      responses: { 200: "`{restored: true, now, index, stateHash}`", 400: "bad snapshot (`problems` lists each)" },
    },
    (c, { body }) => {
      // The body was parsed for this request alone: the state can keep its objects instead of copying them.
      target.restore(body, { adopt: true });
      return c.json({ restored: true, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
    },
  );

  routes.get("/state/hash", { summary: "SHA-256 of the canonical state", responses: { 200: "`{hash}`" } }, (c) => c.json({ hash: target.stateHash() }));

  journal.get(
    "/requests",
    { summary: "the request journal (service requests, oldest first)", query: requestsQuery, responses: { 200: "`{requests, dropped}`", 400: "bad query" } },
    (c, { query: q }) => {
      const requests = target.requests.query({ since: q.since, limit: q.limit }).map((r) => ({ ...r, at: formatInstant(r.at) }));
      return c.json({ requests, dropped: target.requests.droppedCount });
    },
  );

  journal.delete("/requests", { summary: "clears the request journal", responses: { 200: "`{cleared: true}`" } }, (c) => {
    target.requests.clear();
    return c.json({ cleared: true });
  });

  journal.get(
    "/events",
    { summary: "the event journal (timers fired, clock operations, resets, fixtures…)", query: journalQuery, responses: { 200: "`{events, dropped}`", 400: "bad query" } },
    (c, { query: q }) => {
      const type = q.type;
      const events = target.events
        .query({ since: q.since, limit: q.limit, where: type ? (e) => e.type === type || e.type.startsWith(`${type}.`) : undefined })
        .map((e) => ({ ...e, at: formatInstant(e.at) }));
      return c.json({ events, dropped: target.events.droppedCount });
    },
  );

  routes.get("/tape", { tag: "tape", summary: "the tape since the last reset, for `standin replay`", responses: { 200: "the tape document", 409: "the tape is off (`--no-tape`)" } }, async () => {
    if (!target.tapeEnabled) throw new ControlError(409, "the tape is off (--no-tape, or recording.tape false): nothing was recorded");
    // Streamed in slices with backpressure: a long tape must not hold up every other client while it is written.
    return jsonStreamResponse(await target.exportTapeLazily());
  });

  journal.get(
    "/recording",
    { summary: "what the run records and how much: the tape's and the request journal's budgets and use", responses: { 200: "`{tape: {enabled, budget, bytes, entries, truncated}, journal: {capacity, budget, bytes, entries, dropped}}`" } },
    (c) => c.json(target.recording() as object),
  );

  journal.post(
    "/recording",
    {
      summary: "changes the recording budgets (the fixture's `recording` section, at run time)",
      description: "`journalEntries`/`journalBytes` trim the journal to its newest entries at once; `tapeBytes` applies to what the tape records next; `tape` turns the tape on or off.",
      body: recordingBody,
      responses: { 200: "the recording status, as GET", 400: "bad body" },
    },
    (c, { body }) => c.json(target.setRecording(body) as object),
  );

  scenario.get("/actions", { summary: "every service's named actions and await conditions", responses: { 200: "`{actions, conditions}`: `{name, service, summary}` each" } }, (c) =>
    c.json({ actions: target.scenario.describeActions(), conditions: target.scenario.describeConditions() }),
  );

  scenario.post(
    "/actions",
    {
      summary: "runs one named action now, in one write",
      description: "The action's arguments sit beside `do`; `GET /_standin/actions` lists the actions.",
      body: actionBody,
      responses: { 200: "`{do, service, result, index}`", 400: "bad arguments", 404: "unknown action or name", 409: "nothing matches" },
    },
    (c, { body: { do: name, ...args } }) => c.json(target.act(name, args) as object),
  );

  scenario.post(
    "/await",
    {
      summary: "moves the clock timer by timer until every condition holds",
      body: awaitBody,
      responses: {
        200: "`{met: true, waited, observed, now, fired, index}`",
        400: "bad body or condition",
        404: "unknown condition",
        408: "not met within the limit: the error with `met: false` and what was observed",
        409: "realtime mode",
      },
    },
    async (c, { body: { until, within } }) => {
      const outcome = await target.scenario.awaitUntil(until, within);
      // `within` counts whole milliseconds, rounded up: waiting the longest Go duration is a fraction of a millisecond more than it can say.
      const waited = formatGoDuration(msToNanos(Math.min(outcome.waitedMs, MAX_GO_DURATION_MS)));
      const answer = { met: outcome.met, waited, observed: outcome.observed, ...advanceResult(target.clock, outcome.fired), index: target.index };
      if (outcome.met) return c.json(answer);
      return c.json({ error: `the condition did not hold within ${within ?? DEFAULT_AWAIT_WITHIN} of virtual time`, ...answer, stateHash: target.stateHash() }, 408);
    },
  );

  if (options.coverage) coverageRoutes(routes.withTag("coverage"), options.coverage);
  for (const service of options.services ?? []) routes.route(`/${service.name}`, service.app);

  let document: Record<string, unknown> | undefined;
  routes.get("/openapi.json", { tag: "meta", summary: "this document: the control API in OpenAPI 3.1", responses: { 200: "the OpenAPI document" } }, (c) => {
    document ??= buildOpenApiDocument(routes.operations, { prefix: CONTROL_PREFIX });
    return c.json(document);
  });

  return app;
}

/** The clock's status, with idle skipping's `locks` and `skips` when given (one literal: spreading two objects into one cost more than the rest of the request). */
export function clockStatus(clock: Clock, idle?: { locks: number; skips: number }): ClockStatusBody {
  const s = clock.status();
  const now = formatInstant(s.nowMs);
  const nextTimerAt = s.nextTimerAt === null ? null : formatInstant(s.nextTimerAt);
  if (idle) return { now, nowMs: s.nowMs, mode: s.mode, speed: s.speed, paused: s.paused, pendingTimers: s.pendingTimers, nextTimerAt, locks: idle.locks, skips: idle.skips };
  return { now, nowMs: s.nowMs, mode: s.mode, speed: s.speed, paused: s.paused, pendingTimers: s.pendingTimers, nextTimerAt };
}

interface ClockStatusBody {
  now: string;
  nowMs: number;
  mode: ReturnType<Clock["status"]>["mode"];
  speed: number;
  paused: boolean;
  pendingTimers: number;
  nextTimerAt: string | null;
  locks?: number;
  skips?: number;
}

function advanceResult(clock: Clock, fired: FiredTimer[]) {
  return { now: clock.nowText(), fired: fired.map((f) => ({ at: formatInstant(f.at), kind: f.kind, subject: f.subject, detail: f.detail })) };
}

/** Maps the emulator's errors to the control API's statuses; anything unexpected is a 500 without a stack trace. */
export function controlErrorResponse(c: Context, error: unknown): Response {
  if (error instanceof ControlError) return c.json({ error: error.message }, error.status);
  if (error instanceof ActionError) return c.json({ error: error.message }, error.status);
  if (error instanceof ClockError) return c.json({ error: error.message }, error.code === "invalid" ? 400 : 409);
  if (error instanceof DurationError || error instanceof InstantError) return c.json({ error: error.message }, 400);
  if (error instanceof FixtureError) return c.json({ error: error.oneLine, problems: error.problems }, 400);
  if (error instanceof SnapshotError) return c.json({ error: error.message, problems: error.problems }, 400);
  if (error instanceof BodyTooLargeError) return c.json({ error: error.message }, 413, { Connection: "close" });
  return c.json({ error: `internal error: ${(error as Error)?.message ?? String(error)}` }, 500);
}
