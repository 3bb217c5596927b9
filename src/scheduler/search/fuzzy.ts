/**
 * Nomad's FuzzySearch (nomad/search_endpoint.go, v1.9.7) with the agent's
 * default limits: names containing the text (case-insensitive) among the
 * first 20 objects of each fuzzy context, best first (earliest position,
 * then shortest name, then by name). A job also answers its groups,
 * services, tasks and its tasks' docker images, exec commands and java
 * classes, each with its `Scope` (namespace, job, group, task). Evaluations,
 * deployments, scaling policies and volumes are searched by ID prefix
 * instead, among the first 20 the `?prefix=` positions.
 *
 * Where Go leaves the order to chance (map iteration, an unstable sort) this
 * answers one fixed order: a job's parts in the order above, equal scores in
 * scan order.
 */
import type { Authorizer } from "../http/authorizer.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { serverError } from "../http/nomad-http.js";
import type { Json } from "../state/model.js";
import {
  expandContext,
  filteredSearchContexts,
  FUZZY_LIMITS,
  isKnownContext,
  PREFIX_ONLY,
  roundUUIDDownIfOdd,
  sufficientSearchPerms,
  TRUNCATE_LIMIT,
  unknownContext,
  type JobPartContext,
} from "./contexts.js";
import { prefixMatches } from "./prefix.js";
import type { Scanned, SearchScan } from "./scan.js";

export interface FuzzySearchRequest {
  text: string;
  context: string;
  namespace: string;
  /** `?prefix=` (QueryOptions.Prefix): where the prefix-searched contexts' scan starts. */
  prefix: string;
}

/** A structs.FuzzyMatch: `Scope` left out when the object has none (`json:",omitempty"`). */
export type FuzzyMatch = { ID: string; Scope?: string[] };

export interface FuzzySearchResult {
  matches: Record<string, FuzzyMatch[]>;
  truncations: Record<string, boolean>;
  index: number;
}

/** A match before sorting: the name, where the text starts in it (bytes), its scope. */
type Scored = { id: string; score: number; scope: string[] | undefined };

export function fuzzySearch(scan: SearchScan, acl: Authorizer, request: FuzzySearchRequest): FuzzySearchResult {
  const { context, namespace } = request;
  // sufficientFuzzySearchPerms: across `*` the objects are filtered one by one instead.
  if (namespace !== "*" && !sufficientSearchPerms(acl, namespace, context)) throw permissionDenied();
  const length = Buffer.byteLength(request.text, "utf8");
  if (length < FUZZY_LIMITS.minTermLength) throw serverError(`fuzzy search query must be at least ${FUZZY_LIMITS.minTermLength} characters, got ${length}`);
  const text = request.text.toLowerCase();
  const prefixContexts = filteredSearchContexts(acl, namespace, context);
  const fuzzyContexts = namespace === "*" ? expandContext(context) : filteredSearchContexts(acl, namespace, context);
  const matches: Record<string, FuzzyMatch[]> = {};
  const truncations: Record<string, boolean> = {};

  const rounded = roundUUIDDownIfOdd(request.prefix, context);
  const whole = Buffer.from(request.text, "utf8");
  for (const ctx of prefixContexts) {
    if (!PREFIX_ONLY.has(ctx)) continue;
    const scanned = scan.byPrefix(ctx, acl, namespace, rounded, TRUNCATE_LIMIT + 1);
    if (scanned === undefined) continue;
    const found = prefixMatches(scanned, whole);
    matches[ctx] = (found.ids ?? []).map((ID) => ({ ID }));
    truncations[ctx] = found.truncated;
  }
  for (const ctx of fuzzyContexts) {
    if (PREFIX_ONLY.has(ctx)) continue;
    if (!isKnownContext(ctx)) throw unknownContext(ctx);
    // Every fuzzy context answers its truncation, matches or not.
    truncations[ctx] = false;
    const found = fuzzyMatches(scan.fuzzy(ctx, acl, namespace, FUZZY_LIMITS.limitQuery + 1), text);
    for (const [part, list] of found.matches) matches[part] = list;
    for (const part of found.truncated) truncations[part] = true;
  }
  return { matches, truncations, index: Math.max(0, ...fuzzyContexts.map((c) => (isKnownContext(c) ? scan.indexOf(c) : 0))) };
}

/**
 * getFuzzyMatches over one context's first objects: a context stops taking
 * matches at `limitResults`, and the last object scanned (when more follow)
 * adds one match and marks its context truncated.
 */
function fuzzyMatches(scanned: Scanned[], text: string): { matches: Map<string, FuzzyMatch[]>; truncated: Set<string> } {
  const { limitQuery, limitResults } = FUZZY_LIMITS;
  const unsorted = new Map<string, Scored[]>();
  const truncated = new Set<string>();
  const listOf = (ctx: string) => {
    let list = unsorted.get(ctx);
    if (!list) unsorted.set(ctx, (list = []));
    return list;
  };
  /** accumulateSet / accumulateSingle: false once the object's matches must stop (Go's early return). */
  const accumulate = (limited: boolean, ctx: string, match: Scored): boolean => {
    const list = listOf(ctx);
    if (list.length >= limitResults) {
      truncated.add(ctx);
      return false;
    }
    list.push(match);
    if (limited) {
      truncated.add(ctx);
      return false;
    }
    return true;
  };
  const count = Math.min(scanned.length, limitQuery);
  for (let i = 0; i < count; i++) {
    const limited = i === limitQuery - 1 && scanned.length > limitQuery;
    const item = scanned[i]!;
    if (item.kind === "jobs") {
      for (const [ctx, list] of jobMatches(item.row, text)) {
        if (!list.every((match) => accumulate(limited, ctx, match))) break;
      }
    } else {
      const single = singleMatch(item, text);
      if (single) accumulate(limited, single.ctx, single.match);
    }
  }
  const matches = new Map<string, FuzzyMatch[]>();
  for (const [ctx, list] of unsorted) {
    if (list.length === 0) continue;
    matches.set(
      ctx,
      sortSet(list).map((m) => (m.scope === undefined ? { ID: m.id } : { ID: m.id, Scope: m.scope })),
    );
  }
  return { matches, truncated };
}

/** fuzzyIndex: where the (lower-cased) text starts in the lower-cased name, in bytes; -1 when it is not there. */
function fuzzyIndex(name: string, text: string): number {
  const lower = name.toLowerCase();
  const at = lower.indexOf(text);
  return at <= 0 ? at : Buffer.byteLength(lower.slice(0, at), "utf8");
}

/** fuzzyMatchSingle: a node, node pool, namespace, allocation or variable by its name (or path). */
function singleMatch(item: Scanned, text: string): { ctx: string; match: Scored } | undefined {
  let name: string;
  let scope: string[] | undefined;
  switch (item.kind) {
    case "nodes":
      [name, scope] = [item.row.Name, [item.row.ID]];
      break;
    case "node_pools":
      [name, scope] = [item.row.Name, [item.row.Name]];
      break;
    case "namespaces":
      [name, scope] = [item.name, undefined];
      break;
    case "allocs":
      [name, scope] = [item.row.Name, [item.row.Namespace, item.row.ID]];
      break;
    case "vars":
      [name, scope] = [item.row.Path, [item.row.Namespace, item.row.Path]];
      break;
    default:
      return undefined;
  }
  const score = fuzzyIndex(name, text);
  return score < 0 ? undefined : { ctx: item.kind, match: { id: name, score, scope } };
}

/** The driver config parameter each driver's task is searched by. */
const DRIVER_PARAMS: Record<string, [JobPartContext, string]> = {
  docker: ["images", "image"],
  exec: ["commands", "command"],
  raw_exec: ["commands", "command"],
  java: ["classes", "class"],
};

const names = (list: unknown): Json[] => (Array.isArray(list) ? (list.filter((x) => x !== null && typeof x === "object") as Json[]) : []);
const nameOf = (o: Json): string => (typeof o.Name === "string" ? o.Name : "");

/** fuzzyMatchesJob: the job's name, its groups, group services, tasks, task services and driver parameters. */
function jobMatches(job: Json & { ID: string; Namespace: string }, text: string): Map<string, Scored[]> {
  const found = new Map<string, Scored[]>();
  const add = (ctx: string, id: string, ...scope: string[]) => {
    const score = fuzzyIndex(id, text);
    if (score < 0) return;
    const list = found.get(ctx) ?? [];
    list.push({ id, score, scope: [job.Namespace, ...scope] });
    found.set(ctx, list);
  };
  const jobId = job.ID;
  // Go ranges over a map of contexts; this keeps a fixed order: the job, then its parts as met.
  for (const ctx of ["jobs", "groups", "services", "tasks", "images", "commands", "classes"]) found.set(ctx, []);
  add("jobs", nameOf(job), jobId);
  for (const group of names(job.TaskGroups)) {
    const groupName = nameOf(group);
    add("groups", groupName, jobId);
    for (const service of names(group.Services)) add("services", nameOf(service), jobId, groupName);
    for (const task of names(group.Tasks)) {
      const taskName = nameOf(task);
      add("tasks", taskName, jobId, groupName);
      for (const service of names(task.Services)) add("services", nameOf(service), jobId, groupName, taskName);
      const param = DRIVER_PARAMS[String(task.Driver)];
      if (param) {
        const config = task.Config as Json | null | undefined;
        const value = config?.[param[1]];
        add(param[0], typeof value === "string" ? value : "", jobId, groupName, taskName);
      }
    }
  }
  for (const [ctx, list] of found) if (list.length === 0) found.delete(ctx);
  return found;
}

/** sortSet: earliest position first, then the shorter name (in bytes), then byte order; ties keep scan order. */
function sortSet(matches: Scored[]): Scored[] {
  return matches
    .map((m) => ({ m, length: Buffer.byteLength(m.id, "utf8") }))
    .sort((a, b) => a.m.score - b.m.score || a.length - b.length || (a.m.id < b.m.id ? -1 : a.m.id > b.m.id ? 1 : 0))
    .map((x) => x.m);
}
