/**
 * The update, restart, migrate and disconnect blocks of a task group
 * (their structs *.Validate). Reschedule, the involved one, has its own file.
 */
import { SECOND } from "../go.js";
import { goQuote } from "../../../core/go/strconv.js";
import type { Obj } from "../objects.js";
import { dur, flag, isSet, num, str } from "./read.js";

export function validateUpdate(u: Obj): string[] {
  const errs: string[] = [];
  const healthCheck = str(u, "HealthCheck");
  if (!["checks", "task_states", "manual"].includes(healthCheck)) errs.push(`Invalid health check given: ${goQuote(healthCheck)}`);
  const maxParallel = num(u, "MaxParallel");
  const canary = num(u, "Canary");
  const minHealthy = num(u, "MinHealthyTime");
  const healthyDeadline = num(u, "HealthyDeadline");
  const progressDeadline = num(u, "ProgressDeadline");
  const stagger = num(u, "Stagger");
  if (maxParallel < 0) errs.push(`Max parallel can not be less than zero: ${maxParallel} < 0`);
  if (canary < 0) errs.push(`Canary count can not be less than zero: ${canary} < 0`);
  if (canary === 0 && flag(u, "AutoPromote")) errs.push("Auto Promote requires a Canary count greater than zero");
  if (minHealthy < 0) errs.push(`Minimum healthy time may not be less than zero: ${dur(minHealthy)}`);
  if (healthyDeadline <= 0) errs.push(`Healthy deadline must be greater than zero: ${dur(healthyDeadline)}`);
  if (progressDeadline < 0) errs.push(`Progress deadline must be zero or greater: ${dur(progressDeadline)}`);
  if (minHealthy >= healthyDeadline) {
    errs.push(`Minimum healthy time must be less than healthy deadline: ${dur(minHealthy)} > ${dur(healthyDeadline)}`);
  }
  if (progressDeadline !== 0 && healthyDeadline >= progressDeadline) {
    errs.push(`Healthy deadline must be less than progress deadline: ${dur(healthyDeadline)} > ${dur(progressDeadline)}`);
  }
  if (stagger <= 0) errs.push(`Stagger must be greater than zero: ${dur(stagger)}`);
  return errs;
}

export function validateRestart(r: Obj): string[] {
  const errs: string[] = [];
  const mode = str(r, "Mode");
  const attempts = num(r, "Attempts");
  const interval = num(r, "Interval");
  const delay = num(r, "Delay");
  if (mode !== "delay" && mode !== "fail") errs.push(`Unsupported restart mode: ${goQuote(mode)}`);
  if (attempts === 0 && mode !== "fail") errs.push(`Restart policy ${goQuote(mode)} with ${attempts} attempts is ambiguous`);
  if (interval < 5 * SECOND) errs.push(`Interval can not be less than ${dur(5 * SECOND)} (got ${dur(interval)})`);
  if (attempts * delay > interval) {
    errs.push(`Nomad can't restart the TaskGroup ${attempts} times in an interval of ${dur(interval)} with a delay of ${dur(delay)}`);
  }
  return errs;
}

export function validateMigrate(m: Obj): string[] {
  const errs: string[] = [];
  const maxParallel = num(m, "MaxParallel");
  const healthCheck = str(m, "HealthCheck");
  const minHealthy = num(m, "MinHealthyTime");
  const deadline = num(m, "HealthyDeadline");
  if (maxParallel < 0) errs.push(`MaxParallel must be >= 0 but found ${maxParallel}`);
  if (healthCheck === "") {
    if (maxParallel > 0) errs.push("Missing HealthCheck");
  } else if (healthCheck !== "checks" && healthCheck !== "task_states") {
    errs.push(`Invalid HealthCheck: ${goQuote(healthCheck)}`);
  }
  if (minHealthy < 0) errs.push(`MinHealthyTime is ${dur(minHealthy)} and must be >= 0`);
  if (deadline < 0) errs.push(`HealthyDeadline is ${dur(deadline)} and must be >= 0`);
  if (minHealthy > deadline) errs.push("MinHealthyTime must be less than HealthyDeadline");
  return errs;
}

export function validateDisconnect(d: Obj, jobType: string): string[] {
  const errs: string[] = [];
  const stopAfter = isSet(d, "StopOnClientAfter");
  if (stopAfter) {
    if (num(d, "StopOnClientAfter") < 0) errs.push("stop_after cannot be a negative duration");
    if (jobType !== "service" && jobType !== "batch") errs.push("stop_after can only be used with service or batch job types");
  }
  if (num(d, "LostAfter") < 0) errs.push("lost_after cannot be a negative duration");
  if (stopAfter && num(d, "LostAfter") !== 0) {
    errs.push("Disconnect cannot be configured with both lost_after and stop_after");
    return errs;
  }
  const reconcile = str(d, "Reconcile");
  if (!["", "best_score", "longest_running", "keep_original", "keep_replacement"].includes(reconcile)) {
    errs.push(`reconcile option is invalid: ${reconcile}`);
  }
  return errs;
}
