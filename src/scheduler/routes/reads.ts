/**
 * The scheduler's reads: they carry the index of the tables they read and
 * block on `?index=` until one of those tables changes (or the wait ends).
 * List reads are paginated and filtered (`?filter=`, go-bexpr's grammar).
 */
import { blockingTimeoutMs, runBlockingQuery, SPEC_BLOCKING_LIMITS } from "../../core/blocking.js";
import type { ServiceContext } from "../../core/context.js";
import { compileFilter, FilterEvaluationError, FilterParseError, type Filter } from "../../core/filter/index.js";
import { badRequest, NomadError, Read, ReadError, type RequestContext } from "../http/nomad-http.js";
import { byCreateIndex, type SchedulerState } from "../state/model.js";
import { createIndexIdTokenizer, idTokenizer, pageRequest, paginate, type Tokenizer } from "./paging.js";
import { cmp } from "./helpers.js";

/** One page of a list read: its items and the token of the next page ("" when none). */
class ListPage {
  constructor(
    readonly items: unknown[],
    readonly nextToken: string,
  ) {}
}

export type BlockingReads = ReturnType<typeof blockingReads>;

/** The blocking reads over `state`, waiting on `ctx`'s watchers and clock. */
export function blockingReads(state: SchedulerState, ctx: ServiceContext) {
  /** Runs `run` now, or again after each change of `tables` while `?index=` is not yet passed (until the wait ends). */
  const block = <T>(rc: RequestContext, tables: string[], run: () => { index: number; value: T }) =>
    runBlockingQuery({
      watchers: ctx.watchers,
      clock: ctx.clock,
      tables,
      minIndex: rc.options.index,
      timeoutMs: rc.options.index > 0 ? blockingTimeoutMs(rc.options.waitMs, SPEC_BLOCKING_LIMITS, ctx.ids) : 0,
      signal: () => rc.c.req.raw.signal,
      run: () => rc.shared(run),
    });
  /** A blocking-capable read: answers at once unless `?index=` asks to wait for a change of `tables`. */
  /** `indexOf`: the index the answer reports (Nomad: a single object's ModifyIndex, else the tables'). */
  const read = async (rc: RequestContext, tables: string[], run: () => unknown, indexOf: () => number = () => state.index(...tables)): Promise<Read> => {
    const result = await block(rc, tables, () => {
      // Not-found errors are part of the answer too: they carry the current index.
      try {
        return { index: indexOf(), value: run() };
      } catch (error) {
        if (error instanceof ReadError) return { index: error.index, value: error };
        throw error;
      }
    });
    if (result.value instanceof ReadError) throw result.value;
    return new Read(result.value, result.index);
  };
  /** A single object's read: its ModifyIndex while it exists, the table's index otherwise. */
  const objectIndex = (table: string, find: () => { ModifyIndex: number } | undefined) => () => find()?.ModifyIndex ?? state.index(table);
  /**
   * A paginated list read: `items` in index order, the filter (run on each
   * item's full object) applied before counting, the next token in its header.
   */
  const readList = async <T>(rc: RequestContext, tables: string[], items: () => T[], tokenizer: Tokenizer<T>, view: (item: T) => unknown, datum: (item: T) => unknown = view) => {
    const request = pageRequest(rc.query);
    const matches = listFilter(rc, datum);
    const result = await block(rc, tables, () => {
      try {
        const page = paginate(items(), tokenizer, request, matches);
        return { index: state.index(...tables), value: new ListPage(page.items.map(view), page.nextToken) as unknown };
      } catch (error) {
        // A filter that fails on this data is the answer at once, as Nomad's blocking query returns its
        // function's error without waiting: an index past any minIndex ends the wait (and never reaches a header).
        if (error instanceof NomadError) return { index: Number.MAX_SAFE_INTEGER, value: error as unknown };
        throw error;
      }
    });
    if (result.value instanceof NomadError) throw result.value;
    const page = result.value as ListPage;
    return new Read(page.items, result.index, page.nextToken);
  };
  return { read, objectIndex, readList };
}

/** Evaluations, allocations and deployments list by (CreateIndex, ID); with `prefix`, by ID (the prefix index). */
export function byPrefixOrCreate<T extends { CreateIndex: number; ID: string }>(rc: RequestContext, items: T[]): T[] {
  const prefix = rc.options.prefix;
  if (prefix === "") return byCreateIndex(items);
  return items.filter((item) => item.ID.startsWith(prefix)).sort((a, b) => cmp(a.ID, b.ID));
}

export function createListTokenizer<T extends { CreateIndex: number; ID: string }>(rc: RequestContext): Tokenizer<T> {
  return rc.options.prefix === "" ? createIndexIdTokenizer<T>() : idTokenizer<T>();
}

/** The `filter` query parameter as a predicate over an item's full object (no filter: everything matches). */
function listFilter<T>(rc: RequestContext, datum: (item: T) => unknown): (item: T) => boolean {
  const expression = rc.query.get("filter") ?? "";
  if (expression === "") return () => true;
  let filter: Filter;
  try {
    filter = compileFilter(expression);
  } catch (error) {
    if (error instanceof FilterParseError) throw badRequest(`failed to create result paginator: failed to read filter expression: ${error.message}`);
    throw error;
  }
  return (item) => {
    try {
      return filter.matches(datum(item));
    } catch (error) {
      if (error instanceof FilterEvaluationError) throw badRequest(`failed to read result page: ${error.message}`);
      throw error;
    }
  };
}
