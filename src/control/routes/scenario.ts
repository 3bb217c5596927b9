/**
 * Scenarios: `GET`/`POST /actions` (every service's named actions; run one
 * now) and `POST /await` (move the clock timer by timer until conditions
 * hold). The actions and conditions themselves are ../scenario.ts.
 */
import * as v from "valibot";
import { formatGoDuration, msToNanos } from "../../core/durations.js";
import { ACTION_BODY_BYTES, checkArgumentSize } from "../../http/actions.js";
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import { DOCUMENT_CHECKS } from "../document-checks.js";
import { offLoopCheck } from "../document-worker.js";
import { DEFAULT_AWAIT_WITHIN } from "../scenario.js";
import type { ControlTarget } from "../target.js";
import { advanceResult } from "./clock-answers.js";

/** The longest Go duration (2^63-1 ns) in whole milliseconds. */
const MAX_GO_DURATION_MS = 9_223_372_036_854;

// The request schemas: the routes validate with these and the OpenAPI document is generated from them.
const actionBody = DOCUMENT_CHECKS.action.body;
const checkActionOffLoop = offLoopCheck("action");
const awaitBody = v.strictObject({
  until: v.pipe(v.record(v.string(), v.unknown()), v.description("condition name → its arguments; every one must hold")),
  within: v.optional(v.pipe(v.string(), v.description(`a Go duration of virtual time (default ${DEFAULT_AWAIT_WITHIN})`))),
});

export function scenarioRoutes(routes: DocumentedRoutes, target: ControlTarget): void {
  const scenario = routes.withTag("scenario");

  scenario.get("/actions", { summary: "every service's named actions and await conditions", responses: { 200: "`{actions, conditions}`: `{name, service, summary}` each" } }, (c) =>
    c.json({ actions: target.scenario.describeActions(), conditions: target.scenario.describeConditions() }),
  );

  scenario.post(
    "/actions",
    {
      summary: "runs one named action now, in one write",
      description: "The action's arguments sit beside `do`; `GET /_standin/actions` lists the actions.",
      body: actionBody,
      maxBodyBytes: ACTION_BODY_BYTES,
      // A large body is parsed and handed over off the event loop; its arguments are bounded (a walk that stops at the limit) before anything copies them.
      precheck: checkActionOffLoop,
      responses: {
        200: "`{do, service, result, index}`",
        400: "bad arguments, or more than 10 000 JSON values or 2 Mi characters of strings in them",
        413: "a body over 16 MiB",
        404: "unknown action or name",
        409: "nothing matches",
      },
    },
    (c, { body }) => {
      // Bounded before the arguments are copied out of the body (the action's service checks them again, as every caller's).
      checkArgumentSize(body, `action (${body.do})`, "do");
      const { do: name, ...args } = body;
      return c.json(target.act(name, args) as object);
    },
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
}
