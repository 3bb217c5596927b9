/**
 * GET /_standin/openapi.json: a valid OpenAPI 3.1 document listing every
 * control route, whose request schemas accept what the routes accept
 * (the examples of the README and docs/) and reject what the routes reject.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020Module from "ajv/dist/2020.js";
import type { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { createControlApp } from "../../src/control/index.js";
import { createStandin, type Standin } from "../../src/emulator.js";
import { DocumentedRoutes } from "../../src/http/documented-routes.js";
import type { PortApp } from "../../src/http/port-app.js";

type Json = any;

/** The pages whose control examples are checked here: the README and every page under docs/. */
const DOC_PAGES = ["README.md", ...readdirSync(new URL("../../docs/", import.meta.url)).map((name) => `docs/${name}`)].filter((page) => page.endsWith(".md"));
const readPage = (page: string) => readFileSync(new URL(`../../${page}`, import.meta.url), "utf8");
const PACKAGE = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

// ajv is CommonJS; its default export is the class either way round.
const Ajv2020 = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as typeof Ajv2020Module.default;

const WEB_JOB = { ID: "web", TaskGroups: [{ Name: "web", Count: 2, Tasks: [{ Name: "nginx", Driver: "docker", Config: { image: "nginx" } }] }] };

async function openapi(app: Hono): Promise<Json> {
  const res = await app.request("/_standin/openapi.json");
  expect(res.status).toBe(200);
  return res.json();
}

/** The control app serving a port's `/_standin` requests. */
function controlApp(emu: Standin): Hono {
  return (emu.app("scheduler") as PortApp)["control"];
}

/** `METHOD /path/{param}` for every route registered on the Hono app (middleware left out). */
function registeredRoutes(app: Hono): string[] {
  const routes = app.routes.filter((r) => r.method !== "ALL").map((r) => `${r.method} ${r.path.replace(/:([A-Za-z_]\w*)/g, "{$1}")}`);
  return [...new Set(routes)].sort();
}

function documentedRoutes(document: Json): string[] {
  return Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/** The schema of an operation's JSON request body, standalone (components alongside for its `$ref`s). */
function bodySchema(document: Json, method: string, path: string): Json {
  const operation = document.paths[path]?.[method.toLowerCase()];
  expect(operation, `${method} ${path} is documented`).toBeDefined();
  const schema = operation.requestBody?.content?.["application/json"]?.schema;
  expect(schema, `${method} ${path} documents a JSON body`).toBeDefined();
  return { ...schema, components: document.components };
}

/**
 * Each operation's body schema compiled once per document: compiling it anew (with its components) for every
 * body was most of this file's time. A compiled validator is a pure function of the schema, so reusing it
 * judges each body exactly as a fresh one would.
 */
const compiledBodySchemas = new WeakMap<Json, Map<string, (body: unknown) => boolean>>();

function schemaAccepts(document: Json, method: string, path: string, body: unknown): boolean {
  let validators = compiledBodySchemas.get(document);
  if (!validators) {
    validators = new Map();
    compiledBodySchemas.set(document, validators);
  }
  const key = `${method} ${path}`;
  let validate = validators.get(key);
  if (!validate) {
    const compiled = new Ajv2020({ strict: false, allErrors: true }).compile(bodySchema(document, method, path));
    validate = (candidate) => compiled(candidate) as boolean;
    validators.set(key, validate);
  }
  return validate(body);
}

/** A 400 from the documented-route helper itself (the body did not parse or did not match the schema). */
function helperRejected(status: number, body: Json): boolean {
  return status === 400 && typeof body?.error === "string" && /^(invalid body|invalid query|request body)/.test(body.error);
}

interface Example {
  method: string;
  path: string;
  body: unknown;
  where: string;
}

/**
 * The control examples with a JSON body in the README and docs/*.md: the control table's
 * `METHOD /_standin/path` `{…}` rows, `curl -XPOST …/_standin/… -d '{…}'`
 * lines, and the token-minting JSON block.
 */
function readmeExamples(): Example[] {
  const examples: Example[] = [];
  for (const page of DOC_PAGES) {
    const text = readPage(page);
    text.split("\n").forEach((line, i) => {
      const row = /^\| `(GET|POST|PUT|DELETE) (\/_standin\/[^`]+)` `([^`]+)`/.exec(line);
      const curl = /curl -s -X(POST|PUT) localhost:\d+(\/_standin\/\S+) -d '([^']+)'/.exec(line);
      const match = row ?? curl;
      if (!match) return;
      let body: unknown;
      try {
        body = JSON.parse(match[3]!);
      } catch {
        return; // field lists like {"scheme","claims",…}
      }
      examples.push({ method: match[1]!, path: match[2]!.replace(/<([^>]+)>/g, "{$1}"), body, where: `${page}:${i + 1}` });
    });
    const minting = /\*\*Minting tokens\.\*\*[\s\S]*?```json\n([\s\S]*?)```/.exec(text);
    if (minting) examples.push({ method: "POST", path: "/_standin/echo/tokens", body: JSON.parse(minting[1]!), where: `${page}: Minting tokens` });
  }
  return examples;
}

describe("GET /_standin/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document titled and versioned from package.json, tagged by area, served on every port", async () => {
    const emu = await createStandin();
    const document = await openapi(emu.scheduler);
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe("3.1.0");
    expect(document.info).toMatchObject({ title: "standin control API", version: PACKAGE.version });
    const tags = (document.tags as { name: string }[]).map((t) => t.name);
    expect(tags).toEqual(expect.arrayContaining(["clock", "state", "journal", "scenario", "tape", "scheduler", "registry", "echo", "coverage"]));
    const used = new Set(Object.values(document.paths as Record<string, Record<string, Json>>).flatMap((item) => Object.values(item).flatMap((op) => op.tags as string[])));
    expect([...used].sort()).toEqual([...tags].sort());
    for (const path of Object.keys(document.paths)) expect(path).toMatch(/^\/_standin(\/|$)/);
    const operationIds = Object.values(document.paths as Record<string, Record<string, Json>>).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(operationIds).size).toBe(operationIds.length);
    expect(await openapi(emu.registry)).toEqual(document);
    expect(await openapi(emu.echo)).toEqual(document);
  });

  it("lists every control route the app serves, and nothing else; it documents itself", async () => {
    const emu = await createStandin();
    const document = await openapi(emu.scheduler);
    expect(documentedRoutes(document)).toEqual(registeredRoutes(controlApp(emu)));
    expect(documentedRoutes(document)).toEqual(
      expect.arrayContaining([
        "GET /_standin/openapi.json",
        "POST /_standin/clock/advance",
        "GET /_standin/coverage",
        "POST /_standin/scheduler/nodes/{id}",
        "POST /_standin/scheduler/allocations/{id}",
        "GET /_standin/scheduler/event-streams",
        "POST /_standin/registry/checks",
        "POST /_standin/echo/tokens",
        "GET /_standin/echo/jwks/{scheme}",
      ]),
    );
    expect(document.paths["/_standin/scheduler/nodes/{id}"].post.parameters).toEqual([
      expect.objectContaining({ name: "id", in: "path", required: true }),
      expect.objectContaining({ name: "region", in: "query", required: false }),
    ]);
    expect(document.paths["/_standin/events"].get.parameters.map((p: Json) => p.name)).toEqual(["since", "limit", "type"]);
  });

  it("the comparison catches a route added without documentation", async () => {
    const emu = await createStandin();
    const extra = new DocumentedRoutes("extra");
    extra.get("/documented", { summary: "documented", responses: { 200: "ok" } }, (c) => c.json({}));
    extra.app.get("/sneaky", (c) => c.json({}));
    const app = createControlApp(emu, { services: [{ name: "extra", app: extra }] });
    const documented = documentedRoutes(await openapi(app));
    const registered = registeredRoutes(app);
    expect(documented).toContain("GET /_standin/extra/documented");
    expect(registered.filter((r) => !documented.includes(r))).toEqual(["GET /_standin/extra/sneaky"]);
  });

  it("documents the body schemas the routes validate with: required keys, closed objects, enums, the fixture component", async () => {
    const emu = await createStandin();
    const document = await openapi(emu.scheduler);
    expect(bodySchema(document, "POST", "/_standin/clock/advance")).toMatchObject({ type: "object", required: ["by"], additionalProperties: false });
    expect(bodySchema(document, "POST", "/_standin/scheduler/nodes/{id}").properties.Status.enum).toEqual(["ready", "down", "initializing", "disconnected"]);
    expect(bodySchema(document, "POST", "/_standin/registry/checks").required).toEqual(["CheckID", "Status"]);
    expect(document.paths["/_standin/reset"].post.requestBody.required).toBe(false);
    expect(bodySchema(document, "POST", "/_standin/fixtures").anyOf[0]).toEqual({ $ref: "#/components/schemas/Fixture" });
    expect(document.components.schemas.Fixture).toMatchObject({ type: "object", additionalProperties: false });
    expect(Object.keys(document.components.schemas.Fixture.properties)).toEqual(expect.arrayContaining(["seed", "clock", "scheduler", "registry", "echo", "timeline"]));
  });
});

describe("no drift between the document and the routes", () => {
  /** A fresh emulator with the README's web job placed (2 allocations) and a node client-1; `{id}` of an allocation route is one of them. */
  async function prepared(): Promise<{ emu: Standin; allocID: string }> {
    const emu = await createStandin({ fixture: { scheduler: { nodes: [{ Name: "client-1" }], jobs: [WEB_JOB] } } });
    await emu.scheduler.request("/_standin/clock/advance", { method: "POST", body: JSON.stringify({ by: "12s" }) });
    const allocs = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as { ID: string }[];
    expect(allocs.length).toBeGreaterThan(0);
    return { emu, allocID: allocs[0]!.ID };
  }

  async function send(emu: Standin, method: string, path: string, body: unknown): Promise<{ status: number; body: Json }> {
    const res = await emu.scheduler.request(path, { method, body: JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const concrete = (path: string, allocID: string) => path.replace("allocations/{id}", `allocations/${allocID}`).replace("nodes/{id}", "nodes/client-1");

  it("every JSON example in the README and docs is accepted by the documented schema and by the route", async () => {
    const examples = readmeExamples();
    // The table's rows, the curl lines and the minting block: at least these routes have examples.
    expect([...new Set(examples.map((e) => `${e.method} ${e.path}`))]).toEqual(
      expect.arrayContaining([
        "POST /_standin/clock/advance",
        "POST /_standin/clock/advance-to",
        "POST /_standin/clock/auto",
        "POST /_standin/actions",
        "POST /_standin/await",
        "POST /_standin/scheduler/nodes/{id}",
        "POST /_standin/scheduler/allocations/{id}",
        "POST /_standin/scheduler/nodes/standin",
        "POST /_standin/registry/checks",
        "POST /_standin/echo/tokens",
      ]),
    );
    const document = await openapi((await createStandin()).scheduler);
    for (const example of examples) {
      const template = example.path.replace(/\/nodes\/[^/{]+$/, "/nodes/{id}");
      expect(schemaAccepts(document, example.method, template, example.body), `${example.where}: the schema accepts ${JSON.stringify(example.body)}`).toBe(true);
      const { emu, allocID } = await prepared();
      const answer = await send(emu, example.method, concrete(example.path, allocID), example.body);
      expect(
        helperRejected(answer.status, answer.body),
        `${example.where}: the route accepts ${JSON.stringify(example.body)} (got ${answer.status} ${JSON.stringify(answer.body)})`,
      ).toBe(false);
    }
  });

  // Bodies each route takes, and bodies its schema refuses (the route must answer 400 to those).
  const CASES: { method: string; path: string; good: unknown[]; bad: unknown[] }[] = [
    { method: "POST", path: "/_standin/clock/advance", good: [{ by: "1m" }], bad: [{}, { by: 30 }, { by: "1m", also: true }, [], "1m"] },
    { method: "POST", path: "/_standin/clock/advance-to", good: [{ to: "2026-01-01T00:05:00Z" }], bad: [{ to: 5 }, { to: "2026-01-01T00:05:00Z", by: "1m" }] },
    { method: "POST", path: "/_standin/clock/auto", good: [{ enabled: false }], bad: [{ enabled: "yes" }, {}] },
    { method: "POST", path: "/_standin/reset", good: [{}, { fixture: { seed: 3 } }], bad: [{ fixture: {}, seed: 3 }, null] },
    { method: "POST", path: "/_standin/actions", good: [{ do: "node-eligibility", node: "client-1", eligible: false }], bad: [{}, { do: "" }, { do: 5 }] },
    {
      method: "POST",
      path: "/_standin/await",
      good: [{ until: { deployment: { job: "web", status: "successful" } }, within: "1m" }],
      bad: [{ within: "1m" }, { until: {}, within: 60 }, { until: {}, extra: 1 }, { until: [] }],
    },
    {
      method: "POST",
      path: "/_standin/scheduler/nodes/{id}",
      good: [{ SchedulingEligibility: "ineligible" }, { Drain: true }, { Status: "ready" }],
      bad: [{ Status: "sideways" }, { Drain: "yes" }, { SchedulingEligibility: true }, [], 7],
    },
    { method: "POST", path: "/_standin/scheduler/allocations/{id}", good: [{ ClientStatus: "complete" }], bad: [{ ClientStatus: "exploded" }, { Healthy: "no" }, []] },
    {
      method: "POST",
      path: "/_standin/registry/checks",
      good: [
        { CheckID: "agentHealth", Status: "warning" },
        { Node: "standin", CheckID: "disk", Status: "passing", Output: "ok" },
      ],
      bad: [
        { Status: "passing" },
        { CheckID: "", Status: "passing" },
        { CheckID: "agentHealth" },
        { CheckID: "agentHealth", Status: "sick" },
        { CheckID: "x", Status: "passing", Node: 5 },
      ],
    },
    {
      method: "POST",
      path: "/_standin/echo/tokens",
      good: [{ scheme: "provider_jwt" }, { scheme: "provider_jwt", claims: { sub: null }, expiresIn: "-1m", header: { kid: null }, unsigned: true }],
      bad: [
        {},
        [],
        { scheme: 5 },
        { scheme: "provider_jwt", claims: [] },
        { scheme: "provider_jwt", expiresIn: 60 },
        { scheme: "provider_jwt", header: { alg: "none" } },
        { scheme: "provider_jwt", bogus: 1 },
      ],
    },
  ];

  for (const { method, path, good, bad } of CASES) {
    it(`${method} ${path}: the schema and the route agree on what to accept`, async () => {
      const document = await openapi((await createStandin()).scheduler);
      for (const body of good) {
        expect(schemaAccepts(document, method, path, body), `the schema accepts ${JSON.stringify(body)}`).toBe(true);
        const { emu, allocID } = await prepared();
        const answer = await send(emu, method, concrete(path, allocID), body);
        expect(answer.status, `${JSON.stringify(body)} → ${JSON.stringify(answer.body)}`).toBe(200);
      }
      for (const body of bad) {
        expect(schemaAccepts(document, method, path, body), `the schema refuses ${JSON.stringify(body)}`).toBe(false);
        const { emu, allocID } = await prepared();
        const answer = await send(emu, method, concrete(path, allocID), body);
        expect(answer.status, `${JSON.stringify(body)} → ${JSON.stringify(answer.body)}`).toBe(400);
        expect(answer.body.error).toMatch(/^invalid body: /);
      }
    });
  }

  it("a query the documented parameters refuse is refused by the route", async () => {
    const emu = await createStandin();
    const document = await openapi(emu.scheduler);
    const since = document.paths["/_standin/events"].get.parameters.find((p: Json) => p.name === "since").schema;
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(since, "3")).toBe(true);
    expect(ajv.validate(since, "three")).toBe(false);
    expect((await emu.scheduler.request("/_standin/events?since=3")).status).toBe(200);
    const refused = await emu.scheduler.request("/_standin/events?since=three");
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Json).error).toBe("invalid query: since: expected a whole number");
  });

  it("input errors keep their messages", async () => {
    const emu = await createStandin();
    const post = async (path: string, body: string) => {
      const res = await emu.scheduler.request(path, { method: "POST", body });
      return { status: res.status, body: (await res.json()) as Json };
    };
    expect(await post("/_standin/clock/advance", "")).toEqual({ status: 400, body: { error: "request body is empty; expected a JSON document" } });
    expect((await post("/_standin/clock/advance", "{by")).body.error).toMatch(/^request body is not valid JSON: /);
    expect(await post("/_standin/clock/advance", '{"by":"1m","x":1}')).toEqual({ status: 400, body: { error: "invalid body: x: unknown key" } });
    expect((await post("/_standin/reset", "")).status).toBe(200);
    expect((await post("/_standin/registry/checks", '{"Status":"passing"}')).body.error).toBe("invalid body: CheckID: CheckID is required");
    expect((await post("/_standin/registry/checks", '{"CheckID":"c","Status":"sick"}')).body.error).toBe(
      "invalid body: Status: Status must be one of passing, warning, critical, maintenance",
    );
  });
});
