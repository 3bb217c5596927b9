/**
 * Workload identity blocks, shared by tasks and services.
 */
import { structDiff } from "./combinators.js";
import { stringSetDiff } from "./primitives.js";
import type { OD } from "./types.js";

/** WorkloadIdentity (task identity, alternate identities, service identity). */
export function idDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Identity", prev, next, contextual, {
    objects: (p, n) => [stringSetDiff(p["Audience"], n["Audience"], "Audience", contextual)],
  });
}
