/**
 * Pieces both Go-style routers share: the percent-decoded path (Go's
 * URL.Path) and the longest-prefix match of Go's ServeMux; and how a control
 * fault (an action) answers.
 */
import type { Context } from "hono";
import { ActionError } from "./actions.js";

/** The request path percent-decoded as Go does (`%2F` becomes `/`); undecodable paths stay raw. */
export function decodedPath(url: URL): string {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
}

/** Go's ServeMux rule: among the patterns that match, the longest wins. */
export function longestMatch<R extends { readonly pattern: string }>(routes: readonly R[], path: string, matches: (route: R, path: string) => boolean): R | undefined {
  let best: R | undefined;
  for (const route of routes) if (matches(route, path) && (!best || route.pattern.length > best.pattern.length)) best = route;
  return best;
}

/** Runs a control fault (an action): its JSON result, or `{"error"}` with the ActionError's status. */
export function runFault(c: Context, fault: () => unknown): Response {
  try {
    return c.json(fault() as object);
  } catch (error) {
    if (error instanceof ActionError) return c.json({ error: error.message }, error.status);
    throw error;
  }
}

/** Path and query of an absolute request URL, as sent (no normalisation: equal strings, equal requests). */
export function pathAndQuery(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  return start < 0 ? "/" : url.slice(start);
}

const parsedUrls = new Map<string, URL>();
/** Distinct URLs remembered (forgotten all at once past this). */
const PARSED_URL_ENTRIES = 1024;

/**
 * A request URL parsed, shared: a client polls the same few URLs again and
 * again, and several routers of one request each want it (a parse costs
 * microseconds, a good part of a small request). Read it, never change it.
 */
export function requestUrl(url: string): URL {
  let parsed = parsedUrls.get(url);
  if (!parsed) {
    if (parsedUrls.size >= PARSED_URL_ENTRIES) parsedUrls.clear();
    parsedUrls.set(url, (parsed = new URL(url)));
  }
  return parsed;
}
