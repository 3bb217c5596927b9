/**
 * Node pools (nomad/structs/node_pool.go, nomad/node_pool_endpoint.go,
 * nomad/state/state_store_node_pools.go): the built-in `all` and `default`
 * pools, which exist from the state's start at index 1 and can never change
 * (so they are constants here, not rows: a state without pools of its own
 * stays byte-identical to one from before pools were emulated); pools created
 * by the API, by a fixture, or on the fly when a node names one; and the
 * rules for writing and deleting them, with Nomad CE's texts.
 */
import { blake2b } from "../../core/blake2b.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { goQuote } from "../../core/go/strconv.js";
import type { Table } from "../../core/store.js";
import { CodedError } from "../engine/index.js";
import type { SchedulerState } from "../state/model.js";

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

/** nodePoolInit's pools, written at index 1 without a hash. */
const BUILT_IN: ReadonlyMap<string, NodePoolRow> = new Map(
  [
    { Name: NODE_POOL_ALL, Description: "Node pool with all nodes in the cluster.", Meta: null, SchedulerConfiguration: null, Hash: null, CreateIndex: 1, ModifyIndex: 1 },
    { Name: NODE_POOL_DEFAULT, Description: "Default node pool.", Meta: null, SchedulerConfiguration: null, Hash: null, CreateIndex: 1, ModifyIndex: 1 },
  ].map((p) => [p.Name, Object.freeze(p)]),
);

const VALID_NAME = /^[a-zA-Z0-9-_]{1,128}$/;
const MAX_DESCRIPTION = 256;

export const isBuiltInPool = (name: string) => name === NODE_POOL_ALL || name === NODE_POOL_DEFAULT;

/** The pool table, and the pool rules over the scheduler's state. */
export class NodePools {
  constructor(
    readonly table: Table<NodePoolRow>,
    private readonly state: SchedulerState,
  ) {}

  get(name: string): NodePoolRow | undefined {
    return BUILT_IN.get(name) ?? this.table.get(name);
  }

  /** Pools by name (the table's "id" index), built-ins included; with a prefix, only the names that start with it. */
  list(prefix: string): NodePoolRow[] {
    return [...BUILT_IN.values(), ...this.table.values()].sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0)).filter((p) => p.Name.startsWith(prefix));
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
    if (!this.get(name)) this.table.putIndexed(name, { Name: name, Description: "", Meta: null, SchedulerConfiguration: null, Hash: null });
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
    if (!this.get(name)) throw new CodedError(500, `node pool ${name} not found`);
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
