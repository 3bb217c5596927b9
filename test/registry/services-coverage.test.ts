/**
 * Route coverage lists every route of the registry's services, health,
 * transaction and event surface as emulated (hit or not yet hit), none as
 * unemulated — and a route once called moves to `hit`.
 */
import { describe, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { expectEmulatedAndCounted, type Route } from "../support/coverage.js";

const ROUTES: Route[] = [
  { method: "PUT", route: "/v1/agent/service/register" },
  { method: "PUT", route: "/v1/agent/service/deregister/:service_id*" },
  { method: "PUT", route: "/v1/agent/service/maintenance/:service_id*" },
  { method: "PUT", route: "/v1/agent/maintenance" },
  { method: "GET", route: "/v1/agent/services" },
  { method: "GET", route: "/v1/agent/service/:service_id*" },
  { method: "GET", route: "/v1/agent/health/service/id/:service_id*" },
  { method: "GET", route: "/v1/agent/health/service/name/:service_name*" },
  { method: "PUT", route: "/v1/agent/check/register" },
  { method: "PUT", route: "/v1/agent/check/deregister/:check_id*" },
  { method: "PUT", route: "/v1/agent/check/pass/:check_id*" },
  { method: "PUT", route: "/v1/agent/check/warn/:check_id*" },
  { method: "PUT", route: "/v1/agent/check/fail/:check_id*" },
  { method: "PUT", route: "/v1/agent/check/update/:check_id*" },
  { method: "GET", route: "/v1/agent/checks" },
  { method: "GET", route: "/v1/agent/self" },
  { method: "GET", route: "/v1/agent/members" },
  { method: "GET", route: "/v1/catalog/services" },
  { method: "GET", route: "/v1/catalog/service/:service*" },
  { method: "GET", route: "/v1/catalog/node/:node*" },
  { method: "GET", route: "/v1/catalog/node-services/:node*" },
  { method: "PUT", route: "/v1/catalog/register" },
  { method: "PUT", route: "/v1/catalog/deregister" },
  { method: "GET", route: "/v1/catalog/datacenters" },
  { method: "GET", route: "/v1/health/service/:service*" },
  { method: "GET", route: "/v1/health/checks/:service*" },
  { method: "GET", route: "/v1/health/state/:state*" },
  { method: "GET", route: "/v1/health/node/:node*" },
  { method: "PUT", route: "/v1/txn" },
  { method: "PUT", route: "/v1/event/fire/:name*" },
  { method: "GET", route: "/v1/event/list" },
  { method: "GET", route: "/v1/status/leader" },
  { method: "GET", route: "/v1/status/peers" },
];

describe("route coverage of the registry's services, health, transactions and events", () => {
  it("lists every such route as emulated, and moves a called one to hit", async () => {
    const emu = await createStandin();
    await expectEmulatedAndCounted(emu, "registry", ROUTES, { method: "GET", route: "/v1/health/service/:service*" }, () =>
      Promise.resolve(emu.registry.request("/v1/health/service/web")),
    );
  });
});
