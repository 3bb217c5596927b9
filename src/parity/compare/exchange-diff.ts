/**
 * One exchange compared: the upstream's recorded answer against standin's
 * answer to the same request (mapped into its world). What matters of an
 * answer: its status; the headers a client acts on (the index headers
 * present and moving as the upstream's do, the content type, known-leader);
 * its body as JSON paths (json-diff.ts), or as text; a streamed body by
 * what it carries (stream-diff.ts).
 */
import type { TapeBody } from "../../control/tape.js";
import { isIndexHeader } from "./nature.js";
import { type BodyDifference, diffJson } from "./json-diff.js";
import { diffStreams } from "./stream-diff.js";
import type { WorldMap } from "./world-map.js";

export type DifferenceKind =
  | BodyDifference["kind"]
  | "status"
  | "header"
  /** A route in standin's catalog it does not emulate: its 501. */
  | "not-emulated"
  /** A path in no catalog: standin's 404 where the upstream answered. */
  | "unknown-path"
  /** The upstream answered; standin still had not when the recording's answer time had passed. */
  | "unanswered";

/** A difference at one place of one exchange's answer. */
export interface ExchangeDifference {
  readonly kind: DifferenceKind;
  /** `status`, `headers.<name>`, a JSON path (`$.Allocations[0].ID`), or `route`. */
  readonly at: string;
  readonly recorded?: unknown;
  readonly standin?: unknown;
  readonly note?: string;
}

/** An answer as both sides are kept for the comparison and the report. */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: TapeBody;
  readonly streamed?: boolean;
}

/** Headers a client acts on besides the index ones. */
const COMPARED_HEADERS = ["content-type", "x-nomad-knownleader", "x-consul-knownleader"];

/** `path`: the recorded request's path and query (a stream is compared by what its route carries). */
export function diffExchange(world: WorldMap, service: string, path: string, recorded: Answer, local: Answer): ExchangeDifference[] {
  const out: ExchangeDifference[] = [];
  if (recorded.status !== local.status) out.push({ kind: "status", at: "status", recorded: recorded.status, standin: local.status });
  for (const name of new Set([...Object.keys(recorded.headers), ...Object.keys(local.headers)])) {
    if (!isIndexHeader(name)) continue;
    const [r, l] = [recorded.headers[name], local.headers[name]];
    if (r === undefined || l === undefined) out.push(headerDifference(name, r, l));
    else if (!/^\d+$/.test(r) || !/^\d+$/.test(l) || !world.sameIndex(service, r, l))
      out.push({ ...headerDifference(name, r, l), note: "the index moves differently (it rises, or stays, where the upstream's does not)" });
  }
  for (const name of COMPARED_HEADERS) {
    const [r, l] = [normalized(recorded.headers[name]), normalized(local.headers[name])];
    if (r !== l) out.push(headerDifference(name, recorded.headers[name], local.headers[name]));
  }
  // A stream's body is what arrived before the client stopped reading: standin's was read up to the same instant, and
  // compared by what it carries (stream-diff.ts); with another status it carries something else, said by the status.
  if (recorded.streamed) return recorded.status === local.status ? [...out, ...diffStreams(world, service, path, recorded.body, local.body)] : out;
  // An answer the upstream ended that standin still streams: its body is not whole, so not compared.
  if (local.streamed) return out;
  out.push(...diffBodies(world, service, recorded.body, local.body));
  return out;
}

function diffBodies(world: WorldMap, service: string, recorded: TapeBody | undefined, local: TapeBody | undefined): ExchangeDifference[] {
  const [r, l] = [textOf(recorded), textOf(local)];
  if (r === undefined || l === undefined) {
    // Kept as a hash or as bytes: equal bytes or a difference at the root.
    const same = (recorded?.sha256 ?? recorded?.base64 ?? r) === (local?.sha256 ?? local?.base64 ?? l) && recorded?.bytes === local?.bytes;
    return same ? [] : [{ kind: "value", at: "$", note: `the bodies differ (${recorded?.bytes ?? 0} bytes upstream, ${local?.bytes ?? 0} in standin; not text)` }];
  }
  const [rJson, lJson] = [parseJson(r), parseJson(l)];
  if (rJson.ok && lJson.ok) return diffJson(world, service, rJson.value, lJson.value);
  if (world.same("plain", r, l, service)) return [];
  return [{ kind: "value", at: "$", recorded: r, standin: l }];
}

function headerDifference(name: string, recorded: string | undefined, local: string | undefined): ExchangeDifference {
  return { kind: "header", at: `headers.${name}`, recorded: recorded ?? null, standin: local ?? null };
}

function normalized(value: string | undefined): string | undefined {
  return value?.toLowerCase().replace(/\s+/g, "");
}

function textOf(body: TapeBody | undefined): string | undefined {
  if (!body) return "";
  return body.text;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === "") return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
