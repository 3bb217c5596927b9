/**
 * Scenarios on the virtual clock: the services' named actions (run now, or
 * scheduled by a fixture's `timeline`) and conditions (`await`: advance the
 * clock timer by timer until they hold).
 *
 * A timeline step is a persistent timer (kind `standin.timeline`), so it is
 * part of the state: snapshots, restore, reset and the hash cover it, and it
 * fires in virtual-time order with everything else. A step that fails at its
 * instant (say the allocation it names is gone) is journalled as
 * `timeline.failed` and changes nothing; the clock goes on.
 */
import * as v from "valibot";
import type { Clock, FiredTimer, TimerRecord } from "../core/clock.js";
import { parseDurationMs } from "../core/durations.js";
import type { Ids } from "../core/ids.js";
import type { Store } from "../core/store.js";
import { FixtureError } from "../scenario-files/load.js";
import { ActionError, parseArgs, type ActionSpec, type ConditionResult, type ConditionSpec } from "../http/actions.js";

export const TIMELINE_TIMER = "standin.timeline";
/** Await's default limit on virtual time. */
export const DEFAULT_AWAIT_WITHIN = "10m";

export interface ScenarioHost {
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: Ids;
  record(type: string, fields: { service?: string; subject?: string; detail?: unknown }): void;
}

export interface ScenarioService {
  readonly name: string;
  readonly actions?: Readonly<Record<string, ActionSpec<never>>>;
  readonly conditions?: Readonly<Record<string, ConditionSpec<never>>>;
}

/** A fixture's timeline step: `at` (Go duration after the fixture is applied), `do` (an action), and the action's arguments. */
export interface TimelineStep {
  readonly at: string;
  readonly do: string;
  readonly [arg: string]: unknown;
}

export interface ActionOutcome {
  readonly do: string;
  readonly service: string;
  readonly result: unknown;
  readonly index: number;
}

export interface AwaitOutcome {
  readonly met: boolean;
  readonly now: number;
  /** Virtual ms the await moved the clock. */
  readonly waitedMs: number;
  readonly fired: FiredTimer[];
  /** Per condition, what it saw last. */
  readonly observed: Record<string, unknown>;
}

type Entry<Spec> = { service: string; spec: Spec };
type TimerData = { do: string; args: Record<string, unknown>; step: string };

/** Conditions every emulator has, whatever its services. */
const BUILT_IN_CONDITIONS = new Set(["index"]);
const indexCondition = v.strictObject({ above: v.pipe(v.number(), v.integer(), v.minValue(0)) });

export class Scenario {
  private readonly actions = new Map<string, Entry<ActionSpec<never>>>();
  private readonly conditions = new Map<string, Entry<ConditionSpec<never>>>();

  constructor(
    private readonly host: ScenarioHost,
    services: readonly ScenarioService[],
  ) {
    for (const service of services) {
      for (const [name, spec] of Object.entries(service.actions ?? {})) {
        if (this.actions.has(name)) throw new Error(`action "${name}" is offered by two services`);
        this.actions.set(name, { service: service.name, spec });
      }
      for (const [name, spec] of Object.entries(service.conditions ?? {})) {
        if (this.conditions.has(name) || BUILT_IN_CONDITIONS.has(name)) throw new Error(`condition "${name}" is offered twice`);
        this.conditions.set(name, { service: service.name, spec });
      }
    }
    host.clock.handle(TIMELINE_TIMER, (timer) => this.fireStep(timer));
  }

  /** Every action, for `GET /_standin/actions` and the docs. */
  describeActions(): Array<{ name: string; service: string; summary: string }> {
    return [...this.actions].map(([name, { service, spec }]) => ({ name, service, summary: spec.summary })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  describeConditions(): Array<{ name: string; service: string; summary: string }> {
    const own = [...this.conditions].map(([name, { service, spec }]) => ({ name, service, summary: spec.summary }));
    return [...own, { name: "index", service: "standin", summary: 'the global index is above a number ({"above": N})' }].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** Runs an action now, in one store write; a failure changes nothing (the generator's draws included). */
  run(name: string, rawArgs: unknown, where = "action"): ActionOutcome {
    const { service, spec, args } = this.resolve(name, rawArgs, where);
    const rng = this.host.ids.state();
    try {
      const result = this.host.store.write(() => spec.run(args as never) ?? null);
      this.host.record("action.run", { service, subject: name, detail: { args } });
      return { do: name, service, result, index: this.host.store.index };
    } catch (error) {
      this.host.ids.restore(rng);
      throw error;
    }
  }

  /**
   * Schedules a fixture's timeline `baseMs` onwards. Every step is checked
   * first (a known action, valid arguments, a valid `at`), so a bad timeline
   * schedules nothing.
   */
  scheduleTimeline(steps: readonly TimelineStep[], baseMs: number, where: string): void {
    const problems: string[] = [];
    const planned: Array<{ at: number; data: TimerData }> = [];
    steps.forEach((step, i) => {
      const path = `${where}.timeline[${i}]`;
      const { at, do: name, ...rawArgs } = step;
      let offset: number;
      try {
        offset = parseDurationMs(String(at));
        if (offset < 0) throw new Error(`a step cannot be in the past (${String(at)})`);
      } catch (error) {
        problems.push(`${path}.at: ${(error as Error).message}`);
        return;
      }
      try {
        const { args } = this.resolve(String(name), rawArgs, path);
        planned.push({ at: baseMs + offset, data: { do: String(name), args, step: path } });
      } catch (error) {
        problems.push((error as Error).message);
      }
    });
    if (problems.length > 0) throw new FixtureError(where, problems);
    for (const { at, data } of planned) this.host.clock.schedule({ at, kind: TIMELINE_TIMER, subject: data.step, data });
  }

  /** Whether every condition of `until` holds now. */
  check(until: unknown): { met: boolean; observed: Record<string, unknown> } {
    const parsed = this.parseUntil(until);
    let met = true;
    const observed: Record<string, unknown> = {};
    for (const { name, run } of parsed) {
      const result = run();
      observed[name] = result.observed;
      met &&= result.met;
    }
    return { met, observed };
  }

  /**
   * Moves the clock timer by timer (each jump fires everything due at that
   * instant) until `until` holds or `within` of virtual time has passed. The
   * conditions are checked before the first jump, after each, and at the limit.
   * Between jumps it yields to the event loop, so parked requests woken by a
   * jump answer in order.
   */
  async awaitUntil(until: unknown, within: string = DEFAULT_AWAIT_WITHIN): Promise<AwaitOutcome> {
    const conditions = this.parseUntil(until);
    const { clock } = this.host;
    if (clock.status().mode === "realtime") throw new ActionError(409, "await moves the clock itself: it needs the manual or auto clock, not realtime");
    const span = parseDurationMs(within);
    const start = clock.now();
    const deadline = start + span;
    const fired: FiredTimer[] = [];
    const evaluate = () => {
      let met = true;
      const observed: Record<string, unknown> = {};
      for (const { name, run } of conditions) {
        const result = run();
        observed[name] = result.observed;
        met &&= result.met;
      }
      return { met, observed };
    };
    const outcome = (state: { met: boolean; observed: Record<string, unknown> }): AwaitOutcome => ({ ...state, now: clock.now(), waitedMs: clock.now() - start, fired });
    for (;;) {
      const state = evaluate();
      if (state.met) return outcome(state);
      const next = clock.status().nextTimerAt;
      if (next === null || next > deadline) {
        if (clock.now() < deadline) fired.push(...clock.advanceTo(deadline));
        return outcome(evaluate());
      }
      fired.push(...clock.next());
      await yieldToEventLoop();
    }
  }

  private resolve(name: string, rawArgs: unknown, where: string): { service: string; spec: ActionSpec<never>; args: Record<string, unknown> } {
    const entry = this.actions.get(name);
    if (!entry) throw new ActionError(404, `${where}: unknown action "${name}" (actions: ${[...this.actions.keys()].sort().join(", ")})`);
    return { service: entry.service, spec: entry.spec, args: parseArgs(entry.spec.args, rawArgs ?? {}, `${where} (${name})`) };
  }

  private parseUntil(until: unknown): Array<{ name: string; run: () => ConditionResult }> {
    if (until === null || typeof until !== "object" || Array.isArray(until) || Object.keys(until).length === 0) {
      throw new ActionError(
        400,
        `until: give one or more conditions, e.g. {"deployment": {"job": "web", "status": "successful"}} (conditions: ${this.describeConditions()
          .map((c) => c.name)
          .join(", ")})`,
      );
    }
    return Object.entries(until as Record<string, unknown>).map(([name, raw]) => {
      if (name === "index") {
        const args = parseArgs(indexCondition, raw, "until.index") as { above: number };
        return { name, run: () => ({ met: this.host.store.index > args.above, observed: { index: this.host.store.index } }) };
      }
      const entry = this.conditions.get(name);
      if (!entry)
        throw new ActionError(
          400,
          `until: unknown condition "${name}" (conditions: ${this.describeConditions()
            .map((c) => c.name)
            .join(", ")})`,
        );
      const args = parseArgs(entry.spec.args, raw ?? {}, `until.${name}`);
      return { name, run: () => entry.spec.check(args as never) };
    });
  }

  private fireStep(timer: TimerRecord): unknown {
    const data = timer.data as TimerData;
    try {
      const outcome = this.run(data.do, data.args, data.step);
      return { step: data.step, do: data.do, result: outcome.result };
    } catch (error) {
      // A step that no longer applies is reported, not thrown: the advance that fired it goes on.
      const message = (error as Error).message;
      this.host.record("timeline.failed", { subject: data.step, detail: { do: data.do, error: message } });
      return { step: data.step, do: data.do, error: message };
    }
  }
}

/** One macrotask turn: lets requests woken by a clock jump write their answers before the next jump. */
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
