/**
 * The journals: `GET`/`DELETE /requests` (the service requests the run
 * answered) and `GET /events` (timers fired, clock operations, resets,
 * fixtures…), each paged with `since` and `limit`.
 */
import * as v from "valibot";
import { formatInstant } from "../../core/instant.js";
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import type { ControlTarget } from "../target.js";

// The query schemas: the routes validate with these and the OpenAPI document is generated from them.
const queryCount = (min: number, description: string) =>
  v.optional(v.pipe(v.string(), v.description(description), v.regex(/^\d+$/, "expected a whole number"), v.transform(Number), v.minValue(min)));
const since = queryCount(0, "only entries with a sequence number above this");
const limit = queryCount(1, "at most this many entries (the newest)");
const requestsQuery = v.object({ since, limit });
const journalQuery = v.object({ since, limit, type: v.optional(v.pipe(v.string(), v.description("an event type; `clock` matches `clock.*`"))) });

export function journalRoutes(routes: DocumentedRoutes, target: ControlTarget): void {
  const journal = routes.withTag("journal");

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
}
