/**
 * `nomad job plan`'s text (command/job_plan.go) from a plan answer
 * (`PUT /v1/job/:id/plan` with `Diff: true`): the job diff with its +, - and
 * +/- markers aligned as Nomad aligns them, the scheduler dry-run, and the
 * Job Modify Index with the command that submits the job only if nothing
 * changed since. No colours: Nomad prints none when its output is not a
 * terminal, and neither does this.
 */
import { goQuote } from "../../core/go/strconv.js";
import type { DesiredUpdates } from "../../scheduler/diff/annotate.js";
import { formatTime } from "./monitor.js";

interface FieldDiff {
  Type: string;
  Name: string;
  Old: string;
  New: string;
  Annotations?: string[] | null;
}

interface ObjectDiff {
  Type: string;
  Name: string;
  Fields?: FieldDiff[] | null;
  Objects?: ObjectDiff[] | null;
}

interface TaskDiff extends ObjectDiff {
  Annotations?: string[] | null;
}

interface TaskGroupDiff extends ObjectDiff {
  Tasks?: TaskDiff[] | null;
  Updates?: Record<string, number> | null;
}

export interface JobDiff {
  Type: string;
  ID: string;
  Fields?: FieldDiff[] | null;
  Objects?: ObjectDiff[] | null;
  TaskGroups?: TaskGroupDiff[] | null;
}

export interface PlanAnswer {
  Annotations?: { DesiredTGUpdates?: Record<string, DesiredUpdates> | null } | null;
  Diff?: JobDiff | null;
  FailedTGAllocs?: Record<string, unknown> | null;
  JobModifyIndex: number;
  NextPeriodicLaunch?: string;
  Warnings?: string;
}

export interface PlanContext {
  /** The command's own arguments for the check-index hint (`--var "a=b" `…), each followed by a space. */
  runArgs: string;
  path: string;
  /** The virtual clock now, for "(… from now)". */
  nowMs: number;
  type?: string;
  parameterized: boolean;
}

/** The whole output, and `nomad job plan`'s exit code: 0 no changes, 1 changes that place, stop, migrate or replace allocations. */
export function formatPlan(plan: PlanAnswer, ctx: PlanContext): { text: string; exitCode: number } {
  const lines: string[] = [];
  if (plan.Diff) lines.push(`${formatJobDiff(plan.Diff).trim()}\n`);
  lines.push("Scheduler dry-run:");
  lines.push(formatDryRun(plan, ctx));
  lines.push("");
  if (plan.Warnings) lines.push(`Job Warnings:\n${plan.Warnings}\n`);
  lines.push(`Job Modify Index: ${plan.JobModifyIndex}`);
  lines.push(
    [
      "To submit the job with version verification run:",
      "",
      `standin job run --check-index ${plan.JobModifyIndex} ${ctx.runArgs}${ctx.path}`,
      "",
      "When running the job with the check-index flag, the job will only be run if the",
      "job modify index given matches the server-side version. If the index has",
      "changed, another user has modified the job and the plan's results are",
      "potentially invalid.",
    ].join("\n"),
  );
  return { text: `${lines.join("\n")}\n`, exitCode: exitCode(plan) };
}

function exitCode(plan: PlanAnswer): number {
  if (!plan.Diff || plan.Diff.Type === "None") return 0;
  for (const d of Object.values(plan.Annotations?.DesiredTGUpdates ?? {})) {
    if ((d.Stop ?? 0) + (d.Place ?? 0) + (d.Migrate ?? 0) + (d.DestructiveUpdate ?? 0) + (d.Canary ?? 0) > 0) return 1;
  }
  return 0;
}

function formatDryRun(plan: PlanAnswer, ctx: PlanContext): string {
  let out: string;
  const failed = Object.keys(plan.FailedTGAllocs ?? {}).sort();
  if (failed.length === 0) out = "- All tasks successfully allocated.\n";
  else {
    out = ctx.type === "system" ? "- WARNING: Failed to place allocations on all nodes.\n" : "- WARNING: Failed to place all allocations.\n";
    for (const group of failed) {
      const metrics = plan.FailedTGAllocs![group] as { CoalescedFailures?: number };
      const failures = (metrics.CoalescedFailures ?? 0) + 1;
      out += `  Task Group ${goQuote(group)} (failed to place ${failures} ${failures === 1 ? "allocation" : "allocations"}):\n\n`;
    }
    out = out.replace(/\n$/, "");
  }
  const launch = periodicLaunch(plan.NextPeriodicLaunch, ctx.nowMs);
  if (launch && !ctx.parameterized) out += `- If submitted now, next periodic launch would be at ${launch}.\n`;
  return out.replace(/\n$/, "");
}

/** `<time> (<span> from now)` for a plan's NextPeriodicLaunch; undefined for Go's zero time (not periodic). */
export function periodicLaunch(nextLaunch: string | undefined, nowMs: number): string | undefined {
  const next = nextLaunch ? Date.parse(nextLaunch) : NaN;
  if (Number.isNaN(next) || new Date(next).getUTCFullYear() <= 1) return undefined;
  return `${formatTime(next)} (${goDurationSeconds(next - nowMs)} from now)`;
}

/** A span as Go prints a time.Duration truncated to seconds: 1h2m3s, 45s, 0s. */
function goDurationSeconds(ms: number): string {
  let s = Math.max(0, Math.floor(ms / 1000));
  if (s === 0) return "0s";
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

function marker(type: string): [string, number] {
  switch (type) {
    case "Added":
      return ["+ ", 2];
    case "Deleted":
      return ["- ", 2];
    case "Edited":
      return ["+/- ", 4];
    default:
      return ["", 0];
  }
}

const spaces = (n: number) => " ".repeat(Math.max(0, n));

export function formatJobDiff(job: JobDiff): string {
  let out = `${marker(job.Type)[0]}Job: ${goQuote(job.ID)}\n`;
  let [longestField, longestMarker] = longestPrefixes(job.Fields, job.Objects);
  for (const tg of job.TaskGroups ?? []) longestMarker = Math.max(longestMarker, marker(tg.Type)[1]);
  if (job.Type === "Edited") {
    const fo = alignedFieldsAndObjects(job.Fields, job.Objects, 0, longestField, longestMarker);
    out += fo;
    if (fo.length > 0) out += "\n";
  }
  for (const tg of job.TaskGroups ?? []) out += `${formatGroupDiff(tg, longestMarker - marker(tg.Type)[1])}\n`;
  return out;
}

function formatGroupDiff(tg: TaskGroupDiff, tgPrefix: number): string {
  let out = `${marker(tg.Type)[0]}${spaces(tgPrefix)}Task Group: ${goQuote(tg.Name)}`;
  const updates = Object.keys(tg.Updates ?? {}).sort();
  out += updates.length > 0 ? ` (${updates.map((u) => `${tg.Updates![u]} ${u}`).join(", ")})\n` : "\n";
  let [longestField, longestMarker] = longestPrefixes(tg.Fields, tg.Objects);
  for (const task of tg.Tasks ?? []) longestMarker = Math.max(longestMarker, marker(task.Type)[1]);
  const subStart = tgPrefix + 2;
  if (tg.Type === "Edited") {
    const fo = alignedFieldsAndObjects(tg.Fields, tg.Objects, subStart, longestField, longestMarker);
    out += fo;
    if (fo.length > 0) out += "\n";
  }
  for (const task of tg.Tasks ?? []) out += `${formatTaskDiff(task, subStart, longestMarker - marker(task.Type)[1])}\n`;
  return out;
}

function formatTaskDiff(task: TaskDiff, start: number, taskPrefix: number): string {
  let out = `${spaces(start)}${marker(task.Type)[0]}${spaces(taskPrefix)}Task: ${goQuote(task.Name)}`;
  if (task.Annotations?.length) out += ` (${task.Annotations.join(", ")})`;
  if (task.Type === "None" || task.Type === "Added" || task.Type === "Deleted") return out;
  out += "\n";
  const [longestField, longestMarker] = longestPrefixes(task.Fields, task.Objects);
  return out + alignedFieldsAndObjects(task.Fields, task.Objects, start + 2, longestField, longestMarker);
}

function formatObjectDiff(diff: ObjectDiff, start: number, keyPrefix: number): string {
  const [m, markerLength] = marker(diff.Type);
  let out = `${spaces(start)}${m}${spaces(keyPrefix)}${diff.Name} {\n`;
  const [longestField, longestMarker] = longestPrefixes(diff.Fields, diff.Objects);
  out += alignedFieldsAndObjects(diff.Fields, diff.Objects, start + keyPrefix + 2, longestField, longestMarker);
  return `${out}\n${spaces(start + markerLength + keyPrefix)}}`;
}

function formatFieldDiff(diff: FieldDiff, start: number, keyPrefix: number, valuePrefix: number): string {
  let out = `${spaces(start)}${marker(diff.Type)[0]}${spaces(keyPrefix)}${diff.Name}: ${spaces(valuePrefix)}`;
  if (diff.Type === "Added") out += goQuote(diff.New);
  else if (diff.Type === "Deleted") out += goQuote(diff.Old);
  else if (diff.Type === "Edited") out += `${goQuote(diff.Old)} => ${goQuote(diff.New)}`;
  else out += goQuote(diff.New);
  if (diff.Annotations?.length) out += ` (${diff.Annotations.join(", ")})`;
  return out;
}

function alignedFieldsAndObjects(
  fields: FieldDiff[] | null | undefined,
  objects: ObjectDiff[] | null | undefined,
  start: number,
  longestField: number,
  longestMarker: number,
): string {
  const f = fields ?? [];
  const o = objects ?? [];
  let out = "";
  f.forEach((field, i) => {
    out += formatFieldDiff(field, start, longestMarker - marker(field.Type)[1], longestField - field.Name.length);
    if (i + 1 !== f.length || o.length > 0) out += "\n";
  });
  o.forEach((object, i) => {
    out += formatObjectDiff(object, start, longestMarker - marker(object.Type)[1]);
    if (i + 1 !== o.length) out += "\n";
  });
  return out;
}

function longestPrefixes(fields: FieldDiff[] | null | undefined, objects: ObjectDiff[] | null | undefined): [number, number] {
  let longestField = 0;
  let longestMarker = 0;
  for (const field of fields ?? []) {
    longestField = Math.max(longestField, field.Name.length);
    longestMarker = Math.max(longestMarker, marker(field.Type)[1]);
  }
  for (const object of objects ?? []) longestMarker = Math.max(longestMarker, marker(object.Type)[1]);
  return [longestField, longestMarker];
}
