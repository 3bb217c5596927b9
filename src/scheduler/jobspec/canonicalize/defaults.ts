/**
 * The client-side defaults of api.*.Canonicalize (update, migrate, restart
 * and reschedule policies by job type) and the two ways a block is completed:
 * defaults filled in for absent fields, or a group's block merged over its
 * job's.
 */
import { HOUR, MINUTE, SECOND } from "../go.js";
import type { Obj } from "../objects.js";
import { getBool, getNum, getStr, has } from "./accessors.js";

export const UPDATE_DEFAULTS: Readonly<Obj> = {
  Stagger: 30 * SECOND,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * SECOND,
  HealthyDeadline: 5 * MINUTE,
  ProgressDeadline: 10 * MINUTE,
  AutoRevert: false,
  Canary: 0,
  AutoPromote: false,
};

export const MIGRATE_DEFAULTS: Readonly<Obj> = { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * SECOND, HealthyDeadline: 5 * MINUTE };

export function restartDefaults(jobType: string): Obj {
  // api/tasks.go defaultServiceJobRestartPolicy / defaultBatchJobRestartPolicy
  return jobType === "service" || jobType === "system"
    ? { Attempts: 2, Interval: 30 * MINUTE, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false }
    : { Attempts: 3, Interval: 24 * HOUR, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false };
}

export function rescheduleDefaults(jobType: string): Obj {
  // api/tasks.go NewDefaultReschedulePolicy
  switch (jobType) {
    case "service":
      return { Attempts: 0, Interval: 0, Delay: 30 * SECOND, DelayFunction: "exponential", MaxDelay: HOUR, Unlimited: true };
    case "batch":
      return { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * SECOND, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
    default:
      return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false };
  }
}

/** Fills the fields `partial` lacks from `defaults` (the api Canonicalize pattern). */
export function withDefaults(partial: Obj | undefined, defaults: Readonly<Obj>): Obj {
  const out: Obj = {};
  for (const key of Object.keys(defaults)) out[key] = has(partial, key) ? partial?.[key] : defaults[key];
  return out;
}

/** Overlays the fields present in `over` on a copy of `base` (the api Merge pattern). */
export function mergePresent(base: Obj, over: Obj | undefined): Obj {
  const out: Obj = { ...base };
  if (over) for (const [key, value] of Object.entries(over)) if (value !== undefined) out[key] = value;
  return out;
}

export function updateIsEmpty(u: Obj): boolean {
  // api UpdateStrategy.Empty
  return (
    getNum(u, "Stagger") === 0 &&
    getNum(u, "MaxParallel") === 0 &&
    getStr(u, "HealthCheck") === "" &&
    getNum(u, "MinHealthyTime") === 0 &&
    getNum(u, "HealthyDeadline") === 0 &&
    getNum(u, "ProgressDeadline") === 0 &&
    !getBool(u, "AutoRevert") &&
    !getBool(u, "AutoPromote") &&
    getNum(u, "Canary") === 0
  );
}

export function structsUpdate(u: Obj): Obj {
  return {
    Stagger: getNum(u, "Stagger"),
    MaxParallel: getNum(u, "MaxParallel"),
    HealthCheck: getStr(u, "HealthCheck"),
    MinHealthyTime: getNum(u, "MinHealthyTime"),
    HealthyDeadline: getNum(u, "HealthyDeadline"),
    ProgressDeadline: getNum(u, "ProgressDeadline"),
    AutoRevert: getBool(u, "AutoRevert"),
    AutoPromote: getBool(u, "AutoPromote"),
    Canary: getNum(u, "Canary"),
  };
}
