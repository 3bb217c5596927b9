/**
 * What canonicalizing a group, task or service needs to know about its job:
 * the names that fill defaults (service names, scaling targets), the
 * namespaces groups and tasks inherit, and the job-level update, reschedule
 * and migrate blocks groups merge over.
 */
import type { Obj } from "../objects.js";

export interface JobContext {
  readonly type: string;
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly consulNamespace: string;
  readonly vaultNamespace: string;
  readonly update: Obj | undefined;
  readonly reschedule: Obj | undefined;
  readonly migrate: Obj | undefined;
}
