/**
 * Evaluation administration (reference §7.2, §7.3): `GET /v1/evaluations/count`
 * and the batch delete `DELETE /v1/evaluations`.
 *
 * Nomad deletes evaluations only while the eval broker is paused
 * (`PauseEvalBroker` in the scheduler configuration, routes/operator.ts);
 * the deletion itself is the engine's (engine/eval-delete.ts).
 */
import { evaluationFilterDatum } from "../state/filter-datum.js";
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { compileFilter, FilterEvaluationError, FilterParseError } from "../../core/filter/index.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, jsonBody, typedField, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { evalView, TABLES } from "../state/model.js";
import { inNamespace, only, rpc } from "./helpers.js";
import type { RouteKit } from "./kit.js";

/** structs.MaxUUIDsPerWriteRequest. */
const MAX_UUIDS_PER_WRITE = 7281;

export function registerEvalAdminRoutes(router: NomadRouter, { state, read }: RouteKit): void {
  router.exact("/v1/evaluations/count", (rc) => {
    only(rc, "GET");
    const filter = countFilter(rc.query.get("filter") ?? "");
    return read(rc, [TABLES.evals], () => {
      let count = 0;
      for (const evaluation of state.evals.values()) {
        if (!inNamespace(rc, evaluation.Namespace) || !evaluation.ID.startsWith(rc.options.prefix)) continue;
        if (filter && !filter(evaluationFilterDatum(evalView(evaluation)))) continue;
        count++;
      }
      // The whole EvalCountResponse, its QueryMeta included (the handler returns the reply itself).
      return { Count: count, Index: Math.max(1, state.index(TABLES.evals)), KnownLeader: rc.leader.known, LastContact: rc.leader.lastContactMs, NextToken: "" };
    });
  });
}

/** Eval.Count's go-bexpr evaluator over the Evaluation; a bad expression is a 400 (the words as the lists' paginator gives them: unverified for Count). */
function countFilter(expression: string): ((datum: unknown) => boolean) | undefined {
  if (expression === "") return undefined;
  try {
    const filter = compileFilter(expression);
    return (datum) => {
      try {
        return filter.matches(datum);
      } catch (error) {
        if (error instanceof FilterEvaluationError) return false;
        throw error;
      }
    };
  } catch (error) {
    if (error instanceof FilterParseError) throw badRequest(`failed to read filter expression: ${error.message}`);
    throw error;
  }
}

/**
 * `DELETE /v1/evaluations` (evalsDeleteRequest, then Eval.Delete): the
 * body's checks, a management token, then the engine's (the broker paused,
 * each eval safe to delete). Answers EvalDeleteResponse `{Count, Index}`
 * with the index in its header.
 */
export async function deleteEvaluations(rc: RequestContext, { engine }: RouteKit): Promise<Write> {
  const body = await jsonBody(rc);
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest(unmarshalTypeError(jsonKind(body), "structs.EvalDeleteRequest"));
  const ids = typedField(body, "EvalDeleteRequest", "EvalIDs", "[]string") ?? [];
  const filter = typedField(body, "EvalDeleteRequest", "Filter", "string") ?? "";
  if (filter !== "" && ids.length > 0) throw badRequest("evals cannot be deleted by both ID and filter");
  if (filter === "" && ids.length === 0) throw badRequest("evals must be deleted by either ID or filter");
  if (ids.length > MAX_UUIDS_PER_WRITE) throw badRequest(`request includes ${ids.length} evaluation IDs, must be ${MAX_UUIDS_PER_WRITE} or fewer`);
  if (!rc.acl.management) throw permissionDenied();
  const result = rpc(() => (filter !== "" ? engine.deleteEvalsByFilter(filter) : engine.deleteEvalsById(ids)));
  return new Write({ Count: result.Count, Index: result.Index }, result.Index);
}
