/**
 * The state: `POST /reset`, `POST /fixtures` (adds to the current state),
 * `GET`/`PUT /snapshot` (the whole state, out and back in) and
 * `GET /state/hash`.
 */
import { jsonStreamResponse, nextTurn } from "../../core/json-stream.js";
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import { documentOrShippedFixture } from "../../scenario-files/load.js";
import { DOCUMENT_CHECKS } from "../document-checks.js";
import { offLoopCheck } from "../document-worker.js";
import type { ControlTarget } from "../target.js";

// The request schemas (../document-checks.ts): the routes validate with these, large bodies are checked
// with them off the event loop first, and the OpenAPI document is generated from them.
const { fixture, reset, snapshot } = DOCUMENT_CHECKS;
/**
 * A document is checked, then applied, then hashed for the answer, with turns
 * of the event loop in between (the hash a slice at a time), so a large one
 * holds other requests for the longest of these steps, not for all of them.
 */
const DOCUMENT_TURNS = { turn: nextTurn };

export function stateRoutes(routes: DocumentedRoutes, target: ControlTarget): void {
  routes.post(
    "/reset",
    {
      summary: "back to the start state; with a fixture, that fixture becomes the start fixture",
      body: reset.body,
      maxBodyBytes: "control-limit",
      precheck: offLoopCheck("reset"),
      bodyOptional: true,
      responses: { 200: "`{reset: true, now, index, stateHash}`", 400: "bad body or fixture (`problems` lists each)" },
    },
    async (c, { body: { fixture }, handedOver }) => {
      // A body handed over by the precheck passed the fixture check there (DOCUMENT_CHECKS.reset).
      await target.reset(fixture === undefined ? undefined : documentOrShippedFixture(fixture), { ...DOCUMENT_TURNS, checked: handedOver === true });
      return c.json({ reset: true, now: target.clock.nowText(), index: target.index, stateHash: await target.stateHashInTurns(nextTurn) });
    },
  );

  routes.post(
    "/fixtures",
    {
      summary: "applies a fixture to the current state (adds to it; seed and clock are refused)",
      body: fixture.body,
      maxBodyBytes: "control-limit",
      precheck: offLoopCheck("fixture"),
      responses: { 200: "`{applied: true, index, stateHash}`", 400: "bad fixture (`problems` lists each)" },
    },
    async (c, { body, handedOver }) => {
      // The body was parsed for this request alone: the tape can keep it without a copy, at the size it was sent.
      // Handed over by the precheck, it passed the fixture check there (DOCUMENT_CHECKS.fixture).
      const sent = Number(c.req.header("content-length"));
      await target.applyFixture(documentOrShippedFixture(body), {
        ...DOCUMENT_TURNS,
        adopt: true,
        bytes: Number.isSafeInteger(sent) ? sent : undefined,
        checked: handedOver === true,
      });
      return c.json({ applied: true, index: target.index, stateHash: await target.stateHashInTurns(nextTurn) });
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
      body: snapshot.body,
      maxBodyBytes: "control-limit",
      precheck: offLoopCheck("snapshot"),
      responses: { 200: "`{restored: true, now, index, stateHash}`", 400: "bad snapshot (`problems` lists each)" },
    },
    async (c, { body }) => {
      // The body was parsed for this request alone: the state can keep its objects instead of copying them.
      await target.restoreDocument(body, nextTurn);
      return c.json({ restored: true, now: target.clock.nowText(), index: target.index, stateHash: await target.stateHashInTurns(nextTurn) });
    },
  );

  routes.get("/state/hash", { summary: "SHA-256 of the canonical state", responses: { 200: "`{hash}`" } }, async (c) => c.json({ hash: await target.stateHashInTurns(nextTurn) }));
}
