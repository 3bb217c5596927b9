/**
 * The shape of an HCL job reference in a fixture or a `job-register`
 * action: `{"hcl": "jobs/web.nomad.hcl", "vars": {…}}` (a file relative to
 * the fixture) or `{"hclSource": "job …", "vars": {…}}` (the text inline).
 * Part of the fixture format, so that the loader checks it without reaching
 * into the scheduler; the scheduler parses the job
 * (scheduler/jobspec/hcl/fixture-job.ts).
 */

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
