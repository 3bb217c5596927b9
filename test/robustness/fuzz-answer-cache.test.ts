/**
 * The read-answer cache and the port's replay against a fresh emulator: for
 * random sequences of writes, clock moves and reads (with tokens, pages,
 * filters, prefixes, ?pretty and Accept-Encoding), every GET answer, whether
 * routed, taken from the cache or replayed at the port, must be what an
 * emulator restored from the same state (whose caches are empty) answers to
 * the same request: same status, same body bytes, same index and leader
 * headers. Other regions and datacenters, and the leader-loss faults, are in
 * the mix: their answers live in the same caches.
 */
import fc from "fast-check";
import { gunzipSync } from "node:zlib";
import { describe, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { fuzz, SCHEDULER_ACL, SCHEDULER_MGMT_TOKEN, SCHEDULER_READER_TOKEN, timeoutFor } from "./arbitraries.js";
import { smallJob } from "../support/jobs.js";

type Json = Record<string, any>;
type Service = "scheduler" | "registry";

const MGMT = SCHEDULER_MGMT_TOKEN;
const READER = SCHEDULER_READER_TOKEN;

function job(id: string, namespace: string, count: number): Json {
  return smallJob(id, { namespace, meta: { tier: count % 2 === 0 ? "gold" : "standard" }, count });
}

const FIXTURE = {
  scheduler: {
    namespaces: [{ Name: "prod" }],
    jobs: [job("a", "default", 1), job("b", "prod", 2)],
    acl: SCHEDULER_ACL,
    regions: { west: { jobs: [job("w", "default", 1)] } },
  },
  registry: {
    nodes: [
      { Node: "n1", Address: "10.0.0.1" },
      { Node: "n2", Address: "10.0.0.2" },
    ],
    sessions: [{ Node: "n1", Name: "s1", TTL: "30s" }],
    datacenters: { dc2: { nodes: [{ Node: "n1", Address: "10.0.2.1" }], sessions: [{ Node: "n1", Name: "s2", TTL: "20s" }] } },
    acl: {
      enabled: true,
      defaultPolicy: "deny",
      tokens: [
        { AccessorID: "acc-all", SecretID: "s-all", Rules: { session_prefix: { "": { policy: "write" } }, key_prefix: { "": { policy: "write" } } } },
        { AccessorID: "acc-n1", SecretID: "s-n1", Rules: { session_prefix: { n1: { policy: "read" } } } },
      ],
    },
  },
};

type Step =
  | { kind: "read"; service: Service; path: string; headers: Record<string, string> }
  | { kind: "write"; service: Service; method: string; path: string; headers: Record<string, string>; body: string }
  | { kind: "advance"; by: string }
  | { kind: "leader"; service: Service; known: boolean; member: string };

const schedulerToken = fc.constantFrom<Record<string, string>>({ "X-Nomad-Token": MGMT }, { "X-Nomad-Token": READER }, { Authorization: `Bearer ${MGMT}` }, {});
const registryToken = fc.constantFrom<Record<string, string>>({ "X-Consul-Token": "s-all" }, { "X-Consul-Token": "s-n1" }, {});
const encoding = fc.constantFrom<Record<string, string>>({}, { "Accept-Encoding": "gzip" });

const schedulerRead = fc
  .record({
    path: fc.constantFrom(
      "/v1/jobs",
      "/v1/jobs?namespace=*",
      "/v1/jobs?per_page=1",
      "/v1/jobs?namespace=*&per_page=1&next_token=prod.b",
      "/v1/jobs?filter=Meta.tier%20%3D%3D%20%22gold%22&namespace=*",
      "/v1/jobs?prefix=c",
      "/v1/jobs?pretty",
      "/v1/job/a",
      "/v1/job/a/summary",
      "/v1/job/c/allocations",
      "/v1/allocations?namespace=*",
      "/v1/evaluations",
      "/v1/deployments?namespace=*",
      "/v1/nodes",
      "/v1/jobs?stale",
      "/v1/jobs?region=west",
      "/v1/jobs?region=west&stale",
      "/v1/job/w?region=west",
      "/v1/status/leader",
    ),
    token: schedulerToken,
    encoding,
  })
  .map(({ path, token, encoding }): Step => ({ kind: "read", service: "scheduler", path, headers: { ...token, ...encoding } }));

const registryRead = fc
  .record({
    path: fc.constantFrom(
      "/v1/session/list",
      "/v1/session/list?pretty",
      "/v1/session/node/n1",
      "/v1/kv/?recurse",
      "/v1/kv/k",
      "/v1/catalog/nodes",
      "/v1/session/list?token=s-n1",
      "/v1/session/list?stale",
      "/v1/session/list?dc=dc2",
      "/v1/session/list?dc=dc2&stale",
      "/v1/kv/k?dc=dc2",
    ),
    token: registryToken,
    encoding,
  })
  .map(({ path, token, encoding }): Step => ({ kind: "read", service: "registry", path, headers: { ...token, ...encoding } }));

const write = fc.oneof(
  fc.record({ id: fc.constantFrom("a", "c", "d"), namespace: fc.constantFrom("default", "prod"), count: fc.integer({ min: 1, max: 3 }), token: schedulerToken }).map(
    ({ id, namespace, count, token }): Step => ({
      kind: "write",
      service: "scheduler",
      method: "PUT",
      path: `/v1/jobs?namespace=${namespace}`,
      headers: token,
      body: JSON.stringify({ Job: job(id, namespace, count) }),
    }),
  ),
  fc
    .record({ id: fc.constantFrom("a", "c"), token: schedulerToken })
    .map(({ id, token }): Step => ({ kind: "write", service: "scheduler", method: "DELETE", path: `/v1/job/${id}`, headers: token, body: "" })),
  fc.record({ node: fc.constantFrom("n1", "n2"), ttl: fc.constantFrom("10s", "20s"), token: registryToken }).map(
    ({ node, ttl, token }): Step => ({
      kind: "write",
      service: "registry",
      method: "PUT",
      path: "/v1/session/create",
      headers: token,
      body: JSON.stringify({ Node: node, TTL: ttl }),
    }),
  ),
  fc
    .record({ value: fc.constantFrom("x", "y"), token: registryToken, dc: fc.constantFrom("", "?dc=dc2") })
    .map(({ value, token, dc }): Step => ({ kind: "write", service: "registry", method: "PUT", path: `/v1/kv/k${dc}`, headers: token, body: value })),
  fc.record({ id: fc.constantFrom("w", "x"), token: schedulerToken }).map(
    ({ id, token }): Step => ({
      kind: "write",
      service: "scheduler",
      method: "PUT",
      path: "/v1/jobs?region=west",
      headers: token,
      body: JSON.stringify({ Job: job(id, "default", 1) }),
    }),
  ),
);

const leaderFault = fc
  .record({ service: fc.constantFrom<Service>("scheduler", "registry"), known: fc.boolean(), other: fc.boolean() })
  .map(({ service, known, other }): Step => ({ kind: "leader", service, known, member: other ? (service === "scheduler" ? "west" : "dc2") : "" }));

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: schedulerRead },
  { weight: 4, arbitrary: registryRead },
  { weight: 3, arbitrary: write },
  { weight: 1, arbitrary: fc.constantFrom<Step>({ kind: "advance", by: "1s" }, { kind: "advance", by: "15s" }, { kind: "advance", by: "1m" }) },
  { weight: 1, arbitrary: leaderFault },
);

interface Seen {
  status: number;
  body: string;
  index: string | null;
  nextToken: string | null;
  knownLeader: string | null;
  lastContact: string | null;
}

async function seen(response: Response): Promise<Seen> {
  const bytes = Buffer.from(await response.arrayBuffer());
  const body = response.headers.get("content-encoding") === "gzip" ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
  const index = response.headers.get("x-nomad-index") ?? response.headers.get("x-consul-index");
  const header = (name: string) => response.headers.get(`x-nomad-${name}`) ?? response.headers.get(`x-consul-${name}`);
  return { status: response.status, body, index, nextToken: response.headers.get("x-nomad-nexttoken"), knownLeader: header("knownleader"), lastContact: header("lastcontact") };
}

function app(emu: Standin, service: Service) {
  return service === "scheduler" ? emu.scheduler : emu.registry;
}

describe("the read-answer cache and the port's replay", () => {
  it(
    "answer every GET as an emulator restored from the same state does",
    async () => {
      await fuzz(
        fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 30 }), async (steps) => {
          const emu = await createStandin({ fixture: FIXTURE, tape: false });
          // Every read asked so far: after each write or clock move, all of them are asked again, so an
          // answer remembered before the change that is served after it shows.
          const asked = new Map<string, Extract<Step, { kind: "read" }>>();
          const check = async (reads: Iterable<Extract<Step, { kind: "read" }>>) => {
            const fresh = await createStandin({ fixture: FIXTURE, tape: false });
            fresh.restore(emu.snapshot());
            for (const read of reads) {
              // Asked twice, so the second answer comes from the cache or the replay when the first was remembered.
              const first = await seen(await app(emu, read.service).request(read.path, { headers: read.headers }));
              const second = await seen(await app(emu, read.service).request(read.path, { headers: read.headers }));
              const expected = await seen(await app(fresh, read.service).request(read.path, { headers: read.headers }));
              for (const [which, actual] of [
                ["first", first],
                ["second", second],
              ] as const) {
                if (JSON.stringify(actual) !== JSON.stringify(expected)) {
                  throw new Error(
                    `${read.service} GET ${read.path} ${JSON.stringify(read.headers)} (${which} ask) answered ${JSON.stringify(actual).slice(0, 400)}; a fresh emulator answers ${JSON.stringify(expected).slice(0, 400)}`,
                  );
                }
              }
            }
          };
          for (const s of steps) {
            if (s.kind === "read") {
              asked.set(`${s.service} ${s.path} ${JSON.stringify(s.headers)}`, s);
              await check([s]);
              continue;
            }
            if (s.kind === "advance") emu.clock.advance(s.by);
            else if (s.kind === "leader") {
              const member = s.member === "" ? "" : s.service === "scheduler" ? `?region=${s.member}` : `?dc=${s.member}`;
              const res = await app(emu, s.service).request(`/_standin/${s.service}/leader${member}`, { method: "POST", body: JSON.stringify({ known: s.known }) });
              if (res.status !== 200) throw new Error(`leader fault answered ${res.status}: ${await res.text()}`);
            } else await (await app(emu, s.service).request(s.path, { method: s.method, headers: s.headers, body: s.body === "" ? undefined : s.body })).arrayBuffer();
            await check(asked.values());
          }
        }),
        0.5,
      );
    },
    timeoutFor(0.5, 400),
  );
});
