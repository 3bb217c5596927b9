/**
 * What Nomad's search iterators yield for each context, in memdb's order and
 * with their filters (nomad/search_endpoint.go getResourceIter,
 * getFuzzyResourceIterator, nsCapFilter, nodePoolCapFilter; the state
 * store's *ByIDPrefix functions). Nomad reads at most a few objects past its
 * limit from each iterator, so a scan keeps only the first `limit` in order
 * (one pass, no sort of the whole table).
 *
 * Contexts standin does not model (CSI plugins and volumes, scaling
 * policies) scan nothing.
 */
import type { ServiceContext } from "../../core/context.js";
import type { Authorizer } from "../http/authorizer.js";
import { TABLES, type AllocRow, type JobRow, type NodeRow, type SchedulerState } from "../state/model.js";
import { NODE_POOLS_TABLE, NodePools, type NodePoolRow } from "../nodes/node-pools.js";
import type { Table } from "../../core/store.js";
import { VARIABLES_TABLE, type VariableRow } from "../variables/variables.js";
import { allowNamespaceAny, allowNsOp, startsWithBytes, uuidPrefix } from "./contexts.js";

/** One object a search iterator yields. */
export type Scanned =
  | { kind: "jobs"; row: JobRow }
  | { kind: "allocs"; row: AllocRow }
  | { kind: "evals" | "deployment"; id: string }
  | { kind: "nodes"; row: NodeRow }
  | { kind: "node_pools"; row: NodePoolRow }
  | { kind: "vars"; row: VariableRow }
  | { kind: "namespaces"; name: string };

/** The name a prefix search matches and answers: an ID, a name, or a variable's path. */
export function prefixIdOf(item: Scanned): string {
  switch (item.kind) {
    case "jobs":
    case "allocs":
    case "nodes":
      return item.row.ID;
    case "evals":
    case "deployment":
      return item.id;
    case "node_pools":
      return item.row.Name;
    case "vars":
      return item.row.Path;
    case "namespaces":
      return item.name;
  }
}

/** The first `limit` of `rows` that `keep` passes, by `key` (byte order, as memdb's radix tree). */
export function firstByKey<T>(rows: Iterable<T>, key: (row: T) => string, keep: (row: T) => boolean, limit: number): T[] {
  const kept: Array<{ key: string; row: T }> = [];
  for (const row of rows) {
    if (!keep(row)) continue;
    const k = key(row);
    if (kept.length === limit && k >= kept[limit - 1]!.key) continue;
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid]!.key < k) lo = mid + 1;
      else hi = mid;
    }
    kept.splice(lo, 0, { key: k, row });
    if (kept.length > limit) kept.pop();
  }
  return kept.map((entry) => entry.row);
}

/** Hex digits laid out as the start of a canonical UUID: a hyphen before the 9th, 13th, 17th and 21st digit. */
function hyphenatedLikeUuid(digits: string): string {
  let out = "";
  for (let i = 0; i < digits.length; i++) out += (i === 8 || i === 12 || i === 16 || i === 20 ? "-" : "") + digits[i];
  return out;
}

const inNamespace = (namespace: string) => (row: { Namespace: string }) => namespace === "*" || row.Namespace === namespace;
const NUL = "\u0000";

export class SearchScan {
  private readonly pools: NodePools;
  private readonly variableRows: Table<VariableRow>;

  constructor(
    private readonly state: SchedulerState,
    ctx: ServiceContext,
  ) {
    this.pools = new NodePools(ctx.store.table(NODE_POOLS_TABLE), state);
    this.variableRows = ctx.store.table<VariableRow>(VARIABLES_TABLE);
  }

  /** The table index each context reports (contextToIndex); the unmodelled ones have none. */
  indexOf(context: string): number {
    const table = CONTEXT_TABLES[context];
    return table === undefined ? 0 : this.state.index(table);
  }

  /**
   * getResourceIter: the first `limit` objects of the context whose ID starts
   * with `prefix` (already rounded); undefined where Nomad's UUID index
   * refuses the prefix (the context is then left out of the answer).
   */
  byPrefix(context: string, acl: Authorizer, namespace: string, prefix: Buffer, limit: number): Scanned[] | undefined {
    const idMatches = (id: string) => startsWithBytes(id, prefix);
    const inAsked = inNamespace(namespace);
    const uuid = (): ((id: string) => boolean) | undefined => {
      const digits = uuidPrefix(prefix);
      if (digits === undefined) return undefined;
      // Stored IDs are canonical UUIDs (8-4-4-4-12): the digits, hyphenated the same way, are a plain string prefix.
      const hyphenated = hyphenatedLikeUuid(digits);
      return (id) => id.startsWith(hyphenated);
    };
    switch (context) {
      case "jobs": {
        // One namespace: the (namespace, ID) index's prefix; `*`: every job, filtered by ID, with no ACL filter.
        const rows = firstByKey(this.state.jobs.values(), namespace === "*" ? (j) => `${j.Namespace}${NUL}${j.ID}` : (j) => j.ID, (j) => inAsked(j) && idMatches(j.ID), limit);
        return rows.map((row) => ({ kind: "jobs", row }));
      }
      case "allocs":
      case "evals":
      case "deployment":
      case "nodes": {
        const matches = uuid();
        if (!matches) return undefined;
        if (context === "nodes")
          return firstByKey(
            this.state.nodes.values(),
            (n) => n.ID,
            (n) => matches(n.ID),
            limit,
          ).map((row) => ({ kind: "nodes", row }));
        if (context === "allocs")
          return firstByKey(
            this.state.allocs.values(),
            (a) => a.ID,
            (a) => inAsked(a) && matches(a.ID),
            limit,
          ).map((row) => ({ kind: "allocs", row }));
        const table = context === "evals" ? this.state.evals : this.state.deployments;
        return firstByKey<{ ID: string; Namespace: string }>(
          table.values(),
          (r) => r.ID,
          (r) => inAsked(r) && matches(r.ID),
          limit,
        ).map((r) => ({
          kind: context,
          id: r.ID,
        }));
      }
      case "node_pools":
        return firstByKey(
          this.pools.list(""),
          (p) => p.Name,
          (p) => idMatches(p.Name) && (acl.management || acl.allowNodePool(p.Name, "read")),
          limit,
        ).map((row) => ({
          kind: "node_pools",
          row,
        }));
      case "vars":
        // The `path` index, across every namespace whatever the request's, each variable's namespace checked.
        return firstByKey(
          this.variables(),
          (v) => `${v.Path}${NUL}${v.Namespace}${NUL}${v.Path}`,
          (v) => idMatches(v.Path) && acl.allowVariableSearch(v.Namespace),
          limit,
        ).map((row) => ({ kind: "vars", row }));
      case "namespaces":
        return firstByKey(
          this.namespaceNames(),
          (n) => n,
          (n) => idMatches(n) && allowNamespaceAny(acl, n),
          limit,
        ).map((name) => ({ kind: "namespaces", name }));
      default:
        // plugins, volumes, scaling_policy: not modelled, nothing to find.
        return [];
    }
  }

  /** getFuzzyResourceIterator: the first `limit` objects of a fuzzy-searched context, `*` filtered per object by the token. */
  fuzzy(context: string, acl: Authorizer, namespace: string, limit: number): Scanned[] {
    const all = namespace === "*";
    switch (context) {
      case "jobs":
        return firstByKey(
          this.state.jobs.values(),
          (j) => `${j.Namespace}${NUL}${j.ID}`,
          (j) => (all ? allowNsOp(acl, j.Namespace, "read-job") : j.Namespace === namespace),
          limit,
        ).map((row) => ({ kind: "jobs", row }));
      case "allocs":
        return firstByKey(
          this.state.allocs.values(),
          (a) => a.ID,
          (a) => (all ? allowNsOp(acl, a.Namespace, "read-job") : a.Namespace === namespace),
          limit,
        ).map((row) => ({
          kind: "allocs",
          row,
        }));
      case "vars":
        return firstByKey(
          this.variables(),
          (v) => `${v.Namespace}${NUL}${v.Path}`,
          (v) => (all ? acl.allowVariableSearch(v.Namespace) : v.Namespace === namespace),
          limit,
        ).map((row) => ({ kind: "vars", row }));
      case "nodes":
        return firstByKey(
          this.state.nodes.values(),
          (n) => n.ID,
          () => !all || acl.allow("node", "read"),
          limit,
        ).map((row) => ({ kind: "nodes", row }));
      case "node_pools":
        return firstByKey(
          this.pools.list(""),
          (p) => p.Name,
          (p) => acl.management || acl.allowNodePool(p.Name, "read"),
          limit,
        ).map((row) => ({ kind: "node_pools", row }));
      case "namespaces":
        return firstByKey(
          this.namespaceNames(),
          (n) => n,
          (n) => allowNamespaceAny(acl, n),
          limit,
        ).map((name) => ({ kind: "namespaces", name }));
      default:
        return []; // plugins: not modelled
    }
  }

  private variables(): Iterable<VariableRow> {
    return this.variableRows.values();
  }

  private namespaceNames(): string[] {
    return [...this.state.namespaces.values()].map((n) => n.Name);
  }
}

/** contextToIndex, onto standin's tables (CSI plugins and volumes and scaling policies are not modelled). */
const CONTEXT_TABLES: Record<string, string> = {
  allocs: TABLES.allocs,
  jobs: TABLES.jobs,
  nodes: TABLES.nodes,
  node_pools: NODE_POOLS_TABLE,
  evals: TABLES.evals,
  deployment: TABLES.deployments,
  vars: VARIABLES_TABLE,
  namespaces: TABLES.namespaces,
};
