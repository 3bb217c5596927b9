/**
 * `GET /openapi.json` on the echo port: the service's description, the
 * sample's Swagger 2.0 document (reference echo-esp.md §1.1) under the
 * specification's names, filled in from the current configuration: the
 * service name as `host`, each token scheme's issuer, key set location and
 * audiences. The real proxies do not serve their configuration; standin does
 * so that a client can read what the emulated deployment was given.
 *
 * Every value comes from the configuration and the transport, never from the
 * request, so the document is the same on every port and in a replay. Key set
 * locations are therefore relative references to standin's own
 * `/_standin/echo/jwks/<scheme>` (resolve them against the document's URL).
 */
import { ECHO_SCHEMES, OPERATIONS, type EchoSchemeName, type SchemeConfig } from "./schemes.js";

/** The specification's operation ids, by path (the mixed casing is the sample's). */
const OPERATION_IDS: Readonly<Record<string, string>> = {
  "/echo": "echo",
  "/auth/info/providerjwt": "auth_info_provider_jwt",
  "/auth/info/provideridtoken": "authInfoProviderIdToken",
  "/auth/info/identityplatform": "authInfoIdentityPlatform",
};

export function echoDescription(config: { serviceName: string; schemes: Record<EchoSchemeName, SchemeConfig> }, tls: boolean): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const [path, operation] of Object.entries(OPERATIONS)) {
    const echo = path === "/echo";
    paths[path] = {
      [operation.method.toLowerCase()]: {
        description: echo ? "Echo back a given message." : "Returns the requests' authentication information.",
        operationId: OPERATION_IDS[path],
        produces: ["application/json"],
        ...(echo && {
          parameters: [{ description: "Message to echo", in: "body", name: "message", required: true, schema: { $ref: "#/definitions/echoMessage" } }],
        }),
        responses: {
          "200": echo
            ? { description: "Echo", schema: { $ref: "#/definitions/echoMessage" } }
            : { description: "Authentication info.", schema: { $ref: "#/definitions/authInfoResponse" } },
        },
        // A list of requirements is an OR: any one scheme is enough.
        security: operation.apiKey ? [{ api_key: [] }] : operation.schemes.map((scheme) => ({ [scheme]: [] })),
      },
    };
  }

  const securityDefinitions: Record<string, unknown> = { api_key: { type: "apiKey", name: "key", in: "query" } };
  for (const name of ECHO_SCHEMES) {
    const scheme = config.schemes[name];
    securityDefinitions[name] = {
      authorizationUrl: "",
      flow: "implicit",
      type: "oauth2",
      "x-google-issuer": scheme.issuer,
      "x-google-jwks_uri": `/_standin/echo/jwks/${name}`,
      // Absent when none is configured: the proxy's default audience applies, as with the sample's proxies.
      ...(scheme.audiences && { "x-google-audiences": scheme.audiences.join(",") }),
    };
  }

  return {
    swagger: "2.0",
    info: { description: "A simple Google Cloud Endpoints API example.", title: "Endpoints Example", version: "1.0.0" },
    host: config.serviceName,
    basePath: "/",
    consumes: ["application/json"],
    produces: ["application/json"],
    // The specification: HTTP, and HTTPS too when SSL is configured for the service.
    schemes: tls ? ["http", "https"] : ["http"],
    paths,
    definitions: {
      echoMessage: { type: "object", properties: { message: { type: "string" } } },
      authInfoResponse: { properties: { id: { type: "string" }, email: { type: "string" } } },
    },
    securityDefinitions,
  };
}
