/**
 * Scheduler ACLs through the HTTP surface: bootstrap, policies, tokens, each
 * capability the routes check, each 403, lists limited to what a token sees.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { smallJob } from "../support/jobs.js";

type Json = Record<string, any>;

let emu: Standin;

async function call(path: string, init: { method?: string; token?: string; bearer?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = {};
  if (init.token) headers["X-Nomad-Token"] = init.token;
  if (init.bearer) headers.Authorization = `Bearer ${init.bearer}`;
  const res = await emu.scheduler.request(path, { method: init.method ?? "GET", headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body };
}

function job(id: string, namespace = "default"): Json {
  return smallJob(id, { namespace, datacenters: null });
}

const MGMT = "00000000-0000-0000-0000-00000000000m".replace("m", "1");
const READER = "11111111-1111-1111-1111-111111111111";
const WRITER = "22222222-2222-2222-2222-222222222222";
const OPS = "33333333-3333-3333-3333-333333333333";

beforeEach(async () => {
  emu = await createStandin({
    fixture: {
      scheduler: {
        namespaces: [{ Name: "prod" }, { Name: "dev-a" }, { Name: "dev-b" }],
        jobs: [job("web"), job("api", "prod"), job("tool", "dev-a")],
        acl: {
          enabled: true,
          policies: [
            { Name: "readonly", Description: "read default", Rules: 'namespace "default" { policy = "read" }' },
            {
              Name: "deployer",
              Rules: JSON.stringify({ namespace: { prod: { policy: "write" }, "dev-*": { capabilities: ["list-jobs", "read-job"] }, "dev-b": { policy: "deny" } } }),
            },
            { Name: "ops", Rules: 'node { policy = "read" }\nagent { policy = "read" }\n# operators too\noperator { policy = "read" }' },
          ],
          tokens: [
            { SecretID: MGMT, Name: "root", Type: "management" },
            { SecretID: READER, Name: "reader", Type: "client", Policies: ["readonly"] },
            { SecretID: WRITER, Name: "deployer", Type: "client", Policies: ["deployer"] },
            { SecretID: OPS, Name: "ops", Type: "client", Policies: ["ops"] },
          ],
        },
      },
    },
  });
});

describe("tokens on requests", () => {
  it("anonymous with no anonymous policy is denied; an unknown secret is denied too (Nomad 1.7+'s Authenticate)", async () => {
    expect(await call("/v1/jobs")).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await call("/v1/jobs", { token: "no-such-secret" })).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await call("/v1/jobs", { token: "44444444-4444-4444-4444-444444444444" })).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await call("/v1/status/leader")).status).toBe(200); // no capability needed
  });

  it("X-Nomad-Token and Authorization: Bearer both carry the token", async () => {
    expect((await call("/v1/jobs", { token: READER })).status).toBe(200);
    expect((await call("/v1/jobs", { bearer: READER })).status).toBe(200);
  });

  it("an anonymous policy applies to requests without a token", async () => {
    expect(
      (await call("/v1/acl/policy/anonymous", { method: "POST", token: MGMT, body: { Name: "anonymous", Rules: 'namespace "default" { capabilities = ["list-jobs"] }' } })).status,
    ).toBe(200);
    const list = await call("/v1/jobs");
    expect(list.status).toBe(200);
    expect(list.body.map((j: Json) => j.ID)).toEqual(["web"]);
    expect((await call("/v1/job/web")).status).toBe(403); // list-jobs is not read-job
  });
});

describe("namespace capabilities", () => {
  it("read: list and read jobs, their allocations, evaluations and deployments; not submit", async () => {
    expect((await call("/v1/job/web", { token: READER })).status).toBe(200);
    expect((await call("/v1/job/web/allocations", { token: READER })).status).toBe(200);
    expect((await call("/v1/evaluations", { token: READER })).status).toBe(200);
    expect((await call("/v1/deployments", { token: READER })).status).toBe(200);
    const before = await call("/v1/job/web", { token: MGMT });
    const put = await call("/v1/jobs", { method: "PUT", token: READER, body: { Job: { ...job("web"), Meta: { x: "1" } } } });
    expect(put).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await call("/v1/job/web", { token: MGMT })).body.ModifyIndex).toBe(before.body.ModifyIndex); // nothing written
    expect((await call("/v1/job/web", { method: "DELETE", token: READER })).status).toBe(403);
    expect((await call("/v1/job/web?namespace=prod", { token: READER })).status).toBe(403);
  });

  it("write: submit, scale and dispatch in prod only", async () => {
    expect((await call("/v1/jobs?namespace=prod", { method: "PUT", token: WRITER, body: { Job: { ...job("api", "prod"), Meta: { v: "2" } } } })).status).toBe(200);
    expect((await call("/v1/job/api/scale?namespace=prod", { method: "POST", token: WRITER, body: { Count: 2, Target: { Group: "g" } } })).status).toBe(200);
    expect((await call("/v1/jobs", { method: "PUT", token: WRITER, body: { Job: job("web") } })).status).toBe(403);
  });

  it("glob namespaces give their capabilities; an exact deny wins over the glob", async () => {
    expect((await call("/v1/job/tool?namespace=dev-a", { token: WRITER })).status).toBe(200);
    expect((await call("/v1/jobs?namespace=dev-a", { method: "PUT", token: WRITER, body: { Job: job("tool", "dev-a") } })).status).toBe(403);
    expect((await call("/v1/jobs?namespace=dev-b", { token: WRITER })).status).toBe(403);
  });

  it("namespace=* lists only what the token may see", async () => {
    emu.clock.advance("5s"); // allocations placed
    const writer = await call("/v1/jobs?namespace=*", { token: WRITER });
    expect(writer.status).toBe(200);
    expect(writer.body.map((j: Json) => `${j.Namespace}/${j.ID}`)).toEqual(["dev-a/tool", "prod/api"]);
    const reader = await call("/v1/allocations?namespace=*", { token: READER });
    expect(new Set(reader.body.map((a: Json) => a.Namespace))).toEqual(new Set(["default"]));
    const all = await call("/v1/jobs?namespace=*", { token: MGMT });
    expect(all.body.length).toBe(3);
    const namespaces = await call("/v1/namespaces", { token: WRITER });
    expect(namespaces.body.map((n: Json) => n.Name)).toEqual(["dev-a", "prod"]);
  });
});

describe("node, agent and namespace rules", () => {
  it("node read lists nodes; agent read reads self; neither without the rule", async () => {
    expect((await call("/v1/nodes", { token: OPS })).status).toBe(200);
    expect((await call("/v1/agent/self", { token: OPS })).status).toBe(200);
    expect((await call("/v1/nodes", { token: READER })).status).toBe(403);
    expect((await call("/v1/agent/self", { token: READER })).status).toBe(403);
    expect((await call("/v1/job/web", { token: OPS })).status).toBe(403);
  });

  it("namespace writes need a management token", async () => {
    expect((await call("/v1/namespace/new", { method: "POST", token: WRITER, body: { Name: "new" } })).status).toBe(403);
    expect((await call("/v1/namespace/new", { method: "POST", token: MGMT, body: { Name: "new" } })).status).toBe(200);
  });
});

describe("ACL endpoints", () => {
  /** ACLs on, no token seeded: a cluster nobody has bootstrapped yet. */
  const unbootstrapped = async () => {
    emu = await createStandin({
      fixture: { scheduler: { namespaces: [{ Name: "prod" }, { Name: "dev-a" }], jobs: [job("web"), job("api", "prod"), job("tool", "dev-a")], acl: { enabled: true } } },
    });
  };

  it("a cluster seeded with a management token is bootstrapped: anonymous bootstrap is refused with the index the fixture wrote it at", async () => {
    const token = (await call(`/v1/acl/token/self`, { token: MGMT })).body;
    const hash = emu.stateHash();
    const res = await call("/v1/acl/bootstrap", { method: "POST" });
    expect(res).toMatchObject({ status: 400, text: `ACL bootstrap already done (reset index: ${token.CreateIndex})` });
    expect(emu.stateHash()).toBe(hash);
    expect((await call("/v1/acl/tokens", { token: MGMT })).body.filter((t: Json) => t.Type === "management")).toHaveLength(1);
  });

  it("bootstrap once: a management token, then 400 with the reset index", async () => {
    await unbootstrapped();
    const first = await call("/v1/acl/bootstrap", { method: "POST" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ Name: "Bootstrap Token", Type: "management", Global: true, Policies: null });
    expect(first.body.SecretID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await call("/v1/jobs?namespace=*", { token: first.body.SecretID })).body.length).toBe(3);
    const second = await call("/v1/acl/bootstrap", { method: "POST" });
    expect(second).toMatchObject({ status: 400, text: `ACL bootstrap already done (reset index: ${first.body.CreateIndex})` });
  });

  it("bootstrap ignores whatever token the caller sends; a BootstrapSecret must be a UUID", async () => {
    await unbootstrapped();
    expect(await call("/v1/acl/bootstrap", { method: "POST", body: { BootstrapSecret: "not-a-uuid" } })).toMatchObject({ status: 400, text: "invalid acl token" });
    const chosen = "77777777-7777-7777-7777-777777777777";
    const first = await call("/v1/acl/bootstrap", { method: "POST", token: "stale-token-from-the-environment", body: { BootstrapSecret: chosen } });
    expect(first.status).toBe(200);
    expect(first.body.SecretID).toBe(chosen);
  });

  it("the anonymous policy: listed for and readable by anyone", async () => {
    await call("/v1/acl/policy/anonymous", { method: "POST", token: MGMT, body: { Name: "anonymous", Rules: 'namespace "default" { capabilities = ["list-jobs"] }' } });
    expect((await call("/v1/acl/policies")).body.map((p: Json) => p.Name)).toEqual(["anonymous"]);
    expect((await call("/v1/acl/policy/anonymous", { token: READER })).body.Name).toBe("anonymous");
    expect((await call("/v1/acl/policy/readonly")).status).toBe(403);
  });

  it("policies: list (stubs), read, upsert, delete; management only for writes", async () => {
    const list = await call("/v1/acl/policies", { token: MGMT });
    expect(list.body.map((p: Json) => p.Name)).toEqual(["deployer", "ops", "readonly"]);
    expect(list.body[0].Rules).toBeUndefined();
    const own = await call("/v1/acl/policies", { token: READER });
    expect(own.body.map((p: Json) => p.Name)).toEqual(["readonly"]);
    const one = await call("/v1/acl/policy/readonly", { token: MGMT });
    expect(one.body).toMatchObject({ Name: "readonly", Description: "read default", Rules: 'namespace "default" { policy = "read" }' });
    expect((await call("/v1/acl/policy/ops", { token: READER })).status).toBe(403);
    expect((await call("/v1/acl/policy/nope", { token: MGMT })).text).toBe("ACL policy not found");
    expect((await call("/v1/acl/policy/x", { method: "POST", token: READER, body: { Name: "x", Rules: "" } })).status).toBe(403);
    // The body's Name must be the path's, even when left out (checked before the token).
    expect((await call("/v1/acl/policy/x", { method: "POST", token: MGMT, body: { Name: "y", Rules: "" } })).text).toBe("ACL policy name does not match request path");
    expect((await call("/v1/acl/policy/x", { method: "POST", token: READER, body: { Rules: "" } })).text).toBe("ACL policy name does not match request path");
    expect(await call("/v1/acl/policy/", { token: MGMT })).toMatchObject({ status: 400, text: "Missing Policy Name" });
    expect((await call("/v1/acl/policy/readonly", { method: "DELETE", token: MGMT })).status).toBe(200);
    // Deleting a policy that is not there is still a successful write.
    const again = await emu.scheduler.request("/v1/acl/policy/readonly", { method: "DELETE", headers: { "X-Nomad-Token": MGMT } });
    expect(again.status).toBe(200);
    expect(Number(again.headers.get("X-Nomad-Index"))).toBeGreaterThan(0);
    expect((await call("/v1/job/web", { token: READER })).status).toBe(403); // its only policy is gone
  });

  it("bad rules are a 400 and write nothing", async () => {
    const bad = await call("/v1/acl/policy/bad", { method: "POST", token: MGMT, body: { Name: "bad", Rules: 'namespace "default" { policy = "admin" }' } });
    expect(bad.status).toBe(400);
    // Nomad prints the rejected block with Go's %#v, inside a one-error multierror.
    expect(bad.text).toBe(
      'policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Invalid namespace policy: &acl.NamespacePolicy{Name:"default", Policy:"admin", Capabilities:[]string(nil), Variables:(*acl.VariablesPolicy)(nil)}\n\n',
    );
    const badCap = await call("/v1/acl/policy/bad", { method: "POST", token: MGMT, body: { Name: "bad", Rules: 'namespace "default" { capabilities = ["read-job", "fly"] }' } });
    expect(badCap.text).toBe(
      'policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Invalid namespace capability \'fly\': &acl.NamespacePolicy{Name:"default", Policy:"", Capabilities:[]string{"read-job", "fly"}, Variables:(*acl.VariablesPolicy)(nil)}\n\n',
    );
    const badNode = await call("/v1/acl/policy/bad", { method: "POST", token: MGMT, body: { Name: "bad", Rules: 'node { policy = "admin" }' } });
    expect(badNode.text).toBe('policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Invalid node policy: &acl.NodePolicy{Policy:"admin"}\n\n');
    const badName = await call("/v1/acl/policy/bad", { method: "POST", token: MGMT, body: { Name: "bad", Rules: 'namespace "a b" { policy = "read" }' } });
    expect(badName.text).toContain('Invalid namespace name: &acl.NamespacePolicy{Name:"a b", Policy:"read"');
    const nothing = await call("/v1/acl/policy/bad", { method: "POST", token: MGMT, body: { Name: "bad", Rules: "# nothing here" } });
    expect(nothing.text).toBe("policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Invalid policy: # nothing here\n\n");
    const unclosed = await call("/v1/acl/policy/bad", { method: "POST", token: MGMT, body: { Name: "bad", Rules: 'namespace "default" {' } });
    expect(unclosed.status).toBe(400);
    expect(unclosed.text).toContain("failed to parse rules: Failed to parse ACL Policy: ");
    // Every problem at once, in Nomad's order: name, rules, description.
    const many = await call("/v1/acl/policy/b_d", { method: "POST", token: MGMT, body: { Name: "b_d", Rules: 'x = "y"', Description: "d".repeat(257) } });
    expect(many.text).toBe(
      "policy 0 invalid: 3 errors occurred:\n\t* invalid name 'b_d'\n\t* failed to parse rules: Invalid policy: x = \"y\"\n\t* description longer than 256\n\n",
    );
    // "scale" is a valid level for node rules too (it grants nothing there).
    expect((await call("/v1/acl/policy/scaler", { method: "POST", token: MGMT, body: { Name: "scaler", Rules: 'node { policy = "scale" }' } })).status).toBe(200);
    const broken = await emu.scheduler.request("/v1/acl/policy/bad", { method: "POST", headers: { "X-Nomad-Token": MGMT }, body: "{" });
    expect(broken.status).toBe(400);
    expect(await broken.text()).toBe("unexpected EOF");
    expect((await call("/v1/acl/policy/bad", { token: MGMT })).status).toBe(404);
  });

  it("tokens: create, list without secrets, read, self, update, delete", async () => {
    const created = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Name: "ci", Type: "client", Policies: ["readonly"] } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ Name: "ci", Type: "client", Policies: ["readonly"], Global: false, Roles: null, CreateTime: "2026-01-01T00:00:00Z" });
    const { AccessorID, SecretID } = created.body;
    const list = await call("/v1/acl/tokens", { token: MGMT });
    expect(list.body.length).toBe(5);
    expect(list.body.every((t: Json) => t.SecretID === undefined)).toBe(true);
    expect((await call("/v1/acl/tokens", { token: READER })).status).toBe(403);
    expect((await call(`/v1/acl/token/${AccessorID}`, { token: SecretID })).body.SecretID).toBe(SecretID);
    expect((await call("/v1/acl/token/self", { token: SecretID })).body.AccessorID).toBe(AccessorID);
    // token/self is Nomad's ResolveToken RPC: no secret is a 500, an unknown one 404.
    expect(await call("/v1/acl/token/self")).toMatchObject({ status: 500, text: "acl token lookup failed: missing secret id" });
    expect(await call("/v1/acl/token/self", { token: "44444444-4444-4444-4444-444444444444" })).toMatchObject({ status: 404, text: "ACL token not found" });
    expect(await call("/v1/acl/token/", { token: MGMT })).toMatchObject({ status: 400, text: "Missing Token Accessor" });
    expect((await call(`/v1/acl/token/${AccessorID}`, { token: READER })).status).toBe(403);
    // An update is the whole token (Type too); it keeps the secret and the creation time.
    const partial = await call(`/v1/acl/token/${AccessorID}`, { method: "POST", token: MGMT, body: { Name: "ci-2", Policies: ["ops"] } });
    expect(partial).toMatchObject({ status: 400, text: "token 0 invalid: 1 error occurred:\n\t* token type must be client or management\n\n" });
    const updated = await call(`/v1/acl/token/${AccessorID}`, { method: "POST", token: MGMT, body: { Name: "ci-2", Type: "client", Policies: ["ops"] } });
    expect(updated.body).toMatchObject({ Name: "ci-2", Policies: ["ops"], SecretID });
    const toggled = await call(`/v1/acl/token/${AccessorID}`, { method: "POST", token: MGMT, body: { Name: "ci-2", Type: "client", Policies: ["ops"], Global: true } });
    expect(toggled.text).toBe("token 0 invalid: 1 error occurred:\n\t* cannot toggle global mode\n\n");
    const mismatch = await call(`/v1/acl/token/${AccessorID}`, { method: "POST", token: MGMT, body: { AccessorID: "other", Type: "client", Policies: ["ops"] } });
    expect(mismatch).toMatchObject({ status: 400, text: "ACL token accessor does not match request path" });
    // POST /v1/acl/token with an AccessorID updates that token; an unknown one is refused.
    const viaBody = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { AccessorID, Name: "ci-3", Type: "client", Policies: ["ops"] } });
    expect(viaBody.body).toMatchObject({ AccessorID, Name: "ci-3", SecretID });
    const ghost = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { AccessorID: "55555555-5555-5555-5555-555555555555", Type: "management" } });
    expect(ghost).toMatchObject({ status: 400, text: "cannot find token 55555555-5555-5555-5555-555555555555" });
    expect((await call("/v1/nodes", { token: SecretID })).status).toBe(200);
    expect((await call(`/v1/acl/token/${AccessorID}`, { method: "DELETE", token: MGMT })).status).toBe(200);
    expect((await call("/v1/nodes", { token: SecretID })).text).toBe("Permission denied");
  });

  it("token validation: ACLToken.Validate's errors, all at once; a given SecretID is replaced", async () => {
    const one = (text: string) => `token 0 invalid: 1 error occurred:\n\t* ${text}\n\n`;
    const errors = [
      { body: { Type: "client" }, text: one("client token missing policies or roles") },
      { body: { Type: "management", Policies: ["ops"] }, text: one("management token cannot be associated with policies or roles") },
      { body: { Type: "root" }, text: one("token type must be client or management") },
      { body: { Policies: ["ops"] }, text: one("token type must be client or management") },
      { body: { Name: "n".repeat(257), Type: "client" }, text: "token 0 invalid: 2 errors occurred:\n\t* token name too long\n\t* client token missing policies or roles\n\n" },
    ];
    for (const { body, text } of errors) {
      const res = await call("/v1/acl/token", { method: "POST", token: MGMT, body });
      expect(res).toMatchObject({ status: 400, text });
    }
    expect((await call("/v1/acl/tokens", { token: MGMT })).body.length).toBe(4);
    // Nomad does not check that a token's policies exist, and it makes its own secret.
    const ghost = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Type: "client", Policies: ["ghost"], SecretID: "66666666-6666-6666-6666-666666666666" } });
    expect(ghost.status).toBe(200);
    expect(ghost.body.SecretID).not.toBe("66666666-6666-6666-6666-666666666666");
    expect((await call("/v1/jobs", { token: ghost.body.SecretID })).status).toBe(403); // a missing policy grants nothing
  });

  it("with ACLs disabled, tokens are ignored and the ACL endpoints say so", async () => {
    const open = await createStandin({});
    expect((await open.scheduler.request("/v1/jobs", { headers: { "X-Nomad-Token": "garbage" } })).status).toBe(200);
    const res = await open.scheduler.request("/v1/acl/bootstrap", { method: "POST" });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("ACL support disabled");
  });

  it("ACL state survives snapshot and restore", async () => {
    const created = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Type: "client", Policies: ["readonly"] } });
    const snap = await (await emu.scheduler.request("/_standin/snapshot")).text();
    await call(`/v1/acl/token/${created.body.AccessorID}`, { method: "DELETE", token: MGMT });
    expect((await call("/v1/jobs", { token: created.body.SecretID })).status).toBe(403);
    expect((await emu.scheduler.request("/_standin/snapshot", { method: "PUT", body: snap })).status).toBe(200);
    expect((await call("/v1/jobs", { token: created.body.SecretID })).status).toBe(200);
  });
});

describe("policy rule forms", () => {
  it("HCL's JSON array form and the closest glob", async () => {
    const rules = JSON.stringify({ namespace: [{ "*": [{ policy: "read" }] }, { "dev-*": [{ policy: "deny" }] }] });
    expect((await call("/v1/acl/policy/globs", { method: "POST", token: MGMT, body: { Name: "globs", Rules: rules } })).status).toBe(200);
    const token = (await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Type: "client", Policies: ["globs"] } })).body.SecretID;
    expect((await call("/v1/job/api?namespace=prod", { token })).status).toBe(200); // "*" only
    expect((await call("/v1/job/tool?namespace=dev-a", { token })).status).toBe(403); // "dev-*" is closer than "*"
    const all = await call("/v1/jobs?namespace=*", { token });
    expect(all.body.map((j: Json) => j.ID)).toEqual(["web", "api"]);
  });

  it("HCL comments, multi-line lists and merged policies", async () => {
    const rules = `
      /* block comment */
      namespace "default" {
        // no policy shorthand, only capabilities
        capabilities = [
          "list-jobs",
          "read-job",
        ]
      }`;
    expect((await call("/v1/acl/policy/caps", { method: "POST", token: MGMT, body: { Name: "caps", Rules: rules } })).status).toBe(200);
    const token = (await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Type: "client", Policies: ["caps", "ops"] } })).body.SecretID;
    expect((await call("/v1/job/web", { token })).status).toBe(200);
    expect((await call("/v1/nodes", { token })).status).toBe(200);
    expect((await call("/v1/job/web", { method: "DELETE", token })).status).toBe(403);
  });
});

describe("event stream ACLs", () => {
  const open = async (query: string, token?: string) => {
    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/event/stream${query}`, { headers: token ? { "X-Nomad-Token": token } : {}, signal: controller.signal });
    const text = res.status === 200 ? "" : await res.text();
    controller.abort();
    await res.body?.cancel().catch(() => {});
    return { status: res.status, text };
  };

  it("job topics need read-job in the namespace, node topics node read, all topics management", async () => {
    expect(await open("?topic=Job")).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await open("?topic=Job", "no-such")).toMatchObject({ status: 403, text: "ACL token not found" });
    expect((await open("?topic=Job&topic=Allocation", READER)).status).toBe(200);
    expect((await open("?topic=Job&namespace=prod", READER)).status).toBe(403);
    expect((await open("?topic=Node", READER)).status).toBe(403);
    expect((await open("?topic=Node", OPS)).status).toBe(200);
    expect((await open("", READER)).status).toBe(403);
    expect((await open("", MGMT)).status).toBe(200);
  });
});

describe("request bodies (regression)", () => {
  it("a truncated job body is Go's unexpected EOF, not an 'undefined' character", async () => {
    const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", headers: { "X-Nomad-Token": MGMT }, body: '{"Job": {' });
    expect(res.status).toBe(400);
    expect(await res.text()).toBe("unexpected EOF");
  });
});

describe("job writes are checked in the job's namespace", () => {
  it("/v1/jobs/parse needs parse-job (in read) or submit-job in the namespace asked", async () => {
    const body = { JobHCL: 'job "x" {}' };
    expect((await call("/v1/jobs/parse", { method: "POST", token: READER, body })).status).toBe(200);
    expect((await call("/v1/jobs/parse?namespace=prod", { method: "POST", token: WRITER, body })).status).toBe(200);
    const denied = await call("/v1/jobs/parse", { method: "POST", token: WRITER, body });
    expect([denied.status, denied.text]).toEqual([403, "Permission denied"]);
    expect((await call("/v1/jobs/parse", { method: "POST", token: OPS, body })).status).toBe(403);
    expect((await call("/v1/jobs/parse", { method: "POST", body })).status).toBe(403);
  });

  it("a body naming prod needs submit-job in prod, whatever ?namespace= says", async () => {
    // The deployer may write prod only: its job body's namespace decides, as Nomad's.
    expect((await call("/v1/jobs", { method: "PUT", token: WRITER, body: { Job: { ...job("api", "prod"), Meta: { v: "3" } } } })).status).toBe(200);
    expect((await call("/v1/jobs?namespace=prod", { method: "PUT", token: WRITER, body: { Job: job("web", "default") } })).status).toBe(403);
    expect((await call("/v1/job/api", { method: "POST", token: WRITER, body: { job: { ...job("api", "prod"), Meta: { v: "4" } } } })).status).toBe(200);
  });
});

describe("ACL events on the stream", () => {
  /** Opens a stream and returns a reader of its frames (heartbeats dropped) and its closer. */
  const stream = async (query: string, token: string, fromIndex = 0) => {
    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/event/stream${query}`, { headers: { "X-Nomad-Token": token }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffered = "";
    const read = async (): Promise<Json[] | "closed"> => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return "closed";
        buffered += decoder.decode(value, { stream: true });
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        // An index past the newest batch replays that batch first (Nomad's StartAtClosest): skip it.
        const frames = lines.map((l) => JSON.parse(l)).filter((f) => f.Events && f.Index >= fromIndex);
        if (frames.length > 0) return frames;
      }
    };
    /** Once the server ends the stream: the text after the last frame (frames still queued before the end are skipped). */
    const ended = async () => {
      for (let r = await read(); ; r = await read()) if (r === "closed") return buffered;
    };
    return { read, ended, close: () => controller.abort() };
  };

  it("token and policy writes stream as ACLToken / ACLPolicy events, secrets redacted; bootstrap streams nothing", async () => {
    const since = emu.index + 1;
    const { read, close } = await stream(`?topic=ACLToken&topic=ACLPolicy&index=${since}`, MGMT, since);
    const created = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Name: "ci", Type: "client", Policies: ["readonly"] } });
    const [upserted] = (await read()) as Json[];
    expect(upserted!.Events).toHaveLength(1);
    const event = upserted!.Events[0];
    expect(event).toMatchObject({ Topic: "ACLToken", Type: "ACLTokenUpserted", Key: created.body.AccessorID, Namespace: "", FilterKeys: null, Index: upserted!.Index });
    expect(event.Payload.ACLToken).toMatchObject({ AccessorID: created.body.AccessorID, Name: "ci", SecretID: "", Policies: ["readonly"] });

    await call(`/v1/acl/token/${created.body.AccessorID}`, { method: "DELETE", token: MGMT });
    const [deleted] = (await read()) as Json[];
    expect(deleted!.Events.map((e: Json) => `${e.Topic} ${e.Type} ${e.Key}`)).toEqual([`ACLToken ACLTokenDeleted ${created.body.AccessorID}`]);
    expect(deleted!.Events[0].Payload.ACLToken.Name).toBe("ci"); // the token as it was

    await call("/v1/acl/policy/extra", { method: "POST", token: MGMT, body: { Name: "extra", Rules: 'node { policy = "read" }' } });
    const [policy] = (await read()) as Json[];
    expect(policy!.Events[0]).toMatchObject({ Topic: "ACLPolicy", Type: "ACLPolicyUpserted", Key: "extra" });
    expect(policy!.Events[0].Payload.ACLPolicy).toMatchObject({ Name: "extra", Rules: 'node { policy = "read" }' });
    await call("/v1/acl/policy/extra", { method: "DELETE", token: MGMT });
    const [gone] = (await read()) as Json[];
    expect(gone!.Events[0]).toMatchObject({ Topic: "ACLPolicy", Type: "ACLPolicyDeleted", Key: "extra" });
    close();

    // Bootstrap is its own raft message, which Nomad maps to no event.
    const fresh = await createStandin({ fixture: { scheduler: { acl: { enabled: true } } } });
    const before = fresh.index;
    const boot = await fresh.scheduler.request("/v1/acl/bootstrap", { method: "POST" });
    expect(boot.status).toBe(200);
    const secret = ((await boot.json()) as Json).SecretID;
    const created2 = await fresh.scheduler.request("/v1/acl/token", {
      method: "POST",
      headers: { "X-Nomad-Token": secret },
      body: JSON.stringify({ Name: "later", Type: "management" }),
    });
    const later = ((await created2.json()) as Json).AccessorID;
    const controller = new AbortController();
    const res = await fresh.scheduler.request(`/v1/event/stream?topic=ACLToken&index=${before}`, { headers: { "X-Nomad-Token": secret }, signal: controller.signal });
    const text = new TextDecoder();
    let seen = "";
    const reader = res.body!.getReader();
    while (!seen.includes("ACLTokenUpserted")) seen += text.decode((await reader.read()).value);
    controller.abort();
    const frames = seen
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((f) => f.Events);
    // Only the later token: the bootstrap token's write left nothing in the buffer.
    expect(frames.flatMap((f) => f.Events.map((e: Json) => e.Key))).toEqual([later]);
  });

  it("a stream ends when its token is deleted or its policy stops allowing the topics", async () => {
    const next = emu.index + 1;
    const reader = await stream(`?topic=Job&index=${next}`, READER);
    const deployer = await stream(`?topic=Job&namespace=prod&index=${next}`, WRITER);
    // Narrowing the reader's policy to nodes ends the reader's stream, not the deployer's.
    await call("/v1/acl/policy/readonly", { method: "POST", token: MGMT, body: { Name: "readonly", Rules: 'node { policy = "read" }' } });
    // Nomad's broker force-closes the subscription: its error is the body's last words (no newline).
    expect(await reader.ended()).toBe("subscription closed by server, client should resubscribe");
    await call("/v1/jobs", { method: "PUT", token: MGMT, body: { Job: { ...job("api", "prod"), Meta: { v: "2" } } } });
    const frames = (await deployer.read()) as Json[];
    expect(frames[0]!.Events[0]).toMatchObject({ Topic: "Job", Key: "api" });
    // Deleting the deployer's token ends its stream.
    const tokens = await call("/v1/acl/tokens", { token: MGMT });
    const accessor = tokens.body.find((t: Json) => t.Name === "deployer").AccessorID;
    await call(`/v1/acl/token/${accessor}`, { method: "DELETE", token: MGMT });
    expect(await deployer.ended()).toBe("subscription closed by server, client should resubscribe");
  });
});

describe("single allocations are checked in their own namespace", () => {
  it("a prod-only token reads a prod allocation without naming the namespace, as Nomad's GetAlloc", async () => {
    await call("/v1/acl/policy/prod-read", { method: "POST", token: MGMT, body: { Name: "prod-read", Rules: 'namespace "prod" { policy = "read" }' } });
    const created = await call("/v1/acl/token", { method: "POST", token: MGMT, body: { Name: "prod", Type: "client", Policies: ["prod-read"] } });
    expect(created.status).toBe(200);
    const secret = created.body.SecretID as string;
    emu.clock.advance("3s");
    const allocs = (await call("/v1/allocations?namespace=*", { token: MGMT })).body as Json[];
    const prodAlloc = allocs.find((a) => a.Namespace === "prod")!;
    const defaultAlloc = allocs.find((a) => a.Namespace === "default")!;
    expect((await call(`/v1/allocation/${prodAlloc.ID}`, { token: secret })).status).toBe(200);
    expect(await call(`/v1/allocation/${defaultAlloc.ID}`, { token: secret })).toMatchObject({ status: 404, text: `Unknown allocation "${defaultAlloc.ID}"` });
  });
});
