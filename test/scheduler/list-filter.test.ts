/**
 * The `filter` query parameter through the HTTP surface: evaluated on each
 * list item's full object (not the stub), counted before pagination, and
 * its parse and evaluation errors are Nomad's 400s.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { smallJob } from "../support/jobs.js";

type Json = Record<string, any>;

let emu: Standin;

async function get(path: string): Promise<{ status: number; body: any; text: string; next: string | null }> {
  const res = await emu.scheduler.request(path);
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body, next: res.headers.get("x-scheduler-nexttoken") };
}

const q = (expression: string) => encodeURIComponent(expression);

function job(id: string, meta: Record<string, string>, group = "web"): Json {
  return smallJob(id, { datacenters: null, meta, group });
}

beforeAll(async () => {
  emu = await createStandin({
    fixture: {
      scheduler: {
        nodes: [
          { Name: "alpha", HTTPAddr: "10.0.0.1:4646" },
          { Name: "beta", HTTPAddr: "10.0.0.2:4646" },
          { Name: "gamma", HTTPAddr: "10.0.0.3:4646" },
        ],
      },
    },
  });
  const jobs = [job("api", { team: "core", "owner.email": "a@x" }), job("batch", { team: "data" }, "workers"), job("cache", { team: "core" }), job("db", { team: "core" })];
  for (const j of jobs) {
    const res = await emu.scheduler.request("/v1/jobs", { method: "PUT", body: JSON.stringify({ Job: j }) });
    expect(res.status).toBe(200);
  }
  emu.clock.advance("12s");
});

describe("filter on the full object", () => {
  it("matches node HTTPAddr (full node), which the stub does not show", async () => {
    const res = await get(`/v1/nodes?filter=${q('HTTPAddr == "10.0.0.2:4646"')}`);
    expect(res.status).toBe(200);
    expect(res.body.map((n: Json) => n.Name)).toEqual(["beta"]);
    expect(res.body[0].HTTPAddr).toBeUndefined(); // still the stub on the wire
    expect(res.body[0].Address).toBe("10.0.0.2");
  });

  it("a stub-only field (Address) is not in the full node: error finding value in datum", async () => {
    const res = await get(`/v1/nodes?filter=${q('Address == "10.0.0.2"')}`);
    expect(res.status).toBe(400);
    expect(res.text).toContain("failed to read result page: error finding value in datum");
  });

  it("job Meta by dot, double-quoted, and single-quoted index", async () => {
    for (const expression of ['Meta.team == "core"', 'Meta["team"] == "core"', "Meta['team'] == \"core\""]) {
      const res = await get(`/v1/jobs?filter=${q(expression)}`);
      expect(res.status, expression).toBe(200);
      expect(
        res.body.map((j: Json) => j.ID),
        expression,
      ).toEqual(["api", "cache", "db"]);
    }
    const dotted = await get(`/v1/jobs?filter=${q("Meta['owner.email'] == \"a@x\"")}`);
    expect(dotted.body.map((j: Json) => j.ID)).toEqual(["api"]);
  });

  it("job task groups (an array on the full job) by index and any", async () => {
    const byIndex = await get(`/v1/jobs?filter=${q('TaskGroups.0.Name == "workers"')}`);
    expect(byIndex.body.map((j: Json) => j.ID)).toEqual(["batch"]);
    const negated = await get(`/v1/jobs?filter=${q('not (Meta.team == "core") or ID matches "^d"')}`);
    expect(negated.body.map((j: Json) => j.ID)).toEqual(["batch", "db"]);
  });

  it("deployments select a task group by name, dot or index form", async () => {
    // A key missing from one deployment's TaskGroups map fails the whole read, as pointerstructure does.
    const missing = await get(`/v1/deployments?filter=${q("TaskGroups['workers'].DesiredTotal == 1")}`);
    expect(missing.status).toBe(400);
    expect(missing.text).toBe('failed to read result page: error finding value in datum: /TaskGroups/workers/DesiredTotal at part 1: couldn\'t find key "workers"');
    const web = await get(`/v1/deployments?filter=${q('JobID != "batch" and TaskGroups.web.DesiredTotal == 1')}`);
    expect(web.status, web.text).toBe(200); // `and` short-circuits, so batch's deployment never looks up "web"
    expect(web.body.map((d: Json) => d.JobID)).toEqual(["api", "cache", "db"]);
    const all = await get("/v1/deployments");
    expect(all.body.length).toBe(4);
    for (const expression of ['"workers" in TaskGroups', "TaskGroups['workers'] is not empty == false or \"workers\" in TaskGroups"].slice(0, 1)) {
      const res = await get(`/v1/deployments?filter=${q(expression)}`);
      expect(res.status, res.text).toBe(200);
      expect(
        res.body.map((d: Json) => d.JobID),
        expression,
      ).toEqual(["batch"]);
    }
  });

  it("allocations and evaluations filter too", async () => {
    const allocs = await get(`/v1/allocations?filter=${q('JobID == "cache"')}`);
    expect(allocs.status, allocs.text).toBe(200);
    expect(allocs.body.length).toBe(1);
    expect(allocs.body[0].JobID).toBe("cache");
    const evals = await get(`/v1/evaluations?filter=${q('JobID == "cache" or JobID == "db"')}`);
    expect(evals.status, evals.text).toBe(200);
    expect(new Set(evals.body.map((e: Json) => e.JobID))).toEqual(new Set(["cache", "db"]));
  });
});

describe("filter and pagination", () => {
  it("counts only matches towards per_page, and the token continues among matches", async () => {
    const first = await get(`/v1/jobs?per_page=2&filter=${q('Meta.team == "core"')}`);
    expect(first.body.map((j: Json) => j.ID)).toEqual(["api", "cache"]);
    expect(first.next).not.toBeNull();
    const second = await get(`/v1/jobs?per_page=2&filter=${q('Meta.team == "core"')}&next_token=${encodeURIComponent(first.next!)}`);
    expect(second.body.map((j: Json) => j.ID)).toEqual(["db"]);
    expect(second.next).toBeNull();
  });

  it("no next token when the remaining items all fail the filter", async () => {
    const res = await get(`/v1/jobs?per_page=1&filter=${q('ID == "db"')}`);
    expect(res.body.map((j: Json) => j.ID)).toEqual(["db"]);
    expect(res.next).toBeNull();
  });
});

describe("filter errors", () => {
  it("a parse error is 400 with the paginator prefix, and does not block", async () => {
    const index = (await emu.scheduler.request("/v1/jobs")).headers.get("x-nomad-index");
    const res = await get(`/v1/jobs?index=${index}&wait=5m&filter=${q("Name ==")}`);
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/^failed to create result paginator: failed to read filter expression: 1:\d+ \(\d+\): /);
  });

  it("an evaluation error under a blocking query answers at once", async () => {
    const index = (await emu.scheduler.request("/v1/jobs")).headers.get("x-nomad-index");
    const res = await get(`/v1/jobs?index=${index}&wait=5m&filter=${q('Nope == "x"')}`);
    expect(res.status).toBe(400);
    expect(res.text).toBe('failed to read result page: error finding value in datum: /Nope at part 0: couldn\'t find key: struct field with name "Nope"');
    expect(emu.watchers.parked).toBe(0);
  });

  it("an empty filter matches everything", async () => {
    const res = await get("/v1/jobs?filter=");
    expect(res.body.length).toBe(4);
  });
});

describe("filter examples", () => {
  it("a job by meta and status, and deployments by task group name", async () => {
    const jobs = await get(`/v1/jobs?filter=${q('Meta.team == "core" and not (Status == "dead")')}`);
    expect(jobs.status, jobs.text).toBe(200);
    expect(jobs.body.map((j: Json) => j.ID)).toEqual(["api", "cache", "db"]);
    const deployments = await get(`/v1/deployments?filter=${q('"workers" in TaskGroups')}`);
    expect(deployments.body.map((d: Json) => d.JobID)).toEqual(["batch"]);
  });

  it("any over a job's task groups, and over a deployment's TaskGroups map", async () => {
    const jobs = await get(`/v1/jobs?filter=${q('any TaskGroups as tg { tg.Name == "workers" }')}`);
    expect(jobs.status, jobs.text).toBe(200);
    expect(jobs.body.map((j: Json) => j.ID)).toEqual(["batch"]);
    const deployments = await get(`/v1/deployments?filter=${q('all TaskGroups as name, state { state.HealthyAllocs == 1 and name == "web" }')}`);
    expect(deployments.status, deployments.text).toBe(200);
    expect(deployments.body.map((d: Json) => d.JobID)).toEqual(["api", "cache", "db"]);
  });

  it("string values coerce to the selector's type", async () => {
    const byCount = await get(`/v1/jobs?filter=${q('TaskGroups.0.Count == "1" and Stop == "false"')}`);
    expect(byCount.status, byCount.text).toBe(200);
    expect(byCount.body.length).toBe(4);
  });

  it("a parse error names its position", async () => {
    const res = await get(`/v1/jobs?filter=${q("Name ==")}`);
    expect(res.text).toMatch(/^failed to create result paginator: failed to read filter expression: 1:8 \(7\): no match found, expected: /);
  });
});
