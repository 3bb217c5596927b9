/**
 * One admission path for jobs: what Nomad's job endpoint does to a job before
 * anything else looks at it — decode the API job (a field of the wrong type
 * is a decode error), canonicalise it (defaults, as its admission
 * controllers do) and validate it (`job.Validate()`, the periodic block's cron
 * spec included). Register, validate, plan, fixtures and timeline actions all
 * call `admitJob`, so the same job gets the same answer everywhere; each entry
 * point only decides how to word the outcome (register and plan: a 500
 * multierror; validate: a 200 with `ValidationErrors`; fixtures and actions:
 * a 400 naming where the job was).
 */
import { nextLaunch, type PeriodicConfig } from "./periodic.js";
import { canonicalizeJob } from "./canonicalize/job.js";
import { validateJob } from "./validate/job.js";

export interface AdmittedJob {
  /** The canonical job (Go field names, every default filled in). */
  job: Record<string, unknown>;
  /** Validation errors in Nomad's order; empty when the job is valid. */
  errors: string[];
}

/** Decodes, canonicalises and validates an API job; a JobDecodeError is thrown for a field of the wrong type. */
export function admitJob(apiJob: unknown, placement: { region: string; namespace: string }): AdmittedJob {
  const job = canonicalizeJob(apiJob, placement);
  const errors = validateJob(job);
  const cron = cronProblem(job);
  if (cron) errors.push(cron);
  return { job, errors };
}

/** A periodic job's cron spec that does not parse (Nomad's Periodic.Validate rejects the job). */
function cronProblem(job: Record<string, unknown>): string | undefined {
  const periodic = job.Periodic as PeriodicConfig | null | undefined;
  if (!periodic) return undefined;
  for (const spec of [...(periodic.Specs ?? []), ...(periodic.Spec ? [periodic.Spec] : [])]) {
    try {
      nextLaunch({ ...periodic, Enabled: true, Spec: spec, Specs: null }, 0);
    } catch (error) {
      return `Periodic validation failed: Invalid cron spec "${spec}": ${(error as Error).message}`;
    }
  }
  return undefined;
}
