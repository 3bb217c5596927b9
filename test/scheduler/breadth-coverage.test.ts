/**
 * Route coverage lists every route of the scheduler's variables, native
 * services, node pools, evaluation admin, job statuses, task logs and file
 * system, client allocation actions, native service checks and the operator's
 * scheduler configuration as emulated (not yet hit at start),
 * none as unemulated — and a route once called moves to `hit`.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { expectEmulatedAndCounted, type Route } from "../support/coverage.js";

const ROUTES: Route[] = [
  { method: "*", route: "/v1/allocation/:alloc_id/checks" },
  { method: "GET", route: "/v1/allocation/:alloc_id/services" },
  { method: "*", route: "/v1/client/allocation/:alloc_id/checks" },
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
  { method: "GET", route: "/v1/operator/scheduler/configuration" },
  { method: "PUT/POST", route: "/v1/operator/scheduler/configuration" },
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

  it("answers a native service's checks of an unknown allocation as Nomad's client does (404 naming it), no longer the 501", async () => {
    const emu = await createStandin();
    for (const path of ["/v1/client/allocation/abc/checks", "/v1/allocation/abc/checks"]) {
      const res = await emu.scheduler.request(path);
      expect([res.status, await res.text()]).toEqual([404, 'Unknown allocation "abc"']);
    }
  });
});
