import { describe, expect, it } from "vitest";
import { HeaderNames, REGISTRY_HEADERS, SCHEDULER_HEADERS } from "../../src/http/headers.js";
import { jsonResponse, textResponse } from "../../src/http/respond.js";
import { bearerToken, extractToken } from "../../src/http/tokens.js";
import { wantsPretty } from "../../src/http/pretty.js";

describe("bearer tokens, parsed as both products parse them", () => {
  it.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["BEARER abc", "abc"],
    ["Bearer  abc def", "abc"],
    ["Bearer abc def", "abc"],
    ["Bearer ", undefined],
    ["Bearer", undefined],
    ["Basic abc", undefined],
    ["", undefined],
  ])("%j → %j", (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe("token sources", () => {
  const scheduler = { names: new HeaderNames(SCHEDULER_HEADERS, true) };
  const registry = { names: new HeaderNames(REGISTRY_HEADERS, true), queryParam: "token" };
  const req = (url: string, headers: Record<string, string>) => new Request(`http://x${url}`, { headers });

  it("takes the spec header, then the product's header, then a bearer token", () => {
    expect(extractToken(req("/", { "X-Scheduler-Token": " a ", "X-Nomad-Token": "b", Authorization: "Bearer c" }), scheduler)).toBe("a");
    expect(extractToken(req("/", { "X-Nomad-Token": "b", Authorization: "Bearer c" }), scheduler)).toBe("b");
    expect(extractToken(req("/", { "X-Nomad-Token": "  ", Authorization: "Bearer c" }), scheduler)).toBe("c");
    expect(extractToken(req("/", {}), scheduler)).toBeUndefined();
  });

  it("the registry's ?token= wins over headers", () => {
    expect(extractToken(req("/?token=q", { "X-Consul-Token": "h" }), registry)).toBe("q");
    expect(extractToken(req("/", { "X-Consul-Token": "h" }), registry)).toBe("h");
  });

  it("without compat names, the product's token header is not read", () => {
    const strict = { names: new HeaderNames(SCHEDULER_HEADERS, false) };
    expect(extractToken(req("/", { "X-Nomad-Token": "b" }), strict)).toBeUndefined();
    expect(extractToken(req("/", { "X-Scheduler-Token": "a" }), strict)).toBe("a");
  });
});

describe("header names", () => {
  it("sets both the specification's and the product's names by default, only the spec's without compat", () => {
    const h = new Headers();
    new HeaderNames(SCHEDULER_HEADERS, true).set(h, "Index", "7");
    expect([...h]).toEqual([
      ["x-nomad-index", "7"],
      ["x-scheduler-index", "7"],
    ]);
    const s = new Headers();
    new HeaderNames(REGISTRY_HEADERS, false).set(s, "KnownLeader", "true");
    expect([...s]).toEqual([["x-registry-knownleader", "true"]]);
  });
});

describe("responses", () => {
  it("errors are plain text with no trailing newline", async () => {
    const res = textResponse(404, "job not found");
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe("job not found");
  });

  it("JSON is compact without a newline, or pretty with 4 spaces and one newline", async () => {
    expect(await jsonResponse({ b: 1, a: [] }).text()).toBe('{"b":1,"a":[]}');
    expect(await jsonResponse({ b: 1, a: [] }, { pretty: true, sortKeys: true }).text()).toBe('{\n    "a": [],\n    "b": 1\n}\n');
    expect(jsonResponse(null).headers.get("content-type")).toBe("application/json");
  });
});

describe("?pretty, as each product reads it", () => {
  it.each([
    ["/x", false, false],
    ["/x?pretty", true, true],
    ["/x?pretty=", true, true],
    ["/x?pretty=1", true, true],
    ["/x?pretty=false", true, true],
    ["/x?pretty=0", false, true],
    ["/x?prettyish=1", false, false],
    ["/x?%70retty", true, true],
    ["/x?a=1&%70retty=0", false, true],
    ["/pretty", false, false],
  ])("%s → scheduler %s, registry %s", (path, scheduler, registry) => {
    expect(wantsPretty(`http://h${path}`, "scheduler")).toBe(scheduler);
    expect(wantsPretty(new URL(`http://h${path}`), "registry")).toBe(registry);
    expect(wantsPretty(`http://h${path}`, "registry")).toBe(registry);
  });
});
