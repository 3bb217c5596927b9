/**
 * structs.ReschedulePolicy.Validate: the field checks, then whether the
 * delay function can make the attempts within the interval (and the interval
 * Nomad recommends when it cannot).
 */
import { SECOND } from "../go.js";
import { goQuote } from "../../../core/go/strconv.js";
import type { Obj } from "../objects.js";
import { dur, flag, goQuotedStrings, num, str } from "./read.js";

const DELAY_FUNCTIONS = ["constant", "exponential", "fibonacci"] as const;

/** Go's Duration.Round(time.Second): halfway values round away from zero. */
function roundToSecond(ns: number): number {
  const q = Math.trunc(ns / SECOND);
  const r = ns - q * SECOND;
  if (Math.abs(r) * 2 >= SECOND) return (q + Math.sign(ns)) * SECOND;
  return q * SECOND;
}

function viableAttempts(r: Obj): { valid: boolean; possible: number; recommended: number } {
  const attempts = num(r, "Attempts");
  const interval = num(r, "Interval");
  const delay = num(r, "Delay");
  const maxDelay = num(r, "MaxDelay");
  let possible = 0;
  let recommended = 0;
  let valid = true;
  switch (str(r, "DelayFunction")) {
    case "constant":
      recommended = attempts * delay;
      if (interval < recommended) {
        possible = Math.trunc(interval / delay);
        valid = false;
      }
      break;
    case "exponential":
      for (let i = 0; i < attempts; i++) {
        let next = 2 ** i * delay;
        if (next > maxDelay) {
          next = maxDelay;
          recommended += next;
        } else {
          recommended = next;
        }
        if (recommended < interval) possible++;
      }
      if (possible < attempts) valid = false;
      break;
    case "fibonacci": {
      const slots = [delay, delay];
      let reachedCeiling = false;
      for (let i = 2; i < attempts; i++) {
        let next: number;
        if (reachedCeiling) next = (slots[i - 1] ?? 0) + maxDelay;
        else {
          next = (slots[i - 1] ?? 0) + (slots[i - 2] ?? 0);
          if (next > maxDelay) {
            next = maxDelay;
            reachedCeiling = true;
          }
        }
        slots.push(next);
      }
      recommended = slots[slots.length - 1] ?? 0;
      if (interval < recommended) {
        valid = false;
        for (let i = 0; i < slots.length; i++) {
          if ((slots[i] ?? 0) > interval) {
            possible = i;
            break;
          }
        }
      }
      break;
    }
    default:
      return { valid: false, possible: 0, recommended: 0 };
  }
  return { valid, possible: Math.max(0, possible), recommended };
}

export function validateReschedule(r: Obj): string[] {
  const attempts = num(r, "Attempts");
  const unlimited = flag(r, "Unlimited");
  if (!(attempts > 0 || unlimited)) return [];
  const errs: string[] = [];
  const interval = num(r, "Interval");
  const delay = num(r, "Delay");
  const maxDelay = num(r, "MaxDelay");
  const fn = str(r, "DelayFunction");
  if (attempts > 0) {
    if (interval <= 0) errs.push("Interval must be a non zero value if Attempts > 0");
    if (unlimited) {
      errs.push(`Reschedule Policy with Attempts = ${attempts}, Interval = ${dur(interval)}, and Unlimited = ${unlimited} is ambiguous`);
      errs.push("If Attempts >0, Unlimited cannot also be set to true");
    }
  }
  let delayPreCheck = true;
  if (delay < 5 * SECOND) {
    errs.push(`Delay cannot be less than ${dur(5 * SECOND)} (got ${dur(delay)})`);
    delayPreCheck = false;
  }
  if (!(DELAY_FUNCTIONS as readonly string[]).includes(fn)) {
    errs.push(`Invalid delay function ${goQuote(fn)}, must be one of ${goQuotedStrings(DELAY_FUNCTIONS)}`);
    delayPreCheck = false;
  }
  if (fn !== "constant") {
    if (maxDelay < 5 * SECOND) {
      // Nomad prints the delay here, not the max delay.
      errs.push(`Max Delay cannot be less than ${dur(5 * SECOND)} (got ${dur(delay)})`);
      delayPreCheck = false;
    }
    if (maxDelay < delay) {
      errs.push(`Max Delay cannot be less than Delay ${dur(delay)} (got ${dur(maxDelay)})`);
      delayPreCheck = false;
    }
  }
  if (!unlimited) {
    if (interval < 15 * SECOND) errs.push(`Interval cannot be less than ${dur(15 * SECOND)} (got ${dur(interval)})`);
    if (!delayPreCheck) return errs;
    const { valid, possible, recommended } = viableAttempts(r);
    if (!valid) {
      if (fn === "constant") {
        errs.push(`Nomad can only make ${possible} attempts in ${dur(interval)} with initial delay ${dur(delay)} and delay function ${goQuote(fn)}`);
      } else {
        errs.push(
          `Nomad can only make ${possible} attempts in ${dur(interval)} with initial delay ${dur(delay)}, delay function ${goQuote(fn)}, and delay ceiling ${dur(maxDelay)}`,
        );
      }
      errs.push(`Set the interval to at least ${dur(roundToSecond(recommended))} to accommodate ${attempts} attempts`);
    }
  }
  return errs;
}
