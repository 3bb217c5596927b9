/**
 * Where each proxy finds a JWT in a request, and decoding of its segments.
 * The checks themselves (and their wording) differ per proxy: see esp.ts and
 * espv2.ts.
 */

const IAP_HEADER = "X-Goog-Iap-Jwt-Assertion";

/**
 * ESP: `X-Goog-Iap-Jwt-Assertion` first; else `Authorization`, where a value
 * starting with exactly `Bearer ` gives the rest and any other value is taken
 * whole; else the `access_token` query parameter. One token at most.
 */
export function espToken(request: Request, url: URL): string | undefined {
  const iap = request.headers.get(IAP_HEADER);
  if (iap) return iap;
  const authorization = request.headers.get("Authorization");
  if (authorization !== null) {
    const token = authorization.startsWith("Bearer ") ? authorization.slice("Bearer ".length) : authorization;
    return token || undefined;
  }
  return url.searchParams.get("access_token") || undefined;
}

/**
 * ESPv2 (Envoy jwt_authn default locations): `Authorization` with the
 * case-sensitive prefix `Bearer ` found anywhere in the value, the token being
 * the run of base64url characters and dots after it; `X-Goog-Iap-Jwt-Assertion`
 * as it is; `access_token`. Every token found must verify.
 */
export function espv2Tokens(request: Request, url: URL): string[] {
  const tokens: string[] = [];
  const authorization = request.headers.get("Authorization");
  const at = authorization?.indexOf("Bearer ") ?? -1;
  if (authorization && at >= 0) {
    const run = /^[A-Za-z0-9\-_.]*/.exec(authorization.slice(at + "Bearer ".length))![0];
    if (run) tokens.push(run);
  }
  const iap = request.headers.get(IAP_HEADER);
  if (iap) tokens.push(iap);
  const query = url.searchParams.get("access_token");
  if (query) tokens.push(query);
  return tokens;
}

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decodes a base64url segment to text; undefined when it is not base64url. */
export function decodeSegment(segment: string): string | undefined {
  if (!BASE64URL.test(segment) || segment.replace(/=+$/, "").length % 4 === 1) return undefined;
  return Buffer.from(segment, "base64url").toString("utf8");
}

export function isBase64url(segment: string): boolean {
  return decodeSegment(segment) !== undefined;
}

/** Parses a segment as a JSON object; undefined when it is not one. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `aud` as a list (a string is one audience). */
export function audiencesOf(payload: Record<string, unknown>): string[] {
  const aud = payload.aud;
  if (typeof aud === "string") return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === "string") : [];
}

/** Both proxies compare audiences (and ESP issuers) without the URL scheme and one trailing slash. */
export function normalizeIssuerOrAudience(value: string): string {
  return value.replace(/^https?:\/\//, "").replace(/\/$/, "");
}
