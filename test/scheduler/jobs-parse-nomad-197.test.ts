/**
 * Regressions found by the HCL oracle (test/conformance/oracle-hcl.test.ts,
 * Nomad v1.9.7's own parser): each asserts Nomad's answer through
 * `POST /v1/jobs/parse`, so it holds on a machine without Go too.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call, type Answer } from "../support/call.js";

type Json = Record<string, any>;

let shared: Standin | undefined;
afterAll(() => shared?.close());

async function parse(hcl: string, extra: Json = {}): Promise<Answer> {
  shared ??= await createStandin();
  return call(shared.scheduler, "POST", "/v1/jobs/parse", { JobHCL: hcl, ...extra });
}

async function parsed(hcl: string, canonicalize = false, extra: Json = {}): Promise<Json> {
  const res = await parse(hcl, { Canonicalize: canonicalize, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function failure(hcl: string): Promise<string> {
  const res = await parse(hcl);
  expect(res.status, res.text).toBe(400);
  return res.text;
}

const TASK = 'task "t" {\n  driver = "docker"\n}';

describe("the api structs of Nomad 1.9.7", () => {
  it("resources carry SecretsMB (`secrets`), services Weights (`weights`, raised to 1 on canonicalize)", async () => {
    const hcl = `job "x" {\n  group "g" {\n    service {\n      name = "s"\n      weights {\n        passing = 5\n      }\n    }\n    task "t" {\n      resources {\n        secrets = 64\n      }\n    }\n  }\n}`;
    const job = await parsed(hcl);
    expect(job.TaskGroups[0].Tasks[0].Resources.SecretsMB).toBe(64);
    expect(job.TaskGroups[0].Services[0].Weights).toEqual({ Passing: 5, Warning: 0 });
    expect((await parsed(hcl, true)).TaskGroups[0].Services[0].Weights).toEqual({ Passing: 5, Warning: 1 });
    const bare = await parsed(`job "x" {\n  group "g" {\n    ${TASK}\n  }\n}`, true);
    expect(bare.TaskGroups[0].Tasks[0].Resources).toHaveProperty("SecretsMB", null);
  });

  it("a task's CSIPluginConfig is left out when unset (its json tag says omitempty), written when set", async () => {
    const job = await parsed(`job "x" {\n  group "g" {\n    ${TASK}\n  }\n}`);
    expect(job.TaskGroups[0].Tasks[0]).not.toHaveProperty("CSIPluginConfig");
    expect(job.TaskGroups[0].Tasks[0]).toHaveProperty("Identities", null);
    const csi = await parsed(`job "x" {\n  group "g" {\n    task "t" {\n      csi_plugin {\n        id = "p"\n      }\n    }\n  }\n}`);
    expect(csi.TaskGroups[0].Tasks[0].CSIPluginConfig).toMatchObject({ ID: "p" });
  });

  it("a sidecar_task has no identity block in 1.9.7; a lifecycle block may leave out its hook", async () => {
    const sidecar = await failure('job "x" {\n  group "g" {\n    service {\n      connect {\n        sidecar_task {\n          identity {}\n        }\n      }\n    }\n  }\n}');
    expect(sidecar).toContain('Blocks of type "identity" are not expected here.');
    const job = await parsed(`job "x" {\n  group "g" {\n    task "t" {\n      lifecycle {\n        sidecar = true\n      }\n    }\n  }\n}`);
    expect(job.TaskGroups[0].Tasks[0].Lifecycle).toEqual({ Hook: "", Sidecar: true });
  });

  it("a task whose only identity is the default one keeps an empty list, not null", async () => {
    const job = await parsed(`job "x" {\n  group "g" {\n    task "t" {\n      identity {\n        env = true\n      }\n    }\n  }\n}`);
    expect(job.TaskGroups[0].Tasks[0].Identities).toEqual([]);
    expect(job.TaskGroups[0].Tasks[0].Identity).toMatchObject({ Env: true });
  });
});

describe("api.Job.Canonicalize at 1.9.7", () => {
  it("gives only service jobs the default update strategy; a system job's stays null", async () => {
    const system = await parsed(`job "x" {\n  type = "system"\n  group "g" {\n    ${TASK}\n  }\n}`, true);
    expect(system.Update).toBeNull();
    expect(system.TaskGroups[0].Update).toBeNull();
    expect(system.TaskGroups[0].ReschedulePolicy).toBeNull();
    const service = await parsed(`job "x" {\n  group "g" {\n    ${TASK}\n  }\n}`, true);
    expect(service.Update).toMatchObject({ MaxParallel: 1, HealthCheck: "checks" });
  });

  it("gives a sysbatch group a zeroed reschedule policy", async () => {
    const job = await parsed(`job "x" {\n  type = "sysbatch"\n  group "g" {\n    ${TASK}\n  }\n}`, true);
    expect(job.TaskGroups[0].ReschedulePolicy).toEqual({ Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false });
  });

  it("fills a gateway proxy's ConnectTimeout (5 s) and an ingress listener's protocol (tcp)", async () => {
    const hcl = `job "x" {\n  group "g" {\n    service {\n      name = "gw"\n      connect {\n        gateway {\n          proxy {}\n          ingress {\n            listener {\n              port = 8080\n              service {\n                name = "a"\n              }\n            }\n          }\n        }\n      }\n    }\n  }\n}`;
    const gateway = (await parsed(hcl, true)).TaskGroups[0].Services[0].Connect.Gateway;
    expect(gateway.Proxy.ConnectTimeout).toBe(5_000_000_000);
    expect(gateway.Ingress.Listeners[0].Protocol).toBe("tcp");
    expect((await parsed(hcl)).TaskGroups[0].Services[0].Connect.Gateway.Proxy.ConnectTimeout).toBeNull();
  });
});

describe("cty's functions as jobspec2 maps them", () => {
  it("index is the element at a key, reverse reverses a string, coalesce skips null only, length counts collections", async () => {
    const job = await parsed(
      'job "x" {\n  meta {\n    i = index(["a", "b"], 1)\n    m = index({ k = "v" }, "k")\n    r = reverse("abc")\n    c = coalesce("", "x")\n    n = coalesce(null, "y")\n    l = length(["a", "b"])\n  }\n}',
    );
    expect(job.Meta).toEqual({ i: "b", m: "v", r: "cba", c: "", n: "y", l: "2" });
    expect(await failure('job "x" {\n  meta {\n    a = index(["a"], "a")\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,9-15: Error in function call; Call to function "index" failed: key for tuple must be number.',
    );
    expect(await failure('job "x" {\n  meta {\n    a = reverse(["a"])\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,17-18: Invalid function argument; Invalid value for "str" parameter: string required.',
    );
    expect(await failure('job "x" {\n  meta {\n    a = length("abc")\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,9-16: Error in function call; Call to function "length" failed: collection must be a list, a map or a tuple.',
    );
  });

  it("a set of strings or numbers comes out in cty's order, whatever order it was built in", async () => {
    const job = await parsed(
      'variable "s" {\n  type    = set(string)\n  default = ["b", "a", "b"]\n}\njob "x" {\n  meta {\n    s = join(",", var.s)\n    u = join(",", setunion(["z"], ["y", "x"]))\n    n = jsonencode(setunion([3, 1], [2]))\n  }\n}',
    );
    expect(job.Meta).toEqual({ s: "a,b", u: "x,y,z", n: "[1,2,3]" });
  });

  it("names too many arguments as such, at the first extra one (inside its quotes); too few at the closing parenthesis", async () => {
    expect(await failure('job "x" {\n  meta {\n    a = upper("a", "b")\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,21-22: Too many function arguments; Function "upper" expects only 1 argument(s).',
    );
    expect(await failure('job "x" {\n  meta {\n    a = substr("a")\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:3,19-20: Not enough function arguments; Function "substr" expects 3 argument(s). Missing value for "offset".',
    );
  });
});

describe("hcl's syntax errors where hcl puts them", () => {
  it("a quoted argument name, a template in a block label, a variable type that is not exact", async () => {
    expect(await failure('job "x" {\n  "quoted" = 1\n}')).toBe("Failed to parse job: input.hcl:2,3-4: Invalid argument name; Argument names must not be quoted.");
    expect(await failure('job "x" {\n  group "g${1}" {\n  }\n}')).toBe(
      'Failed to parse job: input.hcl:2,11-13: Invalid string literal; Template sequences are not allowed in this string. To include a literal "$", double it (as "$$") to escape it.',
    );
    expect(await failure('variable "a" {\n  type    = list(any)\n  default = []\n}\njob "x" {}')).toBe(
      'Failed to parse job: input.hcl:2,18-21: Invalid type specification; The keyword "any" cannot be used in this type specification: an exact type is required.',
    );
    expect(await failure('variable "a" {\n  type = object({ a = optional(string) })\n}\njob "x" {}')).toBe(
      "Failed to parse job: input.hcl:2,23-31: Invalid type specification; Optional attribute modifier is only for type constraints, not for exact types.",
    );
  });
});

describe("a job in HCL's JSON syntax", () => {
  it("decodes as the native file would: labelled blocks in object and array forms, templates, typed variables and the Variables text", async () => {
    const json = {
      variable: { n: { type: "number" } },
      locals: { team: "core" },
      job: {
        j: {
          datacenters: ["dc1"],
          meta: { team: "${local.team}", literal: "$${x}" },
          group: [{ g: { count: "${var.n}", task: { t: [{ driver: "docker", config: { image: "redis", labels: { a: "b" } } }] } } }],
        },
      },
    };
    const job = await parsed(JSON.stringify(json), false, { Variables: "n = 3" });
    expect(job.ID).toBe("j");
    expect(job.Meta).toEqual({ team: "core", literal: "${x}" });
    expect(job.TaskGroups[0].Count).toBe(3);
    expect(job.TaskGroups[0].Tasks[0].Config).toEqual({ image: "redis", labels: { a: "b" } });
    // A JSON Variables text is read without an evaluation context: its strings are literal.
    const literal = await parsed('variable "v" {\n  type = string\n}\njob "x" {\n  meta {\n    v = var.v\n  }\n}', false, { Variables: '{"v": "${1+1}"}' });
    expect(literal.Meta).toEqual({ v: "${1+1}" });
    // Only spaces may come before the brace (jobspec2's isJSON): a newline first means native syntax.
    expect((await parse(`\n${JSON.stringify(json)}`)).status).toBe(400);
  });
});
