/**
 * Reading a canonical job for validation, and the Go spellings its error
 * texts use: durations as time.Duration.String, string lists as `%v` and
 * `%q` print them, nested error lists as go-multierror renders them. The
 * readers take `unknown` and never throw: a missing or mistyped field reads
 * as Go's zero value.
 */
import { formatGoDuration } from "../../../core/durations.js";
import { goQuote } from "../../../core/go/strconv.js";
import { formatMultierror } from "../../../core/go/multierror.js";
import { isPlainObject, type Obj } from "../objects.js";

export const dur = (ns: number): string => formatGoDuration(BigInt(Math.trunc(ns)));
export const goStrings = (list: readonly string[]): string => `[${list.join(" ")}]`;
export const goQuotedStrings = (list: readonly string[]): string => `[${list.map(goQuote).join(" ")}]`;

export const str = (o: unknown, key: string): string => (isPlainObject(o) && typeof o[key] === "string" ? (o[key] as string) : "");
export const num = (o: unknown, key: string): number => (isPlainObject(o) && typeof o[key] === "number" ? (o[key] as number) : 0);
export const flag = (o: unknown, key: string): boolean => isPlainObject(o) && o[key] === true;
export const block = (o: unknown, key: string): Obj | undefined => (isPlainObject(o) && isPlainObject(o[key]) ? (o[key] as Obj) : undefined);
export const items = (o: unknown, key: string): Obj[] => (isPlainObject(o) && Array.isArray(o[key]) ? (o[key] as unknown[]).map((e) => (isPlainObject(e) ? e : {})) : []);
export const isSet = (o: unknown, key: string): boolean => isPlainObject(o) && o[key] !== null && o[key] !== undefined;
export const nested = (errors: readonly string[]): string => formatMultierror(errors);
