/**
 * Jobs written as HCL in fixtures and `job-register` actions:
 * `{"hcl": "jobs/web.nomad.hcl", "vars": {…}}` names a job file relative to
 * the fixture file (the fixture loader reads it and passes it on as
 * `hclSource` with the path kept in `hclFile`), `{"hclSource": "job …",
 * "vars": {…}}` carries the file's text inline. `vars` sets the file's input
 * variables as `nomad job run -var` does. The job is parsed as Nomad's CLI
 * parses it before `PUT /v1/jobs`, so it is then admitted like a JSON job.
 */
import { HclJobError, parseJobHcl } from "./index.js";

/** Keys an HCL job reference may have; anything else is a mistake worth naming. */
const REFERENCE_KEYS = new Set(["hcl", "hclSource", "hclFile", "vars"]);

export function isHclJobDocument(document: Record<string, unknown>): boolean {
  return "hcl" in document || "hclSource" in document;
}

/** What is wrong with an HCL job reference's shape, or undefined. */
export function hclReferenceProblem(document: Record<string, unknown>): string | undefined {
  const extra = Object.keys(document).filter((k) => !REFERENCE_KEYS.has(k));
  if (extra.length) return `an HCL job takes only "hcl" (a file) or "hclSource" (the text), and "vars"; unexpected ${extra.map((k) => JSON.stringify(k)).join(", ")}`;
  if ("hcl" in document && "hclSource" in document && !("hclFile" in document)) return 'give either "hcl" (a file) or "hclSource" (the text), not both';
  if ("hcl" in document && typeof document["hcl"] !== "string") return '"hcl" must be the path of a job file';
  if ("hclSource" in document && typeof document["hclSource"] !== "string") return '"hclSource" must be the text of a job file';
  const vars = document["vars"];
  if (vars !== undefined && (vars === null || typeof vars !== "object" || Array.isArray(vars))) return '"vars" must be an object of variable values';
  return undefined;
}

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
