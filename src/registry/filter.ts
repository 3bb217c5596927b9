/**
 * `filter=` for the registry's route modules. Consul reads the parameter (`parseFilter`: an empty one is
 * no filter), creates a go-bexpr v0.1.2 filter for the endpoint's element type before running the query,
 * and returns creation errors — `Failed to create boolean expression evaluator: …` — as plain errors,
 * which its HTTP layer answers with a 500 (hashicorp/consul #7338, #6467). A dev server adds no
 * `rpc error making call: ` prefix, and neither does the emulator.
 *
 * Use: `const keep = registryFilter(rc, NODE_FILTER);` before `blockingRead`, then
 * `filterRows(rows, keep)` on the element rows inside the query (before ACL filtering, as Consul does).
 */
import { createTypedFilter, TypedEvaluationError, TypedFilterError, type TypedFilter } from "../core/filter/index.js";
import type { StructSchema } from "../core/filter/typed/index.js";
import { serverError, type RequestContext } from "./http.js";

/** The request's filter as a predicate over rows of the schema's type, or undefined when `filter=` is absent or empty. Throws Consul's 500 for a filter that cannot be created. */
export function registryFilter<T = unknown>(rc: RequestContext, schema: StructSchema): ((row: T) => boolean) | undefined {
  const expression = rc.query.get("filter");
  if (expression === null || expression === "") return undefined;
  let filter: TypedFilter;
  try {
    filter = createTypedFilter(expression, schema);
  } catch (e) {
    if (e instanceof TypedFilterError) throw serverError(e.message);
    throw e;
  }
  return (row: T) => {
    try {
      return filter.matches(row);
    } catch (e) {
      if (e instanceof TypedEvaluationError) throw serverError(e.message);
      throw e;
    }
  };
}

/** The rows a filter keeps (all of them without one). */
export function filterRows<T>(rows: readonly T[], keep: ((row: T) => boolean) | undefined): T[] {
  return keep === undefined ? [...rows] : rows.filter(keep);
}
