/**
 * Whether a document is a tape standin can replay (`standin replay`, the
 * dashboard's tape viewer). A tape can hold 200 000 entries: checking them
 * all in one step held every port for a few hundred milliseconds when the
 * dashboard opened one, so `checkTape` checks the entries a slice at a time
 * with a turn of the event loop between slices. Its verdict and its error's
 * words are those of the whole check (`parseTape`): the same issues, in the
 * same order, with the same paths.
 */
import * as v from "valibot";
import { TAPE_VERSION, type Tape } from "./control/tape.js";
import { nextTurn } from "./core/json-stream.js";
import { describeIssues } from "./core/validation.js";

export class TapeError extends Error {}

/** Entries checked in one turn of the event loop (a few milliseconds of work on a loaded machine). */
export const TAPE_CHECK_SLICE = 2_000;

const entryShape = v.looseObject({ kind: v.picklist(["request", "clock", "action", "fixture", "restore"]), seq: v.number() });
const entriesShape = v.array(entryShape);

const tapeShape = v.looseObject({
  standinTape: v.literal(TAPE_VERSION),
  start: v.looseObject({
    seed: v.number(),
    fixtures: v.array(v.unknown()),
    clock: v.looseObject({ startMs: v.number(), mode: v.picklist(["manual", "auto", "realtime"]), speed: v.number() }),
    compatHeaders: v.boolean(),
    stateHash: v.string(),
  }),
  entries: entriesShape,
  truncated: v.boolean(),
  truncation: v.optional(v.looseObject({ seq: v.number(), reason: v.string(), limit: v.number() })),
  end: v.looseObject({ stateHash: v.string(), index: v.number() }),
});

/** The tape's keys in the order the check visits them: issues are listed in this order. */
const KEY_ORDER = Object.keys(tapeShape.entries);

type Issue = v.BaseIssue<unknown>;

/** Checks a document is a tape standin can replay, in one step; throws TapeError saying why not. */
export function parseTape(document: unknown): Tape {
  const parsed = v.safeParse(tapeShape, document);
  return accepted(document, parsed.success ? [] : parsed.issues);
}

/**
 * `parseTape` a slice of entries per turn of the event loop (`turn`, a
 * parameter so a test can count the slices): the rest of the document is
 * checked first with its entries left out, then the entries, and the issues
 * are put back in the order the whole check lists them.
 */
export async function checkTape(document: unknown, turn: () => Promise<void> = nextTurn): Promise<Tape> {
  if (!isRecord(document) || !Array.isArray(document.entries)) return parseTape(document);
  const entries: unknown[] = document.entries;
  // The keys the check reads, the entries left out (a key the tape does not have stays missing: valibot names a missing key).
  const rest: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (key in document) rest[key] = key === "entries" ? [] : document[key];
  const head = v.safeParse(tapeShape, rest);
  const headIssues = head.success ? [] : head.issues;
  const entryIssues: Issue[] = [];
  for (let from = 0; from < entries.length; from += TAPE_CHECK_SLICE) {
    if (from > 0) await turn();
    const slice = v.safeParse(entriesShape, entries.slice(from, from + TAPE_CHECK_SLICE));
    if (!slice.success) for (const issue of slice.issues) entryIssues.push(underEntries(issue, document, entries, from));
  }
  // The whole check visits the keys in KEY_ORDER: the issues before `entries`, the entries', then the rest.
  const at = (issue: Issue) => KEY_ORDER.indexOf(String(issue.path?.[0]?.key));
  const entriesAt = KEY_ORDER.indexOf("entries");
  return accepted(document, [...headIssues.filter((i) => at(i) < entriesAt), ...entryIssues, ...headIssues.filter((i) => at(i) > entriesAt)]);
}

function accepted(document: unknown, issues: readonly Issue[]): Tape {
  if (issues.length > 0) throw new TapeError(`not a standin tape: ${describeIssues(issues).join("; ")}`);
  const tape = document as Tape;
  if (tape.start.clock.mode === "realtime") throw new TapeError("the tape was recorded with the realtime clock, which no replay can repeat: record with the manual or auto clock");
  return tape;
}

/** An issue found in a slice of the entries, with the path the whole check gives it: `entries`, then the entry's index in the tape. */
function underEntries(issue: Issue, document: Record<string, unknown>, entries: unknown[], from: number): Issue {
  const [item, ...rest] = issue.path ?? [];
  const entriesItem = { type: "object", origin: "value", input: document, key: "entries", value: entries } as const;
  const path = item ? [entriesItem, { ...item, key: (item.key as number) + from }, ...rest] : [entriesItem];
  return { ...issue, path: path as unknown as Issue["path"] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
