/**
 * `GET /_standin/openapi.json`: the control API's OpenAPI document, built
 * (by ../openapi.ts) on the first request from every operation the control
 * app declares, itself included; mounted last, it is the document's last path.
 */
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import { buildOpenApiDocument } from "../openapi.js";
import { CONTROL_PREFIX } from "../target.js";

export function openApiRoute(routes: DocumentedRoutes): void {
  let document: Record<string, unknown> | undefined;
  routes.get("/openapi.json", { tag: "meta", summary: "this document: the control API in OpenAPI 3.1", responses: { 200: "the OpenAPI document" } }, (c) => {
    document ??= buildOpenApiDocument(routes.operations, { prefix: CONTROL_PREFIX });
    return c.json(document);
  });
}
