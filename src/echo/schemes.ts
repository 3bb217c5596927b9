/**
 * The five token schemes of the echo service and their defaults: issuers and
 * audiences shaped like the real sample's (an SA email for the service-account
 * schemes, Google's issuer for ID tokens, the token service's for Identity
 * Platform), under test-only names.
 */
import { ECHO_SCHEMES, type EchoFixture, type EchoSchemeName } from "../fixtures/schema.js";

export { ECHO_SCHEMES, type EchoSchemeName };

export interface SchemeConfig {
  [key: string]: unknown;
  issuer: string;
  audiences: string[];
  /** A key set given by the fixture (JWK set); absent when the emulator holds the key. */
  jwks?: { keys: object[] };
  /** An x509 certificate map given by the fixture (Google's service-account format). */
  x509?: Record<string, string>;
}

export const TEST_PROJECT = "standin-test";

/** Default subject of minted tokens: who the token says it is. */
export const DEFAULT_SUBJECTS: Record<EchoSchemeName, string> = {
  provider_jwt: "12345678",
  app_default_service_account: `${TEST_PROJECT}@appspot.gserviceaccount.com`,
  provider_service_account: `echo-client@${TEST_PROJECT}.iam.gserviceaccount.com`,
  provider_id_token: "108000000000000000001",
  identity_platform: "standin-user-1",
};

export function defaultSchemes(serviceName: string): Record<EchoSchemeName, SchemeConfig> {
  return {
    provider_jwt: { issuer: "jwt-client.endpoints.standin.test", audiences: [serviceName] },
    app_default_service_account: { issuer: `${TEST_PROJECT}@appspot.gserviceaccount.com`, audiences: [serviceName] },
    provider_service_account: { issuer: `echo-client@${TEST_PROJECT}.iam.gserviceaccount.com`, audiences: [serviceName] },
    provider_id_token: { issuer: "https://accounts.google.com", audiences: [`standin-client.apps.googleusercontent.com`] },
    identity_platform: { issuer: `https://securetoken.google.com/${TEST_PROJECT}`, audiences: [TEST_PROJECT] },
  };
}

/** Applies a fixture's scheme settings over the current ones; a given key set replaces the emulator-held key. */
export function mergeSchemes(
  current: Record<EchoSchemeName, SchemeConfig>,
  given: EchoFixture["schemes"],
): Record<EchoSchemeName, SchemeConfig> {
  const out = { ...current };
  for (const name of ECHO_SCHEMES) {
    const g = given?.[name];
    if (!g) continue;
    const next: SchemeConfig = { issuer: g.issuer ?? out[name].issuer, audiences: g.audiences ?? out[name].audiences };
    if (g.jwks) next.jwks = g.jwks as { keys: object[] };
    else if (g.x509) next.x509 = g.x509;
    else if (out[name].jwks) next.jwks = out[name].jwks;
    else if (out[name].x509) next.x509 = out[name].x509;
    out[name] = next;
  }
  return out;
}
