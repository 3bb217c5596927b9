/**
 * The control API, served under `/_standin` on every service port (one
 * shared state). JSON in, JSON out; errors are `{"error": "<message>"}`.
 * It reaches the emulator only through `ControlTarget`, and each service's
 * own control routes are mounted under `/_standin/<service>`.
 *
 * One file per resource under routes/; this mounts them in the order they
 * have always been mounted, which is also the order of the OpenAPI
 * document's paths (ready, clock, state, journals, recording, scenario,
 * coverage, the dashboard, the services', the index at /_standin itself, openapi.json).
 */
import { Hono } from "hono";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { controlErrorResponse } from "./error-response.js";
import { clockRoutes } from "./routes/clock.js";
import { controlIndexRoute } from "./routes/control-index.js";
import { coverageRoutes } from "./routes/coverage.js";
import { journalRoutes } from "./routes/journals.js";
import { openApiRoute } from "./routes/openapi.js";
import { readyRoute } from "./routes/ready.js";
import { recordingRoutes } from "./routes/recording.js";
import { scenarioRoutes } from "./routes/scenario.js";
import { stateRoutes } from "./routes/state.js";
import { CONTROL_PREFIX, type ControlOptions, type ControlTarget } from "./target.js";
import { requireControlToken } from "./token-check.js";

export { CONTROL_PREFIX, type ControlOptions, type ControlTarget, type MountedRoutes } from "./target.js";

export function createControlApp(target: ControlTarget, options: ControlOptions = {}): Hono {
  const app = new Hono().basePath(CONTROL_PREFIX);
  app.onError((error, c) => controlErrorResponse(c, error));
  app.notFound((c) => c.json({ error: `no control route ${c.req.method} ${c.req.path}` }, 404));
  if (options.token !== undefined) requireControlToken(app, options.token, target, options.ui?.publicPaths ?? []);

  // Every route is declared with its documentation; the helper validates bodies and queries with the schemas it documents.
  const routes = new DocumentedRoutes("state", app);
  readyRoute(routes, target);
  clockRoutes(routes, target);
  stateRoutes(routes, target);
  journalRoutes(routes, target);
  recordingRoutes(routes, target);
  scenarioRoutes(routes, target);
  if (options.coverage) coverageRoutes(routes.withTag("coverage"), options.coverage);
  options.ui?.mount(routes);
  for (const service of options.services ?? []) routes.route(`/${service.name}`, service.app);
  controlIndexRoute(routes);
  openApiRoute(routes);
  return app;
}
