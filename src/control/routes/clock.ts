/**
 * `/_standin/clock…`: the virtual clock's status, advancing it (by a
 * duration, to an instant, to the next timer), pausing the realtime clock,
 * and idle skipping (`auto`, `lock`, `unlock`).
 */
import * as v from "valibot";
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import { controlJson } from "../../http/no-sniff.js";
import type { ControlTarget } from "../target.js";
import { advanceResult, clockStatus } from "./clock-answers.js";

// The request schemas: the routes validate with these and the OpenAPI document is generated from them.
const advanceBody = v.strictObject({ by: v.pipe(v.string(), v.description("a Go duration, e.g. `30s`, `1h30m`")) });
const advanceToBody = v.strictObject({ to: v.pipe(v.string(), v.description("an RFC 3339 instant, not before now")) });
const autoBody = v.strictObject({ enabled: v.boolean() });
/** A body that may be left out or be `{}` (a plain object: a key is named as one the route does not take). */
const noArguments = v.pipe(v.object({}), v.description("no arguments: leave the body out or send `{}`"));

export function clockRoutes(routes: DocumentedRoutes, target: ControlTarget): void {
  const clock = routes.withTag("clock");

  // The route clients poll: answered saying nosniff from the start (http/no-sniff's controlJson), the same bytes as c.json plus the header.
  clock.get("/clock", { summary: "the virtual clock's status", responses: { 200: "`{now, nowMs, mode, speed, paused, pendingTimers, nextTimerAt, locks, skips}`" } }, () =>
    controlJson(clockStatus(target.clock, target.idle.status())),
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

  // Lock, unlock, next, pause and resume take no arguments: a key sent anyway (`{"count": 3}`) is a 400, not a lock that silently counts one.
  clock.post(
    "/clock/lock",
    { summary: "holds idle skipping off (a counter)", body: noArguments, bodyOptional: true, responses: { 200: "`{locks}`", 400: "a body with keys" } },
    (c) => c.json({ locks: target.idle.lock() }),
  );

  clock.post(
    "/clock/unlock",
    { summary: "releases one lock", body: noArguments, bodyOptional: true, responses: { 200: "`{locks}`", 400: "a body with keys", 409: "the clock is not locked" } },
    (c) => c.json({ locks: target.idle.unlock() }),
  );

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
    {
      summary: "jumps to the next due timer and fires it and any at the same instant",
      body: noArguments,
      bodyOptional: true,
      responses: { 200: "`{now, fired}`", 400: "a body with keys", 409: "the clock cannot move now" },
    },
    (c) => {
      const fired = target.clock.next();
      target.noteClockOperation("next", {});
      return c.json(advanceResult(target.clock, fired));
    },
  );

  clock.post(
    "/clock/pause",
    { summary: "pauses the realtime clock", body: noArguments, bodyOptional: true, responses: { 200: "the clock's status", 400: "a body with keys", 409: "not in realtime mode" } },
    (c) => {
      target.clock.pause();
      target.noteClockOperation("pause", {});
      return c.json(clockStatus(target.clock));
    },
  );

  clock.post(
    "/clock/resume",
    {
      summary: "resumes the realtime clock",
      body: noArguments,
      bodyOptional: true,
      responses: { 200: "the clock's status", 400: "a body with keys", 409: "not in realtime mode" },
    },
    (c) => {
      target.clock.resume();
      target.noteClockOperation("resume", {});
      return c.json(clockStatus(target.clock));
    },
  );
}
