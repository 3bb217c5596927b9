/**
 * The cluster's scheduler configuration (nomad/structs/operator.go
 * SchedulerConfiguration; state store `scheduler_config`): one object, read
 * and written by `/v1/operator/scheduler/configuration`, whose switches the
 * engine and the routes obey (PauseEvalBroker holds evaluations pending,
 * RejectJobRegistration refuses job writes by non-management tokens).
 *
 * Until it is first written the cluster has the agent's default
 * configuration (Nomad's `DefaultSchedulerConfig`), reported at index 1: a
 * constant, not a row, so a state that never touched the configuration stays
 * byte-identical to one from before it was emulated (snapshots, state hash,
 * tapes). The first write creates the row, at that write's index.
 */
import type { StoreView } from "../../core/store.js";

export const SCHEDULER_CONFIG_TABLE = "scheduler.scheduler-config";

/** The row's key: the configuration is a singleton, as Nomad's table is. */
const CONFIG_ID = "config";

/** structs.PreemptionConfig. */
export type PreemptionConfig = {
  SystemSchedulerEnabled: boolean;
  SysBatchSchedulerEnabled: boolean;
  BatchSchedulerEnabled: boolean;
  ServiceSchedulerEnabled: boolean;
};

/**
 * structs.SchedulerConfiguration at Nomad 1.9.7; the encoder sorts its keys.
 * (A later Nomad adds NodeLimitForFeasibilityChecks; 1.9.7 neither keeps nor
 * sends it, so a PUT carrying it has it ignored as an unknown key.)
 */
export type SchedulerConfigRow = {
  SchedulerAlgorithm: string;
  PreemptionConfig: PreemptionConfig;
  MemoryOversubscriptionEnabled: boolean;
  RejectJobRegistration: boolean;
  PauseEvalBroker: boolean;
  CreateIndex: number;
  ModifyIndex: number;
};

export type SchedulerConfigInput = Omit<SchedulerConfigRow, "CreateIndex" | "ModifyIndex">;

/** nomad/config.go DefaultConfig's DefaultSchedulerConfig, as the leader persists it on bootstrap. */
export const DEFAULT_SCHEDULER_CONFIG: SchedulerConfigRow = Object.freeze({
  SchedulerAlgorithm: "binpack",
  PreemptionConfig: Object.freeze({ SystemSchedulerEnabled: true, SysBatchSchedulerEnabled: false, BatchSchedulerEnabled: false, ServiceSchedulerEnabled: false }),
  MemoryOversubscriptionEnabled: false,
  RejectJobRegistration: false,
  PauseEvalBroker: false,
  CreateIndex: 1,
  ModifyIndex: 1,
});

export const SCHEDULER_ALGORITHMS: readonly string[] = ["binpack", "spread"];

/** The configuration in force: the stored one, else the default. */
export function schedulerConfig(store: Pick<StoreView, "table">): SchedulerConfigRow {
  return store.table<SchedulerConfigRow>(SCHEDULER_CONFIG_TABLE).get(CONFIG_ID) ?? DEFAULT_SCHEDULER_CONFIG;
}

/** SchedulerConfiguration.Validate: the algorithm is empty, binpack or spread. Undefined when valid. */
export function validateSchedulerConfig(config: SchedulerConfigInput): string | undefined {
  if (config.SchedulerAlgorithm === "" || SCHEDULER_ALGORITHMS.includes(config.SchedulerAlgorithm)) return undefined;
  return `invalid scheduler algorithm: ${config.SchedulerAlgorithm}`;
}

/**
 * The FSM's apply (applySchedulerConfigUpdate): Canonicalize (an empty
 * algorithm is binpack), then a plain write, or with `cas` a check-and-set
 * that writes only when `cas` is the current ModifyIndex. Must run inside a
 * store write; the write takes an index either way (Nomad's raft apply does,
 * and answers with it even when the CAS did not match). (Nomad's CAS against
 * the default never misses it for want of a row: its row is written at
 * bootstrap; here the default's index 1 is the one to name.)
 */
export function writeSchedulerConfig(store: StoreView, config: SchedulerConfigInput, cas?: number): { updated: boolean; index: number } {
  const table = store.table<SchedulerConfigRow>(SCHEDULER_CONFIG_TABLE);
  const index = store.writeIndex();
  const current = table.get(CONFIG_ID) ?? DEFAULT_SCHEDULER_CONFIG;
  if (cas !== undefined && current.ModifyIndex !== cas) return { updated: false, index };
  const canonical = { ...config, SchedulerAlgorithm: config.SchedulerAlgorithm === "" ? "binpack" : config.SchedulerAlgorithm };
  table.put(CONFIG_ID, { ...canonical, CreateIndex: current.CreateIndex, ModifyIndex: index });
  return { updated: true, index };
}
