import { describe, expect, it } from "vitest";
import { canonicalizeJob } from "../../src/scheduler/jobspec/index.js";
import { annotateTaskDiffs, jobDiff } from "../../src/scheduler/diff/index.js";
import type { FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from "../../src/scheduler/diff/index.js";

type Obj = Record<string, unknown>;

const OPTS = { region: "global", namespace: "default" };

/** A canonical job with one group "web" (Count 1) and one docker task "app"; `tg`/`tk` are merged into them. */
function job(top: Obj = {}, tg: Obj = {}, tk: Obj = {}, moreGroups: Obj[] = []): Obj {
  return canonicalizeJob(
    {
      ID: "example",
      ...top,
      TaskGroups: [{ Name: "web", Count: 1, ...tg, Tasks: [{ Name: "app", Driver: "docker", Config: { image: "nginx:1.25", args: ["a"] }, ...tk }] }, ...moreGroups],
    },
    OPTS,
  );
}

const API_GROUP: Obj = { Name: "api", Count: 2, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "api:1" } }] };

/** The job as the state store holds it: server-set fields filled in (they must not show in diffs). */
function stored(j: Obj): Obj {
  return { ...j, Status: "running", StatusDescription: "", Version: 4, Stable: true, SubmitTime: 1_700_000_000_000_000_000, CreateIndex: 10, ModifyIndex: 42, JobModifyIndex: 40 };
}

function f(Type: string, Name: string, Old: string, New: string, Annotations: string[] | null = null): FieldDiff {
  return { Type, Name, Old, New, Annotations } as FieldDiff;
}

const asDiff = (d: Record<string, unknown>): JobDiff => d as unknown as JobDiff;
const group = (d: JobDiff, name: string): TaskGroupDiff => {
  const g = (d.TaskGroups ?? []).find((x) => x.Name === name);
  if (!g) throw new Error(`no group diff ${name}`);
  return g;
};
const task = (g: TaskGroupDiff, name: string): TaskDiff => {
  const t = (g.Tasks ?? []).find((x) => x.Name === name);
  if (!t) throw new Error(`no task diff ${name}`);
  return t;
};
const object = (objects: ObjectDiff[] | null, name: string): ObjectDiff => {
  const o = (objects ?? []).find((x) => x.Name === name);
  if (!o) throw new Error(`no object diff ${name}`);
  return o;
};
const names = (items: ReadonlyArray<{ Name: string }> | null): string[] => (items ?? []).map((x) => x.Name);

interface Case {
  name: string;
  prev: Obj | undefined;
  next: Obj | undefined;
  contextual: boolean;
  check: (d: JobDiff) => void;
}

const CASES: Case[] = [
  {
    name: "a new job is Added with the job's primitive fields and Added groups/tasks",
    prev: undefined,
    next: stored(job({ Meta: { owner: "ops" } })),
    contextual: true,
    check: (d) => {
      expect(d.Type).toBe("Added");
      expect(d.ID).toBe("example");
      // Server fields (ID, Status, Version, Stable, SubmitTime, indexes) are filtered; empty strings dropped.
      expect(d.Fields).toEqual([
        f("Added", "AllAtOnce", "", "false"),
        f("Added", "Dispatched", "", "false"),
        f("Added", "Meta[owner]", "", "ops"),
        f("Added", "Name", "", "example"),
        f("Added", "Namespace", "", "default"),
        f("Added", "NodePool", "", "default"),
        f("Added", "Priority", "", "50"),
        f("Added", "Region", "", "global"),
        f("Added", "Stop", "", "false"),
        f("Added", "Type", "", "service"),
      ]);
      expect(d.Objects).toEqual([{ Type: "Added", Name: "Datacenters", Fields: [f("Added", "Datacenters", "", "*")], Objects: null }]);
      const web = group(d, "web");
      expect(web.Type).toBe("Added");
      expect(web.Fields).toEqual([f("Added", "Count", "", "1"), f("Added", "PreventRescheduleOnLost", "", "false")]);
      expect(names(web.Objects)).toEqual(["RestartPolicy", "ReschedulePolicy", "EphemeralDisk", "Consul", "Update"]);
      expect(web.Updates).toBeNull();
      const app = task(web, "app");
      expect(app.Type).toBe("Added");
      expect(app.Fields).toEqual([
        f("Added", "Driver", "", "docker"),
        f("Added", "KillTimeout", "", "5000000000"),
        f("Added", "Leader", "", "false"),
        f("Added", "ShutdownDelay", "", "0"),
      ]);
      expect(names(app.Objects)).toEqual(["Config", "Resources", "LogConfig", "Identity"]);
      expect(object(app.Objects, "Config")).toEqual({
        Type: "Added",
        Name: "Config",
        Fields: [f("Added", "args[0]", "", "a"), f("Added", "image", "", "nginx:1.25")],
        Objects: null,
      });
      // Contextual: empty values of an added object are listed as None.
      expect(object(web.Objects, "Consul").Fields).toEqual([f("Added", "Cluster", "", "default"), f("None", "Namespace", "", ""), f("None", "Partition", "", "")]);
    },
  },
  {
    name: "identical jobs (server fields differ) give None with nothing listed, even contextual",
    prev: stored(job()),
    next: job(),
    contextual: true,
    check: (d) => {
      expect(d).toEqual({
        Type: "None",
        ID: "example",
        Fields: null,
        Objects: null,
        TaskGroups: [
          { Type: "None", Name: "web", Fields: null, Objects: null, Tasks: [{ Type: "None", Name: "app", Fields: null, Objects: null, Annotations: null }], Updates: null },
        ],
      });
    },
  },
  {
    name: "identical jobs, non-contextual",
    prev: stored(job()),
    next: job(),
    contextual: false,
    check: (d) => {
      expect(d.Type).toBe("None");
      expect(group(d, "web").Type).toBe("None");
      expect(group(d, "web").Fields).toBeNull();
    },
  },
  {
    name: "a changed count edits the group with a Count field diff",
    prev: stored(job()),
    next: job({}, { Count: 3 }),
    contextual: true,
    check: (d) => {
      expect(d.Type).toBe("Edited");
      expect(d.Fields).toBeNull();
      const web = group(d, "web");
      expect(web.Type).toBe("Edited");
      expect(web.Fields).toEqual([f("Edited", "Count", "1", "3")]);
      expect(web.Objects).toBeNull();
      expect(task(web, "app").Type).toBe("None");
    },
  },
  {
    name: "a changed docker image edits the task with a Config object (non-contextual: only the change)",
    prev: stored(job()),
    next: job({}, {}, { Config: { image: "nginx:1.27", args: ["a"] } }),
    contextual: false,
    check: (d) => {
      const web = group(d, "web");
      expect(web.Type).toBe("Edited");
      expect(web.Fields).toBeNull();
      const app = task(web, "app");
      expect(app.Type).toBe("Edited");
      expect(app.Fields).toBeNull();
      expect(app.Objects).toEqual([{ Type: "Edited", Name: "Config", Fields: [f("Edited", "image", "nginx:1.25", "nginx:1.27")], Objects: null }]);
    },
  },
  {
    name: "a changed docker image, contextual: unchanged config keys listed as None",
    prev: stored(job()),
    next: job({}, {}, { Config: { image: "nginx:1.27", args: ["a"] } }),
    contextual: true,
    check: (d) => {
      const app = task(group(d, "web"), "app");
      expect(object(app.Objects, "Config").Fields).toEqual([f("None", "args[0]", "a", "a"), f("Edited", "image", "nginx:1.25", "nginx:1.27")]);
    },
  },
  {
    name: "driver config is flattened like Nomad's flatmap (indexes, nested keys, float64 numbers, nil)",
    prev: stored(job({}, {}, { Config: { image: "redis", args: ["a", "b"], port_map: [{ http: 80 }] } })),
    next: job({}, {}, { Config: { image: "redis", args: ["a", "c"], port_map: [{ http: 8080 }], labels: { env: "prod" }, count: 1000000, ratio: 0.25, debug: true, none: null } }),
    contextual: false,
    check: (d) => {
      expect(object(task(group(d, "web"), "app").Objects, "Config").Fields).toEqual([
        f("Edited", "args[1]", "b", "c"),
        f("Added", "count", "", "1e+06"),
        f("Added", "debug", "", "true"),
        f("Added", "labels[env]", "", "prod"),
        f("Added", "none", "", "nil"),
        f("Edited", "port_map[0][http]", "80", "8080"),
        f("Added", "ratio", "", "0.25"),
      ]);
    },
  },
  {
    name: "an added task group is Added, groups sorted by name",
    prev: stored(job()),
    next: job({}, {}, {}, [API_GROUP]),
    contextual: true,
    check: (d) => {
      expect(d.Type).toBe("Edited");
      expect(names(d.TaskGroups)).toEqual(["api", "web"]);
      const api = group(d, "api");
      expect(api.Type).toBe("Added");
      expect(api.Fields).toContainEqual(f("Added", "Count", "", "2"));
      expect(task(api, "server").Type).toBe("Added");
      expect(group(d, "web").Type).toBe("None");
    },
  },
  {
    name: "a removed task group is Deleted with its fields",
    prev: stored(job({}, {}, {}, [API_GROUP])),
    next: job(),
    contextual: true,
    check: (d) => {
      const api = group(d, "api");
      expect(api.Type).toBe("Deleted");
      expect(api.Fields).toEqual([f("Deleted", "Count", "2", ""), f("Deleted", "PreventRescheduleOnLost", "false", "")]);
      expect(task(api, "server").Type).toBe("Deleted");
      expect(object(task(api, "server").Objects, "Config")).toEqual({ Type: "Deleted", Name: "Config", Fields: [f("Deleted", "image", "api:1", "")], Objects: null });
    },
  },
  {
    name: "an added task edits its group; tasks sorted by name",
    prev: stored(job()),
    next: canonicalizeJob(
      {
        ID: "example",
        TaskGroups: [
          {
            Name: "web",
            Count: 1,
            Tasks: [
              { Name: "zlog", Driver: "exec", Config: { command: "/bin/log" } },
              { Name: "app", Driver: "docker", Config: { image: "nginx:1.25", args: ["a"] } },
            ],
          },
        ],
      },
      OPTS,
    ),
    contextual: true,
    check: (d) => {
      const web = group(d, "web");
      expect(web.Type).toBe("Edited");
      expect(web.Fields).toBeNull();
      expect(names(web.Tasks)).toEqual(["app", "zlog"]);
      expect(task(web, "app").Type).toBe("None");
      const zlog = task(web, "zlog");
      expect(zlog.Type).toBe("Added");
      expect(zlog.Fields).toContainEqual(f("Added", "Driver", "", "exec"));
    },
  },
  {
    name: "a removed task is Deleted",
    prev: stored(
      canonicalizeJob(
        {
          ID: "example",
          TaskGroups: [
            {
              Name: "web",
              Count: 1,
              Tasks: [
                { Name: "app", Driver: "docker", Config: { image: "nginx:1.25", args: ["a"] } },
                { Name: "helper", Driver: "exec", Config: { command: "/bin/true" } },
              ],
            },
          ],
        },
        OPTS,
      ),
    ),
    next: job(),
    contextual: false,
    check: (d) => {
      const helper = task(group(d, "web"), "helper");
      expect(helper.Type).toBe("Deleted");
      expect(helper.Fields).toContainEqual(f("Deleted", "Driver", "exec", ""));
      expect(helper.Fields).toContainEqual(f("Deleted", "KillTimeout", "5000000000", ""));
    },
  },
  {
    name: "job Meta keys: edited, added, deleted",
    prev: stored(job({ Meta: { owner: "ops", tier: "web" } })),
    next: job({ Meta: { owner: "dev", region: "eu" } }),
    contextual: true,
    check: (d) => {
      expect(d.Type).toBe("Edited");
      expect(d.Fields).toEqual([f("Edited", "Meta[owner]", "ops", "dev"), f("Added", "Meta[region]", "", "eu"), f("Deleted", "Meta[tier]", "web", "")]);
      expect(group(d, "web").Type).toBe("None");
    },
  },
  {
    name: "a changed Update block (contextual): all its fields but Stagger, durations in nanoseconds",
    prev: stored(job()),
    next: job({}, { Update: { MaxParallel: 2 } }),
    contextual: true,
    check: (d) => {
      const web = group(d, "web");
      expect(web.Type).toBe("Edited");
      expect(web.Objects).toEqual([
        {
          Type: "Edited",
          Name: "Update",
          Fields: [
            f("None", "AutoPromote", "false", "false"),
            f("None", "AutoRevert", "false", "false"),
            f("None", "Canary", "0", "0"),
            f("None", "HealthCheck", "checks", "checks"),
            f("None", "HealthyDeadline", "300000000000", "300000000000"),
            f("Edited", "MaxParallel", "1", "2"),
            f("None", "MinHealthyTime", "10000000000", "10000000000"),
            f("None", "ProgressDeadline", "600000000000", "600000000000"),
          ],
          Objects: null,
        },
      ]);
    },
  },
  {
    name: "a changed Update block (non-contextual): only the change",
    prev: stored(job()),
    next: job({}, { Update: { MaxParallel: 2 } }),
    contextual: false,
    check: (d) => {
      expect(object(group(d, "web").Objects, "Update").Fields).toEqual([f("Edited", "MaxParallel", "1", "2")]);
    },
  },
  {
    name: "fields sorted byte-wise by name; task groups by name",
    prev: stored(job({ Meta: { b: "1" } }, { Name: "b" }, {}, [{ ...API_GROUP, Name: "a" }])),
    next: job({ Priority: 70, AllAtOnce: true, Meta: { b: "2", Zed: "x", a: "y" } }, { Name: "b" }, {}, [
      { ...API_GROUP, Name: "a" },
      { ...API_GROUP, Name: "C" },
    ]),
    contextual: false,
    check: (d) => {
      expect(names(d.Fields)).toEqual(["AllAtOnce", "Meta[Zed]", "Meta[a]", "Meta[b]", "Priority"]);
      expect(d.Fields![0]).toEqual(f("Edited", "AllAtOnce", "false", "true"));
      expect(names(d.TaskGroups)).toEqual(["C", "a", "b"]);
    },
  },
  {
    name: "job Objects keep Nomad's append order (Datacenters, Constraint, Affinity), not name order",
    prev: stored(job()),
    next: job({
      Datacenters: ["dc1"],
      Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
      Affinities: [{ LTarget: "${node.class}", RTarget: "big", Operand: "=", Weight: 50 }],
    }),
    contextual: true,
    check: (d) => {
      expect(names(d.Objects)).toEqual(["Datacenters", "Constraint", "Affinity"]);
      expect(object(d.Objects, "Datacenters")).toEqual({
        Type: "Edited",
        Name: "Datacenters",
        Fields: [f("Added", "Datacenters", "", "dc1"), f("Deleted", "Datacenters", "*", "")],
        Objects: null,
      });
      expect(object(d.Objects, "Constraint")).toEqual({
        Type: "Added",
        Name: "Constraint",
        Fields: [f("Added", "LTarget", "", "${attr.kernel.name}"), f("Added", "Operand", "", "="), f("Added", "RTarget", "", "linux")],
        Objects: null,
      });
    },
  },
  {
    name: "a deleted job lists its fields as Deleted",
    prev: stored(job()),
    next: undefined,
    contextual: true,
    check: (d) => {
      expect(d.Type).toBe("Deleted");
      expect(d.ID).toBe("example");
      expect(d.Fields).toContainEqual(f("Deleted", "Priority", "50", ""));
      expect(names(d.Fields)).not.toContain("Version");
      expect(group(d, "web").Type).toBe("Deleted");
    },
  },
  {
    name: "a group that differs only in a block Nomad does not diff (Spreads) is Edited with nothing listed",
    prev: stored(job()),
    next: job({}, { Spreads: [{ Attribute: "${node.datacenter}", Weight: 50 }] }),
    contextual: true,
    check: (d) => {
      expect(d.Type).toBe("Edited");
      expect(group(d, "web")).toMatchObject({ Type: "Edited", Fields: null, Objects: null });
    },
  },
  {
    name: "service tags: the Service object carries a Tags set diff and its fields in context",
    prev: stored(job({}, {}, { Services: [{ Name: "web", PortLabel: "http", Tags: ["v1"] }] })),
    next: job({}, {}, { Services: [{ Name: "web", PortLabel: "http", Tags: ["v2"] }] }),
    contextual: true,
    check: (d) => {
      const service = object(task(group(d, "web"), "app").Objects, "Service");
      expect(service.Type).toBe("Edited");
      expect(service.Fields).toContainEqual(f("None", "Name", "web", "web"));
      expect(service.Fields).toContainEqual(f("None", "PortLabel", "http", "http"));
      expect(object(service.Objects, "Tags")).toEqual({ Type: "Edited", Name: "Tags", Fields: [f("Added", "Tags", "", "v2"), f("Deleted", "Tags", "v1", "")], Objects: null });
    },
  },
  {
    name: "networks are matched by content: a changed network is a Deleted/Added pair, zero fields included",
    prev: stored(job({}, { Networks: [{ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 80 }] }] })),
    next: job({}, { Networks: [{ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 80 }, { Label: "metrics" }] }] }),
    contextual: true,
    check: (d) => {
      const networks = (group(d, "web").Objects ?? []).filter((o) => o.Name === "Network");
      expect(networks.map((o) => o.Type)).toEqual(["Added", "Deleted"]);
      const added = networks[0]!;
      expect(added.Fields).toEqual([f("None", "Hostname", "", ""), f("Added", "Mode", "", "bridge")]);
      expect(added.Objects!.map((o) => [o.Name, o.Type])).toEqual([
        ["Dynamic Port", "Added"],
        ["Dynamic Port", "Added"],
      ]);
      // Which port comes first is not defined: Nomad's ObjectDiff.Less says "less" both ways here (Label
      // "http" < "metrics" but To "0" < "80"), so Go's order follows its random map order.
      const metrics = added.Objects!.find((o) => (o.Fields ?? []).some((x) => x.Name === "Label" && x.New === "metrics"));
      expect(metrics?.Fields).toEqual([f("Added", "HostNetwork", "", "default"), f("Added", "Label", "", "metrics"), f("Added", "To", "", "0")]);
    },
  },
  {
    name: "KillTimeout in nanoseconds",
    prev: stored(job()),
    next: job({}, {}, { KillTimeout: 10_000_000_000 }),
    contextual: true,
    check: (d) => {
      expect(task(group(d, "web"), "app").Fields).toEqual([f("Edited", "KillTimeout", "5000000000", "10000000000")]);
    },
  },
];

describe("jobDiff", () => {
  it.each(CASES)("$name", ({ prev, next, contextual, check }) => {
    check(asDiff(jobDiff(prev, next, contextual)));
  });

  it("no jobs at all: an empty None diff", () => {
    expect(jobDiff(undefined, undefined, true)).toEqual({ Type: "None", ID: "", Fields: null, Objects: null, TaskGroups: null });
  });

  it("refuses jobs with different IDs, in Nomad's words", () => {
    expect(() => jobDiff(job(), { ...job(), ID: "other" }, true)).toThrow('can not diff jobs with different IDs: "example" and "other"');
  });

  it("does not modify its inputs", () => {
    const prev = stored(job());
    const next = job({}, { Count: 2 });
    const before = JSON.stringify([prev, next]);
    jobDiff(prev, next, true);
    expect(JSON.stringify([prev, next])).toBe(before);
  });
});

describe("annotateTaskDiffs", () => {
  interface AnnotateCase {
    name: string;
    prev: Obj | undefined;
    next: Obj;
    desired?: Record<string, Record<string, number>>;
    check: (d: JobDiff) => void;
  }

  const ANNOTATE_CASES: AnnotateCase[] = [
    {
      name: "a new job: Count forces create, tasks force create",
      prev: undefined,
      next: job(),
      check: (d) => {
        expect(group(d, "web").Fields).toContainEqual(f("Added", "Count", "", "1", ["forces create"]));
        expect(task(group(d, "web"), "app").Annotations).toEqual(["forces create"]);
      },
    },
    {
      name: "a count decrease forces destroy; unchanged tasks get no annotation",
      prev: stored(job({}, { Count: 3 })),
      next: job({}, { Count: 1 }),
      check: (d) => {
        expect(group(d, "web").Fields).toEqual([f("Edited", "Count", "3", "1", ["forces destroy"])]);
        expect(task(group(d, "web"), "app").Annotations).toBeNull();
      },
    },
    {
      name: "a removed group: its tasks force destroy",
      prev: stored(job({}, {}, {}, [API_GROUP])),
      next: job(),
      check: (d) => {
        expect(task(group(d, "api"), "server").Annotations).toEqual(["forces destroy"]);
        expect(group(d, "api").Fields).toContainEqual(f("Deleted", "Count", "2", "", ["forces destroy"]));
      },
    },
    {
      name: "a changed image forces a create/destroy update",
      prev: stored(job()),
      next: job({}, {}, { Config: { image: "nginx:1.27", args: ["a"] } }),
      check: (d) => {
        expect(task(group(d, "web"), "app").Annotations).toEqual(["forces create/destroy update"]);
      },
    },
    {
      name: "only KillTimeout changed: in-place update",
      prev: stored(job()),
      next: job({}, {}, { KillTimeout: 10_000_000_000 }),
      check: (d) => {
        expect(task(group(d, "web"), "app").Annotations).toEqual(["forces in-place update"]);
      },
    },
    {
      name: "only a service changed: in-place update",
      prev: stored(job({}, {}, { Services: [{ Name: "web", Tags: ["v1"] }] })),
      next: job({}, {}, { Services: [{ Name: "web", Tags: ["v2"] }] }),
      check: (d) => {
        expect(task(group(d, "web"), "app").Annotations).toEqual(["forces in-place update"]);
      },
    },
    {
      name: "desired updates fill the group's Updates",
      prev: stored(job()),
      next: job({}, { Count: 3 }),
      desired: { web: { Ignore: 1, Place: 2, Stop: 0, InPlaceUpdate: 0 }, other: { Place: 9 } },
      check: (d) => {
        expect(group(d, "web").Updates).toEqual({ ignore: 1, create: 2 });
      },
    },
  ];

  it.each(ANNOTATE_CASES)("$name", ({ prev, next, desired, check }) => {
    const diff = jobDiff(prev, next, true);
    const returned = annotateTaskDiffs(diff, desired);
    expect(returned).toBe(diff);
    check(asDiff(diff));
  });

  it("without desired updates, Updates stays null", () => {
    const d = asDiff(annotateTaskDiffs(jobDiff(stored(job()), job({}, { Count: 2 }), true)));
    expect(group(d, "web").Updates).toBeNull();
  });
});
