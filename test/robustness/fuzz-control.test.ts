/**
 * Bad-input fuzzing of the control API (`/_standin/…` on every port): clock
 * moves with bad durations and instants, fixtures and snapshots with a wrong
 * type anywhere, actions and await conditions with odd arguments, token
 * minting bodies, the service faults, journal queries, the control token.
 * Every request is held to the invariants in harness.ts.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import {
  boolText,
  durationText,
  fuzz,
  headerEntries,
  indexText,
  instantText,
  jsonBody,
  malformedJson,
  method,
  mutated,
  pathSegment,
  queryEntries,
  queryString,
  repeatedHeader,
  timeoutFor,
  tokenValue,
  toJsonText,
  weirdString,
  weirdValue,
  type HeaderEntries,
  type Path,
} from "./arbitraries.js";
import { Harness, type FuzzRequest, type Oracle, type Service } from "./harness.js";

/**
 * The control API answers 400, 401, 404, 408 and 409 (docs/control-api.md);
 * its only 5xx is `GET /_standin/ready`'s 503 before the fixtures are loaded
 * or while shutting down, which an in-process emulator never is. Any other
 * 5xx fails.
 */
const CONTROL: Oracle = {
  documented5xx: (status, _text, request) => status === 503 && new URL(request.path, "http://x").pathname === "/_standin/ready",
  // docs/fixtures.md: await's 408 answers after moving the clock timer by timer up to the limit (what it observed is the answer),
  // and the clock's loop guard stops an advance midway with a 409; both move the state by design.
  rejectionMayWrite: (status, request) => {
    const path = new URL(request.path, "http://x").pathname;
    return (status === 408 && path === "/_standin/await") || (status === 409 && /^\/_standin\/(clock\/(advance|advance-to|next)|await)$/.test(path));
  },
};

const CONTROL_TOKEN = "s3cret-control";

// ---- the world ------------------------------------------------------------------------------

const task = { Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } };
const job = (id: string, extra: Record<string, unknown> = {}) => ({
  ID: id,
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "g", Count: 1, Tasks: [task] }],
  ...extra,
});

const FIXTURE = {
  scheduler: { nodes: [{ Name: "client-1" }], jobs: [job("web", { Update: { MaxParallel: 1, Canary: 0 } })] },
  registry: {
    nodes: [{ Node: "node-a", Address: "10.0.0.1", Checks: [{ CheckID: "web", Status: "passing" }] }],
    sessions: [{ ID: "aaaaaaaa-1111-2222-3333-444444444444", Node: "node-a", TTL: "15s" }],
    kv: [{ Key: "service/leader", Value: "a", Session: "aaaaaaaa-1111-2222-3333-444444444444" }],
  },
  timeline: [{ at: "1m", do: "node-down", node: "client-1" }],
};

/** A fixture with something in every section, for the wrong-type mutations. */
const RICH_FIXTURE = {
  description: "fuzz",
  scheduler: {
    datacenter: "dc1",
    namespaces: [{ Name: "prod", Description: "p" }],
    nodes: [
      {
        Name: "client-2",
        Datacenter: "dc1",
        NodeClass: "big",
        NodePool: "default",
        Status: "ready",
        Attributes: { "os.name": "ubuntu" },
        Meta: { rack: "r1" },
        Resources: { CPU: 4000, MemoryMB: 8192 },
      },
    ],
    jobs: [job("api", { Namespace: "prod", Meta: { a: "b" } })],
    timing: { allocStart: "1s", batchRun: "10s" },
    acl: { enabled: false, policies: [{ Name: "p", Rules: 'namespace "default" { policy = "read" }' }], tokens: [{ Name: "t", Type: "client", Policies: ["p"] }] },
    regions: { west: { datacenter: "w1", nodes: [{ Name: "w-node", Datacenter: "w1" }], jobs: [job("west-api", { Datacenters: ["w1"] })], timing: { allocStart: "2s" } } },
  },
  registry: {
    nodes: [{ Node: "node-b", Address: "10.0.0.2", Checks: [{ CheckID: "disk", Status: "warning", Name: "disk" }] }],
    sessions: [{ ID: "bbbbbbbb-1111-2222-3333-444444444444", Node: "node-b", TTL: "30s", LockDelay: "5s", Behavior: "delete" }],
    kv: [{ Key: "k", Value: "v", Session: "bbbbbbbb-1111-2222-3333-444444444444" }],
    acl: { enabled: false, defaultPolicy: "allow", tokens: [{ SecretID: "x", Rules: { key_prefix: { "": { policy: "read" } } } }] },
    datacenters: { dc2: { nodes: [{ Node: "node-c", Address: "10.0.2.1" }], sessions: [{ Node: "node-c", TTL: "20s" }], kv: [{ Key: "k2", Value: "v" }] } },
  },
  echo: { serviceName: "echo.fuzz.test", apiKeys: ["k1"], schemes: { provider_jwt: { issuer: "iss.test", audiences: ["aud"] } } },
  timeline: [
    { at: "30s", do: "check-critical", node: "node-b", check: "disk" },
    { at: "2m", do: "api-key-add", key: "k2" },
  ],
};

const ACTION_TEMPLATES: Array<Record<string, unknown>> = [
  { do: "node-down", node: "client-1" },
  { do: "node-up", node: "client-1" },
  { do: "node-status", node: "client-1", status: "disconnected" },
  { do: "node-drain", node: "client-1", drain: true },
  { do: "node-eligibility", node: "client-1", eligible: false },
  { do: "alloc-fail", job: "web", namespace: "default", group: "g", canary: false, nth: 0 },
  { do: "alloc-complete", job: "web", nth: 0 },
  { do: "alloc-health", job: "web", healthy: true },
  { do: "job-register", job: job("new") },
  { do: "job-stop", job: "web", namespace: "default", purge: true },
  { do: "check-status", node: "node-a", check: "web", status: "critical", output: "down" },
  { do: "check-passing", node: "node-a", check: "web" },
  { do: "session-destroy", session: "aaaaaaaa-1111-2222-3333-444444444444" },
  { do: "kv-delete", key: "service/leader" },
  { do: "api-key-add", key: "new-key" },
  { do: "api-key-revoke", key: "test-api-key" },
];

const AWAIT_TEMPLATES: Array<Record<string, unknown>> = [
  { until: { deployment: { job: "web", status: "successful" } }, within: "5m" },
  { until: { index: { above: 10 } }, within: "1m" },
  { until: { allocations: { job: "web", status: "running", count: 1 } } },
  { until: { session: { id: "aaaaaaaa-1111-2222-3333-444444444444", exists: false } }, within: "1h" },
];

// ---- requests -------------------------------------------------------------------------------

const anyPort: fc.Arbitrary<Service> = fc.constantFrom("scheduler", "registry", "echo");

const controlHeaders = headerEntries(
  {
    "Content-Type": fc.constantFrom("application/json", "text/plain", "", "application/x-www-form-urlencoded"),
    Authorization: tokenValue.map((t) => `Bearer ${t}`),
    "Accept-Encoding": fc.constantFrom("gzip", "", "br"),
  },
  2,
);

interface Sent {
  port: Service;
  request: FuzzRequest;
}

function send(methods: fc.Arbitrary<string>, path: fc.Arbitrary<string>, body?: fc.Arbitrary<string | undefined>): fc.Arbitrary<Sent> {
  return fc.record({ port: anyPort, method: methods, path, headers: controlHeaders, body: body ?? fc.constant(undefined) }).map(({ port, method, path, headers, body }) => ({
    port,
    request: { method, path, headers, ...(body === undefined ? {} : { body }) },
  }));
}

const post = fc.oneof({ weight: 8, arbitrary: fc.constant("POST") }, { weight: 1, arbitrary: method });

function arbitraries(snapshot: unknown) {
  const clock = fc.oneof(
    send(
      post,
      fc.constant("/_standin/clock/advance"),
      fc.oneof(
        durationText.map((by) => toJsonText({ by })),
        jsonBody({ by: "30s" }),
      ),
    ),
    send(
      post,
      fc.constant("/_standin/clock/advance-to"),
      fc.oneof(
        instantText.map((to) => toJsonText({ to })),
        jsonBody({ to: "2026-01-01T01:00:00Z" }),
      ),
    ),
    send(post, fc.constant("/_standin/clock/auto"), jsonBody({ enabled: true })),
    send(
      post,
      fc.constantFrom("/_standin/clock/next", "/_standin/clock/pause", "/_standin/clock/resume", "/_standin/clock/lock", "/_standin/clock/unlock"),
      fc.option(weirdValue.map(toJsonText), { nil: undefined }),
    ),
  );
  const fixtures = fc.oneof(
    send(post, fc.constant("/_standin/fixtures"), jsonBody(RICH_FIXTURE)),
    send(post, fc.constant("/_standin/reset"), fc.oneof(fc.constant(undefined), fc.constant(""), jsonBody({ fixture: RICH_FIXTURE }), malformedJson({}))),
  );
  // In sequences, only the envelope the restore validates is changed: rows and timer data are the services' own
  // documents, which a restore takes as they are (see docs/development.md on PUT /_standin/snapshot).
  const envelope = (path: Path) => !(path[0] === "store" && path[1] === "tables" && path.length > 3 && path[3] === "rows") && !(path[0] === "clock" && path[3] === "data");
  const restoreEnvelope = send(fc.constant("PUT"), fc.constant("/_standin/snapshot"), mutated(snapshot, envelope).map(toJsonText));
  const restore = send(
    fc.oneof({ weight: 8, arbitrary: fc.constant("PUT") }, { weight: 1, arbitrary: method }),
    fc.constant("/_standin/snapshot"),
    fc.oneof(
      { weight: 4, arbitrary: mutated(snapshot).map(toJsonText) },
      { weight: 1, arbitrary: malformedJson(snapshot) },
      { weight: 1, arbitrary: fc.constant(toJsonText(snapshot)) },
    ),
  );
  const scenario = fc.oneof(
    send(
      post,
      fc.constant("/_standin/actions"),
      fc.constantFrom(...ACTION_TEMPLATES).chain((t) => jsonBody(t)),
    ),
    send(
      post,
      fc.constant("/_standin/actions"),
      fc
        .tuple(fc.oneof(fc.constantFrom(...ACTION_TEMPLATES.map((t) => t.do as string)), weirdString), fc.dictionary(weirdString, weirdValue, { maxKeys: 3 }))
        .map(([name, args]) => toJsonText({ ...args, do: name })),
    ),
    send(
      post,
      fc.constant("/_standin/await"),
      fc.oneof(
        fc.constantFrom(...AWAIT_TEMPLATES).chain((t) => jsonBody(t)),
        durationText.map((within) => toJsonText({ until: { index: { above: 1_000 } }, within })),
      ),
    ),
  );
  const echo = fc.oneof(
    send(
      post,
      fc.constant("/_standin/echo/tokens"),
      jsonBody({ scheme: "provider_jwt", claims: { email: "a@b.test", aud: ["x"], sub: null }, expiresIn: "10m", notBefore: "-1m", header: { kid: "k" }, unsigned: false }),
    ),
    send(
      post,
      fc.constant("/_standin/echo/tokens"),
      fc
        .record({
          scheme: fc.constantFrom("provider_jwt", "identity_platform"),
          claims: fc.dictionary(weirdString, weirdValue, { maxKeys: 3 }),
          expiresIn: durationText,
          notBefore: durationText,
        })
        .map(toJsonText),
    ),
    send(
      fc.constant("GET"),
      pathSegment.map((s) => `/_standin/echo/jwks/${s}`),
    ),
  );
  const faults = fc.oneof(
    send(
      post,
      fc.oneof(fc.constantFrom("client-1", "standin", "nope"), pathSegment).map((id) => `/_standin/scheduler/nodes/${id}`),
      jsonBody({ Status: "down", SchedulingEligibility: "ineligible", Drain: true }),
    ),
    send(
      post,
      pathSegment.map((id) => `/_standin/scheduler/allocations/${id}`),
      jsonBody({ ClientStatus: "failed", Healthy: false }),
    ),
    send(post, fc.constant("/_standin/registry/checks"), jsonBody({ Node: "node-a", CheckID: "web", Status: "critical", Output: "x" })),
    // Leader loss, and faults in another region or datacenter (named right, wrong, or weirdly).
    send(
      fc.oneof({ weight: 4, arbitrary: post }, { weight: 1, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: method }),
      fc
        .tuple(fc.constantFrom("scheduler", "registry"), fc.constantFrom("", "?region=west", "?dc=dc2", "?region=mars", "?dc=", "?region=%2F"))
        .map(([service, query]) => `/_standin/${service}/leader${query}`),
      jsonBody({ known: false }),
    ),
    send(
      post,
      fc.constantFrom(
        "/_standin/scheduler/nodes/w-node?region=west",
        "/_standin/scheduler/nodes/w-node?region=nope",
        "/_standin/registry/checks?dc=dc2",
        "/_standin/registry/checks?dc=nope",
      ),
      jsonBody({ Node: "node-c", CheckID: "agentHealth", Status: "critical", SchedulingEligibility: "ineligible" }),
    ),
  );
  const reads = send(
    fc.oneof({ weight: 6, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: method }),
    fc.oneof(
      fc.constantFrom(
        "/_standin/ready",
        "/_standin/clock",
        "/_standin/snapshot",
        "/_standin/state/hash",
        "/_standin/tape",
        "/_standin/coverage",
        "/_standin/actions",
        "/_standin/openapi.json",
        "/_standin/scheduler/event-streams",
        "/_standin",
        "/_standin/",
        "/_standin/nope",
        "/_standin/clock/",
        "/_standin//clock",
        "/_standin/%2E%2E/v1/jobs",
        "/_standin/../v1/jobs",
      ),
      fc
        .tuple(
          fc.constantFrom("/_standin/requests", "/_standin/events"),
          queryEntries({ since: indexText, limit: indexText, type: fc.constantFrom("clock", "timer", "", "x", "clock."), pretty: boolText }, 3),
        )
        .map(([p, q]) => `${p}${queryString(q)}`),
      fc.array(pathSegment, { minLength: 1, maxLength: 3 }).map((s) => `/_standin/${s.join("/")}`),
    ),
  );
  const clear = send(fc.constant("DELETE"), fc.constant("/_standin/requests"));
  const any = fc.oneof(
    { weight: 3, arbitrary: clock },
    { weight: 3, arbitrary: fixtures },
    { weight: 2, arbitrary: restoreEnvelope },
    { weight: 3, arbitrary: scenario },
    { weight: 2, arbitrary: echo },
    { weight: 2, arbitrary: faults },
    { weight: 2, arbitrary: reads },
    { weight: 1, arbitrary: clear },
  );
  return { clock, fixtures, restore, scenario, echo, faults, reads, any };
}

// ---- the properties ------------------------------------------------------------------------------

describe("control API: bad input (fuzz)", () => {
  let h: Harness;
  let guarded: Harness;
  let arbs: ReturnType<typeof arbitraries>;

  beforeAll(async () => {
    h = await Harness.create({ fixture: FIXTURE });
    guarded = await Harness.create({ fixture: FIXTURE, controlToken: CONTROL_TOKEN });
    arbs = arbitraries(h.emu.snapshot());
  });

  const single = (name: string, pick: () => fc.Arbitrary<Sent>, weight: number) =>
    it(
      name,
      () =>
        fuzz(
          fc.asyncProperty(fc.constant(null).chain(pick), async ({ port, request }) => {
            await h.reset();
            await h.send(port, request, CONTROL);
          }),
          weight,
        ),
      timeoutFor(weight),
    );

  single("clock moves with bad durations, instants and bodies", () => arbs.clock, 1);
  single("fixtures and resets with a wrong type anywhere", () => arbs.fixtures, 1.5);
  single("snapshot restores with a wrong type anywhere", () => arbs.restore, 1);
  single("actions and await with odd arguments", () => arbs.scenario, 1.5);
  single("token minting and key sets", () => arbs.echo, 1);
  single("scheduler and registry faults", () => arbs.faults, 1);
  single("reads and journal queries", () => arbs.reads, 0.5);

  it(
    "sequences of any control requests on one state",
    () =>
      fuzz(
        fc.asyncProperty(fc.array(arbs.any, { minLength: 2, maxLength: 5 }), async (sequence) => {
          await h.reset();
          for (const { port, request } of sequence) await h.send(port, request, CONTROL);
        }),
        1,
      ),
    timeoutFor(1, 300),
  );

  it(
    "the control token: missing, wrong, repeated, oversized",
    () =>
      fuzz(
        fc.asyncProperty(
          arbs.any,
          fc.oneof(
            fc.constant([] as HeaderEntries),
            fc.constant([["Authorization", `Bearer ${CONTROL_TOKEN}`]] as HeaderEntries),
            repeatedHeader(
              "Authorization",
              fc.oneof(
                fc.constant(`Bearer ${CONTROL_TOKEN}`),
                tokenValue.map((t) => `Bearer ${t}`),
              ),
            ),
            fc.integer({ min: 1_000, max: 100_000 }).map((n) => [["Authorization", `Bearer ${"t".repeat(n)}`]] as HeaderEntries),
          ),
          async ({ port, request }, auth) => {
            await guarded.reset();
            const headers = (request.headers ?? []).filter(([k]) => k.toLowerCase() !== "authorization");
            await guarded.send(port, { ...request, headers: [...headers, ...auth] }, CONTROL);
          },
        ),
        1,
      ),
    timeoutFor(1),
  );

  it(
    "huge bodies (the control API has no body limit of its own)",
    () =>
      fuzz(
        fc.asyncProperty(
          fc.constantFrom(1 << 20, 16 << 20, 17 << 20),
          fc.constantFrom("/_standin/fixtures", "/_standin/clock/advance", "/_standin/snapshot"),
          async (size, path) => {
            await h.reset();
            const body = path === "/_standin/fixtures" ? `{"description":"${"d".repeat(size - 20)}"}` : "x".repeat(size);
            await h.send("scheduler", { method: path === "/_standin/snapshot" ? "PUT" : "POST", path, body }, CONTROL);
          },
        ),
        0.05,
      ),
    60_000,
  );
});

// ---- regressions: inputs the fuzz properties found, as shrunk, one test per fix -------------------

describe("control API: regressions found by fuzzing", () => {
  const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  const call = async (emu: Standin, method: string, path: string, body?: string) => {
    const res = await emu.scheduler.request(path, { method, body });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const task = { Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } };
  const job = (id: string, count: unknown = 1) => ({ ID: id, Type: "service", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Count: count, Tasks: [task] }] });

  it("a body nested deeper than 1000 levels is a 400 before anything walks it", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("web")] } } });
    const before = emu.stateHash();
    const refused = { status: 400, body: { error: "request body nests arrays and objects deeper than 1000 levels" } };
    // Shrunk: a snapshot whose rows held a value nested a few thousand levels deep answered 500 `internal error: Maximum
    // call stack size exceeded` (and once restored it before failing).
    const snapshot = JSON.stringify(emu.snapshot()).replace('"Datacenters":["dc1"]', `"Datacenters":${nested(1001, '"dc1"')}`);
    expect(await call(emu, "PUT", "/_standin/snapshot", snapshot)).toEqual(refused);
    // Shrunk: claims nested a few thousand levels deep made token minting overflow the stack.
    expect(await call(emu, "POST", "/_standin/echo/tokens", `{"scheme":"provider_jwt","claims":{"sub":${nested(1001, '"x"')}}}`)).toEqual(refused);
    expect(emu.stateHash()).toBe(before);
    // Within the limit, both work.
    const deepClaims = await call(emu, "POST", "/_standin/echo/tokens", `{"scheme":"provider_jwt","claims":{"deep":${nested(990)}}}`);
    expect(deepClaims.status).toBe(200);
    const restored = await call(emu, "PUT", "/_standin/snapshot", JSON.stringify(emu.snapshot()).replace('"Datacenters":["dc1"]', `"Datacenters":${nested(990, '"dc1"')}`));
    expect(restored.status).toBe(200);
    expect(emu.stateHash()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a reset whose fixture a service refuses is a 400 that changes nothing, start fixture included", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("web")] } } });
    const start = emu.stateHash();
    await emu.clock.advance("1m");
    const before = emu.stateHash();
    // Shrunk: each answered 500 `internal error: …` after the emulator had dropped its state and replaced its start fixture.
    const fixtures = [
      { registry: { acl: { tokens: [{ SecretID: "x", Rules: { key_prefix: { "0": "maybe" } } }] } } },
      { scheduler: { acl: { policies: [{ Name: "", Rules: "" }] } } },
      { registry: { sessions: [{ Node: ["node-a"] }] } },
      { scheduler: { jobs: [{ ...job("x"), Datacenters: 5 }] } },
    ];
    for (const fixture of fixtures) {
      const res = await call(emu, "POST", "/_standin/reset", JSON.stringify({ fixture }));
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.problems).toEqual([expect.any(String)]);
      expect(emu.stateHash()).toBe(before);
    }
    expect((await call(emu, "POST", "/_standin/reset")).body.stateHash).toBe(start);
  });

  it("await within the longest Go duration answers 408 with what it waited (it was a 500 after moving the clock)", async () => {
    const emu = await createStandin();
    // Shrunk: within the longest Go duration rounds up to one millisecond more, which msToNanos refused: 500 after the clock had moved.
    const res = await call(emu, "POST", "/_standin/await", JSON.stringify({ until: { index: { above: 1000 } }, within: "2562047h47m16.854775807s" }));
    expect(res.status).toBe(408);
    expect(res.body.waited).toBe("2562047h47m16.854s");
    expect(res.body.now).toBe("2318-04-12T23:47:16.855Z");
  });

  it("a job-register action with a wrongly typed field is a 400 naming it (it was a 500)", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    // Shrunk: {"do":"job-register","job":{…,"TaskGroups":[{…,"Count":-63.2405077576376}]}} answered 500 `internal error: json: cannot unmarshal …`.
    const res = await call(emu, "POST", "/_standin/actions", JSON.stringify({ do: "job-register", job: job("web", -63.2405077576376) }));
    expect(res).toEqual({
      status: 400,
      body: { error: "job-register: json: cannot unmarshal number -63.2405077576376 into Go struct field TaskGroup.Job.TaskGroups.Count of type int" },
    });
    expect(emu.stateHash()).toBe(before);
  });
});
