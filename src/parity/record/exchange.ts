/**
 * One exchange as it is being recorded: made when the request arrives,
 * told about its answer's head and bodies as they pass, finished once when
 * the answer ends, is cut by the client or the upstream, or never comes.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { TapeBody } from "../../control/tape.js";
import type { Redactor } from "../../http/redact.js";
import type { RecordedExchange, RecordedResponse, RecordedService } from "../recording.js";
import { BodyCapture } from "./body-capture.js";
import { isHopByHop } from "./hop-by-hop.js";
import { SwitchedBytes } from "./switched-bytes.js";

/** Request headers that say how the request was sent, not what it asks (the tape's, and the encodings the recorder decodes anyway). */
const SKIPPED_REQUEST_HEADERS = new Set(["host", "content-length", "user-agent", "accept-encoding", "expect"]);

/** Routes whose answer goes on until the client stops reading. */
const STREAMING_ROUTES = [/^\/v1\/event\/stream(?:\?|$)/, /^\/v1\/agent\/monitor(?:\?|$)/, /^\/v1\/client\/fs\/stream\//, /^\/v1\/client\/fs\/logs\/[^?]*\?(?:.*&)?follow=true/];

export function isStreamingRoute(pathAndQuery: string): boolean {
  return STREAMING_ROUTES.some((route) => route.test(pathAndQuery));
}

/** What an exchange needs from its recorder. */
export interface ExchangeContext {
  readonly redact: Redactor;
  /** Wall milliseconds since the recording started. */
  elapsedMs(): number;
  /** Room in the budget for `bytes` of a body (false: kept as its hash, and the recording stops). */
  take(bytes: number): boolean;
}

/** How an exchange ended, besides a whole answer. */
export interface ExchangeEnd {
  /** The client went away before the answer ended. */
  readonly cut?: boolean;
  /** What went wrong with the upstream (no answer, or an answer cut short). */
  readonly error?: string;
}

export class ExchangeRecord {
  readonly requestBody = new BodyCapture();
  private responseBody: BodyCapture | undefined;
  private response: { status: number; headers: Record<string, string>; hasLength: boolean } | undefined;
  private answeredMs: number | undefined;
  private sentTrailers: Record<string, string> | undefined;
  private answerTrailers: Record<string, string> | undefined;
  private switched: { toUpstream: SwitchedBytes; toClient: SwitchedBytes } | undefined;
  private finishing: Promise<RecordedExchange> | undefined;

  constructor(
    private readonly context: ExchangeContext,
    private readonly head: Omit<RecordedExchange, "body" | "answeredMs" | "endedMs" | "response" | "error">,
  ) {}

  /** The request as the recording writes it: headers that matter, lower case, redacted; the path's secrets redacted. */
  static describe(
    context: ExchangeContext,
    seq: number,
    service: RecordedService,
    method: string,
    pathAndQuery: string,
    headers: IncomingHttpHeaders,
  ): Omit<RecordedExchange, "body" | "answeredMs" | "endedMs" | "response" | "error"> {
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || SKIPPED_REQUEST_HEADERS.has(name) || isHopByHop(name, headers.connection)) continue;
      kept[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    return { seq, service, method, path: context.redact.path(pathAndQuery), headers: context.redact.headers(kept), sentMs: context.elapsedMs() };
  }

  /** The bytes the request's description costs the budget. */
  static cost(head: Pick<RecordedExchange, "path" | "headers">): number {
    let bytes = head.path.length;
    for (const name in head.headers) bytes += name.length + head.headers[name]!.length + 16;
    return bytes;
  }

  /** The upstream's status and headers arrived. */
  answered(status: number, headers: IncomingHttpHeaders): void {
    this.answeredMs = this.context.elapsedMs();
    const kept: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || isHopByHop(name, headers.connection)) continue;
      kept[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    this.response = { status, headers: this.context.redact.headers(kept), hasLength: headers["content-length"] !== undefined };
    const encoding = headers["content-encoding"];
    this.responseBody = new BodyCapture(Array.isArray(encoding) ? encoding[0] : encoding);
  }

  responseChunk(chunk: Buffer): void {
    this.responseBody?.add(chunk);
  }

  /** The upstream switched protocols: from now on the bytes each way are the exchange's (`switchedChunk`). */
  switchedProtocols(): void {
    this.switched ??= { toUpstream: new SwitchedBytes(), toClient: new SwitchedBytes() };
  }

  /** Bytes of the switched protocol passed one way. */
  switchedChunk(direction: "toUpstream" | "toClient", chunk: Buffer): void {
    this.switched?.[direction].add(chunk);
  }

  /** The request's trailers (`[name, value, …]` as node reads them) arrived after its last chunk. */
  requestTrailers(rawTrailers: readonly string[]): void {
    this.sentTrailers = this.trailers(rawTrailers);
  }

  /** The answer's trailers arrived after its last chunk. */
  responseTrailers(rawTrailers: readonly string[]): void {
    this.answerTrailers = this.trailers(rawTrailers);
  }

  /** Trailers are written as headers are: lower-case names, a repeated one joined with ", ", secrets redacted. */
  private trailers(rawTrailers: readonly string[]): Record<string, string> {
    const kept: Record<string, string> = {};
    for (let i = 0; i < rawTrailers.length; i += 2) {
      const name = rawTrailers[i]!.toLowerCase();
      kept[name] = kept[name] === undefined ? rawTrailers[i + 1]! : `${kept[name]}, ${rawTrailers[i + 1]!}`;
    }
    return this.context.redact.headers(kept);
  }

  /** Ends the exchange (the first call counts): the recorded form once its bodies are read. */
  finish(end: ExchangeEnd = {}): Promise<RecordedExchange> {
    this.finishing ??= this.finished(end, this.context.elapsedMs());
    return this.finishing;
  }

  get done(): Promise<RecordedExchange> | undefined {
    return this.finishing;
  }

  private async finished(end: ExchangeEnd, endedMs: number): Promise<RecordedExchange> {
    const take = (bytes: number) => this.context.take(bytes);
    const body: TapeBody | undefined = await this.requestBody.finish(this.context.redact, take);
    let response: RecordedResponse | undefined;
    if (this.response) {
      const responseBody = await this.responseBody!.finish(this.context.redact, take);
      const streamed = isStreamingRoute(this.head.path) || (end.cut === true && !this.response.hasLength);
      response = {
        status: this.response.status,
        headers: this.response.headers,
        ...(responseBody && { body: responseBody }),
        ...(this.answerTrailers && { trailers: this.answerTrailers }),
        ...(streamed && { streamed: true }),
      };
    }
    const upgraded = this.switched && { toUpstream: this.switched.toUpstream.recorded(take), toClient: this.switched.toClient.recorded(take) };
    const error = end.error ?? (end.cut && !this.response ? "the client went away before the upstream answered" : undefined);
    return {
      ...this.head,
      ...(body && { body }),
      ...(this.sentTrailers && { trailers: this.sentTrailers }),
      ...(this.answeredMs !== undefined && { answeredMs: this.answeredMs }),
      endedMs,
      ...(response && { response }),
      ...(upgraded && { upgraded }),
      ...(error !== undefined && { error }),
    };
  }
}
