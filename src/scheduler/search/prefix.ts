/**
 * Nomad's PrefixSearch (nomad/search_endpoint.go, v1.9.7): for each context
 * the token may search, the IDs that start with the prefix among the first
 * 20 the context's iterator yields, and whether it had more.
 *
 * Two of Nomad's quirks are kept because clients see them: the iterator is
 * positioned by the prefix rounded down to an even length (unless the
 * request's context is `jobs`), while the answer keeps only IDs that start
 * with the whole prefix, so a window of 20 may answer fewer than 20 and
 * still be truncated; and a UUID context whose index refuses the prefix
 * (`web` is not hex) is left out of `Matches` and `Truncations` altogether.
 * A context with no match answers `null` (Go's nil slice).
 */
import type { Authorizer } from "../http/authorizer.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { filteredSearchContexts, isKnownContext, roundUUIDDownIfOdd, startsWithBytes, sufficientSearchPerms, TRUNCATE_LIMIT, unknownContext } from "./contexts.js";
import { prefixIdOf, type Scanned, type SearchScan } from "./scan.js";

export interface PrefixSearchRequest {
  prefix: string;
  context: string;
  namespace: string;
}

export interface PrefixSearchResult {
  matches: Record<string, string[] | null>;
  truncations: Record<string, boolean>;
  index: number;
}

export function prefixSearch(scan: SearchScan, acl: Authorizer, request: PrefixSearchRequest): PrefixSearchResult {
  const { prefix, context, namespace } = request;
  if (!sufficientSearchPerms(acl, namespace, context)) throw permissionDenied();
  const contexts = filteredSearchContexts(acl, namespace, context);
  const rounded = roundUUIDDownIfOdd(prefix, context);
  const whole = Buffer.from(prefix, "utf8");
  const matches: Record<string, string[] | null> = {};
  const truncations: Record<string, boolean> = {};
  for (const ctx of contexts) {
    if (!isKnownContext(ctx)) throw unknownContext(ctx);
    const scanned = scan.byPrefix(ctx, acl, namespace, rounded, TRUNCATE_LIMIT + 1);
    if (scanned === undefined) continue;
    const found = prefixMatches(scanned, whole);
    matches[ctx] = found.ids;
    truncations[ctx] = found.truncated;
  }
  return { matches, truncations, index: Math.max(0, ...contexts.map((c) => scan.indexOf(c))) };
}

/** getPrefixMatches: of the first 20 scanned, the IDs starting with `prefix` (null when none); truncated when a 21st was there. */
export function prefixMatches(scanned: Scanned[], prefix: Buffer): { ids: string[] | null; truncated: boolean } {
  const ids = scanned
    .slice(0, TRUNCATE_LIMIT)
    .map(prefixIdOf)
    .filter((id) => startsWithBytes(id, prefix));
  return { ids: ids.length === 0 ? null : ids, truncated: scanned.length > TRUNCATE_LIMIT };
}
