import { describe, it, expect } from "vitest";
import { InstantError, formatInstant, parseInstant } from "../../src/core/instant.js";

const START = 1_767_225_600_000; // 2026-01-01T00:00:00Z

describe("parseInstant", () => {
  it.each<[string, number]>([
    ["2026-01-01T00:00:00Z", START],
    ["2026-01-01T00:00:00z", START],
    ["2026-01-01t00:00:00Z", START],
    ["2026-01-01T02:00:00+02:00", START],
    ["2025-12-31T19:00:00-05:00", START],
    ["2026-01-01T05:30:00+05:30", START],
    ["2026-01-01T00:00:00+00:00", START],
    ["2026-01-01T00:00:00-00:00", START],
    ["2026-01-01T00:00:00.5Z", START + 500],
    ["2026-01-01T00:00:00.05Z", START + 50],
    ["2026-01-01T00:00:00.123Z", START + 123],
    ["2026-01-01T00:00:00.123456789Z", START + 123], // sub-millisecond digits are truncated
    ["2026-01-01T00:00:00.999999999Z", START + 999], // truncated, not rounded into the next second
    ["2026-01-01T01:00:00.25+01:00", START + 250],
    ["2026-01-01T23:59:59Z", START + 86_399_000],
    ["2028-02-29T00:00:00Z", Date.UTC(2028, 1, 29)],
    ["2000-02-29T12:00:00Z", Date.UTC(2000, 1, 29, 12)],
    ["1970-01-01T00:00:00Z", 0],
    ["1969-12-31T23:59:59.999Z", -1],
  ])("parses %s", (text, expected) => {
    expect(parseInstant(text)).toBe(expected);
  });

  it.each([
    "2026-13-01T00:00:00Z",
    "2026-00-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
    "2026-02-29T00:00:00Z", // 2026 is not a leap year
    "1900-02-29T00:00:00Z", // nor is 1900
    "2026-04-31T00:00:00Z",
    "2026-01-00T00:00:00Z",
    "2026-01-01T24:00:00Z",
    "2026-01-01T00:60:00Z",
    "2026-01-01T00:00:60Z",
    "yesterday",
    "",
    "2026-01-01T00:00:00", // missing zone
    "2026-01-01",
    "2026-01-01 00:00:00Z",
    "2026-01-01T00:00:00.Z",
    "2026-1-01T00:00:00Z",
    "2026-01-01T00:00:00+0200",
    "2026-01-01T00:00:00+02",
    "2026-01-01T00:00:00UTC",
    " 2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00Z ",
  ])("rejects %j", (text) => {
    expect(() => parseInstant(text)).toThrow(InstantError);
  });

  it("names the bad input in the error", () => {
    expect(() => parseInstant("yesterday")).toThrow(/"yesterday"/);
  });

  it("rejects non-string input with InstantError", () => {
    expect(() => parseInstant(12345 as unknown as string)).toThrow(InstantError);
    expect(() => parseInstant(undefined as unknown as string)).toThrow(InstantError);
  });

  // Regression (was a bug, now fixed): parseInstant builds the instant with Date.UTC, which maps years 0–99
  // to 1900–1999. Go's zero time "0001-01-01T00:00:00Z" (what both real
  // products print for an unset time.Time) therefore parses as 1901-01-01.
  // It should give -62135596800000 (Go: time.Time{}.Unix() = -62135596800).
  it("parses Go's zero time 0001-01-01T00:00:00Z as year 1, not 1901", () => {
    expect(parseInstant("0001-01-01T00:00:00Z")).toBe(-62_135_596_800_000);
  });

  // Regression (was a bug, now fixed): the zone offset's hour and minute are not range-checked. RFC 3339
  // (time-numoffset = time-hour ":" time-minute) and Go's time.Parse reject
  // "+02:99" and "+24:00"; parseInstant accepts them and shifts by 219 minutes / 24 hours.
  it.each(["2026-01-01T00:00:00+02:99", "2026-01-01T00:00:00+24:00"])("rejects the out-of-range zone offset in %s", (text) => {
    expect(() => parseInstant(text)).toThrow(InstantError);
  });
});

describe("formatInstant", () => {
  it.each<[number, string]>([
    [START, "2026-01-01T00:00:00Z"],
    [START + 500, "2026-01-01T00:00:00.5Z"],
    [START + 120, "2026-01-01T00:00:00.12Z"],
    [START + 123, "2026-01-01T00:00:00.123Z"],
    [START + 10, "2026-01-01T00:00:00.01Z"],
    [START + 1, "2026-01-01T00:00:00.001Z"],
    [START + 1500, "2026-01-01T00:00:01.5Z"],
    [START + 86_399_999, "2026-01-01T23:59:59.999Z"],
    [0, "1970-01-01T00:00:00Z"],
    [-1, "1969-12-31T23:59:59.999Z"],
  ])("formats %i as %s (Go RFC3339Nano: fraction only when non-zero, trailing zeros trimmed)", (ms, text) => {
    expect(formatInstant(ms)).toBe(text);
  });

  it.each([START, START + 1, START + 10, START + 100, START + 999, 0, -1, Date.UTC(2028, 1, 29, 23, 59, 59, 990)])("parseInstant(formatInstant(%i)) round-trips", (ms) => {
    expect(parseInstant(formatInstant(ms))).toBe(ms);
  });
});
