/**
 * A user's own self-signed certificate for 127.0.0.1 and its key (PEM), made
 * with the library standin uses: what `--tls-cert`/`--tls-key` tests hand
 * to standin and to the recorder.
 */
import "reflect-metadata";
import { SubjectAlternativeNameExtension, X509CertificateGenerator } from "@peculiar/x509";

const ECDSA = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

export async function ownCertificate(commonName: string): Promise<{ cert: string; key: string }> {
  const keys = (await crypto.subtle.generateKey(ECDSA, true, ["sign", "verify"])) as CryptoKeyPair;
  const certificate = await X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}`,
    notBefore: new Date(Date.now() - 3_600_000),
    notAfter: new Date(Date.now() + 86_400_000),
    keys,
    signingAlgorithm: ECDSA,
    extensions: [new SubjectAlternativeNameExtension([{ type: "ip", value: "127.0.0.1" }])],
  });
  const pkcs8 = Buffer.from(await crypto.subtle.exportKey("pkcs8", keys.privateKey)).toString("base64");
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join("\n")}\n-----END PRIVATE KEY-----\n`;
  return { cert: `${certificate.toString("pem")}\n`, key };
}
