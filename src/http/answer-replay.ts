/**
 * Answers replayed at the port. A GET read that its service marked as
 * replayable (http/known-bodies: it depends only on the request's key, the
 * stored state and the clock) is remembered as sent, headers and bytes, and
 * the same request while nothing has moved gets those bytes again without
 * passing through routing, middleware or the service: a CI loop polling a list
 * costs a lookup. The port still does its bookkeeping for a replayed answer
 * (coverage, the request journal, the tape), so what the control API reports
 * is the same either way.
 *
 * Never replayed: anything but GET, blocking queries (`index=`), answers
 * that are not 200, streams, and bodies not in hand.
 */
import { AnswerCache, answerKey } from "./answer-cache.js";
import { isReplayable, isReplayed, knownResponseBody, knownResponseHeaders, markReplayed, noteResponseHeaders, requestHeader } from "./known-bodies.js";
import { bufferedResponse } from "./respond.js";

interface Remembered {
  readonly status: number;
  /** As the first answer carried them (lower-case names, in the order it sent them; Date aside, which the server adds). */
  readonly headers: Readonly<Record<string, string>>;
}

const BLOCKING = /(?:^|&)index(?:=|&|$)/;
/** A request's replay key once worked out (null: it has none). */
const REPLAY_KEY = Symbol("standin.replay-key");

export class AnswerReplay {
  private readonly answers: AnswerCache<Remembered>;

  constructor(
    stamp: { readonly store: { readonly version: number }; readonly clock: { now(): number } },
    /** The service's key for a GET read (see the routers' `readKey`); undefined when it has none. */
    private readonly readKey: (request: Request) => string | undefined,
  ) {
    this.answers = new AnswerCache({ version: () => stamp.store.version, now: () => stamp.clock.now() });
  }

  /** The remembered answer to `request`, as a new Response; undefined when there is none. */
  replay(request: Request): Response | undefined {
    const key = this.keyOf(request);
    if (key === undefined) return undefined;
    const hit = this.answers.get(key);
    if (!hit) return undefined;
    // A record, not a Headers object: the server writes a record as it is. Nothing downstream changes a replayed answer.
    return markReplayed(noteResponseHeaders(bufferedResponse(hit.body, { status: hit.meta.status, headers: { ...hit.meta.headers } }), hit.meta.headers));
  }

  /** Whether `response` is a replayed answer (final: not to compress or remember again). */
  isReplay(response: Response): boolean {
    return isReplayed(response);
  }

  /** Told of every answer sent (`original` as the service answered, `sent` after the port's gzip). */
  remember(request: Request, original: Response, sent: Response): void {
    if (sent.status !== 200 || !isReplayable(original)) return;
    const body = knownResponseBody(sent);
    if (body === undefined || body === null) return;
    const key = this.keyOf(request);
    // Already remembered at this very state (parked queries woken together all answer alike).
    if (key === undefined || this.answers.get(key)) return;
    let headers = knownResponseHeaders(sent) as Record<string, string> | undefined;
    if (!headers) {
      const read: Record<string, string> = {};
      sent.headers.forEach((value, name) => {
        read[name] = value;
      });
      headers = read;
    }
    this.answers.set(key, { body: typeof body === "string" ? Buffer.from(body, "utf8") : body, meta: { status: sent.status, headers } });
  }

  /**
   * The request's replay key, worked out once per request: `replay` asks
   * before routing and `remember` after answering, and reading an
   * in-process Request's `url` serialises it again each time.
   */
  private keyOf(request: Request): string | undefined {
    const held = request as Request & { [REPLAY_KEY]?: string | null };
    const known = held[REPLAY_KEY];
    if (known !== undefined) return known ?? undefined;
    const key = this.keyOfRequest(request);
    held[REPLAY_KEY] = key ?? null;
    return key;
  }

  private keyOfRequest(request: Request): string | undefined {
    if (request.method !== "GET") return undefined;
    const url = request.url;
    const query = url.indexOf("?");
    if (query >= 0 && BLOCKING.test(url.slice(query + 1))) return undefined;
    const key = this.readKey(request);
    // gzip depends on Accept-Encoding; nothing else of the request touches the answer after the service.
    return key === undefined ? undefined : answerKey(key, requestHeader(request, "accept-encoding") ?? null);
  }
}
