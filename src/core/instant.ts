/**
 * Instants on the virtual clock are integer milliseconds since the Unix epoch.
 * These helpers convert them to and from the RFC 3339 text the real products
 * print (Go's RFC3339Nano layout: fractional seconds only when non-zero, with
 * trailing zeros trimmed, and `Z` for UTC).
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export class InstantError extends Error {}

/** Parses an RFC 3339 timestamp strictly (no Date.parse leniency); sub-millisecond digits are truncated. */
export function parseInstant(text: string): number {
  const m = typeof text === "string" ? RFC3339.exec(text) : null;
  if (!m) throw new InstantError(`invalid RFC 3339 timestamp ${JSON.stringify(text)} (expected e.g. 2026-01-01T00:00:00Z)`);
  const [, y, mo, d, h, mi, s, frac = "", zone] = m;
  const month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(Number(y), month) || hour > 23 || minute > 59 || second > 59) {
    throw new InstantError(`invalid RFC 3339 timestamp ${JSON.stringify(text)} (field out of range)`);
  }
  const ms = frac ? Number(frac.slice(1, 4).padEnd(3, "0")) : 0;
  let utc = utcMillis(Number(y), month - 1, day, hour, minute, second, ms);
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone.startsWith("-") ? -1 : 1;
    const offsetHours = Number(zone.slice(1, 3));
    const offsetMinutes = Number(zone.slice(4, 6));
    if (offsetHours > 23 || offsetMinutes > 59) throw new InstantError(`invalid RFC 3339 timestamp ${JSON.stringify(text)} (zone offset out of range)`);
    utc -= sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  return utc;
}

// The two instants formatted last (the clock's now and its next timer, say), newest first.
let recentMs = [NaN, NaN];
let recentText = ["", ""];

/** Go's RFC3339Nano formatting of a UTC instant, e.g. 2026-01-01T00:00:00Z or 2026-01-01T00:00:01.5Z. */
export function formatInstant(ms: number): string {
  // The virtual clock often stands still between requests: remember the last answers.
  if (ms === recentMs[0]) return recentText[0]!;
  if (ms === recentMs[1]) return recentText[1]!;
  const iso = new Date(ms).toISOString(); // 2026-01-01T00:00:00.000Z
  const base = iso.slice(0, 19);
  const frac = iso.slice(20, 23).replace(/0+$/, "");
  const text = frac ? `${base}.${frac}Z` : `${base}Z`;
  recentMs = [ms, recentMs[0]!];
  recentText = [text, recentText[0]!];
  return text;
}

/** Date.UTC maps years 0–99 to 1900–1999; Go's zero time is year 1, so set the year explicitly. */
function utcMillis(year: number, monthIndex: number, day: number, hour: number, minute: number, second: number, ms: number): number {
  const date = new Date(Date.UTC(2000, monthIndex, day, hour, minute, second, ms));
  date.setUTCFullYear(year, monthIndex, day);
  return date.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(utcMillis(year, month, 0, 0, 0, 0, 0)).getUTCDate();
}
