/** Commander parsers for option values: a bad value is refused with the reason, and commander prints it with the usage line. */
import { InvalidArgumentError } from "commander";
import { InstantError, parseInstant } from "../core/instant.js";

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function integer(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError("expected a non-negative integer");
  return n;
}

export function positiveInteger(value: string): number {
  const n = integer(value);
  if (n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

const SIZE_UNITS: Record<string, number> = { "": 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A size in bytes: `1048576`, `512k`, `64m`, `1g` (binary units). */
export function byteSize(value: string): number {
  const match = /^(\d+)([kmg]?)$/i.exec(value.trim());
  const n = match ? Number(match[1]) * SIZE_UNITS[match[2]!.toLowerCase()]! : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a size in bytes, e.g. 1048576, 512k, 64m or 1g");
  return n;
}

export function port(value: string): number {
  const n = integer(value);
  if (n > 65535) throw new InvalidArgumentError("expected a port from 0 to 65535");
  return n;
}

export function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a positive number");
  return n;
}

/** `--start-time`: `now` or an RFC 3339 timestamp, checked here so the error names the option, not a fixture. */
export function startTime(value: string): string {
  if (value === "now") return value;
  try {
    parseInstant(value);
  } catch (error) {
    if (!(error instanceof InstantError)) throw error;
    // The parser's own "(expected e.g. …)" is said here already; what else it says (a field out of range) is kept.
    const detail = /\(([^)]*)\)$/.exec(error.message)?.[1];
    const why = detail && !detail.startsWith("expected") ? ` (${detail})` : "";
    throw new InvalidArgumentError(`expected now or an RFC 3339 timestamp, e.g. 2026-01-01T00:00:00Z${why}`);
  }
  return value;
}
