/**
 * The echo service (stands in for the Cloud Endpoints echo sample behind ESP).
 *
 * Foundation stage: the proxy configuration from fixtures is kept in the
 * state, and unknown paths get ESP's answer. Echo, auth-info and the token
 * checks arrive with the echo issue.
 */
import { Hono } from "hono";
import * as v from "valibot";
import { describeIssues } from "../core/validation.js";
import type { ServiceContext } from "../core/context.js";
import { parseGoDuration } from "../core/durations.js";
import type { EchoFixture } from "../fixtures/schema.js";
import { settingsRow, type ServiceInstance } from "../http/service.js";
import { publicJwk, signToken } from "./keys.js";
import { DEFAULT_SUBJECTS, defaultSchemes, ECHO_SCHEMES, mergeSchemes, type EchoSchemeName, type SchemeConfig } from "./schemes.js";

export const ECHO_CONFIG_TABLE = "echo.config";

export interface EchoProxyConfig {
  [key: string]: unknown;
  serviceName: string;
  proxy: "esp" | "espv2";
  apiKeys: string[];
  schemes: Record<EchoSchemeName, SchemeConfig>;
}

const DEFAULT_SERVICE_NAME = "echo.standin.test";
const DEFAULT_CONFIG: EchoProxyConfig = {
  serviceName: DEFAULT_SERVICE_NAME,
  proxy: "esp",
  apiKeys: ["test-api-key"],
  schemes: defaultSchemes(DEFAULT_SERVICE_NAME),
};

const mintBody = v.strictObject({
  scheme: v.string(),
  claims: v.optional(v.record(v.string(), v.unknown())),
  expiresIn: v.optional(v.string()),
});

/** ESP v1 renders errors as a google.rpc.Status with one-space indentation. */
function espStatus(code: number, message: string, detail: string): string {
  const body = { code, message, details: [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", stackEntries: [], detail }] };
  return JSON.stringify(body, null, 1);
}

export function createEchoService(ctx: ServiceContext): ServiceInstance<EchoFixture> {
  const settings = settingsRow(ctx.store.table<EchoProxyConfig>(ECHO_CONFIG_TABLE), "proxy", DEFAULT_CONFIG, (current, section: EchoFixture) => {
    const serviceName = section.serviceName ?? current.serviceName;
    // Schemes still on their default audiences follow a renamed service (ESP's default audience is the service name).
    const base = serviceName === current.serviceName ? current.schemes : rebaseAudiences(current.schemes, current.serviceName, serviceName);
    return {
      serviceName,
      proxy: section.proxy ?? current.proxy,
      apiKeys: section.apiKeys ?? current.apiKeys,
      schemes: mergeSchemes(base, section.schemes),
    };
  });
  const app = new Hono();

  const control = new Hono();
  control.post("/tokens", async (c) => {
    let document: unknown;
    try {
      document = JSON.parse(await c.req.text());
    } catch (error) {
      return c.json({ error: `request body is not valid JSON: ${(error as Error).message}` }, 400);
    }
    const parsed = v.safeParse(mintBody, document);
    if (!parsed.success) return c.json({ error: `invalid body: ${describeIssues(parsed.issues).join("; ")}` }, 400);
    const body = parsed.output;
    const scheme = schemeNamed(body.scheme);
    if (!scheme) return c.json({ error: `unknown scheme "${body.scheme}" (schemes: ${ECHO_SCHEMES.join(", ")})` }, 404);
    const schemeSettings = settings.current().schemes[scheme];
    if (schemeSettings.jwks || schemeSettings.x509) {
      return c.json({ error: `scheme "${scheme}" verifies with a key set from the fixture; the emulator holds no private key to sign with` }, 409);
    }
    let lifetimeSeconds: number;
    try {
      lifetimeSeconds = Number(parseGoDuration(body.expiresIn ?? "1h") / 1_000_000_000n);
    } catch (error) {
      return c.json({ error: `expiresIn: ${(error as Error).message}` }, 400);
    }
    const iat = Math.floor(ctx.clock.now() / 1000);
    const subject = DEFAULT_SUBJECTS[scheme];
    const payload = {
      iss: schemeSettings.issuer,
      sub: subject,
      aud: schemeSettings.audiences[0],
      iat,
      exp: iat + lifetimeSeconds,
      ...(subject.includes("@") ? { email: subject } : {}),
      ...body.claims,
    };
    return c.json({ token: await signToken(scheme, payload) });
  });
  control.get("/jwks/:scheme", (c) => {
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
    notFound: () => {
      const dialect = settings.current().proxy;
      if (dialect === "espv2") {
        return new Response(JSON.stringify({ code: 404, message: "The current request is not defined by this API." }), {
          status: 404,
          headers: { "Content-Type": "application/json" },
        });
      }
      return new Response(espStatus(5, "Method does not exist.", "service_control"), {
        status: 404,
        headers: { "Content-Type": "application/json" },
      });
    },
    initialize: settings.initialize,
    applyFixture: settings.apply,
  };
}

function schemeNamed(name: string): EchoSchemeName | undefined {
  return (ECHO_SCHEMES as readonly string[]).includes(name) ? (name as EchoSchemeName) : undefined;
}

function rebaseAudiences(schemes: Record<EchoSchemeName, SchemeConfig>, from: string, to: string): Record<EchoSchemeName, SchemeConfig> {
  const out = { ...schemes };
  for (const name of ECHO_SCHEMES) {
    const s = out[name];
    if (s.audiences.length === 1 && s.audiences[0] === from) out[name] = { ...s, audiences: [to] };
  }
  return out;
}
