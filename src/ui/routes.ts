/**
 * The dashboard's routes, under `/_standin/ui`: the page and its two files,
 * and the JSON and event-stream endpoints it reads (`/ui/api/…`). The live
 * view itself reads the control API it already has (the snapshot, the
 * clock, the journal) and moves the clock through it; what is new here is
 * the change stream, the timeline and the state at an instant.
 *
 * The three files carry no state and are served without the control token
 * (a browser cannot send a bearer header when it opens a page); the page
 * asks for the token and sends it with every request it makes
 * (../control/token-check.ts lets the files alone through).
 */
import * as v from "valibot";
import type { DocumentedRoutes } from "../http/documented-routes.js";
import { DOCUMENT_CHECKS } from "../control/document-checks.js";
import { offLoopCheck } from "../control/document-worker.js";
import { clockStatus } from "../control/routes/clock-answers.js";
import { jsonStreamResponse } from "../core/json-stream.js";
import type { MountedRoutes } from "../control/target.js";
import { uiAssetResponse } from "./assets.js";
import type { Dashboard, LiveTarget } from "./dashboard.js";

/** The change stream sends at most one update per this many real milliseconds, however busy the emulator. */
export const STREAM_THROTTLE_MS = 100;
/** A comment line this often (real time) keeps proxies from closing an idle stream. */
const STREAM_KEEPALIVE_MS = 15_000;

/** The page's files: public (no state in them), and what the token check lets through. */
export const UI_PUBLIC_PATHS = ["/ui", "/ui/app.js", "/ui/app.css"] as const;

const sourceQuery = v.pipe(
  v.optional(v.picklist(["live", "tape"])),
  v.description("`live` (the running emulator's tape; the default when there is one) or `tape` (the tape opened from a file)"),
);
const timelineQuery = v.object({
  source: sourceQuery,
  since: v.optional(
    v.pipe(
      v.string(),
      v.description("only the items from this index on (a page that has the others, of the same `session`)"),
      v.regex(/^\d+$/, "expected a whole number"),
      v.transform(Number),
    ),
  ),
});
const instantQuery = v.object({
  source: sourceQuery,
  seq: v.pipe(v.string(), v.description("the tape entry's sequence number; 0 is the start state"), v.regex(/^\d+$/, "expected a whole number"), v.transform(Number)),
  at: v.optional(
    v.pipe(
      v.string(),
      v.description("for a clock move: an instant it passes (ms since the epoch), to see the state then, on the way"),
      v.regex(/^\d{1,15}$/, "expected milliseconds since the epoch"),
      v.transform(Number),
    ),
  ),
});
const tapeDocument = DOCUMENT_CHECKS.tape.body;
const tapeQuery = v.object({ name: v.optional(v.pipe(v.string(), v.maxLength(200), v.description("the file's name, shown on the page"))) });

/** The dashboard as the control API mounts it: at `/ui`, its page and files public, its sessions closed with the emulator. */
export function dashboardRoutes(dashboard: Dashboard): MountedRoutes {
  return { publicPaths: UI_PUBLIC_PATHS, mount: (routes) => uiRoutes(routes, dashboard), close: () => dashboard.close() };
}

export function uiRoutes(routes: DocumentedRoutes, dashboard: Dashboard): void {
  const ui = routes.withTag("ui");
  ui.get("/ui", { summary: "the dashboard: live view, timeline, tape viewer (public: the page holds no state and asks for the control token)", responses: { 200: "HTML" } }, () =>
    uiAssetResponse("index.html"),
  );
  ui.get("/ui/app.js", { summary: "the dashboard's script (public)", responses: { 200: "JavaScript" } }, () => uiAssetResponse("app.js"));
  ui.get("/ui/app.css", { summary: "the dashboard's style sheet (public)", responses: { 200: "CSS" } }, () => uiAssetResponse("app.css"));

  ui.get(
    "/ui/api/info",
    { summary: "what the dashboard shows: `live` (a running emulator) or `tape` (standin ui), and the open tape", responses: { 200: "`{mode, tape}`" } },
    (c) => c.json(dashboard.info()),
  );

  const live = dashboard.live;
  if (live)
    ui.get(
      "/ui/api/stream",
      {
        summary: "server-sent events: `change` with the clock's status and the index whenever the state or the clock moves (at most every 100 ms of real time)",
        responses: { 200: "`text/event-stream`" },
      },
      (c) => changeStream(live, c.req.raw.signal),
    );

  ui.get(
    "/ui/api/timeline",
    {
      summary: "every tape entry and what it caused (fired timers, the services' events) on one virtual-time axis, with the replay's divergences",
      query: timelineQuery,
      responses: {
        200: "`{source, session, from, entries, items: [{seq, at, lane, kind, label, status?, subject?}], itemsDropped, divergences, truncated, start, report?}`",
        404: "no such source",
        409: "the tape is off, or the clock is realtime",
      },
    },
    async (_c, { query }) => jsonStreamResponse(await dashboard.timeline(query.source ?? dashboard.mode, query.since)),
  );

  ui.get(
    "/ui/api/instant",
    {
      summary: "the state right after a tape entry (or, with `at`, at an instant a clock move passes), rebuilt in a scratch emulator (never the live one), and what changed",
      query: instantQuery,
      responses: {
        200: "`{seq, entry, during?, at, index, stateHash, snapshot, diff}`: `snapshot` is what GET /_standin/snapshot answered at that instant",
        400: "bad query",
        404: "no such entry or source",
      },
    },
    // The snapshot is a whole state: written a slice at a time, as GET /_standin/snapshot is.
    async (_c, { query }) => jsonStreamResponse(await dashboard.instant(query.source ?? dashboard.mode, query.seq, query.at)),
  );

  ui.get(
    "/ui/api/parity",
    {
      summary: "the parity report opened with standin ui --parity (standin parity --json), as it was written",
      responses: { 200: "the report: `{format, version, recording, summary, ok, routes, differences, exchanges, waivers}`", 404: "no parity report is open" },
    },
    (c) => c.json(dashboard.parityReport() as object),
  );

  ui.post(
    "/ui/api/tape",
    {
      summary: "opens a tape (a dropped file) in the tape viewer, read-only: replayed into a scratch emulator",
      body: tapeDocument,
      maxBodyBytes: "control-limit",
      precheck: offLoopCheck("tape"),
      query: tapeQuery,
      responses: { 200: "the timeline, as GET /ui/api/timeline?source=tape", 400: "not a tape standin can replay" },
    },
    // The timeline holds up to 50 000 items: written a slice at a time (the bytes c.json would write), as the tape export is.
    async (_c, { body, query }) => jsonStreamResponse(await dashboard.openTape(body, query.name ?? "tape.json")),
  );
}

/** `text/event-stream`: one `change` event at once, then one per burst of changes, throttled; ends when the page goes. */
function changeStream(live: LiveTarget, signal: AbortSignal): Response {
  const encoder = new TextEncoder();
  const wall = live.clock.wallTime;
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let pending: unknown;
      let keepalive: unknown;
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          stop();
        }
      };
      const flush = () => {
        pending = undefined;
        send(`event: change\ndata: ${JSON.stringify({ index: live.index, clock: clockStatus(live.clock) })}\n\n`);
      };
      const beat = () => {
        send(": keepalive\n\n");
        keepalive = wall.setTimer(beat, STREAM_KEEPALIVE_MS);
      };
      const unsubscribe = live.onChange(() => {
        pending ??= wall.setTimer(flush, STREAM_THROTTLE_MS);
      });
      stop = () => {
        unsubscribe();
        if (pending !== undefined) wall.clearTimer(pending);
        if (keepalive !== undefined) wall.clearTimer(keepalive);
        pending = keepalive = undefined;
        signal.removeEventListener("abort", onAbort);
      };
      const onAbort = () => {
        stop();
        try {
          controller.close();
        } catch {
          // already closed by the reader
        }
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      flush();
      keepalive = wall.setTimer(beat, STREAM_KEEPALIVE_MS);
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", "X-Accel-Buffering": "no" } });
}
