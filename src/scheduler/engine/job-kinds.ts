/**
 * What kind of job a row is: a periodic or a parameterized job is a parent
 * that launches children and is never evaluated itself.
 */

/** Nomad's IsPeriodic / IsParameterized: a dispatched child is not itself parameterized. */
export function isPeriodic(job: Record<string, unknown>): boolean {
  return job.Periodic != null;
}

export function isParameterized(job: Record<string, unknown>): boolean {
  return job.ParameterizedJob != null && job.Dispatched !== true;
}

export function isParentJob(job: Record<string, unknown>): boolean {
  return isPeriodic(job) || isParameterized(job);
}
