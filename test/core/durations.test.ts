import { describe, it, expect } from "vitest";
import { DurationError, formatGoDuration, msToNanos, nanosToMs, parseDurationMs, parseGoDuration } from "../../src/core/durations.js";

// Go's duration constants, spelled out independently of the module under test.
const Nanosecond = 1n;
const Microsecond = 1_000n;
const Millisecond = 1_000_000n;
const Second = 1_000_000_000n;
const Minute = 60n * Second;
const Hour = 60n * Minute;
const MaxInt64 = 9_223_372_036_854_775_807n;
const MinInt64 = -9_223_372_036_854_775_808n;

/** Runs `fn`, which must throw a DurationError, and returns that error. */
function durationErrorOf(fn: () => unknown): DurationError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DurationError);
    return error as DurationError;
  }
  throw new Error("expected a DurationError, but nothing was thrown");
}

const invalid = (input: string): string => `time: invalid duration "${input}"`;

describe("parseGoDuration: Go's parseDurationTests", () => {
  // src/time/time_test.go, parseDurationTests, in order.
  it.each<[string, bigint]>([
    // simple
    ["0", 0n],
    ["5s", 5n * Second],
    ["30s", 30n * Second],
    ["1478s", 1478n * Second],
    // sign
    ["-5s", -5n * Second],
    ["+5s", 5n * Second],
    ["-0", 0n],
    ["+0", 0n],
    // decimal
    ["5.0s", 5n * Second],
    ["5.6s", 5n * Second + 600n * Millisecond],
    ["5.s", 5n * Second],
    [".5s", 500n * Millisecond],
    ["1.0s", 1n * Second],
    ["1.00s", 1n * Second],
    ["1.004s", 1n * Second + 4n * Millisecond],
    ["1.0040s", 1n * Second + 4n * Millisecond],
    ["100.00100s", 100n * Second + 1n * Millisecond],
    // different units
    ["10ns", 10n * Nanosecond],
    ["11us", 11n * Microsecond],
    ["12\u00b5s", 12n * Microsecond], // U+00B5
    ["12\u03bcs", 12n * Microsecond], // U+03BC
    ["13ms", 13n * Millisecond],
    ["14s", 14n * Second],
    ["15m", 15n * Minute],
    ["16h", 16n * Hour],
    // composite durations
    ["3h30m", 3n * Hour + 30n * Minute],
    ["10.5s4m", 4n * Minute + 10n * Second + 500n * Millisecond],
    ["-2m3.4s", -(2n * Minute + 3n * Second + 400n * Millisecond)],
    ["1h2m3s4ms5us6ns", 1n * Hour + 2n * Minute + 3n * Second + 4n * Millisecond + 5n * Microsecond + 6n * Nanosecond],
    ["39h9m14.425s", 39n * Hour + 9n * Minute + 14n * Second + 425n * Millisecond],
    // large value
    ["52763797000ns", 52763797000n * Nanosecond],
    // more than 9 digits after decimal point, see https://golang.org/issue/6617
    ["0.3333333333333333333h", 20n * Minute],
    // 9007199254740993 = 1<<53+1 cannot be stored precisely in a float64
    ["9007199254740993ns", ((1n << 53n) + 1n) * Nanosecond],
    // largest duration that can be represented by int64 in nanoseconds
    ["9223372036854775807ns", MaxInt64],
    ["9223372036854775.807us", MaxInt64],
    ["9223372036s854ms775us807ns", MaxInt64],
    ["-9223372036854775808ns", MinInt64],
    ["-9223372036854775.808us", MinInt64],
    ["-9223372036s854ms775us808ns", MinInt64],
    // largest negative value
    ["-9223372036854775808ns", MinInt64],
    // largest negative round trip value, see https://golang.org/issue/48629
    ["-2562047h47m16.854775808s", MinInt64],
    // huge string; issue 15011.
    ["0.100000000000000000000h", 6n * Minute],
    // This value tests the first overflow check in leadingFraction.
    ["0.830103483285477580700h", 49n * Minute + 48n * Second + 372539827n * Nanosecond],
  ])("parses %s", (input, want) => {
    expect(parseGoDuration(input)).toBe(want);
  });
});

describe("parseGoDuration: more accepted inputs", () => {
  it.each<[string, bigint]>([
    ["1ns", 1n],
    ["1us", 1_000n],
    ["1ms", 1_000_000n],
    ["1s", Second],
    ["1m", Minute],
    ["1h", Hour],
    ["24h", 24n * Hour],
    ["1.5h", Hour + 30n * Minute],
    ["-1.5h", -(Hour + 30n * Minute)],
    ["1.5ms", 1_500_000n],
    ["-1h1m1s", -(Hour + Minute + Second)],
    ["0s", 0n],
    ["-0s", 0n],
    ["0.0s", 0n],
    ["000123ms", 123n * Millisecond],
    ["1h1h", 2n * Hour], // units may repeat
    ["1s1m", Minute + Second], // and come in any order
    ["1.1\u00b5s", 1_100n],
    ["2.2ms", 2_200_000n],
    // From Go's BenchmarkParseDuration: exact even though it passes through float64.
    ["9007199254.740993ms", 9007199254740993n],
    ["8m0.000000001s", 8n * Minute + 1n],
    ["0.9ns", 0n], // fractions of a nanosecond truncate toward zero
    ["1.9ns", 1n],
    ["-1.9ns", -1n],
  ])("parses %s", (input, want) => {
    expect(parseGoDuration(input)).toBe(want);
  });
});

describe("parseGoDuration: Go's float64 fraction arithmetic", () => {
  // Go computes uint64(float64(f) * (float64(unit) / scale)), which is not
  // the exact decimal truncation. These inputs were chosen because the float
  // result differs from floor(f * unit / scale); Go returns the float result.
  it.each<[string, bigint, bigint]>([
    // [input, Go's result, exact decimal truncation (what Go does NOT return)]
    ["0.3333333333333333333h", 1_200_000_000_000n, 1_199_999_999_999n],
    ["0.29056232811750h", 1_046_024_381_222n, 1_046_024_381_223n],
    ["0.28301296275750h", 1_018_846_665_926n, 1_018_846_665_927n],
    ["0.0830798051088888845h", 299_087_298_392n, 299_087_298_391n],
    ["1.29056232811750h", Hour + 1_046_024_381_222n, Hour + 1_046_024_381_223n],
    // Only 18 nines fit in the fraction; float64(999999999999999999) is 1e18,
    // so the fraction becomes a whole nanosecond.
    [`1.${"9".repeat(40)}ns`, 2n, 1n],
  ])("parses %s as Go does (%s ns)", (input, goResult, exactTruncation) => {
    const got = parseGoDuration(input);
    expect(got).toBe(goResult);
    expect(got).not.toBe(exactTruncation);
  });

  it("ignores digits that appear after ~308 leading zeros (scale becomes Infinity)", () => {
    expect(parseGoDuration(`0.${"0".repeat(400)}1h`)).toBe(0n);
    expect(parseGoDuration(`1.${"0".repeat(400)}9h`)).toBe(Hour);
  });

  it("stops accumulating fraction digits once they would overflow", () => {
    // Digits past the first ~19 are consumed but add no precision.
    expect(parseGoDuration(`0.5${"0".repeat(1000)}s`)).toBe(500n * Millisecond);
    expect(parseGoDuration(`0.1${"0".repeat(18)}${"9".repeat(50)}s`)).toBe(100n * Millisecond);
  });
});

describe("parseGoDuration: uint64 accumulation", () => {
  it.each<[string, bigint]>([
    // Each component may be 1<<63; two of them sum to exactly 1<<64, which
    // wraps to 0 in Go's uint64 and so passes its overflow check.
    ["9223372036854775808ns9223372036854775808ns", 0n],
    ["-9223372036854775808ns9223372036854775808ns", 0n],
    ["-4611686018427387904ns4611686018427387904ns", MinInt64],
  ])("parses %s as Go does", (input, want) => {
    expect(parseGoDuration(input)).toBe(want);
  });

  it.each([
    "4611686018427387904ns4611686018427387904ns", // exactly 1<<63, positive
    "9223372036854775807ns1ns",
    "-9223372036854775808ns1ns",
    "2562047h47m16.854775808s",
    "2562048h",
  ])("rejects %s as overflow", (input) => {
    expect(durationErrorOf(() => parseGoDuration(input)).message).toBe(invalid(input));
  });
});

describe("parseGoDuration: Go's parseDurationErrorTests", () => {
  // Go only checks that the error contains the quoted input; these are the
  // complete messages Go produces for them.
  it.each<[string, string]>([
    // invalid
    ["", 'time: invalid duration ""'],
    ["3", 'time: missing unit in duration "3"'],
    ["-", 'time: invalid duration "-"'],
    ["s", 'time: invalid duration "s"'],
    [".", 'time: invalid duration "."'],
    ["-.", 'time: invalid duration "-."'],
    [".s", 'time: invalid duration ".s"'],
    ["+.s", 'time: invalid duration "+.s"'],
    ["1d", 'time: unknown unit "d" in duration "1d"'],
    ["\uFFFD", String.raw`time: invalid duration "\xef\xbf\xbd"`], // utf8.RuneError
    ["\uFFFD hello \uFFFD world", String.raw`time: invalid duration "\xef\xbf\xbd hello \xef\xbf\xbd world"`],
    // overflow
    ["9223372036854775810ns", 'time: invalid duration "9223372036854775810ns"'],
    ["9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'],
    ["-9223372036854775809ns", 'time: invalid duration "-9223372036854775809ns"'],
    ["9223372036854776us", 'time: invalid duration "9223372036854776us"'],
    ["3000000h", 'time: invalid duration "3000000h"'],
    ["9223372036854775.808us", 'time: invalid duration "9223372036854775.808us"'],
    ["9223372036854ms775us808ns", 'time: invalid duration "9223372036854ms775us808ns"'],
  ])("rejects %j", (input, message) => {
    const error = durationErrorOf(() => parseGoDuration(input));
    expect(error.message).toBe(message);
    expect(error.input).toBe(input);
  });

  // Go's table also has inputs with invalid UTF-8 ("\x85\x85", "\xffff",
  // "hello \xffff world"), quoted byte for byte. A JS string cannot hold
  // invalid UTF-8; decoding those bytes replaces each bad byte with U+FFFD,
  // and that is what gets quoted.
  it.each<[string, string]>([
    ["\uFFFD\uFFFD", String.raw`time: invalid duration "\xef\xbf\xbd\xef\xbf\xbd"`],
    ["\uFFFDff", String.raw`time: invalid duration "\xef\xbf\xbdff"`],
    ["hello \uFFFDff world", String.raw`time: invalid duration "hello \xef\xbf\xbdff world"`],
  ])("rejects the decoded form of Go's invalid-UTF-8 case %j", (input, message) => {
    expect(durationErrorOf(() => parseGoDuration(input)).message).toBe(message);
  });
});

describe("parseGoDuration: more rejected inputs", () => {
  it.each<[string, string]>([
    ["abc", 'time: invalid duration "abc"'],
    ["1", 'time: missing unit in duration "1"'],
    ["00", 'time: missing unit in duration "00"'],
    ["-00", 'time: missing unit in duration "-00"'],
    ["1.5", 'time: missing unit in duration "1.5"'],
    [".5", 'time: missing unit in duration ".5"'],
    ["1s2", 'time: missing unit in duration "1s2"'],
    ["1ms5", 'time: missing unit in duration "1ms5"'],
    ["1x", 'time: unknown unit "x" in duration "1x"'],
    ["1S", 'time: unknown unit "S" in duration "1S"'],
    ["1sec", 'time: unknown unit "sec" in duration "1sec"'],
    ["1e3s", 'time: unknown unit "e" in duration "1e3s"'],
    ["0x10s", 'time: unknown unit "x" in duration "0x10s"'],
    ["1 s", 'time: unknown unit " s" in duration "1 s"'],
    ["1s ", 'time: unknown unit "s " in duration "1s "'],
    [" 1s", 'time: invalid duration " 1s"'],
    ["1h-1m", 'time: unknown unit "h-" in duration "1h-1m"'], // a unit runs up to the next digit or '.'
    ["--1s", 'time: invalid duration "--1s"'],
    ["+-1s", 'time: invalid duration "+-1s"'],
    ["1..5s", 'time: missing unit in duration "1..5s"'],
    ["Infinity", 'time: invalid duration "Infinity"'],
    // Go's quote: '"' and '\' are escaped, controls and non-ASCII become \xNN
    // per UTF-8 byte, DEL (0x7f) is printed as is.
    ['5s"', String.raw`time: unknown unit "s\"" in duration "5s\""`],
    ["1\\s", String.raw`time: unknown unit "\\s" in duration "1\\s"`],
    ["1\ts", String.raw`time: unknown unit "\x09s" in duration "1\x09s"`],
    ["1\ns", String.raw`time: unknown unit "\x0as" in duration "1\x0as"`],
    ["1\u007fs", 'time: unknown unit "\u007fs" in duration "1\u007fs"'],
    ["1\u00b5", String.raw`time: unknown unit "\xc2\xb5" in duration "1\xc2\xb5"`],
    ["1\u00e9", String.raw`time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9"`],
    ["1\u{1F600}", String.raw`time: unknown unit "\xf0\x9f\x98\x80" in duration "1\xf0\x9f\x98\x80"`],
    // A lone surrogate reaches Go as U+FFFD once the string is UTF-8 encoded.
    ["1\uD800s", String.raw`time: unknown unit "\xef\xbf\xbds" in duration "1\xef\xbf\xbds"`],
  ])("rejects %j", (input, message) => {
    const error = durationErrorOf(() => parseGoDuration(input));
    expect(error.message).toBe(message);
    expect(error.input).toBe(input);
  });
});

describe("parseGoDuration: non-string input", () => {
  it.each<[unknown, string]>([
    [undefined, 'time: invalid duration "undefined"'],
    [null, 'time: invalid duration "null"'],
    [0, 'time: invalid duration "0"'], // "0" would be valid, the number is not
    [5, 'time: invalid duration "5"'],
    [5n, 'time: invalid duration "5"'],
    [true, 'time: invalid duration "true"'],
    [{}, 'time: invalid duration "[object Object]"'],
    [["1s"], 'time: invalid duration "1s"'],
    [Object.create(null), 'time: invalid duration "[object]"'],
  ])("rejects %o with a DurationError, not a TypeError", (value, message) => {
    const error = durationErrorOf(() => parseGoDuration(value as string));
    expect(error.message).toBe(message);
  });
});

describe("DurationError", () => {
  it("is an Error carrying the rejected input and its own name", () => {
    const error = durationErrorOf(() => parseGoDuration("1x"));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("DurationError");
    expect(error.input).toBe("1x");
    expect(String(error)).toBe('DurationError: time: unknown unit "x" in duration "1x"');
  });
});

describe("formatGoDuration: Go's durationTests", () => {
  // src/time/time_test.go, durationTests.
  const durationTests: Array<[string, bigint]> = [
    ["0s", 0n],
    ["1ns", 1n * Nanosecond],
    ["1.1\u00b5s", 1100n * Nanosecond],
    ["2.2ms", 2200n * Microsecond],
    ["3.3s", 3300n * Millisecond],
    ["4m5s", 4n * Minute + 5n * Second],
    ["4m5.001s", 4n * Minute + 5001n * Millisecond],
    ["5h6m7.001s", 5n * Hour + 6n * Minute + 7001n * Millisecond],
    ["8m0.000000001s", 8n * Minute + 1n * Nanosecond],
    ["2562047h47m16.854775807s", MaxInt64],
    ["-2562047h47m16.854775808s", MinInt64],
  ];

  it.each(durationTests)("formats as %s", (want, d) => {
    expect(formatGoDuration(d)).toBe(want);
  });

  // Go's TestDurationString also checks that negating a positive duration
  // only adds a leading '-'.
  it.each(durationTests.filter(([, d]) => d > 0n))("formats the negation of %s", (want, d) => {
    expect(formatGoDuration(-d)).toBe(`-${want}`);
  });
});

describe("formatGoDuration: more values", () => {
  it.each<[bigint, string]>([
    [999n, "999ns"],
    [1_000n, "1\u00b5s"],
    [1_001n, "1.001\u00b5s"],
    [999_999n, "999.999\u00b5s"],
    [1_000_000n, "1ms"],
    [1_500_000n, "1.5ms"],
    [999_999_999n, "999.999999ms"],
    [Second, "1s"],
    [1_500_000_000n, "1.5s"],
    [59n * Second + 999_999_999n, "59.999999999s"],
    [Minute, "1m0s"],
    [Minute + 1n, "1m0.000000001s"],
    [90n * Second, "1m30s"],
    [Hour, "1h0m0s"],
    [Hour + Millisecond, "1h0m0.001s"],
    [24n * Hour, "24h0m0s"],
    [72n * Hour + 3n * Minute + 500n * Millisecond, "72h3m0.5s"],
    [-(Hour + Minute + Second), "-1h1m1s"],
    [-1n, "-1ns"],
    [-1_500_000n, "-1.5ms"],
    [MinInt64 + 1n, "-2562047h47m16.854775807s"],
  ])("formats %s ns as %s", (ns, want) => {
    expect(formatGoDuration(ns)).toBe(want);
  });

  it.each<[bigint]>([[MaxInt64 + 1n], [MinInt64 - 1n], [1n << 64n]])("throws RangeError for %s, outside int64", (ns) => {
    expect(() => formatGoDuration(ns)).toThrow(RangeError);
  });
});

describe("round trips", () => {
  // A deterministic spread over the whole int64 range (splitmix64), plus
  // boundaries and small values where unit switching happens.
  function spread(count: number): bigint[] {
    let state = 0x9e3779b97f4a7c15n;
    const values: bigint[] = [];
    for (let i = 0; i < count; i++) {
      state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n);
      let z = state;
      z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n);
      z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn);
      z ^= z >> 31n;
      // Shift right by a varying amount so magnitudes from ns to centuries appear.
      values.push(BigInt.asIntN(64, z) >> BigInt(i % 64));
    }
    return values;
  }
  const values = [
    0n,
    1n,
    -1n,
    999n,
    1_000n,
    999_999n,
    1_000_000n,
    999_999_999n,
    Second,
    Minute,
    Hour,
    Minute - 1n,
    Hour - 1n,
    Hour + 1n,
    MaxInt64,
    MinInt64,
    MaxInt64 - 1n,
    MinInt64 + 1n,
    ...spread(120),
  ].map(String);

  it.each(values)("formatGoDuration then parseGoDuration gives back %s ns", (text) => {
    const ns = BigInt(text);
    expect(parseGoDuration(formatGoDuration(ns))).toBe(ns);
  });

  it.each(["0s", "1ns", "1.1\u00b5s", "2.2ms", "1.5s", "1m0s", "1h0m0s", "24h0m0s", "-1h1m1s", "72h3m0.5s", "2562047h47m16.854775807s", "-2562047h47m16.854775808s"])(
    "parseGoDuration then formatGoDuration gives back %s",
    (text) => {
      expect(formatGoDuration(parseGoDuration(text))).toBe(text);
    },
  );
});

describe("parseDurationMs", () => {
  it.each<[string, number]>([
    ["0", 0],
    ["0s", 0],
    ["1ns", 1], // any positive remainder rounds up
    ["1us", 1],
    ["999999ns", 1],
    ["1ms", 1],
    ["1000001ns", 2],
    ["1.5ms", 2],
    ["1.000001ms", 2],
    ["2ms", 2],
    ["1s", 1_000],
    ["1.5s", 1_500],
    ["1m30s", 90_000],
    ["1h", 3_600_000],
    ["-1ns", 0], // negative remainders round toward zero (and never to -0)
    ["-999999ns", 0],
    ["-1ms", -1],
    ["-1.5ms", -1],
    ["-1000001ns", -1],
    ["-2.5s", -2_500],
    ["2562047h47m16.854775807s", 9_223_372_036_855],
    ["-2562047h47m16.854775808s", -9_223_372_036_854],
  ])("parses %s as %d ms", (input, want) => {
    expect(parseDurationMs(input)).toBe(want);
  });

  it.each([
    ["1", 'time: missing unit in duration "1"'],
    ["1x", 'time: unknown unit "x" in duration "1x"'],
    ["9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'],
  ])("rejects %s with Go's error", (input, message) => {
    expect(durationErrorOf(() => parseDurationMs(input)).message).toBe(message);
  });
});

describe("nanosToMs", () => {
  it.each<[bigint, number]>([
    [0n, 0],
    [1n, 1],
    [999_999n, 1],
    [1_000_000n, 1],
    [1_000_001n, 2],
    [1_500_000n, 2],
    [-1n, 0],
    [-1_000_000n, -1],
    [-1_500_000n, -1],
    [-1_999_999n, -1],
    [-2_000_000n, -2],
    [MaxInt64, 9_223_372_036_855],
    [MinInt64, -9_223_372_036_854],
  ])("converts %s ns to %d ms", (ns, want) => {
    expect(nanosToMs(ns)).toBe(want);
  });

  it("throws RangeError when the milliseconds are not a safe integer", () => {
    expect(() => nanosToMs(BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n + 1n)).toThrow(RangeError);
  });
});

describe("msToNanos", () => {
  it.each<[number, bigint]>([
    [0, 0n],
    [-0, 0n],
    [1, 1_000_000n],
    [-1, -1_000_000n],
    [1_500, 1_500_000_000n],
    [3_600_000, Hour],
    [9_223_372_036_854, 9_223_372_036_854_000_000n],
    [-9_223_372_036_854, -9_223_372_036_854_000_000n],
  ])("converts %d ms to %s ns", (ms, want) => {
    expect(msToNanos(ms)).toBe(want);
  });

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY, 9_223_372_036_855, -9_223_372_036_855, Number.MAX_SAFE_INTEGER])("throws RangeError for %d", (ms) => {
    expect(() => msToNanos(ms)).toThrow(RangeError);
  });

  it.each([0, 1, -1, 42, 1_500, 86_400_000, -86_400_000, 9_223_372_036_854])("nanosToMs(msToNanos(%d)) is the identity", (ms) => {
    expect(nanosToMs(msToNanos(ms))).toBe(ms);
  });
});
