/**
 * What identifies an element of a list, so two answers' lists can be
 * matched thing by thing instead of place by place: one job more upstream
 * is one `missing` job, not a value difference at every later position.
 *
 * An element's identity is the first of a few well-known fields (or field
 * pairs) that every element of both lists carries and that no two elements
 * of either list share: `ID`, `AccessorID`, `Node`+`CheckID`,
 * `Node`+`ServiceID`, `Key`, `Path`, `Name`, `Node`. A list of distinct
 * strings of different lengths is its own identity (of the same length, a
 * changed string is a `value` at its place). Lists with none are compared
 * by position.
 */
import { natureOf, type Nature } from "./nature.js";

/** Field sets in the order they are tried: the most specific first, so a catalog entry's node `ID` shared by two services loses to `Node`+`ServiceID`. */
const IDENTITY_FIELDS: readonly (readonly string[])[] = [["ID"], ["AccessorID"], ["Node", "CheckID"], ["Node", "ServiceID"], ["Key"], ["Path"], ["Name"], ["Node"]];

/** One element's identity: each field's value and how it is mapped between the worlds. */
export interface Identity {
  readonly parts: ReadonlyArray<{ readonly nature: Nature; readonly value: string | number }>;
}

/** How the elements of two lists are identified, or undefined when they cannot be (then they are compared by position). */
export type ListIdentity = (element: unknown) => Identity;

/**
 * The identity both lists' elements share: a field set every element of
 * both carries (strings or numbers), distinct within each list; for lists of
 * strings of different lengths, the strings themselves when distinct.
 */
export function listIdentity(recorded: readonly unknown[], local: readonly unknown[], key: string | undefined): ListIdentity | undefined {
  if (recorded.length === 0 && local.length === 0) return undefined;
  const all = [...recorded, ...local];
  if (all.every((element) => typeof element === "string")) {
    if (recorded.length === local.length) return undefined;
    if (!distinct(recorded, (e) => e as string) || !distinct(local, (e) => e as string)) return undefined;
    return (element) => ({ parts: [{ nature: natureOf(key, element), value: element as string }] });
  }
  if (!all.every(isObject)) return undefined;
  for (const fields of IDENTITY_FIELDS) {
    const carries = (element: unknown) => fields.every((field) => isIdentityValue((element as Record<string, unknown>)[field]));
    if (!all.every(carries)) continue;
    const raw = (element: unknown) => rawKey(fields.map((field) => (element as Record<string, unknown>)[field] as string | number));
    if (!distinct(recorded, raw) || !distinct(local, raw)) continue;
    return (element) => {
      const holder = element as Record<string, unknown>;
      return { parts: fields.map((field) => ({ nature: natureOf(field, holder[field], holder), value: holder[field] as string | number })) };
    };
  }
  return undefined;
}

/** The identity's values as one lookup key. */
export function rawKey(values: readonly unknown[]): string {
  return JSON.stringify(values);
}

function distinct(list: readonly unknown[], keyOf: (element: unknown) => string): boolean {
  return new Set(list.map(keyOf)).size === list.length;
}

function isIdentityValue(value: unknown): value is string | number {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
