/**
 * JWT checks as ESPv2 makes them (Envoy's jwt_authn filter and
 * jwt_verify_lib), in its order: find the tokens, parse, issuer (exact
 * match), time (60 s skew), audience, key (filtered by kid, alg and key
 * type), signature. With several schemes on an operation each provider looks
 * at the tokens, and when all fail the most telling error is reported.
 */
import { keySetFor, keyTypeFor, signatureMatches } from "./keys.js";
import type { AuthContext, AuthResult } from "./auth-types.js";
import type { EchoSchemeName } from "./schemes.js";
import { audiencesOf, decodeSegment, espv2Tokens, normalizeIssuerOrAudience, parseObject } from "./token.js";

const SUPPORTED_ALGS = new Set(["ES256", "ES384", "ES512", "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"]);
const CLOCK_SKEW_SECONDS = 60;

export const JWT_MISSING = "Jwt is missing";
export const ISSUER_NOT_CONFIGURED = "Jwt issuer is not configured";
const AUDIENCE_NOT_ALLOWED = "Audiences in Jwt are not allowed";

interface Parsed {
  token: string;
  alg: string;
  kid?: string;
  payload: Record<string, unknown>;
  payloadSegment: string;
}

export async function authenticateEspv2(request: Request, url: URL, ctx: AuthContext): Promise<AuthResult> {
  const tokens = espv2Tokens(request, url);
  if (tokens.length === 0) return fail(JWT_MISSING, false);
  const parsed: Parsed[] = [];
  for (const token of tokens) {
    const result = parse(token);
    if (typeof result === "string") return fail(result, true);
    parsed.push(result);
  }
  const failures: string[] = [];
  for (const scheme of ctx.operationSchemes) {
    const outcome = await verifyForProvider(parsed, scheme, ctx);
    if (outcome === undefined) {
      const first = parsed[0]!;
      return { ok: true, token: first.token, payload: first.payload, payloadSegment: first.payloadSegment };
    }
    failures.push(outcome);
  }
  const reason = pickReported(failures);
  return fail(reason, true, reason === AUDIENCE_NOT_ALLOWED ? 403 : 401);
}

/**
 * Envoy's requires_any: prefer any error other than "missing" and "issuer not
 * configured" (the last such in list order), else "issuer not configured".
 */
function pickReported(failures: readonly string[]): string {
  const telling = failures.filter((f) => f !== JWT_MISSING && f !== ISSUER_NOT_CONFIGURED);
  if (telling.length) return telling[telling.length - 1]!;
  return failures.includes(ISSUER_NOT_CONFIGURED) ? ISSUER_NOT_CONFIGURED : JWT_MISSING;
}

/** Every token must pass this provider's checks; returns the first failure, or undefined when all pass. */
async function verifyForProvider(tokens: readonly Parsed[], scheme: EchoSchemeName, ctx: AuthContext): Promise<string | undefined> {
  const settings = ctx.schemes[scheme];
  for (const t of tokens) {
    if (t.payload.iss !== settings.issuer) return ISSUER_NOT_CONFIGURED;
    const nbf = t.payload.nbf as number | undefined;
    const exp = t.payload.exp as number | undefined;
    if (nbf !== undefined && ctx.nowSeconds + CLOCK_SKEW_SECONDS < nbf) return "Jwt not yet valid";
    if (exp !== undefined && exp !== 0 && ctx.nowSeconds > exp + CLOCK_SKEW_SECONDS) return "Jwt is expired";
    const allowed = new Set((settings.audiences ?? [`https://${ctx.serviceName}`]).map(normalizeIssuerOrAudience));
    if (!audiencesOf(t.payload).some((aud) => allowed.has(normalizeIssuerOrAudience(aud)))) return AUDIENCE_NOT_ALLOWED;
    const keys = keySetFor(scheme, settings).keys.filter(
      (k) => (t.kid === undefined || k.kid === undefined || k.kid === t.kid) && (k.alg === undefined || k.alg === t.alg) && k.kty === keyTypeFor(t.alg),
    );
    if (keys.length === 0) return "Jwks doesn't have key to match kid or alg from Jwt";
    let verified = false;
    for (const key of keys) if ((verified = await signatureMatches(t.token, key, t.alg))) break;
    if (!verified) return "Jwt verification fails";
  }
  return undefined;
}

/** jwt_verify_lib's parser; returns the parsed token or its error message. */
function parse(token: string): Parsed | string {
  const parts = token.split(".");
  // Empty sections are skipped when splitting, so an unsigned "a.b." has two.
  if (parts.length !== 3 || parts.some((p) => p === "")) return "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections";
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const headerText = decodeSegment(headerPart);
  if (headerText === undefined) return "Jwt header is an invalid Base64url encoded";
  const header = parseObject(headerText);
  if (!header) return "Jwt header is an invalid JSON";
  if (typeof header.alg !== "string") return "Jwt header [alg] field is required and must be a string";
  if (!SUPPORTED_ALGS.has(header.alg)) return "Jwt header [alg] is not supported";
  if (header.kid !== undefined && typeof header.kid !== "string") return "Jwt header [kid] field is not a string";
  const payloadText = decodeSegment(payloadPart);
  if (payloadText === undefined) return "Jwt payload is an invalid Base64url encoded";
  const payload = parseObject(payloadText);
  if (!payload) return "Jwt payload is an invalid JSON";
  for (const name of ["iss", "sub"]) if (payload[name] !== undefined && typeof payload[name] !== "string") return `Jwt payload [${name}] field is not a string`;
  for (const name of ["iat", "nbf", "exp"]) {
    const value = payload[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isInteger(value)) return `Jwt payload [${name}] field is not an integer`;
    if (value < 0) return `Jwt payload [${name}] field is not a positive 64 bit integer`;
  }
  if (payload.jti !== undefined && typeof payload.jti !== "string") return "Jwt payload [jti] field is not a string";
  const aud = payload.aud;
  if (aud !== undefined && typeof aud !== "string" && !(Array.isArray(aud) && aud.every((a) => typeof a === "string"))) {
    return "Jwt payload [aud] field is not a string or string list";
  }
  if (decodeSegment(signaturePart) === undefined) return "Jwt signature is an invalid Base64url encoded";
  return { token, alg: header.alg, kid: header.kid as string | undefined, payload, payloadSegment: payloadPart };
}

function fail(reason: string, tokenFound: boolean, status: 401 | 403 = 401): AuthResult {
  return { ok: false, status, reason, tokenFound };
}
