#!/usr/bin/env node
// Generates keys/test-keys.json: the fixed RSA key pairs the echo service
// signs tokens with when a fixture gives a scheme no key set of its own.
// They are committed so minted tokens are the same on every machine.
// They are TEST keys: public in this repository, never to be trusted anywhere.
// Run once; re-running replaces them (and changes every minted token).
import { writeFileSync } from "node:fs";
import { exportJWK, generateKeyPair } from "jose";

const schemes = ["provider_jwt", "app_default_service_account", "provider_service_account", "provider_id_token", "identity_platform"];
const keys = {};
for (const scheme of schemes) {
  const { privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true });
  keys[scheme] = { ...(await exportJWK(privateKey)), kid: `standin-test-${scheme}-1`, alg: "RS256", use: "sig" };
}
const document = {
  warning: "FIXED TEST KEYS. The private halves are public in the standin repository. Never trust tokens signed by them outside tests.",
  keys,
};
writeFileSync(new URL("../keys/test-keys.json", import.meta.url), JSON.stringify(document, null, 2) + "\n");
console.log(`wrote ${schemes.length} keys`);
