/**
 * What the registry's route modules share: the state, the settings, ACL
 * resolution, the datacenter check and blocking reads with query meta.
 */
import { blockingTimeoutMs, runBlockingQuery, SPEC_BLOCKING_LIMITS } from "../core/blocking.js";
import type { ServiceContext } from "../core/context.js";
import { authorizerFor, type AclSettings, type Authorizer } from "./acl.js";
import { serverError, WithMeta, WithMetaError, type QueryOptions, type RequestContext } from "./http.js";
import type { RegistryState } from "./state.js";

export interface RegistryConfig {
  [key: string]: unknown;
  datacenter: string;
  agentNode: string;
  defaultCheck: string;
  acl: AclSettings;
}

export interface ReadResult<T> {
  value: T;
  /** ACL filtering removed something. */
  filtered?: boolean;
}

export class RegistryApi {
  constructor(
    readonly ctx: ServiceContext,
    readonly state: RegistryState,
    readonly config: () => RegistryConfig,
  ) {}

  authorize(rc: RequestContext): Authorizer {
    return authorizerFor(this.config().acl, rc.token);
  }

  /** Writes: an unknown `?dc=` cannot be forwarded anywhere. */
  requireDatacenter(dc: string | undefined): void {
    if (dc !== undefined && dc !== this.config().datacenter) throw serverError("No path to datacenter");
  }

  /** Reads: the same 500, with the meta headers Consul's deferred setMeta still adds. */
  requireDatacenterForRead(dc: string | undefined): void {
    if (dc !== undefined && dc !== this.config().datacenter) throw new WithMetaError(500, "No path to datacenter", { index: 0, knownLeader: false });
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
        const shared = rc.shared(() => ({ read: read(), index: indexOf() }));
        last = shared.read;
        return { index: shared.index, value: last.value };
      },
      keepWaiting,
    });
    // Consul only reveals ACL filtering to a caller that presented a token.
    const filtered = Boolean(last?.filtered) && this.authorize(rc).presented;
    return new WithMeta(result.value, { index: result.index, knownLeader: true, filteredByACLs: filtered });
  }
}
