/**
 * Pieces both Go-style routers share: the percent-decoded path (Go's
 * URL.Path) and the longest-prefix match of Go's ServeMux; and the JSON body
 * of a control request.
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

/** A control route's JSON object body, or the 400 to answer with. */
export async function controlJsonBody(c: Context): Promise<{ body: Record<string, unknown> } | { error: Response }> {
  try {
    const value: unknown = JSON.parse(await c.req.text());
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: c.json({ error: "request body must be a JSON object" }, 400) };
    return { body: value as Record<string, unknown> };
  } catch (error) {
    return { error: c.json({ error: `request body is not valid JSON: ${(error as Error).message}` }, 400) };
  }
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
