/**
 * The client's allocation actions (`/v1/client/allocation/:id/<action>`,
 * command/agent alloc_endpoint.go ClientAllocRequest): restart, signal and
 * stats (scheduler-breadth-nomad.md §3.1–3.3, §3.5), and the native service
 * checks' results (service-checks.ts). Every node is this agent's own client,
 * so each placed allocation the client reported on is served here; the other
 * actions (exec, snapshot, gc, pause) are the route catalog's 501.
 *
 * Restart and signal change the allocation's TaskStates in one write (the
 * client's alloc update) and answer `{"Index":0}` as Nomad's
 * GenericResponse does; stats is a plain read of the virtual clock's instant.
 */
import { permissionDenied } from "../acl/acl-routes.js";
import { clientAlloc, putTaskStates, restartAllocation, signalTasks, SignalFailures, type RestartRequest } from "../allocations/alloc-lifecycle.js";
import { allocResourceUsage } from "../allocations/alloc-stats.js";
import { jsonBody, NomadError, typedField, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { versionKey } from "../state/model.js";
import type { TaskStatesRow } from "../state/task-states.js";
import { serviceChecksOf } from "../services/service-checks.js";
import { only, rpc } from "./helpers.js";
import type { RouteKit } from "./kit.js";

export function registerAllocActionRoutes(router: NomadRouter, kit: RouteKit): void {
  const { state, ctx } = kit;
  const lifecycleAlloc = (rc: RequestContext, id: string) => {
    const alloc = rpc(() => clientAlloc(state.allocs.get(id), id));
    if (!rc.acl.allowNamespace(alloc.Namespace, "alloc-lifecycle")) throw permissionDenied();
    return alloc;
  };

  router.prefix("/v1/client/allocation/", async (rc) => {
    const tokens = rc.rest.split("/");
    if (tokens.length !== 2) throw new NomadError(404, "resource not found");
    const [id, action] = tokens as [string, string];
    switch (action) {
      case "restart": {
        // No method check; the body is decoded with encoding/json into {TaskName, AllTasks}, an empty one is fine.
        const request = await restartBody(rc);
        const alloc = lifecycleAlloc(rc, id);
        rpc(() => restartAllocation(state, ctx, alloc, request));
        return { Index: 0 };
      }
      case "signal": {
        only(rc, "POST", "PUT");
        const { task, signal } = await signalBody(rc);
        const alloc = lifecycleAlloc(rc, id);
        let states: TaskStatesRow;
        let failures: SignalFailures | undefined;
        try {
          states = rpc(() => signalTasks(alloc, task, signal, ctx.clock.now()));
        } catch (error) {
          if (!(error instanceof SignalFailures)) throw error;
          // The running tasks were signaled all the same; the others are the error.
          failures = error;
          states = error.states;
        }
        ctx.store.write(() => putTaskStates(state, ctx, alloc, states, "signal"));
        if (failures) throw new NomadError(failures.status, failures.message);
        return { Index: 0 };
      }
      case "stats": {
        const alloc = rpc(() => clientAlloc(state.allocs.get(id), id));
        if (!rc.acl.allowNamespace(alloc.Namespace, "read-job")) throw permissionDenied();
        const job = state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? state.job(alloc.Namespace, alloc.JobID);
        return allocResourceUsage(alloc, job, rc.query.get("task") ?? "", ctx.clock.now());
      }
      case "checks":
        return allocChecks(kit, rc, id);
      default:
        throw new NomadError(404, "resource not found");
    }
  });
}

/**
 * `GET /v1/client/allocation/:id/checks` and `/v1/allocation/:id/checks`
 * (allocChecks → Allocations.Checks): the allocation as its client knows it
 * (404 `Unknown allocation`), then read-job in its namespace; the client's
 * check store for it, `null` when it holds nothing. Any method is served, as
 * the handler checks none; no index headers (the client RPC sets none).
 */
export function allocChecks({ state, ctx }: RouteKit, rc: RequestContext, id: string) {
  const alloc = rpc(() => clientAlloc(state.allocs.get(id), id));
  if (!rc.acl.allowNamespace(alloc.Namespace, "read-job")) throw permissionDenied();
  return serviceChecksOf(state).results(alloc, ctx.clock.now());
}

/** encoding/json's Decode into the handler's anonymous struct: a failure is the RPC layer's plain 500. */
async function restartBody(rc: RequestContext): Promise<RestartRequest> {
  if ((await rc.c.req.text()).trim() === "") return { TaskName: "", AllTasks: false };
  try {
    const body = await jsonBody(rc);
    return { TaskName: typedField(body, "", "TaskName", "string") ?? "", AllTasks: typedField(body, "", "AllTasks", "bool") ?? false };
  } catch (error) {
    if (error instanceof NomadError && error.status === 400) throw new NomadError(500, error.message);
    throw error;
  }
}

/** decodeBody into AllocSignalRequest: a failure is a 400 `Failed to decode body: …`. */
async function signalBody(rc: RequestContext): Promise<{ task: string; signal: string }> {
  try {
    const body = await jsonBody(rc);
    return { task: typedField(body, "AllocSignalRequest", "Task", "string") ?? "", signal: typedField(body, "AllocSignalRequest", "Signal", "string") ?? "" };
  } catch (error) {
    if (error instanceof NomadError && error.status === 400) throw new NomadError(400, `Failed to decode body: ${error.message}`);
    throw error;
  }
}
