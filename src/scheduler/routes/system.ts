/**
 * `/v1/system/gc` and `/v1/system/reconcile/summaries`
 * (command/agent/system_endpoint.go; nomad/system_endpoint.go): PUT only,
 * then a management token, then the work; both answer 200 with an empty
 * body and no index header, as Nomad's handlers return nothing.
 *
 * Nomad's forced GC is an evaluation of the core scheduler's `force-gc` job
 * enqueued in the eval broker (never written to the state, so no API lists
 * it) and run a moment later; standin answers at once too and collects in
 * slices on the next turns of the event loop (engine/gc-force.ts), which
 * the next scheduler request, write or clock move waits for.
 */
import { emptyResponse } from "../../http/respond.js";
import { permissionDenied } from "../acl/acl-routes.js";
import type { NomadRouter, RequestContext } from "../http/nomad-http.js";
import { only } from "./helpers.js";
import type { RouteKit } from "./kit.js";

export function registerSystemRoutes(router: NomadRouter, { engine }: RouteKit): void {
  router.exact("/v1/system/gc", (rc) => {
    managementPut(rc);
    engine.forceGC();
    return emptyResponse(200);
  });
  // Nomad rebuilds every job summary from the allocations; standin's summaries are kept exact as allocations change, so there is nothing to rebuild.
  router.exact("/v1/system/reconcile/summaries", (rc) => {
    managementPut(rc);
    return emptyResponse(200);
  });
}

function managementPut(rc: RequestContext): void {
  only(rc, "PUT");
  if (!rc.acl.management) throw permissionDenied();
}
