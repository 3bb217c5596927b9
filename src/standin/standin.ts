/**
 * One emulator: one state (store, clock, generator) shared by the three
 * services, its recording (journals, tape), and one Hono app per service
 * port. The control API (and the dashboard) are built by the layer above
 * (with-control.ts, ../emulator.ts) and handed in through `AttachControl`:
 * this file imports neither. No sockets here:
 * `emu.scheduler.request("/v1/...")` works in process; server.ts puts the
 * same apps on ports.
 */
import { Hono, type Context } from "hono";
import { Watchers } from "../core/blocking.js";
import { Clock, wallNow, type ClockMode, type WallTime } from "../core/clock.js";
import type { EventRecorder, ServiceContext } from "../core/context.js";
import { Ids } from "../core/ids.js";
import { parseInstant } from "../core/instant.js";
import { CappedLog, type EmulatorEvent } from "../core/journal.js";
import { RequestJournal } from "../core/request-journal.js";
import { captureState, hashState, SNAPSHOT_FORMAT, hashStateInTurns, parseSnapshot, restoreState, SnapshotError, type StateSnapshot } from "../core/snapshot.js";
import { STAGED_SLICE_STEPS, Store } from "../core/store.js";
import { CONTROL_PREFIX, type DocumentOptions } from "../control/target.js";
import { IdleSkipper } from "../control/idle-skip.js";
import { DocumentGate } from "./document-gate.js";
import { parseAdoptedSnapshot } from "./adopted-snapshot.js";
import { DEFAULT_TAPE_BYTES, TapeRecorder, type Tape } from "../control/tape.js";
import { Scenario, type ActionOutcome, type AwaitOutcome, type TimelineStep } from "../control/scenario.js";
import { createEchoService } from "../echo/index.js";
import { FixtureError, loadFixtureFile, validateFixtureDocument } from "../scenario-files/load.js";
import type { Fixture } from "../scenario-files/schema.js";
import { CoverageTracker, type RouteCatalog } from "../http/coverage.js";
import { AnswerReplay } from "../http/answer-replay.js";
import { ClientGoneError, gzipKnownBody, journalEntry, journalEntrySize, serviceRequests, serviceRequestWork, type ServiceRequestOptions } from "../http/middleware.js";
import { PortApp } from "../http/port-app.js";
import { createRedactor, createRevealer, type Redactor } from "../http/redact.js";
import { DEFAULT_CONTROL_BODY_LIMIT } from "../http/body-cap.js";
import { HostGuard } from "../http/host-check.js";
import { textResponse } from "../http/respond.js";
import { drain, type ServiceInstance } from "../http/service.js";
import type { ServiceName } from "../http/service-names.js";
import type { DocumentedRoutes } from "../http/documented-routes.js";
import { createRegistryService } from "../registry/index.js";
import { createSchedulerService } from "../scheduler/index.js";

export const DEFAULT_SEED = 1;
/** A service's own control routes (faults, token minting): `/_standin/<service>/…`. */
const SERVICE_CONTROL = /^\/_standin\/(scheduler|registry|echo)\//;
export const DEFAULT_START = "2026-01-01T00:00:00Z";

/** A fixture given as a parsed document (its files' text inline) or as a path to a JSON file (which may name files under its directory). */
export type FixtureSource = Fixture | Record<string, unknown> | string;

export interface CreateStandinOptions {
  /** Start fixtures, applied in order. Default: the default world (`{}`). */
  fixture?: FixtureSource | readonly FixtureSource[];
  /** Overrides the fixtures' seed. */
  seed?: number;
  /** Override the fixtures' clock settings. `start` is RFC 3339, `"now"`, or ms since the epoch. */
  clock?: { start?: string | number; mode?: ClockMode; speed?: number; loopLimit?: number };
  /** Send and accept the real products' header names too (default true). */
  compatHeaders?: boolean;
  /** Require `Authorization: Bearer <token>` on the control API. */
  controlToken?: string;
  /**
   * The ports serve HTTPS (startStandin sets it from its own `tls`). Not
   * state: only what the echo service's /openapi.json declares follows it.
   */
  tls?: boolean;
  /** Request journal cap (default 10 000 entries); the event journal has the same cap. Overrides the fixture's `recording.journalEntries`. */
  journalCapacity?: number;
  /** Request journal byte budget (default 16 MiB); the oldest entries go first. Overrides the fixture's `recording.journalBytes`. */
  journalBytes?: number;
  /** Tape byte budget (default 64 MiB); past it the tape stops and says where. Overrides the fixture's `recording.tapeBytes`. */
  tapeBytes?: number;
  /** Wall-time source (tests of realtime mode). */
  wall?: WallTime;
  /** Where unexpected errors are reported (default: stderr). */
  onError?: (error: unknown) => void;
  /** Record the tape (`GET /_standin/tape`); default true (or the fixture's `recording.tape`). */
  tape?: boolean;
  /** Control request bodies over this many bytes get 413 (default 64 MiB). */
  controlBodyLimit?: number;
  /** Idle skipping in the auto clock mode; default true (a replay turns it off: the tape holds the skips). */
  idleSkipping?: boolean;
  /** Serve the dashboard at `/_standin/ui` (default true; `--no-ui` turns it off). */
  ui?: boolean;
  /**
   * Host names (besides localhost, `*.localhost` and IP addresses) whose
   * requests the control API and the dashboard answer (`--allowed-host`);
   * others get 403, a guard against DNS rebinding (http/host-check.ts).
   * `startStandin` adds the address it listens on.
   */
  allowedHosts?: readonly string[];
}

/** What the control API is built from: what only the emulator holds besides itself. */
export interface ControlParts {
  readonly coverage: CoverageTracker;
  readonly token: string | undefined;
  readonly services: ReadonlyArray<{ name: ServiceName; app: DocumentedRoutes }>;
}

/**
 * Builds the app served under `/_standin` on every port (the control API,
 * with the dashboard when there is one) around the emulator, and what to
 * close with it; given by the layer above, which owns the control API.
 */
export type AttachControl = (standin: Standin, parts: ControlParts) => { app: Hono; close(): void };

type Sections = { scheduler: Fixture["scheduler"]; registry: Fixture["registry"]; echo: Fixture["echo"] };
type AnyService = ServiceInstance<NonNullable<Sections[ServiceName]>>;

export class Standin {
  readonly store = new Store();
  readonly ids: Ids;
  readonly clock: Clock;
  readonly watchers: Watchers;
  readonly requests: RequestJournal;
  readonly events: CappedLog<EmulatorEvent>;
  /** One Hono app per service port: the service's routes plus `/_standin`. */
  readonly scheduler: Hono;
  readonly registry: Hono;
  readonly echo: Hono;
  readonly compatHeaders: boolean;
  /** Served over HTTPS (transport, not state: no snapshot carries it). */
  readonly tls: boolean;
  /** Which routes the run has hit (GET /_standin/coverage); not part of the state. */
  readonly coverage: CoverageTracker;
  /** Closes what the control API holds (the dashboard's sessions). */
  private readonly closeControl: () => void;

  private readonly services: AnyService[];
  /** Credentials as references in the tape and the journal. */
  private readonly redactor: Redactor;
  /** Named actions, fixture timelines and await. */
  readonly scenario: Scenario;
  /** Documents applied a slice at a time, and the writes held back meanwhile (see document-gate.ts). */
  readonly documents: DocumentGate;
  /** `--clock auto`: jumps to the next timer when every open request is a parked blocking query. */
  readonly idle: IdleSkipper;
  /** Everything since the last reset, for `GET /_standin/tape` and `standin replay`. */
  readonly tape: TapeRecorder;
  private documentsChecked = 0;
  private startFixtures: Fixture[];
  private startSnapshot!: StateSnapshot;
  private startHash: string | undefined;
  private currentSeed: number;
  private ready = false;
  private readonly seedOverride: number | undefined;
  private readonly clockOverride: CreateStandinOptions["clock"];
  private readonly controlBodyLimit: number;
  private readonly hostGuard: HostGuard;
  private readonly recordingOptions: CreateStandinOptions;

  /** Use `createStandin`: fixtures must be loaded (asynchronously) first. */
  constructor(fixtures: Fixture[], options: CreateStandinOptions, attachControl: AttachControl) {
    this.seedOverride = options.seed;
    this.clockOverride = options.clock;
    this.controlBodyLimit = options.controlBodyLimit ?? DEFAULT_CONTROL_BODY_LIMIT;
    this.hostGuard = new HostGuard(options.allowedHosts);
    this.recordingOptions = options;
    this.startFixtures = fixtures;
    this.compatHeaders = options.compatHeaders ?? true;
    this.tls = options.tls ?? false;
    const settings = this.startSettings(fixtures);
    this.currentSeed = settings.seed;
    this.ids = new Ids(settings.seed);
    const onError = options.onError ?? ((error: unknown) => console.error("standin:", error));
    this.clock = new Clock({
      startMs: settings.startMs,
      mode: settings.mode,
      speed: settings.speed,
      wall: options.wall,
      loopLimit: options.clock?.loopLimit,
      undoSink: () => this.store.undoSink(),
      onBackgroundError: onError,
    });
    this.watchers = new Watchers(this.store, this.clock);
    const recording = recordingSettings(fixtures, options);
    this.tape = new TapeRecorder(recording.tape, recording.tapeBytes);
    this.clock.onOperation((operation) => this.tape.clock(operation));
    this.documents = new DocumentGate(this.clock);
    // A clock move sees the deferred writes done (core/deferred-writes), however many turns they had had.
    this.clock.onOperation(() => this.store.settle());
    this.idle = new IdleSkipper(options.idleSkipping ?? true, this.clock, this.watchers, (detail) => this.record("clock.auto-skip", { detail }), onError);
    this.documents.countAs(this.idle.activity);
    this.requests = new RequestJournal(recording.journalEntries, recording.journalBytes, journalEntrySize);
    this.events = new CappedLog(recording.journalEntries);
    this.clock.onFired((f) => this.record("timer.fired", { subject: f.subject, detail: { kind: f.kind, detail: f.detail } }));

    const recorder: EventRecorder = { record: (type, fields) => this.record(type, fields ?? {}) };
    const ctx: ServiceContext = {
      store: this.store,
      clock: this.clock,
      ids: this.ids,
      watchers: this.watchers,
      events: recorder,
      compatHeaders: this.compatHeaders,
      tls: this.tls,
    };
    this.services = [createSchedulerService(ctx), createRegistryService(ctx), createEchoService(ctx)] as AnyService[];
    this.redactor = createRedactor(this.services, options.controlToken);
    this.tape.redact = this.redactor;
    this.scenario = new Scenario({ store: this.store, clock: this.clock, ids: this.ids, record: (type, fields) => this.record(type, fields) }, this.services);

    // Each service names its product's routes; the tracker counts requests against them.
    this.coverage = new CoverageTracker(Object.fromEntries(this.services.map((s) => [s.name, s.routeCatalog])) as Record<ServiceName, RouteCatalog>);
    const { app: control, close: closeControl } = attachControl(this, {
      coverage: this.coverage,
      token: options.controlToken,
      services: this.services.filter((s) => s.control).map((s) => ({ name: s.name, app: s.control! })),
    });
    this.closeControl = closeControl;
    const [scheduler, registry, echo] = this.services.map((s) => this.portApp(s, control, onError)) as [Hono, Hono, Hono];
    this.scheduler = scheduler;
    this.registry = registry;
    this.echo = echo;

    this.buildStartState();
    this.ready = true;
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** Fixture documents reset and applyFixture have checked themselves (not the ones the precheck checked): tests count them. */
  get fixtureChecks(): number {
    return this.documentsChecked;
  }

  get seed(): number {
    return this.currentSeed;
  }

  /** The store's global index. */
  get index(): number {
    return this.store.index;
  }

  /** The Hono app serving a service port. */
  app(service: ServiceName): Hono {
    return this[service];
  }

  stateHash(): string {
    return hashState(this.snapshot());
  }

  /** stateHash() of the state now, hashed a slice at a time with `turn()` awaited between slices (the control API's answers). */
  stateHashInTurns(turn: () => Promise<void>): Promise<string> {
    return hashStateInTurns(this.snapshot(), turn);
  }

  snapshot(): StateSnapshot {
    return captureState(this, this.currentSeed);
  }

  /**
   * Restores a snapshot document (validated; a bad one changes nothing). The
   * state takes a copy of the document, so the caller's objects stay theirs;
   * with `adopt`, the caller hands the document over (the control API, with
   * a body it has just parsed): the state takes its objects as they are,
   * frozen, and no copy is made (a copy of a 10k-job state takes ~1 s).
   */
  restore(snapshot: unknown, options: { adopt?: boolean } = {}): void {
    const parsed = parseSnapshot(snapshot);
    this.restoreChecked(options.adopt ? parsed : structuredClone(parsed));
  }

  /**
   * restore() of a document handed over (adopted), with `turn()` awaited
   * between checking it and restoring it: the control API's `PUT
   * /_standin/snapshot`, which lets other requests be answered (from the
   * state before) in between instead of holding them for both.
   */
  async restoreDocument(snapshot: unknown, turn: () => Promise<void>): Promise<void> {
    const parsed = parseAdoptedSnapshot(snapshot);
    await turn();
    // The tables are built a slice at a time (readers see the state before), then swapped in.
    await this.documents.apply(async () => {
      const before = { rng: this.ids.state(), clock: this.clock.snapshot() };
      let undoStore: (() => void) | undefined;
      try {
        undoStore = await this.store.restoreStaged(parsed.store, turn);
        this.ids.restore(parsed.rng);
        this.clock.restore(parsed.clock);
      } catch (error) {
        undoStore?.();
        this.ids.restore(before.rng);
        this.clock.restore(before.clock);
        throw new SnapshotError([(error as Error).message]);
      }
      this.restored(parsed);
    });
  }

  /** Restores a checked snapshot the state may keep (a copy, or a document handed over). */
  private restoreChecked(state: StateSnapshot): void {
    const before = this.snapshot();
    try {
      restoreState(this, state);
    } catch (error) {
      restoreState(this, before);
      throw new SnapshotError([(error as Error).message]);
    }
    this.restored(state);
  }

  private restored(state: StateSnapshot): void {
    this.currentSeed = state.seed;
    // `state` is the emulator's own (a copy, or a document handed over): the tape keeps it without another copy.
    this.tape.restore(state, true);
    this.record("state.restored", { detail: { index: this.store.index } });
  }

  /** Back to the start state; with `fixture`, that fixture becomes the start fixture first. */
  async reset(fixture?: unknown, options: DocumentOptions = {}): Promise<void> {
    if (fixture !== undefined) {
      const replacement = await this.resolveDocument(fixture, options);
      const turn = options.turn;
      await turn?.();
      // With turns, a large one is built a slice at a time (readers see the state before), then swapped in.
      if (turn && entityCount(replacement[0]) > STAGED_SLICE_STEPS) return this.documents.apply(() => this.resetStaged(replacement, turn));
      await this.documents.settled();
      const { tape, journal } = this.recording();
      const previous = {
        fixtures: this.startFixtures,
        seed: this.currentSeed,
        state: this.snapshot(),
        recording: { tape: tape.enabled, tapeBytes: tape.budget, journalEntries: journal.capacity, journalBytes: journal.budget },
      };
      this.startFixtures = replacement;
      // Before the start state is built: its tape begins under the new fixture's budgets.
      this.setRecording(recordingSettings(replacement, this.recordingOptions));
      try {
        this.buildStartState();
      } catch (error) {
        // A fixture the services refuse (a bad job, token or session) changes nothing: not the start fixture, not the state.
        this.startFixtures = previous.fixtures;
        this.currentSeed = previous.seed;
        restoreState(this, previous.state);
        this.setRecording(previous.recording);
        if (error instanceof FixtureError) throw error;
        throw new FixtureError("fixture", [(error as Error).message]);
      }
    } else {
      // Only when one is being applied: a reset otherwise takes effect at once (callers may not await it).
      if (this.documents.active) await this.documents.settled();
      restoreState(this, this.startSnapshot);
      this.currentSeed = this.startSnapshot.seed;
      this.beginTape();
    }
    this.resetRecords();
  }

  /** What every reset ends with: the journals begin again. */
  private resetRecords(): void {
    this.requests.clear();
    this.events.clear();
    this.idle.clearLocks();
    this.record("state.reset", { detail: { index: this.store.index } });
  }

  /**
   * reset() with a large fixture: the new start state is built a slice at a time in a scratch
   * emulator (its own store, clock and generator, so this one's, and the caches its services
   * rebuild on a restore, stay as they are while readers are answered from them), then restored
   * here a slice at a time and swapped in at once. A fixture refused at any entity leaves the
   * scratch behind and changes nothing here: not the start fixture, the state, the seed nor the recording.
   */
  private async resetStaged(replacement: Fixture[], turn: () => Promise<void>): Promise<void> {
    const start = await this.buildStartStateStaged(replacement, turn);
    const undoStore = await this.store.restoreStaged(start.store, turn);
    try {
      this.ids.restore(start.rng);
      this.clock.restore(start.clock);
    } catch (error) {
      // Not expected (the scratch made both), but a half-swapped state must not stay.
      undoStore();
      throw new FixtureError("fixture", [(error as Error).message]);
    }
    this.startFixtures = replacement;
    this.startSnapshot = start;
    this.startHash = undefined;
    this.currentSeed = start.seed;
    this.setRecording(recordingSettings(replacement, this.recordingOptions));
    this.beginTape();
    this.resetRecords();
  }

  /** The start snapshot of `fixtures`, built with `turn()` awaited between slices in a scratch emulator of this one's options. */
  private async buildStartStateStaged(fixtures: Fixture[], turn: () => Promise<void>): Promise<StateSnapshot> {
    const scratch = new Standin([], { ...this.recordingOptions, fixture: undefined, tape: false, idleSkipping: false }, () => ({ app: new Hono(), close() {} }));
    try {
      scratch.startFixtures = fixtures;
      const startMs = scratch.clearForStart();
      await scratch.store.writeStaged(scratch.startStateSteps(startMs), turn);
      // captureState, its store copied out a slice at a time (nothing writes to the scratch meanwhile).
      const store = await scratch.store.snapshotInTurns(turn);
      return { format: SNAPSHOT_FORMAT, seed: scratch.currentSeed, rng: scratch.ids.state(), clock: scratch.clock.snapshot(), store };
    } catch (error) {
      if (error instanceof FixtureError) throw error;
      throw new FixtureError("fixture", [(error as Error).message]);
    } finally {
      scratch.close();
    }
  }

  /** Adds a fixture to the current state. Seed and clock settings belong to start fixtures only. */
  async applyFixture(fixture: unknown, options: DocumentOptions = {}): Promise<void> {
    const [doc] = await this.resolveDocument(fixture, options);
    if (doc!.seed !== undefined || doc!.clock !== undefined || doc!.recording !== undefined) {
      throw new FixtureError("fixture", ["seed, clock and recording can only be set by a start fixture (use reset with a fixture)"]);
    }
    const turn = options.turn;
    await turn?.();
    await this.documents.apply(async () => {
      // The store rolls a failed write back; the generator's draws must go back with it.
      const rng = this.ids.state();
      try {
        // With turns, a large one a slice at a time (readers see the state before it), landing as one write all the same.
        if (turn && worthStaging(entityCount(doc!), this.store.rowCount)) await this.store.writeStaged(this.fixtureSteps(doc!), turn);
        else this.store.write(() => drain(this.fixtureSteps(doc!)));
      } catch (error) {
        this.ids.restore(rng);
        if (error instanceof FixtureError) throw error;
        throw new FixtureError("fixture", [(error as Error).message]);
      }
      // A file is put on the tape as the document read from it: a tape names no files (replay.ts refuses paths).
      // A document handed over (the control API's, parsed for its request) is kept as it is, not copied.
      if (typeof fixture === "string") this.tape.fixture(doc, true);
      else this.tape.fixture(fixture, options.adopt === true, options.bytes);
      this.record("fixture.applied", { detail: { index: this.store.index } });
    });
  }

  /** A fixture given to reset or applyFixture, resolved; checked here unless the control API's precheck checked it. */
  private resolveDocument(fixture: unknown, options: DocumentOptions): Promise<Fixture[]> {
    return resolveFixtures([fixture as FixtureSource], options.checked, () => this.documentsChecked++);
  }

  /** A fixture added to the state: each service's section, then its timeline, a step per entity (ServiceInstance.fixtureSteps). */
  private *fixtureSteps(doc: Fixture): Generator<void, void, undefined> {
    for (const service of this.services) {
      const section = doc[service.name];
      if (section) yield* service.fixtureSteps(section);
    }
    if (doc.timeline) this.scenario.scheduleTimeline(doc.timeline as TimelineStep[], this.clock.now(), "fixture");
  }

  /** Runs a named action now (`POST /_standin/actions`): `emu.act("node-down", { node: "client-1" })`. */
  act(name: string, args: Record<string, unknown> = {}): ActionOutcome {
    const outcome = this.scenario.run(name, args);
    this.tape.action(name, args);
    return outcome;
  }

  get tapeEnabled(): boolean {
    return this.tape.enabled;
  }

  /** An answer's body as the tape keeps it: secrets written as references (for `standin replay` to compare its own answers). */
  redactedBody(body: Uint8Array): Uint8Array {
    return this.redactor.body(body);
  }

  /** Turns the references the tape writes for credentials back into the secrets this state knows (for `standin replay`). */
  revealer(): ReturnType<typeof createRevealer> {
    return createRevealer(this.services);
  }

  /** What the run records and how much (`GET /_standin/recording`). */
  recording(): RecordingStatus {
    return {
      tape: { enabled: this.tape.enabled, budget: this.tape.budget, bytes: this.tape.bytes, entries: this.tape.length, truncated: this.tape.truncated },
      journal: { capacity: this.requests.capacity, budget: this.requests.budget, bytes: this.requests.bytes, entries: this.requests.size, dropped: this.requests.droppedCount },
    };
  }

  /**
   * New recording settings (`POST /_standin/recording`): the journals keep
   * their newest entries within the new caps; the tape's budget applies to
   * what it records next (turning the tape on begins a new one at the next reset).
   */
  setRecording(settings: Partial<RecordingSettings>): RecordingStatus {
    if (settings.journalEntries !== undefined || settings.journalBytes !== undefined) {
      const entries = settings.journalEntries ?? this.requests.capacity;
      this.requests.setCaps(entries, settings.journalBytes ?? this.requests.budget);
      this.events.setCaps(entries, Infinity);
    }
    if (settings.tapeBytes !== undefined) this.tape.budget = settings.tapeBytes;
    if (settings.tape !== undefined) this.tape.turn(settings.tape);
    return this.recording();
  }

  /** The tape since the last reset. */
  exportTape(): Promise<Tape> {
    return this.tape.export({ stateHash: this.stateHash(), index: this.store.index });
  }

  /** The tape since the last reset, its entries made as they are written (`GET /_standin/tape` streams it). */
  exportTapeLazily(): Promise<unknown> {
    return this.tape.exportLazily({ stateHash: this.stateHash(), index: this.store.index });
  }

  private beginTape(): void {
    // The start state's own clock: "now" as a start time was read once, when the state was built.
    const { nowMs, mode, speed } = this.startSnapshot.clock;
    this.tape.begin({
      seed: this.currentSeed,
      fixtures: this.startFixtures,
      clock: { startMs: nowMs, mode, speed },
      compatHeaders: this.compatHeaders,
      // Only when on, so tapes recorded without TLS stay as they were.
      ...(this.tls && { tls: true as const }),
      stateHash: () => (this.startHash ??= hashState(this.startSnapshot)),
    });
  }

  /**
   * Advances the clock timer by timer until every condition holds, or
   * `within` (default 10m) of virtual time has passed:
   * `await emu.await({ deployment: { job: "web", status: "successful" } })`.
   */
  await(until: Record<string, unknown>, within?: string): Promise<AwaitOutcome> {
    return this.scenario.awaitUntil(until, within);
  }

  noteClockOperation(operation: string, detail: unknown): void {
    this.record(`clock.${operation}`, { detail });
  }

  /** How many tapes have begun (each reset begins one). */
  get tapeGeneration(): number {
    return this.tape.generation;
  }

  /** Tells `listener` of every write, clock move, mode change and restore (the dashboard's change stream); returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    const off = [this.store.onCommit(listener), this.store.onRestore(listener), this.clock.onOperation(listener), this.clock.onRestore(listener)];
    return () => {
      for (const unsubscribe of off) unsubscribe();
    };
  }

  /** Stops the realtime clock's real timer (and the dashboard's scratch emulators). */
  close(): void {
    this.ready = false;
    this.closeControl();
    this.clock.dispose();
  }

  private record(type: string, fields: { service?: string; subject?: string; detail?: unknown }): void {
    this.events.append({ at: this.clock.now(), index: this.store.index, type, ...fields });
  }

  private startSettings(fixtures: Fixture[]) {
    let seed = DEFAULT_SEED;
    let start: string | number = DEFAULT_START;
    let mode: ClockMode = "manual";
    let speed = 1;
    for (const f of fixtures) {
      seed = f.seed ?? seed;
      start = f.clock?.start ?? start;
      mode = f.clock?.mode ?? mode;
      speed = f.clock?.speed ?? speed;
    }
    seed = this.seedOverride ?? seed;
    start = this.clockOverride?.start ?? start;
    mode = this.clockOverride?.mode ?? mode;
    speed = this.clockOverride?.speed ?? speed;
    const startMs = start === "now" ? wallNow() : typeof start === "number" ? start : parseInstant(start);
    return { seed, startMs, mode, speed };
  }

  /** Builds a new state from the start fixtures and remembers it for reset. */
  private buildStartState(): void {
    const startMs = this.clearForStart();
    this.store.write(() => drain(this.startStateSteps(startMs)));
    // Rows are frozen, so the start snapshot can share them with the live state: reset is O(rows), no copying.
    this.startSnapshot = this.snapshot();
    this.startHash = undefined;
    this.beginTape();
  }

  /** An empty state at the start fixtures' seed and clock (what a start state is built on); returns the start time. */
  private clearForStart(): number {
    const settings = this.startSettings(this.startFixtures);
    this.currentSeed = settings.seed;
    this.ids.reseed(settings.seed);
    this.store.restore({ index: 1, tables: {} });
    this.clock.restore({ nowMs: settings.startMs, nextTimerId: 1, mode: settings.mode, speed: settings.speed, paused: false, timers: [] });
    return settings.startMs;
  }

  /** The start fixtures written on an empty state: each service's sections (a step per entity), then each fixture's timeline. */
  private *startStateSteps(startMs: number): Generator<void, void, undefined> {
    for (const service of this.services) {
      const sections = this.startFixtures.map((f) => f[service.name]).filter((s) => s !== undefined);
      yield* service.initializeSteps(sections as never);
    }
    // Each start fixture's timeline counts from the clock's start.
    this.startFixtures.forEach((f, i) => {
      if (f.timeline) this.scenario.scheduleTimeline(f.timeline as TimelineStep[], startMs, this.startFixtures.length === 1 ? "fixture" : `fixture[${i}]`);
    });
  }

  private portApp(service: AnyService, control: Hono, onError: (error: unknown) => void): Hono {
    const app = new Hono();
    const failed = (error: unknown): Response => {
      // A client that hung up mid-body is not an error of the emulator's (and gets no answer anyway).
      if (!(error instanceof ClientGoneError)) onError(error);
      return textResponse(500, `internal error: ${(error as Error)?.message ?? String(error)}`);
    };
    app.onError(failed);
    const requests: ServiceRequestOptions = {
      service: service.name,
      journal: this.requests,
      clock: this.clock,
      store: this.store,
      redact: this.redactor,
      compressThreshold: service.compressThreshold,
      arrived: (method, url) => this.coverage.record(service.name, method, url),
    };
    const handler = service.handler;
    if (handler) {
      // One handler per request: the service-request work calls the service's function as its `next`.
      const around = serviceRequestWork(requests);
      // Settled at once, the answer is the context's; a promise settles with nothing (the context's answer) or the body limit's 413,
      // both of which Hono's single-handler path takes as the answer.
      app.all("*", (c) => (around(c, () => answerWith(c, handler, failed)) ?? c.res) as Response | Promise<Response>);
    } else {
      app.use("*", serviceRequests(requests));
      app.route("/", service.app);
      app.notFound((c) => service.notFound(c));
    }
    const replay = service.readKey ? new AnswerReplay(this, (request) => service.readKey!(request)) : undefined;
    // Realtime mode: fire whatever wall time has made due before the request looks at the state.
    // A failing timer is reported, never turned into this request's failure.
    return new PortApp(
      CONTROL_PREFIX,
      control,
      app,
      () => {
        try {
          this.clock.sync();
        } catch (error) {
          onError(error);
        }
      },
      (request, isControl) => {
        this.idle.activity.started();
        // Control requests are on the tape only when they are a service's own faults (the rest is recorded where it acts).
        const recorded = !isControl || (request.method !== "GET" && SERVICE_CONTROL.test(new URL(request.url).pathname));
        const answered = recorded ? this.tape.request(service.name, request, !isControl) : undefined;
        return (response) => {
          this.idle.activity.ended();
          // A replayed answer is final: compressed (or not) and remembered when it was first sent.
          const final = !response || isControl || replay?.isReplay(response) === true;
          const sent = final ? response : gzipKnownBody(request, response, service.compressThreshold);
          if (!final) replay?.remember(request, response, sent!);
          return answered?.(sent) ?? (sent === response ? undefined : sent);
        };
      },
      (request) => {
        const at = this.clock.now();
        const answer = replay?.replay(request);
        if (!answer) return undefined;
        // The bookkeeping of the middleware the answer skips.
        this.coverage.record(service.name, request.method, request.url);
        this.requests.append(journalEntry(service.name, at, request, null, answer.status, this.store.index, this.redactor));
        return answer;
      },
      this.controlBodyLimit,
      this.hostGuard,
      (request) => this.documents.heldBack(request.method, request.url),
    );
  }
}

export const DEFAULT_JOURNAL_ENTRIES = 10_000;
export const DEFAULT_JOURNAL_BYTES = 16 * 1024 * 1024;

/** What the run records and how much of it: the start fixtures' `recording` sections in order, then the options. */
export type RecordingSettings = Required<NonNullable<Fixture["recording"]>>;

export interface RecordingStatus {
  tape: { enabled: boolean; budget: number; bytes: number; entries: number; truncated: boolean };
  journal: { capacity: number; budget: number; bytes: number; entries: number; dropped: number };
}

function recordingSettings(fixtures: readonly Fixture[], options: CreateStandinOptions): RecordingSettings {
  const settings = { tape: true, tapeBytes: DEFAULT_TAPE_BYTES, journalEntries: DEFAULT_JOURNAL_ENTRIES, journalBytes: DEFAULT_JOURNAL_BYTES };
  for (const f of fixtures) Object.assign(settings, f.recording);
  return {
    tape: options.tape ?? settings.tape,
    tapeBytes: options.tapeBytes ?? settings.tapeBytes,
    journalEntries: options.journalCapacity ?? settings.journalEntries,
    journalBytes: options.journalBytes ?? settings.journalBytes,
  };
}

/** Creates an emulator in process (no sockets), with the control app `attachControl` builds. */
export async function createStandinWith(options: CreateStandinOptions, attachControl: AttachControl): Promise<Standin> {
  const sources = options.fixture === undefined ? [] : Array.isArray(options.fixture) ? options.fixture : [options.fixture as FixtureSource];
  const fixtures = await resolveFixtures(sources);
  return new Standin(fixtures, options, attachControl);
}

/**
 * Loads paths (inlining the files they refer to); validates documents, which carry their files' text
 * inline. `checked`: the documents passed validateFixtureDocument already (the control API's
 * precheck ran it off the event loop); the schema has no defaults or transforms, so they are taken as they are.
 * `onCheck` is told of each document checked here.
 */
export async function resolveFixtures(sources: readonly FixtureSource[], checked = false, onCheck?: () => void): Promise<Fixture[]> {
  const out: Fixture[] = [];
  for (const [i, source] of sources.entries()) {
    if (typeof source === "string") out.push(await loadFixtureFile(source));
    else if (checked) out.push(source as Fixture);
    else {
      onCheck?.();
      out.push(validateFixtureDocument(source, `fixture[${i}]`));
    }
  }
  return out;
}

/**
 * What Hono's middleware chain does with the handler after the last
 * middleware: its answer becomes the context's response, and a failure is
 * answered by the app's error handler (so the middleware still journals it).
 * An answer made at once settles at once (no promise: see http/middleware's Proceed).
 */
function answerWith(c: Context, handler: (c: Context) => Response | Promise<Response>, failed: (error: unknown) => Response): Promise<void> | void {
  let answer: Response | Promise<Response>;
  try {
    answer = handler(c);
  } catch (error) {
    c.res = failed(error);
    return;
  }
  if (answer instanceof Promise) {
    return answer.then(
      (response) => {
        if (response && !c.finalized) c.res = response;
      },
      (error: unknown) => {
        c.res = failed(error);
      },
    );
  }
  if (answer && !c.finalized) c.res = answer;
}

/**
 * Whether a fixture of `entities` is better applied in slices than in one step, on a state of
 * `rows`: a staged write's first change to a table copies its rows (~0.3 µs a row, in one step),
 * where an entity costs ~5–10 µs to apply. A fixture of one slice or less, or small beside the
 * state, is written in place in one step shorter than that copy.
 */
function worthStaging(entities: number, rows: number): boolean {
  return entities > STAGED_SLICE_STEPS && entities * 16 >= rows;
}

/**
 * About how many steps a fixture's apply takes (ServiceInstance.fixtureSteps yields after each
 * entity): the entries of the lists in its sections, its regions' and datacenters' included. Only
 * chooses how the fixture is written, never what is written.
 */
function entityCount(value: unknown, depth = 4): number {
  if (Array.isArray(value)) return value.length;
  if (depth === 0 || value === null || typeof value !== "object") return 0;
  let count = 0;
  for (const member of Object.values(value)) count += entityCount(member, depth - 1);
  return count;
}
