/**
 * Several clusters of one service behind one port: the scheduler's regions,
 * the registry's datacenters. Each member cluster is built on its own scope
 * of the state (core/scope), so it keeps its own index sequence, timers and
 * parked queries, while one snapshot, hash and clock cover them all.
 *
 * Membership is state (a table of names), so reset, restore and snapshot
 * bring the right clusters back; the cluster objects themselves are built
 * once per name and kept (their state is all in the store).
 */
import type { ServiceContext } from "../core/context.js";
import { scopedContext, scopeName } from "../core/scope.js";
import type { Table } from "../core/store.js";

export class Federation<C> {
  private readonly built = new Map<string, C>();
  private readonly members: Table<{ Name: string }>;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly service: string,
    private readonly build: (ctx: ServiceContext, name: string) => C,
  ) {
    this.members = ctx.store.table(`${service}.federation`);
    // A restored state may name members this process has not built yet: their timers need their handlers.
    ctx.store.onRestore(() => {
      for (const name of this.members.ids()) this.cluster(name);
    });
  }

  /** Member names, sorted. */
  names(): string[] {
    return [...this.members.ids()].sort();
  }

  /** A member's cluster; undefined for a name that is not a member. */
  get(name: string): C | undefined {
    return this.members.has(name) ? this.cluster(name) : undefined;
  }

  /** Makes `name` a member (inside a store write) and returns its cluster. */
  join(name: string): C {
    if (!this.members.has(name)) this.members.put(name, { Name: name });
    return this.cluster(name);
  }

  private cluster(name: string): C {
    let cluster = this.built.get(name);
    if (!cluster) {
      cluster = this.build(scopedContext(this.ctx, scopeName(this.service, name)), name);
      this.built.set(name, cluster);
    }
    return cluster;
  }
}
