/**
 * The invariants every fuzzed request is held to, checked one request at a
 * time against an in-process emulator:
 * - `app.request` never throws and answers within 2 s (bodies included);
 * - nothing reaches the port's catch-all error handler (`onError`), and no
 *   answer is its `internal error: …` 500;
 * - the status is a valid code, and a 5xx is one the real product documents
 *   for that request (each suite lists them, with the reference section);
 * - a body whose Content-Type says JSON parses (after gzip/deflate);
 * - a rejected write (4xx/5xx to anything but GET/HEAD) leaves
 *   `emu.stateHash()` unchanged.
 */
import { gunzipSync, inflateSync } from "node:zlib";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import type { HeaderEntries } from "./arbitraries.js";

export type Service = "scheduler" | "registry" | "echo";

export interface FuzzRequest {
  method: string;
  /** Path and query, as they go on the wire. */
  path: string;
  headers?: HeaderEntries;
  body?: string | Uint8Array;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export interface Oracle {
  /** Whether a 5xx answer is one the real product documents (the suite lists them). */
  documented5xx(status: number, text: string, request: FuzzRequest): boolean;
  /** A rejection that the product documents as moving the state anyway (e.g. the control API's await 408). */
  rejectionMayWrite?(status: number, request: FuzzRequest): boolean;
  /** A 200 that streams until the client leaves (Nomad's event stream): not read to its end. */
  streams?(request: FuzzRequest, status: number): boolean;
}

export const REQUEST_TIMEOUT_MS = 2_000;

export class FuzzFailure extends Error {}

export class Harness {
  /** What reached the emulator's catch-all error handler since the last reset. */
  readonly errors: unknown[] = [];
  private constructor(readonly emu: Standin) {}

  static async create(options: CreateStandinOptions = {}): Promise<Harness> {
    let harness: Harness | undefined;
    const emu = await createStandin({ ...options, onError: (error) => harness?.errors.push(error) });
    harness = new Harness(emu);
    return harness;
  }

  async reset(): Promise<void> {
    await this.emu.reset();
    this.errors.length = 0;
  }

  /** Sends one request and checks every invariant; throws a FuzzFailure describing the request when one breaks. */
  async send(service: Service, request: FuzzRequest, oracle: Oracle): Promise<Answer> {
    const method = request.method.toUpperCase();
    const reads = method === "GET" || method === "HEAD";
    const before = reads ? undefined : this.hash("before the request");
    const controller = new AbortController();
    const init: RequestInit = { method: request.method, headers: request.headers ?? [], signal: controller.signal };
    if (!reads && request.body !== undefined) init.body = request.body as BodyInit;
    const fail = (what: string, answer?: { status: number; text?: string }): never => {
      controller.abort();
      throw new FuzzFailure(`${what}\n  request: ${describeRequest(request)}${answer ? `\n  answer: ${answer.status} ${clip(answer.text ?? "", 400)}` : ""}`);
    };

    let response: Response;
    try {
      response = await withTimeout(Promise.resolve(this.emu[service].request(request.path, init)), REQUEST_TIMEOUT_MS, "no answer");
    } catch (error) {
      return fail(`app.request failed: ${(error as Error)?.stack ?? String(error)}`);
    }
    const status = response.status;
    if (!Number.isInteger(status) || status < 100 || status > 599) fail(`invalid status ${status}`);

    let text = "";
    if (oracle.streams?.(request, status) && status === 200) {
      await response.body?.cancel().catch(() => undefined);
    } else {
      let bytes: Buffer;
      try {
        bytes = Buffer.from(await withTimeout(response.arrayBuffer(), REQUEST_TIMEOUT_MS, "body never ended"));
      } catch (error) {
        return fail(`reading the body failed: ${(error as Error)?.message ?? String(error)}`, { status });
      }
      const encoding = (response.headers.get("Content-Encoding") ?? "").toLowerCase();
      try {
        if (encoding === "gzip") bytes = gunzipSync(bytes);
        else if (encoding === "deflate") bytes = inflateSync(bytes);
      } catch (error) {
        fail(`body does not decode as ${encoding}: ${(error as Error).message}`, { status });
      }
      text = bytes.toString("utf8");
    }
    controller.abort();
    const answer = { status, text };

    if (this.errors.length > 0) {
      const error = this.errors[0];
      fail(`the port's error handler caught: ${(error as Error)?.stack ?? String(error)}`, answer);
    }
    if (status >= 500 && method === "HEAD") {
      // A HEAD answer has no body to judge: Hono answers HEAD with the GET route, so judge the GET's text.
      const get = await this.send(service, { ...request, method: "GET" }, oracle);
      if (get.status !== status) fail(`HEAD answered ${status} but GET ${get.status}`, answer);
      text = get.text;
      answer.text = text;
    }
    if (status >= 500) {
      if (text.startsWith("internal error:") || /"error"\s*:\s*"internal error:/.test(text)) fail("an unexpected exception became a 500", answer);
      if (!oracle.documented5xx(status, text, request)) fail(`undocumented ${status}`, answer);
    }
    const type = response.headers.get("Content-Type") ?? "";
    if (/^application\/(?:[\w.+-]+\+)?json\b/i.test(type) && method !== "HEAD" && status !== 304 && status !== 204 && !(oracle.streams?.(request, status) && status === 200)) {
      try {
        JSON.parse(text);
      } catch (error) {
        fail(`Content-Type ${type} but the body is not JSON: ${(error as Error).message}`, answer);
      }
    }
    if (!reads && status >= 400 && !oracle.rejectionMayWrite?.(status, request)) {
      const after = this.hash(`after the answer ${status}`);
      if (after !== before) fail("a rejected write changed the state", answer);
    }
    return { status, headers: response.headers, text };
  }

  private hash(when: string): string {
    try {
      return this.emu.stateHash();
    } catch (error) {
      throw new FuzzFailure(`stateHash() threw ${when}: ${(error as Error)?.stack ?? String(error)}`);
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FuzzFailure(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function clip(text: string, max: number): string {
  const oneLine = JSON.stringify(text);
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max)}… (${text.length} chars)`;
}

export function describeRequest(request: FuzzRequest): string {
  const headers = (request.headers ?? []).map(([k, v]) => `${k}: ${clip(v, 80)}`).join(", ");
  const body = request.body === undefined ? "" : typeof request.body === "string" ? ` body ${clip(request.body, 300)}` : ` body <${request.body.byteLength} bytes>`;
  return `${request.method} ${clip(request.path, 300)}${headers ? ` [${headers}]` : ""}${body}`;
}

/** Matches a 5xx text against a list of documented patterns (strings match exactly, regexes anywhere they say). */
export function matchesAny(text: string, patterns: ReadonlyArray<string | RegExp>): boolean {
  return patterns.some((p) => (typeof p === "string" ? text === p : p.test(text)));
}
