/**
 * Go's uint64 values, kept exact.
 *
 * The products keep some values as uint64 that clients fill with all 64 bits
 * (the official Consul client's lock helpers tag their keys with flags such
 * as 0xe0f69a2baa414de0), and a JS number holds only 53. A `Uint64` is a
 * plain number while it is a safe integer — so states without big values
 * look, snapshot and hash exactly as before — and the value's decimal digits
 * beyond that, which `JSON.parse` keeps exact through snapshots, state files
 * and tapes. On the wire it goes out as a JSON integer (`uint64Wire`, which
 * core/json prints exactly).
 */
export type Uint64 = number | string;

export const MAX_UINT64 = 0xffff_ffff_ffff_ffffn;

export type ParseUintError = "invalid syntax" | "value out of range";

/**
 * strconv.ParseUint(text, 10, 64): the value, or the reason Go gives
 * (`strconv.ParseUint: parsing "<text>": <reason>`).
 */
export function parseUint64(text: string): { value: Uint64 } | { error: ParseUintError } {
  if (!/^[0-9]+$/.test(text)) return { error: "invalid syntax" };
  const value = BigInt(text);
  if (value > MAX_UINT64) return { error: "value out of range" };
  return { value: fromBigInt(value) };
}

/** The canonical form of a uint64 held as a bigint. */
export function fromBigInt(value: bigint): Uint64 {
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/** A stored uint64 as core/json prints it: a number, or a bigint beyond 2^53. */
export function uint64Wire(value: Uint64): number | bigint {
  return typeof value === "number" ? value : BigInt(value);
}

export function uint64Equal(a: Uint64, b: Uint64): boolean {
  return typeof a === typeof b ? a === b : BigInt(a) === BigInt(b);
}

/**
 * A uint64 from a fixture or another JSON document: a safe non-negative
 * integer, or a string of decimal digits for anything larger (a JSON number
 * past 2^53 has already been rounded by the time it is parsed). Undefined
 * when `value` is neither.
 */
export function uint64FromJSON(value: unknown): Uint64 | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== "string") return undefined;
  const parsed = parseUint64(value);
  return "value" in parsed ? parsed.value : undefined;
}
