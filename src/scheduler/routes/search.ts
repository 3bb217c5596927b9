/**
 * Search (command/agent/search_endpoint.go, Nomad v1.9.7): `PUT|POST
 * /v1/search` (prefix search, what the CLI's ID completion and the Go
 * client's PrefixSearch use) and `/v1/search/fuzzy` (the UI's search box,
 * FuzzySearch). The search itself is in ../search/.
 *
 * The body is a structs.SearchRequest or FuzzySearchRequest: `Prefix` or
 * `Text`, `Context`, and the embedded QueryOptions, whose `Namespace` and
 * `Region` count when the query string names none. The answer carries the
 * QueryMeta both in the body (Index, KnownLeader, LastContact in ns, NextToken)
 * and in the headers; it never blocks (Nomad runs the search with empty
 * query options, so `?index=` is ignored).
 */
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { badRequest, field, jsonBody, Read, serverError, typedField, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { fuzzySearch } from "../search/fuzzy.js";
import { prefixSearch } from "../search/prefix.js";
import { SearchScan } from "../search/scan.js";
import { only } from "./helpers.js";
import type { RouteKit } from "./kit.js";

export function registerSearchRoutes(router: NomadRouter, { state, ctx, settings }: RouteKit): void {
  const scan = new SearchScan(state, ctx);

  router.exact("/v1/search", async (rc) => {
    only(rc, "PUT", "POST");
    const body = await requestBody(rc, "SearchRequest");
    const prefix = typedField(body, "SearchRequest", "Prefix", "string") ?? "";
    const context = contextField(body, "SearchRequest");
    const namespace = requestNamespace(rc, body, "SearchRequest", settings().region);
    const result = prefixSearch(scan, rc.acl, { prefix, context, namespace });
    return answer(rc, result.matches, result.truncations, result.index);
  });

  router.exact("/v1/search/fuzzy", async (rc) => {
    only(rc, "PUT", "POST");
    const body = await requestBody(rc, "FuzzySearchRequest");
    const text = typedField(body, "FuzzySearchRequest", "Text", "string") ?? "";
    const context = contextField(body, "FuzzySearchRequest");
    const namespace = requestNamespace(rc, body, "FuzzySearchRequest", settings().region);
    // FuzzySearchRequest has no Prefix of its own: the body's goes to the embedded QueryOptions, which `?prefix=` overrides.
    const prefix = rc.options.prefix || (typedField(body, "FuzzySearchRequest", "Prefix", "string") ?? "");
    const result = fuzzySearch(scan, rc.acl, { text, context, namespace, prefix });
    return answer(rc, result.matches, result.truncations, result.index);
  });
}

/** decodeBody into the request struct: an object (or null); any other JSON value is Go's type error. */
async function requestBody(rc: RequestContext, struct: string): Promise<unknown> {
  const body = await jsonBody(rc);
  if (body !== null && (typeof body !== "object" || Array.isArray(body))) throw badRequest(unmarshalTypeError(jsonKind(body), `structs.${struct}`));
  return body;
}

/** `Context` is a structs.Context (a string type): absent is "", which no context is. */
function contextField(body: unknown, struct: string): string {
  const value = field(body, "Context");
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw badRequest(unmarshalTypeError(jsonKind(value), "structs.Context", `${struct}.Context`));
  return value;
}

/** parseNamespace / parseRegion: the query's, else the body's, else the defaults; another region has no path. */
function requestNamespace(rc: RequestContext, body: unknown, struct: string, agentRegion: string): string {
  const bodyNamespace = typedField(body, struct, "Namespace", "string") ?? "";
  const bodyRegion = typedField(body, struct, "Region", "string") ?? "";
  if (!rc.query.get("region") && bodyRegion !== "" && bodyRegion !== agentRegion) throw serverError("No path to region");
  return rc.query.get("namespace") || bodyNamespace || "default";
}

/** A SearchResponse / FuzzySearchResponse: the matches with the QueryMeta, which the headers repeat. */
function answer(rc: RequestContext, matches: unknown, truncations: Record<string, boolean>, index: number): Read {
  const body = { Matches: matches, Truncations: truncations, Index: index, KnownLeader: rc.leader.known, LastContact: rc.leader.lastContactMs * 1_000_000, NextToken: "" };
  return new Read(body, index);
}
