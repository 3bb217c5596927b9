/**
 * The control API, served under `/_standin` on every service port (one
 * shared state). JSON in, JSON out; errors are `{"error": "<message>"}`.
 * It reaches the emulator only through `ControlTarget`, and each service's
 * own control routes are mounted under `/_standin/<service>`.
 */
import { Hono, type Context } from "hono";
import * as v from "valibot";
import { ClockError, type Clock, type FiredTimer } from "../core/clock.js";
import { DurationError, formatGoDuration, msToNanos } from "../core/durations.js";
import { formatInstant, InstantError } from "../core/instant.js";
import type { CappedLog, EmulatorEvent, RecordedRequest } from "../core/journal.js";
import { SnapshotError, type StateSnapshot } from "../core/snapshot.js";
import { describeIssues } from "../core/validation.js";
import { FixtureError } from "../fixtures/load.js";
import { bearerToken } from "../http/tokens.js";
import type { CoverageTracker } from "../http/coverage.js";
import { coverageRoutes } from "./coverage.js";
import { ActionError } from "../http/actions.js";
import type { IdleSkipper } from "./idle-skip.js";
import { DEFAULT_AWAIT_WITHIN, type Scenario } from "./scenario.js";

export const CONTROL_PREFIX = "/_standin";

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
  /** Validates, then restores; a bad document changes nothing. */
  restore(snapshot: unknown): void;
  /** Records a clock operation (advance, next, pause…) in the event journal. */
  noteClockOperation(operation: string, detail: unknown): void;
  /** Named actions, timelines and await. */
  readonly scenario: Scenario;
  /** Idle skipping's locks (`--clock auto`). */
  readonly idle: IdleSkipper;
  /** Runs a named action now (and puts it on the tape). */
  act(name: string, args: Record<string, unknown>): unknown;
  /** The tape since the last reset. */
  exportTape(): Promise<unknown>;
}

export class ControlError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 503,
    message: string,
  ) {
    super(message);
  }
}

export interface ControlOptions {
  /** When set, every control request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Service control routes, mounted at `/<name>`. */
  services?: ReadonlyArray<{ name: string; app: Hono }>;
  /** The run's route coverage, served at `/coverage`. */
  coverage?: CoverageTracker;
}

const advanceBody = v.strictObject({ by: v.string() });
const advanceToBody = v.strictObject({ to: v.string() });
const resetBody = v.strictObject({ fixture: v.optional(v.unknown()) });
const autoBody = v.strictObject({ enabled: v.boolean() });
const actionBody = v.looseObject({ do: v.pipe(v.string(), v.minLength(1)) });
const awaitBody = v.strictObject({ until: v.record(v.string(), v.unknown()), within: v.optional(v.string()) });
const queryCount = (min: number) => v.optional(v.pipe(v.string(), v.regex(/^\d+$/, "expected a whole number"), v.transform(Number), v.minValue(min)));
const journalQuery = v.object({ since: queryCount(0), limit: queryCount(1), type: v.optional(v.string()) });

export function createControlApp(target: ControlTarget, options: ControlOptions = {}): Hono {
  const app = new Hono().basePath(CONTROL_PREFIX);
  app.onError((error, c) => controlErrorResponse(c, error));
  app.notFound((c) => c.json({ error: `no control route ${c.req.method} ${c.req.path}` }, 404));

  if (options.token !== undefined) {
    const expected = options.token;
    app.use("*", async (c, next) => {
      if (bearerToken(c.req.header("Authorization")) !== expected) {
        return c.json({ error: "the control API needs Authorization: Bearer <control token>" }, 401, { "WWW-Authenticate": "Bearer" });
      }
      await next();
    });
  }

  app.get("/ready", (c) => {
    if (!target.isReady) return c.json({ ready: false }, 503);
    return c.json({ ready: true, seed: target.seed, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
  });

  app.get("/clock", (c) => c.json({ ...clockStatus(target.clock), ...target.idle.status() }));

  // Idle skipping: on with the auto clock; a lock counter holds it off around a section of a test.
  app.post("/clock/auto", async (c) => {
    const { enabled } = await body(c, autoBody);
    const mode = target.clock.status().mode;
    if (enabled && mode !== "auto") target.clock.setMode("auto");
    if (!enabled && mode === "auto") target.clock.setMode("manual");
    target.noteClockOperation("auto", { enabled });
    target.idle.poke();
    return c.json({ ...clockStatus(target.clock), ...target.idle.status() });
  });

  app.post("/clock/lock", (c) => c.json({ locks: target.idle.lock() }));

  app.post("/clock/unlock", (c) => c.json({ locks: target.idle.unlock() }));

  app.post("/clock/advance", async (c) => {
    const { by } = await body(c, advanceBody);
    const fired = target.clock.advance(by);
    target.noteClockOperation("advance", { by });
    return c.json(advanceResult(target.clock, fired));
  });

  app.post("/clock/advance-to", async (c) => {
    const { to } = await body(c, advanceToBody);
    const fired = target.clock.advanceTo(to);
    target.noteClockOperation("advance-to", { to });
    return c.json(advanceResult(target.clock, fired));
  });

  app.post("/clock/next", (c) => {
    const fired = target.clock.next();
    target.noteClockOperation("next", {});
    return c.json(advanceResult(target.clock, fired));
  });

  app.post("/clock/pause", (c) => {
    target.clock.pause();
    target.noteClockOperation("pause", {});
    return c.json(clockStatus(target.clock));
  });

  app.post("/clock/resume", (c) => {
    target.clock.resume();
    target.noteClockOperation("resume", {});
    return c.json(clockStatus(target.clock));
  });

  app.post("/reset", async (c) => {
    const { fixture } = await body(c, resetBody, true);
    await target.reset(fixture);
    return c.json({ reset: true, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
  });

  app.post("/fixtures", async (c) => {
    const document = await jsonBody(c);
    await target.applyFixture(document);
    return c.json({ applied: true, index: target.index, stateHash: target.stateHash() });
  });

  app.get("/snapshot", (c) => c.json(target.snapshot()));

  app.put("/snapshot", async (c) => {
    target.restore(await jsonBody(c));
    return c.json({ restored: true, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
  });

  app.get("/state/hash", (c) => c.json({ hash: target.stateHash() }));

  app.get("/requests", (c) => {
    const q = query(c, journalQuery);
    const requests = target.requests.query({ since: q.since, limit: q.limit }).map((r) => ({ ...r, at: formatInstant(r.at) }));
    return c.json({ requests, dropped: target.requests.droppedCount });
  });

  app.delete("/requests", (c) => {
    target.requests.clear();
    return c.json({ cleared: true });
  });

  app.get("/events", (c) => {
    const q = query(c, journalQuery);
    const type = q.type;
    const events = target.events
      .query({ since: q.since, limit: q.limit, where: type ? (e) => e.type === type || e.type.startsWith(`${type}.`) : undefined })
      .map((e) => ({ ...e, at: formatInstant(e.at) }));
    return c.json({ events, dropped: target.events.droppedCount });
  });

  app.get("/tape", async (c) => c.json((await target.exportTape()) as object));

  app.get("/actions", (c) => c.json({ actions: target.scenario.describeActions(), conditions: target.scenario.describeConditions() }));

  app.post("/actions", async (c) => {
    const { do: name, ...args } = await body(c, actionBody);
    return c.json(target.act(name, args) as object);
  });

  app.post("/await", async (c) => {
    const { until, within } = await body(c, awaitBody);
    const outcome = await target.scenario.awaitUntil(until, within);
    const answer = { met: outcome.met, waited: formatGoDuration(msToNanos(outcome.waitedMs)), observed: outcome.observed, ...advanceResult(target.clock, outcome.fired), index: target.index };
    if (outcome.met) return c.json(answer);
    return c.json({ error: `the condition did not hold within ${within ?? DEFAULT_AWAIT_WITHIN} of virtual time`, ...answer, stateHash: target.stateHash() }, 408);
  });

  if (options.coverage) coverageRoutes(app, options.coverage);
  for (const service of options.services ?? []) app.route(`/${service.name}`, service.app);

  return app;
}

export function clockStatus(clock: Clock) {
  const s = clock.status();
  return {
    now: formatInstant(s.nowMs),
    nowMs: s.nowMs,
    mode: s.mode,
    speed: s.speed,
    paused: s.paused,
    pendingTimers: s.pendingTimers,
    nextTimerAt: s.nextTimerAt === null ? null : formatInstant(s.nextTimerAt),
  };
}

function advanceResult(clock: Clock, fired: FiredTimer[]) {
  return { now: clock.nowText(), fired: fired.map((f) => ({ at: formatInstant(f.at), kind: f.kind, subject: f.subject, detail: f.detail })) };
}

async function jsonBody(c: Context): Promise<unknown> {
  return parseJSONText(await c.req.text());
}

function parseJSONText(text: string): unknown {
  if (text.trim() === "") throw new ControlError(400, "request body is empty; expected a JSON document");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ControlError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

type Schema<T> = v.GenericSchema<unknown, T>;

async function body<T>(c: Context, schema: Schema<T>, allowEmpty = false): Promise<T> {
  const text = await c.req.text();
  const document = allowEmpty && text.trim() === "" ? {} : parseJSONText(text);
  return validate(schema, document, "body");
}

function query<T>(c: Context, schema: Schema<T>): T {
  return validate(schema, c.req.query(), "query");
}

function validate<T>(schema: Schema<T>, value: unknown, where: string): T {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  throw new ControlError(400, `invalid ${where}: ${describeIssues(result.issues).join("; ")}`);
}

/** Maps the emulator's errors to the control API's statuses; anything unexpected is a 500 without a stack trace. */
export function controlErrorResponse(c: Context, error: unknown): Response {
  if (error instanceof ControlError) return c.json({ error: error.message }, error.status);
  if (error instanceof ActionError) return c.json({ error: error.message }, error.status);
  if (error instanceof ClockError) return c.json({ error: error.message }, error.code === "invalid" ? 400 : 409);
  if (error instanceof DurationError || error instanceof InstantError) return c.json({ error: error.message }, 400);
  if (error instanceof FixtureError) return c.json({ error: error.oneLine, problems: error.problems }, 400);
  if (error instanceof SnapshotError) return c.json({ error: error.message, problems: error.problems }, 400);
  return c.json({ error: `internal error: ${(error as Error)?.message ?? String(error)}` }, 500);
}
