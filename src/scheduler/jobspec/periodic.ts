/**
 * When a periodic job launches next, from its cron spec(s) and time zone
 * (croner evaluates the expressions; Nomad uses hashicorp/cronexpr — the
 * 5- and 6-field forms and the @-macros agree; cronexpr's 7th "year" field
 * is not supported).
 */
import { Cron } from "croner";

export interface PeriodicConfig {
  Enabled?: boolean;
  Spec?: string;
  Specs?: string[] | null;
  SpecType?: string;
  TimeZone?: string;
  ProhibitOverlap?: boolean;
}

/** The first launch strictly after `afterMs` (virtual ms), or null when disabled or never. Throws on a bad spec. */
export function nextLaunch(periodic: PeriodicConfig, afterMs: number): number | null {
  if (!periodic.Enabled || (periodic.SpecType && periodic.SpecType !== "cron")) return null;
  const specs = [...(periodic.Specs ?? []), ...(periodic.Spec ? [periodic.Spec] : [])];
  let earliest: number | null = null;
  for (const spec of specs) {
    const next = new Cron(spec, { timezone: periodic.TimeZone || "UTC", paused: true }).nextRun(new Date(afterMs));
    if (next && (earliest === null || next.getTime() < earliest)) earliest = next.getTime();
  }
  return earliest;
}
