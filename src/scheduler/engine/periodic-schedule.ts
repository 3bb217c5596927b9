/**
 * A periodic parent's next launch, armed as a timer on the virtual clock
 * (when: ../jobspec/periodic.ts's cron evaluation). Registering the parent arms it;
 * each launch (periodic-launches.ts) arms the one after.
 */
import { jobKey, type JobRow } from "../state/model.js";
import { nextLaunch, type PeriodicConfig } from "../jobspec/periodic.js";
import { TIMERS } from "./constants.js";
import type { EngineCore } from "./core.js";
import { isPeriodic } from "./job-kinds.js";

/** Arms the parent's next launch on the virtual clock (replacing any armed one). */
export function schedulePeriodic(core: EngineCore, job: JobRow): void {
  const key = jobKey(job.Namespace, job.ID);
  core.ctx.clock.cancelFor(TIMERS.periodic, key);
  if (!isPeriodic(job) || job.Stop) return;
  const next = nextLaunch(job.Periodic as PeriodicConfig, core.ctx.clock.now());
  if (next !== null) core.ctx.clock.schedule({ at: next, kind: TIMERS.periodic, subject: key });
}
