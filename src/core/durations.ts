/**
 * Go duration strings, parsed and printed exactly as Go's `time` package does.
 *
 * Nomad and Consul speak Go durations on the wire ("15s", "1m30s", "500ms",
 * "72h0m0s"), so the emulator must accept exactly what `time.ParseDuration`
 * accepts, reject exactly what it rejects (with the same error text), and print
 * durations exactly as `time.Duration.String()` does.
 *
 * A Go `Duration` is an int64 count of nanoseconds, so values here are
 * `bigint` nanoseconds in the int64 range. The parser mirrors Go's algorithm
 * step by step, including its use of uint64 arithmetic and of float64 for
 * fractions, because both are observable: they decide which inputs overflow
 * and which nanosecond a fraction lands on.
 *
 * Reference: Go's src/time/format.go (ParseDuration, leadingInt,
 * leadingFraction, quote, unitMap) and src/time/time.go (Duration.String,
 * fmtFrac, fmtInt).
 */

const NANOSECOND = 1n;
const MICROSECOND = 1_000n * NANOSECOND;
const MILLISECOND = 1_000n * MICROSECOND;
const SECOND = 1_000n * MILLISECOND;
const MINUTE = 60n * SECOND;
const HOUR = 60n * MINUTE;

/** 1<<63: the magnitude of the most negative Duration, and Go's overflow bound. */
const TWO_POW_63 = 1n << 63n;
const INT64_MIN = -TWO_POW_63;
const INT64_MAX = TWO_POW_63 - 1n;

/** Go's unitMap. Both micro spellings are accepted; String() prints U+00B5. */
const UNIT_NANOS: ReadonlyMap<string, bigint> = new Map([
  ["ns", NANOSECOND],
  ["us", MICROSECOND],
  ["\u00b5s", MICROSECOND], // U+00B5 MICRO SIGN
  ["\u03bcs", MICROSECOND], // U+03BC GREEK SMALL LETTER MU
  ["ms", MILLISECOND],
  ["s", SECOND],
  ["m", MINUTE],
  ["h", HOUR],
]);

const MICRO_SIGN = "\u00b5";
const CHAR_0 = 0x30;
const CHAR_9 = 0x39;
const CHAR_DOT = 0x2e;

/**
 * Thrown for any invalid duration. `message` is Go's exact error text, e.g.
 * `time: invalid duration "abc"`, `time: missing unit in duration "1"`,
 * `time: unknown unit "x" in duration "1x"`.
 */
export class DurationError extends Error {
  /** The rejected input (String(input) when the caller passed a non-string). */
  readonly input: string;

  constructor(message: string, input: string) {
    super(message);
    this.name = "DurationError";
    this.input = input;
  }
}

function invalidDuration(input: string): DurationError {
  return new DurationError(`time: invalid duration ${goQuote(input)}`, input);
}

function missingUnit(input: string): DurationError {
  return new DurationError(`time: missing unit in duration ${goQuote(input)}`, input);
}

function unknownUnit(unit: string, input: string): DurationError {
  return new DurationError(`time: unknown unit ${goQuote(unit)} in duration ${goQuote(input)}`, input);
}

/**
 * Parses a duration string exactly like Go's `time.ParseDuration`:
 * `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, with units ns, us, µs (U+00B5),
 * μs (U+03BC), ms, s, m, h; "0" (optionally signed) needs no unit.
 *
 * @returns int64 nanoseconds.
 * @throws DurationError with Go's error text, including for values outside
 *   the int64 range and for non-string input.
 */
export function parseGoDuration(input: string): bigint {
  // Callers outside TypeScript's reach (JSON bodies, query strings) may hand
  // us anything; report it as Go would report the text, not as a TypeError.
  if (typeof input !== "string") throw invalidDuration(describe(input));

  const s = input;
  let i = 0;
  let negative = false;

  // Consume [-+]?
  if (s.length > 0 && (s[0] === "-" || s[0] === "+")) {
    negative = s[0] === "-";
    i = 1;
  }
  // Special case: a bare zero is the only number allowed without a unit.
  if (s.length - i === 1 && s[i] === "0") return 0n;
  if (i === s.length) throw invalidDuration(s);

  // Go accumulates the magnitude in a uint64 and checks it against 1<<63
  // after every component, so that -9223372036854775808ns (the int64 minimum)
  // is accepted while its positive counterpart is not.
  let magnitude = 0n;
  while (i < s.length) {
    const first = s.charCodeAt(i);
    if (first !== CHAR_DOT && !isAsciiDigit(first)) throw invalidDuration(s);

    // Consume [0-9]*
    const whole = leadingInt(s, i);
    if (whole === undefined) throw invalidDuration(s);
    const hasWholeDigits = whole.end !== i;
    i = whole.end;

    // Consume (\.[0-9]*)?
    let fraction: Fraction = { digits: 0n, scale: 1, end: i };
    let hasFractionDigits = false;
    if (i < s.length && s.charCodeAt(i) === CHAR_DOT) {
      const digitsStart = i + 1;
      fraction = leadingFraction(s, digitsStart);
      hasFractionDigits = fraction.end !== digitsStart;
    }
    i = fraction.end;
    if (!hasWholeDigits && !hasFractionDigits) {
      throw invalidDuration(s); // no digits at all, e.g. ".s" or "-.s"
    }

    // Consume the unit: everything up to the next number.
    const unitEnd = scanUnit(s, i);
    if (unitEnd === i) throw missingUnit(s);
    const unitName = s.slice(i, unitEnd);
    i = unitEnd;
    const unit = UNIT_NANOS.get(unitName);
    if (unit === undefined) throw unknownUnit(unitName, s);

    const component = componentNanos(whole.value, fraction, unit);
    if (component === undefined) throw invalidDuration(s);

    // Go adds in uint64 and only then compares with 1<<63. Each operand is at
    // most 1<<63, so the sum can reach exactly 1<<64, which wraps to 0 and
    // passes the check (e.g. "9223372036854775808ns9223372036854775808ns"
    // parses as 0s in Go). Reproduce the wrap rather than "fix" it.
    magnitude = BigInt.asUintN(64, magnitude + component);
    if (magnitude > TWO_POW_63) throw invalidDuration(s);
  }

  // -Duration(d) in two's complement: 1<<63 negates to the int64 minimum.
  if (negative) return BigInt.asIntN(64, -magnitude);
  if (magnitude > INT64_MAX) throw invalidDuration(s);
  return magnitude;
}

interface LeadingInt {
  readonly value: bigint;
  readonly end: number;
}

/**
 * Go's leadingInt: consumes [0-9]* from `start`. Returns undefined when the
 * value would exceed 1<<63 (Go's uint64 overflow guard), which the caller
 * reports as an invalid duration.
 */
function leadingInt(s: string, start: number): LeadingInt | undefined {
  let value = 0n;
  let i = start;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isAsciiDigit(c)) break;
    if (value > TWO_POW_63 / 10n) return undefined;
    value = value * 10n + BigInt(c - CHAR_0);
    if (value > TWO_POW_63) return undefined;
  }
  return { value, end: i };
}

interface Fraction {
  /** The fraction's digits read as an integer (Go's `f`). */
  readonly digits: bigint;
  /** The float64 power of ten the digits are divided by (Go's `scale`). */
  readonly scale: number;
  readonly end: number;
}

/**
 * Go's leadingFraction: consumes [0-9]* from `start`. It never fails: once
 * another digit would overflow, it keeps consuming digits but stops adding
 * precision (digits and scale both freeze), so "0.100000000000000000000h"
 * still means 6 minutes.
 *
 * `scale` is a float64 in Go and is built by repeated `scale *= 10`; doing the
 * same with a JS number gives the identical IEEE-754 value, including the
 * rounding past 1e22 and Infinity after ~308 leading zeros.
 */
function leadingFraction(s: string, start: number): Fraction {
  let digits = 0n;
  let scale = 1;
  let overflowed = false;
  let i = start;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!isAsciiDigit(c)) break;
    if (overflowed) continue;
    if (digits > INT64_MAX / 10n) {
      // Go's comment: "It's possible for overflow to give a positive number,
      // so take care." Freeze before multiplying.
      overflowed = true;
      continue;
    }
    const next = digits * 10n + BigInt(c - CHAR_0);
    if (next > TWO_POW_63) {
      overflowed = true;
      continue;
    }
    digits = next;
    scale *= 10;
  }
  return { digits, scale, end: i };
}

/** Index just past the unit: Go takes every byte up to the next '.' or digit. */
function scanUnit(s: string, start: number): number {
  let i = start;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === CHAR_DOT || isAsciiDigit(c)) break;
    i++;
  }
  return i;
}

/**
 * Nanoseconds for one "<whole>.<fraction><unit>" component, or undefined on
 * overflow (Go's two `> 1<<63` checks).
 *
 * The fraction goes through float64 exactly as in Go:
 *   v += uint64(float64(f) * (float64(unit) / scale))
 * Go does this so a fraction of an hour (up to 3.6e12 ns) stays nanosecond
 * accurate without risking uint64 overflow in f*unit. It is not the exact
 * decimal value: the digits are rounded to the nearest float64, the unit is
 * divided by the scale first, and the product is truncated toward zero. JS
 * numbers are IEEE-754 doubles with the same round-to-nearest-even rule, and
 * Number(bigint) rounds the same way as Go's uint64->float64 conversion, so
 * performing the same three operations in the same order yields Go's result
 * bit for bit (there is no additive term, so no fused multiply-add either).
 */
function componentNanos(whole: bigint, fraction: Fraction, unit: bigint): bigint | undefined {
  if (whole > TWO_POW_63 / unit) return undefined;
  let nanos = whole * unit;
  if (fraction.digits > 0n) {
    const fractionNanos = Number(fraction.digits) * (Number(unit) / fraction.scale);
    // Always finite and below the unit (<= 3.6e12), so an exact integer here.
    nanos += BigInt(Math.trunc(fractionNanos));
    if (nanos > TWO_POW_63) return undefined;
  }
  return nanos;
}

function isAsciiDigit(c: number): boolean {
  return c >= CHAR_0 && c <= CHAR_9;
}

/**
 * Formats int64 nanoseconds exactly like Go's `time.Duration.String()`:
 * "72h3m0.5s", "1m0s", "1.5s"; below one second a smaller unit is used so the
 * leading digit is non-zero ("2.2ms", "1.1µs", "1ns"); zero is "0s".
 *
 * @throws RangeError when `ns` is outside the int64 range.
 */
export function formatGoDuration(ns: bigint): string {
  assertInt64(ns, "formatGoDuration");
  if (ns === 0n) return "0s";
  // Go negates in uint64, which is exact for the int64 minimum too.
  const magnitude = ns < 0n ? -ns : ns;
  const text = magnitude < SECOND ? formatSubSecond(magnitude) : formatClock(magnitude);
  return ns < 0n ? `-${text}` : text;
}

/** 0 < nanos < 1s: a single number in ns, µs or ms, e.g. "1.1µs". */
function formatSubSecond(nanos: bigint): string {
  if (nanos < MICROSECOND) return `${nanos}ns`;
  if (nanos < MILLISECOND) {
    const { fraction, whole } = splitFraction(nanos, 3);
    return `${whole}${fraction}${MICRO_SIGN}s`;
  }
  const { fraction, whole } = splitFraction(nanos, 6);
  return `${whole}${fraction}ms`;
}

/**
 * nanos >= 1s: "[<h>h][<m>m]<s>[.<frac>]s". Minutes appear once there are any
 * minutes or hours ("1h0m0s"); Go stops at hours because days vary in length.
 */
function formatClock(nanos: bigint): string {
  const { fraction, whole: totalSeconds } = splitFraction(nanos, 9);
  let text = `${totalSeconds % 60n}${fraction}s`;
  const totalMinutes = totalSeconds / 60n;
  if (totalMinutes > 0n) {
    text = `${totalMinutes % 60n}m${text}`;
    const hours = totalMinutes / 60n;
    if (hours > 0n) text = `${hours}h${text}`;
  }
  return text;
}

/**
 * Go's fmtFrac: splits `value` into value / 10**precision and the fraction
 * ".ddd" with trailing zeros removed (and no '.' at all when it is zero).
 */
function splitFraction(value: bigint, precision: number): { fraction: string; whole: bigint } {
  const divisor = 10n ** BigInt(precision);
  const remainder = value % divisor;
  const whole = value / divisor;
  if (remainder === 0n) return { fraction: "", whole };
  const digits = remainder.toString().padStart(precision, "0").replace(/0+$/, "");
  return { fraction: `.${digits}`, whole };
}

/**
 * Parses a Go duration and converts it to whole milliseconds for the
 * emulator's clock (virtual time has millisecond resolution).
 *
 * The result is the ceiling of the exact millisecond value: a positive
 * sub-millisecond remainder rounds up, so a timer armed with "1ns" or "1.5ms"
 * never fires early ("1ns" -> 1, "1.5ms" -> 2), and for negative durations the
 * remainder rounds toward zero ("-1.5ms" -> -1).
 *
 * @throws DurationError as parseGoDuration does.
 */
export function parseDurationMs(input: string): number {
  return nanosToMs(parseGoDuration(input));
}

/**
 * Nanoseconds to whole milliseconds with parseDurationMs's rounding (ceiling).
 * Exact for every int64 input: |int64| / 1e6 < 2^53.
 *
 * @throws RangeError if the result would not be a safe integer.
 */
export function nanosToMs(ns: bigint): number {
  if (typeof ns !== "bigint") {
    throw new TypeError(`nanosToMs: expected a bigint, got ${typeof ns}`);
  }
  // BigInt division truncates toward zero, which is already the ceiling for
  // negative values; positive values with a remainder need one more.
  let ms = ns / MILLISECOND;
  if (ns % MILLISECOND > 0n) ms += 1n;
  const result = Number(ms);
  if (!Number.isSafeInteger(result)) {
    throw new RangeError(`nanosToMs: ${ns}ns is too large to express exactly in milliseconds`);
  }
  return result;
}

/**
 * Whole milliseconds to nanoseconds.
 *
 * @throws RangeError unless `ms` is a safe integer whose nanosecond value fits
 *   in a Go Duration (int64).
 */
export function msToNanos(ms: number): bigint {
  if (!Number.isSafeInteger(ms)) {
    throw new RangeError(`msToNanos: expected an integer number of milliseconds, got ${ms}`);
  }
  const ns = BigInt(ms) * MILLISECOND;
  assertInt64(ns, "msToNanos");
  return ns;
}

function assertInt64(ns: bigint, caller: string): void {
  if (typeof ns !== "bigint") {
    throw new TypeError(`${caller}: expected bigint nanoseconds, got ${typeof ns}`);
  }
  if (ns < INT64_MIN || ns > INT64_MAX) {
    throw new RangeError(`${caller}: ${ns}ns is outside the int64 range of a Go Duration`);
  }
}

/**
 * Go's time.quote: a double-quoted string where '"' and '\' are escaped and
 * every byte of a non-ASCII or control (< 0x20) character is written as \xNN.
 *
 * Go works on the UTF-8 bytes of its string; we encode each code point to
 * UTF-8 to get the same bytes. A JS string cannot hold invalid UTF-8, but it
 * can hold lone surrogates: those are written as U+FFFD (\xef\xbf\xbd), which
 * is what the string becomes when converted to UTF-8 for Go.
 */
function goQuote(s: string): string {
  let out = '"';
  for (const char of s) {
    const codePoint = char.codePointAt(0) ?? 0;
    if (codePoint >= 0x80 || codePoint < 0x20) {
      for (const byte of utf8Bytes(codePoint)) {
        out += `\\x${byte.toString(16).padStart(2, "0")}`;
      }
    } else if (char === '"' || char === "\\") {
      out += `\\${char}`;
    } else {
      out += char;
    }
  }
  return `${out}"`;
}

/** UTF-8 encoding of one code point; surrogates encode as U+FFFD. */
function utf8Bytes(codePoint: number): number[] {
  const cp = codePoint >= 0xd800 && codePoint <= 0xdfff ? 0xfffd : codePoint;
  if (cp < 0x80) return [cp];
  if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)];
  if (cp < 0x10000) {
    return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  }
  return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
}

/** String(value), but never throws (String(Object.create(null)) does). */
function describe(value: unknown): string {
  try {
    return String(value);
  } catch {
    return `[${typeof value}]`;
  }
}
