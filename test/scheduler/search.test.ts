/**
 * Search through the HTTP surface, as Nomad v1.9.7 answers it
 * (nomad/search_endpoint.go): prefix search per context with its UUID rules
 * and the window of 20, fuzzy search with scopes, order and limits, ACL
 * filtering by namespace capability, and the errors for bad requests.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { callScheduler as req } from "../support/call.js";
import { smallJob, webJob } from "../support/jobs.js";

type Json = Record<string, any>;

const fixture = {
  scheduler: {
    namespaces: [{ Name: "prod", Description: "" }],
    nodePools: [{ Name: "gpu" }],
    nodes: [{ Name: "client-web-1" }, { Name: "client-2", NodePool: "gpu" }],
  },
};

/** A job whose parts each carry a name the fuzzy search can find: a group service, a task service, image, command, class. */
function partsJob(id: string, namespace?: string): Json {
  const job = webJob(id, { group: "frontend", task: "nginx-server" });
  if (namespace) job.Namespace = namespace;
  const group = job.TaskGroups[0];
  group.Services = [{ Name: "frontend-http" }];
  group.Tasks[0].Services = [{ Name: "nginx-status" }];
  group.Tasks.push({ Name: "sidecar", Driver: "exec", Config: { command: "/bin/nginx-exporter" }, Resources: { CPU: 10, MemoryMB: 10 } });
  group.Tasks.push({ Name: "report", Driver: "java", Config: { class: "org.example.NginxReport" }, Resources: { CPU: 10, MemoryMB: 10 } });
  return job;
}

async function register(emu: Awaited<ReturnType<typeof createStandin>>, job: Json, token?: string) {
  const res = await req(emu, "PUT", `/v1/jobs${job.Namespace ? `?namespace=${job.Namespace}` : ""}`, { Job: job }, token);
  expect(res.status).toBe(200);
  return res.body as Json;
}

describe("prefix search (PUT /v1/search)", () => {
  it("answers every context: IDs by prefix, names for pools and namespaces, paths for variables, null where nothing matches", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    const { EvalID } = await register(emu, partsJob("frontend"));
    emu.clock.advance("30s");
    expect((await req(emu, "PUT", "/v1/var/frontend/config", { Items: { a: "b" } })).status).toBe(200);
    const alloc = (await req(emu, "GET", "/v1/job/frontend/allocations")).body[0];
    const deployment = (await req(emu, "GET", "/v1/job/frontend/deployment")).body;
    const nodeList = (await req(emu, "GET", "/v1/nodes")).body as Json[];
    const node = nodeList.find((n) => n.Name === "client-web-1")!;

    const all = await req(emu, "PUT", "/v1/search", { Prefix: "", Context: "all" });
    expect(all.status).toBe(200);
    expect(Object.keys(all.body)).toEqual(["Index", "KnownLeader", "LastContact", "Matches", "NextToken", "Truncations"]);
    expect(all.body.Matches).toMatchObject({
      jobs: ["frontend"],
      allocs: [alloc.ID],
      evals: [EvalID],
      deployment: [deployment.ID],
      node_pools: ["all", "default", "gpu"],
      namespaces: ["default", "prod"],
      vars: ["frontend/config"],
      plugins: null,
      volumes: null,
      scaling_policy: null,
    });
    expect(all.body.Matches.nodes).toEqual(nodeList.map((n) => n.ID).sort());
    expect(Object.keys(all.body.Truncations).sort()).toEqual(Object.keys(all.body.Matches).sort());
    expect(all.headers.get("X-Nomad-Index")).toBe(String(all.body.Index));
    expect(all.headers.get("X-Nomad-KnownLeader")).toBe("true");
    expect(all.body).toMatchObject({ KnownLeader: true, LastContact: 0, NextToken: "" });

    // One context: only its key; its index is its table's.
    const nodes = await req(emu, "PUT", "/v1/search", { Prefix: node.ID.slice(0, 8), Context: "nodes" });
    expect(nodes.body.Matches).toEqual({ nodes: [node.ID] });
    expect(nodes.body.Truncations).toEqual({ nodes: false });
    const allocs = await req(emu, "POST", "/v1/search", { Prefix: alloc.ID.slice(0, 4), Context: "allocs" });
    expect(allocs.body.Matches).toEqual({ allocs: [alloc.ID] });
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "fr", Context: "vars" })).body.Matches).toEqual({ vars: ["frontend/config"] });
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "g", Context: "node_pools" })).body.Matches).toEqual({ node_pools: ["gpu"] });
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "pr", Context: "namespaces" })).body.Matches).toEqual({ namespaces: ["prod"] });
  });

  it("searches jobs in the request's namespace, from the query or else the body", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    await register(emu, smallJob("api"));
    await register(emu, smallJob("api-prod", { namespace: "prod" }));
    const jobs = (path: string, body: Json) => req(emu, "PUT", path, { Context: "jobs", ...body }).then((r) => r.body.Matches.jobs);
    expect(await jobs("/v1/search", { Prefix: "api" })).toEqual(["api"]);
    expect(await jobs("/v1/search?namespace=prod", { Prefix: "api" })).toEqual(["api-prod"]);
    expect(await jobs("/v1/search", { Prefix: "api", Namespace: "prod" })).toEqual(["api-prod"]);
    expect(await jobs("/v1/search?namespace=default", { Prefix: "api", Namespace: "prod" })).toEqual(["api"]);
    expect(await jobs("/v1/search?namespace=*", { Prefix: "api" })).toEqual(["api", "api-prod"]);
  });

  it("applies the UUID index's rules: a prefix that is not hex leaves the UUID contexts out; an odd one is rounded down", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    const { EvalID } = await register(emu, smallJob("web"));
    const answer = await req(emu, "PUT", "/v1/search", { Prefix: "web", Context: "all" });
    for (const uuidContext of ["allocs", "evals", "deployment", "nodes"]) {
      expect(answer.body.Matches).not.toHaveProperty(uuidContext);
      expect(answer.body.Truncations).not.toHaveProperty(uuidContext);
    }
    expect(answer.body.Matches.jobs).toEqual(["web"]);
    expect(answer.body.Matches.namespaces).toBeNull();

    const evals = (prefix: string) => req(emu, "PUT", "/v1/search", { Prefix: prefix, Context: "evals" }).then((r) => r.body.Matches);
    expect(await evals(EvalID.slice(0, 3))).toEqual({ evals: [EvalID] }); // odd: rounded down for the index, kept whole for the match
    expect(await evals(EvalID.slice(0, 11))).toEqual({ evals: [EvalID] }); // "xxxxxxxx-yy": hyphens do not count
    expect(await evals(EvalID)).toEqual({ evals: [EvalID] });
    // The index ignores hyphens, the answer does not: the digits without the hyphen find the window but match nothing.
    expect(await evals(EvalID.slice(0, 8) + EvalID.slice(9, 11))).toEqual({ evals: null });
    expect(await evals(`${EvalID}0`)).toEqual({ evals: null }); // 37: rounded to the ID for the index, whole for the match
    expect(await evals(`${EvalID}00`)).toEqual({}); // over 36 characters
    expect(await evals("a-b-c-d-e-f0")).toEqual({}); // five hyphens
    expect(await evals("zz")).toEqual({}); // not hex
  });

  it("matches an upper-case hex prefix in the index but answers only IDs that start with it as sent", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    const { EvalID } = await register(emu, smallJob("web"));
    const upper = EvalID.slice(0, 8).toUpperCase();
    expect(upper).not.toBe(EvalID.slice(0, 8)); // the seeded ID has a letter in its first 8 digits
    const answer = await req(emu, "PUT", "/v1/search", { Prefix: upper, Context: "evals" });
    expect(answer.body.Matches).toEqual({ evals: null });
    expect(answer.body.Truncations).toEqual({ evals: false });
  });

  it("truncates each context at 20, and reads the window by the rounded prefix (fewer matches, still truncated)", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    for (let i = 0; i < 25; i++) await register(emu, smallJob(`cb${String(i).padStart(2, "0")}`, { datacenters: ["nowhere"] }));
    const jobsOnly = await req(emu, "PUT", "/v1/search", { Prefix: "cb", Context: "jobs" });
    expect(jobsOnly.body.Matches.jobs).toHaveLength(20);
    expect(jobsOnly.body.Matches.jobs[19]).toBe("cb19");
    expect(jobsOnly.body.Truncations).toEqual({ jobs: true });
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "cb1", Context: "jobs" })).body).toMatchObject({
      Matches: { jobs: ["cb10", "cb11", "cb12", "cb13", "cb14", "cb15", "cb16", "cb17", "cb18", "cb19"] },
      Truncations: { jobs: false },
    });
    // Context "all": "cb1" is rounded to "cb" to position the scan, so the window is cb00..cb19 and more follow.
    const all = await req(emu, "PUT", "/v1/search", { Prefix: "cb1", Context: "all" });
    expect(all.body.Matches.jobs).toEqual(["cb10", "cb11", "cb12", "cb13", "cb14", "cb15", "cb16", "cb17", "cb18", "cb19"]);
    expect(all.body.Truncations.jobs).toBe(true);
    expect(all.body.Matches.evals).toBeNull(); // "cb1" is odd: rounded to "cb", hex, so evaluations are searched (none match)
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "cb1x", Context: "all" })).body.Matches).not.toHaveProperty("evals"); // even, not hex
  });
});

describe("fuzzy search (PUT /v1/search/fuzzy)", () => {
  it("finds a job's name, groups, services, tasks, image, command and class with their scopes", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    await register(emu, partsJob("nginx-frontend"));
    const answer = await req(emu, "PUT", "/v1/search/fuzzy", { Text: "NGINX", Context: "jobs" });
    expect(answer.status).toBe(200);
    expect(answer.body.Matches).toEqual({
      jobs: [{ ID: "nginx-frontend", Scope: ["default", "nginx-frontend"] }],
      tasks: [{ ID: "nginx-server", Scope: ["default", "nginx-frontend", "frontend"] }],
      services: [{ ID: "nginx-status", Scope: ["default", "nginx-frontend", "frontend", "nginx-server"] }],
      images: [{ ID: "nginx:1", Scope: ["default", "nginx-frontend", "frontend", "nginx-server"] }],
      commands: [{ ID: "/bin/nginx-exporter", Scope: ["default", "nginx-frontend", "frontend", "sidecar"] }],
      classes: [{ ID: "org.example.NginxReport", Scope: ["default", "nginx-frontend", "frontend", "report"] }],
    });
    expect(answer.body.Truncations).toEqual({ jobs: false });
    const groups = await req(emu, "PUT", "/v1/search/fuzzy", { Text: "front", Context: "jobs" });
    expect(groups.body.Matches.groups).toEqual([{ ID: "frontend", Scope: ["default", "nginx-frontend"] }]);
    expect(groups.body.Matches.services).toEqual([{ ID: "frontend-http", Scope: ["default", "nginx-frontend", "frontend"] }]);
  });

  it("answers nodes, pools, namespaces, allocations and variables by name, each with its scope (namespaces none)", async () => {
    const emu = await createStandin({ fixture: { scheduler: { ...fixture.scheduler, nodePools: [{ Name: "web-pool" }], namespaces: [{ Name: "web-team" }] } } as never });
    await register(emu, smallJob("webapp", { group: "web" }));
    emu.clock.advance("30s");
    expect((await req(emu, "PUT", "/v1/var/web/config", { Items: { a: "b" } })).status).toBe(200);
    const alloc = (await req(emu, "GET", "/v1/job/webapp/allocations")).body[0];
    const node = (await req(emu, "GET", "/v1/nodes")).body.find((n: Json) => n.Name === "client-web-1");
    const answer = await req(emu, "PUT", "/v1/search/fuzzy", { Text: "web", Context: "all" });
    expect(answer.body.Matches).toMatchObject({
      nodes: [{ ID: "client-web-1", Scope: [node.ID] }],
      node_pools: [{ ID: "web-pool", Scope: ["web-pool"] }],
      namespaces: [{ ID: "web-team" }],
      allocs: [{ ID: "webapp.web[0]", Scope: ["default", alloc.ID] }],
      vars: [{ ID: "web/config", Scope: ["default", "web/config"] }],
      jobs: [{ ID: "webapp", Scope: ["default", "webapp"] }],
      groups: [{ ID: "web", Scope: ["default", "webapp"] }],
      evals: [],
      deployment: [],
      scaling_policy: [],
      volumes: [],
    });
    expect(answer.body.Matches.namespaces[0]).not.toHaveProperty("Scope");
    // Every fuzzy context answers its truncation; the prefix-searched ones too.
    expect(Object.keys(answer.body.Truncations).sort()).toEqual(
      ["allocs", "deployment", "evals", "jobs", "namespaces", "node_pools", "nodes", "plugins", "scaling_policy", "vars", "volumes"].sort(),
    );
    expect(answer.headers.get("X-Nomad-Index")).toBe(String(answer.body.Index));
  });

  it("orders matches by position, then length, then name", async () => {
    const emu = await createStandin();
    for (const id of ["zz-cache", "cache-b", "cache", "cache-a", "my-cache"]) await register(emu, smallJob(id, { datacenters: ["nowhere"] }));
    const answer = await req(emu, "PUT", "/v1/search/fuzzy", { Text: "cache", Context: "jobs" });
    expect(answer.body.Matches.jobs.map((m: Json) => m.ID)).toEqual(["cache", "cache-a", "cache-b", "my-cache", "zz-cache"]);
  });

  it("scans 20 objects per context: the 20th adds one match and marks the truncation", async () => {
    const emu = await createStandin();
    for (let i = 0; i < 25; i++) await register(emu, smallJob(`batch-${String(i).padStart(2, "0")}`, { group: "batch-group", datacenters: ["nowhere"] }));
    const answer = await req(emu, "PUT", "/v1/search/fuzzy", { Text: "batch", Context: "jobs" });
    expect(answer.body.Matches.jobs).toHaveLength(20);
    // The 20th job stops after its first match: its group is not taken, and groups are not marked truncated.
    expect(answer.body.Matches.groups).toHaveLength(19);
    expect(answer.body.Truncations).toEqual({ jobs: true });
  });

  it("keeps 100 matches per context: a job of 120 matching groups answers 100 and marks groups truncated", async () => {
    const emu = await createStandin();
    const job = smallJob("wide", { datacenters: ["nowhere"] });
    const task = job.TaskGroups[0].Tasks[0];
    job.TaskGroups = Array.from({ length: 120 }, (_, i) => ({ Name: `shard-${String(i).padStart(3, "0")}`, Count: 1, Tasks: [task] }));
    await register(emu, job);
    const answer = await req(emu, "PUT", "/v1/search/fuzzy", { Text: "shard", Context: "jobs" });
    expect(answer.body.Matches.groups).toHaveLength(100);
    expect(answer.body.Matches.groups[99].ID).toBe("shard-099");
    expect(answer.body.Truncations).toEqual({ jobs: false, groups: true });
  });

  it("searches evaluations and deployments by ID prefix, without scope", async () => {
    const emu = await createStandin({ fixture: fixture as never });
    const { EvalID } = await register(emu, smallJob("web"));
    const answer = await req(emu, "PUT", "/v1/search/fuzzy", { Text: EvalID.slice(0, 6), Context: "evals" });
    expect(answer.body.Matches).toEqual({ evals: [{ ID: EvalID }] });
    expect(answer.body.Truncations).toEqual({ evals: false });
  });

  it("refuses a term shorter than 2 bytes and a context Nomad does not know", async () => {
    const emu = await createStandin();
    expect(await req(emu, "PUT", "/v1/search/fuzzy", { Text: "a", Context: "all" })).toMatchObject({
      status: 500,
      text: "fuzzy search query must be at least 2 characters, got 1",
    });
    expect((await req(emu, "PUT", "/v1/search/fuzzy", { Text: "é", Context: "all" })).status).toBe(200); // 2 bytes
    expect(await req(emu, "PUT", "/v1/search/fuzzy", { Text: "ab", Context: "groups" })).toMatchObject({
      status: 500,
      text: "context must be one of [allocs jobs nodes node_pools evals deployment plugins volumes scaling_policy vars namespaces] or 'all' for all contexts; got \"groups\"",
    });
  });
});

describe("search ACLs", () => {
  const MGMT = "20000000-0000-0000-0000-000000000001";
  const PROD = "20000000-0000-0000-0000-000000000002";
  const PLUGINS = "20000000-0000-0000-0000-000000000003";
  const aclFixture = {
    scheduler: {
      namespaces: [{ Name: "prod" }],
      acl: {
        enabled: true,
        policies: [
          { Name: "prod-read", Rules: 'namespace "prod" {\n  policy = "read"\n  variables {\n    path "*" { capabilities = ["read"] }\n  }\n}' },
          { Name: "plugins", Rules: 'plugin { policy = "list" }' },
        ],
        tokens: [
          { SecretID: MGMT, Name: "root", Type: "management" },
          { SecretID: PROD, Name: "prod", Policies: ["prod-read"] },
          { SecretID: PLUGINS, Name: "plugins", Policies: ["plugins"] },
        ],
      },
    },
  };

  async function seeded() {
    const emu = await createStandin({ fixture: aclFixture as never });
    await register(emu, smallJob("app-default"), MGMT);
    await register(emu, smallJob("app-prod", { namespace: "prod" }), MGMT);
    expect((await req(emu, "PUT", "/v1/var/app/prod?namespace=prod", { Items: { a: "b" } }, MGMT)).status).toBe(200);
    expect((await req(emu, "PUT", "/v1/var/app/default", { Items: { a: "b" } }, MGMT)).status).toBe(200);
    return emu;
  }

  it("refuses a context asked for by name in a namespace the token cannot read, and leaves unreadable contexts out of `all`", async () => {
    const emu = await seeded();
    expect(await req(emu, "PUT", "/v1/search", { Prefix: "app", Context: "jobs" }, PROD)).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "app", Context: "nodes" }, PROD)).status).toBe(403);
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "app", Context: "all" }, PROD)).body.Matches).toEqual({});
    const prod = await req(emu, "PUT", "/v1/search?namespace=prod", { Prefix: "app", Context: "all" }, PROD);
    expect(prod.body.Matches).toEqual({
      jobs: ["app-prod"],
      namespaces: null,
      scaling_policy: null,
      vars: ["app/prod"],
      volumes: null,
    });
    // Variables are searched by path in every namespace, each kept only where the token may search variables.
    expect((await req(emu, "PUT", "/v1/search?namespace=prod", { Prefix: "app/", Context: "vars" }, MGMT)).body.Matches.vars).toEqual(["app/default", "app/prod"]);
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "app", Context: "all" }, "20000000-0000-0000-0000-00000000dead")).status).toBe(403);
  });

  it("filters fuzzy results across `*` object by object", async () => {
    const emu = await seeded();
    const answer = await req(emu, "PUT", "/v1/search/fuzzy?namespace=*", { Text: "app", Context: "all" }, PROD);
    expect(answer.body.Matches.jobs).toEqual([{ ID: "app-prod", Scope: ["prod", "app-prod"] }]);
    expect(answer.body.Matches.vars).toEqual([{ ID: "app/prod", Scope: ["prod", "app/prod"] }]);
    const everything = await req(emu, "PUT", "/v1/search/fuzzy?namespace=*", { Text: "app", Context: "all" }, MGMT);
    expect(everything.body.Matches.jobs.map((m: Json) => m.ID)).toEqual(["app-prod", "app-default"]); // same position: the shorter first
    const names = await req(emu, "PUT", "/v1/search/fuzzy?namespace=*", { Text: "prod", Context: "namespaces" }, PROD);
    expect(names.body.Matches).toEqual({ namespaces: [{ ID: "prod" }] });
    expect((await req(emu, "PUT", "/v1/search/fuzzy", { Text: "app", Context: "jobs" }, PROD)).status).toBe(403);
    // In one namespace the token cannot read, `all` leaves every context out.
    expect((await req(emu, "PUT", "/v1/search/fuzzy", { Text: "app", Context: "all" }, PROD)).body).toMatchObject({ Matches: {}, Truncations: {} });
  });

  it("answers plugins to a token with a plugin policy only", async () => {
    const emu = await seeded();
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "", Context: "plugins" }, PROD)).status).toBe(403);
    expect((await req(emu, "PUT", "/v1/search", { Prefix: "", Context: "plugins" }, PLUGINS)).body.Matches).toEqual({ plugins: null });
  });
});

describe("search requests Nomad refuses", () => {
  it("answers Nomad's status and text for methods, bodies, types and contexts", async () => {
    const emu = await createStandin();
    for (const path of ["/v1/search", "/v1/search/fuzzy"]) {
      expect(await req(emu, "GET", path)).toMatchObject({ status: 405, text: "Invalid method" });
      expect(await req(emu, "PUT", path)).toMatchObject({ status: 400, text: "Request body is empty" });
      expect(await req(emu, "PUT", path, "{")).toMatchObject({ status: 400, text: "unexpected EOF" });
    }
    expect(await req(emu, "PUT", "/v1/search", [1])).toMatchObject({ status: 400, text: "json: cannot unmarshal array into Go value of type structs.SearchRequest" });
    expect(await req(emu, "PUT", "/v1/search", { Prefix: 1, Context: "all" })).toMatchObject({
      status: 400,
      text: "json: cannot unmarshal number into Go struct field SearchRequest.Prefix of type string",
    });
    expect(await req(emu, "PUT", "/v1/search/fuzzy", { Text: "ab", Context: true })).toMatchObject({
      status: 400,
      text: "json: cannot unmarshal bool into Go struct field FuzzySearchRequest.Context of type structs.Context",
    });
    expect(await req(emu, "PUT", "/v1/search", { Prefix: "a" })).toMatchObject({ status: 500, text: expect.stringMatching(/or 'all' for all contexts; got ""$/) });
    expect(await req(emu, "PUT", "/v1/search", { Prefix: "a", Context: "quotas" })).toMatchObject({ status: 500, text: expect.stringMatching(/got "quotas"$/) });
    expect(await req(emu, "PUT", "/v1/search", { Prefix: "a", Context: "all", Region: "mars" })).toMatchObject({ status: 500, text: "No path to region" });
    expect((await req(emu, "GET", "/v1/search/")).status).toBe(404);
  });
});
