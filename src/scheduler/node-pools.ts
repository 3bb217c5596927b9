/**
 * Node pools (nomad/structs/node_pool.go, nomad/node_pool_endpoint.go,
 * nomad/state/state_store_node_pools.go): the built-in `all` and `default`
 * pools, created with the state at index 1; pools created by the API, by a
 * fixture, or on the fly when a node names one; and the rules for writing and
 * deleting them, with Nomad CE's texts.
 */
import { blake2b } from "../core/blake2b.js";
import { formatMultierror } from "../core/go/multierror.js";
import { goQuote } from "../core/go/strconv.js";
import type { Table } from "../core/store.js";
import { CodedError } from "./engine/index.js";
import type { SchedulerState } from "./model.js";

export const NODE_POOLS_TABLE = "scheduler.node-pools";

export const NODE_POOL_ALL = "all";
export const NODE_POOL_DEFAULT = "default";

/** structs.NodePool; the encoder sorts its keys. `Hash` is base64 of BLAKE2b-256, or null where Nomad never set it. */
export type NodePoolRow = {
  Name: string;
  Description: string;
  Meta: Record<string, string> | null;
  SchedulerConfiguration: Record<string, unknown> | null;
  Hash: string | null;
  CreateIndex: number;
  ModifyIndex: number;
};

const BUILT_IN: ReadonlyArray<Omit<NodePoolRow, "CreateIndex" | "ModifyIndex">> = [
  { Name: NODE_POOL_ALL, Description: "Node pool with all nodes in the cluster.", Meta: null, SchedulerConfiguration: null, Hash: null },
  { Name: NODE_POOL_DEFAULT, Description: "Default node pool.", Meta: null, SchedulerConfiguration: null, Hash: null },
];

const VALID_NAME = /^[a-zA-Z0-9-_]{1,128}$/;
const MAX_DESCRIPTION = 256;

export const isBuiltInPool = (name: string) => name === NODE_POOL_ALL || name === NODE_POOL_DEFAULT;

/** The pool table, and the pool rules over the scheduler's state. */
export class NodePools {
  constructor(
    readonly table: Table<NodePoolRow>,
    private readonly state: SchedulerState,
  ) {}

  /** nodePoolInit: the built-ins exist from the start at index 1 (put outside any write's index, as Nomad's state init is). */
  ensureBuiltIns(): void {
    for (const pool of BUILT_IN) if (!this.table.get(pool.Name)) this.table.put(pool.Name, { ...pool, CreateIndex: 1, ModifyIndex: 1 });
  }

  get(name: string): NodePoolRow | undefined {
    return this.table.get(name);
  }

  /** Pools by name (the table's "id" index); with a prefix, only the names that start with it. */
  list(prefix: string): NodePoolRow[] {
    return this.table.sorted().filter((p) => p.Name.startsWith(prefix));
  }

  /**
   * NodePool.UpsertNodePools after its ACL check: CE refuses a scheduler
   * configuration (an Enterprise feature) before validating, then Validate
   * (every problem as one multierror 400), then the built-ins.
   */
  upsert(pool: { Name: string; Description: string; Meta: Record<string, string> | null; SchedulerConfiguration: Record<string, unknown> | null }): NodePoolRow {
    if (pool.SchedulerConfiguration !== null) throw new CodedError(500, 'Feature "Node Pools Governance" is unlicensed');
    const problems = validate(pool);
    if (problems.length > 0) throw new CodedError(400, `invalid node pool ${goQuote(pool.Name)}: ${formatMultierror(problems)}`);
    if (isBuiltInPool(pool.Name)) throw new CodedError(400, `modifying node pool ${goQuote(pool.Name)} is not allowed`);
    return this.put(pool);
  }

  /** Stores a pool as given (a fixture's pool may carry a scheduler configuration: it is the cluster's state, not a CE request). */
  put(pool: { Name: string; Description: string; Meta: Record<string, string> | null; SchedulerConfiguration: Record<string, unknown> | null }): NodePoolRow {
    return this.table.putIndexed(pool.Name, { ...pool, Hash: poolHash(pool) });
  }

  /** fetchOrCreateNodePoolTxn: a node naming a pool that does not exist creates it, bare (no hash: SetHash is never called there). */
  ensure(name: string): void {
    if (!this.table.get(name)) this.table.putIndexed(name, { Name: name, Description: "", Meta: null, SchedulerConfiguration: null, Hash: null });
  }

  /**
   * NodePool.DeleteNodePools: first whether the pool is in use (non-terminal
   * jobs, then nodes: one multierror, 500), then the state store's checks
   * (missing, built-in: plain 500s).
   */
  delete(name: string, region: string): void {
    if (name === "") throw new CodedError(400, "node pool name is empty");
    const problems: string[] = [];
    if ([...this.state.jobs.values()].some((j) => j.NodePool === name && j.Status !== "dead"))
      problems.push(`node pool ${goQuote(name)} has non-terminal jobs in regions: [${region}]`);
    if ([...this.state.nodes.values()].some((n) => n.NodePool === name)) problems.push(`node pool ${goQuote(name)} has nodes in regions: [${region}]`);
    if (problems.length > 0) throw new CodedError(500, formatMultierror(problems));
    if (!this.table.get(name)) throw new CodedError(500, `node pool ${name} not found`);
    if (isBuiltInPool(name)) throw new CodedError(500, `deleting node pool ${goQuote(name)} is not allowed`);
    this.table.delete(name);
  }
}

/** NodePool.Validate (CE): the name, the description's length. */
function validate(pool: { Name: string; Description: string }): string[] {
  const problems: string[] = [];
  if (!VALID_NAME.test(pool.Name)) problems.push(`invalid name ${goQuote(pool.Name)}, must match regex ^[a-zA-Z0-9-_]{1,128}$`);
  // Go's len counts bytes.
  if (Buffer.byteLength(pool.Description, "utf8") > MAX_DESCRIPTION) problems.push(`description longer than ${MAX_DESCRIPTION}`);
  return problems;
}

/** NodePool.SetHash: BLAKE2b-256 over the name, the description, the scheduler configuration and the meta in key order. */
function poolHash(pool: { Name: string; Description: string; Meta: Record<string, string> | null; SchedulerConfiguration: Record<string, unknown> | null }): string {
  const parts: string[] = [pool.Name, pool.Description];
  const config = pool.SchedulerConfiguration;
  if (config) {
    parts.push(typeof config.SchedulerAlgorithm === "string" ? config.SchedulerAlgorithm : "");
    const oversubscription = config.MemoryOversubscriptionEnabled;
    if (typeof oversubscription === "boolean") parts.push(oversubscription ? "memory_oversubscription_enabled" : "memory_oversubscription_disabled");
  }
  const meta = pool.Meta ?? {};
  for (const key of Object.keys(meta).sort()) parts.push(key, meta[key]!);
  return Buffer.from(blake2b(Buffer.from(parts.join(""), "utf8"), 32)).toString("base64");
}
