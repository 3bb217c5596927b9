/**
 * The route of a recorded exchange, by standin's route catalogs (the same
 * ones its 501s and `/_standin/coverage` use): the report groups exchanges
 * by it (`GET /v1/job/:id`), and it tells an unemulated route and an unknown
 * path from a difference in an answer.
 */
import { matcherFor, rawPathOf, type RouteCatalog } from "../../http/coverage.js";
import { ECHO_ROUTES } from "../../echo/route-catalog.js";
import { REGISTRY_ROUTES } from "../../registry/route-catalog.js";
import { SCHEDULER_ROUTES } from "../../scheduler/route-catalog.js";
import type { RecordedService } from "../recording.js";

export interface RouteOfExchange {
  readonly kind: "emulated" | "unemulated" | "unknown";
  /** `GET /v1/job/:id`; an unknown path is named as it was sent (without its query). */
  readonly label: string;
}

const CATALOGS: Record<RecordedService, RouteCatalog> = { scheduler: SCHEDULER_ROUTES, registry: REGISTRY_ROUTES, echo: ECHO_ROUTES };

export function routeOf(service: RecordedService, method: string, pathAndQuery: string): RouteOfExchange {
  const matcher = matcherFor(CATALOGS[service]);
  const path = matcher.pathOf(pathAndQuery);
  const match = matcher.match(method, path);
  if (match.kind === "unknown") return { kind: "unknown", label: `${method} ${rawPathOf(pathAndQuery)}` };
  return { kind: match.kind, label: `${method} ${match.entry.path}` };
}
