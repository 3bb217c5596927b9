/**
 * What every step of the engine works on: the scheduler's state, the
 * service context (store, virtual clock, seeded ids, event journal), the
 * configured timing, and the follow-ups a later step may ask of an earlier
 * one. The SchedulerEngine (index.ts) holds one EngineCore and hands it to
 * the functions of each step; this file imports none of them.
 */
import type { ServiceContext } from "../../core/context.js";
import { parseDurationMs } from "../../core/durations.js";
import type { EvalRow, JobRow, SchedulerState } from "../state/model.js";
import { DEFAULT_TIMING } from "./constants.js";
import type { GcSettings } from "./gc-settings.js";

export interface EngineCore {
  readonly state: SchedulerState;
  readonly ctx: ServiceContext;
  readonly timing: () => Record<string, string>;
  /** The garbage collector's thresholds and intervals as configured (engine/gc.ts; Nomad's defaults where absent). */
  readonly gc?: () => GcSettings | undefined;
  /** Earlier work a later step asks for (index.ts wires each to its step). */
  readonly followUps: FollowUps;
}

/**
 * The only way a step asks for the work of an earlier one (index.ts explains
 * the pipeline). Each ask runs at once, where it is made, and returns what
 * the asking step needs (the evaluation's ID, the revert's), so every store
 * write, event, timer and seeded ID keeps the order a direct call had.
 */
export interface FollowUps {
  /** A new evaluation of the job, pending in the broker (or blocked, as `extra` says): evaluations.ts createEval. */
  evaluation(job: JobRow, triggeredBy: string, extra?: Partial<EvalRow>): EvalRow;
  /** A failed deployment's auto_revert: the job registered again at `version` (revert.ts). */
  revert(namespace: string, id: string, version: number): RegisterResult;
}

export interface RegisterResult {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}

/** The parts of a task group the engine reads. */
export type Group = {
  Name: string;
  Count: number;
  Update: Record<string, unknown> | null;
  Networks?: Json[] | null;
  Tasks: Array<{ Resources?: { CPU?: number; MemoryMB?: number; SecretsMB?: number } }>;
};

export type Json = Record<string, unknown>;

/** A timing setting (evalProcess, allocStart, batchRun) in virtual ms: the configured value, else the default. */
export function duration(core: EngineCore, name: keyof typeof DEFAULT_TIMING): number {
  return parseDurationMs(core.timing()[name] ?? DEFAULT_TIMING[name]);
}

/** Nomad's durations are nanoseconds; the virtual clock counts milliseconds (rounded up). */
export function nanosToMs(ns: number): number {
  return Math.ceil(ns / 1_000_000);
}

/**
 * `update { health_check = "manual" }`: only an operator's `allocation-health`
 * report sets a deployment allocation's health. Nomad's client runs no health
 * watcher for such a group (health_hook: no min_healthy_time, no
 * healthy_deadline); the deployment's progress deadline still applies.
 */
export function healthSetByOperator(group: { Update?: unknown } | undefined): boolean {
  return (group?.Update as { HealthCheck?: unknown } | null | undefined)?.HealthCheck === "manual";
}
