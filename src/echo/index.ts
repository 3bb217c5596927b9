/**
 * The echo service: the Cloud Endpoints echo sample behind its API proxy.
 *
 * Every request goes through the proxy first, as on the real deployment:
 * route matching (the proxy's 404/405), JWT checks for the auth-info
 * operations, then the API key for echo — each failing with the configured
 * dialect's answer (`esp` or `espv2`). Only then does the sample backend
 * answer (backend.ts).
 */
import { requestUrl } from "../http/routing.js";
import { Hono, type Context } from "hono";
import * as v from "valibot";
import type { ServiceContext } from "../core/context.js";
import { parseGoDuration } from "../core/durations.js";
import type { EchoFixture } from "../scenario-files/schema.js";
import { ActionError, action } from "../http/actions.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { settingsRow, type ServiceInstance } from "../http/service.js";
import { authenticate } from "./auth.js";
import type { Dialect } from "./auth-types.js";
import { ECHO_ROUTES, unemulatedEchoRoute } from "./route-catalog.js";
import { espUserInfo, espv2UserInfo, expressErrorPage, expressJson, expressJsonText, parseJsonBody, type ParsedBody } from "./backend.js";
import { LastMade } from "../core/repeats.js";
import { publicJwk, signToken, signWithTestKey, testKeySigner } from "./keys.js";
import { echoDescription } from "./openapi.js";
import { apiKeyInvalid, apiKeyMissing, corsRefused, jwtFailure, methodNotAllowed, methodNotFound, proxyErrorResponse } from "./proxy.js";
import type { Credentials } from "../http/redact.js";
import {
  DEFAULT_SCHEMES,
  DEFAULT_SUBJECTS,
  defaultAudience,
  ECHO_SCHEMES,
  mergeSchemes,
  OPERATIONS,
  schemeNamed,
  type EchoSchemeName,
  type Operation,
  type SchemeConfig,
} from "./schemes.js";

export const ECHO_CONFIG_TABLE = "echo.config";

export interface EchoProxyConfig {
  [key: string]: unknown;
  serviceName: string;
  proxy: Dialect;
  apiKeys: string[];
  schemes: Record<EchoSchemeName, SchemeConfig>;
}

const DEFAULT_CONFIG: EchoProxyConfig = {
  serviceName: "echo.standin.test",
  proxy: "esp",
  apiKeys: ["test-api-key"],
  schemes: DEFAULT_SCHEMES,
};

/**
 * A minted token's claims, as JSON, are at most this many bytes: real tokens
 * are a few hundred bytes to a few KiB, and a token is sent in a header,
 * which proxies cap well below this. Without a bound, one request of a huge
 * claims object would hold every port while it is copied, encoded and signed.
 */
export const MAX_CLAIMS_BYTES = 64 * 1024;
/** The minting body: the claims and a few short fields (refused with 413 before it is parsed). */
export const MAX_MINT_BODY_BYTES = 2 * MAX_CLAIMS_BYTES;

const mintBody = v.strictObject({
  scheme: v.pipe(v.string(), v.description(`one of ${ECHO_SCHEMES.join(", ")}`)),
  claims: v.optional(
    v.pipe(
      v.record(v.string(), v.unknown()),
      v.check((claims) => Buffer.byteLength(JSON.stringify(claims)) <= MAX_CLAIMS_BYTES, `claims take at most ${MAX_CLAIMS_BYTES} bytes of JSON (a token is sent in a header)`),
      v.description(`claims over the defaults; null leaves a claim out; at most ${MAX_CLAIMS_BYTES} bytes of JSON`),
    ),
  ),
  expiresIn: v.optional(v.pipe(v.string(), v.description("a Go duration (default 1h; negative gives an expired token)"))),
  notBefore: v.optional(v.pipe(v.string(), v.description("a Go duration from now for `nbf`"))),
  header: v.optional(v.strictObject({ kid: v.optional(v.nullable(v.string())) })),
  unsigned: v.optional(v.boolean()),
});

/** `res.json({ message })` of the parsed body, or body-parser's refusal. */
function echoed(parsed: ParsedBody, request: Request): Response {
  if (!parsed.ok) return expressErrorPage(parsed.status);
  let text: string;
  try {
    text = echoTexts.get(parsed.body);
  } catch (error) {
    // A message nested deeper than V8's JSON.stringify can go makes res.json throw; express's error handler answers 500.
    if (error instanceof RangeError) return expressErrorPage(500);
    throw error;
  }
  return expressJsonText(text, request);
}

// The same body again (backend.ts hands back the same parsed value for the same bytes) is written once (core/repeats).
const echoTexts = new LastMade(
  (a: unknown, b: unknown) => a === b,
  (body: unknown) => JSON.stringify({ message: (body as { message?: unknown } | null)?.message }) ?? "",
);

export function createEchoService(ctx: ServiceContext): ServiceInstance<EchoFixture> {
  const settings = settingsRow(ctx.store.table<EchoProxyConfig>(ECHO_CONFIG_TABLE), "proxy", DEFAULT_CONFIG, (current, section: EchoFixture) => ({
    serviceName: section.serviceName ?? current.serviceName,
    proxy: section.proxy ?? current.proxy,
    apiKeys: section.apiKeys ?? current.apiKeys,
    schemes: mergeSchemes(current.schemes, section.schemes),
  }));

  /**
   * The proxy in front of the sample: route, token, API key; then the backend.
   * Synchronous unless a token is checked or the body is still to be read:
   * an echo over HTTP (its body read by the port already) takes no turn of
   * its own.
   */
  const serve = (c: Context): Response | Promise<Response> => {
    const config = settings.current();
    const url = requestUrl(c.req.url);
    const method = c.req.method;
    // A URL makes a new string each time its pathname is asked for.
    const path = url.pathname;
    // standin's own addition, in front of the proxy: the service's description (openapi.ts).
    if (method === "GET" && path === "/openapi.json") return c.json(echoDescription(config, ctx.tls ?? false));
    if (method === "OPTIONS" && config.proxy === "esp") return proxyErrorResponse(config.proxy, corsRefused, url);
    const unemulated = unemulatedEchoRoute(config.proxy, method, url);
    if (unemulated) return unemulated;
    const operation = Object.hasOwn(OPERATIONS, path) ? OPERATIONS[path]! : undefined;
    if (!operation) return proxyErrorResponse(config.proxy, methodNotFound, url);
    // ESP knows only configured (method, path) pairs; ESPv2 matches the path, then the method.
    if (method !== operation.method) return proxyErrorResponse(config.proxy, config.proxy === "esp" ? methodNotFound : methodNotAllowed(path), url);
    if (operation.schemes.length > 0) return withClaims(c, config, url, operation);
    return afterApiKey(c, config, url, operation) ?? echo(c);
  };

  /** A token operation: the token first, then the API key when the operation wants one, then the user info. */
  const withClaims = async (c: Context, config: EchoProxyConfig, url: URL, operation: Operation): Promise<Response> => {
    const result = await authenticate(config.proxy, c.req.raw, url, {
      serviceName: config.serviceName,
      schemes: config.schemes,
      operationSchemes: operation.schemes,
      nowSeconds: Math.floor(ctx.clock.now() / 1000),
    });
    if (!result.ok) return proxyErrorResponse(config.proxy, jwtFailure(config.proxy, result.status, result.reason, result.tokenFound), url);
    return afterApiKey(c, config, url, operation) ?? expressJson(config.proxy === "esp" ? espUserInfo(result.payload) : espv2UserInfo(result.payloadSegment), c.req.raw);
  };

  /** The API key check of an operation that wants one: the proxy's refusal, or undefined to go on. */
  const afterApiKey = (c: Context, config: EchoProxyConfig, url: URL, operation: Operation): Response | undefined => {
    if (!operation.apiKey) return undefined;
    const key = apiKeyOf(c.req.raw, url);
    if (key === undefined) return proxyErrorResponse(config.proxy, apiKeyMissing, url);
    if (!config.apiKeys.includes(key)) return proxyErrorResponse(config.proxy, apiKeyInvalid, url);
    return undefined;
  };

  /** The sample's echo: `express.json()`, then `res.json({ message })`. */
  const echo = (c: Context): Response | Promise<Response> => {
    const parsed = parseJsonBody(c.req.raw, () => c.req.arrayBuffer());
    return parsed instanceof Promise ? parsed.then((body) => echoed(body, c.req.raw)) : echoed(parsed, c.req.raw);
  };

  const app = new Hono();
  app.all("*", serve);

  const control = new DocumentedRoutes("echo");
  const tokenSpec = {
    summary: "mints a token signed by the emulator-held key of a scheme, dated by the virtual clock",
    body: mintBody,
    maxBodyBytes: MAX_MINT_BODY_BYTES,
    responses: {
      200: "`{token}`",
      400: "bad body or duration, or claims over 64 KiB of JSON",
      413: "a body over 128 KiB",
      404: "unknown scheme",
      409: "the fixture gave the scheme's keys: the emulator holds no private key to sign with",
    },
  };
  control.post("/tokens", tokenSpec, async (c, { body }) => {
    const scheme = schemeNamed(body.scheme);
    if (!scheme) return c.json({ error: `unknown scheme "${body.scheme}" (schemes: ${ECHO_SCHEMES.join(", ")})` }, 404);
    const config = settings.current();
    const schemeSettings = config.schemes[scheme];
    if (schemeSettings.jwks || schemeSettings.x509) {
      return c.json({ error: `scheme "${scheme}" verifies with a key set from the fixture; the emulator holds no private key to sign with` }, 409);
    }
    let lifetime: number;
    let notBefore: number | undefined;
    try {
      lifetime = wholeSeconds(body.expiresIn ?? "1h");
      notBefore = body.notBefore === undefined ? undefined : wholeSeconds(body.notBefore);
    } catch (error) {
      return c.json({ error: (error as Error).message }, 400);
    }
    const iat = Math.floor(ctx.clock.now() / 1000);
    const subject = DEFAULT_SUBJECTS[scheme];
    const defaults: Record<string, unknown> = { iss: schemeSettings.issuer, sub: subject, aud: defaultAudience(schemeSettings, config.serviceName), iat, exp: iat + lifetime };
    if (notBefore !== undefined) defaults.nbf = iat + notBefore;
    if (subject.includes("@")) defaults.email = subject;
    // Claims override anything; null leaves a claim out.
    const payload = Object.fromEntries(Object.entries({ ...defaults, ...body.claims }).filter(([, value]) => value !== null));
    return c.json({ token: await signToken(scheme, payload, { kid: body.header?.kid, unsigned: body.unsigned }) });
  });
  const jwksSpec = {
    summary: "a scheme's public key set (what its jwks_uri points to), or the set the fixture gave",
    params: { scheme: `one of ${ECHO_SCHEMES.join(", ")}` },
    responses: { 200: "a JWK set, or X.509 certificates by key ID", 404: "unknown scheme" },
  };
  control.get("/jwks/:scheme", jwksSpec, (c) => {
    const scheme = schemeNamed(c.req.param("scheme"));
    if (!scheme) return c.json({ error: `unknown scheme "${c.req.param("scheme")}" (schemes: ${ECHO_SCHEMES.join(", ")})` }, 404);
    const schemeSettings = settings.current().schemes[scheme];
    if (schemeSettings.x509) return c.json(schemeSettings.x509);
    return c.json(schemeSettings.jwks ?? { keys: [publicJwk(scheme)] });
  });

  return {
    name: "echo",
    app,
    control,
    compressThreshold: 1024,
    routeCatalog: ECHO_ROUTES,
    notFound: serve,
    handler: serve,
    credentials: testKeyCredentials(),
    actions: {
      // Key rotation on the clock: what a client sees when the key it holds is revoked mid-run.
      "api-key-add": action({
        summary: "the echo proxy starts accepting an API key",
        args: v.strictObject({ key: v.pipe(v.string(), v.nonEmpty()) }),
        run: ({ key }) => {
          const keys = settings.current().apiKeys;
          if (!keys.includes(key)) settings.apply({ apiKeys: [...keys, key] });
          return { apiKeys: settings.current().apiKeys };
        },
      }),
      "api-key-revoke": action({
        summary: "the echo proxy stops accepting an API key",
        args: v.strictObject({ key: v.string() }),
        run: ({ key }) => {
          const keys = settings.current().apiKeys;
          if (!keys.includes(key)) throw new ActionError(404, `no API key "${key}"`);
          settings.apply({ apiKeys: keys.filter((k) => k !== key) });
          return { apiKeys: settings.current().apiKeys };
        },
      }),
    },
    initialize: settings.initialize,
    *initializeSteps(sections) {
      settings.initialize(sections);
      yield;
    },
    applyFixture: settings.apply,
    *fixtureSteps(section) {
      settings.apply(section);
      yield;
    },
  };
}

/** Where both proxies look for the API key: query `key`, then `api_key`, then header `x-api-key`; empty counts as absent. */
function apiKeyOf(request: Request, url: URL): string | undefined {
  return url.searchParams.get("key") || url.searchParams.get("api_key") || request.headers.get("x-api-key") || undefined;
}

function wholeSeconds(duration: string): number {
  return Number(parseGoDuration(duration) / 1_000_000_000n);
}

/**
 * A token signed by an emulator-held key is written down (tape, journal) as
 * its scheme, header and claims, and signed again on replay: RS256 is
 * deterministic, and the key is public (committed). A token signed by any
 * other key is the user's secret and stays a digest.
 */
function testKeyCredentials(): Credentials {
  // Checking a signature costs an RSA signing: each token is checked once (a test sends the same few again and again).
  const known = new Map<string, string | undefined>();
  return {
    reference(secret) {
      if (known.has(secret)) return known.get(secret);
      const scheme = secret.split(".").length === 3 ? testKeySigner(secret, ECHO_SCHEMES) : undefined;
      const reference = scheme === undefined ? undefined : `jwt:${scheme}:${secret.slice(0, secret.lastIndexOf("."))}`;
      if (known.size >= 1024) known.clear();
      known.set(secret, reference);
      return reference;
    },
    secret(reference) {
      const match = /^jwt:([^:]+):(.+)$/.exec(reference);
      const scheme = match && ECHO_SCHEMES.find((s) => s === match[1]);
      return scheme ? `${match![2]}.${signWithTestKey(scheme, match![2]!)}` : undefined;
    },
  };
}
