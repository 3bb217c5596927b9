/**
 * Where a replayed answer's body first differs from the recorded one, shown
 * so a person can see it: the byte offset, and a window of both bodies around
 * it with control characters escaped and a caret under the first difference.
 *
 *     body differs at byte 57 (312 bytes expected, 310 now)
 *       expected  …"Name":"client-1","Status":"ready","Drain":false…
 *       now       …"Name":"client-1","Status":"down","Drain":false,…
 *                                               ^
 */
import { createHash } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { bodyBytes, type TapeBody, type TapeEntry } from "./control/tape.js";
import { nextTurn } from "./core/json-stream.js";

/** Bytes of context shown on each side of the first difference. */
export const CONTEXT_BYTES = 40;

export interface BodyDifference {
  /** One line: where the bodies part, and their sizes. */
  readonly what: string;
  /** The two windows and the caret, one line each (none when the tape kept only the body's hash). */
  readonly details: readonly string[];
}

/**
 * `expected` as the tape kept it; `actual` the replay's own bytes (as the tape
 * would keep them: credentials as references); `recorded` the expected bytes
 * where the tape kept only their hash but has them elsewhere (RecordedBodies).
 */
export function bodyDifference(expected: TapeBody | undefined, actual: Uint8Array, recorded = bodyBytes(expected)): BodyDifference {
  const sizes = `${expected?.bytes ?? 0} bytes expected, ${actual.length} now`;
  if (!recorded) return { what: `body differs (${sizes}; the tape kept only the recorded body's sha256, so no bytes can be shown)`, details: [] };
  // Compressed answers are compared as they were sent; where they part is shown in what they say.
  const [inflatedRecorded, inflatedActual] = [gunzipped(recorded), gunzipped(actual)];
  if (inflatedRecorded && inflatedActual) {
    const shown = windows(inflatedRecorded, inflatedActual);
    return { what: `body differs (${sizes}, gzip); unzipped, at byte ${shown.at} (${inflatedRecorded.length} bytes expected, ${inflatedActual.length} now)`, details: shown.lines };
  }
  const shown = windows(recorded, actual);
  return { what: `body differs at byte ${shown.at} (${sizes})`, details: shown.lines };
}

/** Both bodies around their first difference, and a caret under it. */
function windows(recorded: Uint8Array, actual: Uint8Array): { at: number; lines: string[] } {
  const at = firstDifference(recorded, actual);
  const from = Math.max(0, at - CONTEXT_BYTES);
  // The bytes before the difference are the same in both bodies: one rendering, one caret column.
  const before = (from > 0 ? "…" : "") + render(recorded.subarray(from, at));
  const window = (bytes: Uint8Array) => {
    const after = bytes.subarray(at, at + CONTEXT_BYTES);
    const rest = after.length === 0 ? "(end)" : render(after) + (at + CONTEXT_BYTES < bytes.length ? "…" : "");
    return before + rest;
  };
  return { at, lines: [`expected  ${window(recorded)}`, `now       ${window(actual)}`, `          ${" ".repeat(before.length)}^`] };
}

/** The body unzipped, when it is gzip (by its magic bytes; the answer's headers are compared on their own). */
function gunzipped(bytes: Uint8Array): Uint8Array | undefined {
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return undefined;
  try {
    return gunzipSync(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The bytes of a body the tape kept as a hash: a body sent again is written in
 * full once, then as its sha256, so the full one is found by its hash.
 */
export class RecordedBodies {
  private byHash: Promise<Map<string, Uint8Array>> | undefined;

  constructor(
    private readonly entries: readonly TapeEntry[],
    /** A turn of the event loop, given between slices of the index (a parameter so a test can count them). */
    private readonly turn: () => Promise<void> = nextTurn,
  ) {}

  async bytesOf(body: TapeBody | undefined): Promise<Uint8Array | undefined> {
    const kept = bodyBytes(body);
    if (kept || body?.sha256 === undefined) return kept;
    // Indexed on the first divergence only: a replay that matches never pays for it.
    this.byHash ??= this.index();
    return (await this.byHash).get(body.sha256);
  }

  /** Every body the tape kept whole, by its sha256: a tape holds up to 64 MiB of them, hashed a slice at a time with turns between. */
  private async index(): Promise<Map<string, Uint8Array>> {
    const byHash = new Map<string, Uint8Array>();
    let work = 0;
    for (const entry of this.entries) {
      if (entry.kind !== "request") continue;
      for (const body of [entry.body, entry.response?.body]) {
        const bytes = body?.sha256 === undefined ? bodyBytes(body) : undefined;
        if (bytes && bytes.length > 0) byHash.set(createHash("sha256").update(bytes).digest("hex"), bytes);
        work += INDEX_ENTRY_COST + (bytes?.length ?? 0);
      }
      if (work >= INDEX_SLICE_BYTES) {
        work = 0;
        await this.turn();
      }
    }
    return byHash;
  }
}

/** Bytes of bodies decoded and hashed between two turns of the event loop (a few milliseconds). */
export const INDEX_SLICE_BYTES = 1024 * 1024;
/** What looking at a body costs besides its bytes, counted as bytes: a tape of 200 000 empty bodies still gets its turns. */
const INDEX_ENTRY_COST = 256;

/** The offset of the first byte that differs (the shorter body's length when it is the other's start). */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) if (a[i] !== b[i]) return i;
  return length;
}

const ESCAPES: Record<number, string> = { 9: "\\t", 10: "\\n", 13: "\\r" };
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Bytes as text on one line: printable ASCII and whole UTF-8 characters as
 * they are; control characters as `\n`, `\r`, `\t` or `\xNN` (C1 and line
 * separators as `\uNNNN`); a byte that is not part of a whole character
 * (binary, or a character the window cuts) as `\xNN`.
 */
export function render(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; ) {
    const byte = bytes[i]!;
    if (byte < 0x80) {
      out += ESCAPES[byte] ?? (byte < 0x20 || byte === 0x7f ? hexByte(byte) : String.fromCharCode(byte));
      i++;
      continue;
    }
    const length = byte >= 0xc2 && byte <= 0xdf ? 2 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xf0 && byte <= 0xf4 ? 4 : 0;
    const char = length > 0 && i + length <= bytes.length ? decodeOne(bytes.subarray(i, i + length)) : undefined;
    if (char === undefined) {
      out += hexByte(byte);
      i++;
    } else {
      out += /[\u0080-\u009f\u2028\u2029]/.test(char) ? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}` : char;
      i += length;
    }
  }
  return out;
}

function decodeOne(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function hexByte(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, "0")}`;
}
