/**
 * The size of a value as standin's value budget counts it: the characters
 * of its strings (keys included) plus one for every other element. A value
 * shared by reference (`[local.a, local.a]`) counts each time it appears,
 * as it would when written out, so doubling by reference is seen as well as
 * doubling by concatenation; sizes of collections are remembered, so
 * measuring a value built from measured parts costs its own elements only.
 */
import type { Value } from "./value.js";

const measured = new WeakMap<object, number>();

export function valueSize(value: Value): number {
  if (typeof value === "string") return value.length;
  if (value === null || typeof value !== "object") return 1;
  const known = measured.get(value);
  if (known !== undefined) return known;
  let size = 1;
  if (Array.isArray(value)) for (const item of value) size += valueSize(item);
  else for (const key of Object.keys(value)) size += key.length + valueSize(value[key] as Value);
  measured.set(value, size);
  return size;
}
