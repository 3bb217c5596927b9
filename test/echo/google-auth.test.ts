/**
 * A real client: google-auth-library 10 signs a service-account JWT (its
 * self-signed mode, no network) from a key the test generates, and the echo
 * service verifies it against that key's certificate map — the format Google
 * publishes for service accounts — given in the fixture, inline or as a file.
 */
import "reflect-metadata";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { X509CertificateGenerator } from "@peculiar/x509";
import { JWT } from "google-auth-library";
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";

const RSA = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 } as const;
const SERVICE_ACCOUNT = "ci-caller@standin-ci.iam.gserviceaccount.com";
const KEY_ID = "5f1c0ffee0ddba11";
const SERVICE_NAME = "echo.standin.test";

interface ServiceAccountKey {
  privateKeyPem: string;
  certificatePem: string;
}

async function generateServiceAccountKey(): Promise<ServiceAccountKey> {
  const keys = (await crypto.subtle.generateKey(RSA, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  const privateKeyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  const certificate = await X509CertificateGenerator.createSelfSigned({
    serialNumber: "01",
    name: `CN=${SERVICE_ACCOUNT}`,
    notBefore: new Date("2020-01-01T00:00:00Z"),
    notAfter: new Date("2040-01-01T00:00:00Z"),
    keys,
    signingAlgorithm: RSA,
  });
  return { privateKeyPem, certificatePem: certificate.toString("pem") + "\n" };
}

/** What google-auth-library sends: `Authorization: Bearer <self-signed JWT>` for the given audience. */
async function authorizationFromClient(key: ServiceAccountKey, audience: string): Promise<string> {
  const client = new JWT({ email: SERVICE_ACCOUNT, key: key.privateKeyPem, keyId: KEY_ID });
  const headers = await client.getRequestHeaders(audience);
  const authorization = headers instanceof Headers ? headers.get("authorization") : (headers as Record<string, string>).Authorization;
  if (!authorization) throw new Error("google-auth-library produced no Authorization header");
  return authorization;
}

describe("a token minted by google-auth-library from a service-account key", () => {
  let key: ServiceAccountKey;
  beforeAll(async () => {
    key = await generateServiceAccountKey();
  });

  const fixture = (proxy: "esp" | "espv2", x509: Record<string, string>) => ({
    echo: { proxy, serviceName: SERVICE_NAME, schemes: { provider_service_account: { issuer: SERVICE_ACCOUNT, x509 } } },
  });

  it.each(["esp", "espv2"] as const)("is accepted by /auth/info/providerjwt (%s)", async (proxy) => {
    // The library stamps iat/exp from the wall clock, so the emulator's virtual clock starts there too.
    const emu = await createStandin({ fixture: fixture(proxy, { [KEY_ID]: key.certificatePem }), clock: { start: "now" } });
    const authorization = await authorizationFromClient(key, SERVICE_NAME);
    const res = await emu.echo.request("/auth/info/providerjwt", { headers: { Authorization: authorization } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    if (proxy === "esp") {
      expect(body).toMatchObject({ issuer: SERVICE_ACCOUNT, id: SERVICE_ACCOUNT, audiences: [SERVICE_NAME] });
      expect(JSON.parse(body.claims as string)).toMatchObject({ iss: SERVICE_ACCOUNT, sub: SERVICE_ACCOUNT, aud: SERVICE_NAME });
    } else {
      expect(body).toMatchObject({ iss: SERVICE_ACCOUNT, sub: SERVICE_ACCOUNT, aud: SERVICE_NAME });
      expect(typeof body.exp).toBe("number");
    }
  });

  it("is accepted when the certificate map comes from a file next to the fixture", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-sa-"));
    writeFileSync(join(dir, "certs.json"), JSON.stringify({ [KEY_ID]: key.certificatePem }));
    writeFileSync(
      join(dir, "fixture.json"),
      JSON.stringify({ clock: { start: "now" }, echo: { schemes: { provider_service_account: { issuer: SERVICE_ACCOUNT, x509File: "certs.json" } } } }),
    );
    const emu = await createStandin({ fixture: join(dir, "fixture.json") });
    const res = await emu.echo.request("/auth/info/providerjwt", { headers: { Authorization: await authorizationFromClient(key, SERVICE_NAME) } });
    expect(res.status).toBe(200);
    // The published key set is the fixture's map, and the emulator cannot mint for the scheme.
    expect(await (await emu.echo.request("/_standin/echo/jwks/provider_service_account")).json()).toEqual({ [KEY_ID]: key.certificatePem });
    const mint = await emu.echo.request("/_standin/echo/tokens", { method: "POST", body: JSON.stringify({ scheme: "provider_service_account" }) });
    expect(mint.status).toBe(409);
  });

  it("is rejected when the certificate map does not hold its kid, or holds another key under it", async () => {
    const other = await generateServiceAccountKey();
    const authorization = await authorizationFromClient(key, SERVICE_NAME);
    const missing = await createStandin({ fixture: fixture("esp", { "another-kid": key.certificatePem }), clock: { start: "now" } });
    const res = await missing.echo.request("/auth/info/providerjwt", { headers: { Authorization: authorization } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toBe(`JWT validation failed: Could not find matching key in public key set for kid=${KEY_ID}`);

    const wrong = await createStandin({ fixture: fixture("espv2", { [KEY_ID]: other.certificatePem }), clock: { start: "now" } });
    const res2 = await wrong.echo.request("/auth/info/providerjwt", { headers: { Authorization: authorization } });
    expect(res2.status).toBe(401);
    expect(await res2.json()).toEqual({ code: 401, message: "Jwt verification fails" });
  });

  it("is rejected with the audience error when signed for another audience", async () => {
    const emu = await createStandin({ fixture: fixture("esp", { [KEY_ID]: key.certificatePem }), clock: { start: "now" } });
    const res = await emu.echo.request("/auth/info/providerjwt", { headers: { Authorization: await authorizationFromClient(key, "https://elsewhere.example") } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { message: string }).message).toBe("JWT validation failed: Audience not allowed");
  });
});
