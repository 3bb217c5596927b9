/**
 * Security: loopback by default; with a control token every control route
 * (enumerated from the OpenAPI document, so a new route is covered without
 * touching this file) answers 401 without it on every port while the services
 * stay open; scheduler and registry ACLs never show a token what it may not
 * read, endpoint by endpoint; and secrets never reach the logs.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { CLI_TEST_TIMEOUT_MS, startCli, type StartedCli } from "../support/cli.js";

type Json = Record<string, any>;

const children: ChildProcess[] = [];
let running: RunningStandin | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await running?.close();
  running = undefined;
});

const start = (args: string[] = []): Promise<StartedCli> => startCli(args, children);

/** Local addresses (hex, as /proc/net/tcp{,6} print them) of the sockets listening on `port`; undefined off Linux. */
function listeningAddresses(port: number): string[] | undefined {
  if (!existsSync("/proc/net/tcp")) return undefined;
  const addresses: string[] = [];
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, "utf8").split("\n").slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== "0A") continue; // 0A = LISTEN
      const [address, hexPort] = local.split(":");
      if (parseInt(hexPort!, 16) === port) addresses.push(address!);
    }
  }
  return addresses;
}

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 2_000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
    socket.once("timeout", () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const externalAddresses = () =>
  Object.values(networkInterfaces())
    .flat()
    .filter((i) => i && i.family === "IPv4" && !i.internal)
    .map((i) => i!.address);

describe("default bind address", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("the CLI without --host prints and listens on 127.0.0.1 only", async () => {
    const s = await start([]);
    for (const service of ["scheduler", "registry", "echo", "control"]) expect(s.urls[service]).toMatch(/^http:\/\/127\.0\.0\.1:\d+/);
    const ports = ["scheduler", "registry", "echo"].map((service) => Number(new URL(s.urls[service]!).port));
    for (const port of ports) {
      expect(await accepts("127.0.0.1", port)).toBe(true);
      const listening = listeningAddresses(port);
      if (listening) expect(listening).toEqual(["0100007F"]); // 127.0.0.1, nothing on 0.0.0.0 or ::
      for (const address of externalAddresses()) expect(await accepts(address, port), `${address}:${port}`).toBe(false);
    }
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  });

  it("startStandin without host listens on 127.0.0.1 only", async () => {
    running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
    for (const port of Object.values(running.ports)) {
      const listening = listeningAddresses(port);
      if (listening) expect(listening).toEqual(["0100007F"]);
      for (const address of externalAddresses()) expect(await accepts(address, port)).toBe(false);
    }
    expect(running.urls.control).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/_standin$/);
  });
});

describe("control token", () => {
  const TOKEN = "ctl-7f3a9c2e-secret";
  /** Sample values for path parameters. */
  const PARAMS: Record<string, string> = { id: "no-such-id", scheme: "provider_jwt" };
  /** The dashboard's page, script and style sheet: public, like the readiness probe (src/ui/routes.ts). */
  const DASHBOARD_FILES = ["/_standin/ui", "/_standin/ui/app.js", "/_standin/ui/app.css"];

  it("every control route in the OpenAPI document answers 401 without the token, on every port, and works with it; the services stay open", async () => {
    running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, controlToken: TOKEN });
    const srv = running;
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const document = (await (await fetch(`${srv.urls.control}/openapi.json`, { headers: auth })).json()) as Json;
    const operations = Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => ["get", "put", "post", "delete", "patch"].includes(m))
        .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name] ?? "x") })),
    );
    // The document lists every route the control app serves (test/control/openapi.test.ts): these must be among them.
    expect(operations.length).toBeGreaterThanOrEqual(30);
    for (const must of ["GET /_standin/ready", "POST /_standin/reset", "PUT /_standin/snapshot", "POST /_standin/echo/tokens", "GET /_standin/openapi.json"]) {
      expect(operations.map((o) => `${o.method} ${o.path.replace(/no-such-id|provider_jwt/, "…")}`).some((o) => o.startsWith(must))).toBe(true);
    }

    const hash = async () => ((await (await fetch(`${srv.urls.control}/state/hash`, { headers: auth })).json()) as Json).hash as string;
    const before = await hash();
    const refused: Array<Record<string, string>> = [
      {},
      { Authorization: `Bearer ${TOKEN}x` },
      { Authorization: `Bearer ${TOKEN.slice(0, -1)}` },
      { Authorization: TOKEN },
      { Authorization: `Basic ${Buffer.from(`user:${TOKEN}`).toString("base64")}` },
      { "X-Nomad-Token": TOKEN, "X-Consul-Token": TOKEN },
    ];
    for (const base of Object.values(srv.urls).slice(0, 3)) {
      for (const op of [...operations, { method: "GET", path: "/_standin/no-such-route" }]) {
        for (const headers of refused) {
          const res = await fetch(`${base}${op.path}`, {
            method: op.method,
            headers: { ...headers, "Content-Type": "application/json" },
            body: op.method === "GET" ? undefined : "{}",
          });
          const text = await res.text();
          if (op.method === "GET" && op.path === "/_standin/ready") {
            // The public readiness probe: it answers, and says nothing but that.
            expect(res.status).toBe(200);
            expect(text).toBe('{"ready":true}');
            continue;
          }
          if (op.method === "GET" && DASHBOARD_FILES.includes(op.path)) {
            // The dashboard's page and files: public, and nothing of the state in them (the page asks for the token).
            expect(res.status).toBe(200);
            expect(text).not.toContain(TOKEN);
            expect(text).not.toMatch(/"stateHash"|"index":\d/);
            continue;
          }
          expect(res.status, `${op.method} ${base}${op.path} with ${JSON.stringify(headers)}`).toBe(401);
          expect(res.headers.get("WWW-Authenticate")).toBe("Bearer");
          expect(text).not.toContain(TOKEN);
        }
      }
    }
    // Nothing the refused requests asked for happened.
    expect(await hash()).toBe(before);

    for (const op of operations) {
      const res = await fetch(`${srv.urls.registry}${op.path}`, { method: op.method, headers: auth });
      // The dashboard's change stream never ends: its first event is enough.
      if (op.path === "/_standin/ui/api/stream")
        await res
          .body!.getReader()
          .read()
          .then(() => res.body!.cancel().catch(() => undefined));
      else await res.arrayBuffer();
      expect(res.status, `${op.method} ${op.path} with the token`).not.toBe(401);
      expect(res.status, `${op.method} ${op.path} with the token`).toBeLessThan(500);
    }

    // The services themselves need no control token.
    expect((await fetch(`${srv.urls.scheduler}/v1/agent/health`)).status).toBe(200);
    expect((await fetch(`${srv.urls.registry}/v1/status/leader`)).status).toBe(200);
    const echo = await fetch(`${srv.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"hi"}' });
    expect(await echo.json()).toEqual({ message: "hi" });
  });

  it("paths that only look like another route do not slip past the token", async () => {
    running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, controlToken: TOKEN });
    const raw = (port: number, path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path, method: "GET" }, (res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode!, body }));
        });
        req.on("error", reject);
        req.end();
      });
    const paths = [
      "/v1/../_standin/clock",
      "/./_standin/clock",
      "/%2e%2e/_standin/clock",
      "/_standin//clock",
      "/_standin/clock/",
      "//_standin/clock",
      "/%5Fstandin/clock",
      "/_STANDIN/clock",
      "/_standin%2Fclock",
      "/_standin%00/clock",
      "http://elsewhere/_standin/clock",
    ];
    for (const port of Object.values(running.ports)) {
      for (const path of paths) {
        const res = await raw(port, path);
        expect([400, 401, 404], `${port} ${path}`).toContain(res.status);
        expect(res.body, `${port} ${path}`).not.toContain("nowMs");
      }
    }
  });
});

// ---- scheduler ACLs -------------------------------------------------------------------------------

const S = {
  mgmt: "aaaaaaaa-0000-4000-8000-000000000001",
  defaultReader: "aaaaaaaa-0000-4000-8000-000000000002",
  prodReader: "aaaaaaaa-0000-4000-8000-000000000003",
  defaultWriter: "aaaaaaaa-0000-4000-8000-000000000004",
};

function serviceJob(id: string, namespace: string) {
  return {
    ID: id,
    Namespace: namespace,
    Type: "service",
    Datacenters: ["dc1"],
    Update: { MaxParallel: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000 },
    TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
  };
}

const schedulerFixture = {
  scheduler: {
    namespaces: [{ Name: "prod" }],
    jobs: [serviceJob("web", "default"), serviceJob("api", "prod")],
    acl: {
      enabled: true,
      policies: [
        { Name: "default-read", Rules: 'namespace "default" { policy = "read" }\nnode { policy = "read" }' },
        { Name: "prod-read", Rules: 'namespace "prod" { policy = "read" }' },
        { Name: "default-write", Rules: 'namespace "default" { policy = "write" }' },
      ],
      tokens: [
        { SecretID: S.mgmt, AccessorID: "bbbbbbbb-0000-4000-8000-000000000001", Type: "management", Name: "root" },
        { SecretID: S.defaultReader, AccessorID: "bbbbbbbb-0000-4000-8000-000000000002", Policies: ["default-read"], Name: "default-reader" },
        { SecretID: S.prodReader, AccessorID: "bbbbbbbb-0000-4000-8000-000000000003", Policies: ["prod-read"], Name: "prod-reader" },
        { SecretID: S.defaultWriter, AccessorID: "bbbbbbbb-0000-4000-8000-000000000004", Policies: ["default-write"], Name: "default-writer" },
      ],
    },
  },
};

/** Who may read what: the namespaces whose jobs each caller may read, and whether it may read nodes. */
const CALLERS = [
  { name: "default-reader", secret: S.defaultReader, namespaces: ["default"], nodes: true },
  { name: "prod-reader", secret: S.prodReader, namespaces: ["prod"], nodes: false },
  { name: "anonymous", secret: undefined, namespaces: [] as string[], nodes: false },
];

describe("scheduler ACLs: a token sees only what it may read", () => {
  let emu: Standin;
  const ids: Record<string, Record<string, string>> = { default: {}, prod: {} };

  const get = async (path: string, secret?: string) => {
    const res = await emu.scheduler.request(path, { headers: secret ? { "X-Nomad-Token": secret } : {} });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, text, body };
  };

  beforeAll(async () => {
    emu = await createStandin({ fixture: schedulerFixture });
    emu.clock.advance("3s"); // allocations placed, deployments running
    for (const ns of ["default", "prod"]) {
      const one = async (list: string) => ((await get(`/v1/${list}?namespace=${ns}`, S.mgmt)).body as Json[])[0]!;
      const alloc = await one("allocations");
      ids[ns] = { job: ns === "default" ? "web" : "api", alloc: alloc.ID, eval: (await one("evaluations")).ID, deployment: (await one("deployments")).ID, node: alloc.NodeID };
    }
  });

  /** Lists: every item is in a namespace the caller may read (or the list is refused). */
  const lists = [
    "/v1/jobs",
    "/v1/jobs?namespace=*",
    "/v1/jobs?namespace=prod",
    "/v1/allocations?namespace=*",
    "/v1/allocations?namespace=prod",
    "/v1/evaluations?namespace=*",
    "/v1/evaluations?namespace=prod",
    "/v1/deployments?namespace=*",
    "/v1/deployments?namespace=prod",
    "/v1/node/{default.node}/allocations",
  ];

  for (const caller of CALLERS) {
    for (const list of lists) {
      it(`${caller.name}: ${list.replace(/\{(\w+)\.(\w+)\}/g, "<$1 $2>")}`, async () => {
        const res = await get(
          list.replace(/\{(\w+)\.(\w+)\}/g, (_, ns: string, kind: string) => ids[ns]![kind]!),
          caller.secret,
        );
        if (res.status !== 200) {
          expect(res.status).toBe(403);
          return;
        }
        for (const item of res.body as Json[]) expect(caller.namespaces, `${item.Namespace}/${item.ID}`).toContain(item.Namespace);
      });
    }

    // Objects of each namespace, read by ID, with each way of naming the namespace.
    const objects = [
      "/v1/job/{job}",
      "/v1/job/{job}/allocations",
      "/v1/job/{job}/evaluations",
      "/v1/job/{job}/deployments",
      "/v1/job/{job}/deployment",
      "/v1/job/{job}/summary",
      "/v1/job/{job}/versions",
      "/v1/job/{job}/scale",
      "/v1/allocation/{alloc}",
      "/v1/evaluation/{eval}",
      "/v1/evaluation/{eval}/allocations",
      "/v1/deployment/{deployment}",
      "/v1/deployment/allocations/{deployment}",
      "/v1/namespace/{ns}",
    ];
    for (const ns of ["default", "prod"]) {
      for (const template of objects) {
        for (const query of ["", `?namespace=${ns}`, "?namespace=*", `?namespace=${ns === "prod" ? "default" : "prod"}`]) {
          // Job routes read the namespace they are asked for (`*` meaning default); the others read the object's own.
          const jobRoute = template.startsWith("/v1/job/");
          const asked = query === "" || query === "?namespace=*" ? "default" : query.slice("?namespace=".length);
          if (jobRoute && asked !== ns) continue; // another namespace's job of that name: nothing to leak
          const may = caller.namespaces.includes(ns);
          const pathOf = (name: (kind: string) => string) =>
            template.replace(/\{(\w+)\}/g, (_, kind: string) => (kind === "ns" ? ns : name(kind))) + (template.includes("/namespace/") ? "" : query);
          it(`${caller.name}: ${pathOf((kind) => `<${ns} ${kind}>`)}`, async () => {
            const res = await get(
              pathOf((kind) => ids[ns]![kind]!),
              caller.secret,
            );
            if (may && (jobRoute || template.includes("/namespace/") || query === `?namespace=${ns}`)) expect(res.status, res.text).toBe(200);
            if (!may) {
              expect([403, 404], res.text).toContain(res.status);
              // Only an error text: no object, no field of one.
              expect(res.text).not.toMatch(/[{}]|"(ID|Namespace|JobID|Status)"/);
            }
          });
        }
      }
    }

    it(`${caller.name}: nodes and node reads need node read`, async () => {
      for (const path of ["/v1/nodes", `/v1/node/${ids.default!.node}`]) expect((await get(path, caller.secret)).status).toBe(caller.nodes ? 200 : 403);
    });

    it(`${caller.name}: /v1/namespaces lists only namespaces it holds a capability in`, async () => {
      const res = await get("/v1/namespaces", caller.secret);
      expect(res.status).toBe(200);
      expect((res.body as Json[]).map((n) => n.Name)).toEqual(caller.namespaces);
    });

    it(`${caller.name}: ACL policies and tokens: its own only, never another's secret`, async () => {
      const policies = await get("/v1/acl/policies", caller.secret);
      const own = caller.secret ? [{ [S.defaultReader]: "default-read", [S.prodReader]: "prod-read" }[caller.secret]!] : [];
      expect(policies.status).toBe(200);
      expect((policies.body as Json[]).map((p) => p.Name)).toEqual(own);
      for (const other of ["default-read", "prod-read", "default-write"].filter((p) => !own.includes(p)))
        expect((await get(`/v1/acl/policy/${other}`, caller.secret)).status).toBe(403);
      expect((await get("/v1/acl/tokens", caller.secret)).status).toBe(403);
      for (const accessor of ["bbbbbbbb-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000004"]) {
        const res = await get(`/v1/acl/token/${accessor}`, caller.secret);
        expect(res.status).toBe(403);
        expect(res.text).not.toContain(S.mgmt);
      }
      const self = await get("/v1/acl/token/self", caller.secret);
      for (const secret of Object.values(S).filter((s) => s !== caller.secret)) expect(self.text).not.toContain(secret);
    });

    it(`${caller.name}: event stream topics follow read-job and node read; frames stay in the namespace`, async () => {
      const stream = async (query: string) => {
        const abort = new AbortController();
        const res = await emu.scheduler.request(`/v1/event/stream?${query}`, { headers: caller.secret ? { "X-Nomad-Token": caller.secret } : {}, signal: abort.signal });
        if (res.status !== 200) return { status: res.status, events: [] as Json[] };
        const reader = res.body!.getReader();
        let text = "";
        // The heartbeat, then the buffered frames replayed from index 1 (queued at once, in process); then quiet.
        for (;;) {
          const chunk = await Promise.race([reader.read(), sleep(50).then(() => undefined)]);
          if (!chunk || chunk.done) break;
          text += new TextDecoder().decode(chunk.value);
        }
        abort.abort();
        await reader.cancel().catch(() => undefined);
        const events = text
          .split("\n")
          .filter((l) => l.trim())
          .flatMap((l) => ((JSON.parse(l) as Json).Events as Json[] | undefined) ?? []);
        return { status: 200, events };
      };
      for (const ns of ["default", "prod"]) {
        const res = await stream(`topic=Job&topic=Allocation&topic=Evaluation&topic=Deployment&namespace=${ns}&index=1`);
        expect(res.status).toBe(caller.namespaces.includes(ns) ? 200 : 403);
        for (const event of res.events) expect(event.Namespace).toBe(ns);
      }
      expect((await stream("topic=*&index=1")).status).toBe(403);
      expect((await stream("topic=Job&namespace=*&index=1")).status).toBe(403);
      expect((await stream("topic=ACLToken&index=1")).status).toBe(403);
      expect((await stream("topic=Node&index=1")).status).toBe(caller.nodes ? 200 : 403);
    });
  }

  it("the management token sees both namespaces (the checks above are not vacuous)", async () => {
    for (const list of ["/v1/jobs?namespace=*", "/v1/allocations?namespace=*", "/v1/evaluations?namespace=*", "/v1/deployments?namespace=*"]) {
      expect(new Set(((await get(list, S.mgmt)).body as Json[]).map((i) => i.Namespace))).toEqual(new Set(["default", "prod"]));
    }
    expect(((await get(`/v1/node/${ids.default!.node}/allocations`, S.mgmt)).body as Json[]).length).toBe(2);
    expect(((await get(`/v1/node/${ids.default!.node}/allocations`, S.defaultReader)).body as Json[]).map((a) => a.Namespace)).toEqual(["default"]);
  });
});

describe("scheduler ACLs: writes land only where the token may write (regressions)", () => {
  let emu: Standin;
  const call = async (method: string, path: string, secret: string | undefined, body?: unknown) => {
    const res = await emu.scheduler.request(path, { method, headers: secret ? { "X-Nomad-Token": secret } : {}, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  };
  const prodJobs = async () => ((await (await emu.scheduler.request("/v1/jobs?namespace=prod", { headers: { "X-Nomad-Token": S.mgmt } })).json()) as Json[]).map((j) => j.ID);

  beforeAll(async () => {
    emu = await createStandin({ fixture: schedulerFixture });
    emu.clock.advance("3s");
  });

  it("a register lands in the namespace the query or body names: it needs submit-job there", async () => {
    const job = serviceJob("sneaky", "default");
    expect(await call("PUT", "/v1/jobs?namespace=prod", S.defaultWriter, { Job: job })).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await call("PUT", "/v1/jobs", S.defaultWriter, { Job: job, Namespace: "prod" })).toMatchObject({ status: 403 });
    expect(await call("POST", "/v1/job/sneaky?namespace=prod", S.defaultWriter, { Job: job })).toMatchObject({ status: 403 });
    expect(await prodJobs()).toEqual(["api"]);
    expect((await call("PUT", "/v1/jobs", S.defaultWriter, { Job: job })).status).toBe(200); // in default: allowed
  });

  it("a plan is checked in the namespace it plans in (it would show the job's diff)", async () => {
    const res = await call("PUT", "/v1/job/api/plan", S.defaultWriter, { Job: { ...serviceJob("api", "prod"), Meta: { x: "1" } }, Diff: true });
    expect(res).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await call("PUT", "/v1/job/web/plan", S.defaultWriter, { Job: serviceJob("web", "default"), Diff: true })).status).toBe(200);
  });

  it("namespace=* on a job route is the default namespace, not a way past the check", async () => {
    expect((await call("DELETE", "/v1/job/web?namespace=*", undefined)).status).toBe(403);
    expect((await call("PUT", "/v1/job/web/evaluate?namespace=*", S.prodReader, {})).status).toBe(403);
    expect((await call("GET", "/v1/job/web?namespace=*", S.prodReader)).status).toBe(403);
    expect((await call("GET", "/v1/job/web", S.mgmt)).text).toContain('"Stop":false');
  });

  it("deployment writes need submit-job in the deployment's namespace", async () => {
    const [deployment] = (await (await emu.scheduler.request("/v1/deployments?namespace=prod", { headers: { "X-Nomad-Token": S.mgmt } })).json()) as Json[];
    expect(deployment!.Status).toBe("running");
    expect(await call("POST", `/v1/deployment/fail/${deployment!.ID}`, S.defaultWriter)).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await call("POST", `/v1/deployment/pause/${deployment!.ID}`, S.defaultWriter, { DeploymentID: deployment!.ID, Pause: true })).toMatchObject({ status: 403 });
    expect(await call("POST", `/v1/deployment/fail/${deployment!.ID}?namespace=*`, undefined)).toMatchObject({ status: 403 });
    const after = (await (await emu.scheduler.request(`/v1/deployment/${deployment!.ID}`, { headers: { "X-Nomad-Token": S.mgmt } })).json()) as Json;
    expect(after.Status).toBe("running");
  });
});

// ---- registry ACLs --------------------------------------------------------------------------------

const R = { teamA: "consul-secret-team-a-3f9e", all: "consul-secret-all-8c1d" };

const registryFixture = {
  registry: {
    nodes: [
      { Node: "node-a", Address: "10.0.0.1" },
      { Node: "node-b", Address: "10.0.0.2" },
    ],
    sessions: [
      { ID: "aaaaaaaa-1111-4111-8111-000000000001", Node: "node-a", Name: "a" },
      { ID: "bbbbbbbb-1111-4111-8111-000000000002", Node: "node-b", Name: "b" },
    ],
    kv: [
      { Key: "team-a/config", Value: "a-value" },
      { Key: "team-a/lock", Value: "a", Session: "aaaaaaaa-1111-4111-8111-000000000001" },
      { Key: "team-b/config", Value: "b-secret-value" },
      { Key: "team-b/lock", Value: "b", Session: "bbbbbbbb-1111-4111-8111-000000000002" },
    ],
    acl: {
      enabled: true,
      defaultPolicy: "deny",
      tokens: [
        {
          SecretID: R.teamA,
          Rules: { key_prefix: { "team-a/": { policy: "read" } }, session_prefix: { "node-a": { policy: "read" } }, node_prefix: { "node-a": { policy: "read" } } },
        },
        { SecretID: R.all, Rules: { key_prefix: { "": { policy: "write" } }, session_prefix: { "": { policy: "write" } }, node_prefix: { "": { policy: "write" } } } },
      ],
    },
  },
};

describe("registry ACLs: a token limited to a prefix sees only that prefix", () => {
  let emu: Standin;
  beforeAll(async () => {
    emu = await createStandin({ fixture: registryFixture });
  });

  /** Each way a request may carry the token. */
  const transports = [
    { name: "X-Consul-Token", send: (path: string, secret: string) => [path, { "X-Consul-Token": secret }] as const },
    { name: "Authorization: Bearer", send: (path: string, secret: string) => [path, { Authorization: `Bearer ${secret}` }] as const },
    { name: "?token=", send: (path: string, secret: string) => [`${path}${path.includes("?") ? "&" : "?"}token=${secret}`, {}] as const },
  ];

  const B_MARKERS = ["team-b", "node-b", "bbbbbbbb-1111"];
  const endpoints: Array<{ path: string; status: number[]; sees?: (body: any) => void }> = [
    { path: "/v1/kv/?recurse", status: [200], sees: (b) => expect(b.map((e: Json) => e.Key)).toEqual(["team-a/config", "team-a/lock"]) },
    { path: "/v1/kv/?keys", status: [200], sees: (b) => expect(b).toEqual(["team-a/config", "team-a/lock"]) },
    { path: "/v1/kv/?keys&separator=/", status: [200], sees: (b) => expect(b).toEqual(["team-a/"]) },
    { path: "/v1/kv/team-b/?recurse", status: [404] },
    { path: "/v1/kv/team-b/?keys", status: [404] },
    { path: "/v1/kv/team-b/config", status: [403] },
    { path: "/v1/kv/team-b/config?raw", status: [403] },
    { path: "/v1/kv/team-a/config", status: [200] },
    { path: "/v1/session/list", status: [200], sees: (b) => expect(b.map((s: Json) => s.Node)).toEqual(["node-a"]) },
    { path: "/v1/session/node/node-b", status: [200], sees: (b) => expect(b).toEqual([]) },
    { path: "/v1/session/info/bbbbbbbb-1111-4111-8111-000000000002", status: [200], sees: (b) => expect(b).toEqual([]) },
    { path: "/v1/session/info/aaaaaaaa-1111-4111-8111-000000000001", status: [200], sees: (b) => expect(b.length).toBe(1) },
    { path: "/v1/catalog/nodes", status: [200], sees: (b) => expect(b.map((n: Json) => n.Node)).toEqual(["node-a"]) },
    { path: "/v1/health/node/node-b", status: [200], sees: (b) => expect(b).toEqual([]) },
  ];

  for (const transport of transports) {
    for (const endpoint of endpoints) {
      it(`${transport.name}: ${endpoint.path}`, async () => {
        const [path, headers] = transport.send(endpoint.path, R.teamA);
        const res = await emu.registry.request(path, { headers });
        const text = await res.text();
        expect(endpoint.status, text).toContain(res.status);
        if (res.status === 200) {
          for (const marker of B_MARKERS) expect(text).not.toContain(marker);
          expect(text).not.toContain(Buffer.from("b-secret-value").toString("base64"));
          endpoint.sees?.(JSON.parse(text));
        }
      });
    }
  }

  it("the anonymous token (default deny) sees nothing; the full token sees everything", async () => {
    for (const endpoint of endpoints) {
      const res = await emu.registry.request(endpoint.path);
      const text = await res.text();
      if (res.status === 200) for (const marker of [...B_MARKERS, "team-a", "node-a", "aaaaaaaa-1111"]) expect(text, endpoint.path).not.toContain(marker);
    }
    const all = await emu.registry.request("/v1/kv/?recurse", { headers: { "X-Consul-Token": R.all } });
    expect(((await all.json()) as Json[]).length).toBe(4);
  });

  it("a blocking read answers with the filtered view when it wakes", async () => {
    const first = await emu.registry.request("/v1/session/list", { headers: { "X-Consul-Token": R.teamA } });
    const index = first.headers.get("X-Consul-Index");
    const parked = emu.registry.request(`/v1/session/list?index=${index}&wait=1m`, { headers: { "X-Consul-Token": R.teamA } });
    const created = await emu.registry.request("/v1/session/create", { method: "PUT", headers: { "X-Consul-Token": R.all }, body: JSON.stringify({ Node: "node-b" }) });
    const { ID } = (await created.json()) as Json;
    const res = await parked;
    const text = await res.text();
    expect(Number(res.headers.get("X-Consul-Index"))).toBeGreaterThan(Number(index));
    expect(text).not.toContain(ID);
    expect((JSON.parse(text) as Json[]).map((s) => s.Node)).toEqual(["node-a"]);
  });
});

// ---- secrets in logs ------------------------------------------------------------------------------

describe("secrets never reach the logs", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("with --log-level debug, no token, key, JWT or control token sent to any port appears in stdout or stderr", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-secrets-"));
    const CONTROL = "ctl-secret-0d1e2f3a4b5c";
    const API_KEY = "apikey-secret-9a8b7c6d";
    const fixtureFile = join(dir, "fixture.json");
    writeFileSync(
      fixtureFile,
      JSON.stringify({
        scheduler: schedulerFixture.scheduler,
        registry: { acl: { enabled: true, defaultPolicy: "deny", tokens: [{ SecretID: R.teamA, Rules: { key_prefix: { "": { policy: "write" } } } }] } },
        echo: { apiKeys: [API_KEY] },
      }),
    );
    const s = await start(["--fixture", fixtureFile, "--log-level", "debug", "--control-token", CONTROL]);
    const ctl = { Authorization: `Bearer ${CONTROL}` };
    const mint = async (scheme: string) =>
      (
        (await (
          await fetch(`${s.urls.control}/echo/tokens`, { method: "POST", headers: { ...ctl, "Content-Type": "application/json" }, body: JSON.stringify({ scheme }) })
        ).json()) as Json
      ).token as string;
    const jwt = await mint("provider_jwt");
    const idToken = await mint("provider_id_token");
    const expired = (
      (await (await fetch(`${s.urls.control}/echo/tokens`, { method: "POST", headers: ctl, body: JSON.stringify({ scheme: "provider_jwt", expiresIn: "-1h" }) })).json()) as Json
    ).token as string;
    const wrongNomad = "ffffffff-dead-4bee-8f00-123456789abc";
    const wrongConsul = "consul-wrong-secret-77aa";
    const requests: Array<[string, RequestInit?]> = [
      [`${s.urls.scheduler}/v1/jobs`, { headers: { "X-Nomad-Token": S.defaultReader } }],
      [`${s.urls.scheduler}/v1/jobs?namespace=prod`, { headers: { "X-Nomad-Token": S.defaultReader } }], // 403
      [`${s.urls.scheduler}/v1/jobs`, { headers: { Authorization: `Bearer ${S.mgmt}` } }],
      [`${s.urls.scheduler}/v1/jobs`, { headers: { "X-Nomad-Token": wrongNomad } }], // unknown secret
      [`${s.urls.scheduler}/v1/acl/token/self`, { headers: { "X-Nomad-Token": S.prodReader } }],
      [`${s.urls.scheduler}/v1/acl/token/self`, { headers: { "X-Nomad-Token": wrongNomad } }],
      [`${s.urls.scheduler}/v1/event/stream?topic=Job&index=1`, { headers: { "X-Nomad-Token": S.defaultWriter } }],
      [`${s.urls.registry}/v1/kv/x`, { method: "PUT", headers: { "X-Consul-Token": R.teamA }, body: "v" }],
      [`${s.urls.registry}/v1/kv/x?token=${R.teamA}`],
      [`${s.urls.registry}/v1/kv/x`, { headers: { Authorization: `Bearer ${R.teamA}` } }],
      [`${s.urls.registry}/v1/session/list?token=${wrongConsul}`], // 403 ACL not found
      [`${s.urls.registry}/v1/kv/x`, { headers: { "X-Consul-Token": wrongConsul } }],
      [`${s.urls.echo}/echo?key=${API_KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"m"}' }],
      [`${s.urls.echo}/echo`, { method: "POST", headers: { "x-api-key": API_KEY, "Content-Type": "application/json" }, body: '{"message":"m"}' }],
      [`${s.urls.echo}/auth/info/providerjwt`, { headers: { Authorization: `Bearer ${jwt}` } }],
      [`${s.urls.echo}/auth/info/providerjwt`, { headers: { Authorization: `Bearer ${expired}` } }], // 401
      [`${s.urls.echo}/auth/info/provideridtoken?access_token=${idToken}`],
      [`${s.urls.echo}/auth/info/identityplatform`, { headers: { "X-Goog-Iap-Jwt-Assertion": jwt } }], // wrong scheme
      [`${s.urls.echo}/auth/info/providerjwt`, { headers: { Authorization: `Bearer ${jwt.slice(0, -4)}AAAA` } }], // bad signature
      [`${s.urls.echo}/auth/info/providerjwt`, { headers: { Authorization: `Bearer ${jwt.split(".")[0]}.not-json.${jwt.split(".")[2]}` } }],
      [`${s.urls.control}/clock`, { headers: ctl }],
      [`${s.urls.control}/clock`, { headers: { Authorization: `Bearer ${CONTROL}-wrong` } }],
      [`${s.urls.registry.replace(/\/$/, "")}/_standin/requests`, { headers: ctl }], // the journal holds the headers: it answers, it does not log
    ];
    const statuses: number[] = [];
    for (const [url, init] of requests) {
      const abort = new AbortController();
      const res = await fetch(url, { ...init, signal: abort.signal });
      statuses.push(res.status);
      if (url.includes("/event/stream")) {
        await res.body!.getReader().read();
        abort.abort();
      } else await res.arrayBuffer();
    }
    // The mix covers answered, refused and failed requests.
    expect(statuses).toContain(200);
    expect(statuses).toContain(401);
    expect(statuses).toContain(403);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    const logs = s.stdout() + s.stderr();
    // Requests were logged at debug (the check below is not vacuous)…
    expect(logs).toMatch(/^scheduler GET \/v1\/jobs 200$/m);
    expect(logs).toMatch(/^echo GET \/auth\/info\/providerjwt 401$/m);
    // …and no secret is in them, whole or as a JWT's signature.
    const secrets = [CONTROL, API_KEY, ...Object.values(S), ...Object.values(R), wrongNomad, wrongConsul, jwt, idToken, expired, jwt.split(".")[2]!, idToken.split(".")[2]!];
    for (const secret of secrets) expect(logs.includes(secret), `${secret} in the logs`).toBe(false);
  });
});
