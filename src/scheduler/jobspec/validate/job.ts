/**
 * Step 4 of admitting a job: `structs.Job.Validate` plus the checks of the
 * job-validate admission hook, the result `formatMultierror` renders.
 * Cron expressions are checked by the admission path (admit.ts), not here.
 */
import { goQuote } from "../../../core/go/strconv.js";
import { isPlainObject, type Obj } from "../objects.js";
import { validateGroup } from "./group.js";
import { validatePlacement } from "./placement.js";
import { block, flag, goStrings, isSet, items, nested, num, str } from "./read.js";

function isValidTimeZone(zone: string): boolean {
  if (zone === "" || zone === "UTC" || zone === "Local") return true;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** structs.Job.Validate, in Nomad's order. */
function validateJobStruct(job: Obj): string[] {
  const errs: string[] = [];
  const jobType = str(job, "Type");
  if (str(job, "Region") === "" && !isSet(job, "Multiregion")) errs.push("Missing job region");
  const id = str(job, "ID");
  if (id === "") errs.push("Missing job ID");
  else if (id.includes(" ")) errs.push("Job ID contains a space");
  else if (id.includes("\0")) errs.push("Job ID contains a null character");
  const name = str(job, "Name");
  if (name === "") errs.push("Missing job name");
  else if (name.includes("\0")) errs.push("Job Name contains a null character");
  if (str(job, "Namespace") === "") errs.push("Job must be in a namespace");
  switch (jobType) {
    case "_core":
    case "service":
    case "batch":
    case "system":
    case "sysbatch":
      break;
    case "":
      errs.push("Missing job type");
      break;
    default:
      errs.push(`Invalid job type: ${goQuote(jobType)}`);
  }
  const multiregionRegions = items(block(job, "Multiregion"), "Regions");
  const datacenters = isPlainObject(job) && Array.isArray(job["Datacenters"]) ? (job["Datacenters"] as unknown[]) : [];
  if (datacenters.length === 0 && multiregionRegions.length === 0) errs.push("Missing job datacenters");
  else for (const dc of datacenters) if (dc === "") errs.push("Job datacenter must be non-empty string");
  const groups = items(job, "TaskGroups");
  if (groups.length === 0) errs.push("Missing job task groups");
  validatePlacement(job, jobType, errs, "Constraints");
  validatePlacement(job, jobType, errs, "Affinities");
  validatePlacement(job, jobType, errs, "Spreads");
  const uiDescription = str(block(job, "UI"), "Description");
  if (uiDescription.length > 1000) errs.push(`UI description must be under 1000 characters, currently ${uiDescription.length}`);
  const tagDescription = str(block(job, "VersionTag"), "Description");
  if (tagDescription.length > 1000) errs.push(`Tagged version description must be under 1000 characters, currently ${tagDescription.length}`);

  const seen = new Map<string, number>();
  groups.forEach((tg, i) => {
    const tgName = str(tg, "Name");
    if (tgName === "") errs.push(`Job task group ${i + 1} missing name`);
    else if (seen.has(tgName)) errs.push(`Job task group ${i + 1} redefines '${tgName}' from group ${(seen.get(tgName) ?? 0) + 1}`);
    else seen.set(tgName, i);
    if (isSet(tg, "ShutdownDelay") && num(tg, "ShutdownDelay") < 0) errs.push("ShutdownDelay must be a positive value");
    if (isSet(tg, "StopAfterClientDisconnect") && num(tg, "StopAfterClientDisconnect") !== 0) {
      const stopAfter = num(tg, "StopAfterClientDisconnect");
      if (stopAfter > 0 && !(jobType === "batch" || jobType === "service")) {
        errs.push("stop_after_client_disconnect can only be set in batch and service jobs");
      } else if (stopAfter < 0) errs.push("stop_after_client_disconnect must be a positive value");
    }
    if (jobType === "system" && num(tg, "Count") > 1) {
      errs.push(`Job task group ${tgName} has count ${num(tg, "Count")}. Count cannot exceed 1 with system scheduler`);
    }
    if (isSet(tg, "MaxClientDisconnect") && num(block(tg, "ReschedulePolicy"), "Attempts") > 0 && flag(tg, "PreventRescheduleOnLost")) {
      errs.push("max_client_disconnect and prevent_reschedule_on_lost cannot be enabled when rechedule.attempts > 0");
    }
  });

  for (const tg of groups) {
    const inner = validateGroup(tg, job);
    if (inner.length > 0) errs.push(`Task group ${str(tg, "Name")} validation failed: ${nested(inner)}`);
  }

  const periodic = block(job, "Periodic");
  if (periodic && flag(periodic, "Enabled")) {
    if (jobType !== "batch" && jobType !== "sysbatch") errs.push(`Periodic can only be used with "batch" or "sysbatch" scheduler`);
    const inner: string[] = [];
    const spec = str(periodic, "Spec");
    const specs = Array.isArray(periodic["Specs"]) ? (periodic["Specs"] as unknown[]) : [];
    if (spec !== "" && specs.length !== 0) inner.push("Only cron or crons may be used");
    if (spec === "" && specs.length === 0) inner.push("Must specify a spec");
    const zone = str(periodic, "TimeZone");
    if (!isValidTimeZone(zone)) inner.push(`Invalid time zone ${goQuote(zone)}: unknown time zone ${zone}`);
    const specType = str(periodic, "SpecType");
    if (specType !== "cron" && specType !== "_internal_test") inner.push(`Unknown periodic specification type ${goQuote(specType)}`);
    if (inner.length > 0) errs.push(nested(inner));
  }

  const parameterized = block(job, "ParameterizedJob");
  if (parameterized && !flag(job, "Dispatched")) {
    if (jobType !== "batch" && jobType !== "sysbatch") errs.push(`Parameterized job can only be used with "batch" or "sysbatch" scheduler`);
    const inner: string[] = [];
    const payload = str(parameterized, "Payload");
    if (!["optional", "required", "forbidden"].includes(payload)) inner.push(`Unknown payload requirement: ${goQuote(payload)}`);
    const required = Array.isArray(parameterized["MetaRequired"]) ? (parameterized["MetaRequired"] as string[]) : [];
    const optional = new Set(Array.isArray(parameterized["MetaOptional"]) ? (parameterized["MetaOptional"] as string[]) : []);
    const both = required.filter((key) => optional.has(key));
    if (both.length > 0) inner.push(`Required and optional meta keys should be disjoint. Following keys exist in both: ${goStrings(both)}`);
    if (inner.length > 0) errs.push(nested(inner));
  }
  return errs;
}

/**
 * The validation errors Nomad 1.9's job-validate admission hook reports, in
 * its order: `structs.Job.Validate` (flattened into the top-level list), then
 * the core type, the payload, the priority range (with the default
 * `job_max_priority` of 100) and empty service identity names. Nested task
 * group and task errors are already rendered as go-multierror nests them.
 * An empty list means the job is valid.
 */
export function validateJob(job: Record<string, unknown>): string[] {
  const errs = validateJobStruct(job);
  const jobType = str(job, "Type");
  if (jobType === "_core") errs.push("job type cannot be core");
  if (str(job, "Payload") !== "") errs.push("job can't be submitted with a payload, only dispatched");
  const priority = num(job, "Priority");
  if (priority < 1 || priority > 100) errs.push("job priority must be between [1, 100]");
  for (const tg of items(job, "TaskGroups")) {
    for (const svc of items(tg, "Services")) {
      const identity = block(svc, "Identity");
      if (identity && str(identity, "Name") === "") errs.push(`Service ${str(svc, "Name")} in task group ${str(tg, "Name")} has an identity with an empty name`);
    }
    for (const task of items(tg, "Tasks")) {
      for (const svc of items(task, "Services")) {
        const identity = block(svc, "Identity");
        if (identity && str(identity, "Name") === "") errs.push(`Service ${str(svc, "Name")} in task ${str(task, "Name")} has an identity with an empty name`);
      }
    }
  }
  return errs;
}
