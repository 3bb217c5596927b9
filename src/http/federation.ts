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
import { scopedContext, scopeName } from "../core/scope.js";
import type { Table } from "../core/store.js";
import { ActionError, type ActionSpec, type ConditionSpec } from "./actions.js";
import type { DocumentedRoutes } from "./documented-routes.js";
import type { LeaderView } from "./leader.js";
import { runFault } from "./routing.js";
import { drain } from "./service.js";

/** What the federation needs of a member cluster. */
export interface MemberCluster<Section> {
  initialize(sections: readonly Section[]): void;
  initializeSteps(sections: readonly Section[]): Generator<void, void, undefined>;
  applyFixture(section: Section): void;
  fixtureSteps(section: Section): Generator<void, void, undefined>;
  leader(): LeaderView;
  setLeader(known: boolean): LeaderView;
}

export interface FederationOptions<C> {
  /** The service (names the scopes: `<service>@<member>`). */
  readonly service: string;
  /** What a member is called (`region`, `datacenter`): in errors and in the control API's documentation. */
  readonly noun: string;
  /** The agent's own cluster (unscoped) and its member name now. */
  readonly home: C;
  readonly homeName: () => string;
  /** Builds the cluster of another member on its scoped context. */
  readonly build: (ctx: ServiceContext, name: string) => C;
}

export class Federation<C extends MemberCluster<Section>, Section> {
  readonly home: C;
  private readonly built = new Map<string, C>();
  private readonly members: Table<{ Name: string }>;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly options: FederationOptions<C>,
  ) {
    this.home = options.home;
    this.members = ctx.store.table(`${options.service}.federation`);
    // A restored state may name members this process has not built yet: their timers need their handlers.
    ctx.store.onRestore(() => {
      for (const name of this.members.ids()) this.cluster(name);
    });
  }

  /** Every cluster, the home one first, then the others by name. */
  all(): C[] {
    return [this.home, ...[...this.members.ids()].sort().map((name) => this.cluster(name))];
  }

  /** Every member's name, the home one first. */
  names(): string[] {
    return [this.options.homeName(), ...[...this.members.ids()].sort()];
  }

  /** The cluster of a member name (the home one's included); undefined for a name that is none. */
  named(name: string): C | undefined {
    if (name === this.options.homeName()) return this.home;
    return this.members.has(name) ? this.cluster(name) : undefined;
  }

  /** The cluster a control request or a timeline step names (the home one without); the control API's 404 for an unknown one. */
  pick(name: string | undefined): C {
    if (!name) return this.home;
    const cluster = this.named(name);
    if (!cluster) throw new ActionError(404, `no ${this.options.noun} "${name}" (${this.options.noun}s: ${[...this.names()].sort().join(", ")})`);
    return cluster;
  }

  /**
   * Builds the state from the start fixtures: the home cluster from each
   * section without its members, then each member from the sections that
   * name it (`inherited` first: what a member takes from the home section).
   */
  initialize<Full>(sections: readonly Full[], parts: FixtureParts<Full, Section>): void {
    drain(this.initializeSteps(sections, parts));
  }

  /** initialize as steps (see ServiceInstance.initializeSteps), each member's too. */
  *initializeSteps<Full>(sections: readonly Full[], parts: FixtureParts<Full, Section>): Generator<void, void, undefined> {
    yield* this.home.initializeSteps(sections.map(parts.homePart));
    // A member named by several start sections is initialized once, at the first.
    const started = new Set<string>();
    const isNew = (name: string): boolean => {
      if (started.has(name)) return false;
      started.add(name);
      return true;
    };
    for (const section of sections) yield* this.memberSteps(section, parts, isNew);
  }

  /**
   * Adds a fixture section to the running state (new members start as at initialization), as
   * steps (see ServiceInstance.fixtureSteps), a new member's initialization among them.
   */
  *fixtureSteps<Full>(section: Full, parts: FixtureParts<Full, Section>): Generator<void, void, undefined> {
    yield* this.home.fixtureSteps(parts.homePart(section));
    yield* this.memberSteps(section, parts, (name) => !this.members.has(name));
  }

  private *memberSteps<Full>(section: Full, parts: FixtureParts<Full, Section>, isNew: (name: string) => boolean): Generator<void, void, undefined> {
    for (const [name, memberSection] of Object.entries(parts.members(section) ?? {})) {
      if (name === this.options.homeName()) {
        yield* this.home.fixtureSteps(memberSection);
        continue;
      }
      const fresh = isNew(name);
      if (!this.members.has(name)) this.members.put(name, { Name: name });
      const cluster = this.cluster(name);
      if (fresh) yield* cluster.initializeSteps([parts.inherited(section, name), parts.named(memberSection, name)]);
      else yield* cluster.fixtureSteps(parts.named(memberSection, name));
    }
  }

  /**
   * `GET`/`POST <prefix>/leader` on a service's control routes: the
   * leader-loss fault of the member that `?<query>=` names.
   */
  leaderRoutes(control: DocumentedRoutes, query: string, summary: string): void {
    const noun = this.options.noun;
    const spec = {
      query: memberQuery(query, noun),
      responses: {
        200: `\`{known, lastContactMs}\`: whether the ${noun} knows its leader, and the virtual milliseconds since it last did`,
        400: "bad body",
        404: `unknown ${noun}`,
      },
    };
    control.get("/leader", { summary: `whether the ${noun}'s servers know their leader`, ...spec }, (c) => runFault(c, () => this.pick(c.req.query(query)).leader()));
    control.post("/leader", { summary, body: v.strictObject({ known: v.boolean("known must be a boolean") }), ...spec }, (c, { body }) =>
      runFault(c, () => this.pick(c.req.query(query)).setLeader(body.known)),
    );
  }

  private cluster(name: string): C {
    let cluster = this.built.get(name);
    if (!cluster) {
      cluster = this.options.build(scopedContext(this.ctx, scopeName(this.options.service, name)), name);
      this.built.set(name, cluster);
    }
    return cluster;
  }
}

/** How a service's fixture section splits into the home cluster's part and its members' sections. */
export interface FixtureParts<Full, Section> {
  /** The section without its members. */
  homePart(section: Full): Section;
  /** The members' sections by name (`regions`, `datacenters`). */
  members(section: Full): Readonly<Record<string, Section>> | undefined;
  /** What a new member takes from the home section it is declared in. */
  inherited(section: Full, name: string): Section;
  /** A member's section with its own name set (`region`, `datacenter`). */
  named(section: Section, name: string): Section;
}

/** The control API's query schema naming a member (`?region=`, `?dc=`). */
export function memberQuery(query: string, noun: string) {
  return v.looseObject({ [query]: v.optional(v.pipe(v.string(), v.description(`the ${noun} (default: the agent's own)`))) });
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
