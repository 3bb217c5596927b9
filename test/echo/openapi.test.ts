/**
 * GET /openapi.json on the echo port: the service's description, the
 * sample's Swagger 2.0 document (reference echo-esp.md §1.1) with the
 * specification's names and the configured service name, issuers and
 * audiences; `schemes` lists https exactly when the ports serve TLS
 * (specification: "HTTPS is added to the declared schemes when SSL is
 * configured for the service").
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { replayTape } from "../../src/replay.js";

type Json = Record<string, any>;

async function description(emu: Standin): Promise<{ status: number; type: string | null; body: Json }> {
  const res = await emu.echo.request("/openapi.json");
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Json };
}

describe("GET /openapi.json (echo)", () => {
  it("is a valid Swagger 2.0 document: Endpoints Example 1.0.0, host the service name, JSON in and out, http only", async () => {
    const { status, type, body } = await description(await createStandin());
    expect(status).toBe(200);
    expect(type).toBe("application/json");
    expect(body).toMatchObject({
      swagger: "2.0",
      info: { title: "Endpoints Example", version: "1.0.0" },
      host: "echo.standin.test",
      basePath: "/",
      consumes: ["application/json"],
      produces: ["application/json"],
      schemes: ["http"],
    });
    // The specification (and the sample) declare an empty authorization URL, which the Swagger 2.0
    // schema's `format: uri` refuses; everything else must be valid as it is.
    const schemes = body.securityDefinitions as Json;
    for (const scheme of Object.values(schemes)) if (scheme.type === "oauth2") expect(scheme.authorizationUrl).toBe("");
    const checked = {
      ...body,
      securityDefinitions: Object.fromEntries(Object.entries(schemes).map(([k, v]) => [k, v.type === "oauth2" ? { ...v, authorizationUrl: "https://example.invalid/" } : v])),
    };
    const result = await new Validator().validate(checked);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
  });

  it("declares https too when the emulator is served over TLS", async () => {
    expect((await description(await createStandin({ tls: true }))).body.schemes).toEqual(["http", "https"]);
    expect((await description(await createStandin({ tls: false }))).body.schemes).toEqual(["http"]);
  });

  it("lists the specification's four operations with their credential schemes (a list is an OR)", async () => {
    const { body } = await description(await createStandin());
    const operations = Object.entries(body.paths as Json).flatMap(([path, methods]) =>
      Object.entries(methods as Json).map(([method, op]) => ({ path, method, operationId: op.operationId, security: op.security, response: op.responses["200"].schema.$ref })),
    );
    expect(operations).toEqual([
      { path: "/echo", method: "post", operationId: "echo", security: [{ api_key: [] }], response: "#/definitions/echoMessage" },
      {
        path: "/auth/info/providerjwt",
        method: "get",
        operationId: "auth_info_provider_jwt",
        security: [{ provider_jwt: [] }, { app_default_service_account: [] }, { provider_service_account: [] }],
        response: "#/definitions/authInfoResponse",
      },
      {
        path: "/auth/info/provideridtoken",
        method: "get",
        operationId: "authInfoProviderIdToken",
        security: [{ provider_id_token: [] }],
        response: "#/definitions/authInfoResponse",
      },
      {
        path: "/auth/info/identityplatform",
        method: "get",
        operationId: "authInfoIdentityPlatform",
        security: [{ identity_platform: [] }],
        response: "#/definitions/authInfoResponse",
      },
    ]);
    expect(body.paths["/echo"].post.parameters).toEqual([
      { description: "Message to echo", in: "body", name: "message", required: true, schema: { $ref: "#/definitions/echoMessage" } },
    ]);
    expect(body.definitions).toEqual({
      echoMessage: { type: "object", properties: { message: { type: "string" } } },
      authInfoResponse: { properties: { id: { type: "string" }, email: { type: "string" } } },
    });
  });

  it("declares the API key and the five token schemes with the configured issuers and audiences; key sets at standin's jwks route", async () => {
    const emu = await createStandin();
    const { body } = await description(emu);
    const oauth = (issuer: string, scheme: string, audiences?: string) => ({
      authorizationUrl: "",
      flow: "implicit",
      type: "oauth2",
      "x-google-issuer": issuer,
      "x-google-jwks_uri": `/_standin/echo/jwks/${scheme}`,
      ...(audiences && { "x-google-audiences": audiences }),
    });
    expect(body.securityDefinitions).toEqual({
      api_key: { type: "apiKey", name: "key", in: "query" },
      // No audiences configured: the proxy's default applies, so none is declared.
      provider_jwt: oauth("jwt-client.endpoints.standin.test", "provider_jwt"),
      app_default_service_account: oauth("standin-test@appspot.gserviceaccount.com", "app_default_service_account"),
      provider_service_account: oauth("echo-client@standin-test.iam.gserviceaccount.com", "provider_service_account"),
      provider_id_token: oauth("https://accounts.google.com", "provider_id_token", "standin-client.apps.googleusercontent.com"),
      identity_platform: oauth("https://securetoken.google.com/standin-test", "identity_platform", "standin-test"),
    });
    // Each key set location, resolved against the document's URL, serves the scheme's keys.
    for (const [name, scheme] of Object.entries(body.securityDefinitions as Json)) {
      if (name === "api_key") continue;
      const keys = await emu.echo.request(new URL(scheme["x-google-jwks_uri"], "http://localhost/openapi.json").pathname);
      expect(keys.status).toBe(200);
      expect(((await keys.json()) as { keys: unknown[] }).keys).toHaveLength(1);
    }
  });

  it("follows the fixture: service name, issuers, several audiences (comma-separated, as the sample writes them); same under espv2", async () => {
    const emu = await createStandin({
      fixture: {
        echo: {
          serviceName: "echo-api.endpoints.ci-project.cloud.goog",
          proxy: "espv2",
          schemes: { provider_jwt: { issuer: "ci-caller@ci-project.iam.gserviceaccount.com", audiences: ["aud-one", "aud-two"] } },
        },
      },
    });
    const { body } = await description(emu);
    expect(body.host).toBe("echo-api.endpoints.ci-project.cloud.goog");
    expect(body.securityDefinitions.provider_jwt).toMatchObject({ "x-google-issuer": "ci-caller@ci-project.iam.gserviceaccount.com", "x-google-audiences": "aud-one,aud-two" });
    // A fixture applied later shows too: the document is read from the current configuration.
    await emu.applyFixture({ echo: { serviceName: "later.standin.test" } });
    expect((await description(emu)).body.host).toBe("later.standin.test");
  });

  it("is GET only: other methods get the proxy's answer for an unknown operation, as before", async () => {
    const emu = await createStandin();
    const res = await emu.echo.request("/openapi.json", { method: "POST", body: "{}" });
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).message).toBe("Method does not exist.");
    expect((await emu.echo.request("/openapi.yaml")).status).toBe(404);
  });

  it("a tape recorded over TLS says so, and its replay answers /openapi.json the same", async () => {
    const emu = await createStandin({ tls: true });
    await emu.echo.request("/openapi.json");
    const tape = (await (await emu.echo.request("/_standin/tape")).json()) as Json;
    expect(tape.start.tls).toBe(true);
    const report = await replayTape(tape);
    expect(report.ok).toBe(true);
    // Without TLS the tape carries no such key, and a replay claiming TLS would diverge.
    const plain = await createStandin();
    await plain.echo.request("/openapi.json");
    const plainTape = (await (await plain.echo.request("/_standin/tape")).json()) as Json;
    expect(plainTape.start).not.toHaveProperty("tls");
    expect((await replayTape({ ...plainTape, start: { ...plainTape.start, tls: true } })).ok).toBe(false);
  });
});
