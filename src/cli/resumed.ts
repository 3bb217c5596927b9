/** The start banner's line about `--state-file`: what was resumed from it, or that it starts fresh. */
import { formatInstant } from "../core/instant.js";
import type { ResumedState } from "../state-file.js";

export function resumedLine(file: string, resumed: ResumedState | undefined): string {
  if (!resumed) return `state file ${file} not found: starting from the fixtures (it is written while running and on exit)`;
  const { counts } = resumed;
  const parts = [
    plural(counts.jobs, "job"),
    plural(counts.allocations, "allocation"),
    plural(counts.nodes, "node"),
    plural(counts.sessions, "session"),
    plural(counts.keys, "KV key"),
  ];
  return `state resumed from ${file} (index ${resumed.index}: ${parts.join(", ")}; clock at ${formatInstant(resumed.nowMs)})`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
