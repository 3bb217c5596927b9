/**
 * Records test/tapes/multi-service.json: one run over real ports through all
 * three services and the control API (the tape issue 18's restructure must
 * replay with zero divergences; see test/tapes/tapes.test.ts).
 *
 * Re-record only on purpose (a deliberate change of behaviour), from a build:
 *   npm run build && node test/tapes/record-multi-service.mjs
 */
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { startStandin } from "../../dist/server.js";

const OUT = fileURLToPath(new URL("./multi-service.json", import.meta.url));

const srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
const { scheduler, registry, echo, control } = srv.urls;

async function call(base, path, { method = "GET", body, headers = {} } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}
const advance = (by) => call(control, "/clock/advance", { method: "POST", body: { by } });

const service = {
  ID: "web",
  Type: "service",
  Datacenters: ["dc1"],
  Meta: { team: "edge" },
  TaskGroups: [{ Name: "web", Count: 2, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1.27" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
  Update: { MaxParallel: 1, MinHealthyTime: 2_000_000_000, HealthyDeadline: 60_000_000_000, Canary: 1 },
};
const batch = {
  ID: "report",
  Type: "batch",
  Datacenters: ["dc1"],
  ParameterizedJob: { Payload: "optional", MetaOptional: ["day"] },
  TaskGroups: [{ Name: "run", Tasks: [{ Name: "run", Driver: "exec", Config: { command: "/bin/report" } }] }],
};
const periodic = {
  ID: "nightly",
  Type: "batch",
  Datacenters: ["dc1"],
  Periodic: { Spec: "0 3 * * *", ProhibitOverlap: true },
  TaskGroups: [{ Name: "run", Tasks: [{ Name: "run", Driver: "exec", Config: { command: "/bin/nightly" } }] }],
};

// Scheduler: register, watch a deployment, update with a canary, promote, plan, scale, revert, dispatch, periodic force.
await call(scheduler, "/v1/jobs", { method: "PUT", body: { Job: service } });
const index = Number((await fetch(`${scheduler}/v1/jobs`)).headers.get("x-nomad-index"));
const parked = call(scheduler, `/v1/job/web/deployment?index=${index}&wait=5m`);
await advance("1s");
await parked;
await advance("30s");
const updated = { ...service, TaskGroups: [{ ...service.TaskGroups[0], Tasks: [{ ...service.TaskGroups[0].Tasks[0], Config: { image: "nginx:1.28" } }] }] };
await call(scheduler, "/v1/jobs", { method: "PUT", body: { Job: updated } });
await advance("5s");
const deployment = (await call(scheduler, "/v1/job/web/deployment")).json();
await advance("10s");
await call(scheduler, `/v1/deployment/promote/${deployment.ID}`, { method: "POST", body: { DeploymentID: deployment.ID, All: true } });
await advance("2m");
await call(scheduler, "/v1/job/web/plan", { method: "POST", body: { Job: { ...service, TaskGroups: [{ ...service.TaskGroups[0], Count: 3 }] }, Diff: true } });
await call(scheduler, "/v1/job/web/scale", { method: "POST", body: { Count: 3, Target: { Group: "web" }, Message: "more" } });
await advance("1m");
await call(scheduler, "/v1/job/web/versions");
await call(scheduler, "/v1/job/web/revert", { method: "POST", body: { JobID: "web", JobVersion: 0 } });
await advance("1m");
await call(scheduler, "/v1/jobs", { method: "PUT", body: { Job: batch } });
await call(scheduler, "/v1/job/report/dispatch", { method: "POST", body: { Meta: { day: "mon" }, Payload: Buffer.from("hello").toString("base64") } });
await call(scheduler, "/v1/jobs", { method: "PUT", body: { Job: periodic } });
await call(scheduler, "/v1/job/nightly/periodic/force", { method: "POST" });
await advance("10m");
await call(scheduler, "/v1/jobs?filter=" + encodeURIComponent('Meta.team == "edge"'));
await call(scheduler, "/v1/jobs?per_page=2");
await call(scheduler, "/v1/allocations");
await call(scheduler, "/v1/evaluations", { headers: { "accept-encoding": "gzip" } });
await call(scheduler, "/v1/job/web/summary");
await call(scheduler, "/v1/job/missing");
await call(scheduler, "/v1/jobs", { method: "PUT", body: '{"Job": {"ID": 7}}' });
await call(scheduler, "/v1/jobs", { method: "PUT", body: { Job: { ...service, TaskGroups: [] } } });
await call(control, "/actions", { method: "POST", body: { do: "node-down", node: "standin" } });
await advance("1m");
await call(scheduler, "/v1/job/web/allocations");
await call(control, "/actions", { method: "POST", body: { do: "node-up", node: "standin" } });
await advance("1m");
await call(scheduler, "/v1/job/web", { method: "DELETE" });
await advance("30s");

// Registry: sessions with TTLs, a lock held and lost, KV with CAS and a woken blocking read.
const session = (await call(registry, "/v1/session/create", { method: "PUT", body: { Name: "leader", TTL: "15s", Behavior: "delete" } })).json();
await call(registry, `/v1/kv/service/leader?acquire=${session.ID}`, { method: "PUT", body: "node-a" });
await call(registry, "/v1/kv/config/a?cas=0", { method: "PUT", body: "1" });
await call(registry, "/v1/kv/config/a?cas=0", { method: "PUT", body: "2" });
const kvIndex = (await fetch(`${registry}/v1/kv/config/a`)).headers.get("x-consul-index");
const watch = call(registry, `/v1/kv/config?recurse&index=${kvIndex}&wait=1m`);
await call(registry, "/v1/kv/config/b", { method: "PUT", body: "x" });
await watch;
await advance("10s");
await call(registry, `/v1/session/renew/${session.ID}`, { method: "PUT" });
await advance("40s");
await call(registry, "/v1/session/list");
await call(registry, "/v1/kv/service/leader");
await call(registry, "/v1/kv/?recurse", { headers: { "accept-encoding": "gzip" } });
await call(registry, "/v1/session/info/not-a-uuid");
await call(registry, "/v1/kv/config?recurse", { method: "DELETE" });

// Echo: API key, a token minted by the emulator's test key, a bad key, a bad body.
await call(echo, "/echo?key=test-api-key", { method: "POST", body: { message: "hi" } });
await call(echo, "/echo?key=test-api-key", { method: "POST", body: { message: "hi" } });
await call(echo, "/echo?key=wrong", { method: "POST", body: { message: "hi" } });
await call(echo, "/echo?key=test-api-key", { method: "POST", body: "not json" });
const token = (await call(echo, "/_standin/echo/tokens", { method: "POST", body: { scheme: "provider_jwt", expiresIn: "5m" } })).json().token;
await call(echo, "/auth/info/providerjwt?key=test-api-key", { headers: { authorization: `Bearer ${token}` } });
await advance("10m");
await call(echo, "/auth/info/providerjwt?key=test-api-key", { headers: { authorization: `Bearer ${token}` } });

// Control: a runtime fixture.
await call(control, "/fixtures", { method: "POST", body: { scheduler: { nodes: [{ Name: "late" }] }, registry: { kv: [{ Key: "seeded", Value: "v" }] } } });
await call(scheduler, "/v1/nodes");

const tape = (await call(control, "/tape")).json();
await writeFile(OUT, JSON.stringify(tape, null, 1) + "\n");
await srv.close();
console.log(`wrote ${OUT}: ${tape.entries.length} entries`);
