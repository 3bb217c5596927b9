/**
 * `standin record`'s engine: one port per upstream, where `standin start`
 * would listen, each forwarding every request to its upstream (proxy.ts)
 * and recording the exchanges (exchange.ts) within the budget (budget.ts),
 * secrets redacted (redaction.ts). The recording is written when the
 * recorder closes, and on `POST /_standin/recording/flush`, atomically.
 *
 * Two paths are the recorder's own and never forwarded: `GET
 * /_standin/ready` (so `standin wait-ready` works as with `start`) and
 * `POST /_standin/recording/flush`.
 */
import { Agent as HttpAgent, createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent as HttpsAgent } from "node:https";
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
import { forward, type Upstream } from "./proxy.js";
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
}

export interface RunningRecorder {
  /** The URL of each port, one per upstream. */
  readonly urls: Partial<Record<RecordedService, string>>;
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
  const products = options.readProducts === false ? {} : await productVersions(upstreams);

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
  const agents: Array<HttpAgent | HttpsAgent> = [];
  const serve = (service: RecordedService, upstream: Upstream) => (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const path = incoming.url ?? "/";
    if (path === "/_standin/ready" && incoming.method === "GET") return answerJson(outgoing, 200, { ready: true, recording: true });
    if (path === "/_standin/recording/flush" && incoming.method === "POST") {
      incoming.resume();
      flush().then(
        (count) => answerJson(outgoing, 200, { exchanges: count, ...(options.out && { out: options.out }) }),
        (error: Error) => answerJson(outgoing, 500, { error: `cannot write the recording: ${error.message}` }),
      );
      return;
    }
    forward(incoming, outgoing, upstream, recordOf(service, incoming));
  };
  /** The record of a request about to be forwarded; none once the recording is full (it describes nothing more). */
  const recordOf = (service: RecordedService, incoming: IncomingMessage): ExchangeRecord | undefined => {
    const seq = nextSeq++;
    if (budget.truncation !== undefined) return undefined;
    const head = ExchangeRecord.describe(context, seq, service, incoming.method ?? "GET", incoming.url ?? "/", incoming.headers);
    if (!budget.admit(seq, ExchangeRecord.cost(head))) return undefined;
    const record = new ExchangeRecord(context, head);
    exchanges.push(record);
    return record;
  };

  try {
    for (const service of RECORDED_SERVICES) {
      const url = upstreams[service];
      if (!url) continue;
      // Blocking queries and streams each hold a connection for as long as they last: no cap on sockets.
      const agent = url.protocol === "https:" ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
      agents.push(agent);
      const server = createServer({ requestTimeout: 0 }, serve(service, { url, agent }));
      // A request to switch protocols (a WebSocket: `nomad alloc exec`) is forwarded too, and its connection then passed through.
      server.on("upgrade", (incoming: IncomingMessage, socket: Duplex, head: Buffer) => {
        switched.add(socket);
        socket.on("close", () => switched.delete(socket));
        forwardUpgrade(incoming, socket, head, { url, agent }, recordOf(service, incoming));
      });
      const port = options.ports?.[service] ?? DEFAULT_PORTS[service];
      // Said as start says it (server.ts), with the option that picks another port.
      await listenOn(server, host, port, () => new RecorderError(`port ${port} on ${host} (${service}) is already in use (--${service}-port 0 picks a free one)`));
      servers.set(service, server);
    }
  } catch (error) {
    await Promise.all([...servers.values()].map(closeServer));
    for (const agent of agents) agent.destroy();
    throw error;
  }

  const urlHost = host.includes(":") ? `[${host}]` : host;
  const urls = Object.fromEntries([...servers].map(([service, server]) => [service, `http://${urlHost}:${(server.address() as AddressInfo).port}`]));
  let closing: Promise<Recording> | undefined;
  return {
    urls,
    recording,
    flush,
    close: () =>
      (closing ??= (async () => {
        for (const socket of switched) socket.destroy();
        await Promise.all([...servers.values()].map(closeServer));
        for (const agent of agents) agent.destroy();
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

function answerJson(outgoing: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body)}\n`;
  outgoing.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) }).end(text);
}
