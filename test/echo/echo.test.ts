/**
 * Acceptance table for the echo service: POST /echo and the three auth-info
 * operations behind both proxy dialects (ESP v1 "esp" and ESPv2 "espv2").
 *
 * Written from the service contract and the research note
 * /work/shared/reference/echo-esp.md (§0, §1.2 Node backend, §2.1–§2.4).
 * Every expectation is exact: status, body bytes, Content-Type and the
 * WWW-Authenticate header. No request may end in a 5xx or reach onError.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { CompactSign, SignJWT, exportJWK, generateKeyPair, importJWK, type CompactJWSHeaderParameters, type JWK } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";

// ---- constants --------------------------------------------------------------

type Emu = Awaited<ReturnType<typeof createStandin>>;
type Dialect = "esp" | "espv2";
type Scheme = "provider_jwt" | "app_default_service_account" | "provider_service_account" | "provider_id_token" | "identity_platform";

const DIALECTS: Dialect[] = ["esp", "espv2"];
const SCHEMES: Scheme[] = ["provider_jwt", "app_default_service_account", "provider_service_account", "provider_id_token", "identity_platform"];
const SERVICE = "echo.standin.test";
/** The default virtual start, 2026-01-01T00:00:00Z, in seconds. */
const T0 = Date.parse("2026-01-01T00:00:00Z") / 1000;

const PJWT = "/auth/info/providerjwt";
const PID = "/auth/info/provideridtoken";
const IDP = "/auth/info/identityplatform";
const AUTH_PATHS = [PJWT, PID, IDP];

const ISSUER: Record<Scheme, string> = {
  provider_jwt: "jwt-client.endpoints.standin.test",
  app_default_service_account: "standin-test@appspot.gserviceaccount.com",
  provider_service_account: "echo-client@standin-test.iam.gserviceaccount.com",
  provider_id_token: "https://accounts.google.com",
  identity_platform: "https://securetoken.google.com/standin-test",
};
const SUBJECT: Record<Scheme, string> = {
  provider_jwt: "12345678",
  app_default_service_account: ISSUER.app_default_service_account,
  provider_service_account: ISSUER.provider_service_account,
  provider_id_token: "108000000000000000001",
  identity_platform: "standin-user-1",
};
const DEFAULT_AUD: Record<Scheme, string> = {
  provider_jwt: SERVICE,
  app_default_service_account: SERVICE,
  provider_service_account: SERVICE,
  provider_id_token: "standin-client.apps.googleusercontent.com",
  identity_platform: "standin-test",
};
const PATH_OF: Record<Scheme, string> = {
  provider_jwt: PJWT,
  app_default_service_account: PJWT,
  provider_service_account: PJWT,
  provider_id_token: PID,
  identity_platform: IDP,
};
const SERVICE_ACCOUNTS: Scheme[] = ["app_default_service_account", "provider_service_account"];

const kidOf = (scheme: Scheme) => `standin-test-${scheme}-1`;

/** The payload a default mint gives, in the contract's key order. */
function defaultPayload(scheme: Scheme, iat = T0, exp = iat + 3600): Record<string, unknown> {
  const p: Record<string, unknown> = { iss: ISSUER[scheme], sub: SUBJECT[scheme], aud: DEFAULT_AUD[scheme], iat, exp };
  if (SERVICE_ACCOUNTS.includes(scheme)) p.email = ISSUER[scheme];
  return p;
}

/** `base` with `over` applied; a `null` in `over` removes the claim. Existing keys keep their position. */
function claims(base: Record<string, unknown>, over: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base, ...over };
  for (const [k, v] of Object.entries(over)) if (v === null) delete out[k];
  return out;
}
const idp = (over: Record<string, unknown> = {}) => claims(defaultPayload("identity_platform"), over);

// ---- messages -----------------------------------------------------------------

const UNREGISTERED =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
const KEY_INVALID = "API key not valid. Please pass a valid API key.";
const V2_TWO_DOTS = "Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections";
const V2_NO_KEY = "Jwks doesn't have key to match kid or alg from Jwt";
const V2_BAD_AUD = "Audiences in Jwt are not allowed";
const ESP_WRONG_TYPE = "Bad JWT format: invalid JWT claims; e.g. wrong data type, iss is not a string.";
const WWW_INVALID = 'Bearer, error="invalid_token"';

// ---- keys and token building ----------------------------------------------------

const TEST_KEYS = (JSON.parse(readFileSync(new URL("../../keys/test-keys.json", import.meta.url), "utf8")) as { keys: Record<Scheme, JWK & { kid: string }> }).keys;

const enc = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v)).toString("base64url");
const dec = (s: string) => Buffer.from(s, "base64url").toString("utf8");

async function signWith(key: CryptoKey | Uint8Array, header: CompactJWSHeaderParameters, payload: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(typeof payload === "string" ? payload : JSON.stringify(payload));
  return new CompactSign(bytes).setProtectedHeader(header).sign(key);
}

const imported = new Map<string, Promise<CryptoKey | Uint8Array>>();
function testKey(scheme: Scheme, alg: string): Promise<CryptoKey | Uint8Array> {
  const id = `${scheme}/${alg}`;
  let key = imported.get(id);
  if (!key) imported.set(id, (key = importJWK({ ...TEST_KEYS[scheme], alg }, alg)));
  return key;
}

/**
 * A token signed with an emulator-held private key (from keys/test-keys.json).
 * Header default `{alg: RS256, kid: <keyScheme's kid>, typ: JWT}`; `header` entries override, `null` removes.
 */
async function signed(keyScheme: Scheme, payload: unknown, header: Record<string, unknown> = {}): Promise<string> {
  const h = claims({ alg: "RS256", kid: kidOf(keyScheme), typ: "JWT" }, header) as CompactJWSHeaderParameters;
  return signWith(await testKey(keyScheme, h.alg), h, payload);
}

/** A token assembled from segments without signing: objects are JSON-encoded, strings are taken as given segments. */
function hand(header: unknown, payload: unknown, signature = "c2lnbmF0dXJl"): string {
  const seg = (v: unknown) => (typeof v === "string" ? v : enc(v));
  return `${seg(header)}.${seg(payload)}.${signature}`;
}

/** Changes one character in the middle of the signature (not the last, whose low bits may be padding). */
function flipSignature(token: string): string {
  const [h, p, s] = token.split(".") as [string, string, string];
  const i = Math.floor(s.length / 2);
  return `${h}.${p}.${s.slice(0, i)}${s[i] === "A" ? "B" : "A"}${s.slice(i + 1)}`;
}

function payloadOf(token: string): Record<string, unknown> {
  return JSON.parse(dec(token.split(".")[1]!)) as Record<string, unknown>;
}

/** The first JWT-shaped run in a header value (for success expectations of multi-token headers). */
function firstJwt(value: string): string {
  const m = /[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/.exec(value);
  if (!m) throw new Error(`no JWT in ${value}`);
  return m[0];
}

// ---- emulator access --------------------------------------------------------------

const crashes: unknown[] = [];
afterEach(() => {
  const seen = crashes.splice(0);
  expect(seen, "the emulator reported unexpected errors (onError)").toEqual([]);
});

async function make(proxy: Dialect, echo: Record<string, unknown> = {}): Promise<Emu> {
  return createStandin({ fixture: { echo: { proxy, apiKeys: ["k1", "k2"], ...echo } }, onError: (e) => crashes.push(e) });
}

interface Got {
  status: number;
  body: string;
  headers: Headers;
}

async function call(emu: Emu, path: string, init: RequestInit = {}): Promise<Got> {
  const res = await emu.echo.request(path, init);
  const body = await res.text();
  expect(res.status, `${init.method ?? "GET"} ${path} must not fail inside the emulator (got ${res.status}: ${body.slice(0, 300)})`).toBeLessThan(500);
  return { status: res.status, body, headers: res.headers };
}

async function mintRes(emu: Emu, body: unknown): Promise<{ status: number; json: { token?: string; error?: string } }> {
  const res = await emu.echo.request("/_standin/echo/tokens", { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { token?: string; error?: string } };
}

async function mint(emu: Emu, scheme: Scheme, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await mintRes(emu, { scheme, ...extra });
  expect(r.status, `mint ${scheme} ${JSON.stringify(extra)}: ${JSON.stringify(r.json)}`).toBe(200);
  expect(typeof r.json.token).toBe("string");
  return r.json.token!;
}

type Where = "bearer" | "iap" | "query" | "raw";

/** Where a token goes: `Authorization: Bearer`, `X-Goog-Iap-Jwt-Assertion`, `?access_token=`, or `Authorization` verbatim. */
function placed(path: string, token: string, where: Where): [string, RequestInit] {
  switch (where) {
    case "bearer":
      return [path, { headers: { Authorization: `Bearer ${token}` } }];
    case "raw":
      return [path, { headers: { Authorization: token } }];
    case "iap":
      return [path, { headers: { "X-Goog-Iap-Jwt-Assertion": token } }];
    case "query":
      return [`${path}${path.includes("?") ? "&" : "?"}access_token=${token}`, {}];
  }
}

async function echoPost(emu: Emu, path: string, body: string, contentType: string | null = "application/json", extraHeaders: Record<string, string> = {}): Promise<Got> {
  const headers: Record<string, string> = { ...extraHeaders };
  if (contentType !== null) headers["Content-Type"] = contentType;
  return call(emu, path, { method: "POST", headers, body });
}

// ---- expectations ----------------------------------------------------------------

/** express's weak ETag: W/"<byte length hex>-<first 27 chars of base64 sha1>". */
function etagOf(body: string): string {
  const bytes = Buffer.from(body, "utf8");
  return `W/"${bytes.length.toString(16)}-${createHash("sha1").update(bytes).digest("base64").slice(0, 27)}"`;
}

/** An express `res.json` success. */
function expectExpressJson(got: Got, body: string): void {
  expect(got.body).toBe(body);
  expect(got.status).toBe(200);
  expect(got.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(got.headers.get("x-powered-by")).toBe("Express");
  const etag = got.headers.get("etag");
  expect(etag).toMatch(/^W\/"[0-9a-f]+-[A-Za-z0-9+/]{27}"$/);
  expect(etag).toBe(etagOf(body));
  expect(got.headers.get("www-authenticate")).toBeNull();
}

/** ESP v1's X-Endpoint-API-UserInfo object, which the Node backend returns verbatim. */
function espInfo(payload: Record<string, unknown>): string {
  const aud = payload.aud;
  const claimsCopy = Array.isArray(aud) ? { ...payload, aud: "" } : payload;
  const info: Record<string, unknown> = { claims: JSON.stringify(claimsCopy) };
  for (const [key, claim] of [
    ["issuer", "iss"],
    ["id", "sub"],
    ["email", "email"],
  ] as const) {
    const value = payload[claim];
    if (typeof value === "string" && value !== "") info[key] = value;
  }
  if (aud !== undefined) info.audiences = Array.isArray(aud) ? aud : [aud];
  return JSON.stringify(info);
}

/** The auth-info success body of a dialect for a token payload. */
function infoBody(dialect: Dialect, payload: Record<string, unknown>): string {
  return dialect === "esp" ? espInfo(payload) : JSON.stringify(payload);
}

function espStatusBody(code: number, message: string, detail: string): string {
  return JSON.stringify({ code, message, details: [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", stackEntries: [], detail }] }, null, 1);
}

function expectEspError(got: Got, status: number, code: number, message: string, detail: string, www: string | null): void {
  expect(got.body).toBe(espStatusBody(code, message, detail));
  expect(got.status).toBe(status);
  expect(got.headers.get("content-type")).toBe("application/json");
  expect(got.headers.get("www-authenticate")).toBe(www);
}

/** An ESP JWT failure: `JWT validation failed: <reason>`, 401/16 or 403/7, detail auth. */
function expectEspJwt(got: Got, reason: string, status: 401 | 403 = 401, tokenFound = true): void {
  expectEspError(got, status, status === 401 ? 16 : 7, `JWT validation failed: ${reason}`, "auth", tokenFound ? WWW_INVALID : "Bearer");
}

function expectV2Error(got: Got, status: number, message: string, www: string | null): void {
  expect(got.body).toBe(JSON.stringify({ code: status, message }));
  expect(got.status).toBe(status);
  expect(got.headers.get("content-type")).toBe("application/json");
  expect(got.headers.get("www-authenticate")).toBe(www);
}

/**
 * An ESPv2 JWT failure. `pathAndQuery` is what was requested: the realm is
 * `http://localhost<path and query>`. Envoy caps the URI it puts in the realm
 * (reference §2.3, 256 chars), which the contract does not spell out, so for
 * long URIs (a token in the query) only the start and the end are checked.
 */
function expectV2Jwt(got: Got, pathAndQuery: string, message: string, status: 401 | 403 = 401): void {
  expect(got.body).toBe(JSON.stringify({ code: status, message }));
  expect(got.status).toBe(status);
  expect(got.headers.get("content-type")).toBe("application/json");
  const suffix = message === "Jwt is missing" ? "" : ', error="invalid_token"';
  const www = got.headers.get("www-authenticate");
  if (pathAndQuery.length <= 200) {
    expect(www).toBe(`Bearer realm="http://localhost${pathAndQuery}"${suffix}`);
  } else {
    expect(www?.startsWith(`Bearer realm="http://localhost${pathAndQuery.slice(0, 200)}`), String(www)).toBe(true);
    expect(www?.endsWith(`"${suffix}`), String(www)).toBe(true);
  }
}

type Failure = { msg: string; status: 401 | 403 };
type Outcome = "ok" | Failure;
const fail = (msg: string, status: 401 | 403 = 401): Failure => ({ msg, status });

/** Sends `value` to `path` at `where` and checks the dialect's outcome. */
async function expectOutcome(emu: Emu, dialect: Dialect, path: string, value: string, where: Where, outcome: Outcome): Promise<void> {
  const [url, init] = placed(path, value, where);
  const got = await call(emu, url, init);
  if (outcome === "ok") expectExpressJson(got, infoBody(dialect, payloadOf(firstJwt(value))));
  else if (dialect === "esp") expectEspJwt(got, outcome.msg, outcome.status);
  else expectV2Jwt(got, url, outcome.msg, outcome.status);
}

const page = (message: string) =>
  `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>${message}</pre>\n</body>\n</html>\n`;

function expectErrorPage(got: Got, status: number, message: string): void {
  expect(got.body).toBe(page(message));
  expect(got.status).toBe(status);
  expect(got.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(got.headers.get("content-security-policy")).toBe("default-src 'none'");
  expect(got.headers.get("x-content-type-options")).toBe("nosniff");
}

// ---- fixture-given keys -------------------------------------------------------------

/**
 * A self-signed certificate (CN=standin-x509-test, valid 2020–2099) over the
 * public half of the identity_platform key in keys/test-keys.json, so tokens
 * for an x509-map fixture can be signed with that private key.
 */
const X509_CERT = `-----BEGIN CERTIFICATE-----
MIICrjCCAZYCAQEwDQYJKoZIhvcNAQELBQAwHDEaMBgGA1UEAwwRc3RhbmRpbi14
NTA5LXRlc3QwIBcNMjAwMTAxMDAwMDAwWhgPMjA5OTEyMzEwMDAwMDBaMBwxGjAY
BgNVBAMMEXN0YW5kaW4teDUwOS10ZXN0MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A
MIIBCgKCAQEAtzOhREOAhqt9KfLYb6F2T2wMgcLujrKz4S4xmZE2/3l9DgwByqsj
DDvFMFziXtAWG/NvCZTjz1ZlK5p7OucgzUpz8zaYyeMIUvG5+niNci53ZLdcaJZA
xsVSafGd1/ae6BgmkpeyDUnESyxCzYiqE6t81gXYEYf0ddGY34mhzwuh2mF4l72B
2YBsX9TLZar3EFtezaSnSRQuodHn9d+yeRp1nRrtIXJBo9KKuZP1clExfHa2LWl2
VBKfWoXyt1LLvsmZhefwbf75u1GxmbCKNIUijPwA8gjPdSkGaVIOOVO9csHiyAdT
ezwm4YeHP5HpYhAjyyBXFJ+d/5jbmhN0ZwIDAQABMA0GCSqGSIb3DQEBCwUAA4IB
AQAbqxOlGN2KNRUCkVDcN7GS3EDecBBf/GdckCmuCrOYInSCufehP6vqvvmsprnP
zstK4lBVYwvLWz/CyT8b2IKmmBpdOLjQOhRGqs2Q+B/J3siPajSF2MT2uboYvSED
oXCxWEVMuW5537TZ22x/WEqcLsT3Wm15m+ELZrzI+AN43bm9TR1eygXcsfb40TZf
BKvXunVDv7tSR0qzUuHEORKc3EUTrRBgXBKNYDOeKLOCBI14bKYLu84ZMOz6fDPa
ZpTt/AbDMvj6d4Q28Pf/UHVFjYOTFx6MASqQtVqjT/QUAnG+bPz+PHlvjtcWCcIt
CyeyRKVjcXzTaoS5VW3hhQOq
-----END CERTIFICATE-----
`;

let fixtureKey: { privateKey: CryptoKey; publicJwk: JWK };
beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  fixtureKey = { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: "fixture-kid-1", alg: "RS256", use: "sig" } };
});

// =====================================================================================
// 0. Minting (the control API the rest of the table relies on)
// =====================================================================================

describe("token minting for the echo schemes", () => {
  it.each(SCHEMES)("a default %s token has the contract's header and payload, in order", async (scheme) => {
    const emu = await make("esp");
    const token = await mint(emu, scheme);
    const [h, p, s] = token.split(".");
    expect(dec(h!)).toBe(JSON.stringify({ alg: "RS256", kid: kidOf(scheme), typ: "JWT" }));
    expect(dec(p!)).toBe(JSON.stringify(defaultPayload(scheme)));
    expect(s!.length).toBeGreaterThan(300);
  });

  it("claims override defaults in place and add after them; null leaves a claim out; expiresIn and notBefore are Go durations", async () => {
    const emu = await make("esp");
    await emu.clock.advance("90s");
    const token = await mint(emu, "provider_jwt", { claims: { sub: "u-1", aud: null, email: "a@b.test", x: [1] }, expiresIn: "10m", notBefore: "-30s" });
    const now = T0 + 90;
    expect(dec(token.split(".")[1]!)).toBe(JSON.stringify({ iss: ISSUER.provider_jwt, sub: "u-1", iat: now, exp: now + 600, nbf: now - 30, email: "a@b.test", x: [1] }));
  });

  it("header.kid null leaves kid out; a string replaces it; unsigned gives an alg none token with an empty signature", async () => {
    const emu = await make("esp");
    const noKid = await mint(emu, "identity_platform", { header: { kid: null } });
    expect(JSON.parse(dec(noKid.split(".")[0]!))).toEqual({ alg: "RS256", typ: "JWT" });
    const otherKid = await mint(emu, "identity_platform", { header: { kid: "k-9" } });
    expect(JSON.parse(dec(otherKid.split(".")[0]!))).toEqual({ alg: "RS256", kid: "k-9", typ: "JWT" });
    const unsigned = await mint(emu, "identity_platform", { unsigned: true });
    expect(unsigned.endsWith(".")).toBe(true);
    expect(unsigned.split(".")).toHaveLength(3);
    expect(JSON.parse(dec(unsigned.split(".")[0]!)).alg).toBe("none");
    expect(payloadOf(unsigned)).toEqual(defaultPayload("identity_platform"));
  });

  it("the published key set holds the public key with kid, alg RS256, use sig", async () => {
    const emu = await make("esp");
    for (const scheme of SCHEMES) {
      const res = await emu.echo.request(`/_standin/echo/jwks/${scheme}`);
      expect(res.status).toBe(200);
      const { keys } = (await res.json()) as { keys: JWK[] };
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ kty: "RSA", kid: kidOf(scheme), alg: "RS256", use: "sig", n: TEST_KEYS[scheme].n, e: TEST_KEYS[scheme].e });
      expect(keys[0]).not.toHaveProperty("d");
    }
  });
});

// =====================================================================================
// 1. Auth-info success in both dialects, every scheme, every token location
// =====================================================================================

describe.each(DIALECTS)("auth-info success (%s)", (dialect) => {
  const locations: Where[] = dialect === "esp" ? ["bearer", "iap", "query", "raw"] : ["bearer", "iap", "query"];
  const rows = SCHEMES.flatMap((scheme) => locations.map((where) => ({ scheme, where, path: PATH_OF[scheme] })));

  it.each(rows)("$scheme token on $path via $where", async ({ scheme, where, path }) => {
    const emu = await make(dialect);
    const token = await mint(emu, scheme);
    const [url, init] = placed(path, token, where);
    expectExpressJson(await call(emu, url, init), infoBody(dialect, defaultPayload(scheme)));
  });

  it("pins the exact success body for identity_platform", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, IDP, { headers: { Authorization: `Bearer ${token}` } });
    const claimsJson = `{"iss":"https://securetoken.google.com/standin-test","sub":"standin-user-1","aud":"standin-test","iat":${T0},"exp":${T0 + 3600}}`;
    const expected =
      dialect === "esp"
        ? `{"claims":${JSON.stringify(claimsJson)},"issuer":"https://securetoken.google.com/standin-test","id":"standin-user-1","audiences":["standin-test"]}`
        : claimsJson;
    expectExpressJson(got, expected);
  });

  it("pins the exact success body for a service account on providerjwt (email present)", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "provider_service_account");
    const got = await call(emu, PJWT, { headers: { Authorization: `Bearer ${token}` } });
    const sa = "echo-client@standin-test.iam.gserviceaccount.com";
    const claimsJson = `{"iss":"${sa}","sub":"${sa}","aud":"echo.standin.test","iat":${T0},"exp":${T0 + 3600},"email":"${sa}"}`;
    const expected = dialect === "esp" ? `{"claims":${JSON.stringify(claimsJson)},"issuer":"${sa}","id":"${sa}","email":"${sa}","audiences":["echo.standin.test"]}` : claimsJson;
    expectExpressJson(got, expected);
  });

  it("an email claim on a provider_jwt token appears as email", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "provider_jwt", { claims: { email: "user@example.test" } });
    const payload = claims(defaultPayload("provider_jwt"), { email: "user@example.test" });
    expect(payloadOf(token)).toEqual(payload);
    expectExpressJson(await call(emu, PJWT, { headers: { Authorization: `Bearer ${token}` } }), infoBody(dialect, payload));
  });

  it('an aud list: ESP\'s claims string has aud "" and audiences lists them; ESPv2 returns the list', async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { claims: { aud: ["other-project", "standin-test"] } });
    const got = await call(emu, IDP, { headers: { Authorization: `Bearer ${token}` } });
    const payloadJson = `{"iss":"${ISSUER.identity_platform}","sub":"standin-user-1","aud":["other-project","standin-test"],"iat":${T0},"exp":${T0 + 3600}}`;
    const espClaims = `{"iss":"${ISSUER.identity_platform}","sub":"standin-user-1","aud":"","iat":${T0},"exp":${T0 + 3600}}`;
    const expected =
      dialect === "esp"
        ? `{"claims":${JSON.stringify(espClaims)},"issuer":"${ISSUER.identity_platform}","id":"standin-user-1","audiences":["other-project","standin-test"]}`
        : payloadJson;
    expectExpressJson(got, expected);
  });

  it("ESP leaves out empty user-info fields (no sub → no id, empty email → no email)", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { claims: { sub: null, email: "" } });
    const got = await call(emu, IDP, { headers: { Authorization: `Bearer ${token}` } });
    const payloadJson = `{"iss":"${ISSUER.identity_platform}","aud":"standin-test","iat":${T0},"exp":${T0 + 3600},"email":""}`;
    const expected = dialect === "esp" ? `{"claims":${JSON.stringify(payloadJson)},"issuer":"${ISSUER.identity_platform}","audiences":["standin-test"]}` : payloadJson;
    expectExpressJson(got, expected);
  });

  it("a payload segment with whitespace comes back as compact JSON in the token's key order", async () => {
    const emu = await make(dialect);
    const text = `{ "sub" : "standin-user-1",\n  "iss": "${ISSUER.identity_platform}", "exp": ${T0 + 60}, "aud": "standin-test", "zeta": {"b": 1, "a": 2} }`;
    const token = await signed("identity_platform", text);
    const compact = `{"sub":"standin-user-1","iss":"${ISSUER.identity_platform}","exp":${T0 + 60},"aud":"standin-test","zeta":{"b":1,"a":2}}`;
    const expected =
      dialect === "esp" ? `{"claims":${JSON.stringify(compact)},"issuer":"${ISSUER.identity_platform}","id":"standin-user-1","audiences":["standin-test"]}` : compact;
    expectExpressJson(await call(emu, IDP, { headers: { Authorization: `Bearer ${token}` } }), expected);
  });

  it("an API key on an auth-info operation is not checked", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, `${IDP}?key=not-a-key`, { headers: { Authorization: `Bearer ${token}` } });
    expectExpressJson(got, infoBody(dialect, defaultPayload("identity_platform")));
  });

  it("a token minted after the clock moved carries the new iat and is accepted; the old one has expired", async () => {
    const emu = await make(dialect);
    const old = await mint(emu, "identity_platform");
    emu.clock.advance("2h");
    const fresh = await mint(emu, "identity_platform");
    expect(payloadOf(fresh)).toEqual(defaultPayload("identity_platform", T0 + 7200));
    expectExpressJson(await call(emu, IDP, { headers: { Authorization: `Bearer ${fresh}` } }), infoBody(dialect, defaultPayload("identity_platform", T0 + 7200)));
    const got = await call(emu, IDP, { headers: { Authorization: `Bearer ${old}` } });
    if (dialect === "esp") expectEspJwt(got, "TIME_CONSTRAINT_FAILURE");
    else expectV2Jwt(got, IDP, "Jwt is expired");
  });
});

// =====================================================================================
// 2. Token location rules
// =====================================================================================

describe("token locations, ESP", () => {
  it("X-Goog-Iap-Jwt-Assertion wins over Authorization (good IAP, garbage Authorization → accepted)", async () => {
    const emu = await make("esp");
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, IDP, { headers: { "X-Goog-Iap-Jwt-Assertion": token, Authorization: "Bearer garbage" } });
    expectExpressJson(got, espInfo(defaultPayload("identity_platform")));
  });

  it("X-Goog-Iap-Jwt-Assertion wins over Authorization (garbage IAP, good Authorization → rejected)", async () => {
    const emu = await make("esp");
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, IDP, { headers: { "X-Goog-Iap-Jwt-Assertion": "garbage", Authorization: `Bearer ${token}` } });
    expectEspJwt(got, "Bad JWT format: should have 2 dots");
  });

  it("Authorization wins over access_token (garbage Authorization, good query → rejected)", async () => {
    const emu = await make("esp");
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, `${IDP}?access_token=${token}`, { headers: { Authorization: "Bearer garbage" } });
    expectEspJwt(got, "Bad JWT format: should have 2 dots");
  });

  it("Authorization wins over access_token (good Authorization, bad query → accepted)", async () => {
    const emu = await make("esp");
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, `${IDP}?access_token=garbage`, { headers: { Authorization: `Bearer ${token}` } });
    expectExpressJson(got, espInfo(defaultPayload("identity_platform")));
  });

  it("IAP header wins over access_token (expired IAP, good query → rejected)", async () => {
    const emu = await make("esp");
    const good = await mint(emu, "identity_platform");
    const expired = await mint(emu, "identity_platform", { expiresIn: "-5m" });
    const got = await call(emu, `${IDP}?access_token=${good}`, { headers: { "X-Goog-Iap-Jwt-Assertion": expired } });
    expectEspJwt(got, "TIME_CONSTRAINT_FAILURE");
  });
});

describe("token locations, ESPv2: every token present must verify", () => {
  it("the same good token in all three locations → accepted", async () => {
    const emu = await make("espv2");
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, `${IDP}?access_token=${token}`, { headers: { Authorization: `Bearer ${token}`, "X-Goog-Iap-Jwt-Assertion": token } });
    expectExpressJson(got, JSON.stringify(defaultPayload("identity_platform")));
  });

  it("two different good tokens (Authorization and IAP header) → accepted", async () => {
    const emu = await make("espv2");
    const a = await mint(emu, "identity_platform");
    const b = await mint(emu, "identity_platform", { claims: { sub: "standin-user-2" } });
    const got = await call(emu, IDP, { headers: { Authorization: `Bearer ${a}`, "X-Goog-Iap-Jwt-Assertion": b } });
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/json; charset=utf-8");
  });

  it("good Authorization, expired IAP header → Jwt is expired", async () => {
    const emu = await make("espv2");
    const good = await mint(emu, "identity_platform");
    const expired = await mint(emu, "identity_platform", { expiresIn: "-5m" });
    const got = await call(emu, IDP, { headers: { Authorization: `Bearer ${good}`, "X-Goog-Iap-Jwt-Assertion": expired } });
    expectV2Jwt(got, IDP, "Jwt is expired");
  });

  it("good IAP header, badly signed access_token → Jwt verification fails", async () => {
    const emu = await make("espv2");
    const good = await mint(emu, "identity_platform");
    const bad = flipSignature(good);
    const url = `${IDP}?access_token=${bad}`;
    const got = await call(emu, url, { headers: { "X-Goog-Iap-Jwt-Assertion": good } });
    expectV2Jwt(got, url, "Jwt verification fails");
  });

  it("good access_token, Authorization with a wrong audience → 403", async () => {
    const emu = await make("espv2");
    const good = await mint(emu, "identity_platform");
    const wrongAud = await mint(emu, "identity_platform", { claims: { aud: "other-project" } });
    const url = `${IDP}?access_token=${good}`;
    const got = await call(emu, url, { headers: { Authorization: `Bearer ${wrongAud}` } });
    expectV2Jwt(got, url, V2_BAD_AUD, 403);
  });

  it("the same token in ESP with a bad second location is fine (only one location is read)", async () => {
    const emu = await make("esp");
    const good = await mint(emu, "identity_platform");
    const got = await call(emu, `${IDP}?access_token=${flipSignature(good)}`, { headers: { "X-Goog-Iap-Jwt-Assertion": good } });
    expectExpressJson(got, espInfo(defaultPayload("identity_platform")));
  });
});

describe.each(DIALECTS)("Authorization header shapes (%s)", (dialect) => {
  // `esp` omitted: the contract does not settle it (ESP's base64 decoder may accept "=" padding).
  const rows: { name: string; value: (t: string) => string; esp?: Outcome; espv2: Outcome }[] = [
    { name: "two tokens: Bearer <good> Bearer <good>", value: (t) => `Bearer ${t} Bearer ${t}`, esp: fail("Bad JWT format: should have 2 dots"), espv2: "ok" },
    { name: "lower-case prefix: bearer <good>", value: (t) => `bearer ${t}`, esp: fail("Bad JWT format: Invalid base64 in header"), espv2: fail("Jwt is missing") },
    { name: "no prefix: <good>", value: (t) => t, esp: "ok", espv2: fail("Jwt is missing") },
    { name: "Basic credentials", value: () => "Basic dXNlcjpwYXNz", esp: fail("Bad JWT format: should have 2 dots"), espv2: fail("Jwt is missing") },
    {
      name: "Bearer after other text: Basic x, Bearer <good>",
      value: (t) => `Basic dXNlcjpwYXNz, Bearer ${t}`,
      esp: fail("Bad JWT format: Invalid base64 in header"),
      espv2: "ok",
    },
    { name: "trailing non-token characters: Bearer <good>==", value: (t) => `Bearer ${t}==`, espv2: "ok" },
  ];
  it.each(rows.filter((r) => r[dialect] !== undefined))("$name", async (row) => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform");
    const outcome = row[dialect]!;
    const got = await call(emu, IDP, { headers: { Authorization: row.value(token) } });
    if (outcome === "ok") expectExpressJson(got, infoBody(dialect, defaultPayload("identity_platform")));
    else if (dialect === "esp") expectEspJwt(got, outcome.msg, outcome.status);
    else expectV2Jwt(got, IDP, outcome.msg, outcome.status);
  });
});

// =====================================================================================
// 3. JWT failures, both dialects
// =====================================================================================

describe.each(DIALECTS)("missing token (%s)", (dialect) => {
  it.each(AUTH_PATHS)("GET %s without a token", async (path) => {
    const emu = await make(dialect);
    const got = await call(emu, path);
    if (dialect === "esp") expectEspJwt(got, "Missing or invalid credentials", 401, false);
    else expectV2Jwt(got, path, "Jwt is missing");
  });

  it("an unrelated query string is part of the ESPv2 realm", async () => {
    const emu = await make(dialect);
    const got = await call(emu, `${IDP}?x=1&y=two`);
    if (dialect === "esp") expectEspJwt(got, "Missing or invalid credentials", 401, false);
    else expectV2Jwt(got, `${IDP}?x=1&y=two`, "Jwt is missing");
  });
});

interface JwtCase {
  name: string;
  path?: string;
  via?: Where;
  token: (emu: Emu) => Promise<string>;
  /** Omitted: the contract does not say what that dialect answers. */
  esp?: Outcome;
  espv2?: Outcome;
}

const goodIdpHeader = { alg: "RS256", kid: kidOf("identity_platform"), typ: "JWT" };
const HS_SECRET = new TextEncoder().encode("an-hs256-shared-secret-32-bytes!!");

const JWT_CASES: JwtCase[] = [
  // -- parse
  { name: "one dot", token: async () => `${enc(goodIdpHeader)}.${enc(idp())}`, esp: fail("Bad JWT format: should have 2 dots"), espv2: fail(V2_TWO_DOTS) },
  { name: "three dots", token: async () => `${await signed("identity_platform", idp())}.c2ln`, esp: fail("Bad JWT format: should have 2 dots"), espv2: fail(V2_TWO_DOTS) },
  {
    name: "unsigned alg none token from the mint (empty signature)",
    token: (emu) => mint(emu, "identity_platform", { unsigned: true }),
    esp: fail("Failed to allocate memory."),
    espv2: fail(V2_TWO_DOTS),
  },
  {
    name: "alg none with a signature",
    token: async () => hand({ alg: "none", typ: "JWT" }, idp()),
    esp: fail("Failed to allocate memory."),
    espv2: fail("Jwt header [alg] is not supported"),
  },
  {
    name: "unknown alg XS256",
    token: async () => hand({ alg: "XS256", kid: kidOf("identity_platform"), typ: "JWT" }, idp()),
    esp: fail("Failed to allocate memory."),
    espv2: fail("Jwt header [alg] is not supported"),
  },
  {
    name: "PS256 (not an ESP alg; no RS256-only key matches it in ESPv2)",
    token: () => signed("identity_platform", idp(), { alg: "PS256" }),
    esp: fail("Failed to allocate memory."),
    espv2: fail(V2_NO_KEY),
  },
  {
    name: "header not base64url",
    via: "iap",
    token: async () => hand("***", idp()),
    esp: fail("Bad JWT format: Invalid base64 in header"),
    espv2: fail("Jwt header is an invalid Base64url encoded"),
  },
  { name: "header not JSON", token: async () => hand(enc("not json"), idp()), esp: fail("Bad JWT format: Invalid JSON in header"), espv2: fail("Jwt header is an invalid JSON") },
  {
    name: "header without alg",
    token: async () => hand({ kid: kidOf("identity_platform"), typ: "JWT" }, idp()),
    esp: fail("Missing alg field."),
    espv2: fail("Jwt header [alg] field is required and must be a string"),
  },
  { name: "alg not a string", token: async () => hand({ alg: 256, typ: "JWT" }, idp()), espv2: fail("Jwt header [alg] field is required and must be a string") },
  { name: "kid not a string", token: async () => hand({ alg: "RS256", kid: 7, typ: "JWT" }, idp()), espv2: fail("Jwt header [kid] field is not a string") },
  {
    name: "payload not base64url",
    via: "iap",
    token: async () => hand(goodIdpHeader, "***"),
    esp: fail("Bad JWT format: Invalid base64 in claims"),
    espv2: fail("Jwt payload is an invalid Base64url encoded"),
  },
  {
    name: "payload not JSON",
    token: () => signed("identity_platform", "not json"),
    esp: fail("Bad JWT format: Invalid JSON in claims"),
    espv2: fail("Jwt payload is an invalid JSON"),
  },
  { name: "iss not a string", token: () => signed("identity_platform", idp({ iss: 42 })), esp: fail(ESP_WRONG_TYPE), espv2: fail("Jwt payload [iss] field is not a string") },
  { name: "sub not a string", token: () => signed("identity_platform", idp({ sub: 42 })), esp: fail(ESP_WRONG_TYPE), espv2: fail("Jwt payload [sub] field is not a string") },
  { name: "exp not a number", token: () => signed("identity_platform", idp({ exp: "soon" })), esp: fail(ESP_WRONG_TYPE), espv2: fail("Jwt payload [exp] field is not an integer") },
  { name: "iat not a number", token: () => signed("identity_platform", idp({ iat: "then" })), esp: fail(ESP_WRONG_TYPE), espv2: fail("Jwt payload [iat] field is not an integer") },
  { name: "nbf not a number", token: () => signed("identity_platform", idp({ nbf: "now" })), esp: fail(ESP_WRONG_TYPE), espv2: fail("Jwt payload [nbf] field is not an integer") },
  {
    name: "aud a number",
    token: () => signed("identity_platform", idp({ aud: 5 })),
    esp: fail(ESP_WRONG_TYPE),
    espv2: fail("Jwt payload [aud] field is not a string or string list"),
  },
  {
    name: "aud a list with a non-string",
    token: () => signed("identity_platform", idp({ aud: ["standin-test", 1] })),
    esp: fail(ESP_WRONG_TYPE),
    espv2: fail("Jwt payload [aud] field is not a string or string list"),
  },
  {
    name: "no iss",
    token: () => signed("identity_platform", idp({ iss: null })),
    esp: fail("Bad JWT format: invalid JWT claims; issuer is mssing but required."),
    espv2: fail("Jwt issuer is not configured"),
  },
  {
    name: "signature not base64url",
    via: "iap",
    token: async () => hand(goodIdpHeader, idp(), "***"),
    esp: fail("Bad JWT format: invalid base64 for signature"),
    espv2: fail("Jwt signature is an invalid Base64url encoded"),
  },
  {
    name: "no aud (minted with aud: null)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: null } }),
    esp: fail("Bad JWT format: missing audience field."),
    espv2: fail(V2_BAD_AUD, 403),
  },
  // -- order
  {
    name: "no aud and expired (ESP: parse first; ESPv2: time before audience)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: null }, expiresIn: "-2m" }),
    esp: fail("Bad JWT format: missing audience field."),
    espv2: fail("Jwt is expired"),
  },
  // -- time
  {
    name: "expired (exp 2 minutes ago)",
    token: (emu) => mint(emu, "identity_platform", { expiresIn: "-2m" }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt is expired"),
  },
  {
    name: "not yet valid (nbf in 2 minutes)",
    token: (emu) => mint(emu, "identity_platform", { notBefore: "2m" }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt not yet valid"),
  },
  {
    name: "expired and from an unlisted issuer (ESP: time first; ESPv2: issuer first)",
    token: (emu) => mint(emu, "identity_platform", { claims: { iss: "https://securetoken.google.com/other-project" }, expiresIn: "-2m" }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt issuer is not configured"),
  },
  {
    name: "not yet valid, wrong aud and unknown kid (time first in both)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: "other-project" }, notBefore: "10m", header: { kid: "no-such-kid" } }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt not yet valid"),
  },
  // -- issuer
  {
    name: "unlisted issuer",
    token: (emu) => mint(emu, "identity_platform", { claims: { iss: "https://securetoken.google.com/other-project" } }),
    esp: fail("Issuer not allowed"),
    espv2: fail("Jwt issuer is not configured"),
  },
  { name: "a provider_jwt token on identityplatform", token: (emu) => mint(emu, "provider_jwt"), esp: fail("Issuer not allowed"), espv2: fail("Jwt issuer is not configured") },
  {
    name: "issuer without https:// (ESP normalises, ESPv2 is exact)",
    token: (emu) => mint(emu, "identity_platform", { claims: { iss: "securetoken.google.com/standin-test" } }),
    esp: "ok",
    espv2: fail("Jwt issuer is not configured"),
  },
  {
    name: "issuer with a trailing slash (ESP normalises, ESPv2 is exact)",
    token: (emu) => mint(emu, "identity_platform", { claims: { iss: "https://securetoken.google.com/standin-test/" } }),
    esp: "ok",
    espv2: fail("Jwt issuer is not configured"),
  },
  {
    name: "unlisted issuer with a wrong aud and bad signature (issuer before audience and key)",
    token: async (emu) => flipSignature(await mint(emu, "identity_platform", { claims: { iss: "https://elsewhere.test", aud: "nope" } })),
    esp: fail("Issuer not allowed"),
    espv2: fail("Jwt issuer is not configured"),
  },
  // -- audience
  { name: "wrong aud", token: (emu) => mint(emu, "identity_platform", { claims: { aud: "other-project" } }), esp: fail("Audience not allowed", 403), espv2: fail(V2_BAD_AUD, 403) },
  {
    name: "wrong aud and expired (time before audience in both)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: "other-project" }, expiresIn: "-2m" }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt is expired"),
  },
  {
    name: "wrong aud and unknown kid (audience before key)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: "other-project" }, header: { kid: "no-such-kid" } }),
    esp: fail("Audience not allowed", 403),
    espv2: fail(V2_BAD_AUD, 403),
  },
  {
    name: "wrong aud and bad signature (audience before signature)",
    token: async (emu) => flipSignature(await mint(emu, "identity_platform", { claims: { aud: "other-project" } })),
    esp: fail("Audience not allowed", 403),
    espv2: fail(V2_BAD_AUD, 403),
  },
  {
    name: "aud list without an allowed audience",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: ["a", "b"] } }),
    esp: fail("Audience not allowed", 403),
    espv2: fail(V2_BAD_AUD, 403),
  },
  { name: "aud list with an allowed audience", token: (emu) => mint(emu, "identity_platform", { claims: { aud: ["a", "standin-test"] } }), esp: "ok", espv2: "ok" },
  { name: "aud normalised: https://standin-test/", token: (emu) => mint(emu, "identity_platform", { claims: { aud: "https://standin-test/" } }), esp: "ok", espv2: "ok" },
  {
    name: "aud = the service name (ESP always accepts it; ESPv2 only when the scheme has no audiences)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: SERVICE } }),
    esp: "ok",
    espv2: fail(V2_BAD_AUD, 403),
  },
  {
    name: "aud = https://<service name>/ (same)",
    token: (emu) => mint(emu, "identity_platform", { claims: { aud: `https://${SERVICE}/` } }),
    esp: "ok",
    espv2: fail(V2_BAD_AUD, 403),
  },
  // -- key lookup
  {
    name: "unknown kid",
    token: (emu) => mint(emu, "identity_platform", { header: { kid: "no-such-kid" } }),
    esp: fail("Cannot find matching key in key set for kid=no-such-kid"),
    espv2: fail(V2_NO_KEY),
  },
  {
    name: "unknown kid and bad signature (key lookup before signature)",
    token: async (emu) => flipSignature(await mint(emu, "identity_platform", { header: { kid: "no-such-kid" } })),
    esp: fail("Cannot find matching key in key set for kid=no-such-kid"),
    espv2: fail(V2_NO_KEY),
  },
  {
    name: "kid of another scheme's key",
    token: (emu) => mint(emu, "identity_platform", { header: { kid: kidOf("provider_jwt") } }),
    esp: fail(`Cannot find matching key in key set for kid=${kidOf("provider_jwt")}`),
    espv2: fail(V2_NO_KEY),
  },
  { name: "no kid, good signature", token: (emu) => mint(emu, "identity_platform", { header: { kid: null } }), esp: "ok", espv2: "ok" },
  {
    name: "no kid, bad signature",
    token: async (emu) => flipSignature(await mint(emu, "identity_platform", { header: { kid: null } })),
    esp: fail("The JWT cannot be validated with any of the public keys."),
    espv2: fail("Jwt verification fails"),
  },
  // -- signature
  {
    name: "one signature character changed",
    token: async (emu) => flipSignature(await mint(emu, "identity_platform")),
    esp: fail("JWT signature verification failed."),
    espv2: fail("Jwt verification fails"),
  },
  {
    name: "payload swapped after signing",
    token: async (emu) => {
      const [h, , s] = (await mint(emu, "identity_platform")).split(".");
      return `${h}.${enc(idp({ sub: "someone-else" }))}.${s}`;
    },
    esp: fail("JWT signature verification failed."),
    espv2: fail("Jwt verification fails"),
  },
  {
    name: "signed with another scheme's key under the right kid",
    token: () => signed("provider_jwt", idp(), { kid: kidOf("identity_platform") }),
    esp: fail("JWT signature verification failed."),
    espv2: fail("Jwt verification fails"),
  },
  {
    name: "HS256 token whose kid names the RSA key",
    token: () => signWith(HS_SECRET, { alg: "HS256", kid: kidOf("identity_platform"), typ: "JWT" }, idp()),
    esp: fail("JWT signature verification failed."),
    espv2: fail(V2_NO_KEY),
  },
  // -- providerjwt: three schemes OR-ed, the token's iss selects the scheme
  { name: "providerjwt: app_default_service_account token", path: PJWT, token: (emu) => mint(emu, "app_default_service_account"), esp: "ok", espv2: "ok" },
  {
    name: "providerjwt: expired app_default_service_account token (ESPv2 reports it over the other schemes' issuer errors)",
    path: PJWT,
    token: (emu) => mint(emu, "app_default_service_account", { expiresIn: "-2m" }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt is expired"),
  },
  {
    name: "providerjwt: provider_jwt token not yet valid",
    path: PJWT,
    token: (emu) => mint(emu, "provider_jwt", { notBefore: "3m" }),
    esp: fail("TIME_CONSTRAINT_FAILURE"),
    espv2: fail("Jwt not yet valid"),
  },
  {
    name: "providerjwt: app_default_service_account token with a wrong aud",
    path: PJWT,
    token: (emu) => mint(emu, "app_default_service_account", { claims: { aud: "someone-else.test" } }),
    esp: fail("Audience not allowed", 403),
    espv2: fail(V2_BAD_AUD, 403),
  },
  {
    name: "providerjwt: provider_service_account token with a bad signature",
    path: PJWT,
    token: async (emu) => flipSignature(await mint(emu, "provider_service_account")),
    esp: fail("JWT signature verification failed."),
    espv2: fail("Jwt verification fails"),
  },
  {
    name: "providerjwt: provider_service_account token without aud",
    path: PJWT,
    token: (emu) => mint(emu, "provider_service_account", { claims: { aud: null } }),
    esp: fail("Bad JWT format: missing audience field."),
    espv2: fail(V2_BAD_AUD, 403),
  },
  {
    name: "providerjwt: provider_jwt token carrying the kid of app_default_service_account's key",
    path: PJWT,
    token: (emu) => mint(emu, "provider_jwt", { header: { kid: kidOf("app_default_service_account") } }),
    esp: fail(`Cannot find matching key in key set for kid=${kidOf("app_default_service_account")}`),
    espv2: fail(V2_NO_KEY),
  },
  {
    name: "providerjwt: app_default_service_account claims signed with provider_jwt's key and kid",
    path: PJWT,
    token: () => signed("provider_jwt", defaultPayload("app_default_service_account"), { kid: kidOf("app_default_service_account") }),
    esp: fail("JWT signature verification failed."),
    espv2: fail("Jwt verification fails"),
  },
  {
    name: "providerjwt: unlisted issuer",
    path: PJWT,
    token: (emu) => mint(emu, "provider_jwt", { claims: { iss: "someone@elsewhere.iam.gserviceaccount.com" } }),
    esp: fail("Issuer not allowed"),
    espv2: fail("Jwt issuer is not configured"),
  },
  {
    name: "providerjwt: identity_platform token",
    path: PJWT,
    token: (emu) => mint(emu, "identity_platform"),
    esp: fail("Issuer not allowed"),
    espv2: fail("Jwt issuer is not configured"),
  },
  { name: "providerjwt: two dots missing", path: PJWT, token: async () => "abc", esp: fail("Bad JWT format: should have 2 dots"), espv2: fail(V2_TWO_DOTS) },
  { name: "providerjwt: aud https://<service name>", path: PJWT, token: (emu) => mint(emu, "provider_jwt", { claims: { aud: `https://${SERVICE}` } }), esp: "ok", espv2: "ok" },
  // -- provideridtoken
  {
    name: "provideridtoken: iss accounts.google.com (ESP accepts; ESPv2 needs the exact https://accounts.google.com)",
    path: PID,
    token: (emu) => mint(emu, "provider_id_token", { claims: { iss: "accounts.google.com" } }),
    esp: "ok",
    espv2: fail("Jwt issuer is not configured"),
  },
  {
    name: "provideridtoken: iss http://accounts.google.com/",
    path: PID,
    token: (emu) => mint(emu, "provider_id_token", { claims: { iss: "http://accounts.google.com/" } }),
    esp: "ok",
    espv2: fail("Jwt issuer is not configured"),
  },
  { name: "provideridtoken: aud = service name", path: PID, token: (emu) => mint(emu, "provider_id_token", { claims: { aud: SERVICE } }), esp: "ok", espv2: fail(V2_BAD_AUD, 403) },
  {
    name: "provideridtoken: another client id",
    path: PID,
    token: (emu) => mint(emu, "provider_id_token", { claims: { aud: "other-client.apps.googleusercontent.com" } }),
    esp: fail("Audience not allowed", 403),
    espv2: fail(V2_BAD_AUD, 403),
  },
  {
    name: "provideridtoken: a provider_jwt token",
    path: PID,
    token: (emu) => mint(emu, "provider_jwt"),
    esp: fail("Issuer not allowed"),
    espv2: fail("Jwt issuer is not configured"),
  },
];

describe.each(DIALECTS)("JWT checks (%s)", (dialect) => {
  const rows = JWT_CASES.filter((c) => c[dialect] !== undefined);
  it.each(rows)("$name", async (c) => {
    const emu = await make(dialect);
    const token = await c.token(emu);
    await expectOutcome(emu, dialect, c.path ?? IDP, token, c.via ?? "bearer", c[dialect]!);
  });
});

describe.each(DIALECTS)("bad tokens in every location (%s)", (dialect) => {
  const locations: Where[] = ["bearer", "iap", "query"];
  it.each(locations)("an expired token via %s is rejected", async (where) => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { expiresIn: "-2m" });
    await expectOutcome(emu, dialect, IDP, token, where, fail(dialect === "esp" ? "TIME_CONSTRAINT_FAILURE" : "Jwt is expired"));
  });
  it.each(locations)("a badly signed token via %s is rejected", async (where) => {
    const emu = await make(dialect);
    const token = flipSignature(await mint(emu, "provider_jwt"));
    await expectOutcome(emu, dialect, PJWT, token, where, fail(dialect === "esp" ? "JWT signature verification failed." : "Jwt verification fails"));
  });
});

// =====================================================================================
// 4. Expiry and not-before on the virtual clock
// =====================================================================================

describe.each(DIALECTS)("virtual clock (%s)", (dialect) => {
  const expired = dialect === "esp" ? "TIME_CONSTRAINT_FAILURE" : "Jwt is expired";
  const early = dialect === "esp" ? "TIME_CONSTRAINT_FAILURE" : "Jwt not yet valid";

  async function check(emu: Emu, token: string, outcome: Outcome) {
    await expectOutcome(emu, dialect, IDP, token, "bearer", outcome);
  }

  it("a 10m token is accepted, and rejected once the clock is well past exp + 60 s", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { expiresIn: "10m" });
    await check(emu, token, "ok");
    emu.clock.advance("12m");
    await check(emu, token, fail(expired));
  });

  it("60 s of skew: accepted at exp, at exp + 60 s (advance 11m), rejected at exp + 61 s", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { expiresIn: "10m" });
    expect(payloadOf(token).exp).toBe(T0 + 600);
    emu.clock.advance("10m");
    await check(emu, token, "ok");
    emu.clock.advance("1m");
    await check(emu, token, "ok");
    emu.clock.advance("1s");
    await check(emu, token, fail(expired));
  });

  it("notBefore 5m: rejected now and at nbf - 61 s, accepted from nbf - 60 s (after 4m)", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { notBefore: "5m" });
    expect(payloadOf(token).nbf).toBe(T0 + 300);
    await check(emu, token, fail(early));
    emu.clock.advance("3m59s");
    await check(emu, token, fail(early));
    emu.clock.advance("1s");
    await check(emu, token, "ok");
  });

  it("a token without exp never expires", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "identity_platform", { claims: { exp: null } });
    expect(payloadOf(token)).not.toHaveProperty("exp");
    emu.clock.advance("9000h");
    await check(emu, token, "ok");
  });
});

// =====================================================================================
// 5. Service name, configured audiences, fixture-given key sets
// =====================================================================================

describe.each(DIALECTS)("service name and configured audiences (%s)", (dialect) => {
  it("a renamed service: the default provider_jwt aud follows it; the old name is refused", async () => {
    const emu = await make(dialect, { serviceName: "api.example.test" });
    const token = await mint(emu, "provider_jwt");
    expect(payloadOf(token).aud).toBe("api.example.test");
    await expectOutcome(emu, dialect, PJWT, token, "bearer", "ok");
    const old = await mint(emu, "provider_jwt", { claims: { aud: SERVICE } });
    await expectOutcome(emu, dialect, PJWT, old, "bearer", dialect === "esp" ? fail("Audience not allowed", 403) : fail(V2_BAD_AUD, 403));
  });

  it("a renamed service is accepted as aud on identityplatform by ESP only", async () => {
    const emu = await make(dialect, { serviceName: "api.example.test" });
    const token = await mint(emu, "identity_platform", { claims: { aud: "api.example.test" } });
    await expectOutcome(emu, dialect, IDP, token, "bearer", dialect === "esp" ? "ok" : fail(V2_BAD_AUD, 403));
  });

  it("configured audiences on provider_jwt: the first is the default aud, any is accepted; the service name only by ESP", async () => {
    const emu = await make(dialect, { schemes: { provider_jwt: { audiences: ["aud-a", "aud-b"] } } });
    const first = await mint(emu, "provider_jwt");
    expect(payloadOf(first).aud).toBe("aud-a");
    await expectOutcome(emu, dialect, PJWT, first, "bearer", "ok");
    await expectOutcome(emu, dialect, PJWT, await mint(emu, "provider_jwt", { claims: { aud: "aud-b" } }), "bearer", "ok");
    const svc = await mint(emu, "provider_jwt", { claims: { aud: SERVICE } });
    await expectOutcome(emu, dialect, PJWT, svc, "bearer", dialect === "esp" ? "ok" : fail(V2_BAD_AUD, 403));
    const other = await mint(emu, "provider_jwt", { claims: { aud: "aud-c" } });
    await expectOutcome(emu, dialect, PJWT, other, "bearer", dialect === "esp" ? fail("Audience not allowed", 403) : fail(V2_BAD_AUD, 403));
  });

  it("a configured issuer replaces the default one", async () => {
    const emu = await make(dialect, { schemes: { identity_platform: { issuer: "https://securetoken.google.com/p1", audiences: ["p1"] } } });
    const token = await mint(emu, "identity_platform");
    expect(payloadOf(token)).toMatchObject({ iss: "https://securetoken.google.com/p1", aud: "p1" });
    await expectOutcome(emu, dialect, IDP, token, "bearer", "ok");
    const old = await mint(emu, "identity_platform", { claims: { iss: ISSUER.identity_platform } });
    await expectOutcome(emu, dialect, IDP, old, "bearer", fail(dialect === "esp" ? "Issuer not allowed" : "Jwt issuer is not configured"));
  });
});

describe.each(DIALECTS)("a JWK set given by the fixture (%s)", (dialect) => {
  const fixture = () => ({ schemes: { identity_platform: { jwks: { keys: [fixtureKey.publicJwk] } } } });
  const sign = (payload: unknown, header: Record<string, unknown> = {}) =>
    new SignJWT(payload as never).setProtectedHeader(claims({ alg: "RS256", kid: "fixture-kid-1", typ: "JWT" }, header) as CompactJWSHeaderParameters).sign(fixtureKey.privateKey);

  it("a token signed with the fixture's key verifies", async () => {
    const emu = await make(dialect, fixture());
    const token = await sign(idp());
    expectExpressJson(await call(emu, IDP, { headers: { Authorization: `Bearer ${token}` } }), infoBody(dialect, idp()));
  });

  it("a token without kid signed with the fixture's key verifies", async () => {
    const emu = await make(dialect, fixture());
    await expectOutcome(emu, dialect, IDP, await sign(idp(), { kid: null }), "bearer", "ok");
  });

  it("minting for that scheme → 409, other schemes still mint; the jwks endpoint serves the given set", async () => {
    const emu = await make(dialect, fixture());
    const r = await mintRes(emu, { scheme: "identity_platform" });
    expect(r.status).toBe(409);
    expect(typeof r.json.error).toBe("string");
    await mint(emu, "provider_jwt");
    const res = await emu.echo.request("/_standin/echo/jwks/identity_platform");
    expect(await res.json()).toEqual({ keys: [fixtureKey.publicJwk] });
  });

  it("a kid not in the set", async () => {
    const emu = await make(dialect, fixture());
    const token = await sign(idp(), { kid: "fixture-kid-2" });
    await expectOutcome(emu, dialect, IDP, token, "bearer", fail(dialect === "esp" ? "Cannot find matching key in key set for kid=fixture-kid-2" : V2_NO_KEY));
  });

  it("the emulator's own identity_platform key no longer verifies (its kid is not in the set)", async () => {
    const emu = await make(dialect, fixture());
    const token = await signed("identity_platform", idp());
    await expectOutcome(emu, dialect, IDP, token, "bearer", fail(dialect === "esp" ? `Cannot find matching key in key set for kid=${kidOf("identity_platform")}` : V2_NO_KEY));
  });

  it("the fixture's kid on a token signed with another key → bad signature", async () => {
    const emu = await make(dialect, fixture());
    const token = await signed("identity_platform", idp(), { kid: "fixture-kid-1" });
    await expectOutcome(emu, dialect, IDP, token, "bearer", fail(dialect === "esp" ? "JWT signature verification failed." : "Jwt verification fails"));
  });
});

describe.each(DIALECTS)("an x509 certificate map given by the fixture (%s)", (dialect) => {
  const fixture = { schemes: { provider_id_token: { x509: { "x509-kid-1": X509_CERT } } } };
  const pid = (over: Record<string, unknown> = {}) => claims(defaultPayload("provider_id_token"), over);

  it("a token signed with the certificate's key verifies", async () => {
    const emu = await make(dialect, fixture);
    const token = await signed("identity_platform", pid(), { kid: "x509-kid-1" });
    expectExpressJson(await call(emu, PID, { headers: { Authorization: `Bearer ${token}` } }), infoBody(dialect, pid()));
  });

  it("a kid not in the map", async () => {
    const emu = await make(dialect, fixture);
    const token = await signed("identity_platform", pid(), { kid: "x509-kid-2" });
    await expectOutcome(emu, dialect, PID, token, "bearer", fail(dialect === "esp" ? "Could not find matching key in public key set for kid=x509-kid-2" : V2_NO_KEY));
  });

  it("the right kid but another key → bad signature", async () => {
    const emu = await make(dialect, fixture);
    const token = await signed("provider_id_token", pid(), { kid: "x509-kid-1" });
    await expectOutcome(emu, dialect, PID, token, "bearer", fail(dialect === "esp" ? "JWT signature verification failed." : "Jwt verification fails"));
  });

  it("minting for that scheme → 409", async () => {
    const emu = await make(dialect, fixture);
    expect((await mintRes(emu, { scheme: "provider_id_token" })).status).toBe(409);
  });
});

// =====================================================================================
// 6. POST /echo: API keys
// =====================================================================================

describe.each(DIALECTS)("POST /echo API key (%s)", (dialect) => {
  const ok = '{"message":"hi"}';
  type KeyRow = { name: string; query: string; header?: string; outcome: "ok" | "missing" | "invalid" };
  const rows: KeyRow[] = [
    { name: "query key", query: "?key=k1", outcome: "ok" },
    { name: "query key, second configured key", query: "?key=k2", outcome: "ok" },
    { name: "query api_key", query: "?api_key=k1", outcome: "ok" },
    { name: "header x-api-key", query: "", header: "k1", outcome: "ok" },
    { name: "?api_key=bad&key=good uses key", query: "?api_key=bad&key=k1", outcome: "ok" },
    { name: "?api_key=good&key=bad uses key", query: "?api_key=k1&key=bad", outcome: "invalid" },
    { name: "query key wins over the header (bad query, good header)", query: "?key=bad", header: "k1", outcome: "invalid" },
    { name: "query key wins over the header (good query, bad header)", query: "?key=k1", header: "bad", outcome: "ok" },
    { name: "query api_key wins over the header", query: "?api_key=bad", header: "k1", outcome: "invalid" },
    { name: "unknown key", query: "?key=nope", outcome: "invalid" },
    { name: "the default key is not valid when the fixture lists keys", query: "?key=test-api-key", outcome: "invalid" },
    { name: "keys are case-sensitive", query: "?key=K1", outcome: "invalid" },
    { name: "no key", query: "", outcome: "missing" },
    { name: "empty query key", query: "?key=", outcome: "missing" },
    { name: "an unrelated query parameter", query: "?apikey=k1", outcome: "missing" },
  ];

  it.each(rows)("$name", async (row) => {
    const emu = await make(dialect);
    const got = await echoPost(emu, `/echo${row.query}`, ok, "application/json", row.header === undefined ? {} : { "x-api-key": row.header });
    if (row.outcome === "ok") expectExpressJson(got, ok);
    else if (row.outcome === "missing") {
      if (dialect === "esp") expectEspError(got, 401, 16, UNREGISTERED, "service_control", "Bearer");
      else expectV2Error(got, 401, `UNAUTHENTICATED: ${UNREGISTERED}`, null);
    } else if (dialect === "esp") expectEspError(got, 400, 3, KEY_INVALID, "service_control", null);
    else expectV2Error(got, 400, `INVALID_ARGUMENT: ${KEY_INVALID}`, null);
  });

  it("without apiKeys in the fixture the default key is test-api-key", async () => {
    const emu = await createStandin({ fixture: { echo: { proxy: dialect } }, onError: (e) => crashes.push(e) });
    expectExpressJson(await echoPost(emu, "/echo?key=test-api-key", ok), ok);
    const got = await echoPost(emu, "/echo?key=k1", ok);
    if (dialect === "esp") expectEspError(got, 400, 3, KEY_INVALID, "service_control", null);
    else expectV2Error(got, 400, `INVALID_ARGUMENT: ${KEY_INVALID}`, null);
  });

  it("the key is checked before the body is parsed", async () => {
    const emu = await make(dialect);
    const got = await echoPost(emu, "/echo", "{bad");
    if (dialect === "esp") expectEspError(got, 401, 16, UNREGISTERED, "service_control", "Bearer");
    else expectV2Error(got, 401, `UNAUTHENTICATED: ${UNREGISTERED}`, null);
  });

  it("a JWT does not replace the API key on /echo", async () => {
    const emu = await make(dialect);
    const token = await mint(emu, "provider_jwt");
    const got = await echoPost(emu, "/echo", ok, "application/json", { Authorization: `Bearer ${token}` });
    expect(got.status).toBe(401);
    expect(got.body).toContain(UNREGISTERED);
  });
});

// =====================================================================================
// 7. POST /echo: bodies (the Node backend, express.json(), NODE_ENV=production)
// =====================================================================================

describe.each(DIALECTS)("POST /echo bodies (%s)", (dialect) => {
  const LIMIT = 102_400;
  const messageOfBytes = (total: number, ch = "a") => `{"message":"${ch.repeat((total - 14) / Buffer.byteLength(ch))}"}`;

  type BodyRow = { name: string; contentType: string | null; body: string; expected: string };
  const echoed: BodyRow[] = [
    { name: "a message", contentType: "application/json", body: '{"message":"hi"}', expected: '{"message":"hi"}' },
    { name: "a number message (no type check)", contentType: "application/json", body: '{"message":5}', expected: '{"message":5}' },
    { name: "a null message", contentType: "application/json", body: '{"message":null}', expected: '{"message":null}' },
    { name: "an object message", contentType: "application/json", body: '{"message": {"b": [1, 2], "a": true}}', expected: '{"message":{"b":[1,2],"a":true}}' },
    { name: "other fields are dropped", contentType: "application/json", body: '{"other":1,"message":"hi"}', expected: '{"message":"hi"}' },
    { name: "no message field", contentType: "application/json", body: '{"other":1}', expected: "{}" },
    { name: "an array", contentType: "application/json", body: "[1]", expected: "{}" },
    { name: "an empty body", contentType: "application/json", body: "", expected: "{}" },
    { name: "blank space around the object", contentType: "application/json", body: ' \n\t{"message":"x"} \n', expected: '{"message":"x"}' },
    { name: "non-ASCII text", contentType: "application/json", body: '{"message":"héllo ✓"}', expected: '{"message":"héllo ✓"}' },
    { name: "a \\u escape", contentType: "application/json", body: '{"message":"\\u00e9\\n"}', expected: '{"message":"é\\n"}' },
    { name: "charset=utf-8", contentType: "application/json; charset=utf-8", body: '{"message":"hi"}', expected: '{"message":"hi"}' },
    { name: "charset=UTF-8", contentType: "application/json; charset=UTF-8", body: '{"message":"hi"}', expected: '{"message":"hi"}' },
    { name: "text/plain is not parsed", contentType: "text/plain", body: '{"message":"hi"}', expected: "{}" },
    { name: "form data is not parsed", contentType: "application/x-www-form-urlencoded", body: "message=hi", expected: "{}" },
    { name: "a body of exactly 100 kb", contentType: "application/json", body: messageOfBytes(LIMIT), expected: messageOfBytes(LIMIT) },
    { name: "a text/plain body over 100 kb is not read", contentType: "text/plain", body: "x".repeat(200_000), expected: "{}" },
  ];
  it.each(echoed)("200: $name", async (row) => {
    const emu = await make(dialect);
    expectExpressJson(await echoPost(emu, "/echo?key=k1", row.body, row.contentType), row.expected);
  });

  type PageRow = { name: string; contentType: string; body: string; status: number; message: string };
  const pages: PageRow[] = [
    { name: "malformed JSON", contentType: "application/json", body: "{bad", status: 400, message: "Bad Request" },
    { name: "a trailing comma", contentType: "application/json", body: '{"message":"a",}', status: 400, message: "Bad Request" },
    { name: "an unclosed array", contentType: "application/json", body: "[", status: 400, message: "Bad Request" },
    { name: "a JSON string (strict mode)", contentType: "application/json", body: '"str"', status: 400, message: "Bad Request" },
    { name: "a JSON number", contentType: "application/json", body: "5", status: 400, message: "Bad Request" },
    { name: "JSON null", contentType: "application/json", body: "null", status: 400, message: "Bad Request" },
    { name: "JSON true after blanks", contentType: "application/json", body: "  true", status: 400, message: "Bad Request" },
    { name: "a body of 100 kb + 1 byte", contentType: "application/json", body: messageOfBytes(LIMIT + 1), status: 413, message: "Payload Too Large" },
    { name: "over 100 kb in bytes, not in characters", contentType: "application/json", body: messageOfBytes(LIMIT + 2 + 14, "é"), status: 413, message: "Payload Too Large" },
    { name: "charset=latin1", contentType: "application/json; charset=latin1", body: '{"message":"hi"}', status: 415, message: "Unsupported Media Type" },
    { name: "charset=iso-8859-1", contentType: "application/json; charset=iso-8859-1", body: '{"message":"hi"}', status: 415, message: "Unsupported Media Type" },
  ];
  it.each(pages)("$status: $name", async (row) => {
    const emu = await make(dialect);
    expectErrorPage(await echoPost(emu, "/echo?key=k1", row.body, row.contentType), row.status, row.message);
  });

  it("the size rows measure what they claim", () => {
    expect(Buffer.byteLength(messageOfBytes(LIMIT))).toBe(LIMIT);
    expect(Buffer.byteLength(messageOfBytes(LIMIT + 1))).toBe(LIMIT + 1);
    const wide = messageOfBytes(LIMIT + 2 + 14, "é");
    expect(Buffer.byteLength(wide)).toBeGreaterThan(LIMIT);
    expect(wide.length).toBeLessThan(LIMIT);
  });

  it("the same request twice gives the same bytes and ETag", async () => {
    const emu = await make(dialect);
    const a = await echoPost(emu, "/echo?key=k1", '{"message":"same"}');
    const b = await echoPost(emu, "/echo?key=k1", '{"message":"same"}');
    expect(b.body).toBe(a.body);
    expect(b.headers.get("etag")).toBe(a.headers.get("etag"));
    expect(a.headers.get("etag")).toBe(etagOf('{"message":"same"}'));
  });
});

// =====================================================================================
// 8. Routing: unknown paths, wrong methods, OPTIONS, HEAD, case
// =====================================================================================

describe("routing, ESP", () => {
  const notFound: [string, string][] = [
    ["GET", "/echo?key=k1"],
    ["GET", "/echo"],
    ["PUT", "/echo?key=k1"],
    ["DELETE", "/echo?key=k1"],
    ["POST", "/Echo?key=k1"],
    ["POST", "/echo/?key=k1"],
    ["POST", "/ECHO?key=k1"],
    ["GET", "/"],
    ["GET", "/nope"],
    ["POST", "/nope?key=bad"],
    ["POST", "/auth/info/providerjwt"],
    ["PUT", "/auth/info/identityplatform"],
    ["GET", "/auth/info/providerjwt/"],
    ["GET", "/auth/info/ProviderJwt"],
    ["GET", "/auth/info/googlejwt"],
    ["GET", "/auth/info/firebase"],
    ["GET", "/auth/info"],
  ];
  it.each(notFound)("%s %s → 404 Method does not exist.", async (method, path) => {
    const emu = await make("esp");
    const init: RequestInit = { method };
    if (method !== "GET") init.body = '{"message":"hi"}';
    if (method !== "GET") init.headers = { "Content-Type": "application/json" };
    expectEspError(await call(emu, path, init), 404, 5, "Method does not exist.", "service_control", null);
  });

  it.each(["/echo?key=k1", "/auth/info/identityplatform", "/auth/info/providerjwt", "/nope"])("HEAD %s → 404", async (path) => {
    const emu = await make("esp");
    const got = await call(emu, path, { method: "HEAD" });
    expect(got.status).toBe(404);
  });

  it.each(["/echo", "/echo?key=k1", "/auth/info/providerjwt", "/auth/info/identityplatform", "/nope"])("OPTIONS %s → 403 CORS not allowed", async (path) => {
    const emu = await make("esp");
    const got = await call(emu, path, { method: "OPTIONS", headers: { Origin: "https://app.example.test", "Access-Control-Request-Method": "POST" } });
    expectEspError(got, 403, 7, "The service does not allow CORS traffic.", "service_control", "Bearer");
  });

  it("a wrong method with a valid token is still 404", async () => {
    const emu = await make("esp");
    const token = await mint(emu, "identity_platform");
    const got = await call(emu, IDP, { method: "DELETE", headers: { Authorization: `Bearer ${token}` } });
    expectEspError(got, 404, 5, "Method does not exist.", "service_control", null);
  });
});

describe("routing, ESPv2", () => {
  const NOT_DEFINED = "The current request is not defined by this API.";
  const wrongMethod = (template: string) => `The current request is matched to the defined url template "${template}" but its http method is not allowed`;

  it.each([
    ["POST", "/Echo?key=k1"],
    ["POST", "/echo/?key=k1"],
    ["GET", "/"],
    ["GET", "/nope"],
    ["OPTIONS", "/nope"],
    ["GET", "/auth/info/providerjwt/"],
    ["GET", "/auth/info/ProviderJwt"],
    ["GET", "/auth/info/googlejwt"],
  ])("%s %s → 404", async (method, path) => {
    const emu = await make("espv2");
    const init: RequestInit = { method };
    if (method === "POST") init.body = '{"message":"hi"}';
    expectV2Error(await call(emu, path, init), 404, NOT_DEFINED, null);
  });

  it.each([
    ["GET", "/echo?key=k1", "/echo"],
    ["GET", "/echo", "/echo"],
    ["PUT", "/echo?key=k1", "/echo"],
    ["OPTIONS", "/echo", "/echo"],
    ["POST", "/auth/info/providerjwt", "/auth/info/providerjwt"],
    ["DELETE", "/auth/info/identityplatform", "/auth/info/identityplatform"],
    ["OPTIONS", "/auth/info/provideridtoken", "/auth/info/provideridtoken"],
    ["PATCH", "/auth/info/provideridtoken", "/auth/info/provideridtoken"],
  ])("%s %s → 405 (template %s)", async (method, path, template) => {
    const emu = await make("espv2");
    const init: RequestInit = { method };
    if (method !== "GET" && method !== "OPTIONS") init.body = '{"message":"hi"}';
    expectV2Error(await call(emu, path, init), 405, wrongMethod(template), null);
  });

  it.each(["/echo?key=k1", "/auth/info/identityplatform", "/auth/info/providerjwt"])("HEAD %s → 405", async (path) => {
    const emu = await make("espv2");
    const got = await call(emu, path, { method: "HEAD" });
    expect(got.status).toBe(405);
  });

  it("HEAD on an unknown path → 404", async () => {
    const emu = await make("espv2");
    expect((await call(emu, "/nope", { method: "HEAD" })).status).toBe(404);
  });
});
