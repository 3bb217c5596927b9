/**
 * What every resource's routes share: the model, the engine, the service
 * context, the agent's settings, and the reads built over them (reads.ts).
 * index.ts builds one kit and hands it to each resource's register function.
 */
import type { ServiceContext } from "../../core/context.js";
import type { SchedulerEngine } from "../engine/index.js";
import type { SchedulerState } from "../state/model.js";
import type { NodeOperations } from "../nodes/node-ops.js";
import { blockingReads, type BlockingReads } from "./reads.js";

export interface SchedulerSettings {
  region: string;
  datacenter: string;
  agentName: string;
}

export interface RouteKit extends BlockingReads {
  state: SchedulerState;
  engine: SchedulerEngine;
  ctx: ServiceContext;
  settings: () => SchedulerSettings;
  /** The server of every region (this one included): what `/v1/regions` and `/v1/agent/members` show. */
  peers: () => readonly SchedulerSettings[];
  /** Node and allocation writes (drain, eligibility, purge, stop); without it those routes are not offered. */
  nodeOps: NodeOperations | undefined;
}

export function routeKit(
  state: SchedulerState,
  engine: SchedulerEngine,
  ctx: ServiceContext,
  settings: () => SchedulerSettings,
  peers: () => readonly SchedulerSettings[],
  nodeOps: NodeOperations | undefined,
): RouteKit {
  return { state, engine, ctx, settings, peers, nodeOps, ...blockingReads(state, ctx) };
}
