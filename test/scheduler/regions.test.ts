/**
 * Scheduler regions (several clusters behind one agent, `region=` forwarding)
 * and leader loss (`No cluster leader`, stale reads with KnownLeader false and
 * a growing LastContact on the virtual clock).
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call as callApp } from "../support/call.js";
import { webJob } from "../support/jobs.js";
import { settleTurns, untilParked } from "../support/parked.js";

type Json = Record<string, any>;

const call = (emu: Standin, method: string, path: string, body?: unknown) => callApp(emu.scheduler, method, path, body);

function job(id: string, extra: Json = {}): Json {
  return { ...webJob(id, { task: "app" }), ...extra };
}

const TWO_REGIONS = {
  scheduler: {
    namespaces: [{ Name: "prod" }],
    jobs: [job("home-job")],
    regions: {
      west: { datacenter: "west-1", nodes: [{ Name: "w1", Datacenter: "west-1" }], jobs: [job("west-job", { Datacenters: ["west-1"] })] },
      east: {},
    },
  },
};

describe("scheduler regions", () => {
  it("lists every region and one server per region", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    expect((await call(emu, "GET", "/v1/regions")).text).toBe('["east","global","west"]');
    const members = (await call(emu, "GET", "/v1/agent/members")).body;
    expect(members.Members.map((m: Json) => [m.Name, m.Tags.region, m.Tags.dc])).toEqual([
      ["standin.east", "east", "dc1"],
      ["standin.global", "global", "dc1"],
      ["standin.west", "west", "west-1"],
    ]);
    expect(members).toMatchObject({ ServerRegion: "global", ServerName: "standin.global", ServerDC: "dc1" });
    // Asked in another region, the agent is still the one that answers (agent endpoints are not forwarded state).
    expect((await call(emu, "GET", "/v1/regions?region=west")).text).toBe('["east","global","west"]');
  });

  it("serves each region's own jobs, nodes and index with region=", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const home = await call(emu, "GET", "/v1/jobs");
    const west = await call(emu, "GET", "/v1/jobs?region=west");
    const east = await call(emu, "GET", "/v1/jobs?region=east");
    expect(home.body.map((j: Json) => j.ID)).toEqual(["home-job"]);
    expect(west.body.map((j: Json) => j.ID)).toEqual(["west-job"]);
    expect(east.body).toEqual([]);
    // Each region counts its own raft index: writes in one leave the other's where it was.
    const homeIndex = home.headers.get("X-Nomad-Index");
    const westIndex = Number(west.headers.get("X-Nomad-Index"));
    for (const id of ["w2", "w3"]) expect((await call(emu, "PUT", "/v1/jobs?region=west", { Job: job(id, { Datacenters: ["west-1"] }) })).status).toBe(200);
    expect((await call(emu, "GET", "/v1/jobs?region=west")).headers.get("X-Nomad-Index")).toBe(String(westIndex + 2));
    expect((await call(emu, "GET", "/v1/jobs")).headers.get("X-Nomad-Index")).toBe(homeIndex);
    const westJob = (await call(emu, "GET", "/v1/job/west-job?region=west")).body;
    expect(westJob.Region).toBe("west");
    expect((await call(emu, "GET", "/v1/job/west-job")).status).toBe(404);
    const westNodes = (await call(emu, "GET", "/v1/nodes?region=west")).body.map((n: Json) => n.Name).sort();
    expect(westNodes).toEqual(["standin", "w1"]);
    // Namespaces are inherited from the agent's region.
    expect((await call(emu, "GET", "/v1/namespaces?region=east")).body.map((n: Json) => n.Name)).toEqual(["default", "prod"]);
  });

  it("places and runs a region's job on its own clock-driven cluster", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    emu.clock.advance("30s");
    const allocs = (await call(emu, "GET", "/v1/job/west-job/allocations?region=west")).body;
    expect(allocs).toHaveLength(1);
    expect(allocs[0]).toMatchObject({ ClientStatus: "running", NodeName: "w1" });
  });

  it("lands a job registered with Region set in that region (body, then job), query region winning", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const byJob = await call(emu, "PUT", "/v1/jobs", { Job: job("by-job", { Region: "east" }) });
    expect(byJob.status, byJob.text).toBe(200);
    const byBody = await call(emu, "PUT", "/v1/jobs", { Job: job("by-body"), Region: "east" });
    expect(byBody.status, byBody.text).toBe(200);
    const byQuery = await call(emu, "PUT", "/v1/jobs?region=west", { Job: job("by-query", { Region: "east", Datacenters: ["west-1"] }) });
    expect(byQuery.status, byQuery.text).toBe(200);
    expect((await call(emu, "GET", "/v1/jobs?region=east")).body.map((j: Json) => j.ID)).toEqual(["by-body", "by-job"]);
    expect((await call(emu, "GET", "/v1/job/by-query?region=west")).body.Region).toBe("west");
    expect((await call(emu, "GET", "/v1/jobs")).body.map((j: Json) => j.ID)).toEqual(["home-job"]);
  });

  it("answers an unknown region with 500 No path to region (query or body), changing nothing", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const before = emu.stateHash();
    const read = await call(emu, "GET", "/v1/jobs?region=mars");
    expect([read.status, read.text]).toEqual([500, "No path to region"]);
    const write = await call(emu, "PUT", "/v1/jobs", { Job: job("lost", { Region: "mars" }) });
    expect([write.status, write.text]).toEqual([500, "No path to region"]);
    // An unknown path is still the empty 404 first, as Nomad's routing comes before parsing.
    expect((await call(emu, "GET", "/v1/nope?region=mars")).status).toBe(404);
    expect(emu.stateHash()).toBe(before);
  });

  it("takes faults and timeline actions per region", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const res = await emu.scheduler.request("/_standin/scheduler/nodes/w1?region=west", { method: "POST", body: JSON.stringify({ Status: "down" }) });
    expect(res.status).toBe(200);
    expect((await call(emu, "GET", "/v1/nodes?region=west")).body.find((n: Json) => n.Name === "w1").Status).toBe("down");
    const unknown = await emu.scheduler.request("/_standin/scheduler/nodes/w1?region=mars", { method: "POST", body: JSON.stringify({ Status: "down" }) });
    expect(unknown.status).toBe(404);
    emu.act("node-up", { node: "w1", region: "west" });
    expect((await call(emu, "GET", "/v1/nodes?region=west")).body.find((n: Json) => n.Name === "w1").Status).toBe("ready");
    expect(() => emu.act("node-up", { node: "w1" })).toThrow(/w1/); // not a node of the home region
  });

  it("survives snapshot, restore and reset, in a new emulator too", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    await call(emu, "PUT", "/v1/jobs?region=east", { Job: job("later") });
    const snapshot = emu.snapshot();
    const hash = emu.stateHash();
    const other = await createStandin();
    other.restore(structuredClone(snapshot));
    expect(other.stateHash()).toBe(hash);
    expect((await call(other, "GET", "/v1/jobs?region=east")).body.map((j: Json) => j.ID)).toEqual(["later"]);
    // Timers of a restored region fire with that region's handlers.
    other.clock.advance("30s");
    expect((await call(other, "GET", "/v1/job/later/allocations?region=east")).body[0].ClientStatus).toBe("running");
    emu.reset();
    expect((await call(emu, "GET", "/v1/jobs?region=east")).body).toEqual([]);
  });

  it("gives byte-identical answers for the same fixture and requests", async () => {
    const run = async () => {
      const emu = await createStandin({ fixture: TWO_REGIONS });
      await call(emu, "PUT", "/v1/jobs?region=west", { Job: job("again", { Datacenters: ["west-1"] }) });
      emu.clock.advance("1m");
      const texts = [];
      for (const path of ["/v1/jobs?region=west", "/v1/allocations?region=west", "/v1/evaluations?region=west", "/v1/agent/members"])
        texts.push((await call(emu, "GET", path)).text);
      return { texts, hash: emu.stateHash() };
    };
    expect(await run()).toEqual(await run());
  });

  it("wakes a region's parked blocking query on that region's writes only", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const index = (await call(emu, "GET", "/v1/jobs?region=west")).headers.get("X-Nomad-Index");
    let answered: Awaited<ReturnType<typeof call>> | undefined;
    const parked = call(emu, "GET", `/v1/jobs?region=west&index=${index}&wait=1m`).then((a) => (answered = a));
    await untilParked(emu, 1);
    await call(emu, "PUT", "/v1/jobs", { Job: job("home-2") }); // the home region moves past that index
    await settleTurns();
    expect(answered).toBeUndefined();
    expect(emu.watchers.parked).toBe(1);
    await call(emu, "PUT", "/v1/jobs?region=west", { Job: job("west-2", { Datacenters: ["west-1"] }) });
    await parked;
    expect(answered!.body.map((j: Json) => j.ID)).toEqual(["west-2", "west-job"]);
    expect(Number(answered!.headers.get("X-Nomad-Index"))).toBeGreaterThan(Number(index));
  });

  it("streams a region's own events with region= on the event stream", async () => {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const res = await emu.scheduler.request("/v1/event/stream?region=west&index=1&topic=Job");
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = "";
    for (let i = 0; i < 5 && !text.includes("west-job"); i++) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain('"Key":"west-job"');
    expect(text).not.toContain("home-job");
    const unknown = await emu.scheduler.request("/v1/event/stream?region=mars");
    expect([unknown.status, await unknown.text()]).toEqual([500, "No path to region"]);
  });

  it("applies a regions entry named after the agent's own region to the agent's cluster", async () => {
    const emu = await createStandin({ fixture: { scheduler: { regions: { global: { jobs: [job("same")] } } } } });
    expect((await call(emu, "GET", "/v1/regions")).text).toBe('["global"]');
    expect((await call(emu, "GET", "/v1/jobs")).body.map((j: Json) => j.ID)).toEqual(["same"]);
  });

  it("rejects a region name that could not name a scope", async () => {
    await expect(createStandin({ fixture: { scheduler: { regions: { "a/b": {} } } } })).rejects.toThrow(/regions/);
  });
});

describe("scheduler leader loss", () => {
  async function leaderless(): Promise<Standin> {
    const emu = await createStandin({ fixture: TWO_REGIONS });
    const res = await emu.scheduler.request("/_standin/scheduler/leader", { method: "POST", body: JSON.stringify({ known: false }) });
    expect(await res.json()).toEqual({ known: false, lastContactMs: 0 });
    return emu;
  }

  it("fails default reads and writes with 500 No cluster leader, changing nothing", async () => {
    const emu = await leaderless();
    const before = emu.stateHash();
    for (const [method, path, body] of [
      ["GET", "/v1/jobs"],
      ["GET", "/v1/job/home-job"],
      ["PUT", "/v1/jobs", { Job: job("new") }],
      ["DELETE", "/v1/job/home-job"],
    ] as const) {
      const res = await call(emu, method, path, body);
      expect([method, path, res.status, res.text]).toEqual([method, path, 500, "No cluster leader"]);
      expect(res.headers.get("X-Nomad-KnownLeader")).toBeNull();
    }
    expect(emu.stateHash()).toBe(before);
  });

  it("serves stale reads with KnownLeader false and a LastContact that grows with the virtual clock", async () => {
    const emu = await leaderless();
    emu.clock.advance("1500ms");
    const first = await call(emu, "GET", "/v1/jobs?stale");
    expect(first.status).toBe(200);
    expect(first.body.map((j: Json) => j.ID)).toEqual(["home-job"]);
    expect(first.headers.get("X-Nomad-KnownLeader")).toBe("false");
    expect(first.headers.get("X-Scheduler-KnownLeader")).toBe("false");
    expect(first.headers.get("X-Nomad-LastContact")).toBe("1500");
    emu.clock.advance("2s");
    const second = await call(emu, "GET", "/v1/jobs?stale=true");
    expect(second.headers.get("X-Nomad-LastContact")).toBe("3500");
    // A 404 of a stale read carries the same meta.
    const missing = await call(emu, "GET", "/v1/job/nope?stale");
    expect([missing.status, missing.headers.get("X-Nomad-KnownLeader"), missing.headers.get("X-Nomad-LastContact")]).toEqual([404, "false", "3500"]);
  });

  it("keeps the agent's own endpoints answering; status/leader is an empty string", async () => {
    const emu = await leaderless();
    expect((await call(emu, "GET", "/v1/status/leader")).text).toBe('""');
    expect((await call(emu, "GET", "/v1/regions")).status).toBe(200);
    expect((await call(emu, "GET", "/v1/agent/members")).status).toBe(200);
  });

  it("is per region: the other regions keep their leader", async () => {
    const emu = await leaderless();
    const west = await call(emu, "GET", "/v1/jobs?region=west");
    expect([west.status, west.headers.get("X-Nomad-KnownLeader")]).toEqual([200, "true"]);
    const lost = await emu.scheduler.request("/_standin/scheduler/leader?region=west", { method: "POST", body: JSON.stringify({ known: false }) });
    expect(lost.status).toBe(200);
    expect((await call(emu, "GET", "/v1/jobs?region=west")).text).toBe("No cluster leader");
  });

  it("comes back when the leader is restored (control route and timeline action)", async () => {
    const emu = await leaderless();
    emu.act("scheduler-leader", { known: true });
    const res = await call(emu, "GET", "/v1/jobs");
    expect([res.status, res.headers.get("X-Nomad-KnownLeader"), res.headers.get("X-Nomad-LastContact")]).toEqual([200, "true", "0"]);
    expect((await call(emu, "GET", "/v1/status/leader")).text).toBe('"127.0.0.1:4647"');
    expect((await call(emu, "PUT", "/v1/jobs", { Job: job("after") })).status).toBe(200);
  });

  it("follows a fixture timeline on the virtual clock", async () => {
    const emu = await createStandin({
      fixture: {
        ...TWO_REGIONS,
        timeline: [
          { at: "10s", do: "scheduler-leader", known: false },
          { at: "40s", do: "scheduler-leader", known: true },
        ],
      },
    });
    emu.clock.advance("15s");
    expect((await call(emu, "GET", "/v1/jobs")).text).toBe("No cluster leader");
    expect((await call(emu, "GET", "/v1/jobs?stale")).headers.get("X-Nomad-LastContact")).toBe("5000");
    emu.clock.advance("30s");
    expect((await call(emu, "GET", "/v1/jobs")).status).toBe(200);
  });

  it("holds the cluster's own work while no leader is known and takes it up at the election", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job("web")] } } });
    await emu.scheduler.request("/_standin/scheduler/leader", { method: "POST", body: JSON.stringify({ known: false }) });
    const fired = emu.clock.advance("1m");
    expect(fired.map((f) => f.detail)).toContainEqual({ deferred: "No cluster leader" });
    // Nothing was scheduled: the evaluation is still pending, no allocation exists.
    const stale = await call(emu, "GET", "/v1/job/web/evaluations?stale");
    expect(stale.body.map((e: Json) => e.Status)).toEqual(["pending"]);
    expect((await call(emu, "GET", "/v1/job/web/allocations?stale")).body).toEqual([]);
    const hash = emu.stateHash();
    // The set-aside work is state: a snapshot restored elsewhere carries it.
    const other = await createStandin();
    other.restore(structuredClone(emu.snapshot()));
    expect(other.stateHash()).toBe(hash);
    for (const target of [emu, other]) {
      target.act("scheduler-leader", { known: true });
      expect((await call(target, "GET", "/v1/job/web/evaluations")).body.map((e: Json) => e.Status)).toEqual(["complete"]);
      target.clock.advance("30s");
      expect((await call(target, "GET", "/v1/job/web/allocations")).body.map((a: Json) => a.ClientStatus)).toEqual(["running"]);
    }
  });

  it("rejects a bad fault body with 400 and leaves the leader as it was", async () => {
    const emu = await createStandin();
    const res = await emu.scheduler.request("/_standin/scheduler/leader", { method: "POST", body: JSON.stringify({ known: "no" }) });
    expect(res.status).toBe(400);
    expect(await (await emu.scheduler.request("/_standin/scheduler/leader")).json()).toEqual({ known: true, lastContactMs: 0 });
  });
});
