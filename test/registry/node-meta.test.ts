/**
 * `node-meta=key:value` on every read Consul's HTTP handlers give it to
 * (their parseMetaFilter callers): /v1/catalog/nodes, /v1/catalog/services,
 * /v1/catalog/service/:name, /v1/health/service/:name, /v1/health/checks/:name
 * and /v1/health/state/:state. Repeatable, every pair must match exactly
 * (case-sensitive, as Consul's node meta index), split at the first `:`.
 * Regression (issue 31): /v1/catalog/nodes ignored it and listed every node.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { send } from "../support/call.js";

const NODES = [
  { Node: "db-1", Meta: { env: "dev", rack: "a" } },
  { Node: "web-1", Meta: { env: "prod", rack: "a", url: "http://x:1" } },
  { Node: "web-2", Meta: { env: "prod", rack: "b" } },
];

let emu: Standin;

beforeAll(async () => {
  emu = await createStandin();
  for (const [i, node] of NODES.entries()) {
    const body = {
      Node: node.Node,
      Address: `10.0.0.${i + 1}`,
      NodeMeta: node.Meta,
      Service: { Service: "svc", Port: 80 },
      Check: { CheckID: "svc-check", Name: "svc check", ServiceID: "svc", Status: "passing" },
    };
    const res = await send(emu.registry, "/v1/catalog/register", { method: "PUT", body: JSON.stringify(body) });
    expect(res.status, res.text).toBe(200);
  }
});

async function read(path: string): Promise<any> {
  const res = await send(emu.registry, path);
  expect(res.status, res.text).toBe(200);
  return JSON.parse(res.text);
}

/** The test's own nodes among `names` (the agent's node is no part of these cases unless its meta matches). */
const ours = (names: string[]) => names.filter((n) => NODES.some((node) => node.Node === n));

describe("node-meta on the catalog and health reads", () => {
  it.each<[string, string[]]>([
    ["node-meta=env:prod", ["web-1", "web-2"]],
    ["node-meta=env:prod&node-meta=rack:a", ["web-1"]],
    ["node-meta=env:dev", ["db-1"]],
    ["node-meta=env:Prod", []],
    ["node-meta=env", []],
    ["node-meta=url:http://x:1", ["web-1"]],
    ["node-meta=env:prod&node-meta=env:dev", ["db-1"]],
  ])("?%s → %j on every endpoint", async (query, expected) => {
    const nodes = (await read(`/v1/catalog/nodes?${query}`)) as { Node: string }[];
    expect(nodes.map((n) => n.Node)).toEqual(expected);
    const services = await read(`/v1/catalog/services?${query}`);
    expect(Object.keys(services).includes("svc")).toBe(expected.length > 0);
    const instances = (await read(`/v1/catalog/service/svc?${query}`)) as { Node: string }[];
    expect(instances.map((s) => s.Node)).toEqual(expected);
    const health = (await read(`/v1/health/service/svc?${query}`)) as { Node: { Node: string } }[];
    expect(health.map((h) => h.Node.Node)).toEqual(expected);
    const checks = (await read(`/v1/health/checks/svc?${query}`)) as { Node: string }[];
    expect(checks.map((c) => c.Node)).toEqual(expected);
    const passing = (await read(`/v1/health/state/passing?${query}`)) as { Node: string; CheckID: string }[];
    expect(ours(passing.filter((c) => c.CheckID === "svc-check").map((c) => c.Node))).toEqual(expected);
  });

  it("without node-meta, /v1/catalog/nodes lists every node", async () => {
    const nodes = (await read("/v1/catalog/nodes")) as { Node: string }[];
    expect(ours(nodes.map((n) => n.Node))).toEqual(["db-1", "web-1", "web-2"]);
  });

  it("node-meta and filter= together: both must hold, and the index is the nodes table's either way", async () => {
    const res = await send(emu.registry, `/v1/catalog/nodes?node-meta=env:prod&filter=${encodeURIComponent('Meta.rack == "b"')}`);
    expect(JSON.parse(res.text).map((n: { Node: string }) => n.Node)).toEqual(["web-2"]);
    const all = await send(emu.registry, "/v1/catalog/nodes");
    expect(res.headers.get("x-consul-index")).toBe(all.headers.get("x-consul-index"));
  });
});
