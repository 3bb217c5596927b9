/**
 * Emulator-held signing keys: fixed RSA test keys shipped in keys/test-keys.json
 * (one per scheme, RS256, with a `kid`). RS256 signatures are deterministic,
 * so the same claims at the same virtual instant always give the same token.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { JWK, JWTPayload } from "jose";
import type { EchoSchemeName } from "./schemes.js";

// src/echo/keys.ts and dist/echo/keys.js both sit two levels below the package root.
const KEY_FILE = fileURLToPath(new URL("../../keys/test-keys.json", import.meta.url));

interface KeyFile {
  keys: Record<EchoSchemeName, JWK & { kid: string }>;
}

let keyFile: KeyFile | undefined;
const imported = new Map<EchoSchemeName, Promise<CryptoKey | Uint8Array>>();

function privateJwk(scheme: EchoSchemeName): JWK & { kid: string } {
  keyFile ??= JSON.parse(readFileSync(KEY_FILE, "utf8")) as KeyFile;
  const jwk = keyFile.keys[scheme];
  if (!jwk) throw new Error(`no test key for scheme ${scheme} in ${KEY_FILE}`);
  return jwk;
}

/** The public half, as a JWK set entry. */
export function publicJwk(scheme: EchoSchemeName): JWK {
  const { kty, n, e, kid, alg, use } = privateJwk(scheme);
  return { kty, n, e, kid, alg, use };
}

// jose is loaded on first use: it costs ~45 ms of start-up that runs which never mint a token should not pay.
let jose: Promise<typeof import("jose")> | undefined;

export async function signToken(scheme: EchoSchemeName, payload: JWTPayload): Promise<string> {
  const { importJWK, SignJWT } = await (jose ??= import("jose"));
  const jwk = privateJwk(scheme);
  let key = imported.get(scheme);
  if (!key) imported.set(scheme, (key = importJWK(jwk, "RS256")));
  return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: jwk.kid, typ: "JWT" }).sign(await key);
}
