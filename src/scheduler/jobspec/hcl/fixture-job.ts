/**
 * Jobs written as HCL in fixtures and `job-register` actions:
 * `{"hcl": "jobs/web.nomad.hcl", "vars": {…}}` names a job file relative to
 * the fixture file (the fixture loader reads it and passes it on as
 * `hclSource` with the path kept in `hclFile`), `{"hclSource": "job …",
 * "vars": {…}}` carries the file's text inline. `vars` sets the file's input
 * variables as `nomad job run -var` does. The job is parsed as Nomad's CLI
 * parses it before `PUT /v1/jobs`, so it is then admitted like a JSON job.
 */
import { hclReferenceProblem } from "../../../scenario-files/hcl-job-reference.js";
import { HclJobError, parseJobHcl } from "./index.js";

export { isHclJobDocument } from "../../../scenario-files/hcl-job-reference.js";

/**
 * The api.Job an HCL job reference stands for. Throws an Error whose message
 * is one line: the problem, naming `file:line,col` for HCL diagnostics.
 */
export function hclFixtureJob(document: Record<string, unknown>, newUuid: () => string): Record<string, unknown> {
  const problem = hclReferenceProblem(document);
  if (problem) throw new Error(problem);
  if (typeof document["hclSource"] !== "string") {
    throw new Error(`"hcl": ${JSON.stringify(document["hcl"])}: job files are read only from fixture files (relative to the fixture); here, give the text as "hclSource"`);
  }
  const filename = typeof document["hclFile"] === "string" ? document["hclFile"] : "hclSource";
  try {
    return parseJobHcl(document["hclSource"], { filename, vars: (document["vars"] as Record<string, unknown> | undefined) ?? {}, newUuid });
  } catch (error) {
    if (error instanceof HclJobError) throw new Error(error.message.split("\n").join("; "));
    throw error;
  }
}
