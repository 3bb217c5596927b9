/**
 * HTTPS for the service ports (`standin start --tls`, `startStandin({ tls })`).
 *
 * `tls: true` makes a throwaway CA at start and a server certificate signed
 * by it for the loopback names and the listen host; the CA certificate is
 * written to a file clients can trust. The CA's private key never leaves
 * this module, so the CA a client is told to trust can sign nothing else.
 * `tls: { cert, key }` serves the caller's own certificate instead.
 *
 * Transport only: nothing here touches the emulator's state, its clock or
 * its generator. Certificates are dated by the wall clock and keyed by
 * WebCrypto's randomness, because real clients check them against real time.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import { KeyObject, webcrypto } from "node:crypto";
import { createSecureContext } from "node:tls";
import { wallNow } from "./core/clock.js";

/** The caller's own certificate (chain) and private key, PEM. */
export interface TlsFiles {
  cert: string | Buffer;
  key: string | Buffer;
}

export type TlsOption = boolean | TlsFiles;

/** A CA made at start: its certificate (PEM) and the file it was written to. */
export interface GeneratedCa {
  readonly pem: string;
  readonly path: string;
}

export interface PreparedTls {
  readonly key: string | Buffer;
  readonly cert: string | Buffer;
  /** Only for a generated certificate. */
  readonly ca?: GeneratedCa;
  /** Removes what was written when it was written to a directory of our own. */
  cleanup(): Promise<void>;
}

/** A certificate or key that cannot be served; the message is one line. */
export class TlsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TlsError";
  }
}

const ECDSA = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const HOUR_MS = 3_600_000;
/** Browsers and some clients refuse server certificates valid for more than 398 days. */
const VALIDITY_MS = 365 * 24 * HOUR_MS;

/**
 * What the ports will serve: the caller's certificate (checked now, so a bad
 * one fails before any port is bound), or a fresh CA and server certificate
 * for `host`, the CA written as `ca.pem` into `dir` (created if needed;
 * default: a new directory under the OS temp dir, removed by `cleanup`).
 */
export async function prepareTls(option: TlsFiles | true, host: string, dir?: string): Promise<PreparedTls> {
  if (option !== true) {
    try {
      createSecureContext({ cert: option.cert, key: option.key });
    } catch (error) {
      throw new TlsError(`the TLS certificate and key cannot be served: ${(error as Error).message}`);
    }
    return { cert: option.cert, key: option.key, cleanup: async () => {} };
  }
  const generated = await generateCertificates(certificateNames(host));
  const own = dir === undefined;
  const directory = own ? await mkdtemp(join(tmpdir(), "standin-tls-")) : resolve(dir);
  if (!own) await mkdir(directory, { recursive: true });
  const path = join(directory, "ca.pem");
  await writeFile(path, generated.caPem);
  return {
    cert: generated.certPem,
    key: generated.keyPem,
    ca: { pem: generated.caPem, path },
    cleanup: async () => {
      if (own) await rm(directory, { recursive: true, force: true });
    },
  };
}

interface SubjectName {
  type: "dns" | "ip";
  value: string;
}

/** The names the server certificate is valid for: the loopback names, and the listen host when it is another. */
export function certificateNames(host: string): SubjectName[] {
  const names: SubjectName[] = [
    { type: "dns", value: "localhost" },
    { type: "ip", value: "127.0.0.1" },
    { type: "ip", value: "::1" },
  ];
  const add = (name: SubjectName) => {
    if (!names.some((n) => n.type === name.type && n.value === name.value)) names.push(name);
  };
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  // Listening on every interface: clients on other machines reach it by this machine's name.
  if (bare === "0.0.0.0" || bare === "::" || bare === "") add({ type: "dns", value: hostname().toLowerCase() });
  else if (isIP(bare)) add({ type: "ip", value: bare });
  else add({ type: "dns", value: bare.toLowerCase() });
  return names;
}

async function generateCertificates(names: SubjectName[]): Promise<{ caPem: string; certPem: string; keyPem: string }> {
  const x509 = await loadX509();
  const crypto = webcrypto as unknown as Crypto;
  // Wall time through core/clock, the one place that reads it: certificates are checked against real time.
  const now = wallNow();
  // An hour back: a client whose clock runs a little behind still accepts the certificate.
  const notBefore = new Date(now - HOUR_MS);
  const notAfter = new Date(now + VALIDITY_MS);

  const caKeys = (await crypto.subtle.generateKey(ECDSA, false, ["sign", "verify"])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name: "CN=standin test CA, O=standin",
      notBefore,
      notAfter,
      keys: caKeys,
      signingAlgorithm: ECDSA,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  const serverKeys = (await crypto.subtle.generateKey(ECDSA, true, ["sign", "verify"])) as CryptoKeyPair;
  const server = await x509.X509CertificateGenerator.create(
    {
      // Clients match the alternative names, not the common name.
      subject: "CN=standin, O=standin",
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: serverKeys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: ECDSA,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names),
        await x509.SubjectKeyIdentifierExtension.create(serverKeys.publicKey, false, crypto),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey, false, crypto),
      ],
    },
    crypto,
  );

  const keyPem = KeyObject.from(serverKeys.privateKey as webcrypto.CryptoKey).export({ type: "pkcs8", format: "pem" }) as string;
  return { caPem: ca.toString("pem") + "\n", certPem: server.toString("pem") + "\n", keyPem };
}

/**
 * Loaded on first use only: @peculiar/x509 depends on tsyringe, which needs
 * the global Reflect metadata polyfill, and a process that never asks for a
 * generated certificate should not get that global.
 */
async function loadX509(): Promise<typeof import("@peculiar/x509")> {
  await import("reflect-metadata");
  return import("@peculiar/x509");
}
