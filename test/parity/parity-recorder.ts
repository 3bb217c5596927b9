/**
 * A tiny recorder for the parity tests: sends requests to an upstream (an
 * in-process standin's apps, or any fetch-like function) and writes the
 * RecordedExchange entries `standin record` would, secrets redacted the way
 * the recording format says. Times are the upstream standin's virtual clock
 * (a manual clock the test moves), so the recording holds no wall time.
 */
import { createHash } from "node:crypto";
import { keptBody } from "../../src/control/tape.js";
import type { Standin } from "../../src/emulator.js";
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordedExchange, type RecordedService, type Recording } from "../../src/parity/recording.js";

export type Upstream = (service: RecordedService, path: string, init: RequestInit) => Promise<Response>;

export function standinUpstream(emu: Standin): Upstream {
  return async (service, path, init) => emu.app(service).request(path, init);
}

export interface Sent {
  readonly status: number;
  readonly body: any;
  readonly headers: Record<string, string>;
}

export interface RecordedStream {
  /** What has arrived so far. */
  text(): string;
  /** Resolves once what has arrived satisfies `satisfied`. */
  until(satisfied: (text: string) => boolean): Promise<void>;
  /** Stops reading; the exchange is recorded with what arrived (returned). */
  cut(): Promise<string>;
}

export class TestRecorder {
  private readonly exchanges: RecordedExchange[] = [];
  private readonly startMs: number;
  private controlMovedMs = 0;

  constructor(
    private readonly emu: Standin,
    private readonly upstream: Upstream = standinUpstream(emu),
  ) {
    this.startMs = emu.clock.status().nowMs;
  }

  /** Moves the upstream's clock (the recording's "real time"). */
  advance(ms: number): void {
    this.emu.clock.advance(ms);
  }

  /** One request, answered before the next is sent. */
  async send(service: RecordedService, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Sent> {
    const open = this.start(service, method, path, options);
    return open.answered();
  }

  /** A request left open (a blocking query): `answered()` waits for its answer, recorded at the clock's instant then. */
  start(service: RecordedService, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): { answered(): Promise<Sent> } {
    const seq = this.exchanges.length + 1;
    const text = options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    const headers = { ...(text !== undefined && { "content-type": "application/json" }), ...options.headers };
    const sentMs = this.offset();
    const sentClockMs = this.emu.clock.status().nowMs;
    const answer = this.upstream(service, path, { method, headers, body: text });
    const slot = this.exchanges.length;
    this.exchanges.push(undefined as never);
    const redactedHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), isSecret(k) ? redactHeader(k, v) : v]));
    const request = { seq, service, method, path: redactQuery(path), headers: redactedHeaders, ...(text !== undefined && { body: keptBody(text) }), sentMs };
    this.exchanges[slot] = request;
    return {
      answered: async () => {
        const response = await answer;
        const bodyText = await response.text();
        if (path.startsWith("/_standin/")) this.controlMovedMs += this.emu.clock.status().nowMs - sentClockMs;
        const answeredMs = this.offset();
        const responseHeaders: Record<string, string> = {};
        response.headers.forEach((value, name) => {
          responseHeaders[name] = value;
        });
        this.exchanges[slot] = {
          ...request,
          answeredMs,
          endedMs: answeredMs,
          response: { status: response.status, headers: responseHeaders, body: keptBody(redactBody(bodyText)) },
        };
        let body: unknown;
        try {
          body = JSON.parse(bodyText);
        } catch {
          body = bodyText;
        }
        return { status: response.status, body, headers: responseHeaders };
      },
    };
  }

  /**
   * A streamed answer (the event stream, a followed log), read as it comes:
   * `until` waits for what has arrived to satisfy a test (never for time),
   * `cut` stops reading and records what arrived, as the recorder records a
   * stream its client closed.
   */
  async stream(service: RecordedService, path: string, options: { headers?: Record<string, string> } = {}): Promise<RecordedStream> {
    const seq = this.exchanges.length + 1;
    const slot = this.exchanges.length;
    this.exchanges.push(undefined as never);
    const headers = { ...options.headers };
    const redactedHeaders = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), isSecret(k) ? redactHeader(k, v) : v]));
    const request = { seq, service, method: "GET", path: redactQuery(path), headers: redactedHeaders, sentMs: this.offset() };
    this.exchanges[slot] = request;
    const controller = new AbortController();
    const response = await this.upstream(service, path, { method: "GET", headers, signal: controller.signal });
    const answeredMs = this.offset();
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value;
    });
    const chunks: Buffer[] = [];
    const waiters: Array<() => void> = [];
    const text = () => Buffer.concat(chunks).toString("utf8");
    const reader = response.body!.getReader();
    void (async () => {
      try {
        for (;;) {
          const read = await reader.read();
          if (read.done) break;
          chunks.push(Buffer.from(read.value));
          for (const wake of waiters.splice(0)) wake();
        }
      } catch {
        // Cut.
      }
    })();
    return {
      text,
      until: async (satisfied) => {
        while (!satisfied(text())) await new Promise<void>((resolve) => waiters.push(resolve));
      },
      cut: async () => {
        const body = text();
        const endedMs = this.offset();
        controller.abort();
        await reader.cancel().catch(() => undefined);
        this.exchanges[slot] = {
          ...request,
          answeredMs,
          endedMs,
          response: { status: response.status, headers: responseHeaders, body: keptBody(redactBody(body)), streamed: true },
        };
        return body;
      },
    };
  }

  recording(): Recording {
    return {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      recordedBy: "test",
      upstreams: { scheduler: "http://upstream:4646", registry: "http://upstream:8500", echo: "http://upstream:8080" },
      startedAt: new Date(this.startMs).toISOString(),
      exchanges: this.exchanges.filter((e) => e !== undefined),
      truncated: false,
    };
  }

  /**
   * The recording's "real time": the upstream's clock, less what requests to
   * its control API moved it (a clock advance moves a realtime upstream's
   * virtual time, not the wall time a recorder reads).
   */
  private offset(): number {
    return this.emu.clock.status().nowMs - this.startMs - this.controlMovedMs;
  }
}

export function reference(secret: string): string {
  return `standin-redacted:sha256:${createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16)}`;
}

function isSecret(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === "authorization" || lower.endsWith("-token");
}

function redactHeader(name: string, value: string): string {
  if (name.toLowerCase() !== "authorization") return reference(value);
  const space = value.indexOf(" ");
  return space < 0 ? reference(value) : `${value.slice(0, space)} ${reference(value.slice(space + 1))}`;
}

function redactQuery(path: string): string {
  return path.replace(/([?&](?:token|key)=)([^&]*)/g, (_, head: string, secret: string) => `${head}${encodeURIComponent(reference(decodeURIComponent(secret)))}`);
}

function redactBody(text: string): string {
  return text.replace(/"SecretID":\s*"([^"]*)"/g, (_, secret: string) => `"SecretID":${JSON.stringify(reference(secret))}`);
}
