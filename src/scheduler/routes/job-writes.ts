/**
 * Job registration and deregistration, shared by `/v1/jobs` and
 * `/v1/job/:id`, and the one admission path (jobspec/admit.ts) every job
 * specification goes through.
 */
import { badRequest, boolParam, field, jsonBody, serverError, typedField, Write, type RequestContext } from "../http/nomad-http.js";
import { admitJob, JobDecodeError, type AdmittedJob } from "../jobspec/index.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { str } from "./helpers.js";
import type { RouteKit } from "./kit.js";
import { isBuiltInPool, NODE_POOLS_TABLE } from "../nodes/node-pools.js";
import { assertRegistrationsAllowed } from "./operator.js";

export function jobWrites(kit: RouteKit) {
  const { state, engine, settings } = kit;
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
    // Job.Register's first check, before its admission controllers (the decoding above is the HTTP layer's).
    assertRegistrationsAllowed(kit, rc);
    if (errors.length) throw serverError(formatMultierror(errors));
    if (!state.namespaces.get(namespace)) throw serverError(`job "${rawId}" is in nonexistent namespace "${namespace}"`);
    if (!nodePoolExists(kit, String(job.NodePool))) throw serverError(`job "${rawId}" is in nonexistent node pool "${job.NodePool}"`);
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
  return { register, deregister };
}

/** The one admission path (jobspec/admit.ts); a decode error is the HTTP layer's 400. */
export function admit(apiJob: unknown, region: string, namespace: string): AdmittedJob {
  try {
    return admitJob(apiJob, { region, namespace });
  } catch (error) {
    if (error instanceof JobDecodeError) throw badRequest(error.message);
    throw error;
  }
}

/** jobNodePoolValidatingHook: the job's pool must exist. */
function nodePoolExists(kit: RouteKit, pool: string): boolean {
  return isBuiltInPool(pool) || kit.ctx.store.table(NODE_POOLS_TABLE).has(pool);
}
