/**
 * Deployments: the list (`/v1/deployments`), one deployment and its
 * allocations, and its writes (fail, pause/resume, promote, allocation health).
 */
import { textResponse } from "../../http/respond.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, field, jsonBody, ReadError, serverError, typedField, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { allocStub, byCreateIndex, deploymentView, TABLES } from "../state/model.js";
import { inNamespace, notYet, only, readableAllocs, rpc, str } from "./helpers.js";
import type { RouteKit } from "./kit.js";
import { byPrefixOrCreate, createListTokenizer } from "./reads.js";

export function registerDeploymentRoutes(router: NomadRouter, { state, engine, ctx, read, objectIndex, readList }: RouteKit): void {
  router.exact("/v1/deployments", (rc) => {
    only(rc, "GET");
    return readList(
      rc,
      [TABLES.deployments],
      () =>
        byPrefixOrCreate(
          rc,
          [...state.deployments.values()].filter((d) => inNamespace(rc, d.Namespace)),
        ),
      createListTokenizer(rc),
      deploymentView,
    );
  });

  router.prefix("/v1/deployment/", async (rc) => {
    const [first, second] = rc.rest.split("/", 2) as [string, string | undefined];
    if (second === undefined) {
      only(rc, "GET");
      return read(
        rc,
        [TABLES.deployments],
        () => {
          const d = state.deployments.get(first);
          // One in a namespace the token may not read is hidden (Nomad's GetDeployment).
          if (!d || !rc.acl.allowNamespace(d.Namespace, "read-job")) throw new ReadError(404, "deployment not found", state.index(TABLES.deployments));
          return deploymentView(d);
        },
        objectIndex(TABLES.deployments, () => state.deployments.get(first)),
      );
    }
    const id = second;
    if (first === "allocations") {
      only(rc, "GET");
      return read(rc, [TABLES.allocs], () => readableAllocs(rc, byCreateIndex([...state.allocs.values()].filter((a) => a.DeploymentID === id))).map(allocStub));
    }
    only(rc, "PUT", "POST");
    if (first === "fail") return deploymentUpdate(writableDeployment(rc, id), "fail");
    if (first === "unblock") return notYet("/v1/deployment/unblock/:id (multiregion)");
    if (first !== "pause" && first !== "promote" && first !== "allocation-health") return textResponse(404, "");
    // These take a body naming the deployment again.
    const body = await jsonBody(rc);
    const given = str(field(body, "DeploymentID"));
    if (!given) throw badRequest("DeploymentID must be specified");
    if (given !== id) throw badRequest("Deployment ID does not match");
    writableDeployment(rc, id);
    if (first === "pause") return deploymentUpdate(id, typedField(body, "DeploymentPauseRequest", "Pause", "bool") === true ? "pause" : "resume");
    if (first === "promote") {
      const all = typedField(body, "DeploymentPromoteRequest", "All", "bool") === true;
      const groups = typedField(body, "DeploymentPromoteRequest", "Groups", "[]string");
      return ctx.store.write(() => {
        const evaluation = rpc(() => engine.promote(id, all ? undefined : groups));
        const index = ctx.store.writeIndex();
        return new Write({ DeploymentModifyIndex: index, EvalCreateIndex: evaluation.CreateIndex, EvalID: evaluation.ID, Index: index, RevertedJobVersion: null }, index);
      });
    }
    const healthy = typedField(body, "DeploymentAllocHealthRequest", "HealthyAllocationIDs", "[]string") ?? [];
    const unhealthy = typedField(body, "DeploymentAllocHealthRequest", "UnhealthyAllocationIDs", "[]string") ?? [];
    return ctx.store.write(() => {
      const outcome = rpc(() => engine.setAllocHealth(id, healthy, unhealthy));
      const index = ctx.store.writeIndex();
      return new Write(
        { DeploymentModifyIndex: index, EvalCreateIndex: outcome.evalIndex, EvalID: outcome.evalId, Index: index, RevertedJobVersion: outcome.revertedVersion },
        index,
      );
    });
  });

  /** Deployment writes need submit-job in the deployment's own namespace, whatever the request's (Nomad looks it up first). */
  function writableDeployment(rc: RequestContext, id: string): string {
    const deployment = state.deployments.get(id);
    if (deployment && !rc.acl.allowNamespace(deployment.Namespace, "submit-job")) throw permissionDenied();
    return id;
  }

  function deploymentUpdate(id: string, action: "fail" | "pause" | "resume") {
    const deployment = state.deployments.get(id);
    if (!deployment) throw serverError("deployment not found");
    const terminal = !["running", "paused"].includes(deployment.Status);
    if (terminal) {
      throw serverError(action === "fail" ? "can't fail terminal deployment" : action === "pause" ? "can't pause terminal deployment" : "can't resume terminal deployment");
    }
    return ctx.store.write(() => {
      let evalId = "";
      let evalIndex = 0;
      let reverted: number | null = null;
      const job = state.job(deployment.Namespace, deployment.JobID);
      if (action === "fail") {
        const outcome = engine.failDeployment(id, "Deployment marked as failed");
        reverted = outcome.revertedVersion;
        evalId = outcome.evalId;
        evalIndex = outcome.evalIndex;
      } else engine.setDeploymentPaused(id, action === "pause");
      if (action !== "pause" && job && evalId === "") {
        const evaluation = engine.createEval(job, "deployment-watcher", { DeploymentID: id });
        evalId = evaluation.ID;
        evalIndex = evaluation.CreateIndex;
      }
      const index = ctx.store.writeIndex();
      return new Write({ DeploymentModifyIndex: index, EvalCreateIndex: evalIndex, EvalID: evalId, Index: index, RevertedJobVersion: reverted }, index);
    });
  }
}
