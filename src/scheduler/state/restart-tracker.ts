/**
 * The Nomad client's restart tracker (client/allocrunner/taskrunner/
 * restarts/restarts.go, GetState): what a task that exited does next under
 * its group's restart policy. Pure: the engine's task-restarts.ts keeps the
 * tracker's count and window on the task state and runs the decision on the
 * virtual clock.
 *
 * - `Attempts` 0: never restarted ("Policy allows no restarts"), but a batch
 *   task that exited 0 simply ends.
 * - The window starts when the client received the allocation and starts
 *   over at the first exit after `Interval` has passed; each exit counts.
 * - A batch (or sysbatch) task that exited 0 ends ("Restart unnecessary as
 *   task terminated successfully"); service and system tasks restart after a
 *   successful exit too, and it counts.
 * - Within `Attempts`: restarted after `Delay` ("Restart within policy").
 *   Nomad adds up to 25 % random jitter; standin adds none, so the delay is
 *   exact on the virtual clock.
 * - Past `Attempts`: mode `fail` ends the task failed (`Exceeded allowed
 *   attempts 2 in interval 30m0s and mode is "fail"`); mode `delay` restarts
 *   it when the window ends ("Exceeded allowed attempts, applying a delay").
 */
import { formatGoDuration } from "../../core/durations.js";

export interface RestartPolicy {
  readonly Attempts: number;
  /** Nanoseconds. */
  readonly Interval: number;
  /** Nanoseconds. */
  readonly Delay: number;
  readonly Mode: string;
}

/** The tracker's state between exits: the exits counted in the window, and when the window began (virtual ms). */
export interface RestartWindow {
  readonly Count: number;
  readonly Start: number;
}

export type RestartDecision =
  | { readonly kind: "restart"; readonly delayNs: number; readonly reason: string }
  | { readonly kind: "not-restarting"; readonly reason: string }
  | { readonly kind: "terminated"; readonly reason: string };

const NS_PER_MS = 1_000_000;
export const REASON_WITHIN_POLICY = "Restart within policy";
const REASON_NO_RESTARTS = "Policy allows no restarts";
const REASON_DELAY = "Exceeded allowed attempts, applying a delay";
const REASON_UNNECESSARY = "Restart unnecessary as task terminated successfully";

/** Batch and sysbatch tasks are not restarted after a successful exit (NewRestartTracker's onSuccess). */
export function restartsOnSuccess(jobType: string): boolean {
  return jobType !== "batch" && jobType !== "sysbatch";
}

/** GetState for a task that exited with `exitCode` at `now` (virtual ms): the decision and the tracker's next window. */
export function decideRestart(
  policy: RestartPolicy,
  window: RestartWindow,
  exit: { readonly exitCode: number; readonly onSuccess: boolean; readonly now: number },
): { decision: RestartDecision; window: RestartWindow } {
  const succeeded = exit.exitCode === 0;
  if (policy.Attempts === 0) {
    if (!exit.onSuccess && succeeded) return { decision: { kind: "terminated", reason: REASON_NO_RESTARTS }, window };
    return { decision: { kind: "not-restarting", reason: REASON_NO_RESTARTS }, window };
  }
  const windowEnd = window.Start + policy.Interval / NS_PER_MS;
  const next: RestartWindow = exit.now > windowEnd ? { Count: 1, Start: exit.now } : { Count: window.Count + 1, Start: window.Start };
  if (succeeded && !exit.onSuccess) return { decision: { kind: "terminated", reason: REASON_UNNECESSARY }, window: next };
  if (next.Count > policy.Attempts) {
    if (policy.Mode === "fail") {
      const reason = `Exceeded allowed attempts ${policy.Attempts} in interval ${formatGoDuration(BigInt(policy.Interval))} and mode is "fail"`;
      return { decision: { kind: "not-restarting", reason }, window: next };
    }
    const untilWindowEnd = (next.Start + policy.Interval / NS_PER_MS - exit.now) * NS_PER_MS;
    return { decision: { kind: "restart", delayNs: Math.max(0, untilWindowEnd), reason: REASON_DELAY }, window: next };
  }
  return { decision: { kind: "restart", delayNs: policy.Delay, reason: REASON_WITHIN_POLICY }, window: next };
}
