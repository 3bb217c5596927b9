/**
 * Stand-in for the `hashstructure` keys diff.go uses to match constraints,
 * affinities, artifacts and networks between two versions of a job.
 */
import { compareBytewise } from "../../core/json.js";
import { isNil, isObj } from "./values.js";

/** Stand-in for hashstructure.Hash: equal content gives equal keys (nil and empty collections hash alike). */
export function hashKey(value: unknown): string {
  if (isNil(value)) return "~";
  if (Array.isArray(value)) return value.length === 0 ? "~" : `[${value.map(hashKey).join(",")}]`;
  if (isObj(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort(compareBytewise);
    if (keys.length === 0) return "~";
    return `{${keys.map((k) => `${JSON.stringify(k)}:${hashKey(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
