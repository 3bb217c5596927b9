/**
 * The blocking-query parameters both products parse the same way (Go's
 * parseWait): `wait` as a Go duration, `index` as a uint64. Each service
 * wraps a problem in its own 400 error type.
 */
import { parseGoDuration } from "../core/durations.js";

export type BlockingParams = { index: number; waitMs: number | undefined };
export type BlockingParamsProblem = "Invalid wait time" | "Invalid index";

export function parseBlockingParams(query: URLSearchParams): BlockingParams | BlockingParamsProblem {
  let waitMs: number | undefined;
  const wait = query.get("wait");
  if (wait) {
    try {
      waitMs = Number(parseGoDuration(wait) / 1_000_000n);
    } catch {
      return "Invalid wait time";
    }
  }
  let index = 0;
  const rawIndex = query.get("index");
  if (rawIndex) {
    if (!/^\d+$/.test(rawIndex) || BigInt(rawIndex) > 0xffff_ffff_ffff_ffffn) return "Invalid index";
    index = Number(rawIndex);
  }
  return { index, waitMs };
}
