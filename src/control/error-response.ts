/**
 * The control API's error answers: `{"error": "<message>"}` (with
 * `problems` for fixtures and snapshots) at the status each of the
 * emulator's errors stands for.
 */
import type { Context } from "hono";
import { ClockError } from "../core/clock.js";
import { DurationError } from "../core/durations.js";
import { InstantError } from "../core/instant.js";
import { SnapshotError } from "../core/snapshot.js";
import { FixtureError } from "../scenario-files/load.js";
import { ActionError } from "../http/actions.js";
import { BodyTooLargeError } from "../http/body-cap.js";
import { ControlError } from "./errors.js";

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
