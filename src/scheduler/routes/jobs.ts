/**
 * The job collection: list and register (`/v1/jobs`), HCL parsing (not
 * emulated), validation (`/v1/validate/job`).
 */
import { textResponse } from "../../http/respond.js";
import { badRequest, field, jsonBody, type NomadRouter } from "../http.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { jobStub, jobView, TABLES, type JobRow } from "../model.js";
import { namespaceIdTokenizer } from "../paging.js";
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
}
