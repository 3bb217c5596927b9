/**
 * Whole-tree comparison of two JSON answers for the differential oracles:
 * every key and value, key presence included (`null` is not absent), each
 * difference named by its path. Paths come in two forms: exact
 * (`TaskGroups[1].Tasks[0].Resources.SecretsMB`) for the report, and
 * general (`TaskGroups[].Tasks[].Resources.SecretsMB`) so an allow-list of
 * known differences can name a field once for every job.
 */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Difference {
  /** The exact path, for the report. */
  readonly at: string;
  /** The path with array indices dropped and map keys kept, for allow-lists. */
  readonly where: string;
  /** `missing` (the oracle has the key, standin does not), `extra`, `value`, `length`, `type`. */
  readonly kind: "missing" | "extra" | "value" | "length" | "type";
  readonly oracle: Json | undefined;
  readonly standin: Json | undefined;
}

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);
const kindOf = (v: Json): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/**
 * The oracle produces values standin cannot reproduce by design (a fresh
 * `uuidv4()`): `same` says when two leaves count as equal anyway.
 */
export type LeafEquality = (oracle: Json, standin: Json) => boolean;

export function jsonDifferences(oracle: Json, standin: Json, same: LeafEquality = Object.is, at = "", where = ""): Difference[] {
  if (Array.isArray(oracle) && Array.isArray(standin)) {
    const found: Difference[] = [];
    if (oracle.length !== standin.length) found.push({ at, where, kind: "length", oracle: oracle.length, standin: standin.length });
    for (let i = 0; i < Math.min(oracle.length, standin.length); i++) found.push(...jsonDifferences(oracle[i]!, standin[i]!, same, `${at}[${i}]`, `${where}[]`));
    return found;
  }
  if (isObject(oracle) && isObject(standin)) {
    const found: Difference[] = [];
    for (const key of new Set([...Object.keys(oracle), ...Object.keys(standin)])) {
      const next = at ? `${at}.${key}` : key;
      const nextWhere = where ? `${where}.${key}` : key;
      if (!(key in standin)) found.push({ at: next, where: nextWhere, kind: "missing", oracle: oracle[key], standin: undefined });
      else if (!(key in oracle)) found.push({ at: next, where: nextWhere, kind: "extra", oracle: undefined, standin: standin[key] });
      else found.push(...jsonDifferences(oracle[key]!, standin[key]!, same, next, nextWhere));
    }
    return found;
  }
  if (kindOf(oracle) !== kindOf(standin)) return [{ at, where, kind: "type", oracle, standin }];
  return same(oracle, standin) ? [] : [{ at, where, kind: "value", oracle, standin }];
}

/** One line for a report: `path: kind (oracle … , standin …)`. */
export function describeDifference(d: Difference): string {
  const show = (v: Json | undefined) => (v === undefined ? "absent" : JSON.stringify(v));
  return `${d.at}: ${d.kind} (Nomad ${show(d.oracle)}, standin ${show(d.standin)})`;
}
