/**
 * Plain JSON objects as the job pipeline handles them: the object shape, the
 * object test, an own-property write that is safe for `__proto__`, and a deep
 * copy. Shared by the decoder, canonicalization, validation and comparison.
 */

export type Obj = Record<string, unknown>;

export function isPlainObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Own-property write that is safe for keys such as "__proto__". */
export function setOwn(target: Obj, key: string, value: unknown): void {
  // Only `__proto__` would not become an own property by assignment (defineProperty costs ~10× more, on every key).
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

export function deepClone(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepClone);
  if (isPlainObject(value)) {
    const out: Obj = {};
    // for…in, not Object.entries: no [key, value] pair allocated per key of a large map.
    for (const key in value) if (Object.hasOwn(value, key)) setOwn(out, key, deepClone(value[key]));
    return out;
  }
  return value;
}
