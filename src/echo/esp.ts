/**
 * JWT checks as ESP (v1) makes them (check_auth.cc, auth_jwt_validator.cc,
 * grpc's jwt_verifier.cc), in its order: find the token, parse, time (60 s
 * skew), issuer (scheme- and trailing-slash-insensitive), audience (the
 * service name always passes), key lookup, signature. Each failure is
 * `JWT validation failed: <reason>`, 401 except the audience's 403.
 */
import { keySetFor, signatureMatches } from "./keys.js";
import type { AuthContext, AuthResult } from "./auth-types.js";
import { audiencesOf, decodeSegment, espToken, normalizeIssuerOrAudience, parseObject } from "./token.js";

const SUPPORTED_ALGS = new Set(["RS256", "RS384", "RS512", "ES256", "HS256", "HS384", "HS512"]);
const CLOCK_SKEW_SECONDS = 60;

export async function authenticateEsp(request: Request, url: URL, ctx: AuthContext): Promise<AuthResult> {
  const token = espToken(request, url);
  if (token === undefined) return fail(401, "Missing or invalid credentials", false);
  const reject = (reason: string, status: 401 | 403 = 401) => fail(status, reason, true);

  // Parse.
  const parts = token.split(".");
  if (parts.length !== 3) return reject("Bad JWT format: should have 2 dots");
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const headerText = decodeSegment(headerPart);
  if (headerText === undefined) return reject("Bad JWT format: Invalid base64 in header");
  const header = parseObject(headerText);
  if (!header) return reject("Bad JWT format: Invalid JSON in header");
  if (header.alg === undefined) return reject("Missing alg field.");
  const alg = header.alg;
  // ESP's verbatim message for an algorithm it has no verifier for, `none` included.
  if (typeof alg !== "string" || !SUPPORTED_ALGS.has(alg)) return reject("Failed to allocate memory.");
  const payloadText = decodeSegment(payloadPart);
  if (payloadText === undefined) return reject("Bad JWT format: Invalid base64 in claims");
  const payload = parseObject(payloadText);
  if (!payload) return reject("Bad JWT format: Invalid JSON in claims");
  if (!claimsWellTyped(payload)) return reject("Bad JWT format: invalid JWT claims; e.g. wrong data type, iss is not a string.");
  if (payload.iss === undefined) return reject("Bad JWT format: invalid JWT claims; issuer is mssing but required.");
  if (decodeSegment(signaturePart) === undefined) return reject("Bad JWT format: invalid base64 for signature");
  if (payload.aud === undefined) return reject("Bad JWT format: missing audience field.");

  // Time, before the issuer.
  const nbf = payload.nbf as number | undefined;
  const exp = payload.exp as number | undefined;
  if ((nbf !== undefined && nbf > ctx.nowSeconds + CLOCK_SKEW_SECONDS) || (exp !== undefined && exp < ctx.nowSeconds - CLOCK_SKEW_SECONDS)) {
    return reject("TIME_CONSTRAINT_FAILURE");
  }

  // Issuer: the token's iss selects among the operation's schemes.
  const issuer = normalizeIssuerOrAudience(payload.iss as string);
  const matched = ctx.operationSchemes.filter((name) => normalizeIssuerOrAudience(ctx.schemes[name].issuer) === issuer);
  if (matched.length === 0) return reject("Issuer not allowed");

  // Audience: the service name always passes; else one of the issuer's audiences.
  const allowed = new Set([ctx.serviceName, ...matched.flatMap((name) => ctx.schemes[name].audiences ?? [])].map(normalizeIssuerOrAudience));
  if (!audiencesOf(payload).some((aud) => allowed.has(normalizeIssuerOrAudience(aud)))) return reject("Audience not allowed", 403);

  // Keys and signature.
  const scheme = matched[0]!;
  const keySet = keySetFor(scheme, ctx.schemes[scheme]);
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  if (kid !== undefined) {
    const candidates = keySet.keys.filter((k) => k.kid === kid);
    if (candidates.length === 0) {
      return reject(keySet.format === "x509" ? `Could not find matching key in public key set for kid=${kid}` : `Cannot find matching key in key set for kid=${kid}`);
    }
    for (const key of candidates) if (await signatureMatches(token, key, alg)) return success(token, payload, payloadPart);
    return reject("JWT signature verification failed.");
  }
  for (const key of keySet.keys) if (await signatureMatches(token, key, alg)) return success(token, payload, payloadPart);
  return reject("The JWT cannot be validated with any of the public keys.");
}

/** grpc's claims parser: string claims must be strings, time claims numbers, aud a string or a list of strings. */
function claimsWellTyped(payload: Record<string, unknown>): boolean {
  for (const name of ["iss", "sub", "jti"]) if (payload[name] !== undefined && typeof payload[name] !== "string") return false;
  for (const name of ["exp", "nbf", "iat"]) if (payload[name] !== undefined && typeof payload[name] !== "number") return false;
  const aud = payload.aud;
  return aud === undefined || typeof aud === "string" || (Array.isArray(aud) && aud.every((a) => typeof a === "string"));
}

function fail(status: 401 | 403, reason: string, tokenFound: boolean): AuthResult {
  return { ok: false, status, reason, tokenFound };
}

function success(token: string, payload: Record<string, unknown>, payloadSegment: string): AuthResult {
  return { ok: true, token, payload, payloadSegment };
}
