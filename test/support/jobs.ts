/**
 * Job bodies for tests that register jobs to test something else (answer
 * caching, paging, ACLs, events, ports, node drains). Two shapes cover them:
 * the smallest job that places, and a web service running nginx; a test
 * whose job differs on purpose (a sidecar task, an exec driver, a
 * canonicalized job) keeps its own builder.
 *
 * Fields are written in the order the tests' own builders wrote them: a
 * request body is recorded as sent (journal, tape), so the order is part of
 * what a test can see.
 */
type Json = Record<string, any>;

export interface SmallJobOptions {
  /** "service" unless given. */
  type?: string;
  /** Left out unless given (the scheduler's default namespace). */
  namespace?: string;
  /** ["dc1"] unless given; null leaves the field out. */
  datacenters?: string[] | null;
  meta?: Record<string, string>;
  /** The group's name: "g" unless given. */
  group?: string;
  /** The group's count: 1 unless given. */
  count?: number;
}

/** The smallest job that places: one group ("g") of one docker task "t" (image "x", 10 MHz, 10 MB), in dc1. */
export function smallJob(id: string, opts: SmallJobOptions = {}): Json {
  const job: Json = { ID: id };
  if (opts.namespace !== undefined) job.Namespace = opts.namespace;
  job.Type = opts.type ?? "service";
  if (opts.datacenters !== null) job.Datacenters = opts.datacenters ?? ["dc1"];
  if (opts.meta) job.Meta = opts.meta;
  job.TaskGroups = [{ Name: opts.group ?? "g", Count: opts.count ?? 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 10, MemoryMB: 10 } }] }];
  return job;
}

export interface WebJobOptions {
  /** "service" unless given. */
  type?: string;
  /** The group's count: 1 unless given. */
  count?: number;
  /** The group's name: "web" unless given. */
  group?: string;
  /** The task's name: "server" unless given. */
  task?: string;
}

/** A web service: one group ("web") of one docker task "server" running nginx:1 (100 MHz, 64 MB), in dc1. */
export function webJob(id: string, opts: WebJobOptions = {}): Json {
  return {
    ID: id,
    Type: opts.type ?? "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: opts.group ?? "web",
        Count: opts.count ?? 1,
        Tasks: [{ Name: opts.task ?? "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }],
      },
    ],
  };
}
