/**
 * Unemulated routes (501 naming the route, in each product's style), unknown
 * paths (the products' own 404s, unchanged), and GET /_standin/coverage.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { ECHO_ROUTES, unemulatedEchoResponse } from "../../src/echo/route-catalog.js";
import { OPERATIONS } from "../../src/echo/schemes.js";
import { CoverageTracker, matcherFor, rawPathOf, RouteMatcher, UNKNOWN_PATHS_CAP, type CoverageReport, type RouteCatalog, type RouteEntry } from "../../src/http/coverage.js";
import type { ServiceName } from "../../src/http/service-names.js";
import { REGISTRY_ROUTES } from "../../src/registry/route-catalog.js";
import { SCHEDULER_ROUTES } from "../../src/scheduler/route-catalog.js";
import { call as callApp, type Answer } from "../support/call.js";

const TEXT_PLAIN = "text/plain; charset=utf-8";
const POINTER = "see docs/known-differences.md";

function call(emu: Standin, service: ServiceName, method: string, path: string, body?: unknown): Promise<Answer> {
  return callApp(emu.app(service), method, path, body);
}

async function coverage(emu: Standin): Promise<CoverageReport> {
  const res = await emu.scheduler.request("/_standin/coverage");
  expect(res.status).toBe(200);
  return (await res.json()) as CoverageReport;
}

const JOB = { Job: { ID: "web", Datacenters: ["dc1"], TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx" } }] }] } };

describe("unemulated routes answer 501 naming the route", () => {
  it("scheduler: Nomad's plain text, the route's template and the request's method", async () => {
    const emu = await createStandin();
    const roles = await call(emu, "scheduler", "GET", "/v1/acl/roles");
    expect(roles).toMatchObject({ status: 501, text: `standin does not emulate GET /v1/acl/roles (Nomad): ${POINTER}` });
    expect(roles.headers.get("content-type")).toBe(TEXT_PLAIN);
    expect((await call(emu, "scheduler", "GET", "/v1/client/allocation/abc/snapshot")).text).toBe(
      `standin does not emulate GET /v1/client/allocation/:alloc_id/snapshot (Nomad): ${POINTER}`,
    );
    // Job IDs may hold slashes (Nomad matches the suffix).
    expect((await call(emu, "scheduler", "GET", "/v1/job/web/periodic-1/submission")).text).toBe(`standin does not emulate GET /v1/job/:job_id+/submission (Nomad): ${POINTER}`);
    expect((await call(emu, "scheduler", "GET", "/v1/client/stats")).text).toBe(`standin does not emulate GET /v1/client/stats (Nomad): ${POINTER}`);
    // A method the product has no operation for, on a path standin does not emulate at all: still named.
    expect((await call(emu, "scheduler", "DELETE", "/v1/acl/roles")).text).toBe(`standin does not emulate DELETE /v1/acl/roles (Nomad): ${POINTER}`);
  });

  it("scheduler: routes Nomad handles apart win over the prefix handlers standin has (node pools, one-time tokens, job actions)", async () => {
    const emu = await createStandin();
    // Node pools have their own handlers, not the node prefix's.
    expect((await call(emu, "scheduler", "GET", "/v1/node/pools")).status).toBe(200);
    expect((await call(emu, "scheduler", "GET", "/v1/node/pool/default/nodes")).body).toHaveLength(1);
    expect((await call(emu, "scheduler", "PUT", "/v1/acl/token/onetime", {})).text).toContain("PUT /v1/acl/token/onetime (Nomad)");
    expect((await call(emu, "scheduler", "GET", "/v1/job/web/actions")).text).toContain("GET /v1/job/:job_id+/actions (Nomad)");
    expect(await call(emu, "scheduler", "GET", "/v1/allocation/0b1c/services")).toMatchObject({ status: 404, text: "allocation not found" });
    // The emulated neighbours still answer.
    expect(await call(emu, "scheduler", "GET", "/v1/node/nope")).toMatchObject({ status: 404, text: "node not found" });
    expect((await call(emu, "scheduler", "GET", "/v1/acl/token/self")).status).toBe(400); // ACLs off: "ACL support disabled"
  });

  it("scheduler: notes replace the pointer; Nomad CE's Enterprise stubs keep Nomad's own answer", async () => {
    const emu = await createStandin();
    expect((await call(emu, "scheduler", "PUT", "/v1/deployment/unblock/d1", {})).text).toBe(
      "standin does not emulate PUT /v1/deployment/unblock/:deployment_id (Nomad): multiregion deployments are not emulated",
    );
    for (const path of ["/v1/quotas", "/v1/quota/q1", "/v1/sentinel/policy/p", "/v1/recommendations/apply"]) {
      expect(await call(emu, "scheduler", "GET", path)).toMatchObject({ status: 501, text: "Nomad Enterprise only endpoint" });
    }
  });

  it("scheduler: the router's own 501s (node sub-paths it does not know) read the same way", async () => {
    const emu = await createStandin();
    expect(await call(emu, "scheduler", "GET", "/v1/node/abc/frobnicate")).toMatchObject({
      status: 501,
      text: `standin does not emulate /v1/node/:id/frobnicate (Nomad): ${POINTER}`,
    });
  });

  it("registry: Consul's plain text, with the headers every Consul answer carries", async () => {
    const emu = await createStandin();
    const self = await call(emu, "registry", "GET", "/v1/agent/host");
    expect(self).toMatchObject({ status: 501, text: `standin does not emulate GET /v1/agent/host (Consul): ${POINTER}` });
    expect(self.headers.get("content-type")).toBe(TEXT_PLAIN);
    expect(self.headers.get("x-consul-default-acl-policy")).toBe("allow");
    expect(self.headers.get("vary")).toBe("Accept-Encoding");
    expect((await call(emu, "registry", "GET", "/v1/health/connect/web")).text).toBe(`standin does not emulate GET /v1/health/connect/:service* (Consul): ${POINTER}`);
    expect((await call(emu, "registry", "GET", "/v1/catalog/gateway-services/gw")).text).toContain("GET /v1/catalog/gateway-services/:gateway* (Consul)");
    // Transactions are emulated now (registry/txn.ts): an empty one is answered, not refused.
    expect((await call(emu, "registry", "PUT", "/v1/txn", [])).status).toBe(200);
    expect((await call(emu, "registry", "GET", "/v1/query/abc/execute")).text).toContain("GET /v1/query/:query_id* (Consul): prepared queries are not emulated");
    expect((await call(emu, "registry", "GET", "/v1/acl/token/self")).text).toContain("GET /v1/acl/token/self (Consul)");
  });

  it("echo: the proxy's error format with google.rpc code 12 (UNIMPLEMENTED), for a route a catalog would list", () => {
    const entry: RouteEntry = { methods: ["GET"], path: "/healthz", emulated: false };
    const url = new URL("http://localhost:8080/healthz");
    const esp = unemulatedEchoResponse("esp", "GET", entry, url);
    expect(esp.status).toBe(501);
    expect(esp.headers.get("content-type")).toBe("application/json");
    return Promise.all([
      esp.text().then((text) =>
        expect(JSON.parse(text)).toEqual({
          code: 12,
          message: "standin does not emulate GET /healthz (echo sample behind ESP): see docs/known-differences.md",
          details: [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", stackEntries: [], detail: "service_control" }],
        }),
      ),
      unemulatedEchoResponse("espv2", "GET", entry, url)
        .text()
        .then((text) => expect(JSON.parse(text)).toEqual({ code: 501, message: "standin does not emulate GET /healthz (echo sample behind ESP): see docs/known-differences.md" })),
    ]);
  });
});

describe("paths in no catalog keep the products' 404s", () => {
  it.each([
    ["GET", "/v1/nope", 404, ""],
    ["GET", "/v1/jobsX", 404, ""],
    ["GET", "/nope", 404, ""],
    // Nomad's job handler takes the rest of the path as the ID.
    ["GET", "/v1/job/nope/else", 404, "job not found"],
  ])("scheduler %s %s → %i", async (method, path, status, text) => {
    const emu = await createStandin();
    const res = await call(emu, "scheduler", method, path);
    expect(res).toMatchObject({ status, text });
    expect(res.headers.get("content-type")).toBe(text === "" ? null : TEXT_PLAIN);
  });

  it.each([
    ["GET", "/v1/nope", "Invalid URL path: not a recognized HTTP API endpoint\n"],
    ["PUT", "/v1/session/frobnicate", "Invalid URL path: not a recognized HTTP API endpoint\n"],
    ["GET", "/nope", "Invalid URL path: if attempting to use the HTTP API, ensure the path starts with '/v1/'\n"],
  ])("registry %s %s → 404", async (method, path, text) => {
    const emu = await createStandin();
    expect(await call(emu, "registry", method, path)).toMatchObject({ status: 404, text });
  });

  it("echo: ESP's 404, and ESPv2's", async () => {
    const esp = await createStandin();
    const got = await call(esp, "echo", "GET", "/auth/info/googlejwt");
    expect(got.status).toBe(404);
    expect(JSON.parse(got.text)).toMatchObject({ code: 5, message: "Method does not exist." });
    const v2 = await createStandin({ fixture: { echo: { proxy: "espv2" } } });
    expect(JSON.parse((await call(v2, "echo", "GET", "/nope")).text)).toEqual({ code: 404, message: "The current request is not defined by this API." });
  });
});

describe("GET /_standin/coverage", () => {
  it("starts with every emulated route not hit", async () => {
    const emu = await createStandin();
    const report = await coverage(emu);
    for (const name of ["scheduler", "registry", "echo"] as const) {
      const emulatedEntries = catalogOf(name).routes.filter((r) => r.emulated);
      expect(report[name].hit).toEqual([]);
      expect(report[name].notHit).toHaveLength(emulatedEntries.length);
      expect(report[name].unemulated).toEqual([]);
      expect(report[name].unknown).toEqual([]);
      expect(report.summary[name]).toEqual({ emulated: emulatedEntries.length, hit: 0, percentHit: 0, requests: 0, unemulatedRequests: 0, unknownRequests: 0 });
    }
    expect(report.echo.notHit).toEqual([
      { method: "GET", route: "/auth/info/identityplatform" },
      { method: "GET", route: "/auth/info/provideridtoken" },
      { method: "GET", route: "/auth/info/providerjwt" },
      { method: "POST", route: "/echo" },
    ]);
  });

  it("each catalog is compiled once per process, yet every emulator counts only its own requests", async () => {
    // Building an emulator compiled every catalog anew (half its cost); the compiled matcher is shared now,
    // and what it shares must not carry one run's coverage into another's.
    for (const catalog of [SCHEDULER_ROUTES, REGISTRY_ROUTES, ECHO_ROUTES]) expect(matcherFor(catalog)).toBe(matcherFor(catalog));
    const first = await createStandin();
    const second = await createStandin();
    await call(first, "scheduler", "GET", "/v1/jobs");
    await call(first, "scheduler", "GET", "/v1/no-such-path");
    await call(second, "registry", "GET", "/v1/catalog/services");
    const [a, b] = [await coverage(first), await coverage(second)];
    expect([a.summary.scheduler.requests, a.summary.scheduler.unknownRequests, a.summary.registry.requests]).toEqual([2, 1, 0]);
    expect([b.summary.scheduler.requests, b.summary.scheduler.unknownRequests, b.summary.registry.requests]).toEqual([0, 0, 1]);
    expect(b.scheduler.hit).toEqual([]);
  });

  it("counts hits per emulated route, unemulated routes asked for and unknown paths; control requests are not counted", async () => {
    const emu = await createStandin();
    await call(emu, "scheduler", "GET", "/v1/jobs");
    await call(emu, "scheduler", "GET", "/v1/jobs?prefix=w");
    await call(emu, "scheduler", "PUT", "/v1/jobs", JOB);
    await call(emu, "scheduler", "POST", "/v1/job/web", JOB);
    await call(emu, "scheduler", "GET", "/v1/job/web%2Fperiodic-1/summary");
    await call(emu, "scheduler", "GET", "/v1/acl/roles");
    await call(emu, "scheduler", "DELETE", "/v1/acl/roles");
    await call(emu, "scheduler", "GET", "/v1/acl/roles");
    await call(emu, "scheduler", "GET", "/v1/nope?x=1");
    await call(emu, "scheduler", "HEAD", "/v1/jobs"); // no such operation on an emulated path: unknown
    await call(emu, "registry", "GET", "/v1/status/leader");
    await call(emu, "registry", "GET", "/v1/kv/a/b/c");
    await call(emu, "registry", "GET", "/v1/agent/host");
    await call(emu, "echo", "POST", "/echo?key=test-api-key", { message: "hi" });
    await emu.registry.request("/_standin/ready");
    await emu.echo.request("/_standin/clock");
    await coverage(emu);

    const report = await coverage(emu);
    expect(report.scheduler.hit).toEqual([
      { method: "PUT/POST", route: "/v1/job/:job_id+", count: 1 },
      { method: "GET", route: "/v1/job/:job_id+/summary", count: 1 },
      { method: "GET", route: "/v1/jobs", count: 2 },
      { method: "PUT/POST", route: "/v1/jobs", count: 1 },
    ]);
    expect(report.scheduler.notHit).toContainEqual({ method: "GET", route: "/v1/agent/self" });
    expect(report.scheduler.notHit).not.toContainEqual(expect.objectContaining({ route: "/v1/jobs", method: "GET" }));
    expect(report.scheduler.unemulated).toEqual([
      { method: "DELETE", route: "/v1/acl/roles", count: 1 },
      { method: "GET", route: "/v1/acl/roles", count: 2 },
    ]);
    expect(report.scheduler.unknown).toEqual([
      { method: "HEAD", path: "/v1/jobs", count: 1 },
      { method: "GET", path: "/v1/nope", count: 1 },
    ]);
    expect(report.registry.hit).toEqual([
      { method: "GET", route: "/v1/kv/:key*", count: 1 },
      { method: "GET", route: "/v1/status/leader", count: 1 },
    ]);
    expect(report.registry.unemulated).toEqual([{ method: "GET", route: "/v1/agent/host", count: 1 }]);
    expect(report.echo.hit).toEqual([{ method: "POST", route: "/echo", count: 1 }]);

    const emulatedCount = SCHEDULER_ROUTES.routes.filter((r) => r.emulated).length;
    expect(report.summary.scheduler).toEqual({
      emulated: emulatedCount,
      hit: 4,
      percentHit: Math.round((4 / emulatedCount) * 1000) / 10,
      requests: 10,
      unemulatedRequests: 3,
      unknownRequests: 2,
    });
    expect(report.summary.total.requests).toBe(14);
    expect(report.summary.total.hit).toBe(7);
    expect(Object.keys(report)).toEqual(["scheduler", "registry", "echo", "summary"]);
  });

  it("describes the run: reset leaves it, and it is not part of the state or its hash", async () => {
    const emu = await createStandin();
    const hash = emu.stateHash();
    await call(emu, "scheduler", "GET", "/v1/acl/roles");
    await call(emu, "registry", "GET", "/v1/status/leader");
    expect(emu.stateHash()).toBe(hash);
    expect(JSON.stringify(emu.snapshot())).not.toContain("/v1/acl/roles");
    const before = await coverage(emu);
    expect((await emu.scheduler.request("/_standin/reset", { method: "POST" })).status).toBe(200);
    expect(await coverage(emu)).toEqual(before);
    await emu.reset({ registry: { datacenter: "dc2" } });
    expect((await coverage(emu)).registry.hit).toEqual([{ method: "GET", route: "/v1/status/leader", count: 1 }]);
    // Each emulator has its own.
    expect((await coverage(await createStandin())).summary.total.requests).toBe(0);
  });

  it("keeps the first distinct unknown paths and counts the rest", async () => {
    const emu = await createStandin();
    for (let i = 0; i < UNKNOWN_PATHS_CAP + 5; i++) await call(emu, "registry", "GET", `/v1/nope/${String(i).padStart(3, "0")}`);
    await call(emu, "registry", "GET", "/v1/nope/000");
    const report = await coverage(emu);
    expect(report.registry.unknown).toHaveLength(UNKNOWN_PATHS_CAP);
    expect(report.registry.unknown[0]).toEqual({ method: "GET", path: "/v1/nope/000", count: 2 });
    expect(report.registry.unknownDropped).toBe(5);
    expect(report.summary.registry.unknownRequests).toBe(UNKNOWN_PATHS_CAP + 6);
  });

  it("needs the control token like every control route", async () => {
    const emu = await createStandin({ controlToken: "s3cret" });
    expect((await emu.scheduler.request("/_standin/coverage")).status).toBe(401);
    expect((await emu.scheduler.request("/_standin/coverage", { headers: { Authorization: "Bearer s3cret" } })).status).toBe(200);
  });
});

describe("the catalogs match the services", () => {
  it("every catalogued emulated route reaches its service's handler (not a 501, not the unknown-path 404)", async () => {
    const emu = await createStandin();
    for (const name of ["scheduler", "registry", "echo"] as const) {
      for (const entry of catalogOf(name).routes.filter((r) => r.emulated)) {
        for (const method of entry.methods) {
          const verb = method === "*" ? "GET" : method;
          const path = probePath(entry.path);
          const res = await emu.app(name).request(path, { method: verb, body: verb === "GET" || verb === "HEAD" || verb === "DELETE" ? undefined : "{}" });
          const text = res.body && path === "/v1/event/stream" ? (await res.body.cancel(), "") : await res.text();
          const where = `${name} ${verb} ${path} → ${res.status} ${text.slice(0, 80)}`;
          expect(res.status, where).not.toBe(501);
          if (name === "scheduler") expect(res.status === 404 && text === "", where).toBe(false);
          if (name === "registry") expect(text.startsWith("Invalid URL path"), where).toBe(false);
          if (name === "echo") expect(res.status, where).not.toBe(404);
        }
      }
    }
    // And the tracker classified every probe as the entry it came from.
    const report = await coverage(emu);
    expect(report.scheduler.notHit).toEqual([]);
    expect(report.registry.notHit).toEqual([]);
    expect(report.echo.notHit).toEqual([]);
    expect(report.summary.total.unknownRequests).toBe(0);
    expect(report.summary.total.percentHit).toBe(100);
  });

  it("every route the scheduler registers is catalogued as emulated", () => {
    const sources = sourcesOf("src/scheduler");
    const patterns = [...sources.matchAll(/router\.(exact|prefix)\(\s*"([^"]+)"/g)].map((m) => ({ kind: m[1]!, pattern: m[2]! }));
    patterns.push(...[...sources.matchAll(/app\.all\(\s*"(\/[^"]+)"/g)].map((m) => ({ kind: "exact", pattern: m[1]! })));
    expect(patterns.length).toBeGreaterThan(20);
    const routes = SCHEDULER_ROUTES.routes;
    for (const { kind, pattern } of patterns) {
      const covered =
        kind === "exact" ? routes.some((r) => r.emulated && r.path === pattern) : routes.some((r) => r.emulated && r.path.startsWith(pattern) && r.path.length > pattern.length);
      expect(covered, `${kind} ${pattern} is not an emulated route in src/scheduler/catalog.ts`).toBe(true);
    }
  });

  it("every route the registry registers is catalogued as emulated, with its methods", () => {
    const sources = sourcesOf("src/registry");
    const registrations = [...sources.matchAll(/router\.register\(\s*"([^"]+)",\s*\[([^\]]*)\]/g)].map((m) => ({
      pattern: m[1]!,
      methods: [...m[2]!.matchAll(/"([A-Z]+)"/g)].map((x) => x[1]!),
    }));
    expect(registrations.length).toBeGreaterThan(10);
    for (const { pattern, methods } of registrations) {
      const template = (path: string) => (pattern.endsWith("/") ? new RegExp(`^${pattern}:[a-z_]+\\*$`).test(path) : path === pattern);
      for (const method of methods) {
        const covered = REGISTRY_ROUTES.routes.some((r) => r.emulated && template(r.path) && r.methods.includes(method));
        expect(covered, `${method} ${pattern} is not an emulated route in src/registry/route-catalog.ts`).toBe(true);
      }
    }
  });

  it("the echo catalog is the specification's operations", () => {
    expect(ECHO_ROUTES.routes.map((r) => `${r.methods.join()} ${r.path} ${r.emulated}`).sort()).toEqual(
      Object.entries(OPERATIONS)
        .map(([path, op]) => `${op.method} ${path} true`)
        .sort(),
    );
  });

  it("catalogs list each (method, route) once", () => {
    for (const catalog of [SCHEDULER_ROUTES, REGISTRY_ROUTES, ECHO_ROUTES]) {
      const seen = new Set<string>();
      for (const r of catalog.routes) {
        for (const m of r.methods) {
          const key = `${m} ${r.path}`;
          expect(seen.has(key), `${catalog.product}: ${key} twice`).toBe(false);
          seen.add(key);
        }
      }
    }
  });
});

describe("route matching", () => {
  const catalog: RouteCatalog = {
    product: "Test",
    decodePath: true,
    routes: [
      { methods: ["GET"], path: "/v1/acl/token/:id", emulated: true },
      { methods: ["GET"], path: "/v1/acl/token/self", emulated: false },
      { methods: ["GET"], path: "/v1/node/:id", emulated: true },
      { methods: ["GET"], path: "/v1/node/pool/:name", emulated: false },
      { methods: ["GET"], path: "/v1/node/:id/allocations", emulated: true },
      { methods: ["GET"], path: "/v1/job/:id+", emulated: true },
      { methods: ["GET"], path: "/v1/job/:id+/summary", emulated: true },
      { methods: ["GET", "PUT"], path: "/v1/kv/:key*", emulated: true },
      { methods: ["*"], path: "/", emulated: true },
    ],
  };
  const matcher = new RouteMatcher(catalog);
  const route = (method: string, path: string) => {
    const m = matcher.match(method, path);
    return m.kind === "unknown" ? "unknown" : `${m.kind} ${m.entry.path}`;
  };

  it("prefers the longest literal prefix (Go's ServeMux), then the most literal characters", () => {
    expect(route("GET", "/v1/acl/token/self")).toBe("unemulated /v1/acl/token/self");
    expect(route("GET", "/v1/acl/token/abc")).toBe("emulated /v1/acl/token/:id");
    // "/v1/node/pool/" is the longer pattern, whatever the suffix looks like.
    expect(route("GET", "/v1/node/pool/allocations")).toBe("unemulated /v1/node/pool/:name");
    expect(route("GET", "/v1/node/n1/allocations")).toBe("emulated /v1/node/:id/allocations");
    expect(route("GET", "/v1/job/a/b/summary")).toBe("emulated /v1/job/:id+/summary");
    expect(route("GET", "/v1/job/a/b")).toBe("emulated /v1/job/:id+");
    expect(route("GET", "/v1/job/")).toBe("unknown");
  });

  it("`:name*` takes the rest of the path, even nothing; `:name` one segment", () => {
    expect(route("PUT", "/v1/kv/")).toBe("emulated /v1/kv/:key*");
    expect(route("GET", "/v1/kv/a/b/")).toBe("emulated /v1/kv/:key*");
    expect(route("GET", "/v1/node/a/b")).toBe("unknown");
    expect(route("DELETE", "/anything")).toBe("unknown");
    expect(route("DELETE", "/")).toBe("emulated /");
  });

  it("an emulated path with a method the product has no operation for is unknown (the service answers)", () => {
    expect(route("DELETE", "/v1/kv/a")).toBe("unknown");
    expect(route("DELETE", "/v1/acl/token/self")).toBe("unemulated /v1/acl/token/self");
  });

  it("matches the decoded path for the Go products and the raw path for the proxy", () => {
    expect(matcher.pathOf("http://localhost/v1/job/a%2Fb/summary?x=%2F")).toBe("/v1/job/a/b/summary");
    expect(matcher.pathOf("http://localhost/v1/job/%zz")).toBe("/v1/job/%zz");
    expect(new RouteMatcher(ECHO_ROUTES).pathOf("http://localhost/echo%2F?key=k")).toBe("/echo%2F");
    expect(rawPathOf("http://h:1")).toBe("/");
    expect(rawPathOf("http://h/a/b#frag")).toBe("/a/b");
  });

  it("a tracker counts into the service it is told", () => {
    const tracker = new CoverageTracker({ scheduler: catalog, registry: REGISTRY_ROUTES, echo: ECHO_ROUTES });
    tracker.record("scheduler", "GET", "http://localhost/v1/acl/token/self");
    tracker.record("scheduler", "GET", "http://localhost/v1/acl/token/x");
    const report = tracker.report();
    expect(report.scheduler.hit).toEqual([{ method: "GET", route: "/v1/acl/token/:id", count: 1 }]);
    expect(report.scheduler.unemulated).toEqual([{ method: "GET", route: "/v1/acl/token/self", count: 1 }]);
    expect(report.summary.registry.requests).toBe(0);
  });
});

function catalogOf(name: ServiceName): RouteCatalog {
  return name === "scheduler" ? SCHEDULER_ROUTES : name === "registry" ? REGISTRY_ROUTES : ECHO_ROUTES;
}

/** A concrete path for a template: every parameter becomes `probe`. */
function probePath(template: string): string {
  return template.replace(/:[A-Za-z_][A-Za-z0-9_-]*[+*]?/g, "probe");
}

/** Every .ts file under `dir`, its subfolders included (the scheduler's routes live in src/scheduler/routes/). */
function sourcesOf(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(dir, f), "utf8"))
    .join("\n");
}
