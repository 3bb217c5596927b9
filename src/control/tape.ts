/**
 * Record and replay: since the last reset, every request to a service port
 * (with its answer), every clock move and mode change, and every state change
 * made in process or through the control API, in arrival order, plus what
 * the run started from (seed, start fixtures, clock). `GET /_standin/tape`
 * exports it; `standin replay <tape>` (replayTape) runs it against a fresh
 * emulator and compares every answer and the final state hash, so a failing
 * CI run becomes a reproducible file.
 *
 * Clock moves are recorded as absolute instants (`advance-to`), whoever
 * asked for them (advance, next, await, idle skipping), and the replayed
 * emulator runs without idle skipping: the recorded moves are the skips.
 *
 * Concurrency: a request that answered before the next entry arrived is
 * replayed to completion before going on; one that was still open (a parked
 * blocking query, an event stream) is started and left open, as it was.
 */
import { createHash } from "node:crypto";
import type { ClockMode, ClockOperation } from "../core/clock.js";
import { pathAndQuery } from "../http/routing.js";
import { LazyArray } from "../core/json-stream.js";
import { LastMade, sameBytes } from "../core/repeats.js";
import type { Redactor } from "../http/redact.js";
// A rejected request's body above this is kept as a hash only: it changed nothing, so a replay need not send it again.
import { REJECTED_BODY_BYTES } from "../http/middleware.js";
import { knownRequestBody, knownResponseBody, knownResponseHeaders, requestHeader, requestHeaderRecord } from "../http/known-bodies.js";

export const TAPE_VERSION = 1;
/** Entries kept per tape; a longer run keeps recording nothing more and says so. */
export const TAPE_CAPACITY = 200_000;
/** What a tape holds at most, in bytes of bodies, paths and headers (`--tape-bytes`); past it, it records nothing more and says where it stopped. */
export const DEFAULT_TAPE_BYTES = 24 * 1024 * 1024;
/** Bodies above this are kept as a hash and a length only. */
const MAX_BODY_BYTES = 1 << 20;
/** What an entry costs besides its strings and bodies (its objects and the answer's record; measured: ~450 bytes of heap per small request). */
export const ENTRY_OVERHEAD = 450;

/** Request headers that describe the connection, not the request. */
const SKIPPED_REQUEST_HEADERS = new Set(["host", "connection", "keep-alive", "content-length", "transfer-encoding", "user-agent", "accept"]);

export interface TapeBody {
  readonly text?: string;
  readonly base64?: string;
  /** For bodies too large to keep. */
  readonly sha256?: string;
  readonly bytes: number;
}

export interface TapeRequestEntry {
  readonly kind: "request";
  readonly seq: number;
  readonly service: string;
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: Record<string, string>;
  body?: TapeBody;
  /** True when the answer came before the next entry arrived. */
  awaited: boolean;
  response?: { status: number; headers: Record<string, string>; body?: TapeBody; streamed?: boolean };
}

export type TapeEntry =
  | TapeRequestEntry
  | { kind: "clock"; seq: number; op: "advance-to"; to: number }
  | { kind: "clock"; seq: number; op: "mode"; mode: ClockMode; speed: number }
  | { kind: "action"; seq: number; do: string; args: Record<string, unknown> }
  | { kind: "fixture"; seq: number; fixture: unknown }
  | { kind: "restore"; seq: number; snapshot: unknown };

export interface TapeStart {
  readonly seed: number;
  readonly fixtures: readonly unknown[];
  readonly clock: { readonly startMs: number; readonly mode: ClockMode; readonly speed: number };
  readonly compatHeaders: boolean;
  /** Recorded over HTTPS (only present when true): the echo description declares the https scheme. */
  readonly tls?: true;
  readonly stateHash: string;
}

/** Where and why a tape stopped recording. */
export interface TapeTruncation {
  /** The first sequence number not on the tape. */
  readonly seq: number;
  readonly reason: "entries" | "bytes";
  /** The cap that was reached (entries, or bytes). */
  readonly limit: number;
}

export interface Tape {
  readonly standinTape: number;
  readonly start: TapeStart;
  readonly entries: readonly TapeEntry[];
  readonly truncated: boolean;
  /** Present when truncated. */
  readonly truncation?: TapeTruncation;
  readonly end: { readonly stateHash: string; readonly index: number };
}

type Entry = TapeEntry;

/**
 * Bodies in hand are kept on their entry as they are (shared, not copied)
 * and turned into their tape form only on export: most tapes are never
 * exported. (Symbol keys: JSON and the export leave them out.)
 */
const HELD_REQUEST = Symbol("held request body");
const HELD_RESPONSE = Symbol("held response body");
type Holding = TapeRequestEntry & { [HELD_REQUEST]?: Uint8Array; [HELD_RESPONSE]?: string | Uint8Array };

export class TapeRecorder {
  /** The start, its hash computed only when a tape is exported (hashing the state on every reset would cost more than the reset). */
  private start: (Omit<TapeStart, "stateHash"> & { stateHash: () => string }) | undefined;
  private entries: Entry[] = [];
  private pending: Promise<unknown>[] = [];
  private nextSeq = 1;
  private truncation: TapeTruncation | undefined;
  private paused = 0;
  /** Bytes held (see ENTRY_OVERHEAD, `charge`). */
  private held = 0;
  /** The last response body held: an answer sent again is the same string, held once. */
  private lastResponse: string | Uint8Array | undefined;
  /** What the tape holds of the last response body (redacted, copied). */
  private lastHeld: string | Uint8Array | undefined;
  /** The copy held of the last request body held. */
  private lastRequestHeld: Uint8Array | undefined;
  private readonly arena = new ByteArena();
  /** Answers' bytes as they came → the copy held of them. */
  private copies = new WeakMap<Uint8Array, Uint8Array>();
  /** Writes credentials as references (set once the services exist). */
  redact: Redactor | undefined;

  constructor(
    private enabledNow: boolean,
    /** The byte budget (`--tape-bytes`). */
    public budget = DEFAULT_TAPE_BYTES,
  ) {}

  get enabled(): boolean {
    return this.enabledNow;
  }

  private set enabled(on: boolean) {
    this.enabledNow = on;
  }

  /** Bytes held by the tape so far. */
  get bytes(): number {
    return this.held;
  }

  get truncated(): boolean {
    return this.truncation !== undefined;
  }

  /**
   * Turns recording on or off. Off takes effect at once; on, at the next
   * tape (the next reset): a tape begun mid-run could not be replayed.
   */
  turn(on: boolean): void {
    if (!on) this.enabled = false;
    this.onAtNextBegin = on;
  }

  private onAtNextBegin = false;

  /** How many tapes have begun: a reader following the tape (the dashboard) knows a new one from a grown one. */
  get generation(): number {
    return this.begun;
  }

  private begun = 0;

  /** A new tape (start, or reset): what the run starts from. */
  begin(start: Omit<TapeStart, "stateHash"> & { stateHash: () => string }): void {
    this.begun++;
    if (this.onAtNextBegin) this.enabled = true;
    this.onAtNextBegin = false;
    this.start = start;
    this.entries = [];
    this.pending = [];
    this.nextSeq = 1;
    this.truncation = undefined;
    this.held = 0;
    this.lastResponse = undefined;
    this.lastHeld = undefined;
    this.lastRequestHeld = undefined;
    this.arena.clear();
    this.copies = new WeakMap();
    this.lastHeaders.request = this.lastHeaders.response = undefined;
  }

  /** Runs `fn` without recording what it does (the tape's own bookkeeping, replays). */
  quietly<T>(fn: () => T): T {
    this.paused++;
    try {
      return fn();
    } finally {
      this.paused--;
    }
  }

  clock(operation: ClockOperation): void {
    this.append(
      operation.op === "advance-to"
        ? { kind: "clock", seq: 0, op: "advance-to", to: operation.to }
        : { kind: "clock", seq: 0, op: "mode", mode: operation.mode, speed: operation.speed },
    );
  }

  action(name: string, args: Record<string, unknown>): void {
    this.append({ kind: "action", seq: 0, do: name, args: structuredClone(args) }, JSON.stringify(args).length);
  }

  /** `owned`: a document handed over (parsed for its request alone), kept as it is instead of copied; `bytes`: its size as sent, if known. */
  fixture(document: unknown, owned = false, bytes?: number): void {
    this.append({ kind: "fixture", seq: 0, fixture: owned ? document : structuredClone(document) }, bytes ?? JSON.stringify(document)?.length ?? 0);
  }

  /**
   * `owned`: the emulator's own copy of the document (its rows frozen), kept as it is instead of copied again.
   * Not charged to the budget: the document's rows are the state's own until the state changes them.
   */
  restore(snapshot: unknown, owned = false): void {
    this.append({ kind: "restore", seq: 0, snapshot: owned ? snapshot : structuredClone(snapshot) });
  }

  /**
   * A request arrived at a service port; returns what to call with its
   * answer, which gives back the response to send in its place (see below).
   */
  request(service: string, request: Request, journaled = false): ((response: Response | undefined) => Response | Promise<Response> | undefined) | undefined {
    // A full tape records nothing more: nothing to make for it.
    if (!this.enabled || this.paused > 0 || this.truncation) return undefined;

    const kept = keptRequestHeaders.get(requestHeaderRecord(request));
    const last = this.lastHeaders.request;
    const headers = this.sameAsLast(this.redact?.headers(kept) ?? kept, "request");
    const path = this.writtenPath(request.url);
    const entry: TapeRequestEntry = { kind: "request", seq: 0, service, method: request.method, path, headers, awaited: false };
    if (!this.append(entry, entry.path.length + (headers === last ? 0 : recordSize(headers)))) return undefined;
    const bodyNoted = this.readRequestBody(entry, request, journaled);
    return (response) => {
      // Answered before anything else reached the tape: replayed to completion before going on.
      entry.awaited = this.nextSeq === entry.seq + 1;
      if (bodyNoted) this.keepNotedBody(entry, request, response?.status ?? 500);
      if (!response) return undefined;
      let responseHeaders: Record<string, string>;
      const knownHeaders = knownResponseHeaders(response);
      if (knownHeaders && !("date" in knownHeaders)) {
        // A replayed answer's record, never changed: shared by every entry of that answer.
        responseHeaders = knownHeaders as Record<string, string>;
      } else {
        const fresh: Record<string, string> = {};
        if (knownHeaders) {
          for (const name in knownHeaders) if (name !== "date") fresh[name] = knownHeaders[name]!;
        } else {
          response.headers.forEach((value, name) => {
            if (name !== "date") fresh[name] = value;
          });
        }
        responseHeaders = this.sameAsLast(fresh, "response");
      }
      const known = knownResponseBody(response);
      if (known !== undefined) {
        entry.response = { status: response.status, headers: responseHeaders };
        if (known !== null) this.holdResponse(entry, known);
        return undefined;
      }
      // An event stream never ends: keep its status and headers only.
      const streamed = response.headers.get("transfer-encoding") === "chunked";
      entry.response = { status: response.status, headers: responseHeaders, ...(streamed ? { streamed: true } : {}) };
      if (streamed || response.body === null) return undefined;
      // Read the answer once and send a buffered copy of it: cloning would tee the body into two
      // streams, and @hono/node-server would then stream the one it sends instead of writing it at once.
      const { status, statusText, headers } = response;
      const sent = response.arrayBuffer().then((buffer) => {
        const sentBytes = new Uint8Array(buffer);
        const bytes = this.redact ? this.redact.body(sentBytes) : sentBytes;
        const body = this.charge(bytes.length) ? keptBody(bytes) : digestOf(bytes);
        entry.response = { ...entry.response!, body };
        return new Response(sentBytes, { status, statusText, headers });
      });
      this.track(sent);
      return sent;
    };
  }

  private lastPath: { url: string; path: string; redact: Redactor } | undefined;

  /**
   * A request's path and query as the tape writes them. A client sending the
   * same URL again gets the last entry's string (core/repeats), one string
   * kept instead of one per entry; a path the redactor changes is made anew
   * each time (what it writes for a secret may depend on the state).
   */
  private writtenPath(url: string): string {
    const last = this.lastPath;
    const redact = this.redact;
    if (last !== undefined && last.url === url && last.redact === redact) return last.path;
    const path = pathAndQuery(url);
    if (!redact) return path;
    const written = redact.path(path);
    if (written === path) this.lastPath = { url, path, redact };
    return written;
  }

  /**
   * Where the request's body will come from. A service request that states
   * its length is read by the request journal, which notes the bytes
   * (http/known-bodies), so the tape takes them from there once answered
   * (returns true). Any other body (a control request, one without a length,
   * as in-process requests are) is read here from a clone.
   */
  private readRequestBody(entry: TapeRequestEntry, request: Request, journaled: boolean): boolean {
    if (request.method === "GET" || request.method === "HEAD") return false;
    if (journaled && requestHeader(request, "content-length") !== undefined) return true;
    if (request.body !== null)
      this.track(
        bodyOf(request.clone()).then(
          (body) => (entry.body = body.sha256 !== undefined || this.charge(body.bytes) ? body : { sha256: sha256Of(bodyBytes(body)!), bytes: body.bytes }),
        ),
      );
    return false;
  }

  /**
   * A request body read by the journal: held as it is while the budget
   * allows; one too large to keep (or a large rejected one) as its hash.
   */
  private keepNotedBody(entry: TapeRequestEntry, request: Request, status: number): void {
    const bytes = knownRequestBody(request);
    if (bytes === undefined || bytes.length === 0) return;
    const tooLarge = bytes.length > MAX_BODY_BYTES || (status >= 400 && bytes.length > REJECTED_BODY_BYTES);
    // The same body as the last one held (a client sending the same write again) is held once.
    const last = this.lastRequestHeld;
    if (!tooLarge && last !== undefined && sameBytes(bytes, last)) (entry as Holding)[HELD_REQUEST] = last;
    else if (!tooLarge && this.charge(bytes.length)) (entry as Holding)[HELD_REQUEST] = this.lastRequestHeld = this.arena.copy(bytes);
    else entry.body = digestOf(bytes);
  }

  /** An answer's body in hand: held while the budget allows (the same body as the last answer's costs nothing more), else its hash. */
  private holdResponse(entry: TapeRequestEntry, body: string | Uint8Array): void {
    // An answer sent again (a polled read answered from the cache) is the very same object: redacted, copied,
    // held and charged once.
    const again = body === this.lastResponse ? this.lastHeld : typeof body === "string" ? undefined : this.copies.get(body);
    if (again !== undefined) {
      (entry as Holding)[HELD_RESPONSE] = again;
      return;
    }
    const redacted = this.redact ? this.redact.body(body) : body;
    if (!this.charge(redacted.length)) {
      entry.response = { ...entry.response!, body: digestOf(redacted) };
      return;
    }
    const held: string | Uint8Array = typeof redacted === "string" ? redacted : this.arena.copy(redacted);
    if (typeof body !== "string") this.copies.set(body, held as Uint8Array);
    (entry as Holding)[HELD_RESPONSE] = held;
    this.lastResponse = body;
    this.lastHeld = held;
  }

  /**
   * Takes `bytes` from the budget; false (and the tape ends after the
   * entries it has) when they do not fit.
   */
  private charge(bytes: number): boolean {
    if (this.held + bytes > this.budget) {
      this.truncate("bytes");
      return false;
    }
    this.held += bytes;
    return true;
  }

  private truncate(reason: TapeTruncation["reason"]): void {
    this.truncation ??= { seq: this.nextSeq, reason, limit: reason === "bytes" ? this.budget : TAPE_CAPACITY };
  }

  /** The tape so far (waits for bodies still being read). */
  async export(end: { stateHash: string; index: number }): Promise<Tape> {
    const tape = await this.exportLazily(end);
    const entries = Array.from({ length: tape.entries.length }, (_, i) => tape.entries.item(i));
    return { ...tape, entries };
  }

  /**
   * The tape so far with its entries made one by one, in order, as they are
   * written (core/json-stream): `GET /_standin/tape` streams it. The
   * entries are those recorded when the export began.
   */
  async exportLazily(end: { stateHash: string; index: number }): Promise<Omit<Tape, "entries"> & { entries: LazyArray<TapeEntry> }> {
    if (!this.start) throw new Error("the tape has not begun");
    await Promise.all(this.pending);
    // An answer sent again (a polled list, a replayed read) is the very same string or bytes: written in
    // full once, then as its hash. A long polling run would otherwise write the same body thousands of
    // times, past the longest string JSON can be made into.
    const written = new Map<string | Uint8Array, { full: TapeBody; hashed?: TapeBody }>();
    const once = (body: string | Uint8Array): TapeBody => {
      const seen = written.get(body);
      if (!seen) {
        const full = keptBody(body);
        written.set(body, { full });
        return full;
      }
      seen.hashed ??= seen.full.sha256 !== undefined ? seen.full : { sha256: sha256Of(bodyBytes(seen.full)!), bytes: seen.full.bytes };
      return { ...seen.hashed };
    };
    const recorded = this.entries.slice();
    const entries = new LazyArray(recorded.length, (i): TapeEntry => {
      const e = recorded[i]!;
      if (e.kind !== "request") return { ...e };
      const { [HELD_REQUEST]: request, [HELD_RESPONSE]: response, ...entry } = e as Holding;
      // Entries share header records while recording (see sameAsLast); each exported entry gets its own.
      return {
        ...entry,
        headers: { ...entry.headers },
        ...(request !== undefined ? { body: keptBody(request) } : {}),
        ...(entry.response ? { response: { ...entry.response, headers: { ...entry.response.headers }, ...(response !== undefined ? { body: once(response) } : {}) } } : {}),
      };
    });
    const truncation = this.truncation;
    return {
      standinTape: TAPE_VERSION,
      start: { ...this.start, stateHash: this.start.stateHash() },
      entries,
      truncated: truncation !== undefined,
      ...(truncation && { truncation: { ...truncation } }),
      end,
    };
  }

  get length(): number {
    return this.entries.length;
  }

  /** Appends an entry costing `bytes` (besides ENTRY_OVERHEAD); false when the tape is off, paused or full. */
  private append(entry: Entry, bytes = 0): boolean {
    if (!this.enabled || this.paused > 0 || !this.start) return false;
    if (this.truncation) return false;
    if (this.entries.length >= TAPE_CAPACITY) {
      this.truncate("entries");
      return false;
    }
    if (!this.charge(ENTRY_OVERHEAD + bytes)) return false;
    (entry as { seq: number }).seq = this.nextSeq++;
    this.entries.push(entry);
    return true;
  }

  /**
   * A client sends the same headers request after request, and gets the same
   * headers back: an entry shares the previous entry's record when it is
   * equal, so a long polling run keeps one record instead of one per entry.
   */
  private sameAsLast(record: Record<string, string>, which: "request" | "response"): Record<string, string> {
    const last = this.lastHeaders[which];
    if (last && sameRecord(last, record)) return last;
    this.lastHeaders[which] = record;
    return record;
  }

  private readonly lastHeaders: { request?: Record<string, string>; response?: Record<string, string> } = {};

  private track(promise: Promise<unknown>): void {
    this.pending.push(promise.catch(() => undefined));
  }
}

function recordSize(record: Record<string, string>): number {
  let size = 0;
  for (const name in record) size += name.length + record[name]!.length + 16;
  return size;
}

/**
 * Where the tape keeps the bytes of the bodies it holds: copied end to end
 * into 1 MiB slabs, freed together when a new tape begins. Holding each body
 * as it came would keep a small Buffer's whole 8 KiB pool slab (or a larger
 * read) alive, and copying each into an allocation of its own costs the
 * allocator several times the bytes over a long run.
 */
class ByteArena {
  private static readonly SLAB = 1 << 20;
  private slab = new Uint8Array(0);
  private used = 0;

  copy(bytes: Uint8Array): Uint8Array {
    if (bytes.length > ByteArena.SLAB / 4) return new Uint8Array(bytes); // a large body: its own allocation, exactly its size
    if (this.used + bytes.length > this.slab.length) {
      this.slab = new Uint8Array(ByteArena.SLAB);
      this.used = 0;
    }
    const view = this.slab.subarray(this.used, this.used + bytes.length);
    view.set(bytes);
    this.used += bytes.length;
    return view;
  }

  clear(): void {
    this.slab = new Uint8Array(0);
    this.used = 0;
  }
}

/** A body kept as its hash and length only. */
function digestOf(body: string | Uint8Array): TapeBody {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return { sha256: sha256Of(bytes), bytes: bytes.length };
}

/** A request's headers as the tape keeps them: without those that say how it was sent (made once for a repeated record, core/repeats). */
const keptRequestHeaders = new LastMade(
  (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) => a === b,
  (all: Readonly<Record<string, string>>) => {
    const kept: Record<string, string> = {};
    for (const name in all) if (!SKIPPED_REQUEST_HEADERS.has(name)) kept[name] = all[name]!;
    return Object.freeze(kept);
  },
);

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  if (a === b) return true;
  let count = 0;
  for (const name in b) {
    if (a[name] !== b[name]) return false;
    count++;
  }
  return count === Object.keys(a).length;
}

/** A body as the tape keeps it: UTF-8 text when it is text, else base64; large ones as a hash. */
export async function bodyOf(message: Request | Response): Promise<TapeBody> {
  return keptBody(new Uint8Array(await message.arrayBuffer()));
}

export function keptBody(body: Uint8Array | string): TapeBody {
  // A well-formed string is sent as its UTF-8 encoding, so it is kept as it is, without a copy.
  if (typeof body === "string" && body.isWellFormed() && body.length <= MAX_BODY_BYTES / 3) return { text: body, bytes: Buffer.byteLength(body, "utf8") };
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  if (bytes.length > MAX_BODY_BYTES) return { sha256: sha256Of(bytes), bytes: bytes.length };
  const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
  const roundTrips = Buffer.from(text, "utf8").equals(Buffer.from(bytes));
  return roundTrips ? { text, bytes: bytes.length } : { base64: Buffer.from(bytes).toString("base64"), bytes: bytes.length };
}

/** The raw bytes of a kept body (undefined when only its hash was kept). */
export function bodyBytes(body: TapeBody | undefined): Uint8Array | undefined {
  if (!body) return new Uint8Array();
  if (body.text !== undefined) return Buffer.from(body.text, "utf8");
  if (body.base64 !== undefined) return Buffer.from(body.base64, "base64");
  return undefined;
}

/** Two kept bodies are the same (by bytes, or by hash where one was kept as a hash). */
export function sameBody(expected: TapeBody | undefined, actual: TapeBody | undefined): boolean {
  if (!expected || !actual) return (expected?.bytes ?? 0) === (actual?.bytes ?? 0);
  if (expected.bytes !== actual.bytes) return false;
  if (expected.sha256 || actual.sha256) return hashOf(expected) === hashOf(actual);
  return Buffer.from(bodyBytes(expected)!).equals(Buffer.from(bodyBytes(actual)!));
}

function hashOf(body: TapeBody): string {
  return body.sha256 ?? sha256Of(bodyBytes(body)!);
}

function sha256Of(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
