/**
 * What the dashboard serves from: the live emulator (when there is one) and
 * the tapes it has opened. The live run's tape is replayed into a scratch
 * emulator as it grows (a new session after a reset); a tape opened from a
 * file (`standin ui <tape>`, or dropped on the page) gets a session of its
 * own, one at a time. Neither ever touches the live emulator's state.
 */
import type { Clock } from "../core/clock.js";
import { ControlError } from "../control/errors.js";
import { TapeError } from "../replay.js";
import { checkParityReport } from "./parity-file.js";
import { type InstantAnswer, type LazyTape, madeWhole, type TimelineAnswer, TapeSession } from "./tape-session.js";

/** What the dashboard reads of a live emulator (a Standin). */
export interface LiveTarget {
  readonly clock: Clock;
  readonly index: number;
  readonly tapeEnabled: boolean;
  /** Counts the tapes begun (each reset begins one). */
  readonly tapeGeneration: number;
  /** The tape since the last reset, its entries made when asked for (a LazyTape): the dashboard makes only those it has not seen. */
  exportTapeLazily(): Promise<unknown>;
  /** Told of every write, clock move, mode change and restore; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

export type TapeSource = "live" | "tape";

export class Dashboard {
  private liveSession: { generation: number; session: Promise<TapeSession> } | undefined;
  private fileSession: { name: string; session: TapeSession } | undefined;
  private liveUpdate: Promise<unknown> = Promise.resolve();
  /** A parity report (`standin ui --parity`): a document shown as it is, nothing replayed. */
  private parity: { name: string; report: unknown } | undefined;

  constructor(readonly live: LiveTarget | undefined) {}

  get mode(): "live" | "tape" {
    return this.live ? "live" : "tape";
  }

  info(): { mode: "live" | "tape"; tape: { name: string; entries: number } | null; parity?: { name: string } } {
    return {
      mode: this.mode,
      tape: this.fileSession ? { name: this.fileSession.name, entries: this.fileSession.session.length } : null,
      ...(this.parity && { parity: { name: this.parity.name } }),
    };
  }

  /** Opens a parity report (`standin parity --json`); a ControlError 400 when it is not one. */
  openParity(document: unknown, name: string): void {
    this.parity = { name, report: checkParityReport(document) };
  }

  parityReport(): unknown {
    if (!this.parity) throw new ControlError(404, "no parity report is open: start standin ui --parity <report.json>, or drop one on the page");
    return this.parity.report;
  }

  /** Opens a tape document (TapeError, answered 400, when it is not one); it replaces the tape opened before. */
  async openTape(document: unknown, name: string): Promise<TimelineAnswer> {
    let session: TapeSession;
    try {
      session = await TapeSession.open(document, "tape", true);
    } catch (error) {
      if (error instanceof TapeError) throw new ControlError(400, error.message);
      throw error;
    }
    this.fileSession?.session.close();
    this.fileSession = { name, session };
    return session.timeline();
  }

  async timeline(source: TapeSource, since?: number): Promise<TimelineAnswer> {
    return (await this.session(source)).timeline(since);
  }

  async instant(source: TapeSource, seq: number, at?: number): Promise<InstantAnswer> {
    // An entry the live session has already replayed needs no new export of the tape (a page stepping through instants asks often).
    const current = source === "live" && this.live && this.liveSession?.generation === this.live.tapeGeneration ? await this.liveSession.session.catch(() => undefined) : undefined;
    const answer = (await current?.instant(seq, at)) ?? (await (await this.session(source)).instant(seq, at));
    if (!answer) throw new ControlError(404, `no tape entry #${seq} (yet)`);
    return answer;
  }

  close(): void {
    this.fileSession?.session.close();
    void this.liveSession?.session.then((s) => s.close()).catch(() => undefined);
  }

  private async session(source: TapeSource): Promise<TapeSession> {
    if (source === "tape") {
      if (!this.fileSession) throw new ControlError(404, "no tape is open: drop a tape file on the page, or start standin ui <tape.json>");
      return this.fileSession.session;
    }
    const live = this.live;
    if (!live) throw new ControlError(404, "this dashboard shows a tape, not a running emulator: use source=tape");
    if (!live.tapeEnabled) throw new ControlError(409, "the tape is off (--no-tape, or recording.tape false): the timeline is made from it");
    // One update at a time: the tape is exported and followed in order.
    const update = this.liveUpdate.then(() => this.followLive(live));
    this.liveUpdate = update.catch(() => undefined);
    return update;
  }

  private async followLive(live: LiveTarget): Promise<TapeSession> {
    const tape = (await live.exportTapeLazily()) as LazyTape;
    const current = this.liveSession;
    if (current && current.generation === live.tapeGeneration) {
      const session = await current.session.catch(() => undefined);
      if (session && (await session.follow(tape))) return session;
    }
    void current?.session.then((s) => s.close()).catch(() => undefined);
    const session = madeWhole(tape)
      .then((whole) => TapeSession.open(whole, "live", false))
      .catch((error: unknown) => {
        if (error instanceof TapeError) throw new ControlError(409, error.message);
        throw error;
      });
    this.liveSession = { generation: live.tapeGeneration, session };
    return session;
  }
}
