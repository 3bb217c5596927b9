/**
 * `standin replay <tape>`: runs a tape (GET /_standin/tape) against a fresh
 * emulator built from the tape's start (seed, start fixtures, clock) and
 * compares, entry by entry, every answer (status, headers but `Date`, body)
 * and at the end the state hash. The first divergence is what a failing CI
 * run's reproduction needs; all of them are reported.
 */
import { keptBody, sameBody, type Tape, type TapeEntry, type TapeRequestEntry } from "./control/tape.js";
import { nextTurn } from "./core/json-stream.js";
import type { StateSnapshot } from "./core/snapshot.js";
import { documentOrShippedFixture } from "./scenario-files/load.js";
import type { Standin } from "./standin/standin.js";
import { createStandinWithControl } from "./standin/with-control.js";
import type { ServiceName } from "./http/service-names.js";
import { bodyDifference, RecordedBodies } from "./replay-body-difference.js";
import { checkTape } from "./replay-tape-check.js";

export { parseTape, TapeError } from "./replay-tape-check.js";

export interface Divergence {
  /** The entry's sequence number (0: the start state, -1: the end state). */
  readonly seq: number;
  readonly entry: string;
  readonly what: string;
  /** Lines that show it (a body's two windows around the first differing byte). */
  readonly details?: readonly string[];
}

export interface ReplayReport {
  readonly entries: number;
  readonly requests: number;
  readonly divergences: readonly Divergence[];
  readonly stateHash: { readonly expected: string; readonly actual: string };
  /** Where the tape stopped recording (its budget reached): the entries before it were compared, the final state was not. */
  readonly truncatedAt?: number;
  /** Rejected requests whose body the tape kept as a hash only: not sent again (a rejected request changes nothing). */
  readonly skipped: number;
  readonly ok: boolean;
}

/** Turns of the event loop given to answers a step may have woken, before the next step. */
const SETTLE_TURNS = 3;

export async function replayTape(document: unknown): Promise<ReplayReport> {
  const replayer = await TapeReplayer.start(document);
  try {
    for (const entry of replayer.tape.entries) await replayer.step(entry);
    return await replayer.finish();
  } finally {
    replayer.close();
  }
}

/**
 * A replay one entry at a time: `standin replay` runs every entry and
 * finishes; the dashboard (src/ui) steps through a tape to build its
 * timeline and to rebuild the state at an instant in a scratch emulator.
 */
export class TapeReplayer {
  readonly divergences: Divergence[] = [];
  private readonly recordedBodies: RecordedBodies;
  private readonly open: Array<{ entry: TapeRequestEntry; answer: Promise<Response>; controller: AbortController }> = [];
  private requests = 0;
  private skipped = 0;

  private constructor(
    readonly tape: Tape,
    /** The scratch emulator the entries are replayed into. */
    readonly emu: Standin,
  ) {
    this.recordedBodies = new RecordedBodies(tape.entries);
  }

  /**
   * A fresh emulator built from the tape's start (seed, start fixtures,
   * clock); with `from`, the state is then set to that snapshot (one the
   * same tape's replay took) so stepping can resume there; the document is
   * then that replay's, already checked.
   */
  static async start(document: unknown, from?: StateSnapshot): Promise<TapeReplayer> {
    const tape = from ? (document as Tape) : await checkTape(document);
    const emu = await createStandinWithControl({
      // A tape holds documents (a dropped file must not make the process read files of its choosing).
      fixture: tape.start.fixtures.map(documentOrShippedFixture) as never,
      seed: tape.start.seed,
      clock: { start: tape.start.clock.startMs, mode: tape.start.clock.mode, speed: tape.start.clock.speed },
      compatHeaders: tape.start.compatHeaders,
      tls: tape.start.tls === true,
      tape: false,
      // The tape holds every skip as a clock move.
      idleSkipping: false,
      ui: false,
    });
    const replayer = new TapeReplayer(tape, emu);
    if (from) emu.restore(from);
    else if (emu.stateHash() !== tape.start.stateHash)
      replayer.divergences.push({
        seq: 0,
        entry: "start",
        what: `the start state differs (hash ${tape.start.stateHash} expected, ${emu.stateHash()} now): the fixtures or standin's version changed`,
      });
    return replayer;
  }

  /** Replays one entry (a request answered before the next entry is awaited and compared); returns the divergences it found. */
  async step(entry: TapeEntry): Promise<Divergence[]> {
    const before = this.divergences.length;
    const { emu } = this;
    try {
      if (entry.kind === "request") {
        this.requests++;
        if (entry.body?.sha256 !== undefined && entry.response !== undefined && entry.response.status >= 400) {
          this.skipped++;
          return [];
        }
        const controller = new AbortController();
        const answer = send(emu, entry, controller.signal);
        if (entry.awaited) this.divergences.push(...(await compare(emu, this.recordedBodies, entry, await answer)));
        else this.open.push({ entry, answer, controller });
      } else applyEntry(emu, entry, this.divergences);
      if (entry.kind === "fixture") await emu.applyFixture(documentOrShippedFixture(entry.fixture));
    } catch (error) {
      this.divergences.push({ seq: entry.seq, entry: describe(entry), what: `failed: ${(error as Error).message}` });
    }
    await settle();
    return this.divergences.slice(before);
  }

  /** After the last entry: the requests still open are compared (or let go), then the final state. */
  async finish(): Promise<ReplayReport> {
    const { emu, tape, divergences } = this;
    // Requests that were still open when the tape ended, or answered only later.
    for (const { entry, answer, controller } of this.open.splice(0)) {
      if (!entry.response) {
        controller.abort();
        continue;
      }
      const response = await Promise.race([answer, settle(SETTLE_TURNS * 10).then(() => undefined)]);
      if (!response) divergences.push({ seq: entry.seq, entry: describe(entry), what: "answered in the recording, still waiting in the replay" });
      else divergences.push(...(await compare(emu, this.recordedBodies, entry, response)));
      controller.abort();
    }
    this.close();
    // The final state can be as large as the tape made it: hashed a slice at a time (the same hash as stateHash()).
    const actual = await emu.stateHashInTurns(nextTurn);
    // A truncated tape holds the run up to where it stopped: the run's final state is not what those entries make.
    const truncatedAt = tape.truncated ? (tape.truncation?.seq ?? (tape.entries.at(-1)?.seq ?? 0) + 1) : undefined;
    if (truncatedAt === undefined && actual !== tape.end.stateHash)
      divergences.push({ seq: -1, entry: "end", what: `the final state differs (hash ${tape.end.stateHash} expected, ${actual} after the replay)` });
    return {
      entries: tape.entries.length,
      requests: this.requests,
      divergences,
      stateHash: { expected: tape.end.stateHash, actual },
      ...(truncatedAt !== undefined && { truncatedAt }),
      skipped: this.skipped,
      ok: divergences.length === 0,
    };
  }

  /** Lets go of the requests still open and stops the scratch emulator's clock. */
  close(): void {
    for (const { controller } of this.open.splice(0)) controller.abort();
    this.emu.close();
  }
}

function applyEntry(emu: Standin, entry: Exclude<TapeEntry, TapeRequestEntry>, divergences: Divergence[]): void {
  switch (entry.kind) {
    case "clock":
      if (entry.op === "advance-to") emu.clock.advanceTo(entry.to);
      else emu.clock.setMode(entry.mode, entry.speed);
      return;
    case "action":
      emu.act(entry.do, entry.args);
      return;
    case "restore":
      emu.restore(entry.snapshot);
      return;
    case "fixture":
      return; // applied by the caller (it is asynchronous)
    default:
      divergences.push({ seq: (entry as TapeEntry).seq, entry: "?", what: "unknown entry kind" });
  }
}

function send(emu: Standin, entry: TapeRequestEntry, signal: AbortSignal): Promise<Response> {
  const body = entry.body?.text ?? (entry.body?.base64 !== undefined ? Buffer.from(entry.body.base64, "base64") : undefined);
  // Credentials were written as references (http/redact): this state knows the secrets they stand for.
  const reveal = emu.revealer();
  return Promise.resolve(
    emu
      .app(entry.service as ServiceName)
      .request(reveal.path(entry.path), { method: entry.method, headers: reveal.headers(entry.headers), body: body as BodyInit | undefined, signal }),
  );
}

async function compare(emu: Standin, recordedBodies: RecordedBodies, entry: TapeRequestEntry, response: Response): Promise<Divergence[]> {
  const recorded = entry.response;
  const where = { seq: entry.seq, entry: describe(entry) };
  if (!recorded) return [];
  const out: Divergence[] = [];
  if (recorded.status !== response.status) out.push({ ...where, what: `status ${recorded.status} expected, ${response.status} now` });
  const actualHeaders: Record<string, string> = {};
  // nosniff is on every control answer whatever the state (http/port-app): tapes recorded before it was added still compare.
  const control = entry.path.startsWith("/_standin/");
  response.headers.forEach((value, name) => {
    if (name !== "date" && !(control && name === "x-content-type-options" && recorded.headers[name] === undefined)) actualHeaders[name] = value;
  });
  for (const name of new Set([...Object.keys(recorded.headers), ...Object.keys(actualHeaders)])) {
    const [expected, actual] = [recorded.headers[name], actualHeaders[name]];
    if (expected !== actual) out.push({ ...where, what: `header ${name}: ${headerValue(expected)} expected, ${headerValue(actual)} now` });
  }
  if (recorded.streamed) {
    await response.body?.cancel().catch(() => undefined);
    return out;
  }
  // The tape keeps answers with secrets written as references (http/redact): this state writes its own the same way.
  const bytes = emu.redactedBody(new Uint8Array(await response.arrayBuffer()));
  if (!sameBody(recorded.body, keptBody(bytes))) out.push({ ...where, ...bodyDifference(recorded.body, bytes, await recordedBodies.bytesOf(recorded.body)) });
  return out;
}

function headerValue(value: string | undefined): string {
  return value === undefined ? "none" : JSON.stringify(value);
}

export function describe(entry: TapeEntry): string {
  switch (entry.kind) {
    case "request":
      return `${entry.service} ${entry.method} ${entry.path}`;
    case "clock":
      return entry.op === "advance-to" ? `clock advance-to ${new Date(entry.to).toISOString()}` : `clock mode ${entry.mode}`;
    case "action":
      return `action ${entry.do}`;
    case "fixture":
      return "fixture";
    case "restore":
      return "snapshot restore";
  }
}

async function settle(turns = SETTLE_TURNS): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The report as `standin replay` prints it. */
export function formatReport(report: ReplayReport): string {
  const lines = [`replayed ${report.entries} entries (${report.requests} requests${report.skipped ? `, ${report.skipped} rejected ones kept as a hash not sent` : ""})`];
  if (report.truncatedAt !== undefined)
    lines.push(`the tape was truncated at entry #${report.truncatedAt} (its budget reached): the entries before it were compared, the final state was not`);
  if (report.ok) lines.push(report.truncatedAt !== undefined ? "0 divergences" : `0 divergences; state hash ${report.stateHash.actual} matches`);
  else {
    const first = report.divergences[0]!;
    lines.push(`${report.divergences.length} divergence${report.divergences.length === 1 ? "" : "s"}; the first:`);
    for (const d of report.divergences.slice(0, 20)) {
      lines.push(`  #${d.seq} ${d.entry}: ${d.what}`);
      // The first diverging entry is shown in full (its body's bytes); the rest in a line each.
      if (d.seq === first.seq) for (const detail of d.details ?? []) lines.push(`      ${detail}`);
    }
    if (report.divergences.length > 20) lines.push(`  … and ${report.divergences.length - 20} more`);
  }
  return lines.join("\n");
}
