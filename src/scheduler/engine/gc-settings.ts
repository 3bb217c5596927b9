/**
 * The garbage collector's settings: its thresholds and intervals, Nomad's
 * defaults where the configuration names none. Apart from gc.ts so the
 * engine core (core.ts), which carries the configured settings, imports
 * nothing of the collector.
 */
/** Nomad's server defaults (nomad/config.go DefaultConfig). */
export const GC_DEFAULTS = {
  evalGCThreshold: "1h",
  batchEvalGCThreshold: "24h",
  deploymentGCThreshold: "1h",
  jobGCThreshold: "4h",
  nodeGCThreshold: "24h",
  evalGCInterval: "5m",
  jobGCInterval: "5m",
  deploymentGCInterval: "5m",
  nodeGCInterval: "5m",
} as const;

export type GcSetting = keyof typeof GC_DEFAULTS;
export type GcSettings = Partial<Record<GcSetting, string>>;
