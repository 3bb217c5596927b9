/**
 * The echo service's routes: the operations of the sample's OpenAPI
 * specification (schemes.ts's OPERATIONS, every one emulated), and how a
 * catalogued route standin does not emulate would answer (in the proxy's
 * error style, see http/coverage.ts).
 *
 * Nothing else is catalogued: ESP and ESPv2 serve only the specification's
 * operations on the API port (their health and status endpoints are off
 * by default, or on a port of their own), and the real sample's operation
 * names (`/auth/info/googlejwt`, `/firebase`, …) are not part of the
 * specification standin stands in for, so the proxy answers them with its
 * own 404, as it would for any path the specification leaves out.
 */
import { RouteMatcher, unemulatedMessage, type RouteCatalog, type RouteEntry } from "../http/coverage.js";
import type { Dialect } from "./auth-types.js";
import { proxyErrorResponse } from "./proxy.js";
import { OPERATIONS } from "./schemes.js";

export const ECHO_ROUTES: RouteCatalog = {
  product: "echo sample behind ESP",
  // The proxies match the raw path, case-sensitively and exactly.
  decodePath: false,
  routes: Object.entries(OPERATIONS).map(([path, operation]): RouteEntry => ({ methods: [operation.method], path, emulated: true })),
};

const matcher = new RouteMatcher(ECHO_ROUTES);
/** Every catalogued route is emulated today: then no request needs matching for a 501. */
const anyUnemulated = ECHO_ROUTES.routes.some((route) => !route.emulated);

/** The proxy's answer to a catalogued route standin does not emulate; undefined for every other request. */
export function unemulatedEchoRoute(dialect: Dialect, method: string, url: URL): Response | undefined {
  if (!anyUnemulated) return undefined;
  const match = matcher.match(method, url.pathname);
  return match.kind === "unemulated" ? unemulatedEchoResponse(dialect, method, match.entry, url) : undefined;
}

/** A catalogued route standin does not emulate: 501, google.rpc code 12 (UNIMPLEMENTED), in the dialect's format. */
export function unemulatedEchoResponse(dialect: Dialect, method: string, entry: RouteEntry, url: URL): Response {
  const message = entry.productAnswer ?? unemulatedMessage(ECHO_ROUTES, method, entry);
  return proxyErrorResponse(dialect, { status: 501, rpcCode: 12, esp: message, espv2: message, stage: "service_control" }, url);
}
