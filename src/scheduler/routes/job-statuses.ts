/**
 * `GET|POST /v1/jobs/statuses` (reference §7.4; Nomad 1.8+'s UI list): jobs
 * newest-modified first with their allocations, latest deployment and group
 * counts. The token is the job's ModifyIndex. A POST body names the jobs.
 */
import { badRequest, field, parseGoBool, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { nanos, TABLES, type DeploymentRow, type Json, type JobRow } from "../state/model.js";
import type { Tokenizer } from "./paging.js";
import { inNamespace, only } from "./helpers.js";
import type { RouteKit } from "./kit.js";

/** Newest first: the paginator's default order is inverted for this endpoint (OnlyModifyIndex tokens). */
const byModifyIndexDesc: Tokenizer<JobRow> = { token: (j) => String(j.ModifyIndex), compare: (a, b) => Number(b) - Number(a) };

const ACTIVE_DEPLOYMENT = new Set(["running", "paused", "pending", "blocked", "unblocking", "initializing"]);

export function registerJobStatusRoutes(router: NomadRouter, { state, readList }: RouteKit): void {
  router.exact("/v1/jobs/statuses", async (rc) => {
    only(rc, "GET", "POST");
    const raw = rc.query.get("include_children");
    let includeChildren = false;
    if (raw !== null && raw !== "") {
      const parsed = parseGoBool(raw);
      if (parsed === undefined) throw badRequest(`strconv.ParseBool: parsing "${raw}": invalid syntax`);
      includeChildren = parsed;
    }
    let named: Array<{ ID: string; Namespace: string }> | undefined;
    let namespace = rc.options.namespace;
    if (rc.method === "POST") {
      const text = await rc.c.req.text();
      if (text.trim() !== "") {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch (error) {
          throw badRequest(`error decoding request: ${(error as Error).message}`);
        }
        const jobs = field(body, "Jobs");
        if (!Array.isArray(jobs) || jobs.length === 0) throw badRequest("no jobs in request");
        named = jobs.map((j) => ({ ID: String(field(j, "ID") ?? ""), Namespace: String(field(j, "Namespace") || "default") }));
        if (field(body, "IncludeChildren") === true) includeChildren = true;
        if (namespace === "default") namespace = "*";
        rc.query.set("per_page", String(named.length));
      }
    }
    const wanted = named ? new Set(named.map((j) => `${j.Namespace}\u0000${j.ID}`)) : undefined;
    const scope: RequestContext = { ...rc, options: { ...rc.options, namespace } };
    return readList(
      rc,
      [TABLES.jobs, TABLES.allocs, TABLES.deployments],
      () =>
        [...state.jobs.values()]
          .filter(
            (j) =>
              (namespace === "*" ? inNamespace(scope, j.Namespace) : j.Namespace === namespace) &&
              (includeChildren || !j.ParentID) &&
              (!wanted || wanted.has(`${j.Namespace}\u0000${j.ID}`)),
          )
          .sort((a, b) => b.ModifyIndex - a.ModifyIndex || (a.ID < b.ID ? -1 : 1)),
      byModifyIndexDesc,
      (j) => statusOf(state, j),
      (j) => statusOf(state, j),
    );
  });
}

/** structs.JobStatusesJob (the encoder sorts its keys). */
function statusOf(state: RouteKit["state"], job: JobRow): Json {
  const allocs = state.allocsOfJob(job.Namespace, job.ID).map((a) => ({
    ClientStatus: a.ClientStatus,
    DeploymentStatus: { Canary: (a.DeploymentStatus?.Canary as boolean | undefined) ?? false, Healthy: (a.DeploymentStatus?.Healthy as boolean | null | undefined) ?? null },
    FollowupEvalID: (a.FollowupEvalID as string | undefined) ?? "",
    Group: a.TaskGroup,
    HasPausedTask: false,
    ID: a.ID,
    JobVersion: a.JobVersion,
    NodeID: a.NodeID,
  }));
  const parent = (job.Periodic !== null && job.Periodic !== undefined) || (job.ParameterizedJob !== null && job.ParameterizedJob !== undefined);
  const children = parent ? state.childrenOf(job.Namespace, job.ID).map((c) => c.Status) : null;
  const latest = state.deploymentsOfJob(job.Namespace, job.ID)[0];
  return {
    Allocs: allocs.length > 0 ? allocs : null,
    ChildStatuses: children,
    Datacenters: job.Datacenters,
    GroupCountSum: job.TaskGroups.reduce((sum, g) => sum + Number(g.Count ?? 0), 0),
    ID: job.ID,
    IsPack: typeof (job.Meta as Record<string, string> | null | undefined)?.["pack.name"] === "string",
    LatestDeployment: latest ? deploymentSummary(latest) : null,
    ModifyIndex: job.ModifyIndex,
    Name: job.Name,
    Namespace: job.Namespace,
    NodePool: job.NodePool,
    ParentID: (job.ParentID as string | undefined) ?? "",
    Priority: job.Priority,
    Status: job.Status,
    Stop: job.Stop,
    SubmitTime: nanos(job.SubmitTime),
    Type: job.Type,
    Version: job.Version,
  };
}

/** structs.JobStatusLatestDeployment. */
function deploymentSummary(d: DeploymentRow): Json {
  const groups = Object.values(d.TaskGroups);
  return {
    AllAutoPromote: groups.length > 0 && groups.every((g) => g.AutoPromote),
    ID: d.ID,
    IsActive: ACTIVE_DEPLOYMENT.has(d.Status),
    JobVersion: d.JobVersion,
    RequiresPromotion: groups.some((g) => g.DesiredCanaries > 0 && !g.Promoted),
    Status: d.Status,
    StatusDescription: d.StatusDescription,
  };
}
