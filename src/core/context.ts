/**
 * What every service is handed: the shared state machinery. Services reach
 * each other only through this state, never by importing one another.
 */
import type { Clock } from "./clock.js";
import type { Ids } from "./ids.js";
import type { Store } from "./store.js";
import type { Watchers } from "./blocking.js";

export interface EventRecorder {
  /** Appends an internal event (virtual time and store index are stamped automatically). */
  record(type: string, fields?: { service?: string; subject?: string; detail?: unknown }): void;
}

export interface ServiceContext {
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly watchers: Watchers;
  readonly events: EventRecorder;
  /** Also send and accept the real products' header names (DESIGN.md §4). */
  readonly compatHeaders: boolean;
}
