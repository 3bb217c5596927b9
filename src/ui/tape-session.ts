/**
 * A tape opened by the dashboard: replayed once, entry by entry, into a
 * scratch emulator (never the live one) to lay out its timeline (every
 * request, clock move, action and the events each caused, on one
 * virtual-time axis) and to find the first divergence; then, on demand, the
 * state right after any entry, rebuilt from the nearest checkpoint taken on
 * that pass. For the live run the session follows the growing tape,
 * replaying only the entries it has not seen.
 *
 * Memory is bounded: at most MAX_CHECKPOINTS snapshots (they share the
 * state's frozen rows, so each costs little more than its tables' maps),
 * MAX_ITEMS timeline items, and a few rebuilt states.
 */
import type { Tape, TapeEntry } from "../control/tape.js";
import type { EmulatorEvent } from "../core/journal.js";
import { nextTurn } from "../core/json-stream.js";
import { hashStateInTurns, type StateSnapshot } from "../core/snapshot.js";
import { type Divergence, describe, TapeReplayer } from "../replay.js";
import { TAPE_CHECK_SLICE } from "../replay-tape-check.js";
import { diffStates, type StateDiff } from "./state-diff.js";

/** One mark on the timeline. `seq` is the tape entry it belongs to: clicking it shows the state right after that entry. */
export interface TimelineItem {
  readonly seq: number;
  /** Virtual instant, ms since the epoch. */
  readonly at: number;
  /** The lane: a service, `clock` or `scenario` (actions, fixtures, timeline steps, restores). */
  readonly lane: string;
  readonly kind: "request" | "fault" | "clock" | "action" | "fixture" | "restore" | "timer" | "event";
  readonly label: string;
  readonly status?: number;
  readonly subject?: string;
}

export interface TimelineAnswer {
  readonly source: string;
  /** Which session answered (a new one after a reset): items fetched `since` an index only add to those of the same session. */
  readonly session: number;
  /** The index of the first item sent (`since`). */
  readonly from: number;
  readonly entries: number;
  readonly items: readonly TimelineItem[];
  /** Items left out past MAX_ITEMS (the oldest are kept: the start of a run is where a failure begins). */
  readonly itemsDropped: number;
  readonly divergences: readonly Divergence[];
  readonly truncated: boolean;
  readonly start: { readonly at: number; readonly stateHash: string };
  /** After a whole tape was replayed: whether its end state matched. */
  readonly report?: { readonly ok: boolean; readonly expected: string; readonly actual: string };
}

export interface InstantAnswer {
  readonly seq: number;
  readonly entry: string;
  /** The state is at `at`, inside the entry's clock move (not after it). */
  readonly during?: true;
  readonly at: number;
  readonly index: number;
  readonly stateHash: string;
  readonly snapshot: StateSnapshot;
  /** What the entry changed: the state before it against the state after. */
  readonly diff: StateDiff;
}

/** A tape whose entries are made one by one when asked for (Standin.exportTapeLazily): the live run's. */
export type LazyTape = Omit<Tape, "entries"> & { readonly entries: { readonly length: number; item(index: number): TapeEntry } };

/** A lazy tape's entries made into a list, a slice at a time with turns between (a live tape holds up to 200 000). */
export async function madeWhole(tape: LazyTape, turn: () => Promise<void> = nextTurn): Promise<Tape> {
  const entries: TapeEntry[] = [];
  for (let i = 0; i < tape.entries.length; i++) {
    if (i > 0 && i % TAPE_CHECK_SLICE === 0) await turn();
    entries.push(tape.entries.item(i));
  }
  return { ...tape, entries };
}

const MAX_CHECKPOINTS = 64;
const MAX_ITEMS = 50_000;
const CACHED_STATES = 8;

let sessions = 0;

export class TapeSession {
  readonly id = ++sessions;
  private readonly items: TimelineItem[] = [];
  private itemsDropped = 0;
  /** Entries replayed so far (the position of the next one). */
  private applied = 0;
  /** Position → the state after that many entries. */
  private readonly checkpoints = new Map<number, StateSnapshot>();
  private spacing = 16;
  private readonly states = new Map<number, StateSnapshot>();
  private lastEventSeq = 0;
  private report: TimelineAnswer["report"];
  /** One replay step at a time: a page's requests may overlap. */
  private queue: Promise<unknown> = Promise.resolve();

  /** The tape's entries, this session's own list (a followed tape's grow). */
  private readonly entries: TapeEntry[];

  private constructor(
    private tape: Tape,
    private readonly replayer: TapeReplayer,
    readonly source: string,
  ) {
    this.entries = [...tape.entries];
    this.tape = { ...tape, entries: this.entries };
    this.checkpoints.set(0, replayer.emu.snapshot());
  }

  /** Validates the tape (TapeError when it is not one) and replays it all; `finished`: the tape is complete (a file), so its end state is checked. */
  static async open(document: unknown, source: string, finished: boolean): Promise<TapeSession> {
    const replayer = await TapeReplayer.start(document);
    const session = new TapeSession(replayer.tape, replayer, source);
    await session.serially(async () => {
      await session.replayRest();
      if (finished) session.finish(await replayer.finish());
    });
    return session;
  }

  /**
   * The tape that began this session, grown (the live run's, exported
   * lazily): only the entries not seen yet are made, a slice at a time, and
   * replayed. False when it is another tape (after a reset): open a new
   * session. A tape only grows until the next reset, so the last entry
   * replayed standing where it stood is what tells it is the same one.
   */
  async follow(tape: LazyTape, turn: () => Promise<void> = nextTurn): Promise<boolean> {
    if (tape.start.stateHash !== this.tape.start.stateHash || tape.entries.length < this.entries.length) return false;
    const last = this.entries.length - 1;
    if (last >= 0) {
      const [now, then] = [tape.entries.item(last), this.entries[last]!];
      if (now.seq !== then.seq || now.kind !== then.kind) return false;
    }
    const seen = this.entries.length;
    for (let i = seen; i < tape.entries.length; i++) {
      if (i > seen && (i - seen) % TAPE_CHECK_SLICE === 0) await turn();
      this.entries.push(tape.entries.item(i));
    }
    this.tape = { ...tape, entries: this.entries };
    await this.serially(() => this.replayRest());
    return true;
  }

  get length(): number {
    return this.tape.entries.length;
  }

  /** The timeline; with `since`, only the items from that index on (a page that has the others). */
  timeline(since = 0): TimelineAnswer {
    const from = Math.min(since, this.items.length);
    return {
      source: this.source,
      session: this.id,
      from,
      entries: this.tape.entries.length,
      items: from === 0 ? this.items : this.items.slice(from),
      itemsDropped: this.itemsDropped,
      divergences: this.replayer.divergences,
      truncated: this.tape.truncated,
      start: { at: this.checkpoints.get(0)!.clock.nowMs, stateHash: this.tape.start.stateHash },
      ...(this.report && { report: this.report }),
    };
  }

  /**
   * The state right after the entry `seq` (0: the start state), and what that
   * entry changed. With `at`, for a clock move that passes it: the state at
   * that instant inside the move (every timer due by then fired), and what
   * changed since the move began. Undefined for an unknown seq.
   */
  async instant(seq: number, at?: number): Promise<InstantAnswer | undefined> {
    const position = seq === 0 ? 0 : this.tape.entries.findIndex((e) => e.seq === seq) + 1;
    if (position === 0 && seq !== 0) return undefined;
    if (position > this.applied) return undefined;
    const entry = position === 0 ? undefined : this.tape.entries[position - 1]!;
    const before = position === 0 ? await this.stateAt(0) : await this.stateAt(position - 1);
    const inside = entry?.kind === "clock" && entry.op === "advance-to" && at !== undefined && at >= before.clock.nowMs && at < entry.to;
    const after = inside ? await this.stateDuring(position - 1, at) : await this.stateAt(position);
    const described = entry ? describe(entry) : "start";
    return {
      seq,
      entry: described,
      ...(inside && { during: true as const }),
      at: after.clock.nowMs,
      index: after.store.index,
      stateHash: await hashStateInTurns(after, nextTurn),
      snapshot: after,
      diff: diffStates(position === 0 ? after : before, after),
    };
  }

  close(): void {
    this.replayer.close();
  }

  private async replayRest(): Promise<void> {
    const { emu } = this.replayer;
    while (this.applied < this.tape.entries.length) {
      const entry = this.tape.entries[this.applied]!;
      const at = emu.clock.now();
      await this.replayer.step(entry);
      this.applied++;
      // The entry and what it caused, in virtual-time order (a clock move's mark sits at its end, after the timers it fired).
      const marks: TimelineItem[] = [];
      this.note(entry, at, marks);
      for (const event of emu.events.query({ since: this.lastEventSeq })) this.noteEvent(entry.seq, event, marks);
      this.lastEventSeq = emu.events.lastSeq;
      marks.sort((a, b) => a.at - b.at || Number(a.kind === "clock") - Number(b.kind === "clock"));
      for (const mark of marks) this.push(mark);
      if (this.applied % this.spacing === 0) this.checkpoint(this.applied, emu.snapshot());
    }
  }

  private finish(report: { ok: boolean; stateHash: { expected: string; actual: string } }): void {
    this.report = { ok: report.ok, expected: report.stateHash.expected, actual: report.stateHash.actual };
  }

  private checkpoint(position: number, state: StateSnapshot): void {
    this.checkpoints.set(position, state);
    if (this.checkpoints.size <= MAX_CHECKPOINTS) return;
    // Full: keep every other one (the start always), and take them half as often from now on.
    this.spacing *= 2;
    for (const kept of [...this.checkpoints.keys()]) if (kept % this.spacing !== 0) this.checkpoints.delete(kept);
  }

  /** The state after `position` entries: a checkpoint, a cached state, or replayed from the nearest checkpoint before it in a scratch emulator of its own. */
  private stateAt(position: number): Promise<StateSnapshot> {
    const ready = this.checkpoints.get(position) ?? this.states.get(position);
    if (ready) return Promise.resolve(ready);
    return this.serially(async () => {
      let from = 0;
      for (const at of this.checkpoints.keys()) if (at <= position && at > from) from = at;
      const scratch = await TapeReplayer.start(this.tape, this.checkpoints.get(from)!);
      try {
        for (let i = from; i < position; i++) await scratch.step(this.tape.entries[i]!);
        const state = scratch.emu.snapshot();
        this.states.set(position, state);
        if (this.states.size > CACHED_STATES) this.states.delete(this.states.keys().next().value!);
        return state;
      } finally {
        scratch.close();
      }
    });
  }

  /** The state after `position` entries, with the clock then moved on to `at` (a scratch emulator of its own; not cached: rarely asked twice). */
  private async stateDuring(position: number, at: number): Promise<StateSnapshot> {
    const from = await this.stateAt(position);
    return this.serially(async () => {
      const scratch = await TapeReplayer.start(this.tape, from);
      try {
        scratch.emu.clock.advanceTo(at);
        return scratch.emu.snapshot();
      } finally {
        scratch.close();
      }
    });
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private push(item: TimelineItem): void {
    if (this.items.length >= MAX_ITEMS) this.itemsDropped++;
    else this.items.push(item);
  }

  private note(entry: TapeEntry, at: number, marks: TimelineItem[]): void {
    const { seq } = entry;
    switch (entry.kind) {
      case "request": {
        const fault = entry.path.startsWith("/_standin/");
        const path = entry.path.length > 160 ? `${entry.path.slice(0, 157)}…` : entry.path;
        marks.push({ seq, at, lane: entry.service, kind: fault ? "fault" : "request", label: `${entry.method} ${path}`, ...(entry.response && { status: entry.response.status }) });
        return;
      }
      case "clock":
        marks.push({
          seq,
          at: entry.op === "advance-to" ? entry.to : at,
          lane: "clock",
          kind: "clock",
          label: entry.op === "advance-to" ? `clock → ${new Date(entry.to).toISOString()}` : `clock mode ${entry.mode}`,
        });
        return;
      case "action":
        marks.push({ seq, at, lane: "scenario", kind: "action", label: `action ${entry.do}` });
        return;
      case "fixture":
        marks.push({ seq, at, lane: "scenario", kind: "fixture", label: "fixture applied" });
        return;
      case "restore":
        marks.push({ seq, at, lane: "scenario", kind: "restore", label: "snapshot restored" });
        return;
    }
  }

  /** What the emulator recorded while replaying the entry: fired timers and the services' own events (placements, deployments, sessions…). */
  private noteEvent(seq: number, event: EmulatorEvent, marks: TimelineItem[]): void {
    // The replay's own bookkeeping, and clock moves the tape entry already shows.
    if (event.type.startsWith("clock.") || event.type === "state.restored" || event.type === "fixture.applied") return;
    if (event.type === "timer.fired") {
      const { kind } = event.detail as { kind: string };
      const lane = kind.startsWith("standin.") ? "scenario" : kind.split(".")[0]!;
      marks.push({ seq, at: event.at, lane, kind: "timer", label: `timer ${kind}`, ...(event.subject !== undefined && { subject: event.subject }) });
      return;
    }
    marks.push({ seq, at: event.at, lane: event.service ?? "scenario", kind: "event", label: event.type, ...(event.subject !== undefined && { subject: event.subject }) });
  }
}
