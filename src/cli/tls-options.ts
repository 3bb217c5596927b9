/**
 * The options that serve a command's ports over HTTPS, declared once for
 * every command that listens where `start` does (`start`, `record`): the
 * same flags, help text and checks, read into the `tls` setting server.ts
 * and the recorder take.
 */
import { readFile } from "node:fs/promises";
import { Option } from "commander";
import type { TlsFiles } from "../tls.js";
import { CliFailure } from "./failure.js";
import { fileErrorReason } from "./files.js";

export interface TlsOptionValues {
  tls?: boolean;
  tlsDir?: string;
  tlsCert?: string;
  tlsKey?: string;
}

export function tlsOption(): Option {
  return new Option("--tls", "serve every port over HTTPS with a certificate made at start, signed by a CA written to <tls-dir>/ca.pem (default: plain HTTP)");
}

export function tlsDirOption(): Option {
  return new Option("--tls-dir <dir>", "where --tls writes ca.pem (created if needed; default: a new directory under the OS temp dir, removed on exit); implies --tls");
}

export function tlsCertOption(): Option {
  return new Option("--tls-cert <file>", "serve HTTPS with this certificate (PEM, chain allowed) instead of a generated one; needs --tls-key");
}

export function tlsKeyOption(): Option {
  return new Option("--tls-key <file>", "the private key (PEM) of --tls-cert");
}

/** `--tls`, `--tls-dir` → a generated certificate; `--tls-cert` + `--tls-key` → the user's, read here. `command` begins each failure (`standin`, `standin record`). */
export async function tlsSetting(opts: TlsOptionValues, command: string): Promise<TlsFiles | boolean> {
  if (opts.tlsCert === undefined && opts.tlsKey === undefined) return Boolean(opts.tls || opts.tlsDir !== undefined);
  if (opts.tlsCert === undefined || opts.tlsKey === undefined) throw new CliFailure(`${command}: --tls-cert and --tls-key go together`);
  if (opts.tlsDir !== undefined) throw new CliFailure(`${command}: --tls-dir is for a generated certificate, not with --tls-cert`);
  const read = async (flag: string, file: string) => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new CliFailure(`${command}: cannot read ${flag} ${file}: ${fileErrorReason(error)}`);
    }
  };
  return { cert: await read("--tls-cert", opts.tlsCert), key: await read("--tls-key", opts.tlsKey) };
}
