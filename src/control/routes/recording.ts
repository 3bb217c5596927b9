/**
 * What the run records: `GET /tape` (the tape since the last reset, for
 * `standin replay`; the recorder itself is ../tape.ts) and `GET`/`POST
 * /recording` (the tape's and the request journal's budgets and use).
 */
import { jsonStreamResponse } from "../../core/json-stream.js";
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import { recordingSection as recordingBody } from "../../scenario-files/schema.js";
import { ControlError } from "../errors.js";
import type { ControlTarget } from "../target.js";

export function recordingRoutes(routes: DocumentedRoutes, target: ControlTarget): void {
  const journal = routes.withTag("journal");

  routes.get(
    "/tape",
    { tag: "tape", summary: "the tape since the last reset, for `standin replay`", responses: { 200: "the tape document", 409: "the tape is off (`--no-tape`)" } },
    async () => {
      if (!target.tapeEnabled) throw new ControlError(409, "the tape is off (--no-tape, or recording.tape false): nothing was recorded");
      // Streamed in slices with backpressure: a long tape must not hold up every other client while it is written.
      return jsonStreamResponse(await target.exportTapeLazily());
    },
  );

  journal.get(
    "/recording",
    {
      summary: "what the run records and how much: the tape's and the request journal's budgets and use",
      responses: { 200: "`{tape: {enabled, budget, bytes, entries, truncated}, journal: {capacity, budget, bytes, entries, dropped}}`" },
    },
    (c) => c.json(target.recording() as object),
  );

  journal.post(
    "/recording",
    {
      summary: "changes the recording budgets (the fixture's `recording` section, at run time)",
      description:
        "`journalEntries`/`journalBytes` trim the journal to its newest entries at once; `tapeBytes` applies to what the tape records next; `tape` turns the tape on or off.",
      body: recordingBody,
      responses: { 200: "the recording status, as GET", 400: "bad body" },
    },
    (c, { body }) => c.json(target.setRecording(body) as object),
  );
}
