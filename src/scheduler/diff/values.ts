/**
 * Reading canonical job JSON: type guards and tolerant accessors (a missing or
 * mistyped value reads as Go's zero value) used by every diff function.
 */
import { fmtPrim } from "../../core/go/format.js";
import type { Obj } from "./types.js";

export function isObj(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isNil(value: unknown): value is null | undefined {
  return value === null || value === undefined;
}

export function obj(value: unknown): Obj | null {
  return isObj(value) ? value : null;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function objList(value: unknown): Obj[] {
  return list(value).filter(isObj);
}

export function strList(value: unknown): string[] {
  return list(value).map((v) => (typeof v === "string" ? v : fmtPrim(v)));
}

export function str(o: Obj | null, key: string): string {
  const v = o?.[key];
  return typeof v === "string" ? v : isNil(v) ? "" : fmtPrim(v);
}
