/**
 * The recording format: what `standin record` writes while a user's suite
 * runs against the real products through it, and what `standin parity`
 * replays against a fresh standin to compare, exchange by exchange.
 *
 * One JSON document (`*.recording.json`). It is written for two readers: the
 * parity replay, which needs every request as it was sent and every answer as
 * the client read it, and a person filing a bug, who must be able to read it
 * and share it. So bodies are kept decoded (a gzip answer is kept as its
 * text, its `Content-Encoding` header kept beside it), and secrets never
 * reach it: every credential (`Authorization`, `X-Nomad-Token`,
 * `X-Consul-Token`, `?token=`, an answer's `"SecretID"`, an echo API key or
 * JWT) is written as `standin-redacted:sha256:<16 hex>` of the secret, the
 * same secret always the same reference, so the replay can map a reference
 * to the secret standin hands out at the same exchange (an ACL bootstrap's
 * SecretID), as it maps IDs.
 */
import type { TapeBody, TapeTruncation } from "../control/tape.js";

export const RECORDING_FORMAT = "standin-recording";
export const RECORDING_VERSION = 1;

/** The three upstreams a recording proxies, as standin names its services. */
export type RecordedService = "scheduler" | "registry" | "echo";

export interface Recording {
  /** Always `"standin-recording"`: tells a recording from a tape. */
  readonly format: typeof RECORDING_FORMAT;
  readonly version: typeof RECORDING_VERSION;
  /** The standin version that recorded it (package.json). */
  readonly recordedBy: string;
  /** Each upstream's base URL as given (`--scheduler-upstream` …), user info removed. */
  readonly upstreams: Partial<Record<RecordedService, string>>;
  /**
   * The upstream products' versions when the recorder could read them
   * (`/v1/agent/self` → `config.Version.Version` for Nomad,
   * `Config.Version` for Consul), so a report names what it compared against.
   */
  readonly products?: Partial<Record<RecordedService, string>>;
  /** Wall time the recorder started listening, RFC 3339 with milliseconds. */
  readonly startedAt: string;
  readonly exchanges: readonly RecordedExchange[];
  /** True when the byte or entry budget stopped the recording (as the tape's). */
  readonly truncated: boolean;
  readonly truncation?: TapeTruncation;
}

export interface RecordedExchange {
  /** 1, 2, … in the order requests arrived at the recorder. */
  readonly seq: number;
  readonly service: RecordedService;
  readonly method: string;
  /** Path and query as the client sent them (secrets in the query redacted). */
  readonly path: string;
  /** The request headers that describe the request (lower-case names; no hop-by-hop or connection headers), redacted. */
  readonly headers: Record<string, string>;
  readonly body?: TapeBody;
  /** The request's trailers (a chunked body's fields after its last chunk), written as `headers` are; absent when it had none. */
  readonly trailers?: Record<string, string>;
  /** Wall milliseconds since `startedAt` at which the request arrived. */
  readonly sentMs: number;
  /** … at which the upstream's status and headers arrived (absent when it never answered). */
  readonly answeredMs?: number;
  /** … at which the answer's body ended (for a stream cut by the client, when it was cut). */
  readonly endedMs?: number;
  readonly response?: RecordedResponse;
  /**
   * After a `101 Switching Protocols` (a WebSocket): the bytes of the switched
   * protocol each way, as they passed (nothing redacted in them). Absent for
   * an exchange that did not switch.
   */
  readonly upgraded?: { readonly toUpstream: UpgradedBytes; readonly toClient: UpgradedBytes };
  /** Why there is no response: the upstream refused the connection, reset it, or the client went away first. */
  readonly error?: string;
}

/** One direction of a switched protocol's bytes. */
export interface UpgradedBytes {
  /** How many bytes passed this way in all. */
  readonly bytes: number;
  /** The first of them as a body is kept (`text` when they are UTF-8, else `base64`, and their count), up to 1 MiB. */
  readonly kept?: TapeBody;
  /** `kept` holds fewer than `bytes`: past the 1 MiB a direction keeps (`"limit"`), or the recording's budget had no room left (`"budget"`: nothing kept). */
  readonly truncated?: "limit" | "budget";
}

export interface RecordedResponse {
  readonly status: number;
  /** Every answer header but hop-by-hop ones (lower-case names), index headers (`x-nomad-index`, `x-consul-index`) included. */
  readonly headers: Record<string, string>;
  /** The body as the client read it after any `Content-Encoding` was removed; secrets redacted. */
  readonly body?: TapeBody;
  /** The answer's trailers, written as `headers` are; absent when it had none. */
  readonly trailers?: Record<string, string>;
  /** True for answers that stream until the client stops reading (event stream, followed logs): the body is what arrived before `endedMs`. */
  readonly streamed?: boolean;
}
