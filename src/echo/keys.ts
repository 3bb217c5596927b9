/**
 * Signing and verification keys of the echo service.
 *
 * Emulator-held keys are fixed RSA test keys shipped in keys/test-keys.json
 * (one per scheme, RS256, with a `kid`). RS256 signatures are deterministic,
 * so the same claims at the same virtual instant always give the same token.
 * A fixture may instead give a scheme a JWK set or a Google-style x509
 * certificate map; then the emulator verifies with those and cannot sign.
 *
 * jose is loaded on first use: it costs ~45 ms of start-up that runs which
 * never touch a token should not pay.
 */
import { createPrivateKey, sign as cryptoSign, X509Certificate, type JsonWebKey, type KeyObject } from "node:crypto";
import type { JWK, JWTPayload } from "jose";
import { readPackageFile } from "../package-files.js";
import type { EchoSchemeName, SchemeConfig } from "./schemes.js";

const KEY_FILE = "keys/test-keys.json";

type Jose = typeof import("jose");
let jose: Promise<Jose> | undefined;
export const loadJose = (): Promise<Jose> => (jose ??= import("jose"));

let keyFile: { keys: Record<EchoSchemeName, JWK & { kid: string }> } | undefined;

function privateJwk(scheme: EchoSchemeName): JWK & { kid: string } {
  keyFile ??= JSON.parse(readPackageFile(KEY_FILE)) as { keys: Record<EchoSchemeName, JWK & { kid: string }> };
  const jwk = keyFile.keys[scheme];
  if (!jwk) throw new Error(`no test key for scheme ${scheme} in ${KEY_FILE}`);
  return jwk;
}

/** The public half of an emulator-held key, as a JWK set entry. */
export function publicJwk(scheme: EchoSchemeName): JWK {
  const { kty, n, e, kid, alg, use } = privateJwk(scheme);
  return { kty, n, e, kid, alg, use };
}

export interface SignOptions {
  /** Replaces the key's kid in the header; `null` leaves kid out. */
  kid?: string | null;
  /** An `alg: "none"` token with an empty signature (for testing rejection). */
  unsigned?: boolean;
}

const signingKeys = new Map<EchoSchemeName, Promise<Parameters<Jose["CompactSign"]["prototype"]["sign"]>[0]>>();

export async function signToken(scheme: EchoSchemeName, payload: JWTPayload, options: SignOptions = {}): Promise<string> {
  const { importJWK, SignJWT, base64url } = await loadJose();
  const jwk = privateJwk(scheme);
  const kid = options.kid === undefined ? jwk.kid : options.kid;
  if (options.unsigned) {
    const header = kid === null ? { alg: "none", typ: "JWT" } : { alg: "none", kid, typ: "JWT" };
    const encode = (value: object) => base64url.encode(JSON.stringify(value));
    return `${encode(header)}.${encode(payload)}.`;
  }
  let key = signingKeys.get(scheme);
  if (!key) signingKeys.set(scheme, (key = importJWK(jwk, "RS256")));
  const header = kid === null ? { alg: "RS256", typ: "JWT" } : { alg: "RS256", kid, typ: "JWT" };
  return new SignJWT(payload).setProtectedHeader(header).sign(await key);
}

// ---- verification ----------------------------------------------------------

/** One public key a token may be checked against. */
export interface VerificationKey {
  readonly kid?: string;
  /** The JWK's `alg`, when it names one. */
  readonly alg?: string;
  /** `RSA`, `EC`, `oct`, `OKP`. */
  readonly kty: string;
  /** Imports the key for `alg` (cached); rejects when the key cannot serve that algorithm. */
  importFor(alg: string): Promise<unknown>;
}

export interface KeySet {
  /** The proxies word key-lookup failures differently for the two formats. */
  readonly format: "jwks" | "x509";
  readonly keys: readonly VerificationKey[];
}

const keySets = new WeakMap<SchemeConfig, KeySet>();

/** The keys a scheme's tokens are verified with. Cached per scheme settings object (settings rows are immutable). */
export function keySetFor(scheme: EchoSchemeName, settings: SchemeConfig): KeySet {
  let set = keySets.get(settings);
  if (!set) {
    set = settings.x509 ? x509KeySet(settings.x509) : jwkKeySet(settings.jwks?.keys ?? [publicJwk(scheme)]);
    keySets.set(settings, set);
  }
  return set;
}

function jwkKeySet(jwks: readonly object[]): KeySet {
  const keys = jwks.map((raw) => {
    const jwk = raw as JWK;
    return memoizedKey(
      { kid: typeof jwk.kid === "string" ? jwk.kid : undefined, alg: typeof jwk.alg === "string" ? jwk.alg : undefined, kty: String(jwk.kty ?? "") },
      async (alg) => (await loadJose()).importJWK({ ...jwk, alg: jwk.alg ?? alg }, alg),
    );
  });
  return { format: "jwks", keys };
}

function x509KeySet(map: Record<string, string>): KeySet {
  const keys = Object.entries(map).map(([kid, pem]) => memoizedKey({ kid, kty: certificateKeyType(pem) }, async (alg) => (await loadJose()).importX509(pem, alg)));
  return { format: "x509", keys };
}

function memoizedKey(fields: { kid?: string; alg?: string; kty: string }, load: (alg: string) => Promise<unknown>): VerificationKey {
  const imported = new Map<string, Promise<unknown>>();
  return {
    ...fields,
    importFor(alg) {
      let key = imported.get(alg);
      if (!key) imported.set(alg, (key = load(alg)));
      return key;
    },
  };
}

function certificateKeyType(pem: string): string {
  try {
    const type = new X509Certificate(pem).publicKey.asymmetricKeyType;
    return type === "rsa" ? "RSA" : type === "ec" ? "EC" : String(type ?? "");
  } catch {
    return "";
  }
}

/** The key type an algorithm needs: RSA for RS and PS, EC for ES, oct for HS, OKP for EdDSA. */
export function keyTypeFor(alg: string): string {
  if (alg.startsWith("RS") || alg.startsWith("PS")) return "RSA";
  if (alg.startsWith("ES")) return "EC";
  if (alg.startsWith("HS")) return "oct";
  return "OKP";
}

/** Whether `token` is signed by `key` with `alg`; false for any key that cannot serve `alg`. */
export async function signatureMatches(token: string, key: VerificationKey, alg: string): Promise<boolean> {
  if (key.kty !== keyTypeFor(alg)) return false;
  try {
    const { compactVerify } = await loadJose();
    await compactVerify(token, (await key.importFor(alg)) as Parameters<Jose["compactVerify"]>[1] & object, { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

// ---- artifacts -------------------------------------------------------------

const testKeyObjects = new Map<EchoSchemeName, KeyObject>();

/**
 * The scheme whose emulator-held key signed `token` (RS256 signatures are
 * deterministic, so signing its header and payload again gives the same
 * signature), or undefined. Synchronous: the tape and the journal call it as
 * a request arrives.
 */
export function testKeySigner(token: string, schemes: readonly EchoSchemeName[]): EchoSchemeName | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[2] === "") return undefined;
  for (const scheme of schemes) if (signWithTestKey(scheme, `${parts[0]}.${parts[1]}`) === parts[2]) return scheme;
  return undefined;
}

/** `signingInput` (header.payload) signed RS256 with a scheme's emulator-held key, base64url. */
export function signWithTestKey(scheme: EchoSchemeName, signingInput: string): string {
  let key = testKeyObjects.get(scheme);
  if (!key) testKeyObjects.set(scheme, (key = createPrivateKey({ key: privateJwk(scheme) as JsonWebKey, format: "jwk" })));
  return cryptoSign("sha256", Buffer.from(signingInput), key).toString("base64url");
}
