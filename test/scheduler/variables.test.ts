/**
 * Variables through the HTTP surface: create, read, list (prefix, namespace,
 * `*`, filter, pages), check-and-set and its 409 bodies, delete (204), the
 * validation texts, the methods Nomad refuses, blocking reads, ACL path rules.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { callScheduler } from "../support/call.js";

let emu: Standin;

afterEach(async () => {
  emu?.close();
});

function call(path: string, init: { method?: string; token?: string; body?: unknown; raw?: string } = {}) {
  return callScheduler(emu, init.method ?? "GET", path, init.raw ?? init.body, init.token);
}

const start = async (fixture: Record<string, unknown> = {}) => {
  emu = await createStandin({ fixture: { scheduler: { namespaces: [{ Name: "prod" }], ...fixture } } });
};

describe("variables: create, read, update", () => {
  it("creates a variable and reads it back with Items, indexes and nanosecond times, keys in Nomad's order", async () => {
    await start();
    const put = await call("/v1/var/app/config", { method: "PUT", body: { Items: { user: "admin", port: "8080" } } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ Namespace: "default", Path: "app/config", Items: { user: "admin", port: "8080" } });
    expect(Object.keys(put.body)).toEqual(["CreateIndex", "CreateTime", "Items", "ModifyIndex", "ModifyTime", "Namespace", "Path"]);
    expect(put.headers.get("X-Nomad-Index")).toBe(String(put.body.ModifyIndex));
    expect(put.body.CreateTime).toBe(put.body.ModifyTime);
    expect(String(put.body.CreateTime)).toMatch(/^\d{19}$/);

    const got = await call("/v1/var/app/config");
    expect(got.status).toBe(200);
    expect(got.body).toEqual(put.body);
    expect(got.headers.get("X-Nomad-Index")).toBe(String(put.body.ModifyIndex));
    expect(got.headers.get("X-Nomad-KnownLeader")).toBe("true");
  });

  it("keeps CreateIndex and CreateTime on update; the URL path wins over the body's, the body's namespace over the query's", async () => {
    await start();
    const first = (await call("/v1/var/a", { method: "PUT", body: { Items: { k: "1" } } })).body;
    await emu.clock.advance("5s");
    const second = await call("/v1/var/a", { method: "PUT", body: { Path: "elsewhere", Items: { k: "2" } } });
    expect(second.body.CreateIndex).toBe(first.CreateIndex);
    expect(second.body.CreateTime).toBe(first.CreateTime);
    expect(second.body.ModifyIndex).toBeGreaterThan(first.ModifyIndex);
    expect(BigInt(second.text.match(/"ModifyTime":(\d+)/)![1]!) - BigInt(first.CreateTime)).toBe(5_000_000_000n);
    expect(second.body.Path).toBe("a");

    const inProd = await call("/v1/var/a?namespace=default", { method: "PUT", body: { Namespace: "prod", Items: { k: "p" } } });
    expect(inProd.body.Namespace).toBe("prod");
    expect((await call("/v1/var/a?namespace=prod")).body.Items).toEqual({ k: "p" });
    expect((await call("/v1/var/a")).body.Items).toEqual({ k: "2" });
  });

  it("answers a missing variable 404 `variable not found` with the index headers", async () => {
    await start();
    const miss = await call("/v1/var/nope");
    expect(miss.status).toBe(404);
    expect(miss.text).toBe("variable not found");
    expect(miss.headers.get("X-Nomad-Index")).not.toBeNull();
  });

  it("refuses what Nomad refuses, in its words", async () => {
    await start();
    const put = (path: string, body: unknown, query = "") => call(`/v1/var/${path}${query}`, { method: "PUT", body });
    expect(await put("x", {})).toMatchObject({ status: 400, text: "variable missing required Items object" });
    expect(await put("bad path!", { Items: { a: "b" } })).toMatchObject({ status: 400, text: 'RPC Error:: 400,invalid path "bad path!"' });
    expect(await put("nomad", { Items: { a: "b" } })).toMatchObject({
      status: 400,
      text: 'RPC Error:: 400,"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below',
    });
    expect((await put("nomad/other", { Items: { a: "b" } })).text).toBe(
      'RPC Error:: 400,only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory',
    );
    expect((await put("nomad/job-templates/a/b", { Items: { a: "b" } })).text).toMatch(/^RPC Error:: 400,"nomad\/job-templates" is a reserved directory path/);
    expect((await put("nomad/jobs/web/task", { Items: { a: "b" } })).status).toBe(200);
    expect((await put("nomad/job-templates/t1", { Items: { a: "b" } })).status).toBe(200);
    expect(await put("big", { Items: { k: "v".repeat(65536) } })).toMatchObject({ status: 400, text: "RPC Error:: 400,variables are limited to 64KiB in total size" });
    expect((await put("fits", { Items: { k: "v".repeat(65535) } })).status).toBe(200);
    expect(await put("x", { Items: { a: "b" } }, "?cas=abc")).toMatchObject({ status: 400, text: 'can not parse cas: strconv.ParseUint: parsing "abc": invalid syntax' });
    expect(await put("x", { Items: { a: "b" } }, "?lock-acquire&lock-release")).toMatchObject({ status: 400, text: "multiple lock operations" });
    expect(await put("x", { Items: { a: "b" } }, "?cas=0&lock-acquire")).toMatchObject({ status: 400, text: "CAS can't be used with lock operations" });
    expect(await put("x", { Items: { a: "b" }, Lock: { TTL: "15s" } })).toMatchObject({
      status: 400,
      text: "RPC Error:: 400,RPC Error:: 400,variable should not contain lock definition",
    });
    expect(await put("x", { Items: { a: "b" }, Namespace: "*" })).toMatchObject({ status: 400, text: 'RPC Error:: 400,can not target wildcard ("*")namespace' });
    expect(await put("x", { Items: { a: 1 } })).toMatchObject({ status: 400, text: "json: cannot unmarshal number into Go struct field VariableDecrypted.Items of type string" });
    expect(await call("/v1/var/", { method: "GET" })).toMatchObject({ status: 400, text: "missing variable path" });
    expect(await call("/v1/var/x", { method: "PATCH" })).toMatchObject({ status: 400, text: "Invalid method" });
    expect((await call("/v1/var/x", { method: "HEAD" })).status).toBe(400);
    expect(await call("/v1/vars", { method: "PUT" })).toMatchObject({ status: 405, text: "Invalid method" });
  });
});

describe("variables: fixtures", () => {
  it("refuses a fixture variable Nomad would refuse, naming its place", async () => {
    await expect(
      createStandin({
        fixture: {
          scheduler: {
            variables: [
              { Path: "ok", Items: { a: "b" } },
              { Path: "nomad", Items: { a: "b" } },
            ],
          },
        },
      }),
    ).rejects.toThrow(/scheduler\.variables\[1\]: "nomad" is a reserved top-level directory path/);
  });
});

describe("variables: check-and-set", () => {
  it("cas=0 creates only when absent; a stale index is a 409 with the existing variable and its index", async () => {
    await start();
    const created = await call("/v1/var/c?cas=0", { method: "PUT", body: { Items: { v: "1" } } });
    expect(created.status).toBe(200);
    const again = await call("/v1/var/c?cas=0", { method: "PUT", body: { Items: { v: "2" } } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(created.body);
    expect(again.headers.get("Content-Type")).toBe("text/plain; charset=utf-8");
    expect(again.headers.get("X-Nomad-Index")).toBe(String(created.body.ModifyIndex));

    const updated = await call(`/v1/var/c?cas=${created.body.ModifyIndex}`, { method: "PUT", body: { Items: { v: "3" } } });
    expect(updated.status).toBe(200);
    expect(updated.body.Items).toEqual({ v: "3" });
    const stale = await call(`/v1/var/c?cas=${created.body.ModifyIndex}`, { method: "PUT", body: { Items: { v: "4" } } });
    expect(stale.status).toBe(409);
    expect(stale.body.ModifyIndex).toBe(updated.body.ModifyIndex);
    expect(stale.body.Items).toEqual({ v: "3" });
  });

  it("cas=N on an absent variable is a 409 with the zero value", async () => {
    await start();
    const res = await call("/v1/var/ghost?cas=7", { method: "PUT", body: { Items: { v: "1" } } });
    expect(res.status).toBe(409);
    expect(res.text).toBe('{"CreateIndex":0,"CreateTime":0,"ModifyIndex":0,"ModifyTime":0,"Namespace":"default","Path":"ghost"}');
    expect(res.headers.get("X-Nomad-Index")).toBe("0");
  });

  it("deletes with 204 (absent too); checked deletes conflict like checked sets", async () => {
    await start();
    const created = (await call("/v1/var/d", { method: "PUT", body: { Items: { v: "1" } } })).body;
    const wrong = await call(`/v1/var/d?cas=${created.ModifyIndex + 100}`, { method: "DELETE" });
    expect(wrong.status).toBe(409);
    expect(wrong.body.Items).toEqual({ v: "1" });
    const ok = await call(`/v1/var/d?cas=${created.ModifyIndex}`, { method: "DELETE" });
    expect(ok.status).toBe(204);
    expect(ok.text).toBe("");
    expect(Number(ok.headers.get("X-Nomad-Index"))).toBeGreaterThan(created.ModifyIndex);
    expect((await call("/v1/var/d")).status).toBe(404);
    expect((await call("/v1/var/d", { method: "DELETE" })).status).toBe(204);
    expect((await call("/v1/var/d?cas=0", { method: "DELETE" })).status).toBe(204);
  });
});

describe("variables: list", () => {
  const seed = async () => {
    await start({
      variables: [
        { Path: "app/one", Items: { a: "1" } },
        { Path: "app/two", Items: { a: "2" } },
        { Path: "other", Items: { a: "3" } },
        { Path: "app/prod", Namespace: "prod", Items: { a: "4" } },
      ],
    });
  };

  it("lists metadata only, by path, in the request's namespace, with a prefix, across `*`", async () => {
    await seed();
    const all = await call("/v1/vars");
    expect(all.status).toBe(200);
    expect(all.body.map((v: any) => v.Path)).toEqual(["app/one", "app/two", "other"]);
    expect(Object.keys(all.body[0])).toEqual(["CreateIndex", "CreateTime", "ModifyIndex", "ModifyTime", "Namespace", "Path"]);
    expect((await call("/v1/vars?prefix=app/")).body.map((v: any) => v.Path)).toEqual(["app/one", "app/two"]);
    expect((await call("/v1/vars?namespace=prod")).body.map((v: any) => v.Path)).toEqual(["app/prod"]);
    expect((await call("/v1/vars?namespace=*&prefix=app")).body.map((v: any) => `${v.Namespace}/${v.Path}`)).toEqual(["default/app/one", "default/app/two", "prod/app/prod"]);
    expect((await call("/v1/vars?prefix=zzz")).text).toBe("[]");
  });

  it("pages with per_page and next_token `<namespace>.<path>`, and filters", async () => {
    await seed();
    const first = await call("/v1/vars?namespace=*&per_page=2");
    expect(first.body.map((v: any) => v.Path)).toEqual(["app/one", "app/two"]);
    expect(first.headers.get("X-Nomad-NextToken")).toBe("default.other");
    const second = await call("/v1/vars?namespace=*&per_page=2&next_token=default.other");
    expect(second.body.map((v: any) => `${v.Namespace}/${v.Path}`)).toEqual(["default/other", "prod/app/prod"]);
    expect(second.headers.get("X-Nomad-NextToken")).toBeNull();
    // go-bexpr runs over structs.VariableEncrypted, whose metadata is an embedded struct it does not flatten
    const filtered = await call(`/v1/vars?namespace=*&filter=${encodeURIComponent('VariableMetadata.Path matches "two|prod"')}`);
    expect(filtered.body.map((v: any) => v.Path)).toEqual(["app/two", "app/prod"]);
    const flat = await call(`/v1/vars?namespace=*&filter=${encodeURIComponent('Path matches "two|prod"')}`);
    expect(flat.status).toBe(400);
    expect(flat.text).toBe('failed to read result page: error finding value in datum: /Path at part 0: couldn\'t find key: struct field with name "Path"');
    const bad = await call(`/v1/vars?filter=${encodeURIComponent("Path ==")}`);
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/^failed to create result paginator: failed to read filter expression: /);
  });

  it("blocks a read until the variable changes", async () => {
    await start();
    const created = (await call("/v1/var/w", { method: "PUT", body: { Items: { v: "1" } } })).body;
    const pending = call(`/v1/var/w?index=${created.ModifyIndex}&wait=60s`);
    const listPending = call(`/v1/vars?index=${created.ModifyIndex}&wait=60s`);
    await call("/v1/var/w", { method: "PUT", body: { Items: { v: "2" } } });
    const woke = await pending;
    expect(woke.body.Items).toEqual({ v: "2" });
    expect(Number(woke.headers.get("X-Nomad-Index"))).toBeGreaterThan(created.ModifyIndex);
    expect((await listPending).body[0].ModifyIndex).toBe(woke.body.ModifyIndex);
  });
});

describe("variables: ACL path rules", () => {
  const MGMT = "10000000-0000-0000-0000-000000000001";
  const APP = "20000000-0000-0000-0000-000000000002";
  const NONE = "30000000-0000-0000-0000-000000000003";
  const rules = `namespace "default" {
  policy = "write"
  variables {
    path "app/*" { capabilities = ["write", "read"] }
    path "app/secret" { capabilities = ["deny"] }
    path "shared" { capabilities = ["list"] }
    path "temp/*" { capabilities = ["write", "destroy"] }
  }
}`;
  const startAcl = () =>
    start({
      variables: [
        { Path: "app/config", Items: { a: "1" } },
        { Path: "app/secret", Items: { a: "2" } },
        { Path: "shared", Items: { a: "3" } },
        { Path: "hidden", Items: { a: "4" } },
      ],
      acl: {
        enabled: true,
        policies: [
          { Name: "app", Rules: rules },
          { Name: "jobs-only", Rules: 'namespace "default" { policy = "write" }' },
        ],
        tokens: [
          { SecretID: MGMT, Name: "root", Type: "management" },
          { SecretID: APP, Name: "app", Type: "client", Policies: ["app"] },
          { SecretID: NONE, Name: "jobs", Type: "client", Policies: ["jobs-only"] },
        ],
      },
    });

  it("reads, writes and destroys only where a path rule grants it; deny wins; a namespace policy alone grants nothing", async () => {
    await startAcl();
    expect((await call("/v1/var/app/config", { token: APP })).status).toBe(200);
    expect(await call("/v1/var/app/secret", { token: APP })).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await call("/v1/var/shared", { token: APP })).status).toBe(403);
    expect((await call("/v1/var/app/config", { token: NONE })).status).toBe(403);
    expect((await call("/v1/var/app/new", { method: "PUT", token: APP, body: { Items: { x: "y" } } })).status).toBe(200);
    expect((await call("/v1/var/hidden", { method: "PUT", token: APP, body: { Items: { x: "y" } } })).status).toBe(403);
    expect((await call("/v1/var/app/new", { method: "DELETE", token: APP })).status).toBe(403);
    expect((await call("/v1/var/temp/t", { method: "PUT", token: APP, body: { Items: { x: "y" } } })).status).toBe(200);
    expect((await call("/v1/var/temp/t", { method: "DELETE", token: APP })).status).toBe(204);
    expect((await call("/v1/var/hidden", { token: MGMT })).status).toBe(200);
  });

  it("lists only what the token may list (read brings list along), dropping the rest silently", async () => {
    await startAcl();
    const listed = await call("/v1/vars", { token: APP });
    expect(listed.status).toBe(200);
    expect(listed.body.map((v: any) => v.Path)).toEqual(["app/config", "shared"]);
    expect((await call("/v1/vars", { token: NONE })).text).toBe("[]");
    expect((await call("/v1/vars", { token: MGMT })).body).toHaveLength(4);
  });

  it("redacts a conflict's Items from a caller who may write but not read", async () => {
    await startAcl();
    await call("/v1/var/temp/c", { method: "PUT", token: MGMT, body: { Items: { s: "secret" } } });
    const res = await call("/v1/var/temp/c?cas=0", { method: "PUT", token: APP, body: { Items: { s: "mine" } } });
    expect(res.status).toBe(409);
    expect(res.body.Path).toBe("temp/c");
    expect(res.body.Items).toBeUndefined();
  });

  it("rejects bad variables blocks in a policy with Nomad's texts", async () => {
    await startAcl();
    const put = (Rules: string) => call("/v1/acl/policy/bad", { method: "PUT", token: MGMT, body: { Name: "bad", Rules } });
    expect((await put('namespace "default" { variables { path "a" { capabilities = ["jump"] } } }')).text).toContain("Invalid variable capability 'jump' in namespace default");
    expect((await put('namespace "default" { variables { } }')).text).toContain("Invalid variable policy: no variable paths in namespace default");
  });
});
