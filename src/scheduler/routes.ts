/**
 * The scheduler's endpoints (reference §7's table), over the model and the
 * engine. Reads carry the index of the tables they read and block on
 * `?index=`; writes answer with their index.
 */
import { blockingTimeoutMs, runBlockingQuery, SPEC_BLOCKING_LIMITS } from "../core/blocking.js";
import type { ServiceContext } from "../core/context.js";
import { textResponse } from "../http/respond.js";
import { CodedError, type SchedulerEngine } from "./engine.js";
import { compileFilter, FilterEvaluationError, FilterParseError, type Filter } from "./filter.js";
import { badRequest, boolParam, field, jsonBody, invalidMethod, NomadError, Read, ReadError, serverError, typedField, Write, type NomadRouter, type RequestContext } from "./http.js";
import { formatInstant } from "../core/instant.js";
import { annotateTaskDiffs, jobDiff } from "./diff.js";
import { nextLaunch, type PeriodicConfig } from "./periodic.js";
import { admitJob, formatMultierror, JobDecodeError, type AdmittedJob } from "./jobspec/index.js";
import { permissionDenied } from "./acl-routes.js";
import type { NodeOperations } from "./node-ops.js";
import {
  allocStub,
  allocView,
  allocWire,
  byCreateIndex,
  deploymentView,
  evalView,
  evalWire,
  jobStub,
  jobView,
  namespaceView,
  nodeStub,
  nodeView,
  TABLES,
  versionKey,
  type JobRow,
  type NodeRow,
  type SchedulerState,
} from "./model.js";
import { createIndexIdTokenizer, idTokenizer, namespaceIdTokenizer, pageRequest, paginate, type Tokenizer } from "./paging.js";

export interface SchedulerSettings {
  region: string;
  datacenter: string;
  agentName: string;
}

/** One page of a list read: its items and the token of the next page ("" when none). */
class ListPage {
  constructor(
    readonly items: unknown[],
    readonly nextToken: string,
  ) {}
}

/**
 * `peers`: the server of every region (this one included), sorted by region:
 * what `/v1/regions` and `/v1/agent/members` show of the federation.
 */
export function registerRoutes(
  router: NomadRouter,
  state: SchedulerState,
  engine: SchedulerEngine,
  ctx: ServiceContext,
  settings: () => SchedulerSettings,
  peers: () => readonly SchedulerSettings[] = () => [settings()],
  nodeOps?: NodeOperations,
): void {
  /** Runs `run` now, or again after each change of `tables` while `?index=` is not yet passed (until the wait ends). */
  const block = <T>(rc: RequestContext, tables: string[], run: () => { index: number; value: T }) =>
    runBlockingQuery({
      watchers: ctx.watchers,
      clock: ctx.clock,
      tables,
      minIndex: rc.options.index,
      timeoutMs: rc.options.index > 0 ? blockingTimeoutMs(rc.options.waitMs, SPEC_BLOCKING_LIMITS, ctx.ids) : 0,
      signal: () => rc.c.req.raw.signal,
      run: () => rc.shared(run),
    });
  /** A blocking-capable read: answers at once unless `?index=` asks to wait for a change of `tables`. */
  /** `indexOf`: the index the answer reports (Nomad: a single object's ModifyIndex, else the tables'). */
  const read = async (rc: RequestContext, tables: string[], run: () => unknown, indexOf: () => number = () => state.index(...tables)): Promise<Read> => {
    const result = await block(rc, tables, () => {
      // Not-found errors are part of the answer too: they carry the current index.
      try {
        return { index: indexOf(), value: run() };
      } catch (error) {
        if (error instanceof ReadError) return { index: error.index, value: error };
        throw error;
      }
    });
    if (result.value instanceof ReadError) throw result.value;
    return new Read(result.value, result.index);
  };
  /** A single object's read: its ModifyIndex while it exists, the table's index otherwise. */
  const objectIndex = (table: string, find: () => { ModifyIndex: number } | undefined) => () => find()?.ModifyIndex ?? state.index(table);
  /**
   * A paginated list read: `items` in index order, the filter (run on each
   * item's full object) applied before counting, the next token in its header.
   */
  const readList = async <T>(rc: RequestContext, tables: string[], items: () => T[], tokenizer: Tokenizer<T>, view: (item: T) => unknown, datum: (item: T) => unknown = view) => {
    const request = pageRequest(rc.query);
    const matches = listFilter(rc, datum);
    const result = await block(rc, tables, () => {
      try {
        const page = paginate(items(), tokenizer, request, matches);
        return { index: state.index(...tables), value: new ListPage(page.items.map(view), page.nextToken) as unknown };
      } catch (error) {
        // A filter that fails on this data is the answer at once, as Nomad's blocking query returns its
        // function's error without waiting: an index past any minIndex ends the wait (and never reaches a header).
        if (error instanceof NomadError) return { index: Number.MAX_SAFE_INTEGER, value: error as unknown };
        throw error;
      }
    });
    if (result.value instanceof NomadError) throw result.value;
    const page = result.value as ListPage;
    return new Read(page.items, result.index, page.nextToken);
  };
  const only = (rc: RequestContext, ...methods: string[]) => {
    if (!methods.includes(rc.method)) throw invalidMethod();
  };
  /** In the asked namespace; across `namespace=*`, only the namespaces whose `capability` the token holds (the guard checked a single one). */
  const inNamespace = (rc: RequestContext, namespace: string, capability = "read-job") =>
    rc.options.namespace === "*" ? rc.acl.allowNamespace(namespace, capability) : rc.options.namespace === namespace;
  const notYet = (what: string) => textResponse(501, `standin does not emulate ${what} (Nomad): see the README's known differences`);

  // ---- jobs -----------------------------------------------------------------------

  router.exact("/v1/jobs", async (rc) => {
    if (rc.method === "GET") {
      return readList(
        rc,
        [TABLES.jobs, TABLES.summaries],
        () => [...state.jobs.values()].filter((j) => inNamespace(rc, j.Namespace, "list-jobs") && j.ID.startsWith(rc.options.prefix)).sort((a, b) => cmp(a.Namespace, b.Namespace) || cmp(a.ID, b.ID)),
        namespaceIdTokenizer<JobRow>(),
        (j) => jobStub(j, state.summaries.get(`${j.Namespace}\u0000${j.ID}`)),
        jobView,
      );
    }
    only(rc, "PUT", "POST");
    return register(rc, undefined);
  });

  router.exact("/v1/jobs/parse", (rc) => {
    only(rc, "PUT", "POST");
    return textResponse(501, "standin accepts JSON job specifications only: HCL parsing (/v1/jobs/parse) is not emulated; send the job as JSON to PUT /v1/jobs");
  });

  router.exact("/v1/validate/job", async (rc) => {
    only(rc, "PUT", "POST");
    const body = await jsonBody(rc);
    const apiJob = field(body, "Job");
    if (apiJob === undefined || apiJob === null) throw badRequest("Job must be specified");
    const { errors } = admit(apiJob, settings().region, rc.options.namespace);
    return { DriverConfigValidated: true, ValidationErrors: errors.length ? errors : null, Error: errors.length ? formatMultierror(errors) : "", Warnings: "" };
  });

  router.prefix("/v1/job/", async (rc) => {
    const { id, suffix } = splitJobPath(rc.rest);
    const ns = rc.options.namespace === "*" ? "default" : rc.options.namespace;
    const job = () => state.job(ns, id);
    switch (suffix) {
      case "":
        if (rc.method === "GET") {
          return read(
            rc,
            [TABLES.jobs],
            () => {
              const j = job();
              if (!j) throw new ReadError(404, "job not found", state.index(TABLES.jobs));
              return jobView(j);
            },
            objectIndex(TABLES.jobs, job),
          );
        }
        if (rc.method === "PUT" || rc.method === "POST") return register(rc, id);
        if (rc.method === "DELETE") return deregister(rc, ns, id);
        throw invalidMethod();
      case "summary":
        only(rc, "GET");
        return read(
          rc,
          [TABLES.summaries],
          () => {
            const summary = state.summaries.get(`${ns}\u0000${id}`);
            if (!summary) throw new ReadError(404, "job not found", state.index(TABLES.summaries));
            return summary;
          },
          objectIndex(TABLES.summaries, () => state.summaries.get(`${ns}\u0000${id}`)),
        );
      case "allocations":
        only(rc, "GET");
        boolParam(rc.query, "all");
        return read(rc, [TABLES.allocs], () => state.allocsOfJob(ns, id).map(allocStub));
      case "evaluations":
        only(rc, "GET");
        return read(rc, [TABLES.evals], () => state.evalsOfJob(ns, id).map(evalWire));
      case "deployments":
        only(rc, "GET");
        return read(rc, [TABLES.deployments], () => state.deploymentsOfJob(ns, id).map(deploymentView));
      case "deployment":
        only(rc, "GET");
        return read(rc, [TABLES.deployments], () => {
          const latest = state.deploymentsOfJob(ns, id)[0];
          return latest ? deploymentView(latest) : null;
        });
      case "versions":
        only(rc, "GET");
        return read(rc, [TABLES.jobs], () => {
          const versions = state.jobVersions(ns, id);
          if (versions.length === 0) throw new ReadError(404, "job versions not found", state.index(TABLES.jobs));
          // With ?diffs=true, each version is diffed against the one before it (newest first, the oldest has none).
          const diffs = boolParam(rc.query, "diffs") ? versions.slice(0, -1).map((v, i) => jobDiff(versions[i + 1], v, true)) : null;
          return { Diffs: diffs && diffs.length ? diffs : null, Index: state.index(TABLES.jobs), KnownLeader: false, LastContact: 0, NextToken: "", Versions: versions.map(jobView) };
        });
      case "evaluate": {
        only(rc, "PUT", "POST");
        if (id === "") throw serverError("missing job ID for evaluation");
        const result = rpc(() => engine.evaluate(ns, id));
        return new Write({ ...result, KnownLeader: false, LastContact: 0, NextToken: "", Warnings: "" }, result.Index);
      }
      case "revert": {
        only(rc, "PUT", "POST");
        const body = await jsonBody(rc);
        if (id === "") throw serverError("missing job ID for revert");
        const version = typedField(body, "JobRevertRequest", "JobVersion", "uint64") ?? 0;
        const prior = typedField(body, "JobRevertRequest", "EnforcePriorVersion", "uint64");
        const result = rpc(() => engine.revert(ns, id, version, prior));
        return new Write({ ...result, KnownLeader: false, LastContact: 0, NextToken: "", Warnings: "" }, result.Index);
      }
      case "stable": {
        only(rc, "PUT", "POST");
        const body = await jsonBody(rc);
        if (id === "") throw serverError("missing job ID for marking job as stable");
        const version = typedField(body, "JobStabilityRequest", "JobVersion", "uint64") ?? 0;
        const stable = typedField(body, "JobStabilityRequest", "Stable", "bool") === true;
        const index = rpc(() => engine.setStable(ns, id, version, stable));
        return new Write({ Index: index }, index);
      }
      case "plan": {
        only(rc, "PUT", "POST");
        const body = await jsonBody(rc);
        const apiJob = field(body, "Job");
        if (apiJob === undefined || apiJob === null) throw badRequest("Job must be specified");
        const jobId = field(apiJob, "ID");
        if (typeof jobId !== "string" || jobId === "") throw badRequest("Job must have a valid ID");
        if (jobId !== id) throw badRequest("Job ID does not match");
        const region = rc.query.get("region") || str(field(body, "Region")) || str(field(apiJob, "Region")) || settings().region;
        const namespace = rc.query.get("namespace") || str(field(body, "Namespace")) || str(field(apiJob, "Namespace")) || "default";
        const { job, errors } = admit(apiJob, region, namespace);
        if (errors.length) throw serverError(formatMultierror(errors));
        const existing = state.job(namespace, id);
        const updates = engine.planUpdates(job);
        const diff = field(body, "Diff") === true ? annotateTaskDiffs(jobDiff(existing, job, true), updates) : null;
        const index = existing?.JobModifyIndex ?? 0;
        return new Write(
          {
            Annotations: { DesiredTGUpdates: updates, PreemptedAllocs: null },
            CreatedEvals: null,
            Diff: diff,
            FailedTGAllocs: null,
            Index: index,
            JobModifyIndex: index,
            NextPeriodicLaunch: formatInstant(nextPeriodic(job, ctx.clock.now()) ?? ZERO_TIME_MS),
            Warnings: "",
          },
          index,
        );
      }
      case "dispatch": {
        only(rc, "PUT", "POST");
        const body = await jsonBody(rc);
        const payload = typedField(body, "JobDispatchRequest", "Payload", "string") ?? "";
        const meta = typedField(body, "JobDispatchRequest", "Meta", "map[string]string") ?? {};
        const idempotencyToken = typedField(body, "JobDispatchRequest", "IdempotencyToken", "string") ?? "";
        const result = rpc(() => engine.dispatch(ns, id, { payload, meta, idempotencyToken }));
        return new Write(result, result.Index);
      }
      case "periodic/force": {
        only(rc, "PUT", "POST");
        const result = rpc(() => engine.periodicForce(ns, id));
        return new Write(result, result.Index);
      }
      case "scale": {
        if (rc.method === "GET") {
          return read(rc, [TABLES.jobs, TABLES.allocs], () => {
            const status = engine.scaleStatus(ns, id);
            if (!status) throw new ReadError(404, "job not found", state.index(TABLES.jobs));
            return status;
          });
        }
        only(rc, "PUT", "POST");
        const body = await jsonBody(rc);
        const target = typedField(body, "ScalingRequest", "Target", "map[string]string");
        const count = typedField(body, "ScalingRequest", "Count", "int64");
        const jobModifyIndex = typedField(body, "ScalingRequest", "JobModifyIndex", "uint64") ?? 0;
        const message = typedField(body, "ScalingRequest", "Message", "string") ?? "";
        const error = typedField(body, "ScalingRequest", "Error", "bool") ?? false;
        const meta = field(body, "Meta") ?? null;
        if (meta !== null && (typeof meta !== "object" || Array.isArray(meta))) {
          throw badRequest(`json: cannot unmarshal ${Array.isArray(meta) ? "array" : typeof meta === "boolean" ? "bool" : typeof meta} into Go struct field ScalingRequest.Meta of type map[string]interface {}`);
        }
        // The HTTP layer's check, then Job.Scale's own, in Nomad's order.
        if (target?.Job && target.Job !== id) throw badRequest("job ID in payload did not match URL");
        if (target?.Namespace && target.Namespace !== ns) throw badRequest("namespace in payload did not match header");
        const group = target?.Group ?? "";
        if (group === "") throw badRequest("missing task group name for scaling action");
        if (count !== undefined && count < 0) throw badRequest("scaling action count can't be negative");
        if (count !== undefined && error) throw badRequest("scaling action should not contain count if error is true");
        const result = rpc(() => engine.scale(ns, id, { group, count, jobModifyIndex, message, error, meta: meta as Record<string, unknown> | null }));
        return new Write({ ...result, KnownLeader: false, LastContact: 0, NextToken: "", Warnings: "" }, result.Index);
      }
      default:
        return notYet(`/v1/job/:id/${suffix}`);
    }
  });

  async function register(rc: RequestContext, pathId: string | undefined) {
    const body = await jsonBody(rc);
    const apiJob = field(body, "Job");
    if (apiJob === undefined || apiJob === null) throw badRequest("Job must be specified");
    const rawId = field(apiJob, "ID");
    if (typeof rawId !== "string" || rawId === "") throw badRequest("Job ID hasn't been provided");
    if (pathId !== undefined && pathId !== rawId) throw badRequest("Job ID does not match name");
    // Precedence: query parameter > request body > job field > agent default.
    const region = rc.query.get("region") || str(field(body, "Region")) || str(field(apiJob, "Region")) || settings().region;
    const namespace = rc.query.get("namespace") || str(field(body, "Namespace")) || str(field(apiJob, "Namespace")) || "default";
    const { job, errors } = admit(apiJob, region, namespace);
    if (errors.length) throw serverError(formatMultierror(errors));
    if (!state.namespaces.get(namespace)) throw serverError(`job "${rawId}" is in nonexistent namespace "${namespace}"`);
    if (typedField(body, "JobRegisterRequest", "EnforceIndex", "bool") === true) {
      const want = typedField(body, "JobRegisterRequest", "JobModifyIndex", "uint64") ?? 0;
      const existing = state.job(namespace, rawId);
      if (want === 0 && existing) throw serverError("Enforcing job modify index 0: job already exists");
      if (want !== 0 && !existing) throw serverError(`Enforcing job modify index ${want}: job does not exist`);
      if (want !== 0 && existing && existing.JobModifyIndex !== want) {
        throw serverError(`Enforcing job modify index ${want}: job exists with conflicting job modify index: ${existing.JobModifyIndex}`);
      }
    }
    const result = engine.register(job);
    return new Write({ ...result, KnownLeader: false, LastContact: 0, NextToken: "", Warnings: "" }, result.Index);
  }

  function deregister(rc: RequestContext, namespace: string, id: string) {
    if (id === "") throw serverError("missing job ID for deregistering");
    const purge = boolParam(rc.query, "purge");
    boolParam(rc.query, "global");
    const result = engine.deregister(namespace, id, purge);
    const { found: _found, ...response } = result;
    return new Write({ ...response, KnownLeader: false, LastContact: 0, NextToken: "", VolumeEvalID: "", VolumeEvalIndex: 0 }, result.Index);
  }

  // ---- evaluations, allocations, deployments ---------------------------------------------------

  router.exact("/v1/evaluations", (rc) => {
    only(rc, "GET");
    const job = rc.query.get("job") ?? "";
    const status = rc.query.get("status") ?? "";
    if ((rc.query.get("filter") ?? "") !== "" && (job !== "" || status !== "")) throw badRequest("Filter expression cannot be used with other filter parameters");
    return readList(
      rc,
      [TABLES.evals],
      () => byPrefixOrCreate(rc, [...state.evals.values()].filter((e) => inNamespace(rc, e.Namespace) && (job === "" || e.JobID === job) && (status === "" || e.Status === status))),
      createListTokenizer(rc),
      evalWire,
      evalView, // the filter sees every field, as go-bexpr does over the Go struct
    );
  });

  router.prefix("/v1/evaluation/", (rc) => {
    only(rc, "GET");
    const [id, sub] = rc.rest.split("/", 2) as [string, string | undefined];
    if (sub === "allocations") return read(rc, [TABLES.allocs], () => readableAllocs(rc, byCreateIndex([...state.allocs.values()].filter((a) => a.EvalID === id))).map(allocStub));
    return read(
      rc,
      [TABLES.evals],
      () => {
        const evaluation = state.evals.get(id);
        if (!evaluation || sub !== undefined) throw new ReadError(404, "eval not found", state.index(TABLES.evals));
        // Checked in the evaluation's own namespace, whatever the request's (Nomad's GetEval re-checks).
        if (!rc.acl.allowNamespace(evaluation.Namespace, "read-job")) throw permissionDenied();
        return evalWire(evaluation);
      },
      objectIndex(TABLES.evals, () => state.evals.get(id)),
    );
  });

  router.exact("/v1/allocations", (rc) => {
    only(rc, "GET");
    return readList(
      rc,
      [TABLES.allocs],
      () => byPrefixOrCreate(rc, [...state.allocs.values()].filter((a) => inNamespace(rc, a.Namespace))),
      createListTokenizer(rc),
      allocStub,
      (a) => allocView(a, state.job(a.Namespace, a.JobID)),
    );
  });

  router.prefix("/v1/allocation/", (rc) => {
    const [allocId, action] = rc.rest.split("/", 2) as [string, string | undefined];
    if (nodeOps && action === "stop") {
      only(rc, "PUT", "POST");
      const alloc = state.allocs.get(allocId);
      if (!alloc) throw new NomadError(404, "allocation not found");
      if (!rc.acl.allowNamespace(alloc.Namespace, "alloc-lifecycle")) throw permissionDenied();
      const result = nodeOps.stopAllocation(alloc);
      return new Write(result, result.Index);
    }
    only(rc, "GET");
    return read(rc, [TABLES.allocs], () => {
      const alloc = state.allocs.get(rc.rest);
      if (!alloc) throw new ReadError(404, "alloc not found", state.index(TABLES.allocs));
      // Checked in the allocation's own namespace (Nomad's GetAlloc answers as if it did not exist).
      if (!rc.acl.allowNamespace(alloc.Namespace, "read-job")) throw new NomadError(404, `Unknown allocation "${rc.rest}"`);
      return allocWire(alloc, state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? state.job(alloc.Namespace, alloc.JobID));
    }, objectIndex(TABLES.allocs, () => state.allocs.get(rc.rest)));
  });

  router.exact("/v1/deployments", (rc) => {
    only(rc, "GET");
    return readList(rc, [TABLES.deployments], () => byPrefixOrCreate(rc, [...state.deployments.values()].filter((d) => inNamespace(rc, d.Namespace))), createListTokenizer(rc), deploymentView);
  });

  router.prefix("/v1/deployment/", async (rc) => {
    const [first, second] = rc.rest.split("/", 2) as [string, string | undefined];
    if (second === undefined) {
      only(rc, "GET");
      return read(
        rc,
        [TABLES.deployments],
        () => {
          const d = state.deployments.get(first);
          // One in a namespace the token may not read is hidden (Nomad's GetDeployment).
          if (!d || !rc.acl.allowNamespace(d.Namespace, "read-job")) throw new ReadError(404, "deployment not found", state.index(TABLES.deployments));
          return deploymentView(d);
        },
        objectIndex(TABLES.deployments, () => state.deployments.get(first)),
      );
    }
    const id = second;
    if (first === "allocations") {
      only(rc, "GET");
      return read(rc, [TABLES.allocs], () => readableAllocs(rc, byCreateIndex([...state.allocs.values()].filter((a) => a.DeploymentID === id))).map(allocStub));
    }
    only(rc, "PUT", "POST");
    if (first === "fail") return deploymentUpdate(writableDeployment(rc, id), "fail");
    if (first === "unblock") return notYet("/v1/deployment/unblock/:id (multiregion)");
    if (first !== "pause" && first !== "promote" && first !== "allocation-health") return textResponse(404, "");
    // These take a body naming the deployment again.
    const body = await jsonBody(rc);
    const given = str(field(body, "DeploymentID"));
    if (!given) throw badRequest("DeploymentID must be specified");
    if (given !== id) throw badRequest("Deployment ID does not match");
    writableDeployment(rc, id);
    if (first === "pause") return deploymentUpdate(id, typedField(body, "DeploymentPauseRequest", "Pause", "bool") === true ? "pause" : "resume");
    if (first === "promote") {
      const all = typedField(body, "DeploymentPromoteRequest", "All", "bool") === true;
      const groups = typedField(body, "DeploymentPromoteRequest", "Groups", "[]string");
      return ctx.store.write(() => {
        const evaluation = rpc(() => engine.promote(id, all ? undefined : groups));
        const index = ctx.store.writeIndex();
        return new Write({ DeploymentModifyIndex: index, EvalCreateIndex: evaluation.CreateIndex, EvalID: evaluation.ID, Index: index, RevertedJobVersion: null }, index);
      });
    }
    const healthy = typedField(body, "DeploymentAllocHealthRequest", "HealthyAllocationIDs", "[]string") ?? [];
    const unhealthy = typedField(body, "DeploymentAllocHealthRequest", "UnhealthyAllocationIDs", "[]string") ?? [];
    return ctx.store.write(() => {
      const outcome = rpc(() => engine.setAllocHealth(id, healthy, unhealthy));
      const index = ctx.store.writeIndex();
      return new Write({ DeploymentModifyIndex: index, EvalCreateIndex: outcome.evalIndex, EvalID: outcome.evalId, Index: index, RevertedJobVersion: outcome.revertedVersion }, index);
    });
  });

  /** Deployment writes need submit-job in the deployment's own namespace, whatever the request's (Nomad looks it up first). */
  function writableDeployment(rc: RequestContext, id: string): string {
    const deployment = state.deployments.get(id);
    if (deployment && !rc.acl.allowNamespace(deployment.Namespace, "submit-job")) throw permissionDenied();
    return id;
  }

  /** An evaluation's or a deployment's allocations (one namespace): 403 when the token may not read it (Nomad checks the first). */
  function readableAllocs<T extends { Namespace: string }>(rc: RequestContext, allocs: T[]): T[] {
    if (allocs.length > 0 && !rc.acl.allowNamespace(allocs[0]!.Namespace, "read-job")) throw permissionDenied();
    return allocs;
  }

  function deploymentUpdate(id: string, action: "fail" | "pause" | "resume") {
    const deployment = state.deployments.get(id);
    if (!deployment) throw serverError("deployment not found");
    const terminal = !["running", "paused"].includes(deployment.Status);
    if (terminal) {
      throw serverError(action === "fail" ? "can't fail terminal deployment" : action === "pause" ? "can't pause terminal deployment" : "can't resume terminal deployment");
    }
    return ctx.store.write(() => {
      let evalId = "";
      let evalIndex = 0;
      let reverted: number | null = null;
      const job = state.job(deployment.Namespace, deployment.JobID);
      if (action === "fail") {
        const outcome = engine.failDeployment(id, "Deployment marked as failed");
        reverted = outcome.revertedVersion;
        evalId = outcome.evalId;
        evalIndex = outcome.evalIndex;
      } else engine.setDeploymentPaused(id, action === "pause");
      if (action !== "pause" && job && evalId === "") {
        const evaluation = engine.createEval(job, "deployment-watcher", { DeploymentID: id });
        evalId = evaluation.ID;
        evalIndex = evaluation.CreateIndex;
      }
      const index = ctx.store.writeIndex();
      return new Write({ DeploymentModifyIndex: index, EvalCreateIndex: evalIndex, EvalID: evalId, Index: index, RevertedJobVersion: reverted }, index);
    });
  }

  // ---- nodes --------------------------------------------------------------------------------

  router.exact("/v1/nodes", (rc) => {
    only(rc, "GET");
    // ?resources=true adds the node's NodeResources and ReservedResources to each stub (NodeStubFields.Resources).
    const resources = boolParam(rc.query, "resources");
    const stub = resources ? (n: NodeRow) => ({ ...nodeStub(n), ...pick(nodeView(n), "NodeResources", "ReservedResources") }) : nodeStub;
    return readList(rc, [TABLES.nodes], () => state.nodes.sorted().filter((n) => n.ID.startsWith(rc.options.prefix)), idTokenizer<NodeRow>(), stub, nodeView);
  });

  router.prefix("/v1/node/", async (rc) => {
    const [id, sub] = rc.rest.split("/", 2) as [string, string | undefined];
    if (nodeOps && (sub === "eligibility" || sub === "drain" || sub === "purge")) {
      only(rc, "PUT", "POST");
      if (sub === "purge") {
        const result = rpc(() => nodeOps.purge(id));
        return new Write({ ...result, Features: 0, HeartbeatTTL: 0, KnownLeader: false, LastContact: 0, LeaderRPCAddr: "", NextToken: "", NumNodes: 0, SchedulingEligibility: "", Servers: null }, result.Index);
      }
      const body = await jsonBody(rc);
      if (sub === "eligibility") {
        const eligibility = typedField(body, "NodeUpdateEligibilityRequest", "Eligibility", "string") ?? "";
        const result = rpc(() => nodeOps.setEligibility(id, eligibility));
        return new Write(result, result.Index);
      }
      const spec = field(body, "DrainSpec");
      if (spec !== undefined && spec !== null && (typeof spec !== "object" || Array.isArray(spec))) throw badRequest(`json: cannot unmarshal ${Array.isArray(spec) ? "array" : typeof spec} into Go struct field NodeUpdateDrainRequest.DrainSpec of type api.DrainSpec`);
      const drain = spec ? { Deadline: typedField(spec, "DrainSpec", "Deadline", "int64") ?? 0, IgnoreSystemJobs: typedField(spec, "DrainSpec", "IgnoreSystemJobs", "bool") ?? false } : null;
      const markEligible = typedField(body, "NodeUpdateDrainRequest", "MarkEligible", "bool") ?? false;
      const meta = typedField(body, "NodeUpdateDrainRequest", "Meta", "map[string]string") ?? null;
      const result = rpc(() => nodeOps.updateDrain(id, drain, markEligible, meta));
      return new Write(result, result.Index);
    }
    only(rc, "GET");
    // Only the allocations in namespaces the token may read (Nomad's Node.GetAllocs filters).
    if (sub === "allocations") {
      return read(rc, [TABLES.allocs], () =>
        state
          .allocsOnNode(id)
          .filter((a) => rc.acl.allowNamespace(a.Namespace, "read-job"))
          .map((a) => allocWire(a, state.job(a.Namespace, a.JobID))),
      );
    }
    if (sub !== undefined) return notYet(`/v1/node/:id/${sub}`);
    return read(
      rc,
      [TABLES.nodes],
      () => {
        const node = state.nodes.get(id);
        if (!node) throw new ReadError(404, "node not found", state.index(TABLES.nodes));
        return nodeView(node);
      },
      objectIndex(TABLES.nodes, () => state.nodes.get(id)),
    );
  });

  // ---- agent, status, regions, namespaces ------------------------------------------------------------

  router.exact("/v1/agent/health", (rc) => {
    only(rc, "GET");
    return { client: { message: "ok", ok: true }, server: { message: "ok", ok: true } };
  });

  router.exact("/v1/agent/members", (rc) => {
    only(rc, "GET");
    const s = settings();
    // One server per region, as the WAN gossip pool lists them (sorted by name here, for determinism).
    const members = peers()
      .map((peer) => ({
        Addr: "127.0.0.1",
        DelegateCur: 4,
        DelegateMax: 5,
        DelegateMin: 2,
        Name: `${peer.agentName}.${peer.region}`,
        Port: 4648,
        ProtocolCur: 2,
        ProtocolMax: 5,
        ProtocolMin: 1,
        Status: "alive",
        Tags: { bootstrap: "1", build: "1.9.0", dc: peer.datacenter, expect: "1", id: "", mvn: "1", port: "4647", raft_vsn: "3", region: peer.region, role: "nomad", rpc_addr: "127.0.0.1", vsn: "1" },
      }))
      .sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
    return { Members: members, ServerDC: s.datacenter, ServerName: `${s.agentName}.${s.region}`, ServerRegion: s.region };
  });

  router.exact("/v1/agent/self", (rc) => {
    only(rc, "GET");
    const s = settings();
    return {
      config: { Datacenter: s.datacenter, NodeName: s.agentName, Region: s.region, Version: { Version: "1.9.0", VersionPrerelease: "", VersionMetadata: "" } },
      member: { Addr: "127.0.0.1", Name: `${s.agentName}.${s.region}`, Port: 4648, Status: "alive", Tags: { dc: s.datacenter, region: s.region, role: "nomad" } },
      stats: {},
    };
  });

  router.exact("/v1/status/leader", (rc) => {
    only(rc, "GET");
    // The leader's RPC address; an empty string while none is known.
    return rc.leader.known ? "127.0.0.1:4647" : "";
  });
  router.exact("/v1/status/peers", (rc) => {
    only(rc, "GET");
    return ["127.0.0.1:4647"];
  });
  router.exact("/v1/regions", (rc) => {
    only(rc, "GET");
    return peers()
      .map((peer) => peer.region)
      .sort();
  });

  router.exact("/v1/namespaces", (rc) => {
    only(rc, "GET");
    return read(rc, [TABLES.namespaces], () => state.namespaces.sorted().filter((n) => n.Name.startsWith(rc.options.prefix) && rc.acl.anyInNamespace(n.Name)).map(namespaceView));
  });
  router.exact("/v1/namespace", async (rc) => {
    only(rc, "PUT", "POST");
    const body = await jsonBody(rc);
    const name = str(field(body, "Name"));
    if (!name) throw badRequest("Missing Namespace Name");
    return upsertNamespace(name, body);
  });
  router.prefix("/v1/namespace/", async (rc) => {
    const name = rc.rest;
    if (rc.method === "GET") {
      return read(rc, [TABLES.namespaces], () => {
        const ns = state.namespaces.get(name);
        if (!ns) throw new ReadError(404, "Namespace not found", state.index(TABLES.namespaces));
        return namespaceView(ns);
      });
    }
    if (rc.method === "PUT" || rc.method === "POST") {
      const body = await jsonBody(rc);
      if (str(field(body, "Name")) !== name) throw badRequest("Namespace name does not match request path");
      return upsertNamespace(name, body);
    }
    if (rc.method === "DELETE") {
      if (name === "default") throw serverError("can not delete default namespace");
      const live = [...state.jobs.values()].some((j: JobRow) => j.Namespace === name && j.Status !== "dead");
      if (live) throw serverError(`namespace "${name}" has non-terminal jobs in regions: [${settings().region}]`);
      const index = ctx.store.write(() => {
        state.namespaces.delete(name);
        return ctx.store.writeIndex();
      });
      return new Write(undefined, index);
    }
    throw invalidMethod();
  });

  function upsertNamespace(name: string, body: unknown) {
    const description = typedField(body, "Namespace", "Description", "string");
    const quota = typedField(body, "Namespace", "Quota", "string");
    const meta = typedField(body, "Namespace", "Meta", "map[string]string");
    const index = ctx.store.write(() => {
      const existing = state.namespaces.get(name);
      state.namespaces.putIndexed(name, {
        Name: name,
        Description: description || existing?.Description || "",
        Quota: quota || existing?.Quota || "",
        Meta: meta ?? existing?.Meta ?? null,
      });
      return ctx.store.writeIndex();
    });
    return new Write(undefined, index);
  }
}

// ---- helpers -------------------------------------------------------------------------------

/** Evaluations, allocations and deployments list by (CreateIndex, ID); with `prefix`, by ID (the prefix index). */
function byPrefixOrCreate<T extends { CreateIndex: number; ID: string }>(rc: RequestContext, items: T[]): T[] {
  const prefix = rc.options.prefix;
  if (prefix === "") return byCreateIndex(items);
  return items.filter((item) => item.ID.startsWith(prefix)).sort((a, b) => cmp(a.ID, b.ID));
}

function createListTokenizer<T extends { CreateIndex: number; ID: string }>(rc: RequestContext): Tokenizer<T> {
  return rc.options.prefix === "" ? createIndexIdTokenizer<T>() : idTokenizer<T>();
}

/** The `filter` query parameter as a predicate over an item's full object (no filter: everything matches). */
function listFilter<T>(rc: RequestContext, datum: (item: T) => unknown): (item: T) => boolean {
  const expression = rc.query.get("filter") ?? "";
  if (expression === "") return () => true;
  let filter: Filter;
  try {
    filter = compileFilter(expression);
  } catch (error) {
    if (error instanceof FilterParseError) throw badRequest(`failed to create result paginator: failed to read filter expression: ${error.message}`);
    throw error;
  }
  return (item) => {
    try {
      return filter.matches(datum(item));
    } catch (error) {
      if (error instanceof FilterEvaluationError) throw badRequest(`failed to read result page: ${error.message}`);
      throw error;
    }
  };
}

/** `<id>` and the known suffix Nomad's job handler switches on (HasSuffix), else the whole rest is the ID. */
const JOB_SUFFIXES = ["evaluate", "allocations", "evaluations", "periodic/force", "plan", "summary", "dispatch", "versions", "revert", "deployments", "deployment", "stable", "scale", "services", "submission"];

function splitJobPath(rest: string): { id: string; suffix: string } {
  for (const suffix of JOB_SUFFIXES) if (rest.endsWith(`/${suffix}`)) return { id: rest.slice(0, -suffix.length - 1), suffix };
  return { id: rest, suffix: "" };
}

/** Nomad's decodeBody: an empty body is a 400, malformed JSON a 400 with the decoder's words. */
function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The one admission path (admission.ts); a decode error is the HTTP layer's 400. */
function admit(apiJob: unknown, region: string, namespace: string): AdmittedJob {
  try {
    return admitJob(apiJob, { region, namespace });
  } catch (error) {
    if (error instanceof JobDecodeError) throw badRequest(error.message);
    throw error;
  }
}

/** Go's zero time.Time, which Nomad prints when there is no next launch. */
const ZERO_TIME_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z

function nextPeriodic(job: Record<string, unknown>, now: number): number | null {
  if (job.Periodic == null) return null;
  try {
    return nextLaunch(job.Periodic as PeriodicConfig, now);
  } catch (error) {
    throw serverError(`Failed to parse cron expression: ${(error as Error).message}`);
  }
}

/** Runs an engine operation; its errors are the RPC layer's plain 500s. */
function rpc<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof CodedError) throw new NomadError(error.status, error.message);
    if (error instanceof Error && !(error instanceof NomadError)) throw serverError(error.message);
    throw error;
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function pick(o: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}
