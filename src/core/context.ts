/**
 * What every service is handed: the shared state machinery. Services reach
 * each other only through this state, never by importing one another.
 */
import type { Clock } from "./clock.js";
import type { Ids } from "./ids.js";
import type { StoreView } from "./store.js";
import type { WatcherView } from "./blocking.js";

export interface EventRecorder {
  /** Appends an internal event (virtual time and store index are stamped automatically). */
  record(type: string, fields?: { service?: string; subject?: string; detail?: unknown }): void;
}

/** What services use of the clock (a scope's view prefixes timer kinds: core/scope). */
export type ServiceClock = Pick<Clock, "now" | "wallTime" | "schedule" | "cancelFor" | "timersFor" | "handle" | "cancel" | "scheduleEphemeral" | "onRestore" | "every">;

export interface ServiceContext {
  readonly store: StoreView;
  readonly clock: ServiceClock;
  readonly ids: Ids;
  readonly watchers: WatcherView;
  readonly events: EventRecorder;
  /** Also send and accept the real products' header names (DESIGN.md §4). */
  readonly compatHeaders: boolean;
  /**
   * The ports serve HTTPS (transport, not state; absent: false). Only the
   * echo service reads it: its /openapi.json declares the https scheme then.
   */
  readonly tls?: boolean;
}
