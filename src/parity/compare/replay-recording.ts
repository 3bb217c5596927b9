/**
 * Replays a recording (a suite's run against the real products) against a
 * fresh standin in process and compares every answer. The virtual clock
 * follows the recorded real time: before each request it is moved to the
 * instant the request was sent, so TTLs, blocking waits and deployments
 * progress between requests as they did upstream. A request the upstream
 * answered only after the next one was sent (a blocking query, a stream) is
 * started and left open, as `standin replay` does with a tape, and compared
 * once the replay reaches the instant the upstream answered it. A streamed
 * answer (the event stream, a followed log) is read from then on and cut
 * at the instant the client stopped reading upstream, so it holds what
 * standin sent by that instant of the virtual clock.
 */
import { keptBody } from "../../control/tape.js";
import type { Standin } from "../../standin/standin.js";
import { createStandinWithControl } from "../../standin/with-control.js";
import type { RecordedExchange, Recording } from "../recording.js";
import { readAvailable, StreamCapture, within } from "./answer-reading.js";
import { type Answer, diffExchange, type ExchangeDifference } from "./exchange-diff.js";
import { routeOf, type RouteOfExchange } from "./routes.js";
import { DEFAULT_TIME_TOLERANCE_MS, WorldMap } from "./world-map.js";

/** standin's own control API: only a recording made with a standin as the upstream holds requests to it. */
const CONTROL_PATH = /^\/_standin\//;
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
  /** How far apart two instants may be and still be the same, in ms (default 1000; `--time-tolerance`). */
  readonly timeToleranceMs?: number;
}

interface Pending {
  readonly exchange: RecordedExchange;
  readonly answer: Promise<Response>;
  readonly controller: AbortController;
}

/** A streamed answer being read until the instant the client stopped reading upstream. */
interface OpenStream {
  readonly pending: Pending;
  readonly response: Response;
  readonly capture: StreamCapture;
  readonly cutMs: number;
}

/** standin's answer as the replay read it: a stream as far as it had come. */
interface LocalAnswer {
  readonly response: Response;
  readonly bytes: Uint8Array;
  readonly complete: boolean;
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
    return await new RecordingReplayer(recording, emu, options.timeToleranceMs ?? DEFAULT_TIME_TOLERANCE_MS).run();
  } finally {
    emu.close();
  }
}

class RecordingReplayer {
  private readonly startMs: number;
  private readonly world: WorldMap;
  private readonly open: Pending[] = [];
  private readonly streams: OpenStream[] = [];
  /** How far requests to the control API moved the clock beyond the recorded time. */
  private aheadMs = 0;
  private readonly results = new Map<number, ComparedExchange>();

  constructor(
    private readonly recording: Recording,
    private readonly emu: Standin,
    timeToleranceMs: number,
  ) {
    this.startMs = emu.clock.status().nowMs;
    this.world = new WorldMap(Date.parse(recording.startedAt), this.startMs, timeToleranceMs);
    this.world.learnStartingSecrets(stringsIn(emu.snapshot()));
  }

  async run(): Promise<ComparedExchange[]> {
    const exchanges = [...this.recording.exchanges].sort((a, b) => a.sentMs - b.sentMs || a.seq - b.seq);
    for (const exchange of exchanges) {
      await this.compareAnsweredBy(exchange.sentMs);
      this.moveClockTo(exchange.sentMs);
      const skipped = unsendable(exchange);
      if (skipped) this.results.set(exchange.seq, this.result(exchange, [], undefined, skipped));
      else {
        const pending = this.send(exchange);
        this.open.push(pending);
        if (CONTROL_PATH.test(exchange.path)) await this.followControl(pending);
      }
    }
    await this.compareAnsweredBy(Number.POSITIVE_INFINITY);
    return [...this.results.values()].sort((a, b) => a.seq - b.seq);
  }

  /**
   * Before the request sent at `nextSentMs`: compares every open request the
   * upstream had answered by then, and cuts every stream the client had
   * stopped reading by then, in the order it happened upstream. One still
   * waiting in standin gets the clock moved to the instant the upstream
   * answered (a blocking query's wait ran out); one the upstream answered in
   * the very millisecond the next request was sent may be answered by that
   * request (a write waking a blocking query), so it waits for it.
   */
  private async compareAnsweredBy(nextSentMs: number): Promise<void> {
    const waitingForNext = new Set<Pending>();
    for (;;) {
      const answered = this.open
        .filter((p) => p.exchange.response !== undefined && p.exchange.answeredMs !== undefined && p.exchange.answeredMs <= nextSentMs && !waitingForNext.has(p))
        .sort((a, b) => a.exchange.answeredMs! - b.exchange.answeredMs! || a.exchange.seq - b.exchange.seq)[0];
      const cut = this.streams.filter((s) => s.cutMs <= nextSentMs).sort((a, b) => a.cutMs - b.cutMs || a.pending.exchange.seq - b.pending.exchange.seq)[0];
      if (cut && (!answered || cut.cutMs < answered.exchange.answeredMs!)) await this.cutStream(cut);
      else if (answered) await this.answer(answered, nextSentMs, waitingForNext);
      else break;
    }
    if (nextSentMs === Number.POSITIVE_INFINITY) {
      // Never answered upstream (the client went away first): standin's answer is not compared either.
      for (const { exchange, controller } of this.open.splice(0)) {
        controller.abort();
        this.results.set(exchange.seq, this.result(exchange, [], undefined, exchange.error ?? "the upstream never answered"));
      }
    }
  }

  /** An open request the upstream had answered: compared, or, for a stream, read from now on. */
  private async answer(pending: Pending, nextSentMs: number, waitingForNext: Set<Pending>): Promise<void> {
    const { exchange } = pending;
    const answeredMs = exchange.answeredMs!;
    let response = await within(pending.answer);
    if (!response && answeredMs === nextSentMs) {
      waitingForNext.add(pending);
      return;
    }
    if (!response) {
      this.moveClockTo(answeredMs);
      response = await within(pending.answer);
    }
    this.open.splice(this.open.indexOf(pending), 1);
    if (response && exchange.response!.streamed) {
      // Cut when the client stopped reading upstream; a recording without that instant cuts it at once.
      this.streams.push({ pending, response, capture: new StreamCapture(response), cutMs: Math.max(answeredMs, exchange.endedMs ?? answeredMs) });
      return;
    }
    await this.compare(pending, response && { response, ...(await readAvailable(response)) });
  }

  private async cutStream(stream: OpenStream): Promise<void> {
    this.streams.splice(this.streams.indexOf(stream), 1);
    this.moveClockTo(stream.cutMs);
    const { bytes, complete } = await stream.capture.cut();
    await this.compare(stream.pending, { response: stream.response, bytes, complete });
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

  private async compare({ exchange, controller }: Pending, local: LocalAnswer | undefined): Promise<void> {
    const recorded = exchange.response!;
    if (!local) {
      controller.abort();
      const unanswered: ExchangeDifference = { kind: "unanswered", at: "status", recorded: recorded.status, note: "standin had not answered by the time the upstream had" };
      this.results.set(exchange.seq, this.result(exchange, [unanswered], undefined));
      return;
    }
    const { compared, reported } = this.localAnswer(local);
    controller.abort();
    // Replayed for what it does (it moves the clock); what it answers (the timers that fired in the move, which in a
    // realtime upstream depends on when its own timers ran) is standin's harness, not the product compared.
    if (CONTROL_PATH.test(exchange.path)) {
      this.results.set(exchange.seq, this.result(exchange, [], reported, "a request to standin's control API: replayed for its effect, not compared"));
      return;
    }
    const route = routeOf(exchange.service, exchange.method, exchange.path);
    const differences = routeDifference(route, recorded, compared) ?? diffExchange(this.world, exchange.service, exchange.path, recorded, compared);
    this.results.set(exchange.seq, this.result(exchange, differences, reported));
  }

  /**
   * standin's answer as compared (its secrets as they are: the world map
   * pairs them with the recording's references) and as the report keeps it.
   */
  private localAnswer({ response, bytes, complete }: LocalAnswer): { compared: Answer; reported: Answer } {
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const answer = { status: response.status, headers, ...(!complete && { streamed: true }) };
    // The report is shared: standin's own secrets are written as references, as the recording writes the upstream's.
    return { compared: { ...answer, body: keptBody(bytes) }, reported: { ...answer, body: keptBody(this.emu.redactedBody(bytes)) } };
  }

  /**
   * A request to standin's own control API (a recording made with a standin
   * as the upstream: `POST /_standin/clock/advance`) moved the upstream's
   * clock ahead of real time, and moves this one as far: from then on the
   * replay's clock follows the recorded time that much ahead.
   */
  private async followControl(pending: Pending): Promise<void> {
    const before = this.emu.clock.status().nowMs;
    await within(pending.answer);
    this.aheadMs += this.emu.clock.status().nowMs - before;
  }

  private moveClockTo(offsetMs: number): void {
    const target = this.startMs + this.aheadMs + Math.ceil(offsetMs);
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

/** Every string of a document (the starting state: few rows), where any secret it holds is. */
function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsIn(item);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) yield* stringsIn(item);
}
