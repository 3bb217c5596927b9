/**
 * A service context confined to one scope of the state: another scheduler
 * region, another registry datacenter. The scope is a cluster of its own
 * (its own tables, index sequence, timers and parked queries) on the same
 * store, clock and generator, so one snapshot, one hash and one clock cover
 * every scope, and a service built on a scoped context runs unchanged.
 */
import type { IntervalHook, TimerHandler, TimerSpec } from "./clock.js";
import type { WatcherView } from "./blocking.js";
import type { ServiceClock, ServiceContext } from "./context.js";
import { SCOPE_SEPARATOR } from "./store.js";

/** The scope a service's region or datacenter lives in: `<service>@<name>`. */
export function scopeName(service: string, name: string): string {
  return `${service}@${name}`;
}

export function scopedContext(ctx: ServiceContext, scope: string): ServiceContext {
  const prefix = scope + SCOPE_SEPARATOR;
  return {
    ...ctx,
    store: ctx.store.scope(scope),
    clock: scopedClock(ctx.clock, prefix),
    watchers: scopedWatchers(ctx.watchers, prefix),
  };
}

/** Timer kinds carry the scope, so each scope's handlers fire its own timers. */
function scopedClock(clock: ServiceClock, prefix: string): ServiceClock {
  return {
    now: () => clock.now(),
    get wallTime() {
      return clock.wallTime;
    },
    schedule: (spec: TimerSpec) => clock.schedule({ ...spec, kind: prefix + spec.kind }),
    cancelFor: (kind: string, subject: string) => clock.cancelFor(prefix + kind, subject),
    timersFor: (kind: string, subject: string) => clock.timersFor(prefix + kind, subject),
    handle: (kind: string, handler: TimerHandler) => clock.handle(prefix + kind, handler),
    cancel: (id: number) => clock.cancel(id),
    scheduleEphemeral: (at: number, fire: () => void) => clock.scheduleEphemeral(at, fire),
    onRestore: (listener: () => void) => clock.onRestore(listener),
    every: (name: string, hook: IntervalHook) => clock.every(prefix + name, hook),
  } satisfies ServiceClock as ServiceClock;
}

function scopedWatchers(watchers: WatcherView, prefix: string): WatcherView {
  return {
    wait: (options) => watchers.wait({ ...options, tables: options.tables.map((t) => prefix + t) }),
    tablesIndex: (tables) => watchers.tablesIndex(tables.map((t) => prefix + t)),
  };
}
