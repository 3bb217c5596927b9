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
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import type { ActionSpec, ConditionSpec } from "./actions.js";
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

/**
 * The home cluster's actions or conditions, each taking one more optional
 * argument (`member`: `region`, `dc`) that runs it in that member's cluster
 * instead: `{"at": "30s", "do": "node-down", "node": "w1", "region": "west"}`.
 * `tableOf` throws the control API's 404 for an unknown member.
 */
export function federated<Spec extends ActionSpec<never> | ConditionSpec<never>>(
  home: Readonly<Record<string, Spec>>,
  member: string,
  tableOf: (name: string | undefined) => Readonly<Record<string, ActionSpec<never> | ConditionSpec<never>>>,
): Readonly<Record<string, Spec>> {
  const out: Record<string, Spec> = {};
  for (const [name, spec] of Object.entries(home)) {
    const entries = (spec.args as unknown as { entries?: v.ObjectEntries }).entries;
    if (!entries) {
      out[name] = spec; // not an object schema: nothing to add an argument to
      continue;
    }
    const args = v.strictObject({ ...entries, [member]: v.optional(v.pipe(v.string(), v.nonEmpty())) });
    /** The same spec in the named member's cluster, and the arguments without the member's name. */
    const target = (all: Record<string, unknown>) => {
      const { [member]: named, ...rest } = all;
      return { spec: tableOf(named as string | undefined)[name] as unknown as { run?(a: unknown): unknown; check?(a: unknown): unknown }, rest };
    };
    const wrapped =
      "run" in spec
        ? {
            run: (all: Record<string, unknown>) => {
              const { spec: inner, rest } = target(all);
              return inner.run!(rest);
            },
          }
        : {
            check: (all: Record<string, unknown>) => {
              const { spec: inner, rest } = target(all);
              return inner.check!(rest);
            },
          };
    out[name] = { ...spec, args, ...wrapped } as unknown as Spec;
  }
  return out;
}
