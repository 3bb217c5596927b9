/**
 * Where the real products look for an ACL token.
 */
import type { HeaderNames } from "./headers.js";
import { requestHeader } from "./known-bodies.js";

/**
 * The token of an `Authorization: Bearer <token>` header as both products
 * parse it: the scheme is matched case-insensitively and only the first
 * space-separated word after it is used (`Bearer  abc def` → `abc`).
 * Other schemes yield nothing (no error).
 */
export function bearerToken(authorization: string | null | undefined): string | undefined {
  if (!authorization) return undefined;
  const parts = authorization.split(" ");
  if (parts.length < 2 || parts[0]!.toLowerCase() !== "bearer") return undefined;
  const word = parts.slice(1).join(" ").trim().split(" ")[0];
  return word ? word : undefined;
}

export interface TokenSources {
  /** Token headers (`Token` suffix under the spec and compat prefixes). */
  names: HeaderNames;
  /** Query parameter checked first when set (the registry's `?token=`). */
  queryParam?: string;
}

/**
 * The request's token: the query parameter (if the service has one), then the
 * token headers (trimmed; first non-empty wins), then a bearer token.
 */
export function extractToken(request: Request, sources: TokenSources): string | undefined {
  // Parsing the URL only when it may hold the parameter (every read of the registry comes here); a
  // percent-encoded name (`tok%65n=`) decodes to it too.
  if (sources.queryParam && (request.url.includes(`${sources.queryParam}=`) || request.url.includes("%"))) {
    const fromQuery = new URL(request.url).searchParams.get(sources.queryParam);
    if (fromQuery) return fromQuery;
  }
  for (const name of sources.names.names("Token")) {
    const v = requestHeader(request, name.toLowerCase())?.trim();
    if (v) return v;
  }
  return bearerToken(requestHeader(request, "authorization"));
}
