/**
 * `GET /_standin/coverage`: which emulated routes the run has hit, which
 * routes standin does not emulate were asked for (each answered 501), and
 * which unknown paths came in, per service, with a summary.
 *
 * The tracker lives as long as the emulator: reset, snapshots and the state
 * hash leave it alone (it describes the run, not the state), and control
 * requests are not counted.
 */
import type { CoverageTracker } from "../../http/coverage.js";
import type { DocumentedRoutes } from "../../http/documented-routes.js";

/** Mounts `GET /coverage` on the control app. */
export function coverageRoutes(routes: DocumentedRoutes, tracker: CoverageTracker): void {
  routes.get(
    "/coverage",
    {
      summary: "per service: the emulated routes hit and not hit, the unemulated routes asked for (each answered 501) and unknown paths, with a summary",
      description: "Kept for the emulator's lifetime: reset leaves it. Control requests are not counted.",
      responses: { 200: "`{scheduler, registry, echo, summary}`" },
    },
    (c) => c.json(tracker.report()),
  );
}
