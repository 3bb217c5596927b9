/**
 * `GET /_standin`: an index of the control API for someone exploring it by
 * hand (curl, a browser): every route with its one-line summary, read from
 * the same documented-routes table the OpenAPI document is built from, so
 * the two list the same routes. The full shapes are in `openapi.json`.
 */
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import { CONTROL_PREFIX } from "../target.js";

interface IndexEntry {
  method: string;
  path: string;
  summary: string;
}

export function controlIndexRoute(routes: DocumentedRoutes): void {
  let index: IndexEntry[] | undefined;
  routes.get(
    "/",
    {
      tag: "meta",
      summary: "this index: every control route with its summary (the full shapes: openapi.json)",
      responses: { 200: "`{openapi, docs, routes: [{method, path, summary}]}`" },
    },
    (c) => {
      // Built on the first request: by then every route (those mounted after this one included) is declared.
      index ??= routes.operations.map((operation) => ({
        method: operation.method.toUpperCase(),
        path: operation.path === "/" ? CONTROL_PREFIX : `${CONTROL_PREFIX}${operation.path}`,
        summary: operation.summary,
      }));
      return c.json({ openapi: `${CONTROL_PREFIX}/openapi.json`, docs: "docs/control-api.md", routes: index });
    },
  );
}
