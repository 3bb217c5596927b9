/**
 * `GET /_standin/ready`: whether the emulator is ready (fixtures loaded),
 * with its seed, clock, index and state hash. The control token check
 * (../token-check.ts) answers it without the token.
 */
import type { DocumentedRoutes } from "../../http/documented-routes.js";
import type { ControlTarget } from "../target.js";

export function readyRoute(routes: DocumentedRoutes, target: ControlTarget): void {
  routes.get(
    "/ready",
    {
      summary: "whether the emulator is ready (fixtures loaded); public even with a control token, then `{ready}` alone without it",
      responses: {
        200: "`{ready: true, seed, now, index, stateHash}` (without the control token when one is set: `{ready: true}`)",
        503: "`{ready: false}`: loading or shutting down",
      },
    },
    (c) => {
      if (!target.isReady) return c.json({ ready: false }, 503);
      return c.json({ ready: true, seed: target.seed, now: target.clock.nowText(), index: target.index, stateHash: target.stateHash() });
    },
  );
}
