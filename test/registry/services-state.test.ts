/**
 * The registry state's service rules (Consul's catalog state store): a
 * service's own index moves with writes to its instances, their nodes and
 * their checks; a name that loses its last instance leaves an extinction
 * index; removing a service takes its checks (and the sessions bound to
 * them); a service's checks carry its name and tags.
 */
import { describe, expect, it } from "vitest";
import { Watchers } from "../../src/core/blocking.js";
import { Clock } from "../../src/core/clock.js";
import type { ServiceContext } from "../../src/core/context.js";
import { Ids } from "../../src/core/ids.js";
import { Store } from "../../src/core/store.js";
import { checkRow } from "../../src/registry/catalog.js";
import { RegistryState, type ServiceRow, type SessionRow } from "../../src/registry/state.js";

function world() {
  const store = new Store();
  const clock = new Clock({ startMs: 0 });
  const events: string[] = [];
  const ctx: ServiceContext = {
    store,
    clock,
    ids: new Ids(1),
    watchers: new Watchers(store, clock),
    events: { record: (type, f) => events.push(`${type} ${f?.subject}`) },
    compatHeaders: true,
  };
  const state = new RegistryState(ctx);
  const write = (fn: () => void) => store.write(fn);
  write(() => {
    state.putNode({ ID: "", Node: "n1", Address: "10.0.0.1", Datacenter: "dc1", TaggedAddresses: null, Meta: null });
    state.putNode({ ID: "", Node: "n2", Address: "10.0.0.2", Datacenter: "dc1", TaggedAddresses: null, Meta: null });
  });
  return { state, store, write, events };
}

function service(node: string, id: string, name: string, tags: string[] = []): Omit<ServiceRow, "CreateIndex" | "ModifyIndex"> {
  return {
    Node: node,
    Kind: "",
    ID: id,
    Service: name,
    Tags: tags,
    Address: "",
    TaggedAddresses: null,
    Meta: {},
    Port: 80,
    SocketPath: "",
    Weights: { Passing: 1, Warning: 1 },
    EnableTagOverride: false,
  };
}

describe("registry state: services", () => {
  it("lists a name's instances by node then ID, case-insensitively by name", () => {
    const { state, write } = world();
    write(() => {
      state.putService(service("n2", "web-b", "web"));
      state.putService(service("n1", "web-z", "Web"));
      state.putService(service("n1", "web-a", "web"));
      state.putService(service("n1", "db", "db"));
    });
    expect(state.instancesOf("WEB").map((s) => `${s.Node}/${s.ID}`)).toEqual(["n1/web-a", "n1/web-z", "n2/web-b"]);
    expect(state.servicesOf("N1").map((s) => s.ID)).toEqual(["db", "web-a", "web-z"]);
  });

  it("moves a service's own index on writes to its instances, its checks and its nodes' checks, and no other's", () => {
    const { state, write, store } = world();
    write(() => state.putService(service("n1", "web", "web")));
    write(() => state.putService(service("n2", "db", "db")));
    const webAt = state.serviceIndex("web");
    const dbAt = state.serviceIndex("db");
    expect(dbAt).toBeGreaterThan(webAt);

    write(() => state.putCheck(checkRow({ Node: "n1", CheckID: "web-ttl", ServiceID: "web", Status: "passing" })));
    expect(state.serviceIndex("web")).toBe(store.index);
    expect(state.serviceIndex("db")).toBe(dbAt);

    write(() => state.putCheck(checkRow({ Node: "n2", CheckID: "disk", Status: "warning" }))); // a node check: every service on n2
    expect(state.serviceIndex("db")).toBe(store.index);
    expect(state.serviceIndex("web")).toBeLessThan(store.index);

    write(() => state.putNode({ ID: "", Node: "n1", Address: "10.0.0.9", Datacenter: "dc1", TaggedAddresses: null, Meta: null }));
    expect(state.serviceIndex("web")).toBe(store.index);
  });

  it("gives a name with no instances the last extinction's index, or the catalog's highest before any", () => {
    const { state, write, store } = world();
    expect(state.serviceIndex("nothing")).toBe(store.index);
    write(() => state.putService(service("n1", "web", "web")));
    write(() => state.putService(service("n2", "web2", "web")));
    write(() => state.removeService("n1", "web"));
    const stillThere = store.index;
    expect(state.serviceIndex("web")).toBe(stillThere);
    expect(state.serviceIndex("nothing")).toBe(stillThere); // no extinction yet: the catalog's highest index
    write(() => state.removeService("n2", "web2"));
    const extinct = store.index;
    expect(state.serviceIndex("web")).toBe(extinct);
    expect(state.serviceIndex("nothing")).toBe(extinct);
  });

  it("gives a service's checks its name and tags, and renames them with it", () => {
    const { state, write } = world();
    write(() => state.putService(service("n1", "web", "web", ["v1"])));
    write(() => state.putCheck(checkRow({ Node: "n1", CheckID: "c", ServiceID: "web", Status: "passing" })));
    expect(state.checksOfService("n1", "web").map((c) => [c.ServiceName, c.ServiceTags])).toEqual([["web", ["v1"]]]);
    write(() => state.putService(service("n1", "web", "www", ["v2"])));
    expect(state.checksOfService("n1", "web").map((c) => [c.ServiceName, c.ServiceTags])).toEqual([["www", ["v2"]]]);
    expect(state.instancesOf("web")).toEqual([]);
  });

  it("removes a service with its checks, invalidating the sessions bound to them; a node takes its services along", () => {
    const { state, write, events } = world();
    write(() => {
      state.putService(service("n1", "web", "web"));
      state.putCheck(checkRow({ Node: "n1", CheckID: "web-ttl", ServiceID: "web", Status: "passing" }));
      state.putService(service("n2", "db", "db"));
      const session: Omit<SessionRow, "CreateIndex" | "ModifyIndex"> = {
        ID: "s1",
        Name: "",
        Node: "n1",
        LockDelay: 0,
        Behavior: "release",
        TTL: "",
        NodeChecks: null,
        ServiceChecks: [{ ID: "web-ttl", Namespace: "" }],
      };
      state.sessions.putIndexed("s1", session);
    });
    write(() => state.removeService("n1", "web"));
    expect(state.checksOf("n1")).toEqual([]);
    expect(state.findSession("s1")).toBeUndefined();
    expect(events).toContain("session.invalidated s1");
    write(() => state.removeNode("n2"));
    expect(state.allServices()).toEqual([]);
  });
});
