/**
 * PUT /v1/txn: KV, Node, Service and Check verbs with Consul's semantics and
 * texts, all or nothing (a failed transaction changes nothing, its index
 * included), the limits (413s), body decoding (400s), read-only
 * transactions with their query meta, and per-op ACLs as 409 entries.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import { Store } from "../../src/core/store.js";

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}
const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const txn = (emu: Standin, ops: unknown, query = "", headers: Record<string, string> = {}) =>
  req(emu, `/v1/txn${query}`, { method: "PUT", body: typeof ops === "string" ? ops : JSON.stringify(ops), headers });
const json = (res: TextAnswer) => JSON.parse(res.text) as { Results: Record<string, Record<string, unknown>>[] | null; Errors: { OpIndex: number; What: string }[] | null };
const b64 = (s: string) => Buffer.from(s).toString("base64");
const kvIndex = async (emu: Standin) => Number((await req(emu, "/v1/kv/?recurse")).headers.get("x-consul-index"));

async function session(emu: Standin, body: Record<string, unknown> = {}): Promise<string> {
  const res = await req(emu, "/v1/session/create", { method: "PUT", body: JSON.stringify(body) });
  return (JSON.parse(res.text) as { ID: string }).ID;
}

describe("store writes", () => {
  it("roll back everything a write did when its function throws, index included", () => {
    const store = new Store();
    const table = store.table("t");
    store.write(() => table.put("a", { v: 1 }));
    const index = store.index;
    expect(() =>
      store.write(() => {
        table.put("a", { v: 2 });
        table.put("b", { v: 3 });
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(table.get("a")).toEqual({ v: 1 });
    expect(table.has("b")).toBe(false);
    expect(store.index).toBe(index);
  });
});

describe("txn: KV verbs", () => {
  it("sets, reads and checks in one transaction: write results without values, gets with them", async () => {
    const emu = await standin();
    const res = await txn(emu, [
      { KV: { Verb: "set", Key: "app/a", Value: b64("one"), Flags: 7 } },
      { KV: { Verb: "get", Key: "app/a" } },
      { KV: { Verb: "check-not-exists", Key: "app/b" } },
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-consul-index")).toBeNull();
    const body = json(res);
    expect(body.Errors).toBeNull();
    expect(body.Results).toHaveLength(2);
    const [set, get] = body.Results!;
    expect(Object.keys(set!)).toEqual(["KV"]);
    expect(Object.keys(set!.KV!)).toEqual(["LockIndex", "Key", "Flags", "Value", "CreateIndex", "ModifyIndex"]);
    expect(set!.KV).toMatchObject({ Key: "app/a", Flags: 7, Value: null, LockIndex: 0 });
    expect(get!.KV).toMatchObject({ Key: "app/a", Value: b64("one") });
    const index = set!.KV!.ModifyIndex as number;

    const cas = await txn(emu, [{ KV: { Verb: "check-index", Key: "app/a", Index: index } }, { KV: { Verb: "cas", Key: "app/a", Value: b64("two"), Index: index } }]);
    expect(cas.status).toBe(200);
    expect(JSON.parse((await req(emu, "/v1/kv/app/a")).text)[0].Value).toBe(b64("two"));
  });

  it("changes nothing when any op fails, and reports every failure with its index", async () => {
    const emu = await standin();
    await txn(emu, [{ KV: { Verb: "set", Key: "x", Value: b64("1") } }]);
    const before = await kvIndex(emu);
    const hash = emu.stateHash();
    const res = await txn(emu, [
      { KV: { Verb: "set", Key: "new", Value: b64("v") } },
      { KV: { Verb: "delete", Key: "x" } },
      { KV: { Verb: "cas", Key: "x", Index: 999 } },
      { KV: { Verb: "get", Key: "missing" } },
      { KV: { Verb: "bogus", Key: "x" } },
    ]);
    expect(res.status).toBe(409);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.text).toBe(
      '{"Results":null,"Errors":[{"OpIndex":2,"What":"failed to set key \\"x\\", index is stale"},{"OpIndex":3,"What":"key \\"missing\\" doesn\'t exist"},{"OpIndex":4,"What":"unknown KV verb \\"bogus\\""}]}',
    );
    expect((await req(emu, "/v1/kv/new")).status).toBe(404);
    expect((await req(emu, "/v1/kv/x")).status).toBe(200);
    expect(await kvIndex(emu)).toBe(before);
    expect(emu.stateHash()).toBe(hash);
  });

  it("keeps Flags as an exact uint64", async () => {
    const emu = await standin();
    const res = await txn(emu, '[{"KV":{"Verb":"set","Key":"f","Flags":16210313421097356768}}]');
    expect(res.status).toBe(200);
    expect(res.text).toContain('"Flags":16210313421097356768');
    expect((await req(emu, "/v1/kv/f")).text).toContain('"Flags":16210313421097356768');
  });

  it("locks and unlocks with a session as the KV endpoint's acquire and release do", async () => {
    const emu = await standin();
    const a = await session(emu, { LockDelay: "0s" });
    const b = await session(emu);
    const lock = await txn(emu, [{ KV: { Verb: "lock", Key: "leader", Value: b64("a"), Session: a } }]);
    expect(json(lock).Results![0]!.KV).toMatchObject({ LockIndex: 1, Session: a, Value: null });
    // The holder locking again keeps the LockIndex.
    expect(json(await txn(emu, [{ KV: { Verb: "lock", Key: "leader", Session: a } }])).Results![0]!.KV!.LockIndex).toBe(1);
    expect(json(await txn(emu, [{ KV: { Verb: "lock", Key: "leader", Session: b } }])).Errors).toEqual([{ OpIndex: 0, What: 'failed to lock key "leader", lock is already held' }]);
    expect(json(await txn(emu, [{ KV: { Verb: "lock", Key: "leader" } }])).Errors![0]!.What).toBe("missing session");
    expect(json(await txn(emu, [{ KV: { Verb: "lock", Key: "k2", Session: "nope" } }])).Errors![0]!.What).toBe('invalid session "nope"');
    expect(json(await txn(emu, [{ KV: { Verb: "check-session", Key: "leader", Session: b } }])).Errors![0]!.What).toBe(
      `failed session check for key "leader", current session "${a}" != "${b}"`,
    );
    expect(json(await txn(emu, [{ KV: { Verb: "unlock", Key: "leader", Session: b } }])).Errors![0]!.What).toBe(
      'failed to unlock key "leader", lock isn\'t held, or is held by another session',
    );
    const unlock = await txn(emu, [{ KV: { Verb: "unlock", Key: "leader", Session: a } }]);
    expect(unlock.status).toBe(200);
    const [entry] = JSON.parse((await req(emu, "/v1/kv/leader")).text) as { Session?: string; LockIndex: number }[];
    expect(entry!.Session).toBeUndefined();
    expect(entry!.LockIndex).toBe(1);
  });

  it("refuses a lock during the key's lock-delay", async () => {
    const emu = await standin();
    const a = await session(emu, { LockDelay: "15s" });
    await txn(emu, [{ KV: { Verb: "lock", Key: "leader", Session: a } }]);
    await req(emu, `/v1/session/destroy/${a}`, { method: "PUT" });
    const b = await session(emu);
    expect(json(await txn(emu, [{ KV: { Verb: "lock", Key: "leader", Session: b } }])).Errors).toEqual([{ OpIndex: 0, What: 'failed to lock key "leader" due to lock delay' }]);
    emu.clock.advance("16s");
    expect((await txn(emu, [{ KV: { Verb: "lock", Key: "leader", Session: b } }])).status).toBe(200);
  });

  it("deletes: delete-cas succeeds on a missing key, fails on a stale index; delete-tree leaves the prefix's tombstone", async () => {
    const emu = await standin();
    await txn(emu, [{ KV: { Verb: "set", Key: "t/a" } }, { KV: { Verb: "set", Key: "t/b" } }]);
    expect((await txn(emu, [{ KV: { Verb: "delete-cas", Key: "gone", Index: 5 } }])).status).toBe(200);
    expect(json(await txn(emu, [{ KV: { Verb: "delete-cas", Key: "t/a", Index: 1 } }])).Errors![0]!.What).toBe('failed to delete key "t/a", index is stale');
    const res = await txn(emu, [{ KV: { Verb: "delete-tree", Key: "t/" } }]);
    expect(res.text).toBe('{"Results":[],"Errors":null}');
    const list = await req(emu, "/v1/kv/t/?recurse");
    expect(list.status).toBe(404);
    expect(Number(list.headers.get("x-consul-index"))).toBeGreaterThan(1);
  });

  it("answers get-or-empty for a missing key with the request's entry and no value, get-tree with every value", async () => {
    const emu = await standin();
    await txn(emu, [{ KV: { Verb: "set", Key: "d/1", Value: b64("a") } }, { KV: { Verb: "set", Key: "d/2", Value: b64("b") } }]);
    const res = await txn(emu, [{ KV: { Verb: "get-or-empty", Key: "nothing" } }, { KV: { Verb: "get-tree", Key: "d/" } }]);
    const results = json(res).Results!;
    expect(results[0]!.KV).toEqual({ LockIndex: 0, Key: "nothing", Flags: 0, Value: null, CreateIndex: 0, ModifyIndex: 0 });
    expect(results.slice(1).map((r) => r.KV!.Value)).toEqual([b64("a"), b64("b")]);
  });

  it("needs a key for every verb but delete-tree", async () => {
    const emu = await standin();
    expect(json(await txn(emu, [{ KV: { Verb: "set", Key: "" } }])).Errors).toEqual([{ OpIndex: 0, What: "Must provide key" }]);
  });
});

describe("txn: read-only transactions", () => {
  it("answer with LastContact and KnownLeader headers, no index, and the RPC's query meta in the body", async () => {
    const emu = await standin();
    await txn(emu, [{ KV: { Verb: "set", Key: "r", Value: b64("v") } }]);
    const res = await txn(emu, [{ KV: { Verb: "get", Key: "r" } }], "?stale");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-consul-knownleader")).toBe("true");
    expect(res.headers.get("x-consul-lastcontact")).toBe("0");
    expect(res.headers.get("x-consul-index")).toBeNull();
    const body = JSON.parse(res.text) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["Results", "Errors", "Index", "LastContact", "KnownLeader", "ConsistencyLevel", "NotModified", "Backend", "ResultsFilteredByACLs"]);
    expect(body).toMatchObject({ Errors: null, Index: 0, KnownLeader: true, ResultsFilteredByACLs: false });
  });

  it("refuse ?stale with ?consistent as every read does", async () => {
    const emu = await standin();
    const res = await txn(emu, [{ KV: { Verb: "get", Key: "r" } }], "?stale&consistent");
    expect(res.status).toBe(400);
    expect(res.text).toBe("Cannot specify ?stale with ?consistent, conflicting semantics.");
  });

  it("are served stale without a leader, and need one otherwise", async () => {
    const emu = await standin();
    await emu.registry.request("/_standin/registry/leader", { method: "POST", body: '{"known":false}' });
    expect((await txn(emu, [{ KV: { Verb: "get-tree", Key: "x" } }], "?stale")).status).toBe(200);
    const res = await txn(emu, [{ KV: { Verb: "get-tree", Key: "x" } }]);
    expect(res.status).toBe(500);
    expect(res.text).toBe("No cluster leader");
  });
});

describe("txn: limits and decoding", () => {
  it("takes 128 operations (Consul 1.14+) and refuses 129 with 413", async () => {
    const emu = await standin();
    const ops = (n: number) => Array.from({ length: n }, (_, i) => ({ KV: { Verb: "set", Key: `k${i}` } }));
    expect((await txn(emu, ops(128))).status).toBe(200);
    const res = await txn(emu, ops(129));
    expect(res.status).toBe(413);
    expect(res.text).toBe("Transaction contains too many operations (129 > 128)");
  });

  it("refuses a body over 512 KiB with 413", async () => {
    const emu = await standin();
    const body = JSON.stringify([{ KV: { Verb: "set", Key: "big", Value: b64("x".repeat(400 * 1024)) } }]);
    const res = await txn(emu, body, "", { "Content-Length": String(Buffer.byteLength(body)) });
    expect(res.status).toBe(413);
    expect(res.text).toBe(
      `Request body(${Buffer.byteLength(body)} bytes) too large, max size: 524288 bytes. See https://www.consul.io/docs/agent/config/config-files#txn_max_req_len.`,
    );
    const unsized = await txn(emu, body);
    expect(unsized.status).toBe(413);
    expect(unsized.text).toBe("Request body too large, max size: 524288 bytes. See https://www.consul.io/docs/agent/config/config-files#txn_max_req_len.");
  });

  it("answers 400 Failed to parse body for bad JSON, unknown fields (Session ops included), wrong types and bad base64", async () => {
    const emu = await standin();
    const cases: [string, string][] = [
      ["[{", "unexpected EOF"],
      ["", "EOF"],
      ["{}", "json: cannot unmarshal object into Go value of type api.TxnOps"],
      ['[{"KV":{"Verb":"set","Key":"a","Bogus":1}}]', 'json: unknown field "Bogus"'],
      ['[{"Session":{"Verb":"delete"}}]', 'json: unknown field "Session"'],
      ['[{"KV":{"Verb":"set","Key":"a","Flags":"1"}}]', "json: cannot unmarshal string into Go struct field KVTxnOp.KV.Flags of type uint64"],
      ['[{"KV":{"Verb":"set","Key":"a","Flags":-1}}]', "json: cannot unmarshal number -1 into Go struct field KVTxnOp.KV.Flags of type uint64"],
      ['[{"KV":{"Verb":"set","Key":"a","Value":"abc"}}]', "illegal base64 data at input byte 0"],
      ['[{"KV":{"Verb":"set","Key":"a","Value":"ab=c"}}]', "illegal base64 data at input byte 2"],
    ];
    for (const [body, error] of cases) {
      const res = await txn(emu, body);
      expect([res.status, res.text], body).toEqual([400, `Failed to parse body: ${error}`]);
    }
  });

  it("matches field names case-insensitively and skips ops that set nothing (OpIndex counts the rest)", async () => {
    const emu = await standin();
    const res = await txn(emu, '[{}, {"kv":{"verb":"get","key":"missing"}}]');
    expect(json(res).Errors).toEqual([{ OpIndex: 0, What: 'key "missing" doesn\'t exist' }]);
  });
});

describe("txn: catalog verbs", () => {
  it("registers a node, a service and its check together, and reads them back", async () => {
    const emu = await standin();
    const res = await txn(emu, [
      { Node: { Verb: "set", Node: { Node: "web-1", Address: "10.0.0.5" } } },
      { Service: { Verb: "set", Node: "web-1", Service: { Service: "web", Port: 8080, Tags: ["v1"] } } },
      { Check: { Verb: "set", Check: { Node: "web-1", Name: "web-alive", ServiceID: "web", Status: "passing" } } },
    ]);
    expect(res.status).toBe(200);
    const [node, service, check] = json(res).Results!;
    expect(node!.Node).toMatchObject({ Node: "web-1", Address: "10.0.0.5", Datacenter: "dc1" });
    expect(Object.keys(service!.Service!)).toEqual([
      "ID",
      "Service",
      "Tags",
      "Address",
      "Meta",
      "Port",
      "Weights",
      "EnableTagOverride",
      "Proxy",
      "Connect",
      "CreateIndex",
      "ModifyIndex",
    ]);
    expect(service!.Service).toMatchObject({ ID: "web", Service: "web", Port: 8080, Tags: ["v1"] });
    expect(check!.Check).toMatchObject({ CheckID: "web-alive", ServiceName: "web", ServiceTags: ["v1"], Status: "passing" });
    expect(Object.keys(check!.Check!)).toEqual(
      Object.keys({
        Node: 0,
        CheckID: 0,
        Name: 0,
        Status: 0,
        Notes: 0,
        Output: 0,
        ServiceID: 0,
        ServiceName: 0,
        ServiceTags: 0,
        Type: 0,
        Interval: 0,
        Timeout: 0,
        ExposedPort: 0,
        Definition: 0,
        CreateIndex: 0,
        ModifyIndex: 0,
      }),
    );
    const read = await txn(emu, [
      { Node: { Verb: "get", Node: { Node: "web-1" } } },
      { Service: { Verb: "get", Node: "web-1", Service: { ID: "web" } } },
      { Check: { Verb: "get", Check: { Node: "web-1", CheckID: "web-alive" } } },
    ]);
    expect(read.status).toBe(200);
    expect(json(read).Results!.map((r) => Object.keys(r)[0])).toEqual(["Node", "Service", "Check"]);
    expect((await req(emu, "/v1/health/node/web-1")).text).toContain('"CheckID":"web-alive"');
  });

  it("answers Consul's texts for missing registrations, stale CAS and unknown verbs, and applies none of it", async () => {
    const emu = await standin();
    const hash = emu.stateHash();
    const res = await txn(emu, [
      { Service: { Verb: "set", Node: "ghost", Service: { Service: "web" } } },
      { Node: { Verb: "cas", Node: { Node: "standin", ModifyIndex: 999 } } },
      { Node: { Verb: "delete-cas", Node: { Node: "nobody", ModifyIndex: 3 } } },
      { Check: { Verb: "set", Check: { Node: "standin", CheckID: "c", ServiceID: "nope", ServiceName: "nope" } } },
      { Service: { Verb: "get", Node: "standin", Service: { ID: "none" } } },
      { Node: { Verb: "rename", Node: { Node: "standin" } } },
      { Node: { Verb: "set", Node: { Node: "extra" } } },
    ]);
    expect(res.status).toBe(409);
    expect(json(res).Errors).toEqual([
      { OpIndex: 0, What: "Missing node registration" },
      { OpIndex: 1, What: 'failed to set node "standin", index is stale' },
      { OpIndex: 2, What: 'failed to delete node "nobody", index is stale' },
      { OpIndex: 3, What: "Missing service registration" },
      { OpIndex: 4, What: 'service "none" on node "standin" doesn\'t exist' },
      { OpIndex: 5, What: 'unknown Node verb "rename"' },
    ]);
    expect(emu.stateHash()).toBe(hash);
  });

  it("pre-checks node names and IDs before running anything", async () => {
    const emu = await standin();
    const res = await txn(emu, [
      { Node: { Verb: "set", Node: { Node: "" } } },
      { Node: { Verb: "set", Node: { Node: "n", ID: "not-a-uuid" } } },
      { Service: { Verb: "set", Node: "standin", Service: { ID: "x" } } },
    ]);
    expect(json(res).Errors).toEqual([
      { OpIndex: 0, What: "Must provide node" },
      { OpIndex: 1, What: "Invalid node ID: uuid string is wrong length" },
      { OpIndex: 2, What: "Must provide service name with ID" },
    ]);
  });

  it("refuses Node and Service meta beyond the catalog's limits (one 409 entry per op), applies nothing, and deletes whatever meta they carry", async () => {
    const emu = await standin();
    const pairs = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    const longKey = "k".repeat(129);
    const hash = emu.stateHash();
    const res = await txn(emu, [
      { Node: { Verb: "set", Node: { Node: "n1", Address: "10.0.0.1", Meta: pairs(65) } } },
      { Node: { Verb: "cas", Node: { Node: "n2", Address: "10.0.0.2", Meta: { [longKey]: "v" } } } },
      { Service: { Verb: "set", Node: "standin", Service: { Service: "api", Meta: { k: "v".repeat(513) } } } },
      { Service: { Verb: "cas", Node: "standin", Service: { Service: "web", Meta: { "a.b": "v" } } } },
      { KV: { Verb: "set", Key: "untouched", Value: b64("x") } },
    ]);
    expect(res.status).toBe(409);
    expect(json(res)).toEqual({
      Results: null,
      Errors: [
        { OpIndex: 0, What: "Invalid Node Meta: Node metadata cannot contain more than 64 key/value pairs" },
        { OpIndex: 1, What: `Invalid Node Meta: Couldn't load metadata pair ('${longKey}', 'v'): Key is too long (limit: 128 characters)` },
        { OpIndex: 2, What: `Invalid Service Meta: Couldn't load metadata pair ('k', '${"v".repeat(513)}'): Value is too long (limit: 512 characters)` },
        { OpIndex: 3, What: "Invalid Service Meta: Couldn't load metadata pair ('a.b', 'v'): Key contains invalid characters" },
      ],
    });
    expect(emu.stateHash()).toBe(hash);
    // At the limits, and with the catalog's `consul-` prefix, it applies.
    const atLimit = { ...pairs(63), "consul-version": "1" };
    const ok = await txn(emu, [
      { Node: { Verb: "set", Node: { Node: "n1", Address: "10.0.0.1", Meta: atLimit } } },
      { Service: { Verb: "set", Node: "n1", Service: { Service: "api", Meta: { ["k".repeat(128)]: "v".repeat(512) } } } },
    ]);
    expect(ok.status, ok.text).toBe(200);
    expect(Object.keys(JSON.parse((await req(emu, "/v1/catalog/node/n1")).text).Node.Meta)).toHaveLength(64);
    // A delete stores nothing: its meta is not looked at.
    const deleted = await txn(emu, [
      { Service: { Verb: "delete", Node: "n1", Service: { ID: "api", Service: "api", Meta: pairs(65) } } },
      { Node: { Verb: "delete", Node: { Node: "n1", Meta: pairs(65) } } },
    ]);
    expect(deleted.status, deleted.text).toBe(200);
    expect((await req(emu, "/v1/catalog/node/n1")).text).toBe("null");
  });

  it("deletes a service with its checks", async () => {
    const emu = await standin();
    await txn(emu, [
      { Service: { Verb: "set", Node: "standin", Service: { ID: "api-1", Service: "api" } } },
      { Check: { Verb: "set", Check: { Node: "standin", CheckID: "api-check", ServiceID: "api-1", ServiceName: "api" } } },
    ]);
    expect((await txn(emu, [{ Service: { Verb: "delete", Node: "standin", Service: { ID: "api-1", Service: "api" } } }])).status).toBe(200);
    expect((await req(emu, "/v1/health/node/standin")).text).not.toContain("api-check");
  });
});

describe("txn: ACLs", () => {
  const acl = {
    acl: {
      enabled: true,
      defaultPolicy: "deny",
      tokens: [{ AccessorID: "acc-app", SecretID: "app-secret", Rules: { key_prefix: { "app/": { policy: "write" }, "ro/": { policy: "read" } } } }],
    },
  };

  it("turns each denial into a 409 entry and applies nothing", async () => {
    const emu = await standin(acl);
    const res = await txn(
      emu,
      [{ KV: { Verb: "set", Key: "app/a" } }, { KV: { Verb: "set", Key: "ro/b" } }, { Node: { Verb: "set", Node: { Node: "n", Address: "1.2.3.4" } } }],
      "",
      { "X-Consul-Token": "app-secret" },
    );
    expect(res.status).toBe(409);
    expect(json(res).Errors).toEqual([
      { OpIndex: 1, What: "Permission denied: token with AccessorID 'acc-app' lacks permission 'key:write' on \"ro/b\"" },
      { OpIndex: 2, What: "Permission denied: token with AccessorID 'acc-app' lacks permission 'node:write' on \"n\"" },
    ]);
    expect((await req(emu, "/v1/kv/app/a", { headers: { "X-Consul-Token": "app-secret" } })).status).toBe(404);
  });

  it("answers a read's pre-check denial before the query meta is set: no known leader", async () => {
    const emu = await standin(acl);
    const res = await txn(emu, [{ KV: { Verb: "check-index", Key: "secret/x", Index: 1 } }], "", { "X-Consul-Token": "app-secret" });
    expect(res.status).toBe(409);
    expect(res.headers.get("x-consul-knownleader")).toBe("false");
    expect(JSON.parse(res.text)).toMatchObject({
      Results: null,
      Errors: [{ OpIndex: 0, What: "Permission denied: token with AccessorID 'acc-app' lacks permission 'key:read' on \"secret/x\"" }],
      KnownLeader: false,
    });
    const missing = await txn(emu, [{ KV: { Verb: "check-index", Key: "app/none", Index: 1 } }], "", { "X-Consul-Token": "app-secret" });
    expect(missing.status).toBe(409);
    expect(missing.headers.get("x-consul-knownleader")).toBe("true");
  });

  it("filters what a read may not see, and says so in the body to a token holder", async () => {
    const emu = await standin(acl);
    await txn(emu, [{ KV: { Verb: "set", Key: "app/a" } }], "", { "X-Consul-Token": "app-secret" });
    const res = await txn(emu, [{ KV: { Verb: "get", Key: "app/a" } }]);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ Results: [], ResultsFilteredByACLs: false });
    const holder = await txn(emu, [{ KV: { Verb: "get", Key: "app/a" } }], "", { "X-Consul-Token": "app-secret" });
    expect(json(holder).Results).toHaveLength(1);
  });
});
