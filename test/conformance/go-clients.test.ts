/**
 * Conformance: HashiCorp's official Go clients (github.com/hashicorp/consul/api
 * and github.com/hashicorp/nomad/api, from ../shared/go-clients) driving a
 * standin started here, one test per named check of test/conformance/go.
 * Needs Go ≥ 1.21 (.ci/run installs Debian's golang-1.23-go from backports);
 * STANDIN_SKIP_GO=1 skips the suite on a machine without it.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { conformanceProgram } from "./support/conformance-program.js";
import { buildGoProgram, SKIP_GO } from "./support/go-build.js";

const run = promisify(execFile);
const PROGRAM = conformanceProgram("the conformance suite", "conformance");
const BINARY = PROGRAM.binary;
const SKIP = SKIP_GO;

/** Every check the program runs, in its order: a check missing from its output fails. */
const CHECKS = {
  consul: [
    "consul/agent-self-members-peers",
    "consul/session-on-serfHealth",
    "consul/session-lifecycle",
    "consul/session-renew-periodic",
    "consul/session-ttl-expiry-on-virtual-clock",
    "consul/kv-cas",
    "consul/kv-acquire-release",
    "consul/lock-flags-exact-and-destroy",
    "consul/lock-handover-by-destroy",
    "consul/lock-handover-by-ttl-expiry",
    "consul/semaphore-limit",
    "consul/blocking-kv-loop-request-count",
    "consul/blocking-list-wakes-on-delete",
  ],
  "consul-agent": [
    "consul-agent/service-register-with-ttl-check",
    "consul-agent/update-ttl-then-lapse-invalidates-session",
    "consul-agent/service-hash-blocking",
    "consul-agent/check-register-and-maintenance",
    "consul-agent/service-deregister",
  ],
  "consul-health": [
    "consul-health/catalog-service-and-services",
    "consul-health/passing-only-drops-critical-instance",
    "consul-health/blocking-service-woken-by-check",
    "consul-health/blocking-catalog-services-woken-by-register",
    "consul-health/deregister-service",
    "consul-health/catalog-nodes-node-meta",
    "consul-health/server-node-and-consul-service",
    "consul-health/parked-query-answered-by-reset",
  ],
  "consul-txn": ["consul-txn/kv-set-cas-check-index", "consul-txn/failing-transaction-changes-nothing", "consul-txn/node-and-service-set", "consul-txn/event-fire-list-blocking"],
  nomad: [
    "nomad/register-and-run",
    "nomad/canary-and-promotion",
    "nomad/plan-with-diff",
    "nomad/revert",
    "nomad/dispatch",
    "nomad/periodic-force",
    "nomad/scale-and-status",
    "nomad/scale-events",
    "nomad/filter-and-pagination",
    "nomad/blocking-query",
    "nomad/event-stream",
    "nomad/node-eligibility",
    "nomad/node-drain",
  ],
  "nomad-fs": ["nomad-fs/list-stat-and-cat", "nomad-fs/logs-follow", "nomad-fs/logs-errors"],
  "nomad-alloc": [
    "nomad-alloc/restart",
    "nomad-alloc/signal",
    "nomad-alloc/stats",
    "nomad-alloc/reschedule",
    "nomad-alloc/deployment-reschedule",
    "nomad-alloc/failure-burst-one-eval-at-a-time",
    "nomad-alloc/stop",
  ],
  "nomad-acl": ["nomad-acl/bootstrapped-by-fixture", "nomad-acl/anonymous-denied", "nomad-acl/policy-and-token", "nomad-acl/token-capabilities"],
  "nomad-vars": [
    "nomad-vars/create-and-read",
    "nomad-vars/checked-update-and-delete",
    "nomad-vars/prefix-list-and-delete",
    "nomad-vars/lock-acquire-renew-release",
    "nomad-vars/locks-helper-lapses-on-the-clock",
  ],
  "nomad-services": [
    "nomad-services/register-and-list",
    "nomad-services/get-instances",
    "nomad-services/job-and-alloc-services",
    "nomad-services/delete",
    "nomad-services/deregistered-on-stop",
    "nomad-services/alloc-checks",
    "nomad-services/event-stream-service-topic",
  ],
  "nomad-hcl": ["nomad-hcl/parse-with-variables", "nomad-hcl/parse-canonicalized", "nomad-hcl/parse-error", "nomad-hcl/parse-then-register"],
  "nomad-pools": ["nomad-pools/built-ins", "nomad-pools/register-and-info", "nomad-pools/list-nodes", "nomad-pools/jobs-and-delete", "nomad-pools/evaluation-count"],
  "nomad-operator": [
    "nomad-operator/default-configuration",
    "nomad-operator/set-and-cas",
    "nomad-operator/paused-broker-holds-evals",
    "nomad-operator/delete-evaluations",
    "nomad-operator/gc-on-the-clock",
    "nomad-operator/system-gc",
  ],
  "nomad-search": ["nomad-search/prefix", "nomad-search/prefix-truncated", "nomad-search/fuzzy", "nomad-search/errors"],
  "nomad-lifecycle": ["nomad-lifecycle/manual-health-waits-for-set-alloc-health", "nomad-lifecycle/dispatch-id-prefix-template", "nomad-lifecycle/stop-events-plan-then-client"],
} as const;

type Result = { check: string; ok: boolean; error?: string };

/** The nomad-acl suite's cluster: ACLs on, a management token seeded (so already bootstrapped). */
const MANAGEMENT_SECRET = "6a1f6a6e-3d0e-4c55-9d0b-2f9c1c9e0001";
const ACL_FIXTURE = { scheduler: { acl: { enabled: true, tokens: [{ SecretID: MANAGEMENT_SECRET, Name: "root", Type: "management" }] } } };

async function build(): Promise<void> {
  await buildGoProgram(PROGRAM);
}

async function runSuite(suite: keyof typeof CHECKS, srv: RunningStandin): Promise<Map<string, Result>> {
  const env = {
    ...process.env,
    CONSUL_HTTP_ADDR: srv.urls.registry.replace(/^https?:\/\//, ""),
    NOMAD_ADDR: srv.urls.scheduler,
    NOMAD_TOKEN: MANAGEMENT_SECRET,
    STANDIN_CONTROL_URL: srv.urls.scheduler,
  };
  const { stdout } = await run(BINARY, [suite], { env, timeout: 900_000, maxBuffer: 16 << 20 });
  const results = new Map<string, Result>();
  for (const line of stdout.split("\n")) if (line.trim() !== "") results.set((JSON.parse(line) as Result).check, JSON.parse(line) as Result);
  return results;
}

describe.skipIf(SKIP)("official Go clients", () => {
  beforeAll(build, 600_000);

  for (const suite of [
    "consul",
    "consul-agent",
    "consul-health",
    "consul-txn",
    "nomad",
    "nomad-acl",
    "nomad-vars",
    "nomad-pools",
    "nomad-fs",
    "nomad-alloc",
    "nomad-services",
    "nomad-hcl",
    "nomad-operator",
    "nomad-search",
    "nomad-lifecycle",
  ] as const) {
    describe(suite, () => {
      let srv: RunningStandin;
      let results: Map<string, Result>;
      beforeAll(async () => {
        srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, ...(suite === "nomad-acl" ? { fixture: ACL_FIXTURE } : {}) });
        results = await runSuite(suite, srv);
      }, 900_000);
      afterAll(async () => {
        await srv?.close();
      });

      it("runs exactly the checks listed here", () => {
        expect([...results.keys()]).toEqual([...CHECKS[suite]]);
      });
      for (const check of CHECKS[suite]) {
        it(check, () => {
          const result = results.get(check);
          expect(result, `${check} did not run`).toBeDefined();
          expect(result!.error ?? "", check).toBe("");
          expect(result!.ok).toBe(true);
        });
      }
    });
  }
});
