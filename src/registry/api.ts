/**
 * What the registry's route modules share: the state, the settings, ACL
 * resolution, the datacenter check and blocking reads with query meta.
 */
import { blockingTimeoutMs, runBlockingQuery, SPEC_BLOCKING_LIMITS } from "../core/blocking.js";
import type { ServiceContext } from "../core/context.js";
import { authorizerFor, type AclSettings, type Authorizer } from "./acl.js";
import { badRequest, serverError, WithMeta, WithMetaError, type QueryOptions, type RequestContext } from "./http.js";
import { NO_CLUSTER_LEADER, type LeaderView } from "../http/leader.js";

const LEADER_KNOWN: LeaderView = { known: true, lastContactMs: 0 };
import { DEFAULT_NAMESPACE, DEFAULT_PARTITION, WILDCARD_NAMESPACE, type RegistryState } from "./state.js";

/**
 * Which Consul the registry answers as. `community` (the default): Consul CE,
 * which refuses every namespace or partition with a 400 (reference §4.6).
 * `enterprise`: Consul Enterprise 1.11+ as far as sessions go — the session
 * endpoints take a namespace (`?ns=`, the namespace header, a create body's
 * `Namespace`) and keep sessions per namespace; every other route accepts a
 * namespace and ignores it (only sessions are namespaced here); the only
 * partition is `default`.
 */
export type RegistryEdition = "community" | "enterprise";

export interface RegistryConfig {
  [key: string]: unknown;
  datacenter: string;
  agentNode: string;
  defaultCheck: string;
  edition: RegistryEdition;
  acl: AclSettings;
}

export interface ReadResult<T> {
  value: T;
  /** ACL filtering removed something. */
  filtered?: boolean;
  /** The answer's own index (a KV entry's ModifyIndex, say); the tables' max index when absent. */
  index?: number;
}

export class RegistryApi {
  constructor(
    readonly ctx: ServiceContext,
    readonly state: RegistryState,
    readonly config: () => RegistryConfig,
    /** Whether the datacenter's servers know their leader (http/leader); always, when absent. */
    readonly leader: () => LeaderView = () => LEADER_KNOWN,
  ) {}

  authorize(rc: RequestContext): Authorizer {
    return authorizerFor(this.config().acl, rc.token);
  }

  enterprise(): boolean {
    return this.config().edition === "enterprise";
  }

  /**
   * The namespace a session request works in: undefined in the community
   * edition (after CE's 400s for any namespace or partition given), else the
   * namespace named (query over header), `default` when none is, or `*`
   * (every namespace) where `wildcard` allows it (list, node). Create,
   * destroy, info and renew parse with Consul's `parseEntMetaNoWildcard`.
   */
  sessionNamespace(rc: RequestContext, wildcard: boolean): string | undefined {
    if (!this.enterprise()) {
      rc.refuseEnterpriseMeta();
      return undefined;
    }
    const meta = rc.enterpriseMeta();
    requireKnownPartition(meta.partition);
    const namespace = meta.namespace ?? DEFAULT_NAMESPACE;
    // Consul Enterprise's text for a wildcard where the endpoint takes none, as its config-entry
    // endpoints answer it (hashicorp/consul PR #23008: "400 (Cannot use a wildcard namespace with
    // this endpoint)"); assumed, not seen, for the session endpoints.
    if (namespace === WILDCARD_NAMESPACE && !wildcard) throw badRequest("Cannot use a wildcard namespace with this endpoint");
    return namespace;
  }

  /**
   * The routes other than the session ones (KV, catalog, health): CE refuses
   * namespaces and partitions; the enterprise edition accepts a namespace and
   * ignores it (KV entries, nodes and checks are not namespaced here), and
   * accepts the default partition only.
   */
  acceptEnterpriseMeta(rc: RequestContext): void {
    if (!this.enterprise()) {
      rc.refuseEnterpriseMeta();
      return;
    }
    requireKnownPartition(rc.enterpriseMeta().partition);
  }

  /**
   * Writes, as the RPC layer forwards them: an unknown `?dc=` cannot be
   * forwarded anywhere, and a write needs the leader. `fixture`: a fixture's
   * write, which no leader election stops.
   */
  requireDatacenter(dc: string | undefined, fixture = false): void {
    if (dc !== undefined && dc !== this.config().datacenter) throw serverError("No path to datacenter");
    if (!fixture && !this.leader().known) throw serverError(NO_CLUSTER_LEADER);
  }

  /**
   * Reads: the same 500s, with the meta headers Consul's deferred setMeta
   * still adds; a `stale` read is served by any server, leader or not (the
   * default and `consistent` modes need the leader).
   */
  requireDatacenterForRead(options: Pick<QueryOptions, "dc" | "stale">): void {
    if (options.dc !== undefined && options.dc !== this.config().datacenter) throw new WithMetaError(500, "No path to datacenter", { index: 0, knownLeader: false });
    if (!options.stale && !this.leader().known) throw new WithMetaError(500, NO_CLUSTER_LEADER, { index: 0, knownLeader: false });
  }

  /**
   * A read with query meta, blocking when `?index=` asks: the index is the
   * max index of `tables` (never 0 on the wire).
   */
  async blockingRead<T>(
    rc: RequestContext,
    options: QueryOptions,
    tables: readonly string[],
    read: () => ReadResult<T>,
    keepWaiting?: (result: { index: number; value: T }) => boolean,
  ): Promise<WithMeta> {
    const indexOf = () => Math.max(...tables.map((t) => this.ctx.store.tableIndex(t)));
    let last: ReadResult<T> | undefined;
    const result = await runBlockingQuery<T>({
      watchers: this.ctx.watchers,
      clock: this.ctx.clock,
      tables,
      minIndex: options.index,
      timeoutMs: options.index > 0 ? blockingTimeoutMs(options.waitMs, SPEC_BLOCKING_LIMITS, this.ctx.ids) : 0,
      signal: () => rc.c.req.raw.signal,
      run: () => {
        // The read and its index together, so requests sharing it (RequestContext.shared) share both.
        const shared = rc.shared(() => {
          const result = read();
          return { read: result, index: result.index ?? indexOf() };
        });
        last = shared.read;
        return { index: shared.index, value: last.value };
      },
      keepWaiting,
    });
    // Consul only reveals ACL filtering to a caller that presented a token.
    const filtered = Boolean(last?.filtered) && this.authorize(rc).presented;
    const leader = this.leader();
    return new WithMeta(result.value, { index: result.index, knownLeader: leader.known, lastContactMs: leader.lastContactMs, filteredByACLs: filtered });
  }
}

/**
 * Only the `default` partition exists (empty names it too). UNVERIFIED: the
 * text and status Consul Enterprise gives for a partition that does not exist
 * were not found; this follows the form of its namespace errors, which come
 * back from the RPC layer as 500s (`Namespace "luke" does not exist`,
 * hashicorp/consul#8123; `Namespace "consul" does not exist in Partition
 * "default"`, hashicorp/consul-api-gateway#248).
 */
export function requireKnownPartition(partition: string | undefined): void {
  if (partition !== undefined && partition !== "" && partition.toLowerCase() !== DEFAULT_PARTITION) throw serverError(`Partition "${partition}" does not exist`);
}
