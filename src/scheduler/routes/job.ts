/**
 * One job: `/v1/job/:id` and the suffixes Nomad's job handler switches on
 * (summary, allocations, evaluations, deployments, versions, evaluate,
 * revert, stable, plan, dispatch, periodic/force, scale).
 */
import { formatInstant } from "../../core/instant.js";
import { annotateTaskDiffs, jobDiff } from "../diff/index.js";
import { badRequest, boolParam, field, invalidMethod, jsonBody, ReadError, serverError, typedField, Write, type NomadRouter } from "../http/nomad-http.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { allocStub, deploymentView, evalWire, jobView, TABLES } from "../state/model.js";
import { nextLaunch, type PeriodicConfig } from "../jobspec/periodic.js";
import { notYet, only, rpc, str } from "./helpers.js";
import { admit, jobWrites } from "./job-writes.js";
import type { RouteKit } from "./kit.js";
import { jobServices } from "./services.js";
import { assertRegistrationsAllowed } from "./operator.js";

export function registerJobRoutes(router: NomadRouter, kit: RouteKit): void {
  const { state, engine, ctx, settings, read, objectIndex } = kit;
  const { register, deregister } = jobWrites(kit);

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
          return {
            Diffs: diffs && diffs.length ? diffs : null,
            Index: state.index(TABLES.jobs),
            KnownLeader: false,
            LastContact: 0,
            NextToken: "",
            Versions: versions.map(jobView),
          };
        });
      case "evaluate": {
        only(rc, "PUT", "POST");
        if (id === "") throw serverError("missing job ID for evaluation");
        // `nomad job eval -force-reschedule`: EvalOptions.ForceReschedule marks the failed allocations to be replaced now.
        const text = await rc.c.req.text();
        const options = text === "" ? undefined : field(await jsonBody(rc), "EvalOptions");
        const forceReschedule = typedField(options, "JobEvaluateRequest.EvalOptions", "ForceReschedule", "bool") ?? false;
        const result = rpc(() => engine.evaluate(ns, id, { forceReschedule }));
        return new Write({ ...result, KnownLeader: false, LastContact: 0, NextToken: "", Warnings: "" }, result.Index);
      }
      case "revert": {
        only(rc, "PUT", "POST");
        const body = await jsonBody(rc);
        if (id === "") throw serverError("missing job ID for revert");
        const version = typedField(body, "JobRevertRequest", "JobVersion", "uint64") ?? 0;
        const prior = typedField(body, "JobRevertRequest", "EnforcePriorVersion", "uint64");
        const result = rpc(() => engine.revert(ns, id, version, prior, () => assertRegistrationsAllowed(kit, rc)));
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
        // jobDispatchRequest: a body naming another job is the HTTP layer's 400.
        const bodyJobId = typedField(body, "JobDispatchRequest", "JobID", "string") ?? "";
        if (bodyJobId !== "" && bodyJobId !== id) throw badRequest("Job ID does not match");
        const payload = typedField(body, "JobDispatchRequest", "Payload", "string") ?? "";
        const meta = typedField(body, "JobDispatchRequest", "Meta", "map[string]string") ?? {};
        const idempotencyToken = typedField(body, "JobDispatchRequest", "IdempotencyToken", "string") ?? "";
        const idPrefixTemplate = typedField(body, "JobDispatchRequest", "IdPrefixTemplate", "string") ?? "";
        assertRegistrationsAllowed(kit, rc);
        const result = rpc(() => engine.dispatch(ns, id, { payload, meta, idempotencyToken, idPrefixTemplate }));
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
          throw badRequest(unmarshalTypeError(jsonKind(meta), "map[string]interface {}", "ScalingRequest.Meta"));
        }
        // The HTTP layer's check, then Job.Scale's own, in Nomad's order.
        if (target?.Job && target.Job !== id) throw badRequest("job ID in payload did not match URL");
        if (target?.Namespace && target.Namespace !== ns) throw badRequest("namespace in payload did not match header");
        assertRegistrationsAllowed(kit, rc); // Job.Scale's, after its ACL check and before its own
        const group = target?.Group ?? "";
        if (group === "") throw badRequest("missing task group name for scaling action");
        if (count !== undefined && count < 0) throw badRequest("scaling action count can't be negative");
        if (count !== undefined && error) throw badRequest("scaling action should not contain count if error is true");
        const result = rpc(() => engine.scale(ns, id, { group, count, jobModifyIndex, message, error, meta: meta as Record<string, unknown> | null }));
        return new Write({ ...result, KnownLeader: false, LastContact: 0, NextToken: "", Warnings: "" }, result.Index);
      }
      case "services":
        return jobServices(kit, rc, ns, id);
      default:
        return notYet(`/v1/job/:id/${suffix}`);
    }
  });
}

/** `<id>` and the known suffix Nomad's job handler switches on (HasSuffix), else the whole rest is the ID. */
const JOB_SUFFIXES = [
  "evaluate",
  "allocations",
  "evaluations",
  "periodic/force",
  "plan",
  "summary",
  "dispatch",
  "versions",
  "revert",
  "deployments",
  "deployment",
  "stable",
  "scale",
  "services",
  "submission",
];

function splitJobPath(rest: string): { id: string; suffix: string } {
  for (const suffix of JOB_SUFFIXES) if (rest.endsWith(`/${suffix}`)) return { id: rest.slice(0, -suffix.length - 1), suffix };
  return { id: rest, suffix: "" };
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
