/**
 * The client's file system endpoints (`/v1/client/fs/…`, command/agent
 * fs_endpoint.go over client/fs_endpoint.go): `ls`, `stat`, `cat`,
 * `readat`, `stream` and `logs`, over the virtual allocation directory
 * (alloc-dir.ts) and the scripted task output (task-logs.ts). Every node is
 * this agent's own client, so every placed allocation is served here.
 *
 * Followed streams (`logs?follow=true`, `stream`) wake on the virtual
 * clock: at the next scripted line's instant, on each write to the
 * allocations or the task output, and for heartbeats (`{}` each virtual
 * second, as Nomad's framer's ticker). A followed log ends once its task is
 * dead and everything it wrote was sent (Nomad's stays open until the
 * allocation is garbage collected); a stream ends when its client goes away,
 * the allocation disappears, the state is restored, or the client leaves
 * more than its share of the followers' budget unread (stream-budget.ts).
 */
import type { ServiceContext } from "../../core/context.js";
import { encodeJSON } from "../../core/json.js";
import { goQuote } from "../../core/go/strconv.js";
import { formatInstant } from "../../core/instant.js";
import { bufferedResponse, TEXT_PLAIN, textResponse } from "../../http/respond.js";
import { AllocDirectory, sizeOf, type VirtualFile } from "../allocations/alloc-dir.js";
import { HEARTBEAT_SLACK_BYTES, STREAM_SLACK_BYTES as FOLLOW_SLACK_BYTES } from "../events/events.js";
import { StreamBudget } from "../events/stream-budget.js";
import { badRequest, NomadError, notFound, parseGoBool, serverError, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { TABLES, versionKey, type AllocRow, type SchedulerState } from "../state/model.js";
import type { LogType, TaskLogs } from "../state/task-logs.js";
import type { TaskStatesRow } from "../state/task-states.js";

/** Nomad's streamHeartbeatRate. */
export const FS_HEARTBEAT_MS = 1_000;
/** Nomad's streamFrameSize: the most Data one frame carries. */
export const FRAME_SIZE = 64 * 1024;

export interface FsDeps {
  readonly state: SchedulerState;
  readonly ctx: ServiceContext;
  readonly logs: TaskLogs;
}

/** An error the stream handler sends as its first message: the status and text, under the Content-Type already set. */
class StreamError extends NomadError {}

export function registerFsRoutes(router: NomadRouter, deps: FsDeps): void {
  const { state, ctx, logs } = deps;
  /** What followed streams (`logs?follow=true`, `stream`) may hold unread, each and together. */
  const followers = new StreamBudget();

  const allocOf = (id: string): AllocRow => {
    const alloc = state.allocs.get(id);
    // A placed allocation the client has not picked up yet is unknown to it too.
    if (!alloc?.TaskStates) throw notFound(`Unknown allocation ${goQuote(id)}`);
    return alloc;
  };
  const directoryOf = (alloc: AllocRow) => {
    const job = state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? state.job(alloc.Namespace, alloc.JobID);
    return AllocDirectory.of(alloc, job, logs)!;
  };
  const requireFs = (rc: RequestContext, alloc: AllocRow, status: number) => {
    if (!rc.acl.allowNamespace(alloc.Namespace, "read-fs")) throw new NomadError(status, "Permission denied");
  };

  router.prefix("/v1/client/fs/", (rc) => {
    const slash = rc.rest.indexOf("/");
    const op = slash === -1 ? "" : rc.rest.slice(0, slash);
    const allocId = rc.rest.slice(slash + 1);
    const run = { ls, stat, cat, readat, stream, logs: logsRoute }[op];
    if (!run) throw new NomadError(404, "Invalid method");
    if (allocId === "") throw badRequest("must provide a valid alloc id");
    return run(rc, allocId);
  });

  function ls(rc: RequestContext, allocId: string) {
    const path = rc.query.get("path") || "/";
    const alloc = allocOf(allocId);
    requireFs(rc, alloc, 403);
    const found = directoryOf(alloc).lookup(path);
    if (found.kind === "escapes") throw serverError("Path escapes the alloc directory");
    if (found.kind === "missing") throw notFound(`open ${found.abs}: no such file or directory`);
    if (!found.file.isDir) throw serverError(`readdirent ${found.abs}: not a directory`);
    // os.ReadDir: sorted by name.
    const entries = [...found.file.children.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return entries.map((file) => fileInfo(file));
  }

  function stat(rc: RequestContext, allocId: string) {
    const path = rc.query.get("path") ?? "";
    if (path === "") throw badRequest("must provide a file name");
    const alloc = allocOf(allocId);
    requireFs(rc, alloc, 403);
    const found = directoryOf(alloc).lookup(path);
    if (found.kind === "escapes") throw serverError("Path escapes the alloc directory");
    if (found.kind === "missing") throw notFound(`stat ${found.abs}: no such file or directory`);
    return fileInfo(found.file, contentTypeOf(found.file, path));
  }

  /** A file to read (cat, readat, stream): the client's checks in its order, each a coded stream error. */
  const readable = (rc: RequestContext, allocId: string, path: string) => {
    const alloc = allocOf(allocId);
    requireFs(rc, alloc, 403);
    const directory = directoryOf(alloc);
    const found = directory.lookup(path);
    if (found.kind === "escapes") throw serverError("Path escapes the alloc directory");
    if (found.kind === "missing") throw badRequest(`stat ${found.abs}: no such file or directory`);
    if (found.file.isDir) throw badRequest(`file ${goQuote(path)} is a directory`);
    const secret = directory.protectedKind(path);
    if (secret) throw serverError(`Reading ${secret} file prohibited: ${path}`);
    return { alloc, file: found.file };
  };

  function cat(rc: RequestContext, allocId: string) {
    const path = rc.query.get("path") ?? "";
    if (path === "") throw badRequest("must provide a file name");
    const { file } = readable(rc, allocId, path);
    return plainBody(file.content());
  }

  function readat(rc: RequestContext, allocId: string) {
    const path = rc.query.get("path") ?? "";
    if (path === "") throw badRequest("must provide a file name");
    // Uncoded errors: 500.
    const offset = parseInt64(rc.query.get("offset") ?? "", (text) => serverError(`error parsing offset: ${text}`));
    const limitText = rc.query.get("limit") ?? "";
    const limit = limitText === "" ? 0 : parseInt64(limitText, (text) => serverError(`error parsing limit: ${text}`));
    const { file } = readable(rc, allocId, path);
    const content = file.content();
    const start = Math.min(Math.max(0, offset), content.length);
    return plainBody(content.subarray(start, limit > 0 ? start + limit : content.length));
  }

  function stream(rc: RequestContext, allocId: string) {
    const path = rc.query.get("path") ?? "";
    if (path === "") throw badRequest("must provide a file name");
    const followText = rc.query.get("follow") ?? "";
    const follow = followText === "" ? true : parseBool(followText, (text) => serverError(`failed to parse follow field to boolean: ${text}`));
    const offsetText = rc.query.get("offset") ?? "";
    const offset = offsetText === "" ? 0 : parseInt64(offsetText, (text) => serverError(`error parsing offset: ${text}`));
    const origin = rc.query.get("origin") || "start";
    if (origin !== "start" && origin !== "end") throw badRequest("origin must be start or end");
    const { alloc, file } = readable(rc, allocId, path);
    const size = file.content().length;
    const start = Math.min(size, origin === "end" ? Math.max(0, size - offset) : Math.max(0, offset));
    const source = () => {
      const current = state.allocs.get(alloc.ID);
      const found = current?.TaskStates ? directoryOf(current).lookup(path) : undefined;
      if (found?.kind !== "found") return undefined;
      return { content: found.file.content(), nextAt: found.file.nextAt, finished: !follow };
    };
    return frameStream(ctx, followers, { file: path, plain: false, start, tables: [TABLES.allocs, ...logs.tables], contentType: TEXT_PLAIN }, source, rc.c.req.raw.signal);
  }

  function logsRoute(rc: RequestContext, allocId: string) {
    const task = rc.query.get("task") ?? "";
    if (task === "") throw badRequest("must provide task name");
    const followText = rc.query.get("follow") ?? "";
    const follow = followText === "" ? false : parseBool(followText, (text) => badRequest(`failed to parse follow field to boolean: ${text}`));
    const plainText = rc.query.get("plain") ?? "";
    const plain = plainText === "" ? false : parseBool(plainText, (text) => badRequest(`failed to parse plain field to boolean: ${text}`));
    const type = rc.query.get("type") ?? "";
    if (type !== "stdout" && type !== "stderr") throw badRequest("must provide log type (stdout/stderr)");
    const offsetText = rc.query.get("offset") ?? "";
    const offset = offsetText === "" ? 0 : parseInt64(offsetText, (text) => badRequest(`error parsing offset: ${text}`));
    const origin = rc.query.get("origin") || "start";
    if (origin !== "start" && origin !== "end") throw badRequest("origin must be start or end");
    // From here on the handler has set the Content-Type: its errors go out under it.
    const contentType = plain ? "text/plain" : "application/json";
    const fail = (status: number, message: string) => new StreamError(status, message);
    try {
      const alloc = state.allocs.get(allocId);
      if (!alloc?.TaskStates) throw fail(404, `Unknown allocation ${goQuote(allocId)}`);
      // Without a code the stream's error is a 500, Permission denied included.
      if (!rc.acl.allowNamespace(alloc.Namespace, "read-fs") && !rc.acl.allowNamespace(alloc.Namespace, "read-logs")) throw fail(500, "Permission denied");
      const taskState = (alloc.TaskStates as TaskStatesRow)[task];
      if (!taskState) throw fail(400, `unknown task name ${goQuote(task)}`);
      const file = logs.file(alloc, task, type);
      if (!file) throw fail(404, `task ${goQuote(task)} not started yet. No logs available`);
      // findClosest: `end` negates the offset, and a negative offset counts back from the end (from either origin).
      const size = file.content.length;
      const desired = origin === "end" ? -offset : offset;
      const start = desired < 0 ? Math.max(0, size + desired) : Math.min(desired, size);
      const source = () => {
        const current = state.allocs.get(alloc.ID);
        const now = current ? logs.file(current, task, type as LogType) : undefined;
        if (!now) return undefined;
        return { content: now.content, nextAt: now.nextAt, finished: !follow || now.finished };
      };
      // The kept files are read end to end; frames name the newest (see docs/known-differences.md).
      const newest = file.files[file.files.length - 1]!.index;
      return frameStream(
        ctx,
        followers,
        { file: `alloc/logs/${task}.${type}.${newest}`, plain, start, tables: [TABLES.allocs, ...logs.tables], contentType },
        source,
        rc.c.req.raw.signal,
      );
    } catch (error) {
      if (error instanceof StreamError) return textResponse(error.status, error.message, { "Content-Type": contentType });
      throw error;
    }
  }
}

/** AllocFileInfo (fields in Go's order; the router sorts them as Nomad's encoder does). */
function fileInfo(file: VirtualFile, contentType?: string) {
  return {
    Name: file.name,
    IsDir: file.isDir,
    Size: sizeOf(file),
    FileMode: file.mode,
    ModTime: formatInstant(file.modTime),
    ...(contentType === undefined ? {} : { ContentType: contentType }),
  };
}

/** client/allocdir detectContentType: http.DetectContentType on the first 512 bytes; JSON by name; directories and empty files octet-stream. */
function contentTypeOf(file: VirtualFile, path: string): string {
  let type = "application/octet-stream";
  const content = file.content();
  if (!file.isDir && content.length > 0) type = sniff(content);
  if (path.endsWith(".json")) type = "application/json";
  return type;
}

/** The part of http.DetectContentType plain files meet: markup, binary, else text. */
function sniff(content: Buffer): string {
  const head = content.subarray(0, 512);
  const text = head.toString("latin1").replace(/^[\t\n\f\r ]+/, "");
  const lower = text.slice(0, 16).toLowerCase();
  if (
    ["<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table", "<a", "<style", "<title", "<b", "<body", "<br", "<p", "<!--"].some(
      (tag) => lower.startsWith(tag) && /[ >]/.test(text[tag.length] ?? ""),
    )
  )
    return "text/html; charset=utf-8";
  if (text.startsWith("<?xml")) return "text/xml; charset=utf-8";
  if (head.subarray(0, 5).toString("latin1") === "%PDF-") return "application/pdf";
  for (const byte of head) if (byte <= 0x08 || byte === 0x0b || (byte >= 0x0e && byte <= 0x1a) || (byte >= 0x1c && byte <= 0x1f)) return "application/octet-stream";
  return "text/plain; charset=utf-8";
}

/** cat and readat: the bytes as they are; the untrusted-content wrapper never lets a browser render them. */
function plainBody(bytes: Buffer): Response {
  const sniffed = bytes.length === 0 ? TEXT_PLAIN : sniff(bytes);
  const safe = sniffed === "application/octet-stream" || sniffed === "application/pdf" ? sniffed : TEXT_PLAIN;
  return bufferedResponse(new Uint8Array(bytes), { status: 200, headers: { "Content-Type": safe } });
}

/** strconv.ParseInt(text, 10, 64), its error in Go's words. */
function parseInt64(text: string, error: (goError: string) => NomadError): number {
  const quoted = goQuote(text);
  if (!/^[+-]?\d+$/.test(text)) throw error(`strconv.ParseInt: parsing ${quoted}: invalid syntax`);
  const n = BigInt(text);
  if (n > 9223372036854775807n || n < -9223372036854775808n) throw error(`strconv.ParseInt: parsing ${quoted}: value out of range`);
  return Number(n);
}

function parseBool(text: string, error: (goError: string) => NomadError): boolean {
  const parsed = parseGoBool(text);
  if (parsed === undefined) throw error(`strconv.ParseBool: parsing ${goQuote(text)}: invalid syntax`);
  return parsed;
}

interface StreamOptions {
  /** The frames' File. */
  readonly file: string;
  /** Raw bytes instead of frames (no heartbeats then: they carry no data). */
  readonly plain: boolean;
  /** Offset of the first byte to send. */
  readonly start: number;
  /** Writes to these may change the file. */
  readonly tables: readonly string[];
  readonly contentType: string;
}

/** The file now: its bytes, the next instant it grows by itself, whether it is done growing; undefined once it is gone. */
type FileSource = () => { content: Buffer; nextAt: number | undefined; finished: boolean } | undefined;

/** One StreamFrame, fields sorted as Nomad's encoder writes them, zero fields left out. */
function frame(fields: { data?: Buffer; file?: string; fileEvent?: string; offset?: number }): string {
  const out: Record<string, unknown> = {};
  if (fields.data && fields.data.length > 0) out.Data = fields.data.toString("base64");
  if (fields.file) out.File = fields.file;
  if (fields.fileEvent) out.FileEvent = fields.fileEvent;
  if (fields.offset) out.Offset = fields.offset;
  return encodeJSON(out);
}

/**
 * The bytes of a file from `start`, as frames (or plain), then more as it
 * grows until the source says it is finished. A source finished at once
 * gives a buffered answer.
 */
function frameStream(ctx: ServiceContext, budget: StreamBudget, options: StreamOptions, source: FileSource, signal: AbortSignal): Response {
  const headers = { "Content-Type": options.contentType };
  /** The chunks from `from` to the end of `content`. */
  const chunks = (content: Buffer, from: number, fileEvent?: string): string[] | Buffer[] => {
    if (options.plain) return content.length > from ? [content.subarray(from)] : [];
    const out: string[] = [];
    for (let at = from; at < content.length; at += FRAME_SIZE) {
      const data = content.subarray(at, Math.min(content.length, at + FRAME_SIZE));
      out.push(frame({ data, file: options.file, fileEvent: at === from ? fileEvent : undefined, offset: at + data.length }));
    }
    // An event with no data after it goes out on its own.
    if (fileEvent && out.length === 0) out.push(frame({ file: options.file, fileEvent }));
    return out;
  };
  const first = source();
  if (!first) return textResponse(404, "file not found", headers);
  if (first.finished) {
    const parts = chunks(first.content, options.start);
    const body = options.plain ? Buffer.concat(parts as Buffer[]) : Buffer.from((parts as string[]).join(""), "utf8");
    return bufferedResponse(new Uint8Array(body), { status: 200, headers });
  }

  // Pulled by the client: frames are made from the file while the stream has less than FOLLOW_SLACK_BYTES
  // unread, and again each time the client has read everything, so following a long log costs what the
  // client reads; past the budget (a client that stops reading) the stream ends, its backlog discarded.
  let sent = options.start;
  let pendingEvent: string | undefined;
  let done = false;
  let stalled = false;
  let cancelWake: () => void = () => {};
  let cancelHeartbeat: () => void = () => {};
  const stopCommits = ctx.store.onCommit((commit) => {
    if (options.tables.some((table) => commit.tables.has(table))) pump();
  });
  const stopStoreRestore = ctx.store.onRestore(() => end());
  const stopClockRestore = ctx.clock.onRestore(() => end());
  const stop = () => {
    if (done) return;
    done = true;
    stopCommits();
    stopStoreRestore();
    stopClockRestore();
    cancelWake();
    cancelHeartbeat();
    signal.removeEventListener("abort", end);
  };
  const stream = budget.open(() => {
    stop();
    stream.drop("");
  });
  function end() {
    stop();
    stream.end();
  }
  function pump() {
    if (done) return;
    const now = source();
    if (!now) return end();
    // A file that shrank (its script changed) was truncated: Nomad reads it again from the top, the
    // next frame carrying the event.
    if (now.content.length < sent) {
      sent = 0;
      pendingEvent = "file truncated";
    }
    while (sent < now.content.length && stream.unreadBytes < FOLLOW_SLACK_BYTES) {
      const until = Math.min(now.content.length, sent + FRAME_SIZE);
      const data = now.content.subarray(sent, until);
      stream.write(options.plain ? new Uint8Array(data) : frame({ data, file: options.file, fileEvent: pendingEvent, offset: until }));
      pendingEvent = undefined;
      sent = until;
    }
    // An event with no data after it goes out on its own.
    if (pendingEvent !== undefined && !options.plain) stream.write(frame({ file: options.file, fileEvent: pendingEvent }));
    pendingEvent = undefined;
    if (done || sent < now.content.length) return; // the rest once the client has read
    if (now.finished) return end();
    cancelWake();
    cancelWake = now.nextAt === undefined ? () => {} : ctx.clock.scheduleEphemeral(now.nextAt, pump);
  }
  // As the event stream's: heartbeats stop queueing behind a client that does not read, and resume on their grid.
  const firstBeat = ctx.clock.now() + FS_HEARTBEAT_MS;
  const beat = (at: number) => {
    cancelHeartbeat = ctx.clock.scheduleEphemeral(at, () => {
      stream.write(frame({}));
      if (stream.unreadBytes > HEARTBEAT_SLACK_BYTES) stalled = true;
      else beat(at + FS_HEARTBEAT_MS);
    });
  };
  stream.onDrain(() => {
    pump();
    if (!stalled || done || options.plain) return;
    stalled = false;
    beat(firstBeat + (Math.floor((ctx.clock.now() - firstBeat) / FS_HEARTBEAT_MS) + 1) * FS_HEARTBEAT_MS);
  });
  stream.onCancel(stop);
  if (signal.aborted) end();
  else {
    signal.addEventListener("abort", end, { once: true });
    if (!options.plain) beat(firstBeat);
    pump();
  }
  const body = stream.body;
  return new Response(body, { status: 200, headers: { ...headers, "Transfer-Encoding": "chunked" } });
}
