/**
 * `standin record` passes trailers (the fields after a chunked body's last
 * chunk) both ways unchanged, with the `Trailer` header that announces them,
 * and keeps them in the recording (`trailers` beside the request's and the
 * answer's headers, secrets redacted). The upstream is a raw node:http
 * server, since neither product's HTTP API sends trailers of its own.
 */
import { type IncomingMessage, request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startRecorder, type RunningRecorder } from "../../src/parity/record/recorder.js";
import { echoingUpstream, rawExchange, type SeenRequest } from "./record-helpers.js";

const running: Array<{ close(): Promise<unknown> }> = [];

afterEach(async () => {
  for (const thing of running.splice(0).reverse()) await thing.close();
});

async function recorderFor(upstream: string): Promise<RunningRecorder> {
  const recorder = await startRecorder({ upstreams: { scheduler: upstream }, ports: { scheduler: 0 }, readProducts: false });
  running.push(recorder);
  return recorder;
}

/** An upstream that answers chunked, in two chunks, with trailers after them (and announces them), but for HEAD, which has no body. */
async function trailingUpstream() {
  const upstream = await echoingUpstream((seen: SeenRequest, res) => {
    res.writeHead(200, { "Content-Type": "text/plain", "Transfer-Encoding": "chunked", Trailer: "X-Checksum, X-Nomad-Token" });
    if (seen.method === "HEAD") return res.end();
    res.write(`got ${seen.body.length} bytes; `);
    res.write(`trailers ${JSON.stringify(seen.rawTrailers)}`);
    res.addTrailers([
      ["X-Checksum", "sha256:abc"],
      ["X-Nomad-Token", "s3cret-in-a-trailer"],
    ]);
    res.end();
  });
  running.push(upstream);
  return upstream;
}

interface TrailedAnswer {
  status: number;
  headers: IncomingMessage["headers"];
  text: string;
  rawTrailers: string[];
}

/** Sends a chunked request with `trailers` after its body; resolves with the whole answer and its trailers. */
function sendWithTrailers(
  base: string,
  path: string,
  method: string,
  chunks: string[],
  trailers: Array<[string, string]>,
  headers: Record<string, string> = {},
): Promise<TrailedAnswer> {
  return new Promise((resolve, reject) => {
    const announced = trailers.map(([name]) => name).join(", ");
    const sent = request(
      new URL(path, base),
      { method, agent: false, headers: { "Transfer-Encoding": "chunked", ...(announced && { Trailer: announced }), ...headers } },
      (answer) => {
        let text = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk: string) => (text += chunk));
        answer.on("end", () => resolve({ status: answer.statusCode!, headers: answer.headers, text, rawTrailers: answer.rawTrailers }));
        answer.on("error", reject);
      },
    );
    sent.on("error", reject);
    for (const chunk of chunks) sent.write(chunk);
    if (trailers.length > 0) sent.addTrailers(trailers);
    sent.end();
  });
}

describe("standin record and trailers", () => {
  it("passes the request's and the answer's trailers unchanged and records them, a secret in a trailer redacted", async () => {
    const upstream = await trailingUpstream();
    const recorder = await recorderFor(upstream.url);
    const answer = await sendWithTrailers(recorder.urls.scheduler!, "/v1/jobs", "POST", ['{"Job":', "{}}"], [["X-Body-Sum", "42"]], { TE: "trailers" });

    expect(upstream.seen).toHaveLength(1);
    const seen = upstream.seen[0]!;
    expect(seen.body).toBe('{"Job":{}}');
    expect(seen.rawTrailers).toEqual(["X-Body-Sum", "42"]);
    expect(seen.headers).toMatchObject({ "transfer-encoding": "chunked", trailer: "X-Body-Sum", te: "trailers" });

    expect(answer.status).toBe(200);
    expect(answer.text).toBe('got 10 bytes; trailers ["X-Body-Sum","42"]');
    expect(answer.headers).toMatchObject({ "transfer-encoding": "chunked", trailer: "X-Checksum, X-Nomad-Token" });
    expect(answer.rawTrailers).toEqual(["X-Checksum", "sha256:abc", "X-Nomad-Token", "s3cret-in-a-trailer"]);

    const recording = await recorder.close();
    expect(recording.exchanges).toHaveLength(1);
    const exchange = recording.exchanges[0]!;
    expect(exchange.trailers).toEqual({ "x-body-sum": "42" });
    expect(exchange.body).toEqual({ text: '{"Job":{}}', bytes: 10 });
    expect(exchange.response!.trailers).toEqual({ "x-checksum": "sha256:abc", "x-nomad-token": expect.stringMatching(/^standin-redacted:sha256:[0-9a-f]{16}$/) });
    expect(JSON.stringify(recording)).not.toContain("s3cret-in-a-trailer");
  });

  it("a GET with a chunked body keeps its framing; exchanges without trailers record none", async () => {
    const upstream = await echoingUpstream();
    running.push(upstream);
    const recorder = await recorderFor(upstream.url);
    const answer = await sendWithTrailers(recorder.urls.scheduler!, "/v1/search", "GET", ["ab", "cd"], []);
    expect(answer.status).toBe(200);
    expect(upstream.seen.map((seen) => [seen.method, seen.body, seen.headers["transfer-encoding"]])).toEqual([["GET", "abcd", "chunked"]]);
    const recording = await recorder.close();
    expect(recording.exchanges[0]!.body).toEqual({ text: "abcd", bytes: 4 });
    expect("trailers" in recording.exchanges[0]!).toBe(false);
    expect("trailers" in recording.exchanges[0]!.response!).toBe(false);
  });

  it("HEAD of a chunked answer with a Trailer header, and an HTTP/1.0 client of one, are answered without trailers and the recorder goes on", async () => {
    const upstream = await trailingUpstream();
    const recorder = await recorderFor(upstream.url);
    const port = Number(new URL(recorder.urls.scheduler!).port);

    const head = await rawExchange(port, "HEAD /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    expect(head).toMatch(/\r\nTrailer: X-Checksum, X-Nomad-Token\r\n/);
    expect(head.endsWith("\r\n\r\n")).toBe(true);

    // An HTTP/1.0 client reads no chunks: the body comes unframed, ended by the connection's end, and trailers cannot reach it.
    const old = await rawExchange(port, "GET /v1/jobs HTTP/1.0\r\nHost: x\r\n\r\n");
    expect(old.split("\r\n")[0]).toBe("HTTP/1.1 200 OK");
    expect(old).not.toMatch(/\r\ntrailer:/i);
    expect(old.split("\r\n\r\n")[1]).toBe("got 0 bytes; trailers []");

    const recording = await recorder.close();
    expect(recording.exchanges.map((e) => [e.method, e.response?.status, e.response?.trailers])).toEqual([
      ["HEAD", 200, undefined],
      ["GET", 200, { "x-checksum": "sha256:abc", "x-nomad-token": expect.stringMatching(/^standin-redacted:/) }],
    ]);
  });
});
