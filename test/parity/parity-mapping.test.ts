/**
 * The mapping rules between the recorded world and standin's, as tables:
 * which values are mapped (nature.ts), how the one-to-one and the
 * order-preserving maps learn and refuse (correspondence.ts), and how a
 * recorded request is put into standin's world (world-map.ts).
 */
import { describe, expect, it } from "vitest";
import { Bijection, OrderMap, UndoLog } from "../../src/parity/compare/correspondence.js";
import { instantMs, natureOf } from "../../src/parity/compare/nature.js";
import { globRegex } from "../../src/parity/compare/waivers.js";
import { WorldMap } from "../../src/parity/compare/world-map.js";

const ID_A = "0b8e2c1a-1111-4a4a-8b8b-000000000001";
const ID_B = "0b8e2c1a-2222-4a4a-8b8b-000000000002";
const ID_X = "f00dfeed-3333-4c4c-9d9d-000000000003";
const ID_Y = "f00dfeed-4444-4c4c-9d9d-000000000004";
const SECRET_REF = "standin-redacted:sha256:0123456789abcdef";
const START = Date.parse("2026-01-01T00:00:00Z");

describe("the nature of a value", () => {
  it.each([
    ["ModifyIndex", 12, undefined, "index"],
    ["JobModifyIndex", 12, undefined, "index"],
    ["ModifyIndex", "12", undefined, "plain"],
    ["CreateTime", 1767225600000000000, undefined, "time"],
    ["SubmitTime", 1767225600000000000, undefined, "time"],
    ["MinHealthyTime", 10000000000, undefined, "plain"],
    ["ModifyTime", 0, undefined, "plain"],
    ["StaggerTime", 30000000000, undefined, "plain"],
    ["StartedAt", "2026-01-01T00:00:01.5Z", undefined, "time"],
    ["Anything", "2026-01-01T00:00:01+01:00", undefined, "time"],
    ["Port", 8080, undefined, "port"],
    ["RPCPort", 4647, undefined, "port"],
    ["Node", "laptop", undefined, "name"],
    ["Address", "10.0.0.7", undefined, "name"],
    [undefined, "127.0.0.1:4647", undefined, "name"],
    ["Name", "laptop", { NodeClass: "", Name: "laptop" }, "name"],
    ["Name", "web", { Tags: [] }, "plain"],
    ["ContentHash", "ab12", undefined, "hash"],
    ["Priority", 50, undefined, "plain"],
    ["Status", "running", undefined, "plain"],
  ] as const)("%s = %j is %s", (key, value, holder, nature) => {
    expect(natureOf(key, value, holder as Record<string, unknown> | undefined)).toBe(nature);
  });

  it.each([
    ["2026-01-01T00:00:01Z", START + 1000],
    [1767225601000000000, START + 1000],
    [1767225601000, START + 1000],
    [1767225601, START + 1000],
    ["0001-01-01T00:00:00Z", undefined],
    [0, undefined],
  ])("the instant of %j is %j", (value, ms) => {
    expect(instantMs(value)).toBe(ms);
  });
});

describe("the one-to-one map", () => {
  it("learns a pair at first sight, then holds it both ways", () => {
    const ids = new Bijection<string>(new UndoLog());
    expect(ids.pair(ID_A, ID_X)).toBe(true);
    expect(ids.pair(ID_A, ID_X)).toBe(true);
    expect(ids.pair(ID_A, ID_Y)).toBe(false); // A is X's
    expect(ids.pair(ID_B, ID_X)).toBe(false); // X is A's
    expect(ids.pair(ID_B, ID_Y)).toBe(true);
    expect(ids.localOf(ID_B)).toBe(ID_Y);
  });

  it("forgets what a failed trial learned", () => {
    const log = new UndoLog();
    const ids = new Bijection<string>(log);
    const mark = log.mark();
    ids.pair(ID_A, ID_X);
    log.rollback(mark);
    expect(ids.localOf(ID_A)).toBeUndefined();
    expect(ids.pair(ID_B, ID_X)).toBe(true);
  });
});

describe("the order-preserving map of indexes", () => {
  it.each([
    [
      "rises where the upstream's rises",
      [
        [10, 100],
        [12, 105],
      ],
      true,
    ],
    [
      "stays where the upstream's stays",
      [
        [10, 100],
        [10, 100],
      ],
      true,
    ],
    [
      "rises where the upstream's stays",
      [
        [10, 100],
        [10, 101],
      ],
      false,
    ],
    [
      "stays where the upstream's rises",
      [
        [10, 100],
        [11, 100],
      ],
      false,
    ],
    [
      "falls where the upstream's rises",
      [
        [10, 100],
        [11, 99],
      ],
      false,
    ],
    [
      "fits between two learned",
      [
        [10, 100],
        [20, 200],
        [15, 150],
      ],
      true,
    ],
    [
      "does not fit between two learned",
      [
        [10, 100],
        [20, 200],
        [15, 250],
      ],
      false,
    ],
  ] as const)("a pair that %s: %j → %s", (_, pairs, ok) => {
    const map = new OrderMap(new UndoLog());
    const results = pairs.map(([r, l]) => map.pair(r, l));
    expect(results.slice(0, -1).every(Boolean)).toBe(true);
    expect(results.at(-1)).toBe(ok);
  });

  it("gives a blocking query's index: the learned one, else the one below", () => {
    const map = new OrderMap(new UndoLog());
    map.pair(10, 100);
    map.pair(20, 200);
    expect([map.localOf(10), map.localOf(15), map.localOf(20), map.localOf(25), map.localOf(5)]).toEqual([100, 100, 200, 200, undefined]);
  });
});

describe("the world map", () => {
  it("compares strings with their IDs and secrets mapped", () => {
    const world = new WorldMap(START, START);
    expect(world.same("plain", `evaluation "${ID_A}" done`, `evaluation "${ID_X}" done`, "scheduler")).toBe(true);
    expect(world.same("plain", ID_A, ID_Y, "scheduler")).toBe(false);
    expect(world.same("plain", SECRET_REF, ID_Y, "scheduler")).toBe(true);
    expect(world.same("plain", "running", "pending", "scheduler")).toBe(false);
  });

  it.each([
    ["the same offset", "2026-03-01T00:00:05Z", "2026-01-01T00:00:05Z", true],
    ["within the tolerance", "2026-03-01T00:00:05.900Z", "2026-01-01T00:00:05Z", true],
    ["past the tolerance", "2026-03-01T00:00:07Z", "2026-01-01T00:00:05Z", false],
    ["both before the run", "2026-02-27T10:00:00Z", "2026-01-01T00:00:00Z", true],
    ["zero time and a time", "0001-01-01T00:00:00Z", "2026-01-01T00:00:05Z", false],
    ["zero time in both", "0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", true],
  ])("times by their offset from each run's start: %s", (_, recorded, local, same) => {
    // The recording started on 1 March, standin's clock on 1 January.
    const world = new WorldMap(Date.parse("2026-03-01T00:00:00Z"), START);
    expect(world.same("time", recorded, local, "scheduler")).toBe(same);
  });

  it("puts a recorded request into standin's world: IDs, secrets, indexes sent back, node names", () => {
    const world = new WorldMap(START, START);
    world.same("plain", ID_A, ID_X, "registry");
    world.same("plain", SECRET_REF, ID_Y, "registry");
    world.sameIndex("registry", 40, 7);
    world.same("name", "laptop", "standin-node", "registry");
    expect(world.localPath(`/v1/session/info/${ID_A}?index=40&token=${encodeURIComponent(SECRET_REF)}`, "registry")).toBe(`/v1/session/info/${ID_X}?index=7&token=${ID_Y}`);
    expect(world.localPath("/v1/catalog/node/laptop?index=45", "registry")).toBe("/v1/catalog/node/standin-node?index=7");
    expect(world.localText(`Bearer ${SECRET_REF}`)).toBe(`Bearer ${ID_Y}`);
    expect(JSON.parse(world.localBody(JSON.stringify({ Node: "laptop", Session: ID_A, ModifyIndex: 40 }), "registry"))).toEqual({
      Node: "standin-node",
      Session: ID_X,
      ModifyIndex: 7,
    });
  });

  it("puts an ID's prefix sent alone (Nomad's short IDs) into standin's world when it starts exactly one learned ID", () => {
    const world = new WorldMap(START, START);
    world.same("plain", ID_A, ID_X, "scheduler");
    world.same("plain", ID_B, ID_Y, "scheduler");
    // Unique prefixes: the same length of the counterpart.
    expect(world.localPath("/v1/allocation/0b8e2c1a-1111", "scheduler")).toBe("/v1/allocation/f00dfeed-3333");
    expect(world.localPath("/v1/allocations?prefix=0b8e2c1a-2", "scheduler")).toBe("/v1/allocations?prefix=f00dfeed-4");
    // A prefix of both, a prefix of none, and a count that looks like hex: as sent.
    expect(world.localPath("/v1/allocation/0b8e2c1a", "scheduler")).toBe("/v1/allocation/0b8e2c1a");
    expect(world.localPath("/v1/allocation/deadbeef", "scheduler")).toBe("/v1/allocation/deadbeef");
    world.same("plain", "1000aaaa-1111-4a4a-8b8b-000000000009", "2000bbbb-1111-4a4a-8b8b-000000000009", "scheduler");
    expect(world.localPath("/v1/jobs?per_page=1000", "scheduler")).toBe("/v1/jobs?per_page=1000");
    expect(world.localPath("/v1/allocation/1000aaaa", "scheduler")).toBe("/v1/allocation/2000bbbb");
    // In a request body too (PUT /v1/search's Prefix), a whole string alone.
    expect(JSON.parse(world.localBody(JSON.stringify({ Prefix: "0b8e2c1a-1", Context: "all" }), "scheduler"))).toEqual({ Prefix: "f00dfeed-3", Context: "all" });
  });

  it("pairs indexes past 2^53 (Consul's event list: its last event's ID folded to 64 bits) one to one, as text, not by order", () => {
    const world = new WorldMap(START, START);
    // Both would round to the same JavaScript number; the text keeps them apart.
    expect(world.sameIndex("registry", "6128355740540400217", "15250895163657509970")).toBe(true);
    expect(world.sameIndex("registry", "11166222852126116147", "1525089516365750997")).toBe(true);
    expect(world.sameIndex("registry", "6128355740540400217", "15250895163657509971")).toBe(false);
    expect(world.localPath("/v1/event/list?index=6128355740540400217&name=deploy", "registry")).toBe("/v1/event/list?index=15250895163657509970&name=deploy");
    // A counter beside them is still mapped by order.
    world.sameIndex("registry", 40, 7);
    expect(world.localPath("/v1/kv/a?index=45", "registry")).toBe("/v1/kv/a?index=7");
  });
});

describe("waiver globs", () => {
  it.each([
    ["$.Allocations[*].ModifyTime", "$.Allocations[3].ModifyTime", true],
    ["$.Allocations[*].ModifyTime", "$.Allocations[3].Job.ModifyTime", false],
    ["$.*.ModifyTime", "$.Job.ModifyTime", true],
    ["$.**", "$.Job.TaskGroups[0].Name", true],
    ["headers.*", "headers.x-consul-index", true],
    ["status", "status", true],
    ["$.Meta", "$.MetaData", false],
  ])("%s matches %s: %s", (pattern, path, matches) => {
    expect(globRegex(pattern, ".[").test(path)).toBe(matches);
  });
});
