/**
 * Accessors over decoded api objects. The decoder leaves a field out when the
 * body did not set it, so an absent field reads as Go's nil / zero value (or
 * the given fallback, for the api Canonicalize defaults).
 */
import { deepClone, isPlainObject, type Obj } from "../objects.js";

export const has = (o: Obj | undefined, key: string): boolean => o !== undefined && o[key] !== undefined;
export const getStr = (o: Obj | undefined, key: string, fallback = ""): string => (o !== undefined && typeof o[key] === "string" ? (o[key] as string) : fallback);
export const getNum = (o: Obj | undefined, key: string, fallback = 0): number => (o !== undefined && typeof o[key] === "number" ? (o[key] as number) : fallback);
export const getBool = (o: Obj | undefined, key: string, fallback = false): boolean => (o !== undefined && typeof o[key] === "boolean" ? (o[key] as boolean) : fallback);
export const getObj = (o: Obj | undefined, key: string): Obj | undefined => (o !== undefined && isPlainObject(o[key]) ? (o[key] as Obj) : undefined);
export const getList = (o: Obj | undefined, key: string): unknown[] | undefined => (o !== undefined && Array.isArray(o[key]) ? (o[key] as unknown[]) : undefined);
export const getObjList = (o: Obj | undefined, key: string): Obj[] => (getList(o, key) ?? []).map((e) => (isPlainObject(e) ? e : {}));
export const optNum = (o: Obj | undefined, key: string): number | null => (has(o, key) ? getNum(o, key) : null);

/** A map kept only when non-empty (the many `if len(m) == 0 { m = nil }`). */
export function nonEmptyMap(value: unknown): Obj | null {
  if (!isPlainObject(value) || isEmptyObject(value)) return null;
  return deepClone(value) as Obj;
}

/** Whether an object has no own enumerable key (without listing its keys: a map may hold 100,000). */
export function isEmptyObject(value: Obj): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** A string list kept only when non-empty. */
export function nonEmptyStrings(value: unknown): string[] | null {
  return Array.isArray(value) && value.length > 0 ? (value.slice() as string[]) : null;
}

/** A string list copied as Go's slices.Clone does: nil stays nil, empty stays empty. */
export function cloneStrings(value: unknown): string[] | null {
  return Array.isArray(value) ? (value.slice() as string[]) : null;
}
