/**
 * Pagination over every list endpoint: pages of 1, 2 and 7, forward and
 * reverse, reassemble the full list in order; the next-token header is
 * there exactly when another page exists.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { smallJob } from "../support/jobs.js";

type Json = Record<string, any>;

let emu: Standin;

async function get(path: string): Promise<{ status: number; body: any; text: string; next: string | null; nomadNext: string | null }> {
  const res = await emu.scheduler.request(path);
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined; // a plain-text error
  }
  return { status: res.status, text, body, next: res.headers.get("x-scheduler-nexttoken"), nomadNext: res.headers.get("x-nomad-nexttoken") };
}

function job(id: string, namespace = "default"): Json {
  return smallJob(id, { namespace, datacenters: null });
}

beforeAll(async () => {
  emu = await createStandin({ fixture: { scheduler: { namespaces: [{ Name: "prod" }], nodes: Array.from({ length: 5 }, (_, i) => ({ Name: `n${i}` })) } } });
  for (let i = 0; i < 9; i++) {
    const res = await emu.scheduler.request("/v1/jobs", {
      method: "PUT",
      body: JSON.stringify({ Job: job(`job-${String.fromCharCode(106 - i)}`, i % 3 === 0 ? "prod" : "default") }),
    });
    expect(res.status).toBe(200);
  }
  emu.clock.advance("12s");
});

async function walk(base: string, perPage: number, reverse: boolean): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let token = "";
  let pages = 0;
  for (;;) {
    const sep = base.includes("?") ? "&" : "?";
    const page = await get(`${base}${sep}per_page=${perPage}${reverse ? "&reverse=true" : ""}${token ? `&next_token=${encodeURIComponent(token)}` : ""}`);
    expect(page.status).toBe(200);
    pages++;
    expect(page.body.length).toBeLessThanOrEqual(perPage);
    ids.push(...page.body.map((x: Json) => x.ID));
    expect(page.next).toBe(page.nomadNext);
    if (page.next === null) break;
    expect(page.body.length).toBe(perPage);
    token = page.next;
    if (pages > 100) throw new Error("pagination does not end");
  }
  return { ids, pages };
}

const LISTS = ["/v1/jobs?namespace=*", "/v1/jobs", "/v1/evaluations?namespace=*", "/v1/allocations?namespace=*", "/v1/deployments?namespace=*", "/v1/nodes"];

describe.each(LISTS)("%s", (base) => {
  it.each([1, 2, 7])("pages of %i reassemble the full list in order, forward and reverse", async (perPage) => {
    const full = (await get(base)).body.map((x: Json) => x.ID);
    expect(full.length).toBeGreaterThan(2);
    const forward = await walk(base, perPage, false);
    expect(forward.ids).toEqual(full);
    expect(forward.pages).toBe(Math.max(1, Math.ceil(full.length / perPage)));
    if (base.startsWith("/v1/nodes") || base.startsWith("/v1/jobs")) return;
    const backward = await walk(base, perPage, true);
    expect(backward.ids).toEqual([...full].reverse());
  });

  it.each([1, 2, 7])("pages of %i with a filter: the filtered list, counted after filtering, forward and reverse", async (perPage) => {
    const expression = 'ID matches "[02468ace]$"';
    const sep = base.includes("?") ? "&" : "?";
    const filtered = `${base}${sep}filter=${encodeURIComponent(expression)}`;
    const expected = (await get(base)).body.map((x: Json) => x.ID as string).filter((id: string) => /[02468ace]$/.test(id));
    expect(expected.length).toBeGreaterThan(0);
    expect((await get(filtered)).body.map((x: Json) => x.ID)).toEqual(expected);
    const forward = await walk(filtered, perPage, false);
    expect(forward.ids).toEqual(expected);
    expect(forward.pages).toBe(Math.max(1, Math.ceil(expected.length / perPage)));
    if (base.startsWith("/v1/nodes") || base.startsWith("/v1/jobs")) return;
    const backward = await walk(filtered, perPage, true);
    expect(backward.ids).toEqual([...expected].reverse());
  });
});

describe("tokens and ordering", () => {
  it("jobs are ordered by (namespace, ID) and their tokens are <namespace>.<id>", async () => {
    const all = (await get("/v1/jobs?namespace=*")).body as Json[];
    const keys = all.map((j) => `${j.Namespace}.${j.ID}`);
    expect(keys).toEqual([...keys].sort());
    const first = await get("/v1/jobs?namespace=*&per_page=1");
    expect(first.next).toBe(keys[1]);
  });

  it("evaluations, allocations, deployments use <CreateIndex>.<ID> tokens (ID tokens with prefix)", async () => {
    for (const list of ["/v1/evaluations", "/v1/allocations", "/v1/deployments"]) {
      const all = (await get(`${list}?namespace=*`)).body as Json[];
      const indexes = all.map((x) => x.CreateIndex);
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
      const first = await get(`${list}?namespace=*&per_page=1`);
      expect(first.next).toBe(`${all[1]!.CreateIndex}.${all[1]!.ID}`);
      const prefix = all[0]!.ID.slice(0, 1);
      const withPrefix = await get(`${list}?namespace=*&prefix=${prefix}&per_page=1`);
      const byId = all
        .filter((x) => x.ID.startsWith(prefix))
        .map((x) => x.ID)
        .sort();
      if (byId.length > 1) expect(withPrefix.next).toBe(byId[1]);
    }
  });

  it("a next_token need not exist: the page starts at the first item not before it", async () => {
    const all = (await get("/v1/nodes")).body as Json[];
    const between = `${all[1]!.ID}0`; // sorts after node 1, before node 2
    const page = await get(`/v1/nodes?next_token=${between}`);
    expect(page.body.map((n: Json) => n.ID)).toEqual(all.slice(2).map((n) => n.ID));
  });

  it("per_page that is not an int32 is ignored; 0 or negative means no limit", async () => {
    const all = (await get("/v1/nodes")).body;
    for (const bad of ["abc", "9999999999", "0", "-3", "1.5"]) {
      const res = await get(`/v1/nodes?per_page=${bad}`);
      expect(res.body).toEqual(all);
      expect(res.next).toBeNull();
    }
  });

  it("evaluations: job/status narrow the list; with filter they are a 400", async () => {
    const all = (await get("/v1/evaluations?namespace=*")).body as Json[];
    const one = all[0]!.JobID;
    expect(((await get(`/v1/evaluations?namespace=*&job=${one}`)).body as Json[]).every((e) => e.JobID === one)).toBe(true);
    expect(((await get("/v1/evaluations?namespace=*&status=complete")).body as Json[]).every((e) => e.Status === "complete")).toBe(true);
    const res = await get(`/v1/evaluations?job=${one}&filter=${encodeURIComponent('Status == "complete"')}`);
    expect(res.status).toBe(400);
    expect(res.text).toBe("Filter expression cannot be used with other filter parameters");
  });
});
