/** Status and regions: the leader, the peers, the federation's regions. */
import type { NomadRouter } from "../http/nomad-http.js";
import { only } from "./helpers.js";
import type { RouteKit } from "./kit.js";

export function registerStatusRoutes(router: NomadRouter, { peers }: RouteKit): void {
  router.exact("/v1/status/leader", (rc) => {
    only(rc, "GET");
    // The leader's RPC address; an empty string while none is known.
    return rc.leader.known ? "127.0.0.1:4647" : "";
  });
  router.exact("/v1/status/peers", (rc) => {
    only(rc, "GET");
    return ["127.0.0.1:4647"];
  });
  router.exact("/v1/regions", (rc) => {
    only(rc, "GET");
    return peers()
      .map((peer) => peer.region)
      .sort();
  });
}
