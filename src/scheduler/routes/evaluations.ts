/** Evaluations: the list (`/v1/evaluations`), one evaluation and its allocations. */
import { evaluationFilterDatum } from "../state/filter-datum.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, ReadError, type NomadRouter } from "../http/nomad-http.js";
import { allocStub, byCreateIndex, evalView, evalWire, TABLES } from "../state/model.js";
import { inNamespace, only, readableAllocs } from "./helpers.js";
import { deleteEvaluations } from "./eval-admin.js";
import type { RouteKit } from "./kit.js";
import { byPrefixOrCreate, createListTokenizer } from "./reads.js";

export function registerEvaluationRoutes(router: NomadRouter, kit: RouteKit): void {
  const { state, read, objectIndex, readList } = kit;
  router.exact("/v1/evaluations", (rc) => {
    if (rc.method === "DELETE") return deleteEvaluations(rc, kit);
    only(rc, "GET");
    const job = rc.query.get("job") ?? "";
    const status = rc.query.get("status") ?? "";
    if ((rc.query.get("filter") ?? "") !== "" && (job !== "" || status !== "")) throw badRequest("Filter expression cannot be used with other filter parameters");
    return readList(
      rc,
      [TABLES.evals],
      () =>
        byPrefixOrCreate(
          rc,
          [...state.evals.values()].filter((e) => inNamespace(rc, e.Namespace) && (job === "" || e.JobID === job) && (status === "" || e.Status === status)),
        ),
      createListTokenizer(rc),
      evalWire,
      (e) => evaluationFilterDatum(evalView(e)), // the filter sees every field, as go-bexpr does over the Go struct
    );
  });

  router.prefix("/v1/evaluation/", (rc) => {
    only(rc, "GET");
    const [id, sub] = rc.rest.split("/", 2) as [string, string | undefined];
    if (sub === "allocations") return read(rc, [TABLES.allocs], () => readableAllocs(rc, byCreateIndex([...state.allocs.values()].filter((a) => a.EvalID === id))).map(allocStub));
    return read(
      rc,
      [TABLES.evals],
      () => {
        const evaluation = state.evals.get(id);
        if (!evaluation || sub !== undefined) throw new ReadError(404, "eval not found", state.index(TABLES.evals));
        // Checked in the evaluation's own namespace, whatever the request's (Nomad's GetEval re-checks).
        if (!rc.acl.allowNamespace(evaluation.Namespace, "read-job")) throw permissionDenied();
        return evalWire(evaluation);
      },
      objectIndex(TABLES.evals, () => state.evals.get(id)),
    );
  });
}
