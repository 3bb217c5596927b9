/**
 * User events: fire (the UserEvent answer, validation, event:write) and
 * list (the newest 256 oldest first, the UUID-folded index, blocking while
 * the index equals ?index=, event:read filtering), kept in the state.
 */
import { describe, expect, it } from "vitest";
import { send, type SendInit, type TextAnswer } from "../support/call.js";
import { settleTurns, untilParked } from "../support/parked.js";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import { uuidToUint64 } from "../../src/registry/events.js";

async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}
const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
const fire = (emu: Standin, name: string, payload?: string, query = "", headers: Record<string, string> = {}) =>
  req(emu, `/v1/event/fire/${name}${query}`, { method: "PUT", ...(payload !== undefined ? { body: payload } : {}), headers });
type Event = { ID: string; Name: string; Payload: string | null; LTime: number; Version: number };
const events = (res: TextAnswer) => JSON.parse(res.text) as Event[];

describe("event fire", () => {
  it("answers the UserEvent in Consul's field order, with the payload in base64 and LTime 0", async () => {
    const emu = await standin();
    const res = await fire(emu, "deploy", "v1.2.3", "?service=web&tag=canary&node=.*");
    expect(res.status).toBe(200);
    const event = JSON.parse(res.text) as Record<string, unknown>;
    expect(Object.keys(event)).toEqual(["ID", "Name", "Payload", "NodeFilter", "ServiceFilter", "TagFilter", "Version", "LTime"]);
    expect(event).toMatchObject({
      Name: "deploy",
      Payload: Buffer.from("v1.2.3").toString("base64"),
      NodeFilter: ".*",
      ServiceFilter: "web",
      TagFilter: "canary",
      Version: 1,
      LTime: 0,
    });
    expect(event.ID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(JSON.parse((await fire(emu, "empty")).text).Payload).toBeNull();
  });

  it("draws the same IDs from the same seed", async () => {
    const ids = async () => JSON.parse((await fire(await standin(), "x")).text).ID as string;
    expect(await ids()).toBe(await ids());
  });

  it("refuses a missing name (400) and bad filters (500) with Consul's texts", async () => {
    const emu = await standin();
    const missing = await fire(emu, "");
    expect([missing.status, missing.text]).toEqual([400, "Missing name"]);
    const tag = await fire(emu, "x", undefined, "?tag=a");
    expect([tag.status, tag.text]).toEqual([500, "Cannot provide tag filter without service filter"]);
    const regex = await fire(emu, "x", undefined, "?node=(");
    expect(regex.status).toBe(500);
    expect(regex.text).toMatch(/^Invalid node filter: error parsing regexp: missing closing \): `\(`$/);
    expect(events(await req(emu, "/v1/event/list"))).toEqual([]);
  });

  it("refuses a payload past serf's 512-byte user event limit", async () => {
    const emu = await standin();
    const res = await fire(emu, "big", "x".repeat(600));
    expect([res.status, res.text]).toEqual([500, "user event exceeds configured limit of 512 bytes before encoding"]);
    expect((await fire(emu, "small", "x".repeat(300))).status).toBe(200);
  });

  it("needs event:write, denied with a bare Permission denied", async () => {
    const emu = await standin({
      acl: { enabled: true, defaultPolicy: "deny", tokens: [{ SecretID: "ops", Rules: { event_prefix: { "deploy-": { policy: "write" } } } }] },
    });
    const denied = await fire(emu, "deploy-x");
    expect([denied.status, denied.text]).toEqual([403, "Permission denied"]);
    expect((await fire(emu, "deploy-x", undefined, "", { "X-Consul-Token": "ops" })).status).toBe(200);
    expect((await fire(emu, "other", undefined, "", { "X-Consul-Token": "ops" })).status).toBe(403);
  });
});

describe("event list", () => {
  it("lists events oldest first with their Lamport times, filtered by name, indexed by the newest ID folded to 64 bits", async () => {
    const emu = await standin();
    const empty = await req(emu, "/v1/event/list");
    expect(empty.text).toBe("[]");
    expect(empty.headers.get("x-consul-index")).toBe("1");
    expect(empty.headers.get("x-consul-knownleader")).toBeNull();
    expect(empty.headers.get("x-consul-lastcontact")).toBeNull();
    await fire(emu, "a", "1");
    await fire(emu, "b");
    await fire(emu, "a", "3");
    const all = await req(emu, "/v1/event/list");
    const listed = events(all);
    expect(listed.map((e) => [e.Name, e.LTime])).toEqual([
      ["a", 1],
      ["b", 2],
      ["a", 3],
    ]);
    expect(all.headers.get("x-consul-index")).toBe(uuidToUint64(listed[2]!.ID).toString());
    const onlyB = await req(emu, "/v1/event/list?name=b");
    expect(events(onlyB).map((e) => e.Name)).toEqual(["b"]);
    expect(onlyB.headers.get("x-consul-index")).toBe(uuidToUint64(listed[1]!.ID).toString());
  });

  it("folds a UUID as Consul's uuidToUint64 does, exactly past 2^53", () => {
    expect(uuidToUint64("ffffffff-ffff-ffff-0000-000000000000")).toBe(0xffffffffffffffffn);
    expect(uuidToUint64("12345678-9abc-def0-1111-111111111111").toString()).toBe((0x123456789abcdef0n ^ 0x1111111111111111n).toString());
  });

  it("keeps the newest 256", async () => {
    const emu = await standin();
    for (let i = 0; i < 260; i++) await fire(emu, `e${i}`);
    const listed = events(await req(emu, "/v1/event/list"));
    expect(listed).toHaveLength(256);
    expect(listed[0]!.Name).toBe("e4");
    expect(listed[255]!.Name).toBe("e259");
  });

  it("does not list events whose filters miss this agent, nor remote-exec events", async () => {
    const emu = await standin();
    await fire(emu, "elsewhere", undefined, "?node=^other$");
    await fire(emu, "no-service", undefined, "?service=web");
    await fire(emu, "_rexec");
    await fire(emu, "here", undefined, "?node=^stand");
    expect(events(await req(emu, "/v1/event/list")).map((e) => [e.Name, e.LTime])).toEqual([["here", 4]]);
  });

  it("blocks while the index is the one asked about and wakes on a new event", async () => {
    const emu = await standin();
    await fire(emu, "first");
    const index = (await req(emu, "/v1/event/list")).headers.get("x-consul-index")!;
    let done = false;
    const parked = req(emu, `/v1/event/list?index=${index}`).then((res) => {
      done = true;
      return res;
    });
    await untilParked(emu, 1);
    await settleTurns();
    expect(done).toBe(false);
    await fire(emu, "second");
    const res = await parked;
    expect(events(res).map((e) => e.Name)).toEqual(["first", "second"]);
    expect(res.headers.get("x-consul-index")).not.toBe(index);
  });

  it("answers at once for any other index, and at the (capped) wait with the same index", async () => {
    const emu = await standin();
    await fire(emu, "only");
    const index = (await req(emu, "/v1/event/list")).headers.get("x-consul-index")!;
    expect((await req(emu, "/v1/event/list?index=5")).status).toBe(200);
    const parked = req(emu, `/v1/event/list?index=${index}&wait=20m`);
    await untilParked(emu, 1);
    emu.clock.advance("9m");
    await settleTurns();
    expect(emu.watchers.parked).toBe(1);
    emu.clock.advance("61s");
    const res = await parked;
    expect(res.headers.get("x-consul-index")).toBe(index);
  });

  it("filters by event:read, telling only a token holder", async () => {
    const emu = await standin({
      acl: { enabled: true, defaultPolicy: "allow", tokens: [{ SecretID: "limited", Rules: { event_prefix: { "": { policy: "deny" }, public: { policy: "read" } } } }] },
    });
    await fire(emu, "public-1");
    await fire(emu, "secret");
    const res = await req(emu, "/v1/event/list", { headers: { "X-Consul-Token": "limited" } });
    expect(events(res).map((e) => e.Name)).toEqual(["public-1"]);
    expect(res.headers.get("x-consul-results-filtered-by-acls")).toBe("true");
    const anonymous = await req(emu, "/v1/event/list");
    expect(events(anonymous)).toHaveLength(2);
    expect(anonymous.headers.get("x-consul-results-filtered-by-acls")).toBeNull();
  });

  it("keeps events in the state: a snapshot restores them", async () => {
    const emu = await standin();
    await fire(emu, "kept");
    const snapshot = emu.snapshot();
    await fire(emu, "later");
    emu.restore(snapshot);
    expect(events(await req(emu, "/v1/event/list")).map((e) => e.Name)).toEqual(["kept"]);
  });
});
