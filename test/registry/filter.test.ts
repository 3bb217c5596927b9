/**
 * `filter=` on the registry, through HTTP (reference §7): `/v1/catalog/nodes` filters structs.Node rows
 * with go-bexpr v0.1.2's typed filters — selectors validated against the type, values coerced — and
 * answers a filter that cannot be created with a 500 and Consul's text. ACL filtering still applies
 * after the expression.
 */
import { describe, expect, it } from "vitest";
import { send, type TextAnswer } from "../support/call.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";

const P = "Failed to create boolean expression evaluator: ";
const WRITER = "s-writer";

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}

async function register(emu: Standin, body: Record<string, unknown>, token?: string): Promise<void> {
  const res = await send(emu.registry, "/v1/catalog/register", { method: "PUT", body: JSON.stringify(body), headers: token ? { "X-Consul-Token": token } : undefined });
  expect(res.status, res.text).toBe(200);
}

async function nodesWithThreeMore(emu: Standin, token?: string): Promise<void> {
  await register(emu, { Node: "web-1", Address: "10.0.0.11", NodeMeta: { role: "web", zone: "a" }, TaggedAddresses: { lan: "10.0.0.11" } }, token);
  await register(emu, { Node: "web-2", Address: "10.0.0.12", NodeMeta: { role: "web", zone: "b" } }, token);
  await register(emu, { Node: "db-1", Address: "10.0.1.1", NodeMeta: { role: "db" } }, token);
}

const nodesQuery = (emu: Standin, filter: string, init: { token?: string } = {}): Promise<TextAnswer> =>
  send(emu.registry, `/v1/catalog/nodes?filter=${encodeURIComponent(filter)}`, { headers: init.token ? { "X-Consul-Token": init.token } : undefined });

async function names(emu: Standin, filter: string, token?: string): Promise<string[]> {
  const res = await nodesQuery(emu, filter, { token });
  expect(res.status, res.text).toBe(200);
  return (JSON.parse(res.text) as Array<{ Node: string }>).map((n) => n.Node);
}

describe("GET /v1/catalog/nodes?filter=", () => {
  it("keeps the nodes the expression matches", async () => {
    const emu = await standin();
    await nodesWithThreeMore(emu);
    const all = await names(emu, "");
    expect(all).toEqual(expect.arrayContaining(["db-1", "web-1", "web-2"]));
    expect(await names(emu, "Meta.role == web")).toEqual(["web-1", "web-2"]);
    expect(await names(emu, 'Meta.role == web and Meta.zone != "a"')).toEqual(["web-2"]);
    expect(await names(emu, 'Node matches "^db-"')).toEqual(["db-1"]);
    expect(await names(emu, "zone in Meta")).toEqual(["web-1", "web-2"]);
    // The agent's own node has the tagged addresses and meta every Consul agent's node has.
    expect(await names(emu, "lan in TaggedAddresses")).toEqual(["standin", "web-1"]);
    expect(await names(emu, 'Address == "10.0.1.1"')).toEqual(["db-1"]);
    expect(await names(emu, "Datacenter == dc1 and Meta.role == db")).toEqual(["db-1"]);
    // a missing map key: == is false, != true (go-bexpr's rule)
    expect(await names(emu, "Meta.zone != a and Meta is not empty")).toEqual(["db-1", "standin", "web-2"]);
  });

  it("an empty filter= is no filter", async () => {
    const emu = await standin();
    await nodesWithThreeMore(emu);
    const plain = await send(emu.registry, "/v1/catalog/nodes");
    const empty = await send(emu.registry, "/v1/catalog/nodes?filter=");
    expect(empty.status).toBe(200);
    expect(empty.text).toBe(plain.text);
  });

  it.each<[string, string]>([
    ["foo", '1:4 (3): no match found, expected: "!=", ".", "==", "[", [ \\t\\r\\n] or [a-zA-Z0-9_]'],
    ["Address == 10.10.10.10", '1:17 (16): rule "number": Invalid number literal'],
    ["Node == web-1", '1:12 (11): no match found, expected: ".", "[", [ \\t\\r\\n], [a-zA-Z0-9_] or EOF'],
    ["Foo == bar", 'Selector "Foo" is not valid'],
    ["Meta.role.x == bar", 'Selector "Meta.role.x" is not valid'],
    ["CreateIndex == 1", 'Selector "CreateIndex" is not valid'],
    ["Node is empty", 'Invalid match operator "Is Empty" for selector "Node"'],
    ["Meta == web", 'Invalid match operator "Equal" for selector "Meta"'],
    ['Node matches "[a"', 'Failed to compile regular expression "[a": error parsing regexp: missing closing ]: `[a`'],
  ])("%s → 500 with Consul's text", async (filter, message) => {
    const emu = await standin();
    await nodesWithThreeMore(emu);
    const res = await nodesQuery(emu, filter);
    expect(res.status).toBe(500);
    expect(res.text).toBe(P + message);
  });

  it("a bad filter fails before blocking", async () => {
    const emu = await standin();
    await nodesWithThreeMore(emu);
    const first = await send(emu.registry, "/v1/catalog/nodes");
    const index = first.headers.get("x-consul-index");
    const res = await send(emu.registry, `/v1/catalog/nodes?index=${index}&wait=5m&filter=${encodeURIComponent("Foo == 1")}`);
    expect(res.status).toBe(500);
    expect(res.text).toBe(`${P}Selector "Foo" is not valid`);
  });

  it("ACL filtering still applies after the expression; the filtered header reflects only what ACLs removed", async () => {
    const emu = await standin({
      acl: {
        enabled: true,
        defaultPolicy: "deny",
        tokens: [
          { AccessorID: "acc-writer", SecretID: WRITER, Rules: { node_prefix: { "": { policy: "write" } } } },
          { AccessorID: "acc-web1", SecretID: "s-web1", Rules: { node: { "web-1": { policy: "read" } } } },
        ],
      },
    });
    await nodesWithThreeMore(emu, WRITER);
    expect(await names(emu, "Meta.role == web", WRITER)).toEqual(["web-1", "web-2"]);
    const onlyWeb1 = await nodesQuery(emu, "Meta.role == web", { token: "s-web1" });
    expect((JSON.parse(onlyWeb1.text) as Array<{ Node: string }>).map((n) => n.Node)).toEqual(["web-1"]);
    expect(onlyWeb1.headers.get("x-consul-results-filtered-by-acls")).toBe("true");
    // the expression alone removed the others: nothing for ACLs to hide
    const exact = await nodesQuery(emu, 'Node == "web-1"', { token: "s-web1" });
    expect((JSON.parse(exact.text) as Array<{ Node: string }>).map((n) => n.Node)).toEqual(["web-1"]);
    expect(exact.headers.get("x-consul-results-filtered-by-acls")).toBeNull();
    // anonymous: nothing readable
    expect(await names(emu, "Meta.role == web")).toEqual([]);
  });
});
