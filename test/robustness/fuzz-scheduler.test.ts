/**
 * Bad-input fuzzing of the scheduler (Nomad's HTTP API): the regression tests for what the
 * fuzzing found, each with its shrunk input.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

// ---- regressions: inputs the fuzz properties found, as shrunk, one test per fix -------------------

describe("scheduler: regressions found by fuzzing", () => {
  const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  const call = async (emu: Standin, method: string, path: string, body?: string, headers: Record<string, string> = {}) => {
    const res = await emu.scheduler.request(path, { method, body, headers });
    return { status: res.status, text: await res.text() };
  };
  const task = { Name: "t", Driver: "docker", Config: { image: "x", args: [] as unknown[] }, Resources: { CPU: 10, MemoryMB: 10 } };
  const job = (id: string, extra: Record<string, unknown> = {}) => ({ ID: id, Type: "service", Datacenters: ["dc1"], TaskGroups: [{ Name: "web", Count: 1, Tasks: [task] }], ...extra });
  // {"Job":{"TaskGroups":[{"Tasks":[{"Config":{"args": — the args value starts seven levels down.
  const withArgs = (args: string) => JSON.stringify({ Job: job("deep") }).replace('"args":[]', `"args":${args}`);

  it("a body nested deeper than 1000 levels is refused with Go's decoder text before anything walks it", async () => {
    // Shrunk: PUT /v1/namespace {"Name":"team","Description":"d","Quota":1e999,"Meta":{"a":[[[…1]]]}} was stored, and every
    // stateHash() after it overflowed the stack.
    const emu = await createStandin();
    const before = emu.stateHash();
    expect(await call(emu, "PUT", "/v1/namespace", `{"Name":"team","Meta":{"a":${nested(1001)}}}`)).toEqual({ status: 400, text: "invalid character '[' exceeded max depth" });
    expect(await call(emu, "PUT", "/v1/jobs", withArgs(nested(994)))).toEqual({ status: 400, text: "invalid character '[' exceeded max depth" });
    expect(await call(emu, "PUT", "/v1/jobs", `{"Job":${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}`)).toEqual({ status: 400, text: "invalid character '{' exceeded max depth" });
    expect(emu.stateHash()).toBe(before);
  });

  it("a job nested exactly 1000 levels deep still registers, reads back, plans and hashes", async () => {
    const emu = await createStandin();
    const registered = await call(emu, "PUT", "/v1/jobs", withArgs(nested(993)));
    expect(registered.status, registered.text).toBe(200);
    expect((await call(emu, "GET", "/v1/job/deep")).status).toBe(200);
    expect((await call(emu, "PUT", "/v1/job/deep/plan", withArgs(nested(992, "2")).replace('{"Job"', '{"Diff":true,"Job"'))).status).toBe(200);
    expect(emu.stateHash()).toMatch(/^[0-9a-f]{64}$/);
    emu.restore(emu.snapshot());
  });

  it("RPC request bodies are read with Go's types: a wrongly typed field is a 400, not a 500 or a crash", async () => {
    const world = {
      scheduler: {
        jobs: [
          job("web", { Update: { MaxParallel: 1, Canary: 1, MinHealthyTime: 10_000_000_000, HealthyDeadline: 300_000_000_000, ProgressDeadline: 600_000_000_000 } }),
          { ...job("report", { Type: "batch" }), ParameterizedJob: { Payload: "optional", MetaRequired: ["customer"] } },
        ],
      },
    };
    const emu = await createStandin({ fixture: world });
    await emu.clock.advance("1m");
    const before = emu.stateHash();
    const cases: Array<[string, string, string]> = [
      // Shrunk: answered 500 `job "web" in namespace "default" at version 5e-324 not found`.
      ["/v1/job/web/revert", '{"JobID":"web","JobVersion":5e-324,"EnforcePriorVersion":0}', "json: cannot unmarshal number 5e-324 into Go struct field JobRevertRequest.JobVersion of type uint64"],
      // Shrunk: an array nested a few thousand levels deep overflowed the stack in Number().
      ["/v1/job/web/revert", `{"JobID":"web","JobVersion":${nested(900)}}`, "json: cannot unmarshal array into Go struct field JobRevertRequest.JobVersion of type uint64"],
      // Shrunk: answered 500 `job "web" in namespace "default" at version NaN not found`.
      ["/v1/job/web/stable", '{"JobID":"web","JobVersion":"../..","Stable":true}', "json: cannot unmarshal string into Go struct field JobStabilityRequest.JobVersion of type uint64"],
      // Shrunk: answered 500 `Cannot use 'in' operator to search for 'customer' in 5e-324`.
      ["/v1/job/report/dispatch", '{"Meta":5e-324}', "json: cannot unmarshal number into Go struct field JobDispatchRequest.Meta of type map[string]string"],
      ["/v1/job/report/dispatch", '{"Meta":{"customer":7}}', "json: cannot unmarshal number into Go struct field JobDispatchRequest.Meta of type string"],
      ["/v1/job/web/scale", '{"Count":1.5,"Target":{"Group":"web"}}', "json: cannot unmarshal number 1.5 into Go struct field ScalingRequest.Count of type int64"],
      ["/v1/namespace", '{"Name":"team","Meta":{"a":["x"]}}', "json: cannot unmarshal array into Go struct field Namespace.Meta of type string"],
      ["/v1/jobs", JSON.stringify({ Job: job("x"), EnforceIndex: true, JobModifyIndex: "7" }), "json: cannot unmarshal string into Go struct field JobRegisterRequest.JobModifyIndex of type uint64"],
    ];
    for (const [path, body, text] of cases) expect(await call(emu, "PUT", path, body), `${path} ${body.slice(0, 80)}`).toEqual({ status: 400, text });
    const [deployment] = JSON.parse((await call(emu, "GET", "/v1/deployments")).text) as Array<{ ID: string }>;
    const id = deployment!.ID;
    expect(await call(emu, "PUT", `/v1/deployment/promote/${id}`, JSON.stringify({ DeploymentID: id, Groups: 5 }))).toEqual({
      status: 400,
      text: "json: cannot unmarshal number into Go struct field DeploymentPromoteRequest.Groups of type []string",
    });
    expect(await call(emu, "PUT", `/v1/deployment/allocation-health/${id}`, JSON.stringify({ DeploymentID: id, HealthyAllocationIDs: "abc" }))).toEqual({
      status: 400,
      text: "json: cannot unmarshal string into Go struct field DeploymentAllocHealthRequest.HealthyAllocationIDs of type []string",
    });
    expect(emu.stateHash()).toBe(before);
  });

  const MGMT = "11111111-2222-3333-4444-555555555555";
  const aclWorld = { scheduler: { acl: { enabled: true, tokens: [{ SecretID: MGMT, Name: "root", Type: "management" }] } } };

  it("an ACL token whose Policies nest arrays is a 400 (it overflowed the stack)", async () => {
    const emu = await createStandin({ fixture: aclWorld });
    const before = emu.stateHash();
    // Shrunk: PUT /v1/acl/token {"Name":"t","Type":"client","Policies":[[[[…]]]]} answered 500 `internal error: Maximum call stack size exceeded`.
    const res = await call(emu, "PUT", "/v1/acl/token", `{"Name":"t","Type":"client","Policies":${nested(900, '"p"')}}`, { "X-Nomad-Token": MGMT });
    expect(res).toEqual({ status: 400, text: "json: cannot unmarshal array into Go struct field ACLToken.Policies of type string" });
    expect(emu.stateHash()).toBe(before);
  });

  it("ACL rules nested past 1000 levels are a parse error (the rule parser overflowed the stack)", async () => {
    const emu = await createStandin({ fixture: aclWorld });
    const before = emu.stateHash();
    const put = (rules: string) => call(emu, "PUT", "/v1/acl/policy/fuzzy", JSON.stringify({ Name: "fuzzy", Rules: rules }), { "X-Nomad-Token": MGMT });
    const refused = (why: string) => ({ status: 400, text: `policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Failed to parse ACL Policy: ${why}\n\n` });
    // Shrunk: each of these answered 500 `internal error: Maximum call stack size exceeded`.
    expect(await put(`${'namespace "a" { '.repeat(1001)}${"}".repeat(1001)}`)).toEqual(refused("At 1: blocks and lists nested deeper than 1000 levels"));
    expect(await put(`namespace "a" { policy = ${nested(1001, '"read"')} }`)).toEqual(refused("At 1: blocks and lists nested deeper than 1000 levels"));
    expect(await put(`{"namespace":{"a":{"policy":${nested(1001, '"read"')}}}}`)).toEqual(refused("invalid JSON: nested deeper than 1000 levels"));
    expect(emu.stateHash()).toBe(before);
    // Nesting within the limit parses (and is refused for what it says, not for its depth).
    const deep = await put(`namespace "a" { policy = ${nested(990, '"read"')} }`);
    expect(deep.status).toBe(400);
    expect(deep.text).toContain("Invalid namespace policy");
  });

  it("an ACL rule string with a raw control character or an unknown escape is a 400 (it was a 500 from JSON.parse)", async () => {
    const emu = await createStandin({ fixture: aclWorld });
    const before = emu.stateHash();
    const put = (rules: string) => call(emu, "PUT", "/v1/acl/policy/fuzzy", JSON.stringify({ Name: "fuzzy", Rules: rules }), { "X-Nomad-Token": MGMT });
    // Shrunk: {"Name":"fuzzy","Description":"d","Rules":"namespace \"default\" { policy = \"\u0000read\" }"} answered 500
    // `internal error: Bad control character in string literal in JSON at position 1`.
    const raw = await put('namespace "default" { policy = "\u0000read" }');
    expect(raw.status).toBe(400);
    expect(raw.text).toContain('Invalid namespace policy: &acl.NamespacePolicy{Name:"default", Policy:"\\u0000read"');
    expect(await put('namespace "default" { policy = "\\qread" }')).toEqual({
      status: 400,
      text: "policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: Failed to parse ACL Policy: At 1:32: illegal char escape\n\n",
    });
    expect(emu.stateHash()).toBe(before);
  });
});
