/**
 * `standin record`'s engine: one port per upstream, where `standin start`
 * would listen, each forwarding every request to its upstream (proxy.ts)
 * and recording the exchanges (exchange.ts) within the budget (budget.ts),
 * secrets redacted (redaction.ts). The recording is written when the
 * recorder closes, and on `POST /_standin/recording/flush`, atomically.
 *
 * Two paths are the recorder's own and never forwarded: `GET
 * /_standin/ready` (so `standin wait-ready` works as with `start`) and
 * `POST /_standin/recording/flush`. A request in proxy form (a client with
 * `HTTP_PROXY` set to the recorder) goes to the upstream it names, when it
 * names one (request-target.ts); `CONNECT` is refused: a tunnel would carry
 * TLS the recorder cannot read. The ports serve HTTPS as `start --tls`
 * does (tls.ts), and https upstreams are checked against `upstreamCa` too.
 */
import { Agent as HttpAgent, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent as HttpsAgent, createServer as createHttpsServer } from "node:https";
import { rootCertificates } from "node:tls";
import { X509Certificate } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { wallNow } from "../../core/clock.js";
import { replaceFile } from "../../core/atomic-file.js";
import { closeServer, listenOn } from "../../http/listen.js";
import { DEFAULT_PORTS } from "../../http/service-names.js";
import { packageVersion } from "../../package-files.js";
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordedExchange, type RecordedService, type Recording } from "../recording.js";
import { RecordingBudget } from "./budget.js";
import { ExchangeRecord, type ExchangeContext } from "./exchange.js";
import { productVersions } from "./products.js";
import type { GeneratedCa, PreparedTls, TlsOption } from "../../tls.js";
import { forward, type Upstream, type UpstreamTrust } from "./proxy.js";
import { requestTarget } from "./request-target.js";
import { forwardUpgrade } from "./upgrade.js";
import { recordingRedactor } from "./redaction.js";

export const RECORDED_SERVICES: readonly RecordedService[] = ["scheduler", "registry", "echo"];

export interface RecorderOptions {
  /** Each upstream's base URL (`http://127.0.0.1:4646`); at least one. */
  readonly upstreams: Partial<Record<RecordedService, string>>;
  /** Where the recording is written (on close, and on flush); none: only `recording()` gives it. */
  readonly out?: string;
  readonly host?: string;
  /** A service's port (0: any free port); default the real product's. */
  readonly ports?: Partial<Record<RecordedService, number>>;
  /** The byte budget (`--recording-bytes`; default the tape's). */
  readonly budgetBytes?: number;
  /** The entry budget (default the tape's TAPE_CAPACITY). */
  readonly capacity?: number;
  /** Read the upstreams' versions at start (default true). */
  readonly readProducts?: boolean;
  /** Serve the ports over HTTPS, as `startStandin`'s `tls` (true: a certificate made at start, its CA written to `tlsDir`). */
  readonly tls?: TlsOption;
  readonly tlsDir?: string;
  /** CA certificates (PEM, one or more) trusted for https upstreams besides the system's. */
  readonly upstreamCa?: string | Buffer;
  /** Accept any certificate from an https upstream (Nomad's `-tls-skip-verify`). */
  readonly upstreamTlsSkipVerify?: boolean;
}

export interface RunningRecorder {
  /** The URL of each port, one per upstream. */
  readonly urls: Partial<Record<RecordedService, string>>;
  /** With `tls: true`: the CA that signed the ports' certificate, for clients to trust. */
  readonly ca?: GeneratedCa;
  /** The recording so far (waits for the exchanges that have ended to be written down; open ones are left out). */
  recording(): Promise<Recording>;
  /** Writes the recording so far to `out`, atomically; resolves with how many exchanges it holds. */
  flush(): Promise<number>;
  /** Stops listening, cuts what is still open (streams, parked queries), writes `out`; resolves with the recording. */
  close(): Promise<Recording>;
}

export class RecorderError extends Error {
  override name = "RecorderError";
}

export async function startRecorder(options: RecorderOptions): Promise<RunningRecorder> {
  const upstreams = upstreamUrls(options.upstreams);
  const host = options.host ?? "127.0.0.1";
  const startMs = wallNow();
  const budget = new RecordingBudget(options.budgetBytes, options.capacity);
  const exchanges: ExchangeRecord[] = [];
  let nextSeq = 1;
  const context: ExchangeContext = {
    redact: recordingRedactor(),
    elapsedMs: () => wallNow() - startMs,
    take: (bytes) => budget.take(nextSeq, bytes),
  };
  const trust = upstreamTrust(options);
  const products = options.readProducts === false ? {} : await productVersions(upstreams, trust);

  const recording = async (): Promise<Recording> => {
    const ended = exchanges.filter((exchange) => exchange.done !== undefined);
    const recorded: RecordedExchange[] = await Promise.all(ended.map((exchange) => exchange.done!));
    const truncation = budget.truncation;
    return {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      recordedBy: packageVersion(),
      upstreams: Object.fromEntries(Object.entries(upstreams).map(([service, url]) => [service, url.href.replace(/\/$/, "")])),
      ...(Object.keys(products).length > 0 && { products }),
      startedAt: new Date(startMs).toISOString(),
      exchanges: recorded.sort((a, b) => a.seq - b.seq),
      truncated: truncation !== undefined,
      ...(truncation && { truncation: { ...truncation } }),
    };
  };
  // One write at a time: a flush asked for while the recorder stops must not rename the other's temporary file away.
  let writing: Promise<unknown> = Promise.resolve();
  const flush = (): Promise<number> => {
    const next = writing.then(async () => {
      const written = await recording();
      if (options.out) await replaceFile(options.out, `${JSON.stringify(written, null, 1)}\n`);
      return written.exchanges.length;
    });
    writing = next.catch(() => undefined);
    return next;
  };

  const servers = new Map<RecordedService, Server>();
  /** Connections switched to another protocol: no longer HTTP, so closing the server does not cut them; closing the recorder does. */
  const switched = new Set<Duplex>();
  const forwarding: Partial<Record<RecordedService, Upstream>> = {};
  for (const service of RECORDED_SERVICES) {
    const url = upstreams[service];
    // Blocking queries and streams each hold a connection for as long as they last: no cap on sockets.
    if (url) forwarding[service] = { url, agent: url.protocol === "https:" ? new HttpsAgent({ keepAlive: true, ...trust }) : new HttpAgent({ keepAlive: true }), trust };
  }
  const destroyAgents = () => {
    for (const upstream of Object.values(forwarding)) upstream.agent.destroy();
  };
  const serve = (service: RecordedService) => (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const rawTarget = incoming.url ?? "/";
    if (rawTarget === "/_standin/ready" && incoming.method === "GET") return answerJson(outgoing, 200, { ready: true, recording: true });
    if (rawTarget === "/_standin/recording/flush" && incoming.method === "POST") {
      incoming.resume();
      flush().then(
        (count) => answerJson(outgoing, 200, { exchanges: count, ...(options.out && { out: options.out }) }),
        (error: Error) => answerJson(outgoing, 500, { error: `cannot write the recording: ${error.message}` }),
      );
      return;
    }
    const target = requestTarget(rawTarget, service, upstreams);
    if ("refused" in target) {
      incoming.resume();
      return answerText(outgoing, 403, `standin record: ${target.refused}\n`);
    }
    forward(incoming, outgoing, forwarding[target.service]!, target.path, recordOf(target.service, incoming, target.path));
  };
  /** The record of a request about to be forwarded; none once the recording is full (it describes nothing more). */
  const recordOf = (service: RecordedService, incoming: IncomingMessage, path: string): ExchangeRecord | undefined => {
    const seq = nextSeq++;
    if (budget.truncation !== undefined) return undefined;
    const head = ExchangeRecord.describe(context, seq, service, incoming.method ?? "GET", path, incoming.headers);
    if (!budget.admit(seq, ExchangeRecord.cost(head))) return undefined;
    const record = new ExchangeRecord(context, head);
    exchanges.push(record);
    return record;
  };

  let tls: PreparedTls | undefined;
  try {
    // Loaded only when asked for, as start does: the certificate code stays off a plain recorder's start-up.
    if (options.tls) tls = await (await import("../../tls.js")).prepareTls(options.tls, host, options.tlsDir);
    for (const service of RECORDED_SERVICES) {
      if (!forwarding[service]) continue;
      const server = tls ? createHttpsServer({ requestTimeout: 0, key: tls.key, cert: tls.cert }, serve(service)) : createServer({ requestTimeout: 0 }, serve(service));
      // A request to switch protocols (a WebSocket: `nomad alloc exec`) is forwarded too, and its connection then passed through.
      server.on("upgrade", (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
        switched.add(socket);
        socket.on("close", () => switched.delete(socket));
        const target = requestTarget(incoming.url ?? "/", service, upstreams);
        if ("refused" in target) return socket.end(rawAnswer(403, "Forbidden", `standin record: ${target.refused}\n`));
        forwardUpgrade(incoming, socket, head, forwarding[target.service]!, target.path, recordOf(target.service, incoming, target.path));
      });
      // HTTPS through the recorder as a proxy would be a tunnel of bytes it cannot read, so nothing to record: said so instead of a silent close.
      server.on("connect", (_incoming: IncomingMessage, socket: Duplex) => {
        socket.on("error", () => undefined);
        socket.end(rawAnswer(501, "Not Implemented", CONNECT_REFUSED));
      });
      const port = options.ports?.[service] ?? DEFAULT_PORTS[service];
      // Said as start says it (server.ts), with the option that picks another port.
      await listenOn(server, host, port, () => new RecorderError(`port ${port} on ${host} (${service}) is already in use (--${service}-port 0 picks a free one)`));
      servers.set(service, server);
    }
  } catch (error) {
    await Promise.all([...servers.values()].map(closeServer));
    destroyAgents();
    await tls?.cleanup();
    throw error;
  }

  const urlHost = host.includes(":") ? `[${host}]` : host;
  const scheme = tls ? "https" : "http";
  const urls = Object.fromEntries([...servers].map(([service, server]) => [service, `${scheme}://${urlHost}:${(server.address() as AddressInfo).port}`]));
  let closing: Promise<Recording> | undefined;
  return {
    urls,
    ...(tls?.ca && { ca: tls.ca }),
    recording,
    flush,
    close: () =>
      (closing ??= (async () => {
        for (const socket of switched) socket.destroy();
        await Promise.all([...servers.values()].map(closeServer));
        destroyAgents();
        await tls?.cleanup();
        // Cutting the connections ends every exchange still open (a stream, a parked query) as cut now.
        await Promise.all(exchanges.map((exchange) => exchange.done ?? exchange.finish({ cut: true })));
        await flush();
        return recording();
      })()),
  };
}

/** Each upstream as a URL; refuses none at all, a scheme that is not http(s), and credentials in the URL. */
function upstreamUrls(given: Partial<Record<RecordedService, string>>): Partial<Record<RecordedService, URL>> {
  const urls: Partial<Record<RecordedService, URL>> = {};
  for (const service of RECORDED_SERVICES) {
    const text = given[service];
    if (text === undefined) continue;
    let url: URL;
    try {
      url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
    } catch {
      throw new RecorderError(`--${service}-upstream ${text} is not a URL (e.g. http://127.0.0.1:4646)`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new RecorderError(`--${service}-upstream ${text}: only http and https upstreams are proxied`);
    // The recording names its upstreams and must never hold a secret: credentials go in the client's requests, where they are redacted.
    if (url.username !== "" || url.password !== "") throw new RecorderError(`--${service}-upstream: no credentials in the URL (send them in the requests)`);
    if (url.search !== "" || url.hash !== "") throw new RecorderError(`--${service}-upstream ${text}: a base URL has no query or fragment`);
    urls[service] = url;
  }
  if (Object.keys(urls).length === 0) throw new RecorderError("give at least one upstream (--scheduler-upstream, --registry-upstream or --echo-upstream)");
  return urls;
}

/** What a CONNECT gets: the recorder records HTTP it can read, and a tunnel's would be the client's TLS. */
export const CONNECT_REFUSED =
  "standin record does not tunnel CONNECT (HTTPS through a proxy): its bytes could not be recorded. Send the requests to the recorder's own URL instead (over HTTPS with --tls), not through HTTPS_PROXY.\n";

/** The trust for https upstreams: the system's CAs plus `upstreamCa`; none given, node's defaults. */
function upstreamTrust(options: RecorderOptions): UpstreamTrust | undefined {
  if (options.upstreamCa === undefined && !options.upstreamTlsSkipVerify) return undefined;
  return {
    ...(options.upstreamCa !== undefined && { ca: [...rootCertificates, ...upstreamCertificates(options.upstreamCa.toString())] }),
    rejectUnauthorized: !options.upstreamTlsSkipVerify,
  };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Each certificate of a PEM bundle, checked now: node would only find a bad one at the first request, and say so to every request. */
function upstreamCertificates(pem: string): string[] {
  const certificates = pem.match(PEM_CERTIFICATE) ?? [];
  if (certificates.length === 0) throw new RecorderError("--upstream-ca holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
  certificates.forEach((certificate, index) => {
    try {
      new X509Certificate(certificate);
    } catch (error) {
      throw new RecorderError(`--upstream-ca: certificate ${index + 1} cannot be read (${(error as Error).message})`);
    }
  });
  return certificates;
}

function answerText(outgoing: ServerResponse, status: number, text: string): void {
  outgoing.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(text) }).end(text);
}

/** An answer written straight to a connection that is no longer node's HTTP (an upgrade, a CONNECT); the connection ends with it. */
function rawAnswer(status: number, reason: string, text: string): string {
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

function answerJson(outgoing: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  outgoing.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
}
