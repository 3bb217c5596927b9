/**
 * The server as a real Consul cluster lists it: its node carries the tagged
 * addresses (`lan`, `lan_ipv4`, `wan`, `wan_ipv4`) and meta
 * (`consul-network-segment`, `consul-version`) every agent's node has, so
 * services registered through the agent carry them too (Prometheus's Consul
 * discovery reads them as `__meta_consul_tagged_address_<key>`); and the
 * catalog lists the server's own `consul` service on it, which the agent's
 * local views leave out. Regression (issue 31): the node had neither, and
 * there was no `consul` service.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { CONSUL_VERSION } from "../../src/core/versions.js";
import { send } from "../support/call.js";

const TAGGED = { lan: "127.0.0.1", lan_ipv4: "127.0.0.1", wan: "127.0.0.1", wan_ipv4: "127.0.0.1" };
const NODE_META = { "consul-network-segment": "", "consul-version": CONSUL_VERSION };
const CONSUL_META = {
  non_voter: "false",
  raft_version: "3",
  read_replica: "false",
  serf_protocol_current: "2",
  serf_protocol_max: "5",
  serf_protocol_min: "1",
  version: CONSUL_VERSION,
};

async function read(emu: Standin, path: string): Promise<any> {
  const res = await send(emu.registry, path);
  expect(res.status, res.text).toBe(200);
  return JSON.parse(res.text);
}

describe("the server's node and its consul service", () => {
  it("the catalog lists `consul` with no tags, and its one instance as Consul's leader registers it", async () => {
    const emu = await createStandin();
    expect(await read(emu, "/v1/catalog/services")).toEqual({ consul: [] });
    const [instance] = await read(emu, "/v1/catalog/service/consul");
    expect(instance).toMatchObject({
      Node: "standin",
      Address: "127.0.0.1",
      Datacenter: "dc1",
      TaggedAddresses: TAGGED,
      NodeMeta: NODE_META,
      ServiceKind: "",
      ServiceID: "consul",
      ServiceName: "consul",
      ServiceTags: [],
      ServiceAddress: "",
      ServiceWeights: { Passing: 1, Warning: 1 },
      ServiceMeta: CONSUL_META,
      ServicePort: 8300,
    });
    // Go writes map keys sorted: the wire order is part of the shape.
    const text = (await send(emu.registry, "/v1/catalog/service/consul")).text;
    expect(text).toContain('"TaggedAddresses":{"lan":"127.0.0.1","lan_ipv4":"127.0.0.1","wan":"127.0.0.1","wan_ipv4":"127.0.0.1"}');
    expect(text).toContain(`"NodeMeta":{"consul-network-segment":"","consul-version":"${CONSUL_VERSION}"}`);
  });

  it("/v1/health/service/consul answers the server node with its node checks", async () => {
    const emu = await createStandin();
    const [entry] = await read(emu, "/v1/health/service/consul?passing");
    expect(entry.Node).toMatchObject({ Node: "standin", TaggedAddresses: TAGGED, Meta: NODE_META });
    expect(entry.Service).toMatchObject({ ID: "consul", Service: "consul", Port: 8300, Meta: CONSUL_META });
    expect(entry.Checks.map((c: { CheckID: string }) => c.CheckID)).toContain("serfHealth");
  });

  it("a service registered through the agent carries the node's tagged addresses and meta", async () => {
    const emu = await createStandin();
    const res = await send(emu.registry, "/v1/agent/service/register", { method: "PUT", body: JSON.stringify({ Name: "web", Port: 80 }) });
    expect(res.status, res.text).toBe(200);
    const [instance] = await read(emu, "/v1/catalog/service/web");
    expect(instance).toMatchObject({ Node: "standin", TaggedAddresses: TAGGED, NodeMeta: NODE_META });
    const [entry] = await read(emu, "/v1/health/service/web");
    expect(entry.Node).toMatchObject({ TaggedAddresses: TAGGED, Meta: NODE_META });
    const nodes = (await read(emu, "/v1/catalog/nodes?node-meta=consul-network-segment:")) as { Node: string }[];
    expect(nodes.map((n) => n.Node)).toEqual(["standin"]);
  });

  it("the agent's own views leave the consul service out, as the agent's local state never holds it", async () => {
    const emu = await createStandin();
    expect(await read(emu, "/v1/agent/services")).toEqual({});
    const one = await send(emu.registry, "/v1/agent/service/consul");
    expect(one.status).toBe(404);
    expect(one.text).toBe("unknown service ID: consul");
    // Its node meta is the agent's loadMetadata: the segment, not the leader's consul-version.
    expect((await read(emu, "/v1/agent/self")).Meta).toEqual({ "consul-network-segment": "" });
  });

  it("a fixture's nodes are agents' nodes: their own address tagged, the same meta, no consul service", async () => {
    const emu = await createStandin({ fixture: { registry: { nodes: [{ Node: "node-a", Address: "10.0.0.7" }] } } });
    const [node] = (await read(emu, "/v1/catalog/nodes?node-meta=consul-network-segment:")).filter((n: { Node: string }) => n.Node === "node-a");
    expect(node).toMatchObject({ Address: "10.0.0.7", TaggedAddresses: { lan: "10.0.0.7", lan_ipv4: "10.0.0.7", wan: "10.0.0.7", wan_ipv4: "10.0.0.7" }, Meta: NODE_META });
    expect((await read(emu, "/v1/catalog/service/consul")).map((s: { Node: string }) => s.Node)).toEqual(["standin"]);
  });

  it("every datacenter's server lists its own", async () => {
    const emu = await createStandin({ fixture: { registry: { datacenters: { dc2: {} } } } });
    const [instance] = await read(emu, "/v1/catalog/service/consul?dc=dc2");
    expect(instance).toMatchObject({ Datacenter: "dc2", ServiceID: "consul", TaggedAddresses: TAGGED });
  });
});
