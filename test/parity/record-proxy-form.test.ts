/**
 * `standin record` as a client's HTTP proxy (`HTTP_PROXY`): a request in
 * absolute form goes to the upstream whose origin it names, on whichever of
 * the recorder's ports it arrives, and is recorded in origin form under that
 * upstream's service; any other origin is refused with a 403 and never
 * forwarded (no open proxy), and `CONNECT` gets a 501 saying why.
 */
import { createServer, type IncomingMessage, request } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { describe, expect, it } from "vitest";
import { CONNECT_REFUSED } from "../../src/parity/record/recorder.js";
import { echoingUpstream, headersThatMatter, raw, rawExchange, type RawAnswer, type RawRequest } from "./record-helpers.js";
import { closedAfterEach } from "./running.js";

const { keep, standin, recorderFor } = closedAfterEach();

/** One exchange sent as a client with `HTTP_PROXY=<proxy>` sends it: the absolute URL as the request target, to the proxy's port. */
function viaProxy(proxy: string, target: string, init: RawRequest = {}): Promise<RawAnswer> {
  const at = new URL(proxy);
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: at.hostname, port: at.port, path: target, method: init.method ?? "GET", headers: { Host: new URL(target).host, ...init.headers }, agent: false },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => resolve({ status: answer.statusCode!, headers: answer.headers, bytes: Buffer.concat(chunks) }));
        answer.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(init.body);
  });
}

describe("standin record as an HTTP proxy", () => {
  it("forwards absolute-form requests to the upstream they name, on any of its ports, and records them in origin form", async () => {
    const direct = await standin();
    const upstream = await standin();
    const recorder = await recorderFor({ scheduler: upstream.urls.scheduler, registry: upstream.urls.registry });
    // One HTTP_PROXY for a suite that talks to both products: the scheduler's port carries the registry's requests too.
    const proxy = recorder.urls.scheduler!;

    const putThrough = await viaProxy(proxy, `${upstream.urls.registry}/v1/kv/via-proxy?flags=7`, { method: "PUT", body: "hello" });
    const putDirect = await raw(direct.urls.registry, "/v1/kv/via-proxy?flags=7", { method: "PUT", body: "hello" });
    expect(putThrough.bytes.toString()).toBe("true");
    expect({ status: putThrough.status, headers: headersThatMatter(putThrough.headers) }).toEqual({ status: putDirect.status, headers: headersThatMatter(putDirect.headers) });

    const readThrough = await viaProxy(proxy, `${upstream.urls.registry}/v1/kv/via-proxy?raw`);
    expect(readThrough.bytes.toString()).toBe("hello");
    const leaderThrough = await viaProxy(proxy, `${upstream.urls.scheduler}/v1/status/leader`);
    const leaderDirect = await raw(direct.urls.scheduler, "/v1/status/leader");
    expect(leaderThrough.bytes.equals(leaderDirect.bytes)).toBe(true);
    // The origin form still works on the same port.
    expect((await raw(proxy, "/v1/status/leader")).bytes.equals(leaderDirect.bytes)).toBe(true);

    const recording = await recorder.close();
    expect(recording.exchanges.map((e) => [e.seq, e.service, e.method, e.path, e.response?.status])).toEqual([
      [1, "registry", "PUT", "/v1/kv/via-proxy?flags=7", 200],
      [2, "registry", "GET", "/v1/kv/via-proxy?raw", 200],
      [3, "scheduler", "GET", "/v1/status/leader", 200],
      [4, "scheduler", "GET", "/v1/status/leader", 200],
    ]);
    expect(recording.exchanges[0]!.body).toEqual({ text: "hello", bytes: 5 });
  });

  it("keeps an upstream's path prefix: the upstream gets the path as sent, the recording the path under the prefix", async () => {
    const upstream = await echoingUpstream();
    keep(upstream);
    const recorder = await recorderFor({ registry: `${upstream.url}/consul` });
    const answer = await viaProxy(recorder.urls.registry!, `${upstream.url}/consul/v1/kv/a%2Fb?recurse=&x=%7C`);
    expect(answer.status).toBe(200);
    expect(upstream.seen.map((seen) => seen.url)).toEqual(["/consul/v1/kv/a%2Fb?recurse=&x=%7C"]);
    // Outside the prefix is not the upstream.
    const outside = await viaProxy(recorder.urls.registry!, `${upstream.url}/nomad/v1/jobs`);
    expect(outside.status).toBe(403);
    expect(upstream.seen).toHaveLength(1);
    const recording = await recorder.close();
    expect(recording.exchanges.map((e) => e.path)).toEqual(["/v1/kv/a%2Fb?recurse=&x=%7C"]);
  });

  it("refuses a request for any other origin with a 403 and forwards nothing: it is no open proxy", async () => {
    const upstream = await echoingUpstream();
    keep(upstream);
    const elsewhere = await echoingUpstream();
    keep(elsewhere);
    const recorder = await recorderFor({ scheduler: upstream.url });
    const proxy = recorder.urls.scheduler!;
    for (const target of [
      `${elsewhere.url}/v1/jobs`,
      "http://nomad.example:4646/v1/jobs",
      `https://127.0.0.1:${upstream.port}/v1/jobs`,
      `http://localhost:${upstream.port}/v1/jobs`,
    ]) {
      const refused = await viaProxy(proxy, target, { method: "POST", body: "{}" });
      expect({ target, status: refused.status, type: refused.headers["content-type"] }).toEqual({ target, status: 403, type: "text/plain; charset=utf-8" });
      expect(refused.bytes.toString()).toBe(`standin record: ${new URL(target).origin} is not an upstream of this recorder (it forwards only to ${upstream.url})\n`);
    }
    expect(elsewhere.seen).toEqual([]);
    expect(upstream.seen).toEqual([]);
    // The refused requests were not kept, and the connection still serves.
    expect((await viaProxy(proxy, `${upstream.url}/v1/jobs`)).status).toBe(200);
    const recording = await recorder.close();
    expect(recording.exchanges.map((e) => `${e.method} ${e.path}`)).toEqual(["GET /v1/jobs"]);
  });

  it("answers CONNECT (HTTPS through a proxy) with a 501 that says why, and records nothing", async () => {
    const upstream = await echoingUpstream();
    keep(upstream);
    const recorder = await recorderFor({ scheduler: upstream.url });
    const port = Number(new URL(recorder.urls.scheduler!).port);
    const answer = await rawExchange(port, `CONNECT 127.0.0.1:${upstream.port} HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\n\r\n`);
    const [head, body] = answer.split("\r\n\r\n");
    expect(head!.split("\r\n")).toEqual([
      "HTTP/1.1 501 Not Implemented",
      "Content-Type: text/plain; charset=utf-8",
      `Content-Length: ${Buffer.byteLength(CONNECT_REFUSED)}`,
      "Connection: close",
    ]);
    expect(body).toBe(CONNECT_REFUSED);
    expect(upstream.seen).toEqual([]);
    expect((await recorder.close()).exchanges).toEqual([]);
  });

  it("a protocol switch in absolute form goes to the upstream it names, and one for another origin is refused", async () => {
    const asked: string[] = [];
    const sockets = new Set<Duplex>();
    const server = createServer((_, res) => res.writeHead(404).end());
    server.on("upgrade", (incoming: IncomingMessage, socket: Duplex) => {
      asked.push(incoming.url!);
      sockets.add(socket);
      socket.on("end", () => socket.end());
      socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\n\r\n");
      socket.on("data", (chunk: Buffer) => socket.write(chunk.toString("utf8").toUpperCase()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    keep({
      close: () => {
        for (const socket of sockets) socket.destroy();
        return new Promise((resolve) => server.close(resolve));
      },
    });
    const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const recorder = await recorderFor({ scheduler: upstream });
    const port = Number(new URL(recorder.urls.scheduler!).port);
    const ask = (target: string) => `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: shout\r\n\r\nhi`;

    // The client's side ends after "hi", the switched protocol's first bytes; the upstream shouts them back and ends too.
    const switched = await rawExchange(port, ask(`${upstream}/v1/client/allocation/a1/exec?task=web`), { endAfter: true });
    expect(switched.split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols");
    expect(switched.endsWith("\r\n\r\nHI")).toBe(true);
    expect(asked).toEqual(["/v1/client/allocation/a1/exec?task=web"]);

    const refused = await rawExchange(port, ask("http://elsewhere.example/v1/client/allocation/a1/exec"), { endAfter: true });
    expect(refused.split("\r\n")[0]).toBe("HTTP/1.1 403 Forbidden");
    expect(refused.split("\r\n\r\n")[1]).toBe(`standin record: http://elsewhere.example is not an upstream of this recorder (it forwards only to ${upstream})\n`);
    expect(asked).toHaveLength(1);

    const recording = await recorder.close();
    expect(recording.exchanges.map((e) => [e.service, e.path, e.response?.status])).toEqual([["scheduler", "/v1/client/allocation/a1/exec?task=web", 101]]);
  });
});
