/**
 * What the control API reaches and how it is set up: the `ControlTarget`
 * (the emulator, seen only through this interface), the `ControlOptions`
 * (with the routes a layer above hands in: the dashboard) and the prefix
 * every control route sits under.
 */
import type * as v from "valibot";
import type { Clock } from "../core/clock.js";
import type { CappedLog, EmulatorEvent } from "../core/journal.js";
import type { RequestJournal } from "../core/request-journal.js";
import type { StateSnapshot } from "../core/snapshot.js";
import type { recordingSection as recordingBody } from "../scenario-files/schema.js";
import type { CoverageTracker } from "../http/coverage.js";
import type { DocumentedRoutes } from "../http/documented-routes.js";
import type { IdleSkipper } from "./idle-skip.js";
import type { Scenario } from "./scenario.js";

export const CONTROL_PREFIX = "/_standin";

/**
 * How the control API has a document applied: `turn` is awaited between
 * checking the document and applying it, so other requests are answered
 * (from the state before) in between instead of waiting for both.
 */
export interface DocumentOptions {
  readonly turn?: () => Promise<void>;
  /** The document is handed over (parsed for this request alone): the tape keeps it without a copy. */
  readonly adopt?: boolean;
  /** The document's size as sent (the body's bytes), charged to the tape instead of measuring it again. */
  readonly bytes?: number;
  /**
   * The document passed the emulator's own fixture check already (the precheck ran it off the event
   * loop, DOCUMENT_CHECKS): it is not run again. Only what a route handed over may say so.
   */
  readonly checked?: boolean;
}

export interface ControlTarget {
  readonly clock: Clock;
  readonly requests: RequestJournal;
  readonly events: CappedLog<EmulatorEvent>;
  readonly isReady: boolean;
  readonly seed: number;
  readonly index: number;
  stateHash(): string;
  /** The same hash, of the state when called, computed with `turn()` awaited between slices. */
  stateHashInTurns(turn: () => Promise<void>): Promise<string>;
  reset(fixture?: unknown, options?: DocumentOptions): Promise<void>;
  applyFixture(fixture: unknown, options?: DocumentOptions): Promise<void>;
  snapshot(): StateSnapshot;
  /** Validates, then restores; a bad document changes nothing. With `adopt`, the document is handed over (not copied). */
  restore(snapshot: unknown, options?: { adopt?: boolean }): void;
  /** restore() of a document handed over, with `turn()` awaited between checking and restoring it. */
  restoreDocument(snapshot: unknown, turn: () => Promise<void>): Promise<void>;
  /** Records a clock operation (advance, next, pause…) in the event journal. */
  noteClockOperation(operation: string, detail: unknown): void;
  /** Named actions, timelines and await. */
  readonly scenario: Scenario;
  /** Idle skipping's locks (`--clock auto`). */
  readonly idle: IdleSkipper;
  /** Runs a named action now (and puts it on the tape). */
  act(name: string, args: Record<string, unknown>): unknown;
  /** The tape since the last reset, to be written by core/json-stream. */
  exportTapeLazily(): Promise<unknown>;
  /** Whether the tape records (`--no-tape` turns it off). */
  readonly tapeEnabled: boolean;
  /** What the run records and how much. */
  recording(): unknown;
  setRecording(settings: v.InferOutput<typeof recordingBody>): unknown;
}

export interface ControlOptions {
  /** When set, every control request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Service control routes (documented), mounted at `/<name>`. */
  services?: ReadonlyArray<{ name: string; app: DocumentedRoutes }>;
  /** The run's route coverage, served at `/coverage`. */
  coverage?: CoverageTracker;
  /** The dashboard's routes, served at `/ui` (`--no-ui` leaves them out); the UI hands them in (ui/routes.ts). */
  ui?: MountedRoutes;
}

/**
 * Routes a layer above the control API hands in to be mounted among its
 * own (the dashboard), so that the control API imports nothing above it.
 */
export interface MountedRoutes {
  /** Paths (under the prefix) that answer GETs without the control token: files that hold no state. */
  readonly publicPaths: readonly string[];
  mount(routes: DocumentedRoutes): void;
  /** Stops what the routes hold (sessions, scratch emulators), when the emulator closes. */
  close(): void;
}
