/**
 * The job collection: list and register (`/v1/jobs`), HCL2 job-file parsing
 * (`/v1/jobs/parse`), validation (`/v1/validate/job`).
 */
import { jobFilterDatum } from "../state/filter-datum.js";
import { badRequest, field, jsonBody, type NomadRouter, typedField } from "../http/nomad-http.js";
import { canonicalizeApiJob, HclJobError, MAX_JOB_SOURCE_BYTES, parseJobHcl } from "../jobspec/hcl/index.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { jobStub, jobView, TABLES, type JobRow } from "../state/model.js";
import { namespaceIdTokenizer } from "./paging.js";
import { cmp, inNamespace, only } from "./helpers.js";
import { admit, jobWrites } from "./job-writes.js";
import type { RouteKit } from "./kit.js";

export function registerJobsRoutes(router: NomadRouter, kit: RouteKit): void {
  const { state, settings, readList } = kit;
  const { register } = jobWrites(kit);

  router.exact("/v1/jobs", async (rc) => {
    if (rc.method === "GET") {
      return readList(
        rc,
        [TABLES.jobs, TABLES.summaries],
        () =>
          [...state.jobs.values()]
            .filter((j) => inNamespace(rc, j.Namespace, "list-jobs") && j.ID.startsWith(rc.options.prefix))
            .sort((a, b) => cmp(a.Namespace, b.Namespace) || cmp(a.ID, b.ID)),
        namespaceIdTokenizer<JobRow>(),
        (j) => jobStub(j, state.summaries.get(`${j.Namespace}\u0000${j.ID}`)),
        (j) => jobFilterDatum(jobView(j)),
      );
    }
    only(rc, "PUT", "POST");
    return register(rc, undefined);
  });

  // Nomad 1.9's JobsParseRequest handler: jobspec2 with the file name
  // "input.hcl", no filesystem, `Variables` as a variable file; `HCLv1` no
  // longer exists, so the key is ignored like any unknown field.
  router.exact("/v1/jobs/parse", async (rc) => {
    only(rc, "PUT", "POST");
    refuseOversizedParseRequest(Number(rc.c.req.header("content-length") ?? 0));
    const body = await jsonBody(rc);
    const source = typedField(body, "JobsParseRequest", "JobHCL", "string") ?? "";
    const variables = typedField(body, "JobsParseRequest", "Variables", "string") ?? "";
    const canonicalize = typedField(body, "JobsParseRequest", "Canonicalize", "bool") ?? false;
    if (source === "") throw badRequest("Job spec is empty");
    let job: Record<string, unknown>;
    try {
      job = parseJobHcl(source, { filename: "input.hcl", variables, newUuid: () => kit.ctx.ids.uuid() });
    } catch (error) {
      if (error instanceof HclJobError) throw badRequest(`Failed to parse job: ${error.message}`);
      throw error;
    }
    return canonicalize ? canonicalizeApiJob(job) : job;
  });

  router.exact("/v1/validate/job", async (rc) => {
    only(rc, "PUT", "POST");
    const body = await jsonBody(rc);
    const apiJob = field(body, "Job");
    if (apiJob === undefined || apiJob === null) throw badRequest("Job must be specified");
    const { errors } = admit(apiJob, settings().region, rc.options.namespace);
    return { DriverConfigValidated: true, ValidationErrors: errors.length ? errors : null, Error: errors.length ? formatMultierror(errors) : "", Warnings: "" };
  });
}

/**
 * The largest `/v1/jobs/parse` body that can hold a job file within
 * MAX_JOB_SOURCE_BYTES: its text and variables JSON-escaped (at most six
 * bytes a byte, `\u0001`) and the other fields. A larger declared body is
 * refused before it is read and parsed (a 15 MB one held the port for
 * seconds only to be refused after).
 */
const MAX_PARSE_REQUEST_BYTES = 7 * MAX_JOB_SOURCE_BYTES;

function refuseOversizedParseRequest(declaredBytes: number): void {
  if (!(declaredBytes > MAX_PARSE_REQUEST_BYTES)) return;
  throw badRequest(
    `Failed to parse job: input.hcl:1,1-1: Job file too large; This request is ${declaredBytes} bytes, more than a job file of at most ${MAX_JOB_SOURCE_BYTES} bytes with its variables can take.`,
  );
}
