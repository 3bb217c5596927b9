/**
 * The names the engine's parts share: the virtual clock's timer kinds, the
 * default timing, Nomad's deployment descriptions, and the status sets the
 * reconciler and the deployment watcher test allocations and deployments by.
 */
export const TIMERS = {
  eval: "scheduler.eval",
  allocStart: "scheduler.alloc-start",
  allocHealthy: "scheduler.alloc-healthy",
  batchDone: "scheduler.batch-done",
  progressDeadline: "scheduler.progress-deadline",
  periodic: "scheduler.periodic-launch",
  healthyDeadline: "scheduler.healthy-deadline",
  taskRestart: "scheduler.task-restart",
  /** A node's client reports the allocations the plan stopped as complete (allocations.ts clientSync; subject: the node). */
  clientSync: "scheduler.client-sync",
} as const;

/** The timers that act on one allocation (subject: its ID): none may touch it once it is stopped, failed or done. */
export const ALLOC_TIMERS = [TIMERS.allocStart, TIMERS.allocHealthy, TIMERS.batchDone, TIMERS.healthyDeadline, TIMERS.taskRestart] as const;

export const DEFAULT_TIMING = { evalProcess: "100ms", allocStart: "1s", batchRun: "10s" } as const;
/** Job meta key that overrides `timing.batchRun` for one batch job. */
export const BATCH_RUN_META = "standin.batch_run";

export const DEPLOYMENT_DESCRIPTIONS = {
  running: "Deployment is running",
  runningNeedsPromotion: "Deployment is running but requires manual promotion",
  runningAutoPromotion: "Deployment is running pending automatic promotion",
  successful: "Deployment completed successfully",
  newerJob: "Cancelled due to newer version of job",
  stoppedJob: "Cancelled because job is stopped",
  failedAllocations: "Failed due to unhealthy allocations",
  progressDeadline: "Failed due to progress deadline",
  failedByUser: "Deployment marked as failed",
  paused: "Deployment is paused",
} as const;

export const ACTIVE_DEPLOYMENT = new Set(["running", "paused"]);
export const NON_TERMINAL_CLIENT = new Set(["pending", "running"]);
