/**
 * What `standin job run` prints after the registration, in the words of
 * `nomad job run`'s monitor (command/monitor.go): the evaluation from
 * pending to its outcome, the allocations it created, then the deployment.
 *
 * The clock is virtual, so nothing here waits on wall time. Nomad's monitor
 * polls until the evaluation is processed; here the emulator is asked to move
 * its clock timer by timer until that evaluation has left `pending`
 * (`POST /_standin/await` with the `evaluation` condition) — exactly as far as
 * the scheduler needs, as `standin await` would. The deployment is not waited
 * for: it progresses only when the clock moves, so `job run` prints it as it
 * stands then (Nomad would follow it to the end) and leaves the rest to
 * `standin await deployment …` or `standin advance`. With a realtime clock
 * the emulator refuses to await (409) and the evaluation is printed as it
 * stands.
 */
import { goQuote } from "../../core/go/strconv.js";
import { type ClientOptions, controlRequest, refusal } from "../control-client.js";
import { formatKV, formatList } from "./columns.js";
import type { NomadApi } from "./nomad-api.js";

/** Nomad's CLI shows IDs cut to 8 characters unless -verbose. */
const SHORT_ID = 8;
/** How far in virtual time `job run` lets the clock move for the evaluation (it needs a fraction of a second). */
const EVAL_WITHIN = "1m";

interface Evaluation {
  ID: string;
  Status: string;
  TriggeredBy: string;
  JobID: string;
  NodeID?: string;
  DeploymentID?: string;
  BlockedEval?: string;
  CreateIndex: number;
  FailedTGAllocs?: Record<string, AllocMetric> | null;
}

interface AllocStub {
  ID: string;
  NodeID: string;
  TaskGroup: string;
  DesiredStatus: string;
  ClientStatus: string;
  CreateIndex: number;
}

interface AllocMetric {
  NodesEvaluated?: number;
  NodesFiltered?: number;
  NodesAvailable?: Record<string, number> | null;
  ClassFiltered?: Record<string, number> | null;
  ConstraintFiltered?: Record<string, number> | null;
  NodesExhausted?: number;
  ClassExhausted?: Record<string, number> | null;
  DimensionExhausted?: Record<string, number> | null;
  CoalescedFailures?: number;
}

interface DeploymentGroup {
  AutoRevert?: boolean;
  Promoted?: boolean;
  DesiredCanaries?: number;
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
  ProgressDeadline?: number;
  RequireProgressBy?: string | null;
}

interface Deployment {
  ID: string;
  JobID: string;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
  TaskGroups: Record<string, DeploymentGroup> | null;
}

export interface MonitorDeps {
  api: NomadApi;
  control: ClientOptions;
  out: (line: string) => void;
}

/** Prints the monitor's lines; resolves with `nomad job run`'s exit code (0 fine, 2 placement failures, 1 a failed deployment). */
export async function monitorEvaluation({ api, control, out }: MonitorDeps, evalId: string): Promise<number> {
  const info = (at: number, text: string) => out(`==> ${formatTime(at)}: ${text}`);
  const output = (at: number, text: string) => out(`    ${formatTime(at)}: ${text}`);

  let now = await clockNow(control);
  info(now, `Monitoring evaluation ${goQuote(short(evalId))}`);
  let evaluation = await readEval(api, evalId);
  if (evaluation.NodeID) output(now, `Evaluation triggered by node ${goQuote(short(evaluation.NodeID))}`);
  else output(now, `Evaluation triggered by job ${goQuote(evaluation.JobID)}`);

  const first = { status: evaluation.Status, deployment: evaluation.DeploymentID ?? "", allocs: new Set<string>() };
  if (first.deployment) output(now, `Evaluation within deployment: ${goQuote(short(first.deployment))}`);
  for (const alloc of await readAllocs(api, evalId)) {
    first.allocs.add(alloc.ID);
    allocLine(alloc, evaluation, (text) => output(now, text));
  }

  if (evaluation.Status === "pending") {
    now = await awaitProcessed(control, evalId, now);
    evaluation = await readEval(api, evalId);
    if (evaluation.DeploymentID && !first.deployment) output(now, `Evaluation within deployment: ${goQuote(short(evaluation.DeploymentID))}`);
    for (const alloc of await readAllocs(api, evalId)) if (!first.allocs.has(alloc.ID)) allocLine(alloc, evaluation, (text) => output(now, text));
    if (evaluation.Status !== first.status && evaluation.Status !== "pending") output(now, `Evaluation status changed: ${goQuote(first.status)} -> ${goQuote(evaluation.Status)}`);
  }

  let exitCode = 0;
  const failed = Object.entries(evaluation.FailedTGAllocs ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (evaluation.Status === "pending") {
    info(now, `Evaluation ${goQuote(short(evaluation.ID))} is still pending (the clock did not move: a realtime clock runs on its own)`);
    return 0;
  }
  if (failed.length === 0) {
    info(now, `Evaluation ${goQuote(short(evaluation.ID))} finished with status ${goQuote(evaluation.Status)}`);
  } else {
    exitCode = 2;
    info(now, `Evaluation ${goQuote(short(evaluation.ID))} finished with status ${goQuote(evaluation.Status)} but failed to place all allocations:`);
    for (const [group, metrics] of failed) {
      const failures = (metrics.CoalescedFailures ?? 0) + 1;
      output(now, `Task Group ${goQuote(group)} (failed to place ${failures} ${failures === 1 ? "allocation" : "allocations"}):`);
      for (const line of allocMetricLines(metrics)) out(`      * ${line}`);
    }
    if (evaluation.BlockedEval) output(now, `Evaluation ${goQuote(short(evaluation.BlockedEval))} waiting for additional capacity to place remainder`);
  }

  if (!evaluation.DeploymentID) return exitCode;
  info(now, `Monitoring deployment ${goQuote(short(evaluation.DeploymentID))}`);
  const deployment = (await api.expect("cannot read the deployment", "GET", `/v1/deployment/${encodeURIComponent(evaluation.DeploymentID)}`)) as Deployment;
  out("");
  out(indent(`${formatTime(now)}\n${formatDeployment(deployment)}`));
  if (deployment.Status === "failed" || deployment.Status === "cancelled") return 1;
  return exitCode;
}

function allocLine(alloc: AllocStub, evaluation: Evaluation, print: (text: string) => void): void {
  // Nomad: an allocation older than the evaluation was modified by it; a new one meant to run was created.
  if (alloc.CreateIndex < evaluation.CreateIndex) {
    print(`Allocation ${goQuote(short(alloc.ID))} modified: node ${goQuote(short(alloc.NodeID))}, group ${goQuote(alloc.TaskGroup)}`);
  } else if (alloc.DesiredStatus === "run") {
    print(`Allocation ${goQuote(short(alloc.ID))} created: node ${goQuote(short(alloc.NodeID))}, group ${goQuote(alloc.TaskGroup)}`);
  }
}

/** The reasons of command/monitor.go's formatAllocMetrics, one a line. */
function allocMetricLines(m: AllocMetric): string[] {
  const lines: string[] = [];
  if ((m.NodesEvaluated ?? 0) === 0) lines.push("No nodes were eligible for evaluation");
  for (const [dc, available] of sortedEntries(m.NodesAvailable)) if (available === 0) lines.push(`No nodes are available in datacenter ${goQuote(dc)}`);
  for (const [cls, n] of sortedEntries(m.ClassFiltered)) lines.push(`Class ${goQuote(cls)}: ${n} nodes excluded by filter`);
  for (const [constraint, n] of sortedEntries(m.ConstraintFiltered)) lines.push(`Constraint ${goQuote(constraint)}: ${n} nodes excluded by filter`);
  if ((m.NodesExhausted ?? 0) > 0) lines.push(`Resources exhausted on ${m.NodesExhausted} nodes`);
  for (const [cls, n] of sortedEntries(m.ClassExhausted)) lines.push(`Class ${goQuote(cls)} exhausted on ${n} nodes`);
  for (const [dim, n] of sortedEntries(m.DimensionExhausted)) lines.push(`Dimension ${goQuote(dim)} exhausted on ${n} nodes`);
  return lines;
}

/** `deployment status`'s block: the key/value lines, then the groups' table under "Deployed". */
export function formatDeployment(d: Deployment): string {
  const base = formatKV([`ID|${short(d.ID)}`, `Job ID|${d.JobID}`, `Job Version|${d.JobVersion}`, `Status|${d.Status}`, `Description|${d.StatusDescription}`]);
  const groups = sortedEntries(d.TaskGroups);
  if (groups.length === 0) return base;
  const autoRevert = groups.some(([, g]) => g.AutoRevert);
  const canaries = groups.some(([, g]) => (g.DesiredCanaries ?? 0) > 0);
  const deadline = groups.some(([, g]) => (g.ProgressDeadline ?? 0) !== 0);
  const header = [
    "Task Group",
    ...(autoRevert ? ["Auto Revert"] : []),
    ...(canaries ? ["Promoted"] : []),
    "Desired",
    ...(canaries ? ["Canaries"] : []),
    "Placed",
    "Healthy",
    "Unhealthy",
  ];
  if (deadline) header.push("Progress Deadline");
  const rows = groups.map(([name, g]) => {
    const cells = [name];
    if (autoRevert) cells.push(String(Boolean(g.AutoRevert)));
    if (canaries) cells.push((g.DesiredCanaries ?? 0) > 0 ? String(Boolean(g.Promoted)) : "N/A");
    cells.push(String(g.DesiredTotal));
    if (canaries) cells.push(String(g.DesiredCanaries ?? 0));
    cells.push(String(g.PlacedAllocs), String(g.HealthyAllocs), String(g.UnhealthyAllocs));
    if (deadline) cells.push(progressBy(g.RequireProgressBy));
    return cells.join("|");
  });
  return `${base}\n\nDeployed\n${formatList([header.join("|"), ...rows])}`;
}

function progressBy(at: string | null | undefined): string {
  if (!at || at.startsWith("0001-01-01")) return "N/A";
  const ms = Date.parse(at);
  return Number.isNaN(ms) ? at : formatTime(ms);
}

async function readEval(api: NomadApi, id: string): Promise<Evaluation> {
  return (await api.expect("cannot read the evaluation", "GET", `/v1/evaluation/${encodeURIComponent(id)}`)) as Evaluation;
}

async function readAllocs(api: NomadApi, evalId: string): Promise<AllocStub[]> {
  const allocs = (await api.expect("cannot read the evaluation's allocations", "GET", `/v1/evaluation/${encodeURIComponent(evalId)}/allocations`)) as AllocStub[];
  // Nomad prints them in map order (random); by group, then ID, here: the same run prints the same lines.
  return [...allocs].sort((a, b) => (a.TaskGroup === b.TaskGroup ? (a.ID < b.ID ? -1 : 1) : a.TaskGroup < b.TaskGroup ? -1 : 1));
}

async function clockNow(control: ClientOptions): Promise<number> {
  const answer = await controlRequest(control, "GET", "/clock");
  if (!answer.ok) throw refusal(answer);
  return (answer.body as { nowMs: number }).nowMs;
}

/** Moves the virtual clock until the evaluation is processed; the time it got to. */
async function awaitProcessed(control: ClientOptions, evalId: string, now: number): Promise<number> {
  const answer = await controlRequest(control, "POST", "/await", { until: { evaluation: { id: evalId } }, within: EVAL_WITHIN });
  if (answer.status === 409) return now; // a realtime clock: it cannot be moved by a request
  if (!answer.ok && answer.status !== 408) throw refusal(answer);
  return clockNow(control);
}

function sortedEntries<T>(map: Record<string, T> | null | undefined): Array<[string, T]> {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function short(id: string): string {
  return id.length < SHORT_ID ? id : id.slice(0, SHORT_ID);
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? "" : `    ${line}`))
    .join("\n");
}

/** Nomad's formatTime: RFC 3339 to the second, UTC as "Z". */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
