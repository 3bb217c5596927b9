/**
 * Puts an emulator's three apps on ports, over HTTP or HTTPS (tls.ts).
 * `startStandin` resolves once every port listens; if one cannot be bound,
 * the others are closed again and a PortInUseError says which.
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { createStandin, type CreateStandinOptions, type Standin } from "./emulator.js";
import type { GeneratedCa, PreparedTls, TlsFiles } from "./tls.js";
import { closeServer, listenOn } from "./http/listen.js";
import { DEFAULT_PORTS, SERVICE_NAMES, type ServiceName } from "./http/service-names.js";
import { checkStateFileWritable, DEFAULT_STATE_FILE_INTERVAL_MS, loadStateFile, removeStaleTemporaries, type ResumedState, StateFileWriter, writeStateFile } from "./state-file.js";

export { writeStateFile } from "./state-file.js";

export interface StartStandinOptions extends Omit<CreateStandinOptions, "tls"> {
  /** Default 127.0.0.1 (loopback only unless asked). */
  host?: string;
  /** Per-service port; 0 = any free port. Defaults 4646, 8500, 8080. */
  ports?: Partial<Record<ServiceName, number>>;
  /**
   * Load state from this file at start if it exists; while running, write it
   * behind (atomically, when the state changed, at most once per
   * `stateFileIntervalMs`), and once more at `close()`.
   */
  stateFile?: string;
  /** With `stateFile`: how often the state is written behind, in ms (default 1000; 0 = only at `close()`). A crash loses at most about this much. */
  stateFileIntervalMs?: number;
  /**
   * Serve every port over HTTPS. `true`: a CA and a server certificate signed
   * by it (for localhost, 127.0.0.1, ::1 and `host`) are made at start, the CA
   * written to `<tlsDir>/ca.pem` (see `RunningStandin.ca`); `{ cert, key }`:
   * the caller's own certificate and key (PEM).
   */
  tls?: boolean | TlsFiles;
  /** With `tls: true`: the directory the CA certificate is written to (created if needed); default a new directory under the OS temp dir, removed by `close()`. */
  tlsDir?: string;
  /** Called for each request once answered (e.g. debug logging). */
  onRequest?: (entry: { service: ServiceName; method: string; path: string; status: number }) => void;
}

export interface RunningStandin {
  readonly emulator: Standin;
  readonly urls: Record<ServiceName, string> & { control: string };
  readonly ports: Record<ServiceName, number>;
  /** With `tls: true`: the CA that signed the server certificate, for clients to trust (PEM, and the file it is in). */
  readonly ca?: GeneratedCa;
  /** With `stateFile`, when the file existed: what was loaded from it (for the start banner). */
  readonly resumed?: ResumedState;
  /** Stops listening, writes the state file if one was given, stops the clock. */
  close(): Promise<void>;
}

export class PortInUseError extends Error {
  constructor(
    readonly service: ServiceName,
    readonly host: string,
    readonly port: number,
  ) {
    super(`port ${port} on ${host} (${service}) is already in use`);
    this.name = "PortInUseError";
  }
}

export async function startStandin(options: StartStandinOptions = {}): Promise<RunningStandin> {
  const host = options.host ?? "127.0.0.1";
  // The address it listens on is one the control API answers to (with localhost and IP addresses).
  const emulator = await createStandin({ ...options, tls: Boolean(options.tls), allowedHosts: [...(options.allowedHosts ?? []), host] });
  // A state file that cannot be written would lose every write at shutdown: refuse to start instead.
  if (options.stateFile) await checkStateFileWritable(options.stateFile);
  const stateFileLoaded = Boolean(options.stateFile && existsSync(options.stateFile));
  let resumed: ResumedState | undefined;
  if (options.stateFile && stateFileLoaded) {
    resumed = await loadStateFile(emulator, options.stateFile);
    // The state file carries the clock settings it was saved with; settings given explicitly win.
    const { mode, speed } = options.clock ?? {};
    if (mode !== undefined || speed !== undefined) {
      const current = emulator.clock.status();
      emulator.clock.setMode(mode ?? current.mode, speed ?? current.speed);
    }
  }

  // Write-behind: a crash (SIGKILL, out of memory) loses at most the last interval's writes.
  // Made before any port listens, so its idea of what is on disk is taken before any request.
  let writer: StateFileWriter | undefined;
  if (options.stateFile) {
    await removeStaleTemporaries(options.stateFile);
    // Clock settings given over the loaded file's make the file out of date, as a missing file is.
    const overridden = options.clock?.mode !== undefined || options.clock?.speed !== undefined;
    writer = new StateFileWriter(emulator, options.stateFile, {
      intervalMs: options.stateFileIntervalMs ?? DEFAULT_STATE_FILE_INTERVAL_MS,
      upToDate: stateFileLoaded && !overridden,
    });
  }

  const servers: Partial<Record<ServiceName, Server>> = {};
  const ports = {} as Record<ServiceName, number>;
  let tls: PreparedTls | undefined;
  try {
    // Loaded only when asked for: node:tls, node:https and the certificate code stay off a plain start-up.
    const https = options.tls ? await import("node:https") : undefined;
    if (options.tls) tls = await (await import("./tls.js")).prepareTls(options.tls, host, options.tlsDir);
    for (const service of SERVICE_NAMES) {
      const app = emulator.app(service);
      const fetch = options.onRequest
        ? async (request: Request) => {
            const response = await app.fetch(request);
            options.onRequest!({ service, method: request.method, path: new URL(request.url).pathname, status: response.status });
            return response;
          }
        : app.fetch;
      const server = (
        tls && https
          ? createAdaptorServer({ fetch, hostname: host, createServer: https.createServer, serverOptions: { key: tls.key, cert: tls.cert } })
          : createAdaptorServer({ fetch, hostname: host })
      ) as Server;
      const port = options.ports?.[service] ?? DEFAULT_PORTS[service];
      await listenOn(server, host, port, () => new PortInUseError(service, host, port));
      servers[service] = server;
      ports[service] = (server.address() as AddressInfo).port;
    }
  } catch (error) {
    await Promise.all(Object.values(servers).map(closeServer));
    emulator.close();
    await tls?.cleanup();
    throw error;
  }

  const urlHost = host.includes(":") ? `[${host}]` : host;
  const scheme = tls ? "https" : "http";
  const urls = {
    scheduler: `${scheme}://${urlHost}:${ports.scheduler}`,
    registry: `${scheme}://${urlHost}:${ports.registry}`,
    echo: `${scheme}://${urlHost}:${ports.echo}`,
    control: `${scheme}://${urlHost}:${ports.scheduler}/_standin`,
  };

  writer?.start();

  let closing: Promise<void> | undefined;
  return {
    emulator,
    urls,
    ports,
    ...(tls?.ca && { ca: tls.ca }),
    ...(resumed && { resumed }),
    close: () =>
      (closing ??= (async () => {
        await writer?.stop();
        emulator.close();
        await Promise.all(Object.values(servers).map(closeServer));
        await tls?.cleanup();
        if (options.stateFile) await writeStateFile(emulator.snapshot(), options.stateFile);
      })()),
  };
}
