/**
 * The five token schemes of the echo service, their defaults, and which
 * operations accept which schemes.
 *
 * Defaults are shaped like the real sample's (an SA email as the issuer of
 * the service-account schemes, Google's issuer for ID tokens, the token
 * service's for Identity Platform) under test-only names. The three
 * service-account schemes configure no audiences, as the sample does, so the
 * proxy's default applies: ESP always accepts the service name, ESPv2 accepts
 * `https://<service name>` when a scheme lists no audiences.
 */
import { ECHO_SCHEMES, type EchoFixture, type EchoSchemeName } from "../scenario-files/schema.js";

export { ECHO_SCHEMES, type EchoSchemeName };

export interface SchemeConfig {
  [key: string]: unknown;
  issuer: string;
  /** Absent: the proxy's default audience applies. */
  audiences?: string[];
  /** A key set given by the fixture (JWK set); absent when the emulator holds the key. */
  jwks?: { keys: object[] };
  /** An x509 certificate map given by the fixture (Google's service-account format: kid → PEM). */
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

export const DEFAULT_SCHEMES: Record<EchoSchemeName, SchemeConfig> = {
  provider_jwt: { issuer: "jwt-client.endpoints.standin.test" },
  app_default_service_account: { issuer: `${TEST_PROJECT}@appspot.gserviceaccount.com` },
  provider_service_account: { issuer: `echo-client@${TEST_PROJECT}.iam.gserviceaccount.com` },
  provider_id_token: { issuer: "https://accounts.google.com", audiences: ["standin-client.apps.googleusercontent.com"] },
  identity_platform: { issuer: `https://securetoken.google.com/${TEST_PROJECT}`, audiences: [TEST_PROJECT] },
};

export interface Operation {
  readonly method: "GET" | "POST";
  /** The operation requires an API key. */
  readonly apiKey: boolean;
  /** Token schemes, any one of which is acceptable (empty: no token needed). */
  readonly schemes: readonly EchoSchemeName[];
}

/** The specification's endpoint table, keyed by path (the proxies match paths case-sensitively and exactly). */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  "/echo": { method: "POST", apiKey: true, schemes: [] },
  "/auth/info/providerjwt": { method: "GET", apiKey: false, schemes: ["provider_jwt", "app_default_service_account", "provider_service_account"] },
  "/auth/info/provideridtoken": { method: "GET", apiKey: false, schemes: ["provider_id_token"] },
  "/auth/info/identityplatform": { method: "GET", apiKey: false, schemes: ["identity_platform"] },
};

/** Applies a fixture's scheme settings over the current ones; a given key set replaces the emulator-held key. */
export function mergeSchemes(current: Record<EchoSchemeName, SchemeConfig>, given: EchoFixture["schemes"]): Record<EchoSchemeName, SchemeConfig> {
  const out = { ...current };
  for (const name of ECHO_SCHEMES) {
    const g = given?.[name];
    if (!g) continue;
    const previous = out[name];
    const next: SchemeConfig = { issuer: g.issuer ?? previous.issuer };
    const audiences = g.audiences ?? previous.audiences;
    if (audiences) next.audiences = audiences;
    const keySet = g.jwks
      ? { jwks: g.jwks as { keys: object[] } }
      : g.x509
        ? { x509: g.x509 }
        : previous.jwks
          ? { jwks: previous.jwks }
          : previous.x509
            ? { x509: previous.x509 }
            : {};
    out[name] = { ...next, ...keySet };
  }
  return out;
}

export function schemeNamed(name: string): EchoSchemeName | undefined {
  return (ECHO_SCHEMES as readonly string[]).includes(name) ? (name as EchoSchemeName) : undefined;
}

/** The audience minted tokens carry by default: the first configured one, else the service name (accepted by both proxies). */
export function defaultAudience(scheme: SchemeConfig, serviceName: string): string {
  return scheme.audiences?.[0] ?? serviceName;
}
