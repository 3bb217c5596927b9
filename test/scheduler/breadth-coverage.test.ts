/**
 * Route coverage lists every route of the scheduler's variables, native
 * services, node pools, evaluation admin, job statuses, task logs and file
 * system, and client allocation actions as emulated (not yet hit at start),
 * none as unemulated — and a route once called moves to `hit`.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { expectEmulatedAndCounted, type Route } from "../support/coverage.js";

const ROUTES: Route[] = [
  { method: "GET", route: "/v1/allocation/:alloc_id/services" },
  { method: "*", route: "/v1/client/allocation/:alloc_id/restart" },
  { method: "PUT/POST", route: "/v1/client/allocation/:alloc_id/signal" },
  { method: "GET", route: "/v1/client/allocation/:alloc_id/stats" },
  { method: "GET", route: "/v1/client/fs/cat/:alloc_id" },
  { method: "GET", route: "/v1/client/fs/logs/:alloc_id" },
  { method: "GET", route: "/v1/client/fs/ls/:alloc_id" },
  { method: "GET", route: "/v1/client/fs/readat/:alloc_id" },
  { method: "GET", route: "/v1/client/fs/stat/:alloc_id" },
  { method: "GET", route: "/v1/client/fs/stream/:alloc_id" },
  { method: "GET", route: "/v1/evaluations/count" },
  { method: "GET", route: "/v1/job/:job_id+/services" },
  { method: "GET/POST", route: "/v1/jobs/statuses" },
  { method: "PUT/POST", route: "/v1/node/:node_id/evaluate" },
  { method: "DELETE", route: "/v1/node/pool/:pool_name" },
  { method: "GET", route: "/v1/node/pool/:pool_name" },
  { method: "PUT/POST", route: "/v1/node/pool/:pool_name" },
  { method: "GET", route: "/v1/node/pool/:pool_name/jobs" },
  { method: "GET", route: "/v1/node/pool/:pool_name/nodes" },
  { method: "GET", route: "/v1/node/pools" },
  { method: "PUT/POST", route: "/v1/node/pools" },
  { method: "GET", route: "/v1/service/:service_name" },
  { method: "DELETE", route: "/v1/service/:service_name/:service_id" },
  { method: "GET", route: "/v1/services" },
  { method: "HEAD/GET/PUT/POST/DELETE", route: "/v1/var/:path+" },
  { method: "GET", route: "/v1/vars" },
];

describe("route coverage of the scheduler beyond jobs", () => {
  it("lists every such route as emulated, and moves a called one to hit", async () => {
    const emu = await createStandin();
    await expectEmulatedAndCounted(emu, "scheduler", ROUTES, { method: "GET", route: "/v1/vars" }, () => Promise.resolve(emu.scheduler.request("/v1/vars")));
  });

  it("answers a native service's checks (/v1/client/allocation/:id/checks, not emulated) with the 501 naming the route, not a 404", async () => {
    const emu = await createStandin();
    const res = await emu.scheduler.request("/v1/client/allocation/abc/checks");
    expect([res.status, await res.text()]).toEqual([501, "standin does not emulate GET /v1/client/allocation/:alloc_id/checks (Nomad): see docs/known-differences.md"]);
  });
});
