/**
 * The event stream's endpoint (`GET /v1/event/stream`,
 * command/agent/event_endpoint.go): the topics and index it is asked for, a
 * streaming NDJSON answer fed by the broker (events.ts), and its heartbeats
 * on the virtual clock.
 */
import type { Context } from "hono";
import type { ServiceContext } from "../../core/context.js";
import { goQuote } from "../../core/go/strconv.js";
import { textResponse } from "../../http/respond.js";
import { requestUrl } from "../../http/routing.js";
import { NomadError, parseQueryOptions } from "../http/nomad-http.js";
import { EVENT_DROPPED, HEARTBEAT_MS, HEARTBEAT_SLACK_BYTES, STREAM_SLACK_BYTES, type EventBroker, type Subscription } from "./events.js";
import type { SubscribeRequest } from "./stream-event.js";

/** A heartbeat's bytes, encoded once: every stream queues the same (read-only) chunk. */
const HEARTBEAT_LINE = new TextEncoder().encode("{}\n");

/** parseEventTopics: `Topic:Key` (a bare topic means every key); no topic at all = `*:*`. */
export function parseTopics(query: URLSearchParams): Map<string, string[]> {
  const raw = query.getAll("topic");
  if (!query.has("topic")) return new Map([["*", ["*"]]]);
  const topics = new Map<string, string[]>();
  for (const topic of raw) {
    const parts = topic.split(":");
    let key: string;
    let name: string;
    if (parts.length === 1) [name, key] = [topic, "*"];
    else if (parts.length !== 2) throw new NomadError(400, `Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: ${topic}`);
    else [name, key] = [parts[0]!, parts[1]!];
    topics.set(name, [...(topics.get(name) ?? []), key]);
  }
  return topics;
}

/** strconv.Atoi on `index` (empty = 0). A negative index becomes a huge uint64 in Nomad: past every batch. */
export function parseStreamIndex(value: string | null): number {
  const text = value === null || value === "" ? "0" : value;
  if (!/^[+-]?\d+$/.test(text)) throw new NomadError(400, `Unable to parse index: strconv.Atoi: parsing ${goQuote(text)}: invalid syntax`);
  const n = BigInt(text);
  if (n > 9223372036854775807n || n < -9223372036854775808n) throw new NomadError(400, `Unable to parse index: strconv.Atoi: parsing ${goQuote(text)}: value out of range`);
  if (n < 0n) return Number.MAX_SAFE_INTEGER;
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

/**
 * The endpoint: a streaming 200 (`application/json`, `no-cache`) that sends
 * `{}` at once and every HEARTBEAT_MS of virtual time, and each batch that
 * passes the request's filter, one JSON document per line, until the client
 * goes away.
 */
export function eventStreamHandler(
  broker: EventBroker,
  ctx: ServiceContext,
  region: () => string,
  /** ACL check at subscription time (throws a 403 NomadError). */
  authorize: (request: Request, topics: ReadonlyMap<string, readonly string[]>, namespace: string) => void = () => {},
) {
  return (c: Context): Response => {
    try {
      if (c.req.method !== "GET") throw new NomadError(405, "Invalid method");
      const url = requestUrl(c.req.url);
      const index = parseStreamIndex(url.searchParams.get("index"));
      const topics = parseTopics(url.searchParams);
      // Region and namespace as parse() reads them (its blocking parameters play no part here).
      const rest = new URLSearchParams(url.searchParams);
      rest.delete("index");
      rest.delete("wait");
      const options = parseQueryOptions(rest, region());
      const request = c.req.raw;
      authorize(request, topics, options.namespace);
      const stillAllowed = () => {
        try {
          authorize(request, topics, options.namespace);
          return true;
        } catch {
          return false;
        }
      };
      return openStream(broker, ctx, { topics, namespace: options.namespace, index, stillAllowed }, request.signal);
    } catch (error) {
      if (error instanceof NomadError) return textResponse(error.status, error.message);
      throw error;
    }
  };
}

function openStream(broker: EventBroker, ctx: ServiceContext, request: SubscribeRequest, signal: AbortSignal): Response {
  let subscription: Subscription | undefined;
  let cancelHeartbeat: () => void = () => {};
  const stop = () => {
    subscription?.unsubscribe();
    cancelHeartbeat();
    signal.removeEventListener("abort", onAbort);
  };
  const drop = () => {
    stop();
    stream.drop(EVENT_DROPPED);
  };
  // Past its share of the budget the subscriber is dropped as Nomad drops one its buffer has left behind.
  const stream = broker.streams.open(drop);
  const onAbort = () => {
    stop();
    stream.end();
  };
  stream.onCancel(stop);
  if (signal.aborted) {
    stream.end();
  } else {
    signal.addEventListener("abort", onAbort, { once: true });
    // Nomad's heartbeat ticker blocks behind a client that does not read: its beats do not pile up. Here they
    // stop once HEARTBEAT_SLACK_BYTES wait unread and resume, on the same 10 s grid, when the client has read
    // everything — so a stuck stream costs no timer while the clock moves days.
    const first = ctx.clock.now() + HEARTBEAT_MS;
    let stalled = false;
    const beat = (at: number) => {
      cancelHeartbeat = ctx.clock.scheduleEphemeral(at, () => {
        stream.write(HEARTBEAT_LINE);
        if (stream.unreadBytes > HEARTBEAT_SLACK_BYTES) stalled = true;
        else beat(at + HEARTBEAT_MS);
      });
    };
    stream.onDrain(() => {
      subscription?.pump();
      if (!stalled || !stream.open) return;
      stalled = false;
      const now = ctx.clock.now();
      beat(first + (Math.floor((now - first) / HEARTBEAT_MS) + 1) * HEARTBEAT_MS);
    });
    stream.write(HEARTBEAT_LINE); // the first heartbeat tells the client the stream is open
    subscription = broker.subscribe(request, {
      hasRoom: () => stream.unreadBytes < STREAM_SLACK_BYTES,
      write: (line) => stream.write(line),
      close: (lastWords) => {
        stop();
        if (lastWords !== undefined) stream.write(lastWords);
        stream.end();
      },
      drop,
    });
    beat(first);
  }
  return new Response(stream.body, {
    status: 200,
    // Transfer-Encoding keeps the port's gzip middleware from buffering frames behind a compressor.
    headers: { "Content-Type": "application/json", "Cache-Control": "no-cache", "Transfer-Encoding": "chunked" },
  });
}
