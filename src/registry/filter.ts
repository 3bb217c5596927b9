/**
 * `filter=` for the registry's route modules. Consul reads the parameter (`parseFilter`: an empty one is
 * no filter), creates a go-bexpr v0.1.2 filter for the endpoint's element type before running the query,
 * and returns creation errors — `Failed to create boolean expression evaluator: …` — as plain errors,
 * which its HTTP layer answers with a 500 (hashicorp/consul #7338, #6467). A dev server adds no
 * `rpc error making call: ` prefix, and neither does the emulator.
 *
 * Use: `const keep = registryFilter(rc, NODE_FILTER);` before `blockingRead`, then
 * `filterRows(rows, keep)` on the rendered element rows (Go field names) inside the query. Where the
 * filter runs relative to the ACL filter differs per endpoint: since Consul 1.20.2 (hashicorp/consul
 * #21950, a security fix) agent/services, agent/checks, health/service, health/state and health/node
 * filter ACLs first, so `X-Consul-Results-Filtered-By-ACLs` answers as if there were no `filter=`;
 * health/checks and the catalog reads keep the older order (expression, then ACLs).
 */
import { createTypedFilter, TypedEvaluationError, TypedFilterError, type TypedFilter } from "../core/filter/index.js";
import { parseExpression } from "../core/filter/grammar/parser.js";
import { CREATE_FILTER_PREFIX, type StructSchema } from "../core/filter/typed/index.js";
import { serverError, type RequestContext } from "./http.js";

export interface RegistryFilterOptions {
  /**
   * Consul's AgentChecks creates its filter with no type (`bexpr.CreateFilter(expr, nil, nil)`): only
   * parse errors fail at creation. go-bexpr v0.1.2 then validates the selectors against the first row it
   * evaluates, and that error comes back bare (no `Failed to create…` prefix) — or not at all when
   * there is no row.
   */
  validateOnFirstRow?: boolean;
}

/** The request's filter as a predicate over rows of the schema's type, or undefined when `filter=` is absent or empty. Throws Consul's 500 for a filter that cannot be created. */
export function registryFilter<T = unknown>(rc: RequestContext, schema: StructSchema, options: RegistryFilterOptions = {}): ((row: T) => boolean) | undefined {
  const expression = rc.query.get("filter");
  if (expression === null || expression === "") return undefined;
  let filter: TypedFilter;
  try {
    filter = createTypedFilter(expression, schema);
  } catch (e) {
    if (!(e instanceof TypedFilterError)) throw e;
    if (options.validateOnFirstRow && parses(expression)) {
      const bare = e.message.startsWith(CREATE_FILTER_PREFIX) ? e.message.slice(CREATE_FILTER_PREFIX.length) : e.message;
      return () => {
        throw serverError(bare);
      };
    }
    throw serverError(e.message);
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

function parses(expression: string): boolean {
  try {
    parseExpression(expression, "consul");
    return true;
  } catch {
    return false;
  }
}

/** The rows a filter keeps (all of them without one). */
export function filterRows<T>(rows: readonly T[], keep: ((row: T) => boolean) | undefined): T[] {
  return keep === undefined ? [...rows] : rows.filter(keep);
}
