/**
 * Replays a recording (a suite's run against the real products) against a
 * fresh standin in process and compares every answer. The virtual clock
 * follows the recorded real time: before each request it is moved to the
 * instant the request was sent, so TTLs, blocking waits and deployments
 * progress between requests as they did upstream. A request the upstream
 * answered only after the next one was sent (a blocking query, a stream) is
 * started and left open, as `standin replay` does with a tape, and compared
 * once the replay reaches the instant the upstream answered it.
 */
import { keptBody } from "../../control/tape.js";
import type { Standin } from "../../standin/standin.js";
import { createStandinWithControl } from "../../standin/with-control.js";
import type { RecordedExchange, Recording } from "../recording.js";
import { type Answer, diffExchange, type ExchangeDifference } from "./exchange-diff.js";
import { routeOf, type RouteOfExchange } from "./routes.js";
import { WorldMap } from "./world-map.js";

/** Turns of the event loop an in-process answer is given before the replay calls it still waiting (no wall time involved). */
const ANSWER_TURNS = 50;
/** Request headers that describe the transport, not the request (the body is sent again with its IDs mapped, so its length changes). */
const TRANSPORT_HEADERS = new Set(["host", "content-length", "accept-encoding", "connection", "transfer-encoding"]);

export interface ComparedExchange {
  readonly seq: number;
  readonly service: RecordedExchange["service"];
  readonly method: string;
  readonly path: string;
  readonly route: RouteOfExchange;
  /** The recorded request's instant, ms since the recording's start. */
  readonly sentMs: number;
  readonly recorded?: Answer;
  readonly standin?: Answer;
  readonly differences: readonly ExchangeDifference[];
  /** Why it was not compared: the upstream never answered, or its body was kept as a hash only. */
  readonly skipped?: string;
}

export interface ParityOptions {
  /** The starting world: fixture documents, files or shipped names (default: the shipped `default`, a dev agent's world). */
  readonly fixture?: readonly unknown[];
}

interface Pending {
  readonly exchange: RecordedExchange;
  readonly answer: Promise<Response>;
  readonly controller: AbortController;
}

export async function replayRecording(recording: Recording, options: ParityOptions = {}): Promise<ComparedExchange[]> {
  // A scratch emulator with the control API and no dashboard, as a tape's replay makes one (the parity report is read by the dashboard, which stands above).
  const emu = await createStandinWithControl({
    fixture: (options.fixture ?? ["default"]) as never,
    // The recording's times drive the clock, nothing else.
    clock: { mode: "manual" },
    tape: false,
    idleSkipping: false,
  });
  try {
    return await new RecordingReplayer(recording, emu).run();
  } finally {
    emu.close();
  }
}

class RecordingReplayer {
  private readonly startMs: number;
  private readonly world: WorldMap;
  private readonly open: Pending[] = [];
  private readonly results = new Map<number, ComparedExchange>();

  constructor(
    private readonly recording: Recording,
    private readonly emu: Standin,
  ) {
    this.startMs = emu.clock.status().nowMs;
    this.world = new WorldMap(Date.parse(recording.startedAt), this.startMs);
    this.world.learnStartingSecrets(stringsIn(emu.snapshot()));
  }

  async run(): Promise<ComparedExchange[]> {
    const exchanges = [...this.recording.exchanges].sort((a, b) => a.sentMs - b.sentMs || a.seq - b.seq);
    for (const exchange of exchanges) {
      await this.compareAnsweredBy(exchange.sentMs);
      this.moveClockTo(exchange.sentMs);
      const skipped = unsendable(exchange);
      if (skipped) this.results.set(exchange.seq, this.result(exchange, [], undefined, skipped));
      else this.open.push(this.send(exchange));
    }
    await this.compareAnsweredBy(Number.POSITIVE_INFINITY);
    return [...this.results.values()].sort((a, b) => a.seq - b.seq);
  }

  /**
   * Before the request sent at `nextSentMs`: compares every open request the
   * upstream had answered by then, in the order it answered them. One still
   * waiting in standin gets the clock moved to the instant the upstream
   * answered (a blocking query's wait ran out); one the upstream answered in
   * the very millisecond the next request was sent may be answered by that
   * request (a write waking a blocking query), so it waits for it.
   */
  private async compareAnsweredBy(nextSentMs: number): Promise<void> {
    const due = this.open
      .filter(({ exchange }) => exchange.response !== undefined && exchange.answeredMs !== undefined && exchange.answeredMs <= nextSentMs)
      .sort((a, b) => a.exchange.answeredMs! - b.exchange.answeredMs! || a.exchange.seq - b.exchange.seq);
    for (const pending of due) {
      const answeredMs = pending.exchange.answeredMs!;
      let response = await within(pending.answer);
      if (!response && answeredMs === nextSentMs) continue;
      if (!response) {
        this.moveClockTo(answeredMs);
        response = await within(pending.answer);
      }
      this.open.splice(this.open.indexOf(pending), 1);
      await this.compare(pending, response);
    }
    if (nextSentMs === Number.POSITIVE_INFINITY) {
      // Never answered upstream (the client went away first): standin's answer is not compared either.
      for (const { exchange, controller } of this.open.splice(0)) {
        controller.abort();
        this.results.set(exchange.seq, this.result(exchange, [], undefined, exchange.error ?? "the upstream never answered"));
      }
    }
  }

  private send(exchange: RecordedExchange): Pending {
    const controller = new AbortController();
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(exchange.headers)) if (!TRANSPORT_HEADERS.has(name)) headers[name] = this.world.localText(value);
    let body: string | Uint8Array | undefined;
    if (exchange.body?.text !== undefined) body = this.world.localBody(exchange.body.text, exchange.service);
    else if (exchange.body?.base64 !== undefined) body = Buffer.from(exchange.body.base64, "base64");
    const path = this.world.localPath(exchange.path, exchange.service);
    const hasBody = body !== undefined && exchange.method !== "GET" && exchange.method !== "HEAD";
    // Inside a promise: a request standin's router throws on (a header value fetch refuses) is an unanswered exchange, not a crash.
    const answer = Promise.resolve().then(() =>
      this.emu.app(exchange.service).request(path, { method: exchange.method, headers, body: hasBody ? (body as BodyInit) : undefined, signal: controller.signal }),
    );
    // An answer nobody awaits yet (an open request) must not be an unhandled rejection when it is aborted.
    answer.catch(() => undefined);
    return { exchange, answer, controller };
  }

  private async compare({ exchange, controller }: Pending, response: Response | undefined): Promise<void> {
    const recorded = exchange.response!;
    if (!response) {
      controller.abort();
      const unanswered: ExchangeDifference = { kind: "unanswered", at: "status", recorded: recorded.status, note: "standin had not answered by the time the upstream had" };
      this.results.set(exchange.seq, this.result(exchange, [unanswered], undefined));
      return;
    }
    const { compared, reported } = await this.localAnswer(response, recorded.streamed === true);
    controller.abort();
    const route = routeOf(exchange.service, exchange.method, exchange.path);
    const differences = routeDifference(route, recorded, compared) ?? diffExchange(this.world, exchange.service, recorded, compared);
    this.results.set(exchange.seq, this.result(exchange, differences, reported));
  }

  /**
   * standin's answer as compared (its secrets as they are: the world map
   * pairs them with the recording's references) and as the report keeps it;
   * a stream is read only as far as it has come.
   */
  private async localAnswer(response: Response, streamedUpstream: boolean): Promise<{ compared: Answer; reported: Answer }> {
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const { bytes, complete } = streamedUpstream ? { bytes: new Uint8Array(), complete: false } : await readAvailable(response);
    if (!complete) await response.body?.cancel().catch(() => undefined);
    const answer = { status: response.status, headers, ...(!complete && { streamed: true }) };
    // The report is shared: standin's own secrets are written as references, as the recording writes the upstream's.
    return { compared: { ...answer, body: keptBody(bytes) }, reported: { ...answer, body: keptBody(this.emu.redactedBody(bytes)) } };
  }

  private moveClockTo(offsetMs: number): void {
    const target = this.startMs + Math.ceil(offsetMs);
    if (target > this.emu.clock.status().nowMs) this.emu.clock.advanceTo(target);
  }

  private result(exchange: RecordedExchange, differences: ExchangeDifference[], standin: Answer | undefined, skipped?: string): ComparedExchange {
    return {
      seq: exchange.seq,
      service: exchange.service,
      method: exchange.method,
      path: exchange.path,
      route: routeOf(exchange.service, exchange.method, exchange.path),
      sentMs: exchange.sentMs,
      ...(exchange.response && { recorded: exchange.response }),
      ...(standin && { standin }),
      differences,
      ...(skipped !== undefined && { skipped }),
    };
  }
}

/** A route standin does not serve: one difference for the exchange, its answer not compared further. */
function routeDifference(route: RouteOfExchange, recorded: Answer, local: Answer): ExchangeDifference[] | undefined {
  if (route.kind === "unemulated" && local.status === 501 && recorded.status !== 501)
    return [{ kind: "not-emulated", at: "route", recorded: recorded.status, standin: 501, note: `standin does not emulate ${route.label}` }];
  if (route.kind === "unknown" && local.status === 404 && recorded.status !== 404)
    return [{ kind: "unknown-path", at: "route", recorded: recorded.status, standin: 404, note: "a path in no route catalog of standin's" }];
  return undefined;
}

function unsendable(exchange: RecordedExchange): string | undefined {
  if (exchange.body?.sha256 !== undefined && exchange.body.text === undefined && exchange.body.base64 === undefined)
    return "its request body was kept as a hash only (over the recording's body limit)";
  return undefined;
}

async function within<T>(promise: Promise<T>): Promise<T | undefined> {
  let settled = false;
  const value = promise.then(
    (v) => {
      settled = true;
      return v;
    },
    () => {
      settled = true;
      return undefined;
    },
  );
  for (let turn = 0; turn < ANSWER_TURNS && !settled; turn++) await new Promise((resolve) => setImmediate(resolve));
  return settled ? value : undefined;
}

/** The body's bytes as far as they have come (complete: false for a stream still open). */
async function readAvailable(response: Response): Promise<{ bytes: Uint8Array; complete: boolean }> {
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(), complete: true };
  const chunks: Uint8Array[] = [];
  for (;;) {
    const read = await within(reader.read());
    if (!read) return { bytes: Buffer.concat(chunks), complete: false };
    if (read.done) return { bytes: Buffer.concat(chunks), complete: true };
    chunks.push(read.value);
  }
}

/** Every string of a document (the starting state: few rows), where any secret it holds is. */
function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsIn(item);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) yield* stringsIn(item);
}
