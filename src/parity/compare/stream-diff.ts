/**
 * Two streamed answers compared by what they carry, not by how it was cut
 * into frames or when: both are what arrived before the recorded cut
 * (standin's stream is read on the virtual clock up to the instant the
 * client stopped reading upstream).
 *
 * - Nomad's event stream (`/v1/event/stream`): the sequence of events, its
 *   heartbeats (`{}`) and the way events were batched into frames left
 *   out. The two sequences are aligned by each event's Topic, Type and Key
 *   (its IDs as paired so far), so one event more or less is one `missing`
 *   or `extra`; aligned events are compared as documents (Index by order,
 *   Payload with IDs and times mapped) at `stream[<n>]…`.
 * - A followed file or log (frames with base64 `Data`, `Offset`,
 *   `FileEvent`): the data decoded and put end to end (`stream.Data`), the
 *   last offset (`stream.Offset`), and the file events (`stream.FileEvents`).
 * - Any other stream of JSON documents: the documents, heartbeats left out,
 *   as a list at `stream`; a text stream (`plain=true`): its text.
 */
import type { TapeBody } from "../../control/tape.js";
import { type BodyDifference, diffJson } from "./json-diff.js";
import { skeleton, uuidsIn } from "./nature.js";
import type { WorldMap } from "./world-map.js";

/** Above this many event pairs the alignment is not searched (it costs their product): events are paired in order. */
const ALIGNMENT_LIMIT = 4_000_000;

export function diffStreams(world: WorldMap, service: string, path: string, recorded: TapeBody | undefined, local: TapeBody | undefined): BodyDifference[] {
  const [r, l] = [recorded?.text ?? (recorded?.bytes ? undefined : ""), local?.text ?? (local?.bytes ? undefined : "")];
  // Kept as bytes or a hash only (not text, or over the body limit): nothing to compare by content.
  if (r === undefined || l === undefined) return [];
  const [rDocs, lDocs] = [jsonSequence(r), jsonSequence(l)];
  if (/^\/v1\/event\/stream(?:\?|$)/.test(path) && rDocs && lDocs) return diffEvents(world, service, eventsOf(rDocs), eventsOf(lDocs));
  if (rDocs && lDocs && [...rDocs, ...lDocs].some(isDataFrame)) return diffFrames(world, service, rDocs, lDocs);
  if (rDocs && lDocs) return diffJson(world, service, rDocs.filter(notHeartbeat), lDocs.filter(notHeartbeat), "stream");
  return diffText(world, service, "stream", r, l);
}

type Json = Record<string, unknown>;

function eventsOf(frames: unknown[]): Json[] {
  return frames.flatMap((frame) => (isObject(frame) && Array.isArray(frame.Events) ? frame.Events.filter(isObject) : []));
}

function diffEvents(world: WorldMap, service: string, recorded: Json[], local: Json[]): BodyDifference[] {
  const out: BodyDifference[] = [];
  for (const [i, j] of align(
    recorded.map((e) => recordedHead(world, e)),
    local.map((e) => localHead(world, e)),
  )) {
    if (j === undefined) out.push({ kind: "missing", at: `stream[${i}]`, recorded: recorded[i!] });
    else if (i === undefined) out.push({ kind: "extra", at: `stream[${j}]`, standin: local[j] });
    else out.push(...diffJson(world, service, recorded[i], local[j], `stream[${i}]`));
  }
  return out;
}

/** What aligns two events: topic, type, namespace and key, the key's IDs put into standin's world where paired (an ID not paired yet matches any such). */
function recordedHead(world: WorldMap, event: Json): string {
  const key = String(event.Key ?? "");
  let known = key;
  for (const id of uuidsIn(key)) known = known.replace(id, world.localIdOf(id) ?? "\u0000id");
  return head(event, known);
}

function localHead(world: WorldMap, event: Json): string {
  const key = String(event.Key ?? "");
  let known = key;
  for (const id of uuidsIn(key)) if (!world.isPairedLocalId(id)) known = known.replace(id, "\u0000id");
  return head(event, known);
}

function head(event: Json, key: string): string {
  return [event.Topic, event.Type, event.Namespace, key].map((part) => String(part ?? "")).join("\u0001");
}

/**
 * The longest common subsequence of two lists of heads, as pairs in order:
 * [i, j] aligned, [i, undefined] only in the first, [undefined, j] only in
 * the second.
 */
export function align(recorded: readonly string[], local: readonly string[]): Array<[number | undefined, number | undefined]> {
  const [n, m] = [recorded.length, local.length];
  if (n * m > ALIGNMENT_LIMIT) return inOrder(n, m);
  // lengths[i][j]: the longest common subsequence of recorded[i..] and local[j..].
  const lengths = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--) lengths[i]![j] = recorded[i] === local[j] ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
  const out: Array<[number | undefined, number | undefined]> = [];
  let [i, j] = [0, 0];
  while (i < n && j < m) {
    if (recorded[i] === local[j]) out.push([i++, j++]);
    else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) out.push([i++, undefined]);
    else out.push([undefined, j++]);
  }
  while (i < n) out.push([i++, undefined]);
  while (j < m) out.push([undefined, j++]);
  return out;
}

function inOrder(n: number, m: number): Array<[number | undefined, number | undefined]> {
  return Array.from({ length: Math.max(n, m) }, (_, k) => [k < n ? k : undefined, k < m ? k : undefined]);
}

/** A followed file's frames: the data end to end, the last offset, the file events. */
function diffFrames(world: WorldMap, service: string, recorded: unknown[], local: unknown[]): BodyDifference[] {
  const [r, l] = [framesContent(recorded), framesContent(local)];
  const out = diffText(world, service, "stream.Data", r.data, l.data);
  if (r.offset !== l.offset) out.push({ kind: "value", at: "stream.Offset", recorded: r.offset, standin: l.offset });
  if (r.events.length > 0 || l.events.length > 0) out.push(...diffJson(world, service, r.events, l.events, "stream.FileEvents"));
  return out;
}

function framesContent(frames: unknown[]): { data: string; offset: number | undefined; events: string[] } {
  const chunks: Buffer[] = [];
  let offset: number | undefined;
  const events: string[] = [];
  for (const frame of frames) {
    if (!isObject(frame)) continue;
    if (typeof frame.Data === "string") chunks.push(Buffer.from(frame.Data, "base64"));
    if (typeof frame.Offset === "number") offset = frame.Offset;
    if (typeof frame.FileEvent === "string" && frame.FileEvent !== "") events.push(frame.FileEvent);
  }
  return { data: Buffer.concat(chunks).toString("utf8"), offset, events };
}

function diffText(world: WorldMap, service: string, at: string, recorded: string, local: string): BodyDifference[] {
  if (world.same("plain", recorded, local, service)) return [];
  const [r, l] = [skeleton(recorded), skeleton(local)];
  let first = 0;
  while (first < r.length && first < l.length && r[first] === l[first]) first++;
  const note = `${Buffer.byteLength(recorded)} bytes upstream, ${Buffer.byteLength(local)} in standin; they part at character ${first}`;
  return [{ kind: "value", at, recorded, standin: local, note }];
}

/**
 * The JSON documents of a stream, one after another (newline-separated or
 * not, as Nomad's frames are), a last one cut short left out; undefined
 * when the text is not such a sequence.
 */
export function jsonSequence(text: string): unknown[] | undefined {
  const out: unknown[] = [];
  let at = 0;
  while (at < text.length) {
    const start = skipSpace(text, at);
    if (start >= text.length) break;
    if (text[start] !== "{" && text[start] !== "[") return undefined;
    const end = endOfValue(text, start);
    if (end === undefined) break; // cut short by the end of the stream
    try {
      out.push(JSON.parse(text.slice(start, end)));
    } catch {
      return undefined;
    }
    at = end;
  }
  return out;
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && (text[at] === " " || text[at] === "\n" || text[at] === "\r" || text[at] === "\t")) at++;
  return at;
}

/** Where the object or array starting at `start` ends (just past it), or undefined when the text ends first. */
function endOfValue(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let at = start; at < text.length; at++) {
    const c = text[at];
    if (inString) {
      if (c === "\\") at++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  return undefined;
}

function isDataFrame(value: unknown): boolean {
  return isObject(value) && ("Data" in value || "Offset" in value || "FileEvent" in value);
}

function notHeartbeat(value: unknown): boolean {
  return !(isObject(value) && Object.keys(value).length === 0);
}

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
