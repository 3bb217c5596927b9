/**
 * Bad-input fuzzing of the registry (Consul's session, KV and catalog
 * endpoints): malformed and wrongly typed session-create and catalog bodies,
 * bad TTL and LockDelay durations, invalid session UUIDs, KV keys with
 * encoded slashes, dot segments and unicode, bad `wait`/`index`/`cas`/`flags`
 * values, repeated and oversized token headers (ACLs on), bodies up to and
 * past the 16 MiB limit. Every request is held to the invariants in
 * harness.ts; the 500s Consul itself documents are listed below.
 */
import fc from "fast-check";
import { beforeAll, describe, it } from "vitest";
import {
  acceptEncoding,
  boolText,
  COMMON_QUERY,
  contentType,
  durationText,
  fuzz,
  headerEntries,
  headerValue,
  indexText,
  invalidUuid,
  jsonBody,
  method,
  pathSegment,
  queryEntries,
  queryString,
  rawJson,
  repeatedHeader,
  timeoutFor,
  tokenValue,
  toJsonText,
  weirdString,
  weirdValue,
  type QueryShape,
} from "./arbitraries.js";
import { Harness, matchesAny, type FuzzRequest, type Oracle } from "./harness.js";

/**
 * The 5xx answers Consul documents. Every error the RPC layer returns
 * without an HTTP code is a 500 with its text (registry-consul.md §4.1); the
 * texts are those of §4.2's status table and §2.4, plus the catalog and KV
 * texts the registry models from agent/consul/catalog_endpoint.go and
 * agent/kvs_endpoint.go (not in the reference notes). Anything else fails.
 */
const CONSUL_500: ReadonlyArray<string | RegExp> = [
  // §4.5, §4.2: an unknown ?dc=
  "No path to datacenter",
  // §1.1, §4.2: session create validation (Session.Apply, before raft: never wrapped)
  "Must provide Node",
  /^Invalid Behavior setting '[\s\S]*'$/,
  /^Session TTL '[\s\S]*' invalid: time: [\s\S]+$/,
  /^Invalid Session TTL '-?\d+', must be between \[10s=24h0m0s\]$/,
  // §1.1, §4.2: the state store's refusals, wrapped by raftApply
  "apply failed: Missing node registration",
  /^apply failed: Missing check '[\s\S]*' registration$/,
  /^apply failed: Check '[\s\S]*' is in critical state$/,
  // §2.4: KV acquire with an unknown session
  /^apply failed: invalid session "[\s\S]*"$/,
  // agent/kvs_endpoint.go: ?flags= / ?cas= through strconv.ParseUint, uncoded
  /^strconv\.ParseUint: parsing "[\s\S]*": (invalid syntax|value out of range)$/,
  // agent/consul/catalog_endpoint.go: Catalog.Register / Deregister validation
  "Must provide node",
  "Must provide address if SkipNodeUpdate is not set",
  "Must provide service name (Service.Service) when service ID is provided",
  "Invalid service address",
  /^Unknown service ID '[\s\S]*' for check ID '[\s\S]*'$/,
  /^Unknown (service|check) ID '[\s\S]*'$/,
  /^Node '[\s\S]*' for check '[\s\S]*' doesn't match register request node '[\s\S]*'$/,
  "Missing check ID",
  /^Invalid check status: "[\s\S]*"$/,
];

/** docs/control-api.md "Unemulated routes": a Consul route standin does not emulate is a 501 naming it. */
const CONSUL_501: ReadonlyArray<string | RegExp> = [/^standin does not emulate /];

const CONSUL: Oracle = {
  documented5xx: (status, text) => (status === 500 && matchesAny(text, CONSUL_500)) || (status === 501 && matchesAny(text, CONSUL_501)),
};

// ---- the world ------------------------------------------------------------------------------

const S1 = "aaaaaaaa-1111-2222-3333-444444444444";
const S2 = "bbbbbbbb-1111-2222-3333-444444444444";
const OPS = "cccccccc-0000-0000-0000-000000000001";
const READER = "cccccccc-0000-0000-0000-000000000002";

const REGISTRY = {
  nodes: [
    {
      Node: "node-a",
      Address: "10.0.0.1",
      Checks: [
        { CheckID: "web-health", Status: "passing" },
        { CheckID: "broken", Status: "critical" },
      ],
    },
    { Node: "node-b", Address: "10.0.0.2" },
  ],
  sessions: [
    { ID: S1, Name: "leader", Node: "node-a", TTL: "15s", LockDelay: "5s" },
    { ID: S2, Name: "other", Node: "node-b", Behavior: "delete" },
  ],
  kv: [
    { Key: "service/leader", Value: "a", Session: S1 },
    { Key: "service/config", Value: "{}" },
    { Key: "plain", Value: "x" },
  ],
  // A second datacenter, so `dc=dc2` requests reach a cluster of their own (with the same nodes and keys, other sessions).
  datacenters: { dc2: { nodes: [{ Node: "node-a", Address: "10.0.2.1" }], sessions: [{ Name: "dc2", Node: "node-a", TTL: "15s" }], kv: [{ Key: "plain", Value: "y" }] } },
};

const FIXTURE = { registry: REGISTRY };
const ACL_FIXTURE = {
  registry: {
    ...REGISTRY,
    acl: {
      enabled: true,
      defaultPolicy: "deny",
      tokens: [
        { SecretID: OPS, Rules: { session_prefix: { "": { policy: "write" } }, key_prefix: { "": { policy: "write" } }, node_prefix: { "": { policy: "write" } } } },
        { SecretID: READER, Rules: { key_prefix: { "service/": { policy: "read" } }, session: { "node-a": "read" } } },
      ],
    },
  },
};

const SESSION_BODY = {
  Name: "fuzz",
  Node: "node-a",
  LockDelay: "15s",
  Behavior: "release",
  TTL: "30s",
  NodeChecks: ["agentHealth"],
  Checks: ["agentHealth", "web-health"],
  ServiceChecks: [{ ID: "svc", Namespace: "" }],
};

const REGISTER_BODY = {
  Datacenter: "dc1",
  ID: "40e4a748-2192-161a-0510-9bf59fe950b5",
  Node: "node-c",
  Address: "10.0.0.3",
  TaggedAddresses: { lan: "10.0.0.3", wan: "198.18.0.3" },
  NodeMeta: { rack: "r1" },
  Service: { ID: "web", Service: "web", Tags: ["v1"], Port: 80 },
  Check: { Node: "node-c", CheckID: "service:web", Name: "web", Status: "passing", Notes: "", Output: "ok", ServiceID: "web", ServiceName: "web" },
  Checks: [{ CheckID: "disk", Name: "disk", Status: "warning" }],
  SkipNodeUpdate: false,
};

const DEREGISTER_BODY = { Datacenter: "dc1", Node: "node-b", CheckID: "agentHealth", ServiceID: "" };

// ---- requests -------------------------------------------------------------------------------

const CONSUL_QUERY: QueryShape = {
  ...COMMON_QUERY,
  dc: fc.constantFrom("dc1", "", "dc2", "DC1", "*"),
  token: tokenValue,
  consistent: boolText,
  cached: boolText,
  max_stale: durationText,
  // Consul CE refuses any namespace or partition (400): mostly empty, so the rest of the request is reached.
  ns: fc.constantFrom("", "", "", "default"),
  partition: fc.constantFrom("", "", "", "x"),
  recurse: boolText,
  keys: boolText,
  separator: fc.constantFrom("/", "", "//", "é", "%", "service"),
  seperator: fc.constantFrom("/", ""),
  raw: boolText,
  flags: indexText,
  cas: indexText,
  acquire: fc.oneof(fc.constantFrom(S1, S2, S1.toUpperCase()), invalidUuid),
  release: fc.oneof(fc.constantFrom(S1, S2), invalidUuid),
  near: weirdString,
  "node-meta": weirdString,
};

const headers = headerEntries(
  {
    "X-Consul-Token": tokenValue,
    "X-Registry-Token": tokenValue,
    Authorization: tokenValue.map((t) => `Bearer ${t}`),
    "Content-Type": contentType,
    "Accept-Encoding": acceptEncoding,
    "Cache-Control": fc.oneof(
      fc.constantFrom("max-age=10", "max-age=-1", "max-age=abc", "max-age=", "no-cache", "max-age=1, max-age=x", "max-age=99999999999999999999", "stale-if-error=5"),
      headerValue,
    ),
    "X-Consul-Namespace": fc.constantFrom("", "", "", "default"),
    "X-Consul-Partition": fc.constantFrom("", "", "", "x"),
  },
  3,
);

function request(methods: fc.Arbitrary<string>, path: fc.Arbitrary<string>, body?: fc.Arbitrary<string | Uint8Array | undefined>, maxQuery = 3): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({ method: methods, path, query: queryEntries(CONSUL_QUERY, maxQuery), headers, body: body ?? fc.constant(undefined) })
    .map(({ method, path, query, headers, body }) => ({ method, path: `${path}${queryString(query)}`, headers, ...(body === undefined ? {} : { body }) }));
}

const put = fc.oneof({ weight: 8, arbitrary: fc.constant("PUT") }, { weight: 1, arbitrary: method });

const sessionId = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(S1, S2, S1.toUpperCase(), `${S1}/x`, `${S1}%2F`, ` ${S1}`) },
  { weight: 3, arbitrary: invalidUuid.map(encodeURIComponent) },
  { weight: 2, arbitrary: pathSegment },
);

/** Session bodies whose durations are what varies. */
const durationBody = fc
  .record({
    TTL: fc.oneof(durationText, weirdValue),
    LockDelay: fc.oneof(durationText, fc.integer(), fc.double({ noNaN: true }), fc.constantFrom(rawJson("1e999"), rawJson("-1e999"), 999, 1000, -1, 1e20)),
    Behavior: fc.constantFrom("release", "delete", "", "Release", "x"),
  })
  .map((fields) => toJsonText({ ...SESSION_BODY, ...fields }));

const sessionCreate = request(put, fc.constant("/v1/session/create"), fc.oneof(jsonBody(SESSION_BODY), durationBody, fc.constant(undefined), fc.constant("")));

const sessionOther = fc.oneof(
  request(
    put,
    fc.tuple(fc.constantFrom("destroy", "renew"), sessionId).map(([op, id]) => `/v1/session/${op}/${id}`),
  ),
  request(
    fc.oneof({ weight: 6, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: method }),
    fc.oneof(
      sessionId.map((id) => `/v1/session/info/${id}`),
      fc.oneof(fc.constantFrom("node-a", "NODE-A", "standin", "nope"), pathSegment).map((n) => `/v1/session/node/${n}`),
      fc.constantFrom(
        "/v1/session/list",
        "/v1/session/list/",
        "/v1/session/info",
        "/v1/session/info/",
        "/v1/session/node/",
        "/v1/session/destroy",
        "/v1/session/",
        "/v1/status/leader",
        "/v1/catalog/nodes",
        "/v1/agent/self",
        "/v1/",
        "/",
        "/v2/x",
      ),
      fc.oneof(fc.constantFrom("node-a", "standin"), pathSegment).map((n) => `/v1/health/node/${n}`),
    ),
  ),
);

/** A KV key: ordinary, or with encoded slashes, dot segments, unicode, or very long. */
const kvKey = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom("service/leader", "service/config", "plain", "service/", "new/key", "", "service", "a//b", ".", "..", "./plain") },
  { weight: 3, arbitrary: fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/")) },
);

const kvValue: fc.Arbitrary<string | Uint8Array | undefined> = fc.oneof(
  { weight: 4, arbitrary: weirdString },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.constantFrom(512 * 1024, 512 * 1024 + 1).map((n) => "v".repeat(n)) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const kv = fc.oneof(
  request(
    fc.oneof({ weight: 6, arbitrary: fc.constant("PUT") }, { weight: 1, arbitrary: method }),
    kvKey.map((k) => `/v1/kv/${k}`),
    kvValue,
    4,
  ),
  request(
    fc.constantFrom("GET", "DELETE"),
    kvKey.map((k) => `/v1/kv/${k}`),
    undefined,
    4,
  ),
);

const catalog = fc.oneof(
  request(put, fc.constant("/v1/catalog/register"), jsonBody(REGISTER_BODY)),
  request(put, fc.constant("/v1/catalog/deregister"), jsonBody(DEREGISTER_BODY)),
);

const any = fc.oneof({ weight: 3, arbitrary: sessionCreate }, { weight: 3, arbitrary: sessionOther }, { weight: 3, arbitrary: kv }, { weight: 2, arbitrary: catalog });

// ---- the properties ------------------------------------------------------------------------------

describe("registry: bad input (fuzz)", () => {
  let h: Harness;
  let acl: Harness;

  beforeAll(async () => {
    h = await Harness.create({ fixture: FIXTURE });
    acl = await Harness.create({ fixture: ACL_FIXTURE });
  });

  it(
    "session create bodies: malformed, truncated, wrongly typed, bad TTL and LockDelay",
    () =>
      fuzz(
        fc.asyncProperty(sessionCreate, async (req) => {
          await h.reset();
          await h.send("registry", req, CONSUL);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    "session destroy, renew, info, node and list with invalid UUIDs and bad query values",
    () =>
      fuzz(
        fc.asyncProperty(sessionOther, async (req) => {
          await h.reset();
          await h.send("registry", req, CONSUL);
        }),
        1.5,
      ),
    timeoutFor(1.5),
  );

  it(
    "KV reads and writes: odd keys, flags, cas, acquire and release",
    () =>
      fuzz(
        fc.asyncProperty(kv, async (req) => {
          await h.reset();
          await h.send("registry", req, CONSUL);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    "catalog register and deregister bodies",
    () =>
      fuzz(
        fc.asyncProperty(catalog, async (req) => {
          await h.reset();
          await h.send("registry", req, CONSUL);
        }),
        1,
      ),
    timeoutFor(1),
  );

  it(
    "sequences of any requests on one state",
    () =>
      fuzz(
        fc.asyncProperty(fc.array(any, { minLength: 2, maxLength: 5 }), async (requests) => {
          await h.reset();
          for (const req of requests) await h.send("registry", req, CONSUL);
        }),
        1,
      ),
    timeoutFor(1, 200),
  );

  it(
    "ACLs on: fuzzed, repeated and oversized tokens on every kind of request",
    () =>
      fuzz(
        fc.asyncProperty(
          any,
          fc.oneof(
            fc.constant([] as Array<[string, string]>),
            fc.constantFrom(OPS, READER).map((t) => [["X-Consul-Token", t]] as Array<[string, string]>),
            repeatedHeader("X-Consul-Token", fc.oneof(fc.constantFrom(OPS, READER), tokenValue)),
            repeatedHeader(
              "Authorization",
              fc.oneof(fc.constantFrom(OPS, READER), tokenValue).map((t) => `Bearer ${t}`),
            ),
            fc.integer({ min: 1_000, max: 100_000 }).map((n) => [["X-Consul-Token", "t".repeat(n)]] as Array<[string, string]>),
          ),
          async (req, tokens) => {
            await acl.reset();
            await acl.send("registry", { ...req, headers: [...(req.headers ?? []), ...tokens] }, CONSUL);
          },
        ),
        1,
      ),
    timeoutFor(1),
  );

  it(
    "huge bodies, up to and past the 16 MiB limit",
    () =>
      fuzz(
        fc.asyncProperty(
          fc.constantFrom(1 << 20, 15 << 20, 16 << 20, (16 << 20) + 1, 17 << 20),
          fc.constantFrom("/v1/session/create", "/v1/catalog/register", "/v1/kv/big"),
          fc.boolean(),
          async (size, path, json) => {
            await h.reset();
            const frame = toJsonText({ ...SESSION_BODY, Node: "node-a", Name: "" });
            const body = json ? frame.replace('"Name":""', `"Name":"${"n".repeat(Math.max(0, size - frame.length))}"`) : "x".repeat(size);
            await h.send("registry", { method: "PUT", path, body }, CONSUL);
          },
        ),
        0.05,
      ),
    60_000,
  );
});
