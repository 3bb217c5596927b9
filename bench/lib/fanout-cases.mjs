/**
 * Fan-out on a clock advance (issue 30 §2): the work of ONE advance that fires
 * a timer (or a pass) per object, for N objects. Each kind sets up N objects
 * through the HTTP surface and fixtures (in process), then bench/lib/scale-case.mjs
 * times `emu.clock.advance(kind.advance)` alone and calls `kind.check` to make
 * sure the advance did the whole fan-out (a fast advance that did nothing is
 * not a result).
 *
 * Jobs ask for 1 MHz and 10 MB so that one big node (the fixture's `big-a`)
 * holds any N; the default node `standin` takes its share by bin-packing.
 */

/** A node that fits 100k of the jobs below. */
const bigNode = (name) => ({ Name: name, Datacenter: "dc1", Resources: { CPU: 1_000_000_000, MemoryMB: 1_000_000_000 } });
const JOB_CHUNK = 1_000;
const SESSION_CHUNK = 10_000;
const SECOND_NS = 1e9;
/** Big nodes for the `ports` kind: 10,000 dynamic ports each at 100k, within the 12,001 of an address's range. */
const PORT_NODES = 10;

function job(id, { type = "service", count = 1, group = {}, extra = {} } = {}) {
  return {
    ID: id,
    Type: type,
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Count: count, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "busybox:1" }, Resources: { CPU: 1, MemoryMB: 10 } }], ...group }],
    ...extra,
  };
}

async function seedJobs(emu, n, make) {
  for (let start = 0; start < n; start += JOB_CHUNK) {
    const jobs = [];
    for (let i = start; i < Math.min(n, start + JOB_CHUNK); i++) jobs.push(make(i));
    await emu.applyFixture({ scheduler: { jobs } });
  }
}

async function request(app, path, method = "GET", body) {
  const init = body === undefined ? { method } : { method, body: JSON.stringify(body), headers: { "content-type": "application/json" } };
  const response = await app.request(path, init);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return text === "" ? null : JSON.parse(text);
}

const rows = (emu, table) => [...emu.store.table(table).values()];
const countWhere = (emu, table, predicate) => rows(emu, table).filter(predicate).length;

function expect(actual, wanted, what) {
  if (actual !== wanted) throw new Error(`after the advance: ${actual} ${what}, expected ${wanted}`);
  return { objects: actual };
}

export const FANOUT_KINDS = {
  /** N sessions with TTL 30s; one advance past 2 × TTL destroys them all (Consul's session TTL timers). */
  "session-ttl": {
    label: "registry: session TTL expiries",
    unit: "session",
    units: "sessions",
    advance: "61s",
    async setup(emu, n) {
      for (let start = 0; start < n; start += SESSION_CHUNK) {
        const sessions = [];
        for (let i = start; i < Math.min(n, start + SESSION_CHUNK); i++) sessions.push({ Name: `s-${i}`, TTL: "30s" });
        await emu.applyFixture({ registry: { sessions } });
      }
    },
    check: (emu, n) => expect(n - emu.store.table("registry.sessions").size, n, "sessions destroyed"),
  },

  /** N agent TTL checks (passing, TTL 30s), each with a session bound to it; one advance expires every check, invalidating its session. */
  "check-ttl": {
    label: "registry: TTL check expiries invalidating sessions",
    unit: "check",
    units: "checks",
    advance: "31s",
    async setup(emu, n) {
      for (let i = 0; i < n; i++) await request(emu.registry, "/v1/agent/check/register", "PUT", { ID: `ttl-${i}`, Name: `ttl-${i}`, TTL: "30s", Status: "passing" });
      for (let start = 0; start < n; start += SESSION_CHUNK) {
        const sessions = [];
        for (let i = start; i < Math.min(n, start + SESSION_CHUNK); i++) sessions.push({ Name: `s-${i}`, Checks: [`ttl-${i}`] });
        await emu.applyFixture({ registry: { sessions } });
      }
      if (emu.store.table("registry.sessions").size !== n) throw new Error(`created ${emu.store.table("registry.sessions").size} of ${n} sessions`);
    },
    check: (emu, n) => {
      expect(
        countWhere(emu, "registry.checks", (c) => c.CheckID.startsWith("ttl-") && c.Status === "critical"),
        n,
        "critical TTL checks",
      );
      return expect(n - emu.store.table("registry.sessions").size, n, "sessions invalidated");
    },
  },

  /**
   * N agent services whose TTL check has DeregisterCriticalServiceAfter 1m: a first advance (not timed)
   * lets every check go critical; the timed one runs the reaper past the timeout, which removes them all.
   */
  "critical-reap": {
    label: "registry: DeregisterCriticalServiceAfter reaping",
    unit: "service",
    units: "services",
    advance: "2m",
    async setup(emu, n) {
      for (let i = 0; i < n; i++) {
        await request(emu.registry, "/v1/agent/service/register", "PUT", {
          ID: `svc-${i}`,
          Name: `svc-${i}`,
          Port: 8000,
          Check: { CheckID: `svc-${i}-ttl`, TTL: "10s", Status: "passing", DeregisterCriticalServiceAfter: "1m" },
        });
      }
      emu.clock.advance("11s");
      const critical = countWhere(emu, "registry.checks", (c) => c.CheckID.endsWith("-ttl") && c.Status === "critical");
      if (critical !== n) throw new Error(`${critical} of ${n} TTL checks critical before the timed advance`);
    },
    check: (emu, n) => {
      expect(
        countWhere(emu, "registry.services", (s) => String(s.ServiceID).startsWith("svc-")),
        0,
        "services left",
      );
      return { objects: n };
    },
  },

  /**
   * N service jobs (one allocation each, min_healthy_time 1h) placed and running; the timed advance passes
   * min_healthy_time: every allocation turns healthy and every deployment succeeds.
   */
  deployments: {
    label: "scheduler: deployments becoming healthy",
    unit: "deployment",
    units: "deployments",
    advance: "1h",
    async setup(emu, n) {
      await emu.applyFixture({ scheduler: { nodes: [bigNode("big-a")] } });
      const update = { MaxParallel: 1, MinHealthyTime: 3600 * SECOND_NS, HealthyDeadline: 7200 * SECOND_NS, ProgressDeadline: 10800 * SECOND_NS };
      await seedJobs(emu, n, (i) => job(`deploy-${i}`, { group: { Update: update } }));
      emu.clock.advance("30s");
      const running = countWhere(emu, "scheduler.allocs", (a) => a.ClientStatus === "running");
      if (running !== n) throw new Error(`${running} of ${n} allocations running before the timed advance`);
    },
    check: (emu, n) =>
      expect(
        countWhere(emu, "scheduler.deployments", (d) => d.Status === "successful"),
        n,
        "successful deployments",
      ),
  },

  /**
   * N service jobs whose allocation stays pending (the fixture's `timing.allocStart` is 2h) past its
   * deployment's progress deadline (10m); the timed advance passes it: every deployment fails so.
   */
  "progress-deadline": {
    label: "scheduler: deployments failing at their progress deadline",
    unit: "deployment",
    units: "deployments",
    advance: "11m",
    fixture: { scheduler: { timing: { allocStart: "2h" } } },
    async setup(emu, n) {
      await emu.applyFixture({ scheduler: { nodes: [bigNode("big-a")] } });
      const update = { MaxParallel: 1, MinHealthyTime: 10 * SECOND_NS, HealthyDeadline: 300 * SECOND_NS, ProgressDeadline: 600 * SECOND_NS };
      await seedJobs(emu, n, (i) => job(`late-${i}`, { group: { Update: update } }));
      emu.clock.advance("1s");
      const pending = countWhere(emu, "scheduler.allocs", (a) => a.ClientStatus === "pending");
      if (pending !== n) throw new Error(`${pending} of ${n} allocations placed (pending) before the timed advance`);
    },
    check: (emu, n) =>
      expect(
        countWhere(emu, "scheduler.deployments", (d) => d.Status === "failed" && d.StatusDescription === "Failed due to progress deadline"),
        n,
        "deployments failed at their progress deadline",
      ),
  },

  /** N periodic batch jobs on the same cron (every minute); the timed advance launches all N children at once. */
  periodic: {
    label: "scheduler: periodic launches at one instant",
    unit: "launch",
    units: "launches",
    advance: "61s",
    async setup(emu, n) {
      await emu.applyFixture({ scheduler: { nodes: [bigNode("big-a")] } });
      const periodic = { Enabled: true, SpecType: "cron", Spec: "* * * * *", ProhibitOverlap: false, TimeZone: "UTC" };
      await seedJobs(emu, n, (i) => job(`cron-${i}`, { type: "batch", extra: { Periodic: periodic } }));
    },
    check: (emu, n) =>
      expect(
        countWhere(emu, "scheduler.jobs", (j) => j.ParentID && j.ID.includes("/periodic-")),
        n,
        "periodic children",
      ),
  },

  /**
   * One service job of N allocations (migrate max_parallel N) on the nodes `standin` and `big-a`, both
   * drained once `big-b` joins; the timed advance runs the drain pass, which migrates every allocation,
   * and places and starts the N replacements on `big-b`.
   */
  drain: {
    label: "scheduler: node drains migrating allocations",
    unit: "allocation",
    units: "allocations",
    advance: "30s",
    async setup(emu, n) {
      await emu.applyFixture({ scheduler: { nodes: [bigNode("big-a")] } });
      await emu.applyFixture({
        scheduler: {
          jobs: [job("drained", { count: n, group: { Migrate: { MaxParallel: n, HealthCheck: "checks", MinHealthyTime: 10 * SECOND_NS, HealthyDeadline: 300 * SECOND_NS } } })],
        },
      });
      // In steps: one 30s advance would fire more timers it scheduled itself than the clock's loop guard (100k) allows at 100k.
      for (let i = 0; i < 6; i++) emu.clock.advance("5s");
      const running = countWhere(emu, "scheduler.allocs", (a) => a.ClientStatus === "running");
      if (running !== n) throw new Error(`${running} of ${n} allocations running before the drain`);
      const drained = rows(emu, "scheduler.nodes").map((node) => node.ID);
      await emu.applyFixture({ scheduler: { nodes: [bigNode("big-b")] } });
      for (const id of drained) await request(emu.scheduler, `/v1/node/${id}/drain`, "PUT", { NodeID: id, DrainSpec: { Deadline: 3600 * SECOND_NS, IgnoreSystemJobs: false } });
      this.target = rows(emu, "scheduler.nodes").find((node) => node.Name === "big-b").ID;
    },
    check(emu, n) {
      return expect(
        countWhere(emu, "scheduler.allocs", (a) => a.NodeID === this.target && a.ClientStatus === "running"),
        n,
        "replacements running on the new node",
      );
    },
  },

  /**
   * One service job of N allocations, every one failed through the control API (reschedule delay 5s,
   * constant); the timed advance places and starts the N replacements.
   */
  reschedule: {
    label: "scheduler: reschedules of failed allocations",
    unit: "allocation",
    units: "allocations",
    advance: "30s",
    async setup(emu, n) {
      await emu.applyFixture({ scheduler: { nodes: [bigNode("big-a")] } });
      const reschedule = { Attempts: 1, Interval: 3600 * SECOND_NS, Delay: 5 * SECOND_NS, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
      await emu.applyFixture({ scheduler: { jobs: [job("failing", { count: n, group: { ReschedulePolicy: reschedule } })] } });
      emu.clock.advance("30s");
      const ids = rows(emu, "scheduler.allocs")
        .filter((a) => a.ClientStatus === "running")
        .map((a) => a.ID);
      if (ids.length !== n) throw new Error(`${ids.length} of ${n} allocations running before the failures`);
      for (const id of ids) await request(emu.scheduler, `/_standin/scheduler/allocations/${id}`, "POST", { ClientStatus: "failed" });
    },
    check: (emu, n) =>
      expect(
        countWhere(emu, "scheduler.allocs", (a) => a.PreviousAllocation && a.ClientStatus === "running"),
        n,
        "replacements running",
      ),
  },
  /**
   * One service job of N allocations, each asking one dynamic port, on PORT_NODES big nodes (and the
   * default `standin`, which the least-loaded rule gives at most one): the timed advance places and
   * starts them all, up to 10,000 on each node at 100k (Nomad's dynamic range, 20000–32000, holds
   * 12,001 per address). The nodes are the same at every size, so the ratio shows how placing grows
   * with the ports a node already holds (each placement rebuilt them from the node's allocations: O(N²)).
   */
  ports: {
    label: "scheduler: placements asking a dynamic port",
    unit: "allocation",
    units: "allocations",
    advance: "30s",
    async setup(emu, n) {
      await emu.applyFixture({ scheduler: { nodes: Array.from({ length: PORT_NODES }, (_, i) => bigNode(`big-${i}`)) } });
      await emu.applyFixture({ scheduler: { jobs: [job("ported", { count: n, group: { Networks: [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }] } })] } });
    },
    check(emu, n) {
      const running = rows(emu, "scheduler.allocs").filter((a) => a.ClientStatus === "running");
      // Every allocation holds its own port on its node: no two share one, and none was left unplaced.
      const held = new Set(running.flatMap((a) => (a.SharedPorts ?? []).map((p) => `${a.NodeID} ${p.HostIP} ${p.Value}`)));
      expect(held.size, n, "distinct node ports held");
      return expect(running.length, n, "allocations running with a port");
    },
  },
};
