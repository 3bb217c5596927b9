/**
 * `standin record` forwards unchanged: a client gets through the recorder
 * exactly the status, headers and bytes it gets directly (gzip answers, HEAD,
 * 204s, a blocking query released by a write, the event stream, 5 MB bodies
 * both ways), and the recording holds each exchange with its body decoded.
 *
 * Two standins started alike answer the same requests alike (determinism),
 * so one is asked directly and the other through the recorder, request for
 * request, and the answers compared. The answers standin never gives (a
 * chunked gzip stream, a 304, 5 MB) come from a small upstream of the test's
 * own, asked both ways.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { startRecorder } from "../../src/parity/record/recorder.js";
import type { RecordedExchange, Recording } from "../../src/parity/recording.js";
import { untilParked } from "../support/parked.js";
import { headersThatMatter, openStream, raw, type RawAnswer, type RawRequest } from "./record-helpers.js";
import { anyPorts, closedAfterEach } from "./running.js";

const { keep, standin, recorderFor } = closedAfterEach();

function expectSameAnswer(through: RawAnswer, direct: RawAnswer, what: string): void {
  expect({ what, status: through.status, headers: headersThatMatter(through.headers) }).toEqual({ what, status: direct.status, headers: headersThatMatter(direct.headers) });
  expect(through.bytes.equals(direct.bytes), `${what}: ${through.bytes.length} bytes through the recorder, ${direct.bytes.length} directly`).toBe(true);
}

function exchangeAt(recording: Recording, method: string, path: string): RecordedExchange {
  const found = recording.exchanges.find((exchange) => exchange.method === method && exchange.path === path);
  if (!found) throw new Error(`no ${method} ${path} in ${recording.exchanges.map((e) => `${e.method} ${e.path}`).join(", ")}`);
  return found;
}

describe("through the recorder, a standin answers byte for byte as it does directly", () => {
  it("GET, PUT, HEAD, DELETE, a 204, a gzip answer and a blocking query released by a write", async () => {
    const direct = await standin();
    const upstream = await standin();
    const recorder = await recorderFor({ scheduler: upstream.urls.scheduler, registry: upstream.urls.registry, echo: upstream.urls.echo });

    type Step = { service: "scheduler" | "registry" | "echo"; path: string } & RawRequest;
    const steps: Step[] = [
      { service: "registry", path: "/v1/kv/app/a" },
      { service: "registry", path: "/v1/kv/app/a", method: "PUT", body: "hello" },
      { service: "registry", path: "/v1/kv/app/a?raw" },
      { service: "registry", path: "/v1/kv/app/a", method: "HEAD" },
      { service: "scheduler", path: "/v1/agent/self", headers: { "Accept-Encoding": "gzip" } },
      { service: "scheduler", path: "/v1/var/app/config", method: "PUT", body: JSON.stringify({ Items: { level: "debug" } }) },
      { service: "scheduler", path: "/v1/var/app/config", method: "DELETE" },
      { service: "echo", path: "/echo?key=test-api-key", method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"hi"}' },
    ];
    const both = async (step: Step) => {
      const { service, path, ...init } = step;
      return [await raw(recorder.urls[service]!, path, init), await raw(direct.urls[service], path, init)] as const;
    };
    const answered: RawAnswer[] = [];
    for (const step of steps) {
      const [through, straight] = await both(step);
      expectSameAnswer(through, straight, `${step.method ?? "GET"} ${step.path}`);
      answered.push(through);
    }

    // A blocking query parked on each side, released by a write on each side.
    const { headers } = await raw(direct.urls.registry, "/v1/kv/app/a");
    const index = String(headers["x-consul-index"]);
    const blocking = `/v1/kv/app/a?index=${index}&wait=5m`;
    const parkedThrough = raw(recorder.urls.registry!, blocking);
    const parkedDirect = raw(direct.urls.registry, blocking);
    await untilParked(upstream.emulator, 1);
    await untilParked(direct.emulator, 1);
    const [writeThrough, writeDirect] = await both({ service: "registry", path: "/v1/kv/app/a", method: "PUT", body: "world" });
    expectSameAnswer(writeThrough, writeDirect, "the releasing PUT");
    expectSameAnswer(await parkedThrough, await parkedDirect, "the blocking query");
    expect(JSON.parse((await parkedThrough).bytes.toString())[0].Value).toBe(Buffer.from("world").toString("base64"));

    const recording = await recorder.close();
    expect(recording.exchanges.map((e) => `${e.service} ${e.method} ${e.path.split("?")[0]} ${e.response?.status}`)).toEqual([
      "registry GET /v1/kv/app/a 404",
      "registry PUT /v1/kv/app/a 200",
      "registry GET /v1/kv/app/a 200",
      "registry HEAD /v1/kv/app/a 405",
      "scheduler GET /v1/agent/self 200",
      "scheduler PUT /v1/var/app/config 200",
      "scheduler DELETE /v1/var/app/config 204",
      "echo POST /echo 200",
      "registry GET /v1/kv/app/a 200",
      "registry PUT /v1/kv/app/a 200",
    ]);
    expect(recording.exchanges.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(exchangeAt(recording, "PUT", "/v1/kv/app/a").body).toEqual({ text: "hello", bytes: 5 });
    expect(exchangeAt(recording, "GET", "/v1/kv/app/a?raw").response!.body).toEqual({ text: "hello", bytes: 5 });
    expect(exchangeAt(recording, "HEAD", "/v1/kv/app/a").response!.headers.allow).toBeDefined();
    expect(exchangeAt(recording, "DELETE", "/v1/var/app/config").response).toMatchObject({ status: 204 });
    expect(exchangeAt(recording, "DELETE", "/v1/var/app/config").response!.body).toBeUndefined();

    // The gzip answer: the client had the compressed bytes; the recording keeps the JSON, and the encoding beside it.
    const self = exchangeAt(recording, "GET", "/v1/agent/self");
    expect(self.response!.headers["content-encoding"]).toBe("gzip");
    const sentGzip = answered[4]!.bytes;
    expect(sentGzip.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(self.response!.body!.text).toBe(gunzipSync(sentGzip).toString("utf8"));
    expect(JSON.parse(self.response!.body!.text!)).toHaveProperty("config");

    // The blocking query was answered after the write that released it, and says so in its times.
    const parked = exchangeAt(recording, "GET", blocking);
    const release = recording.exchanges[9]!;
    expect(parked.seq).toBeLessThan(release.seq);
    expect(parked.answeredMs!).toBeGreaterThanOrEqual(release.sentMs);
    expect(Number(parked.response!.headers["x-consul-index"])).toBeGreaterThan(Number(index));
    // The echo API key in the query is a secret: never written as it was.
    expect(JSON.stringify(recording)).not.toContain("test-api-key");
  });

  it("the event stream flows frame by frame through the recorder; cut by the client, it is recorded as streamed with what arrived", async () => {
    const direct = await standin();
    const upstream = await standin();
    const recorder = await recorderFor({ scheduler: upstream.urls.scheduler });
    const job = JSON.stringify({
      Job: {
        ID: "web",
        Name: "web",
        Type: "service",
        Datacenters: ["dc1"],
        TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "web", Driver: "docker", Config: { image: "nginx" } }] }],
      },
    });
    const firstFrame = async (base: string, register: string) => {
      const stream = await openStream(base, "/v1/event/stream?topic=Job");
      await raw(register, "/v1/jobs", { method: "PUT", body: job });
      const bytes = await stream.until((received) => received.includes('"Job"') && received.includes("\n"));
      stream.cut();
      return {
        status: stream.status,
        headers: stream.headers,
        line: bytes
          .toString("utf8")
          .split("\n")
          .find((line) => line.includes('"Job"'))!,
      };
    };
    const through = await firstFrame(recorder.urls.scheduler!, recorder.urls.scheduler!);
    const straight = await firstFrame(direct.urls.scheduler, direct.urls.scheduler);
    expect(through.status).toBe(200);
    expect(headersThatMatter(through.headers)).toEqual(headersThatMatter(straight.headers));
    expect(through.line).toBe(straight.line);

    const recording = await recorder.close();
    const stream = exchangeAt(recording, "GET", "/v1/event/stream?topic=Job");
    expect(stream.response).toMatchObject({ status: 200, streamed: true });
    expect(stream.response!.body!.text).toContain(through.line);
    expect(stream.endedMs).toBeGreaterThanOrEqual(stream.answeredMs!);
    expect(exchangeAt(recording, "PUT", "/v1/jobs").response!.status).toBe(200);
  });
});

/** An upstream of the test's own for the answers standin does not give. */
async function syntheticUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const big = Buffer.alloc(5 * 1024 * 1024, "standin ");
  const server: Server = createServer((request, answer) => {
    const url = new URL(request.url!, "http://upstream");
    if (url.pathname === "/chunked-gzip") {
      // Three gzip pieces flushed one by one: a chunked, compressed answer cut across chunks.
      const whole = gzipSync(Buffer.from('{"parts":["one","two","three"]}\n'));
      answer.writeHead(200, { "Content-Type": "application/json", "Content-Encoding": "gzip", "X-Nomad-Index": "7" });
      answer.write(whole.subarray(0, 5));
      setImmediate(() => {
        answer.write(whole.subarray(5, 20));
        setImmediate(() => answer.end(whole.subarray(20)));
      });
    } else if (url.pathname === "/big") {
      answer.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": big.length });
      answer.end(big);
    } else if (url.pathname === "/upload") {
      const hash = createHash("sha256");
      let bytes = 0;
      request.on("data", (chunk: Buffer) => {
        hash.update(chunk);
        bytes += chunk.length;
      });
      request.on("end", () => {
        answer.writeHead(201, { "Content-Type": "application/json" });
        answer.end(JSON.stringify({ bytes, sha256: hash.digest("hex") }));
      });
    } else if (url.pathname === "/cached") {
      answer.writeHead(request.headers["if-none-match"] === '"v1"' ? 304 : 200, { ETag: '"v1"' });
      answer.end(request.headers["if-none-match"] === '"v1"' ? undefined : "fresh");
    } else {
      answer.writeHead(404, { "Content-Type": "text/plain" });
      answer.end("no such page\n");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("answers standin does not give pass unchanged too", () => {
  it("a chunked gzip answer, a 304, a 404, 5 MB down, HEAD of it, and 5 MB up", async () => {
    const upstream = await syntheticUpstream();
    keep(upstream);
    const recorder = await recorderFor({ echo: upstream.url });
    const upload = Buffer.alloc(5 * 1024 * 1024 + 3, "upload ");
    const requests: Array<[string, RawRequest]> = [
      ["/chunked-gzip", { headers: { "Accept-Encoding": "gzip" } }],
      ["/cached", { headers: { "If-None-Match": '"v1"' } }],
      ["/cached", {}],
      ["/missing", {}],
      ["/big", {}],
      ["/big", { method: "HEAD" }],
      ["/upload", { method: "POST", body: upload, headers: { "Content-Type": "application/octet-stream" } }],
    ];
    for (const [path, init] of requests) expectSameAnswer(await raw(recorder.urls.echo!, path, init), await raw(upstream.url, path, init), path);

    const recording = await recorder.close();
    const [gzipped, notModified, fresh, missing, big, head, uploaded] = recording.exchanges;
    expect(head!.response).toMatchObject({ status: 200, headers: { "content-length": String(5 * 1024 * 1024) } });
    expect(head!.response!.body).toBeUndefined();
    expect(gzipped!.response).toMatchObject({ status: 200, headers: { "content-encoding": "gzip", "x-nomad-index": "7" }, body: { text: '{"parts":["one","two","three"]}\n' } });
    expect(gzipped!.response!.headers["transfer-encoding"]).toBeUndefined();
    expect(notModified!.response!.status).toBe(304);
    expect(notModified!.response!.body).toBeUndefined();
    expect(fresh!.response!.body).toEqual({ text: "fresh", bytes: 5 });
    expect(missing!.response).toMatchObject({ status: 404, body: { text: "no such page\n" } });
    // Over 1 MiB: kept as a hash and a length, as the tape keeps them.
    expect(big!.response!.body).toEqual({
      sha256: createHash("sha256")
        .update(Buffer.alloc(5 * 1024 * 1024, "standin "))
        .digest("hex"),
      bytes: 5 * 1024 * 1024,
    });
    expect(uploaded!.body).toEqual({ sha256: createHash("sha256").update(upload).digest("hex"), bytes: upload.length });
    expect(JSON.parse(uploaded!.response!.body!.text!)).toEqual({ bytes: upload.length, sha256: createHash("sha256").update(upload).digest("hex") });
  });

  it("a client that stops reading holds the upstream back: the recorder does not read a large answer ahead into memory", async () => {
    const total = 64 * 1024 * 1024;
    const slice = Buffer.alloc(64 * 1024, "s");
    let written = 0;
    const upstream = createServer((_, answer) => {
      answer.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": total });
      const more = () => {
        while (written < total) {
          written += slice.length;
          if (!answer.write(slice)) return void answer.once("drain", more);
        }
        answer.end();
      };
      more();
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    keep({ close: () => new Promise((resolve) => upstream.close(resolve)) });
    const recorder = await recorderFor({ echo: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });

    const answer = await new Promise<IncomingMessage>((resolve) => request(`${recorder.urls.echo}/large`, { agent: false }, resolve).end());
    answer.pause();
    // Many turns of the event loop with the client not reading: bounded in turns, not time.
    for (let turn = 0; turn < 5000; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(written, "bytes the upstream could send while the client read nothing").toBeLessThan(total / 4);
    let received = 0;
    answer.on("data", (chunk: Buffer) => (received += chunk.length));
    const ended = new Promise((resolve) => answer.on("end", resolve));
    answer.resume();
    await ended;
    expect(received).toBe(total);
  });

  it("an upstream that does not answer: 502 with the reason, and the exchange recorded with its error", async () => {
    const upstream = await syntheticUpstream();
    await upstream.close(); // its port is free now: connections are refused
    const recorder = await recorderFor({ registry: upstream.url });
    const answer = await raw(recorder.urls.registry!, "/v1/kv/a");
    expect(answer.status).toBe(502);
    expect(answer.bytes.toString()).toContain("ECONNREFUSED");
    const recording = await recorder.close();
    expect(recording.exchanges).toHaveLength(1);
    expect(recording.exchanges[0]!.response).toBeUndefined();
    expect(recording.exchanges[0]!.error).toContain("ECONNREFUSED");
  });

  it("its own two paths are answered, not forwarded nor recorded: ready, and a flush that writes what has ended so far", async () => {
    const upstream = await standin();
    const directory = await mkdtemp(join(tmpdir(), "standin-record-"));
    keep({ close: () => rm(directory, { recursive: true, force: true }) });
    const out = join(directory, "run.recording.json");
    const recorder = await startRecorder({ upstreams: { registry: upstream.urls.registry }, out, ports: anyPorts, readProducts: false });
    keep(recorder);
    const ready = await raw(recorder.urls.registry!, "/_standin/ready");
    expect({ status: ready.status, body: JSON.parse(ready.bytes.toString()) }).toEqual({ status: 200, body: { ready: true, recording: true } });
    await raw(recorder.urls.registry!, "/v1/kv/a", { method: "PUT", body: "1" });
    // A blocking query still parked is not written: it has not ended.
    const { headers } = await raw(recorder.urls.registry!, "/v1/kv/a");
    // Cut when the recorder stops: the client sees the connection close, as it would if the agent stopped.
    const parked = raw(recorder.urls.registry!, `/v1/kv/a?index=${headers["x-consul-index"]}&wait=5m`).catch((error: Error) => error);
    await untilParked(upstream.emulator, 1);
    const flushed = await raw(recorder.urls.registry!, "/_standin/recording/flush", { method: "POST" });
    expect(JSON.parse(flushed.bytes.toString())).toEqual({ exchanges: 2, out });
    // Flushes asked for at once are written one after the other, each whole.
    const together = await Promise.all(Array.from({ length: 5 }, () => raw(recorder.urls.registry!, "/_standin/recording/flush", { method: "POST" })));
    expect(together.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    const written = JSON.parse(await readFile(out, "utf8")) as Recording;
    expect(written.exchanges.map((e) => `${e.method} ${e.path}`)).toEqual(["PUT /v1/kv/a", "GET /v1/kv/a"]);
    // Stopping cuts the parked query, recorded as cut with no answer.
    const recording = await recorder.close();
    expect(await parked).toBeInstanceOf(Error);
    expect(recording.exchanges).toHaveLength(3);
    expect(recording.exchanges[2]).toMatchObject({ seq: 3, error: "the client went away before the upstream answered" });
    expect((JSON.parse(await readFile(out, "utf8")) as Recording).exchanges).toHaveLength(3);
  });
});
