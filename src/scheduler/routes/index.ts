/**
 * The scheduler's endpoints (reference §7's table), over the model and the
 * engine. Reads carry the index of the tables they read and block on
 * `?index=`; writes answer with their index.
 *
 * One file per resource; this registers them in the order they have always
 * been registered (jobs, evaluations, allocations, deployments, nodes, agent,
 * status, namespaces), then the operator's scheduler configuration.
 */
import type { ServiceContext } from "../../core/context.js";
import type { SchedulerEngine } from "../engine/index.js";
import type { NomadRouter } from "../http/nomad-http.js";
import type { SchedulerState } from "../state/model.js";
import type { NodeOperations } from "../nodes/node-ops.js";
import { registerAgentRoutes } from "./agent.js";
import { registerAllocActionRoutes } from "./alloc-actions.js";
import { registerAllocationRoutes } from "./allocations.js";
import { registerDeploymentRoutes } from "./deployments.js";
import { registerEvaluationRoutes } from "./evaluations.js";
import { registerEvalAdminRoutes } from "./eval-admin.js";
import { registerJobRoutes } from "./job.js";
import { registerJobsRoutes } from "./jobs.js";
import { registerJobStatusRoutes } from "./job-statuses.js";
import { routeKit, type SchedulerSettings } from "./kit.js";
import { registerNamespaceRoutes } from "./namespaces.js";
import { registerNodeRoutes } from "./nodes.js";
import { registerNodePoolRoutes } from "./node-pools.js";
import { registerOperatorRoutes } from "./operator.js";
import { registerSearchRoutes } from "./search.js";
import { registerServiceRoutes } from "./services.js";
import { registerStatusRoutes } from "./status.js";
import { registerSystemRoutes } from "./system.js";
import { registerVariableRoutes } from "./variables.js";

export type { SchedulerSettings } from "./kit.js";

/**
 * `peers`: the server of every region (this one included), sorted by region:
 * what `/v1/regions` and `/v1/agent/members` show of the federation.
 */
export function registerRoutes(
  router: NomadRouter,
  state: SchedulerState,
  engine: SchedulerEngine,
  ctx: ServiceContext,
  settings: () => SchedulerSettings,
  peers: () => readonly SchedulerSettings[] = () => [settings()],
  nodeOps?: NodeOperations,
): void {
  const kit = routeKit(state, engine, ctx, settings, peers, nodeOps);
  registerJobsRoutes(router, kit);
  registerJobStatusRoutes(router, kit);
  registerJobRoutes(router, kit);
  registerEvaluationRoutes(router, kit);
  registerEvalAdminRoutes(router, kit);
  registerAllocationRoutes(router, kit);
  registerAllocActionRoutes(router, kit);
  registerDeploymentRoutes(router, kit);
  registerNodeRoutes(router, kit);
  registerNodePoolRoutes(router, kit);
  registerAgentRoutes(router, kit);
  registerStatusRoutes(router, kit);
  registerNamespaceRoutes(router, kit);
  registerVariableRoutes(router, kit);
  registerServiceRoutes(router, kit);
  registerOperatorRoutes(router, kit);
  registerSystemRoutes(router, kit);
  registerSearchRoutes(router, kit);
}
